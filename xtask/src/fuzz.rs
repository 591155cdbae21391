//! `cargo xtask fuzz [TARGET] [--time SECONDS]`: runs the cargo fuzz targets of `fuzz/` one
//! after another (each for `--time` seconds, default 600), on the stable toolchain through
//! `RUSTC_BOOTSTRAP=1`. What each target checks is in `crates/fuzz-targets`; new inputs the
//! fuzzer keeps land in `fuzz/corpus/<target>/`, which `cargo test` replays.

use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::{Command, ExitCode};

/// The targets, as named in `fuzz/Cargo.toml`.
const TARGETS: [&str; 7] = ["rubric", "review", "findings", "plants", "message", "mutate", "shards"];

pub(crate) fn run(root: &Path, args: &[&str]) -> Result<ExitCode> {
    let mut seconds = 600u64;
    let mut chosen = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "--time" => {
                let value = rest.next().context("--time needs a number of seconds")?;
                seconds =
                    value.parse().with_context(|| format!("--time {value}: not a number of seconds"))?;
            }
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
        eprintln!("== fuzzing `{target}` for {seconds} s");
        let status = Command::new("cargo")
            .args(["fuzz", "run", "--fuzz-dir", "fuzz", target])
            .arg(format!("fuzz/corpus/{target}"))
            .args(["--", &format!("-max_total_time={seconds}"), "-max_len=65536"])
            .env("RUSTC_BOOTSTRAP", "1")
            .current_dir(root)
            .status()
            .with_context(|| format!("cannot run cargo fuzz for `{target}`"))?;
        if !status.success() {
            eprintln!("`{target}` found a failure: its input is in fuzz/artifacts/{target}/");
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::SUCCESS)
}
