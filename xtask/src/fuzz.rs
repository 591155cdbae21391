//! `cargo xtask fuzz [TARGET] [--time SECONDS]` runs the cargo fuzz targets of `fuzz/` one
//! after another (each for `--time` seconds, default 600), on the stable toolchain through
//! `RUSTC_BOOTSTRAP=1`; `cargo xtask fuzz --seeds [TARGET]` re-derives the committed seeds.
//!
//! Two corpora per target:
//! - `fuzz/seeds/<target>/` (committed, replayed by `cargo test`): the inputs that found bugs
//!   (named `regression-*`), hand-written `seed-*` files, and the smallest set of the fuzzer's
//!   inputs that covers every edge the working corpus reaches (libFuzzer's set-cover merge,
//!   edges only), a few hundred files per target;
//! - `fuzz/corpus/<target>/` (ignored by git): the fuzzer's working corpus, grown by every
//!   run, seeded from `fuzz/seeds/<target>/` and kept between runs on this machine.

use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::{Command, ExitCode};

/// The targets, as named in `fuzz/Cargo.toml`.
const TARGETS: [&str; 8] =
    ["rubric", "review", "findings", "plants", "message", "mutate", "shards", "checkout"];

/// Longest input the fuzzer makes or reads.
const MAX_LEN: &str = "-max_len=65536";

pub(crate) fn run(root: &Path, args: &[&str]) -> Result<ExitCode> {
    let mut seconds = 600u64;
    let mut seeds = false;
    let mut chosen = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "--time" => {
                let value = rest.next().context("--time needs a number of seconds")?;
                seconds =
                    value.parse().with_context(|| format!("--time {value}: not a number of seconds"))?;
            }
            "--seeds" => seeds = true,
            target if TARGETS.contains(&target) => chosen.push(target),
            other => bail!("unknown fuzz target `{other}`; the targets are {}", TARGETS.join(", ")),
        }
    }
    if chosen.is_empty() {
        chosen.extend(TARGETS);
    }
    let installed =
        Command::new("cargo").args(["fuzz", "--version"]).output().is_ok_and(|o| o.status.success());
    if !installed {
        bail!("cargo fuzz is not installed: `cargo install cargo-fuzz --locked`");
    }
    for target in chosen {
        let outcome = if seeds { derive_seeds(root, target)? } else { fuzz(root, target, seconds)? };
        if outcome != ExitCode::SUCCESS {
            return Ok(outcome);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Fuzzes `target` for `seconds`, new inputs kept in its working corpus.
fn fuzz(root: &Path, target: &str, seconds: u64) -> Result<ExitCode> {
    eprintln!(
        "== fuzzing `{target}` for {seconds} s (corpus fuzz/corpus/{target}, seeds fuzz/seeds/{target})"
    );
    std::fs::create_dir_all(root.join("fuzz/corpus").join(target)).context("cannot create the corpus")?;
    // The first directory is the one the fuzzer writes to; the seeds are only read.
    let status = Command::new("cargo")
        .args(["fuzz", "run", "--fuzz-dir", "fuzz", target])
        .arg(format!("fuzz/corpus/{target}"))
        .arg(format!("fuzz/seeds/{target}"))
        .args(["--", &format!("-max_total_time={seconds}"), MAX_LEN])
        .env("RUSTC_BOOTSTRAP", "1")
        .current_dir(root)
        .status()
        .with_context(|| format!("cannot run cargo fuzz for `{target}`"))?;
    if !status.success() {
        eprintln!("`{target}` found a failure: its input is in fuzz/artifacts/{target}/");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Replaces the unnamed files of `fuzz/seeds/<target>/` with the smallest set of the working
/// corpus and the current seeds that covers the same edges; `regression-*` and `seed-*`
/// files are always kept.
fn derive_seeds(root: &Path, target: &str) -> Result<ExitCode> {
    eprintln!("== deriving fuzz/seeds/{target} from fuzz/corpus/{target} and the current seeds");
    let status = Command::new("cargo")
        .args(["fuzz", "build", "--fuzz-dir", "fuzz", target])
        .env("RUSTC_BOOTSTRAP", "1")
        .current_dir(root)
        .status()
        .with_context(|| format!("cannot build the fuzz target `{target}`"))?;
    if !status.success() {
        bail!("cargo fuzz build {target} failed");
    }
    let seeds = root.join("fuzz/seeds").join(target);
    let corpus = root.join("fuzz/corpus").join(target);
    std::fs::create_dir_all(&corpus).context("cannot create the corpus")?;
    let merged = tempfile::tempdir().context("cannot create a temporary directory")?;
    let binary = root.join("fuzz/target/x86_64-unknown-linux-gnu/release").join(target);
    // Edges only (no hit counts, no value profile): the smallest set that reaches every
    // edge, not every input that reaches a new count of one.
    let status = Command::new(&binary)
        .args(["-set_cover_merge=1", "-use_counters=0", "-use_value_profile=0", MAX_LEN])
        .arg(merged.path())
        .arg(&seeds)
        .arg(&corpus)
        .status()
        .with_context(|| format!("cannot run {}", binary.display()))?;
    if !status.success() {
        bail!("the merge of `{target}` failed");
    }
    for entry in std::fs::read_dir(&seeds).with_context(|| format!("cannot read {}", seeds.display()))? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if !(name.starts_with("regression-") || name.starts_with("seed-")) {
            std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    let mut kept = 0;
    for entry in std::fs::read_dir(merged.path())? {
        let path = entry?.path();
        let to = seeds.join(path.file_name().context("a file name")?);
        if !to.exists() {
            std::fs::copy(&path, &to).with_context(|| format!("cannot copy to {}", to.display()))?;
            kept += 1;
        }
    }
    eprintln!("fuzz/seeds/{target}: {kept} inputs from the merge, besides the named ones");
    Ok(ExitCode::SUCCESS)
}
