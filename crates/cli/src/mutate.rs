//! `revcal mutate PATH...`: list the bugs the mutation engine would plant.

mod config;
mod diff;
mod files;
mod line_diff;
mod render;

use crate::output::{emit, emit_json};
use crate::style::Style;
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use revcal_mutate::{Category, Mutant};
use std::path::PathBuf;
use std::process::ExitCode;

const EXAMPLES: &str = "\
Examples:
  revcal mutate src/                        every mutant, one per line
  revcal mutate src/ --stats                counts per language, category and operator
  revcal mutate src/ --sample 8 --seed 1    8 non-overlapping mutants, categories round-robin
  revcal mutate src/ --json > mutants.json  the JSON form (keys as in docs/mutation.md)
  revcal mutate . --in-diff main            only lines changed since `main`
  revcal mutate src/ --show 3f2a9c01d2e4b5a6    the unified diff of one mutant
  revcal mutate src/ --format stryker > report.json   mutation-testing-report-schema
  revcal mutate --list-operators            every operator with an example

Mark a line with a `revcal: skip` comment (alone on its line, it covers the next line) or a
Rust item with #[mutants::skip] to keep mutants away. Settings may also live in revcal.toml:
  [mutate]
  exclude-category = [\"statement-deletion\"]
  sample = 8
  seed = 1";

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum MutateFormat {
    /// `file:line:col [category/operator] original -> replacement`
    Text,
    /// One JSON array of mutants.
    Json,
    /// mutation-testing-report-schema JSON (Stryker's dashboard and HTML report).
    Stryker,
}

/// Arguments of `revcal mutate`.
#[derive(Debug, Args)]
#[command(after_help = crate::exit::with_table(EXAMPLES, crate::exit::MUTATE_TABLE))]
pub(crate) struct MutateArgs {
    /// Files or directories (walked recursively, .gitignore respected).
    #[arg(value_name = "PATH", required_unless_present = "list_operators")]
    pub(crate) paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub(crate) format: Option<MutateFormat>,
    /// Same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub(crate) json: bool,
    /// Only these categories (repeat or comma-separate).
    #[arg(long = "category", value_name = "CATEGORY", value_delimiter = ',')]
    pub(crate) categories: Vec<String>,
    /// Never these categories.
    #[arg(long = "exclude-category", value_name = "CATEGORY", value_delimiter = ',')]
    pub(crate) exclude_categories: Vec<String>,
    /// Only these operators (see --list-operators).
    #[arg(long = "operator", value_name = "OPERATOR", value_delimiter = ',')]
    pub(crate) operators: Vec<String>,
    /// Never these operators.
    #[arg(long = "exclude-operator", value_name = "OPERATOR", value_delimiter = ',')]
    pub(crate) exclude_operators: Vec<String>,
    /// Pick N mutants: seeded, stratified across categories, non-overlapping, one per line,
    /// among those that fit on one line: the plants `calibrate --plants N --seed S` chooses
    /// from the same files.
    #[arg(long, value_name = "N")]
    pub(crate) sample: Option<usize>,
    /// Seed of --sample (default 0); the same seed gives the same sample.
    #[arg(long, value_name = "S")]
    pub(crate) seed: Option<u64>,
    /// Only mutants on lines changed since this git revision (committed or not).
    #[arg(long, value_name = "REV")]
    pub(crate) in_diff: Option<String>,
    /// Print the unified diff of the mutant with this id (or a unique prefix of it).
    #[arg(long, value_name = "ID")]
    pub(crate) show: Option<String>,
    /// Print counts per language, category and operator instead of the mutants.
    #[arg(long)]
    pub(crate) stats: bool,
    /// Also mutate test files (`tests/`, `test_*.py`, `*.test.js`, ...). Test functions and
    /// modules inside other files are never mutated.
    #[arg(long)]
    pub(crate) include_tests: bool,
    /// Skip files larger than this many bytes (default 2 MiB).
    #[arg(long, value_name = "BYTES")]
    pub(crate) max_file_size: Option<usize>,
    /// Settings file (default: ./revcal.toml when it exists; its [mutate] table is read).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// List every operator with its category and an example, then exit.
    #[arg(long)]
    pub(crate) list_operators: bool,
    /// The realistic profile: only the operators studies found coupled to real faults
    /// (relational, conditional, negation, arithmetic, literal, statement deletion), no
    /// logging or printing lines, at most one mutant per line (docs/mutation.md#profiles).
    /// The default profile keeps every operator of the nine categories.
    #[arg(long)]
    pub(crate) realistic: bool,
}

/// Runs `revcal mutate`.
pub(crate) fn run(args: MutateArgs, style: &Style) -> Result<ExitCode> {
    if args.list_operators {
        let json = args.json || args.format == Some(MutateFormat::Json);
        emit(&render::operators(json, style)?).context("cannot write the operators")?;
        return Ok(ExitCode::SUCCESS);
    }
    let settings = config::Settings::resolve(&args)?;
    let mut scan = files::scan(&args.paths, &settings.options)?;
    let stderr_style = Style::for_stderr(crate::args::ColorChoice::Auto);
    for warning in &scan.warnings {
        eprintln!("{}: {warning}", stderr_style.warning("warning"));
    }
    let mut mutants: Vec<Mutant> = std::mem::take(&mut scan.mutants);
    if let Some(rev) = &args.in_diff {
        let changed =
            diff::changed_lines(rev, &scan.mutated_files).with_context(|| format!("--in-diff {rev}"))?;
        mutants.retain(|mutant| {
            changed.get(&mutant.file).is_some_and(|lines| {
                // Removed lines end just past their line break, on a line they leave alone.
                let last = if mutant.removes_lines() { mutant.end_line - 1 } else { mutant.end_line };
                (mutant.line..=last).any(|line| lines.contains(&line))
            })
        });
    }
    if let Some(n) = settings.sample {
        // Only what fits on one line can be planted: sampling among those previews the plants
        // `calibrate --plants N --seed S` chooses from the same files.
        mutants.retain(revcal_mutate::Mutant::is_one_line);
        mutants = revcal_mutate::select(&mutants, n, settings.seed);
        mutants.sort_by(|a, b| (&a.file, a.start_byte).cmp(&(&b.file, b.start_byte)));
    }
    if let Some(id) = &args.show {
        let mutant = find(&mutants, id)?;
        let source = scan.sources.get(&mutant.file).context("the mutant's file was not read")?;
        emit(&render::show(mutant, source, style)?).context("cannot write the diff")?;
        return Ok(ExitCode::SUCCESS);
    }
    let format = if args.json { MutateFormat::Json } else { args.format.unwrap_or(MutateFormat::Text) };
    if args.stats {
        let text = render::stats(&scan, &mutants, format == MutateFormat::Json, style)?;
        emit(&text).context("cannot write the statistics")?;
        return Ok(ExitCode::SUCCESS);
    }
    match format {
        MutateFormat::Json => emit_json(&mutants).context("cannot write the mutants")?,
        MutateFormat::Stryker => {
            emit(&render::stryker(&mutants, &scan.sources)?).context("cannot write the report")?
        }
        MutateFormat::Text => {
            emit(&render::text(&mutants, style)).context("cannot write the mutants")?;
            if mutants.is_empty() {
                let tests = scan.skipped.get(&files::Skip::TestFile).copied().unwrap_or(0);
                let hint = if tests > 0 {
                    format!("{tests} test file(s) skipped (`--include-tests` mutates them)")
                } else {
                    "`--stats` says what was skipped".to_owned()
                };
                eprintln!("no mutants: {} file(s) read; {hint}", scan.mutated_files.len());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The mutant with this id, or the one whose id starts with it.
fn find<'a>(mutants: &'a [Mutant], id: &str) -> Result<&'a Mutant> {
    if let Some(exact) = mutants.iter().find(|mutant| mutant.id == id) {
        return Ok(exact);
    }
    let matches: Vec<&Mutant> = mutants.iter().filter(|mutant| mutant.id.starts_with(id)).collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => {
            bail!("no mutant with id `{id}` among the {} mutants of these paths and filters", mutants.len())
        }
        many => bail!("the id prefix `{id}` matches {} mutants; give more characters", many.len()),
    }
}

/// Parses category names given on the command line or in the config file.
fn parse_categories(names: &[String], flag: &str) -> Result<Vec<Category>> {
    names.iter().map(|name| name.parse::<Category>().with_context(|| format!("{flag} {name}"))).collect()
}

/// Checks operator names against every language's table.
fn check_operators(names: &[String], flag: &str) -> Result<()> {
    for name in names {
        if !revcal_mutate::operators().any(|operator| operator.name == name) {
            let known: std::collections::BTreeSet<&str> =
                revcal_mutate::operators().map(|op| op.name).collect();
            bail!(
                "{flag} {name}: unknown operator `{name}`; known operators: {}",
                known.into_iter().collect::<Vec<_>>().join(", ")
            );
        }
    }
    Ok(())
}
