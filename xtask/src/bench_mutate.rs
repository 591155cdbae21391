//! `cargo xtask bench mutate [PATH]...`: time `revcal mutate --json` over source trees
//! (every mutant re-parse-checked) and, when cargo-mutants is installed and the one tree is a
//! cargo workspace, `cargo mutants --list --workspace` on it, in alternation, and print the
//! ratio (target in docs/ARCHITECTURE.md#speed: revcal must be faster). When the trees hold Python and a Python with mutmut
//! is found (`MUTMUT_PYTHON`, else `python3`), mutmut's generator (`mutate_file_contents`, the
//! step `mutmut run` does per file before any test runs) is timed once on the same files
//! (target: revcal >= 10x). When the trees hold JavaScript and Stryker's instrumenter is
//! installed (`STRYKER_INSTRUMENTER_DIR`, a directory whose `node_modules` has
//! `@stryker-mutator/instrumenter`), it is timed once with Node on the JavaScript files revcal
//! mutated (target: revcal >= 10x).

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// Rounds of each side, alternating; the medians are compared (the machine may be shared).
const ROUNDS: usize = 9;

/// mutmut's generator over every `.py` file under the directories given as arguments: prints
/// `mutants=N files=F`. mutmut reads its configuration from the working directory and wants a
/// source directory there, hence the empty temporary one.
const MUTMUT_SCRIPT: &str = r#"
import os, pathlib, sys, tempfile
from mutmut.mutation.file_mutation import mutate_file_contents
files = sorted(p.resolve() for d in sys.argv[1:] for p in pathlib.Path(d).rglob("*.py"))
workdir = tempfile.mkdtemp(); os.makedirs(os.path.join(workdir, "src")); os.chdir(workdir)
mutants = sum(len(mutate_file_contents(str(p), p.read_text()).mutant_names) for p in files)
print(f"mutants={mutants} files={len(files)}")
"#;

/// Stryker's instrumenter (parse, place every mutant, print the instrumented code: the step
/// `stryker run` does before any test runs) on the files listed one per line in the file named
/// by the second argument, one file per `instrument` call so that a file it cannot parse is
/// counted as refused instead of failing the batch. The first argument is the directory whose
/// `node_modules` holds the instrumenter. Prints
/// `mutants=N files=F refused=R seconds=S` (S: the instrumenting, without Node's start-up).
const STRYKER_SCRIPT: &str = r#"
const fs = require("fs"), path = require("path"), { createRequire } = require("module");
const { pathToFileURL } = require("url");
const [dir, list] = process.argv.slice(1);
const silent = () => {}, no = () => false;
const logger = { trace: silent, debug: silent, info: silent, warn: silent, error: silent, fatal: silent,
  isTraceEnabled: no, isDebugEnabled: no, isInfoEnabled: no, isWarnEnabled: no, isErrorEnabled: no,
  isFatalEnabled: no };
