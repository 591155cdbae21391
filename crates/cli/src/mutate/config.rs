//! Settings: the `[mutate]` table of `revcal.toml`, overridden by command-line flags.

use super::{MutateArgs, check_operators, parse_categories};
use anyhow::Result;
use revcal_mutate::Options;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The largest `revcal.toml` read.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The `[mutate]` table: the same switches as the flags.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
struct MutateTable {
    category: Vec<String>,
    exclude_category: Vec<String>,
    operator: Vec<String>,
    exclude_operator: Vec<String>,
    sample: Option<usize>,
    seed: Option<u64>,
    include_tests: Option<bool>,
    max_file_size: Option<usize>,
    realistic: Option<bool>,
}

/// Everything `revcal mutate` needs to know, flags over file.
#[derive(Debug)]
pub(crate) struct Settings {
    pub(crate) options: Options,
    pub(crate) sample: Option<usize>,
    pub(crate) seed: u64,
}

impl Settings {
    pub(crate) fn resolve(args: &MutateArgs) -> Result<Settings> {
        let table = match &args.config {
            Some(path) => read(path)?,
            None if Path::new("revcal.toml").is_file() => read(&PathBuf::from("revcal.toml"))?,
            None => MutateTable::default(),
        };
        let pick = |flag: &Vec<String>, file: &Vec<String>| {
            if flag.is_empty() { file.clone() } else { flag.clone() }
        };
        let categories = pick(&args.categories, &table.category);
        let exclude_categories = pick(&args.exclude_categories, &table.exclude_category);
        let operators = pick(&args.operators, &table.operator);
        let exclude_operators = pick(&args.exclude_operators, &table.exclude_operator);
        check_operators(&operators, "--operator")?;
        check_operators(&exclude_operators, "--exclude-operator")?;
        let defaults = Options::default();
        let options = Options {
            categories: parse_categories(&categories, "--category")?,
            exclude_categories: parse_categories(&exclude_categories, "--exclude-category")?,
            operators,
            exclude_operators,
            max_file_bytes: args.max_file_size.or(table.max_file_size).unwrap_or(defaults.max_file_bytes),
            skip_test_files: !(args.include_tests || table.include_tests.unwrap_or(false)),
            profile: if args.realistic || table.realistic.unwrap_or(false) {
                revcal_mutate::Profile::Realistic
            } else {
                revcal_mutate::Profile::Default
            },
        };
        Ok(Settings {
            options,
            sample: args.sample.or(table.sample),
            seed: args.seed.or(table.seed).unwrap_or(0),
        })
    }
}

/// Reads the `[mutate]` table; other tables belong to other commands and are ignored.
fn read(path: &Path) -> Result<MutateTable> {
    let text = crate::input::read_text(path, MAX_CONFIG_BYTES)?;
    let mut document: toml::Table =
        toml::from_str(&text).map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?;
    let Some(table) = document.remove("mutate") else { return Ok(MutateTable::default()) };
    table.try_into().map_err(|error: toml::de::Error| {
        anyhow::anyhow!("{}: in the [mutate] table: {}", path.display(), error.message())
    })
}
