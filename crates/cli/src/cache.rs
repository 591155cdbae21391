//! `revcal cache`: the checkout cache, where `revcal calibrate` keeps its job slots' checkouts
//! between runs (docs/calibration.md#kept-checkouts): list what it holds, clear it.

use crate::output::emit;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use revcal_calibrate::CheckoutCache;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `revcal cache`.
#[derive(Debug, Args)]
#[command(after_help = crate::exit::with_table(
    "`revcal calibrate` keeps each job slot's checkout (and its build directories) between runs,\nper repository, so that a run writes only the files that differ from what the last one left.\nThe cache is bounded (--checkout-cache-size); the least recently used repositories go first.\n\nExamples:\n  revcal cache list\n  revcal cache clear              # every repository\n  revcal cache clear 3f2a9c1b0d4e5f60",
    crate::exit::CACHE_TABLE,
))]
pub(crate) struct CacheArgs {
    #[command(subcommand)]
    command: CacheCommand,
    /// The checkout cache [default: $XDG_CACHE_HOME/revcal/checkouts or
    /// ~/.cache/revcal/checkouts].
    #[arg(long, value_name = "DIR", global = true)]
    dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum CacheCommand {
    /// List the repositories in the cache: key, slots, size, last use (the most recent first).
    List {
        /// One JSON array instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Remove repositories from the cache (all of them without a key); slots a running
    /// calibration holds are left alone.
    Clear {
        /// Keys of repositories to remove (as `list` shows them).
        keys: Vec<String>,
    },
}

/// The checkout cache `dir` names, or the user's.
pub(crate) fn cache_at(dir: Option<PathBuf>) -> Result<CheckoutCache> {
    match dir {
        Some(dir) => Ok(CheckoutCache::at(dir)),
        None => CheckoutCache::user_default()
            .context("no cache directory: neither XDG_CACHE_HOME nor HOME is set; give one with --dir"),
    }
}

/// `1.5 GiB`, `12 MiB`, `300 KiB`.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{value:.1} {}", UNITS[unit]) }
}

pub(crate) fn run(args: CacheArgs) -> Result<ExitCode> {
    let cache = cache_at(args.dir)?;
    match args.command {
        CacheCommand::List { json } => {
            let listed = cache.list().with_context(|| format!("cannot read {}", cache.dir().display()))?;
            if json {
                emit(&format!("{}\n", serde_json::to_string_pretty(&listed)?))?;
                return Ok(ExitCode::SUCCESS);
            }
            let total: u64 = listed.iter().map(|repository| repository.bytes).sum();
            let mut out = format!(
                "{}: {} repositories, {} of at most {}\n",
                cache.dir().display(),
                listed.len(),
                size(total),
                size(cache.bound())
            );
            if !listed.is_empty() {
                out.push_str("KEY               SLOTS  SIZE        LAST USED (s since epoch)\n");
            }
            for repository in &listed {
                out.push_str(&format!(
                    "{:<16}  {:>5}  {:<10}  {}\n",
                    repository.key,
                    repository.slots,
                    size(repository.bytes),
                    repository.last_used.map_or_else(|| "-".to_owned(), |secs| secs.to_string())
                ));
            }
            emit(&out)?;
        }
        CacheCommand::Clear { keys } => {
            let removed = if keys.is_empty() {
                cache.clear(None)?
            } else {
                let mut removed = 0;
                for key in &keys {
                    removed += cache.clear(Some(key))?;
                }
                removed
            };
            eprintln!("removed {removed} kept slot(s) from {}", cache.dir().display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
