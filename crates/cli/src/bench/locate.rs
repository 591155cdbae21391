//! Where `revcal bench` finds things: the benchmark's directory (`--suite DIR`, then
//! `$REVCAL_BENCH_SUITE`, then the standard benchmark embedded in this binary), the
//! environment directories (`$REVCAL_BENCH_ENVS`, else the user's cache directory) and the
//! repositories (`--repos-dir`, else the suites' clone cache).

use std::path::{Path, PathBuf};

use anyhow::Context;
use revcal_bench::ENVS_VARIABLE;

/// The variable naming the benchmark's directory, when `--suite` does not.
pub(crate) const SUITE_VARIABLE: &str = "REVCAL_BENCH_SUITE";

/// The standard benchmark as this binary was built with it (`suites/standard/*.yaml`,
/// written by `build.rs`).
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/standard_suite.rs"));
}

/// A benchmark's directory, kept for as long as the command runs (the embedded benchmark is
/// written into a temporary directory, removed when this is dropped).
pub(crate) struct BenchDir {
    /// The directory.
    pub(crate) path: PathBuf,
    /// How it was found, for messages.
    pub(crate) origin: String,
    _temporary: Option<tempfile::TempDir>,
}

/// A variable's value as a path, when it is set and not empty.
fn variable(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from)
}

/// `path` made absolute against the current directory (witnesses and setups run elsewhere).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The benchmark to read: `--suite DIR`, else `$REVCAL_BENCH_SUITE`, else the embedded one.
///
/// The embedded benchmark is what `suites/standard/` held when this revcal was built: a
/// binary runs the benchmark of its version wherever it is installed, and two people with
/// the same version run the same bugs (the suite's hash says so in every report).
pub(crate) fn bench_dir(flag: Option<&Path>) -> anyhow::Result<BenchDir> {
    if let Some(dir) = flag.map(Path::to_path_buf).or_else(|| variable(SUITE_VARIABLE)) {
        let origin = if flag.is_some() { "--suite" } else { SUITE_VARIABLE };
        let path = absolute(&dir);
        if !path.is_dir() {
            anyhow::bail!("{} ({origin}) is not a directory", path.display());
        }
        return Ok(BenchDir { origin: path.display().to_string(), path, _temporary: None });
    }
    if !embedded::FILES.iter().any(|(name, _)| *name == "suite.yaml") {
        anyhow::bail!(
            "this revcal was built without the standard benchmark (suites/standard/suite.yaml was not in its source tree): give a benchmark's directory with --suite DIR or ${SUITE_VARIABLE}"
        );
    }
    let temporary = tempfile::Builder::new()
        .prefix("revcal-bench-")
        .tempdir()
        .context("cannot create a directory for the embedded benchmark")?;
    for (name, bytes) in embedded::FILES {
        let path = temporary.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(BenchDir {
        path: temporary.path().to_path_buf(),
        origin: "the standard benchmark built into this revcal".to_owned(),
        _temporary: Some(temporary),
    })
}

/// The benchmark directory to write into (`generate`, `verify --write`): `--suite DIR`, else
/// `$REVCAL_BENCH_SUITE`, else `suites/standard` under the current directory (revcal's
/// repository). The embedded benchmark is never written.
pub(crate) fn writable_bench_dir(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = flag
        .map(Path::to_path_buf)
        .or_else(|| variable(SUITE_VARIABLE))
        .unwrap_or_else(|| PathBuf::from("suites/standard"));
    let dir = absolute(&dir);
    if !dir.join("repos").is_dir() {
        anyhow::bail!(
            "{} holds no repos/ directory: give the benchmark's directory (suites/standard of revcal's repository) with --suite DIR",
            dir.display()
        );
    }
    Ok(dir)
}

/// The directory of the environment directories: `$REVCAL_BENCH_ENVS`, else
/// `$XDG_CACHE_HOME/revcal/bench-envs`, else `~/.cache/revcal/bench-envs`; absolute.
pub(crate) fn envs_dir() -> PathBuf {
    let dir = variable(ENVS_VARIABLE).unwrap_or_else(|| {
        variable("XDG_CACHE_HOME")
            .or_else(|| variable("HOME").map(|home| home.join(".cache")))
            .unwrap_or_else(std::env::temp_dir)
            .join("revcal")
            .join("bench-envs")
    });
    absolute(&dir)
}

/// Where repositories are cloned: `--repos-dir DIR`, else the suites' cache
/// (`$XDG_CACHE_HOME/revcal/repos`); absolute.
pub(crate) fn repos_dir(flag: Option<&Path>, bench: &Path) -> PathBuf {
    let dir = flag
        .map(Path::to_path_buf)
        .unwrap_or_else(|| crate::calibrate::suite::default_repos_dir(&bench.join("suite.yaml")));
    absolute(&dir)
}

/// Puts `$REVCAL_BENCH_ENVS` (and `$REVCAL_BENCH_SUITE`, when given) into revcal's own
/// environment, so that every command it starts sees them: the witnesses and test commands
/// name environments through the first, `revcal bench test-reviewer` finds the benchmark
/// through the second.
///
/// Call it before any thread is started: it changes the process's environment.
pub(crate) fn export(envs: &Path, bench: Option<&Path>) {
    // SAFETY: `revcal bench` calls this first thing, on the binary's main thread, before it
    // starts any thread (no run, review or setup has begun), so nothing reads the
    // environment meanwhile.
    unsafe {
        std::env::set_var(ENVS_VARIABLE, envs);
        if let Some(bench) = bench {
            std::env::set_var(SUITE_VARIABLE, bench);
        }
    }
}