(async () => {
  const from = path.join(path.resolve(dir), "package.json");
  const entry = createRequire(from).resolve("@stryker-mutator/instrumenter");
  const { Instrumenter } = await import(pathToFileURL(entry).href);
  if (list === undefined) return;
  const files = fs.readFileSync(list, "utf8").split("\n").filter(Boolean);
  const instrumenter = new Instrumenter(logger);
  const options = { plugins: null, excludedMutations: [], ignorers: [] };
  const start = process.hrtime.bigint();
  let mutants = 0, instrumented = 0, refused = 0;
  for (const name of files) {
    const content = fs.readFileSync(name, "utf8");
    try {
      const result = await instrumenter.instrument([{ name, mutate: true, content }], options);
      mutants += result.mutants.length;
      instrumented += 1;
    } catch (error) {
      refused += 1;
      console.error(`stryker refused ${name}: ${String(error.message).split("\n")[0]}`);
    }
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(`mutants=${mutants} files=${instrumented} refused=${refused} seconds=${seconds.toFixed(3)}`);
})().catch((error) => { console.error(String(error)); process.exit(1); });
"#;

pub(crate) fn run(root: &Path, args: &[&str]) -> Result<ExitCode> {
    let given: Vec<PathBuf> =
        if args.is_empty() { vec![root.join("crates")] } else { args.iter().map(PathBuf::from).collect() };
    let mut trees = Vec::new();
    for tree in given {
        trees.push(tree.canonicalize().with_context(|| format!("{}: no such directory", tree.display()))?);
    }
    let mut counts = Lines::default();
    for tree in &trees {
        let lines = count_lines(tree);
        counts.rust += lines.rust;
        counts.javascript += lines.javascript;
        counts.python += lines.python;
    }
    let shown: Vec<String> = trees.iter().map(|tree| tree.display().to_string()).collect();
    println!(
        "trees: {} ({} Rust, {} JavaScript, {} Python lines)",
        shown.join(" "),
        counts.rust,
        counts.javascript,
        counts.python
    );

    println!("building revcal (release)...");
    let built = Command::new("cargo")
        .args(["build", "--release", "-q", "-p", "revcal-cli", "--bin", "revcal"])
        .current_dir(root)
        .status()
        .context("cannot run cargo")?;
    if !built.success() {
        bail!("cargo build --release -p revcal-cli failed");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let revcal = target.join("release/revcal");

    let output_file = std::env::temp_dir().join(format!("revcal-bench-mutate-{}.json", std::process::id()));
    let revcal_cpu = std::cell::RefCell::new(Vec::new());
    let mut revcal_command = || -> Result<Duration> {
        let file = std::fs::File::create(&output_file)?;
        let cpu_before = children_cpu();
        let start = Instant::now();
        let status = Command::new(&revcal)
            .args(["mutate", "--json"])
            .args(&trees)
            .stdout(file)
            .stderr(Stdio::null())
            .status()
            .with_context(|| format!("cannot run {}", revcal.display()))?;
        let elapsed = start.elapsed();
        revcal_cpu.borrow_mut().push(children_cpu().saturating_sub(cpu_before));
        if !status.success() {
            bail!("revcal mutate failed on {}", shown.join(" "));
        }
        Ok(elapsed)
    };

    let cargo_mutants = Command::new("cargo")
        .args(["mutants", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    let workspace = match trees.as_slice() {
        [tree] if tree.join("Cargo.toml").is_file() => Some(tree.clone()),
        _ => None,
    };
    let compare = cargo_mutants && workspace.is_some();
    if !cargo_mutants {
        println!("cargo-mutants is not installed (`cargo install cargo-mutants`): comparison skipped");
    } else if workspace.is_none() {
        println!("not one tree with a Cargo.toml: the cargo-mutants comparison is skipped");
    }
    let tree = workspace.unwrap_or_default();
    let mut theirs_count = 0;
    let mut theirs_cpu = Vec::new();
    let mut mutants_command = || -> Result<Duration> {
        let cpu_before = children_cpu();
        let start = Instant::now();
        let output = Command::new("cargo")
            .args(["mutants", "--list", "--workspace", "--dir"])
            .arg(&tree)
            .stderr(Stdio::null())
            .output()
            .context("cannot run cargo mutants")?;
        let elapsed = start.elapsed();
        theirs_cpu.push(children_cpu().saturating_sub(cpu_before));
        if !output.status.success() {
            bail!("cargo mutants --list failed on {}", tree.display());
        }
        theirs_count = String::from_utf8_lossy(&output.stdout).lines().count();
        Ok(elapsed)
    };

    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for round in 0..ROUNDS {
        ours.push(revcal_command()?);
        if compare {
            theirs.push(mutants_command()?);
        }
        println!(
            "round {}: revcal {:.3} s{}",
            round + 1,
            secs(ours[round]),
            theirs.get(round).map_or(String::new(), |t| format!(", cargo mutants --list {:.3} s", secs(*t)))
        );
    }
    let json = std::fs::read_to_string(&output_file).unwrap_or_default();
    let _ = std::fs::remove_file(&output_file);
    let our_count = json.matches("\n    \"id\": ").count();
    let our_median = median(&mut ours);
    let our_cpu = median(&mut revcal_cpu.borrow().iter().copied().take(ROUNDS).collect::<Vec<_>>());
    let lines = counts.rust + counts.javascript + counts.python;
    println!(
        "revcal mutate --json: {our_count} mutants, median {:.3} s wall, {:.3} s CPU ({:.0} lines/s, every mutant re-parse-checked)",
        secs(our_median),
        secs(our_cpu),
        lines as f64 / secs(our_median).max(1e-9)
    );
    if compare {
        let their_median = median(&mut theirs);
        let their_cpu = median(&mut theirs_cpu);
        println!(
            "cargo mutants --list --workspace: {theirs_count} mutants, median {:.3} s wall, {:.3} s CPU",
            secs(their_median),
            secs(their_cpu)
        );
        let wall = secs(our_median) / secs(their_median).max(1e-9);
        let cpu = secs(our_cpu) / secs(their_cpu).max(1e-9);
        let verdict = |ok: bool| if ok { "met" } else { "NOT met" };
        println!("wall time: revcal / cargo-mutants = {wall:.3} (target <= 0.500: {})", verdict(wall <= 0.5));
        println!("CPU time:  revcal / cargo-mutants = {cpu:.3} (target <= 1.000: {})", verdict(cpu <= 1.0));
    }
    if counts.javascript > 0 {
        compare_stryker(&javascript_files(&json), &mut revcal_command)?;
    }
    if counts.python > 0 {
        compare_mutmut(&trees, our_median)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Times mutmut's generator once on the Python files of `trees` (it is slow enough that one
/// run is no noise) against revcal's median over all the trees' files (Python and the rest).
fn compare_mutmut(trees: &[PathBuf], our_median: Duration) -> Result<()> {
    let python = std::env::var_os("MUTMUT_PYTHON").unwrap_or_else(|| "python3".into());
    let present = Command::new(&python)
        .args(["-c", "import mutmut.mutation.file_mutation"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !present {
        println!(
            "Python: the mutmut comparison is skipped: {} cannot import mutmut \
             (`pip install mutmut`, or set MUTMUT_PYTHON to a Python that has it)",
            python.to_string_lossy()
        );
        return Ok(());
    }
    println!("timing mutmut's generator once (minutes on large trees)...");
    let start = Instant::now();
    let output = Command::new(&python)
        .args(["-c", MUTMUT_SCRIPT])
        .args(trees)
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run mutmut")?;
    let elapsed = start.elapsed();
    if !output.status.success() {
        bail!("mutmut's generator failed");
    }
    let summary = String::from_utf8_lossy(&output.stdout).trim().to_string();
    println!("mutmut mutate_file_contents: {summary}, {:.3} s", secs(elapsed));
    println!(
        "ratio: revcal is {:.1}x the speed of mutmut's generator (target: >= 10)",
        secs(elapsed) / secs(our_median).max(1e-9)
    );
    Ok(())
}

/// The JavaScript files that revcal's `--json` output names, each once, in order: the files
/// it parsed and found mutants in (the output is read line by line; xtask has no JSON parser).
fn javascript_files(json: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut file = None;
    for line in json.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix("\"file\": \"").and_then(|rest| rest.strip_suffix("\",")) {
            file = Some(name.replace("\\\"", "\"").replace("\\\\", "\\"));
        } else if line.starts_with("\"language\": \"javascript\"")
            && let Some(name) = file.take()
            && files.last().is_none_or(|last| last.as_os_str() != name.as_str())
        {
            files.push(PathBuf::from(name));
        }
    }
    files
}

/// Times Stryker's instrumenter on `files` (every JavaScript file revcal mutated) and revcal
/// over all the trees' files (JavaScript and the rest), in alternation, [`ROUNDS`] times each,
/// so that both see the same machine; the ratio is of the medians.
fn compare_stryker(files: &[PathBuf], revcal_command: &mut dyn FnMut() -> Result<Duration>) -> Result<()> {
    let Some(dir) = std::env::var_os("STRYKER_INSTRUMENTER_DIR") else {
        println!(
            "JavaScript: the Stryker comparison is skipped: STRYKER_INSTRUMENTER_DIR is not set (a \
             directory after `npm install @stryker-mutator/instrumenter @stryker-mutator/api`)"
        );
        return Ok(());
    };
    let loadable = Command::new("node")
        .args(["-e", STRYKER_SCRIPT])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !loadable {
        println!(
            "JavaScript: the Stryker comparison is skipped: node cannot load @stryker-mutator/instrumenter \
             from {}",
            dir.to_string_lossy()
        );
        return Ok(());
    }
    let list = std::env::temp_dir().join(format!("revcal-bench-stryker-{}.txt", std::process::id()));
    let names: Vec<String> = files.iter().map(|file| file.display().to_string()).collect();
    std::fs::write(&list, names.join("\n")).with_context(|| format!("cannot write {}", list.display()))?;
    println!(
        "timing Stryker's instrumenter on the {} JavaScript files revcal mutated, in alternation with revcal...",
        files.len()
    );
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let mut inside = Vec::new();
    let mut summary = String::new();
    for round in 0..ROUNDS {
        ours.push(revcal_command()?);
        let start = Instant::now();
        let output = Command::new("node")
            .args(["-e", STRYKER_SCRIPT])
            .arg(&dir)
            .arg(&list)
            .stderr(if round == 0 { Stdio::inherit() } else { Stdio::null() })
            .output()
            .context("cannot run node")?;
        theirs.push(start.elapsed());
        if !output.status.success() {
            let _ = std::fs::remove_file(&list);
            bail!("Stryker's instrumenter failed");
        }
        summary = String::from_utf8_lossy(&output.stdout).trim().to_string();
        let seconds = summary
            .rsplit_once("seconds=")
            .and_then(|(_, seconds)| seconds.parse::<f64>().ok())
            .unwrap_or_default();
        inside.push(Duration::from_secs_f64(seconds));
        println!(
            "round {}: revcal {:.3} s, Stryker {:.3} s ({:.3} s without Node's start-up)",
            round + 1,
            secs(ours[round]),
            secs(theirs[round]),
            seconds
        );
    }
    let _ = std::fs::remove_file(&list);
    let (ours, theirs, inside) = (median(&mut ours), median(&mut theirs), median(&mut inside));
    println!("Stryker Instrumenter.instrument: {summary}; median {:.3} s with Node's start-up", secs(theirs));
    println!(
        "ratio: revcal (median {:.3} s) is {:.1}x the speed of Stryker's instrumenter ({:.1}x without \
         Node's start-up; target: >= 10)",
        secs(ours),
        secs(theirs) / secs(ours).max(1e-9),
        secs(inside) / secs(ours).max(1e-9)
    );
    Ok(())
}

fn secs(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

/// CPU time (user and system) of this process's children that have ended and been waited
/// for, descendants included.
fn children_cpu() -> Duration {
    // SAFETY: getrusage writes into the struct it is given and reads nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

#[derive(Default)]
struct Lines {
    rust: usize,
    javascript: usize,
    python: usize,
}

/// Source lines per language, skipping `target` and hidden directories.
fn count_lines(dir: &Path) -> Lines {
    let mut lines = Lines::default();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let slot = match path.extension().and_then(|ext| ext.to_str()) {
                Some("rs") => &mut lines.rust,
                Some("js" | "mjs" | "cjs" | "jsx") => &mut lines.javascript,
                Some("py") => &mut lines.python,
                _ => continue,
            };
            *slot += std::fs::read_to_string(&path).map_or(0, |text| text.lines().count());
        }
    }
    lines
}
