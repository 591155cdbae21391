//! `revcal calibrate` run as a user runs it: real git repositories in temporary directories,
//! real reviewer processes, real signals. Every test that runs a reviewer checks afterwards
//! that the repository (work tree and `.git`) is byte-identical to before, modes and
//! modification times included, and that the run left no scratch directory behind.

mod kept;
mod reach;

use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const CALC: &str = "def add(a, b):\n    return a + b\n\n\ndef is_adult(age):\n    return age >= 18\n\n\ndef first(items):\n    return items[0]\n";

/// Three plants, each with a witness (a grep for the original code: it passes on the
/// original and fails on the plant).
pub(crate) const PLANTS: &str = r#"- file: src/calc.py
  line: 2
  original: "return a + b"
  mutated: "return a - b"
  category: arithmetic
  defect: "add subtracts: every sum is wrong"
  witness: "grep -q 'return a + b' src/calc.py"
- file: src/calc.py
  line: 6
  original: ">="
  mutated: ">"
  category: off-by-one
  defect: "an 18-year-old is no longer an adult"
  witness: "grep -q 'age >= 18' src/calc.py"
- file: src/calc.py
  line: 10
  original: "items[0]"
  mutated: "items[1]"
  category: boundary
  defect: "first returns the second item"
  witness: "grep -q 'items\\[0\\]' src/calc.py"
"#;

/// Every variable that configures the built-in judge.
pub(crate) const JUDGE_VARIABLES: [&str; 11] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_BASE_URL",
    "REVCAL_JUDGE_PROVIDER",
    "REVCAL_JUDGE_MODEL",
    "HTTPS_PROXY",
    "https_proxy",
];

/// A calibration sandbox: `root/repo` is a git repository with one commit; plants file and
/// reviewer scripts live in `root`, outside the work tree.
pub(crate) struct Sandbox {
    root: tempfile::TempDir,
}

impl Sandbox {
    pub(crate) fn new() -> Sandbox {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("tmp")).unwrap();
        let repo = root.path().join("repo");
        std::fs::create_dir_all(repo.join("src")).unwrap();
        std::fs::write(repo.join("src/calc.py"), CALC).unwrap();
        std::fs::write(repo.join("README.md"), "calc\n").unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "."]);
        git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "calc"]);
        std::fs::write(root.path().join("plants.yaml"), PLANTS).unwrap();
        Sandbox { root }
    }

    pub(crate) fn repo(&self) -> PathBuf {
        self.root.path().join("repo")
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    /// Writes an executable script next to the repository and returns its path.
    pub(crate) fn script(&self, name: &str, body: &str) -> String {
        let path = self.path(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    pub(crate) fn plants(&self) -> String {
        self.path("plants.yaml").display().to_string()
    }

    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_revcal"));
        command
            .arg("calibrate")
            .args(args)
            // The stand-in reviewers here mostly say the same of every checkout, and the tests
            // count reviews: no review of the unplanted change. The filter has tests of its own
            // (`findings_the_reviewer_made_on_the_unplanted_change_are_set_aside`).
            .arg("--no-preexisting-filter")
            .current_dir(self.repo())
            .env_remove("NO_COLOR")
            .env_remove("RUST_LOG")
            // Verdicts cached in the sandbox, never in the user's cache directory.
            .env("XDG_CACHE_HOME", self.path("cache"))
            // The run's scratch directories in the sandbox, where the tests look for them.
            .env("TMPDIR", self.path("tmp"));
        // No judge from the environment the tests run in: each test configures its own.
        for variable in JUDGE_VARIABLES {
            command.env_remove(variable);
        }
        command
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// A reviewer that runs the project's checks (greps standing in for tests) and reports
    /// each failing one at its location with the check as repro.
    fn test_suite_reviewer(&self, checks: &[(u32, &str)]) -> String {
        let mut body = String::from("out=\"\"\n");
        for (line, check) in checks {
            body.push_str(&format!(
                "if ! sh -c \"{check}\" >/dev/null 2>&1; then out=\"$out{{\\\"file\\\": \\\"src/calc.py\\\", \\\"line\\\": {line}, \\\"message\\\": \\\"test failed\\\", \\\"repro\\\": \\\"{check}\\\"}},\"; fi\n",
                check = check.replace('"', "\\\"").replace('\\', "\\\\")
            ));
        }
        body.push_str("echo \"{\\\"findings\\\": [${out%,}]}\"\n");
        self.script("tests-reviewer.sh", &body)
    }
}

pub(crate) fn git(dir: &Path, args: &[&str]) -> Output {
    let output = Command::new("git").args(args).current_dir(dir).output().unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

/// Every path under a directory (`.git/` included): a file's bytes, a link's target (never
/// followed), nothing for a directory; with its mode and modification time (seconds,
/// nanoseconds).
pub(crate) type Snapshot = BTreeMap<PathBuf, (Vec<u8>, u32, i64, i64)>;

/// The [`Snapshot`] of `dir`.
pub(crate) fn snapshot(dir: &Path) -> Snapshot {
    fn walk(dir: &Path, base: &Path, out: &mut Snapshot) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let bytes = if meta.is_dir() {
                Vec::new()
            } else if meta.file_type().is_symlink() {
                std::fs::read_link(&path).unwrap().into_os_string().into_encoded_bytes()
            } else {
                std::fs::read(&path).unwrap()
            };
            out.insert(
                path.strip_prefix(base).unwrap().to_path_buf(),
                (bytes, meta.mode(), meta.mtime(), meta.mtime_nsec()),
            );
            if meta.is_dir() {
                walk(&path, base, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The repository (work tree, index, HEAD, refs, stash: all of `.git`) is byte-identical to
/// `before`, modes and modification times included, and the run left no scratch directory.
pub(crate) fn assert_untouched(sandbox: &Sandbox, before: &Snapshot) {
    let now = snapshot(&sandbox.repo());
    let changed: Vec<&PathBuf> =
        now.keys().chain(before.keys()).filter(|path| now.get(*path) != before.get(*path)).collect();
    assert!(changed.is_empty(), "the repository changed: {changed:?}");
    assert_eq!(run_dirs(sandbox), Vec::<PathBuf>::new(), "scratch directories left behind");
}

/// The run directories (`revcal-run-*`) in the sandbox's temporary directory.
pub(crate) fn run_dirs(sandbox: &Sandbox) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(sandbox.path("tmp"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with("revcal-run-"))
        .collect();
    dirs.sort();
    dirs
}

/// A reviewer each of whose reviews waits (up to 30 s) until two have started, writing its
/// working directory (`cwd.PID`) and how many it saw (`saw.PID`) into `meeting`, then reports
/// nothing: two of its reviews finish only if they run at once.
pub(crate) fn meeting_reviewer(sandbox: &Sandbox, meeting: &Path) -> String {
    std::fs::create_dir_all(meeting).unwrap();
    sandbox.script(
        "meet.sh",
        &format!(
            "pwd > {0}/cwd.$$\nn=0\nwhile [ $(ls {0} | grep -c cwd) -lt 2 ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n+1)); done\nls {0} | grep -c cwd > {0}/saw.$$\necho '[]'",
            meeting.display()
        ),
    )
}

pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub(crate) fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(output), stderr(output)))
}

#[test]
fn a_reviewer_that_says_lgtm_scores_zero_and_fails_the_gate() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let output = sandbox.run(&[
        "--review-cmd",
        "echo LGTM",
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let report = json(&output);
    assert_eq!(report["recall"], 0.0);
    assert_eq!(report["gatePass"], false);
    assert_eq!(report["caught"], 0);
    assert_eq!(report["total"], 3);
    assert_eq!(report["precision"], Value::Null, "nothing scored: precision is null, never 1.0");
    assert!(stderr(&output).contains("recall"), "the human summary goes to stderr with --json");
    assert!(!stderr(&output).contains('\r'), "no progress bar when stderr is not a terminal");
    assert_untouched(&sandbox, &before);
}

#[test]
fn a_reviewer_whose_output_holds_no_finding_is_warned_about_with_what_it_printed() {
    let sandbox = Sandbox::new();
    // What `go vet` prints when it cannot look its module up, with an escape sequence that
    // must not reach the terminal.
    let reviewer = sandbox.script(
        "vet.sh",
        "echo 'go: cannot find main module, but found .git/config in /src'\nprintf 'go: \\033[31mto create a module there, run:\\n'\necho '        go mod init'",
    );
    let output = sandbox.run(&[
        "--review-cmd",
        &reviewer,
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let warnings = json(&output)["warnings"].as_array().cloned().unwrap_or_default();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let warning = warnings[0].as_str().unwrap();
    assert!(
        warning.contains("reported no finding in any review") && warning.contains("docs/findings.md"),
        "{warning}"
    );
    assert!(warning.contains("go: cannot find main module"), "the first lines it printed: {warning}");
    assert!(!warning.contains('\u{1b}'), "no escape sequence is quoted: {warning:?}");
    let err = stderr(&output);
    assert_eq!(err.matches("reported no finding").count(), 1, "said once: {err}");

    // Findings, but none with a repro, under the repro scorer: 0 by construction, and said.
    let linter = sandbox.script(
        "lint.sh",
        "echo '[{\"file\": \"src/calc.py\", \"line\": 2, \"message\": \"suspicious arithmetic\"}]'",
    );
    let output = sandbox.run(&[
        "--review-cmd",
        &linter,
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--json",
    ]);
    let report = json(&output);
    assert_eq!(report["recall"], 0.0, "{}", stderr(&output));
    let warnings = report["warnings"].as_array().cloned().unwrap_or_default();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].as_str().unwrap().contains("none of the reviewer's 1 findings carries a repro command"),
        "{warnings:?}"
    );
    // Under the string scorer the same findings warn of nothing of the kind.
    let output = sandbox.run(&[
        "--review-cmd",
        &linter,
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "string",
        "--json",
    ]);
    assert_eq!(json(&output)["warnings"], Value::Null, "{}", stderr(&output));
}

#[test]
fn the_json_report_has_every_key_of_the_spec() {
    let sandbox = Sandbox::new();
    let reviewer = sandbox.test_suite_reviewer(&[(2, "grep -q 'return a + b' src/calc.py")]);
    let output = sandbox.run(&[
        "--review-cmd",
        &reviewer,
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--json",
    ]);
    let report = json(&output);
    for key in [
        "recall",
        "caught",
        "total",
        "precision",
        "truePositives",
        "falsePositives",
        "minRecall",
        "minPrecision",
        "gatePass",
        "scorer",
        "judgeAgreement",
        "equivalentExcluded",
        "commit",
        "reviewExitCode",
        "perCategory",
        "plants",
        "recallInterval",
    ] {
        assert!(report.get(key).is_some(), "missing key {key}: {report}");
    }
    let commit = git(&sandbox.repo(), &["rev-parse", "HEAD"]);
    assert_eq!(report["commit"], String::from_utf8_lossy(&commit.stdout).trim());
    assert_eq!(
        report["perCategory"]["arithmetic"],
        serde_json::json!({"caught": 1, "total": 1, "recall": 1.0})
    );
    let plant = &report["plants"][1];
    for key in ["file", "line", "category", "operator", "status", "original", "mutated"] {
        assert!(plant.get(key).is_some(), "plant lacks {key}: {plant}");
    }
    assert_eq!(plant["original"], "    return age >= 18");
    assert_eq!(plant["mutated"], "    return age > 18");
    assert_eq!(plant["status"], "missed");
    assert_eq!(report["plants"][0]["status"], "caught");
    assert_eq!(report["truePositives"], 1);
    assert_eq!(report["precision"], 1.0);
}

/// Whether `check` passes on `text` written to src/calc.py (computed here, independently of
/// revcal, by running the check in a scratch directory).
fn check_passes(check: &str, text: &str) -> bool {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/calc.py"), text).unwrap();
    Command::new("sh").arg("-c").arg(check).current_dir(dir.path()).status().unwrap().success()
}

#[test]
fn the_test_suite_reviewer_scores_the_share_of_plants_its_tests_discriminate() {
    let sandbox = Sandbox::new();
    let all = [
        (2, "grep -q 'return a + b' src/calc.py"),
        (6, "grep -q 'age >= 18' src/calc.py"),
        (10, "grep -q 'items.0.' src/calc.py"),
    ];
    let reviewer = sandbox.test_suite_reviewer(&all);
    let output = sandbox.run(&[
        "--review-cmd",
        &reviewer,
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(json(&output)["recall"], 1.0);

    // Tests that kill only some plants: one test misses its plant (it checks `age` only).
    let some = [(2, "grep -q 'return a + b' src/calc.py"), (6, "grep -q 'age' src/calc.py")];
    let reviewer = sandbox.test_suite_reviewer(&some);
    let before = snapshot(&sandbox.repo());
    let output = sandbox.run(&[
        "--review-cmd",
        &reviewer,
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--min-recall",
        "0.6",
        "--json",
    ]);
    let mutated = [
        CALC.replace("return a + b", "return a - b"),
        CALC.replace("age >= 18", "age > 18"),
        CALC.replace("items[0]", "items[1]"),
    ];
    let discriminated = mutated
        .iter()
        .filter(|text| some.iter().any(|(_, check)| check_passes(check, CALC) && !check_passes(check, text)))
        .count();
    let expected = discriminated as f64 / 3.0;
    let report = json(&output);
    assert!((report["recall"].as_f64().unwrap() - expected).abs() < 1e-9, "{report}");
    assert_eq!(output.status.code(), Some(if expected >= 0.6 { 0 } else { 2 }));
    assert_untouched(&sandbox, &before);
}

#[test]
fn controls_echo_and_oracle_under_repro_judge_and_string() {
    let sandbox = Sandbox::new();
    let reviewer = sandbox.test_suite_reviewer(&[(2, "grep -q 'return a + b' src/calc.py")]);
    // A test judge that matches when the finding states the planted defect.
    let judge = sandbox.script(
        "judge.sh",
        "req=$(cat)\ndefect=$(printf '%s' \"$req\" | sed 's/.*\"defect\":\"\\([^\"]*\\)\".*/\\1/')\ncase \"$req\" in *\"text\\\":\\\"$defect\"*) echo '{\"match\": true}';; *) echo '{\"match\": false}';; esac",
    );
    let plants = sandbox.plants();
    for scorer_args in [vec!["--scorer", "repro"], vec!["--scorer", "judge", "--judge-cmd", judge.as_str()]] {
        let mut args = vec![
            "--review-cmd",
            reviewer.as_str(),
            "--plants-file",
            plants.as_str(),
            "--min-recall",
            "0",
            "--json",
        ];
        args.extend(scorer_args.iter().copied());
        let output = sandbox.run(&args);
        assert!(output.status.success(), "{scorer_args:?}: {}", stderr(&output));
        let controls = &json(&output)["controls"];
        assert!(controls["echo"]["recall"].as_f64().unwrap() <= 0.2, "{scorer_args:?}: {controls}");
        assert_eq!(controls["oracle"]["recall"], 1.0, "{scorer_args:?}: {controls}");
    }
    let output = sandbox.run(&[
        "--review-cmd",
        &reviewer,
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "string",
        "--json",
    ]);
    let report = json(&output);
    assert_eq!(report["controls"]["echo"]["recall"], 1.0);
    assert_eq!(report["trustworthy"], false);
    // Said once, beside the figure it is about.
    assert_eq!(stderr(&output).matches("NOT trustworthy").count(), 1, "{}", stderr(&output));
}

#[test]
fn a_judge_that_matches_everything_fails_the_echo_control_with_exit_1() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let judge = sandbox.script("yes-judge.sh", "cat >/dev/null; echo '{\"match\": true}'");
    let output = sandbox.run(&[
        "--review-cmd",
        "echo LGTM",
        "--plants-file",
        &sandbox.plants(),
        "--judge-cmd",
        &judge,
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("echo control") && stderr(&output).contains("1.00"),
        "{}",
        stderr(&output)
    );
    assert_untouched(&sandbox, &before);
}

#[test]
fn judge_scorer_without_a_judge_fails_closed_before_touching_anything() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let marker = sandbox.path("reviewed");
    let reviewer = format!("touch {}", marker.display());
    let output = sandbox.run(&["--review-cmd", &reviewer, "--plants-file", &sandbox.plants()]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("--judge-cmd"), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("ANTHROPIC_API_KEY"),
        "the hint names the judge setup: {}",
        stderr(&output)
    );
    assert!(!marker.exists(), "the reviewer never ran");
    assert_untouched(&sandbox, &before);
}

#[test]
fn a_dirty_tree_is_calibrated_from_the_commit_and_left_as_it_is_and_a_non_repository_is_refused() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo();
    // Uncommitted work: an edit to the planted file, a staged new file, an untracked one.
    std::fs::write(repo.join("src/calc.py"), format!("{CALC}# local edit\n")).unwrap();
    std::fs::write(repo.join("staged.py"), "x = 1\n").unwrap();
    git(&repo, &["add", "staged.py"]);
    std::fs::write(repo.join("notes.txt"), "mine\n").unwrap();
    let before = snapshot(&repo);
    let seen = sandbox.path("seen.py");
    let reviewer = sandbox.script(
        "reviewer.sh",
        &format!("cp src/calc.py {}; ls > {}.ls; echo '[]'", seen.display(), seen.display()),
    );
    let output = sandbox.run(&[
        "--review-cmd",
        &reviewer,
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(json(&output)["total"], 3);
    // The reviewer saw the commit with the plants, not the local edit nor the other files.
    let reviewed = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(
        reviewed,
        CALC.replace("a + b", "a - b").replace("age >= 18", "age > 18").replace("items[0]", "items[1]")
    );
    assert_eq!(std::fs::read_to_string(seen.with_extension("py.ls")).unwrap(), "README.md\nsrc\n");
    assert_untouched(&sandbox, &before);

    let plain = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_revcal"))
        .args(["calibrate", "--review-cmd", "echo LGTM", "--scorer", "repro"])
        .current_dir(plain.path())
        .env("GIT_CEILING_DIRECTORIES", plain.path().parent().unwrap())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("is not a git repository"), "{}", stderr(&output));
}

#[test]
fn a_witness_that_does_not_discriminate_excludes_its_plant() {
    let sandbox = Sandbox::new();
    let plants = PLANTS
        .replace("witness: \"grep -q 'age >= 18' src/calc.py\"", "witness: \"grep -q 'age' src/calc.py\"");
    std::fs::write(sandbox.path("plants.yaml"), plants).unwrap();
    let output = sandbox.run(&[
        "--review-cmd",
        "echo LGTM",
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--min-plants",
        "2",
        "--json",
    ]);
    let report = json(&output);
    assert_eq!(report["equivalentExcluded"], 1);
    assert_eq!(report["total"], 2);
    assert_eq!(report["plants"][1]["status"], "excluded");
    // With the default --min-plants 3, two valid plants are an operational error.
    let output =
        sandbox.run(&["--review-cmd", "echo LGTM", "--plants-file", &sandbox.plants(), "--scorer", "repro"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stderr(&output);
    assert!(text.contains("fewer valid plants (2") && text.contains("than the minimum (3)"), "{text}");
    assert!(text.contains("--min-plants 3"), "the hint names the flag: {text}");
}

#[test]
fn a_plants_entry_whose_original_moved_on_is_refused_with_its_position() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.path("plants.yaml"), PLANTS.replace("line: 6", "line: 5")).unwrap();
    let output =
        sandbox.run(&["--review-cmd", "echo LGTM", "--plants-file", &sandbox.plants(), "--scorer", "repro"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stderr(&output);
    assert!(
        text.contains("plants.yaml: plant 2 (src/calc.py:5): `original` no longer matches the line"),
        "{text}"
    );
}

// ---- faults: every one leaves the tree byte-identical -------------------------------------

/// Starts a calibration whose reviewer records its process group in `started` and its
/// working directory in `started.cwd`, then sleeps; returns once the reviewer runs. The plants
/// are in its checkout, and the user's file is as it was.
fn start_hanging_review(sandbox: &Sandbox, extra: &[&str]) -> (Child, PathBuf) {
    let started = sandbox.path("started");
    let reviewer = sandbox.script(
        "hang.sh",
        &format!("pwd > {0}.cwd; echo $$ > {0}.tmp; mv {0}.tmp {0}; sleep 60", started.display()),
    );
    let mut args = vec!["--review-cmd", reviewer.as_str(), "--plants-file"];
    let plants = sandbox.plants();
    args.push(&plants);
    args.extend(["--scorer", "repro"]);
    args.extend(extra);
    let child = sandbox.command(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !started.exists() {
        assert!(Instant::now() < deadline, "the reviewer never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let checkout = PathBuf::from(std::fs::read_to_string(started.with_extension("cwd")).unwrap().trim());
    assert!(
        checkout.starts_with(sandbox.path("tmp"))
            || checkout.starts_with(sandbox.path("cache/revcal/checkouts")),
        "the reviewer runs in a scratch checkout (fresh in the run's directory, or a kept one): {}",
        checkout.display()
    );
    let planted = std::fs::read_to_string(checkout.join("src/calc.py")).unwrap();
    assert!(planted.contains("return a - b"), "the plants are in its checkout");
    assert_eq!(
        std::fs::read_to_string(sandbox.repo().join("src/calc.py")).unwrap(),
        CALC,
        "and not in the repository"
    );
    (child, started)
}

fn signal(pid: u32, signal: i32) {
    // SAFETY: kill only sends a signal to a process this test started.
    assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0);
}

fn reviewer_group_is_gone(started: &Path) -> bool {
    let pgid: i32 = std::fs::read_to_string(started).unwrap().trim().parse().unwrap();
    // SAFETY: signal 0 only checks for existence.
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if unsafe { libc::killpg(pgid, 0) } != 0 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn sigint_sigterm_and_sighup_during_the_review_kill_the_reviewer_and_remove_the_checkouts() {
    // SIGTERM with the kept checkouts (the default), the others with fresh ones.
    for (sig, name, extra) in [
        (libc::SIGINT, "SIGINT", &["--no-checkout-cache"][..]),
        (libc::SIGTERM, "SIGTERM", &[][..]),
        (libc::SIGHUP, "SIGHUP", &["--no-checkout-cache"][..]),
    ] {
        let sandbox = Sandbox::new();
        let before = snapshot(&sandbox.repo());
        let (child, started) = start_hanging_review(&sandbox, extra);
        assert_eq!(run_dirs(&sandbox).len(), 1, "{name}: the run's directory exists while it runs");
        signal(child.id(), sig);
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(128 + sig), "{name}: {}", stderr(&output));
        assert!(stderr(&output).contains(name) && stderr(&output).contains("removed"), "{}", stderr(&output));
        assert!(reviewer_group_is_gone(&started), "{name}: the reviewer's process group was killed");
        assert_untouched(&sandbox, &before);
    }
}

#[test]
fn sigkill_during_the_review_leaves_the_repository_untouched_and_the_next_run_removes_its_checkouts() {
    let sandbox = Sandbox::new();
    std::fs::set_permissions(sandbox.repo().join("src/calc.py"), std::fs::Permissions::from_mode(0o640))
        .unwrap();
    let before = snapshot(&sandbox.repo());
    let (mut child, started) = start_hanging_review(&sandbox, &["--no-checkout-cache"]);
    // The reviewer makes a directory nobody may enter: the cleanup gets through it anyway.
    let checkout = PathBuf::from(std::fs::read_to_string(started.with_extension("cwd")).unwrap().trim());
    std::fs::create_dir_all(checkout.join("locked/inner")).unwrap();
    std::fs::set_permissions(checkout.join("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    signal(child.id(), libc::SIGKILL);
    child.wait().unwrap();
    // revcal is gone; its reviewer may outlive it. End it the way an operator would.
    let pgid: i32 = std::fs::read_to_string(&started).unwrap().trim().parse().unwrap();
    // SAFETY: the group is the reviewer this test started.
    unsafe { libc::killpg(pgid, libc::SIGKILL) };
    assert!(snapshot(&sandbox.repo()) == before, "nothing reached the repository");
    let left = run_dirs(&sandbox);
    assert_eq!(left.len(), 1, "a killed run cannot remove its directory");

    // The next run removes it (its owner is gone), and leaves nothing of its own.
    let next =
        sandbox.run(&["--review-cmd", "echo LGTM", "--plants-file", &sandbox.plants(), "--scorer", "repro"]);
    assert_eq!(next.status.code(), Some(2), "{}", stderr(&next));
    assert!(!left[0].exists(), "the killed run's directory is removed");
    assert_untouched(&sandbox, &before);
    // Nothing was ever planted in the tree: nothing to recover, and that is success.
    let recovered = sandbox.run(&["--recover"]);
    assert_eq!(recovered.status.code(), Some(0), "{}", stderr(&recovered));
    assert!(stderr(&recovered).contains("nothing to recover"), "{}", stderr(&recovered));
    assert_untouched(&sandbox, &before);
}

#[test]
fn reviewer_faults_crash_hang_flood_and_vandalism_all_leave_the_repository_as_it_was() {
    struct Case {
        name: &'static str,
        reviewer: &'static str,
        extra: &'static [&'static str],
        exit: i32,
        message: &'static str,
    }
    let cases = [
        Case {
            name: "exits 1",
            reviewer: "echo boom >&2; exit 1",
            extra: &[],
            exit: 1,
            message: "crashed (exit code 1",
        },
        Case {
            name: "hangs",
            reviewer: "sleep 60",
            extra: &["--review-timeout", "1"],
            exit: 1,
            message: "ran past its time limit (1s)",
        },
        Case {
            name: "prints 100 MB",
            reviewer: "head -c 100000000 /dev/zero | tr '\\0' x",
            extra: &[],
            exit: 2,
            message: "recall",
        },
        Case {
            name: "edits and deletes the planted files",
            reviewer: "echo vandal > src/calc.py; rm -f src/calc.py; rm -f README.md; echo '[]'",
            extra: &["--trials", "2", "--jobs", "1"],
            exit: 2,
            message: "recall",
        },
    ];
    for case in cases {
        let sandbox = Sandbox::new();
        let before = snapshot(&sandbox.repo());
        let reviewer = sandbox.script("reviewer.sh", case.reviewer);
        let mut args = vec!["--review-cmd", reviewer.as_str(), "--scorer", "repro"];
        let plants = sandbox.plants();
        args.extend(["--plants-file", plants.as_str()]);
        args.extend(case.extra);
        let output = sandbox.run(&args);
        assert_eq!(output.status.code(), Some(case.exit), "{}: {}", case.name, stderr(&output));
        assert!(
            stderr(&output).contains(case.message) || stdout(&output).contains(case.message),
            "{}: {}",
            case.name,
            stderr(&output)
        );
        if case.name == "hangs" {
            assert!(
                stderr(&output).contains("--review-timeout 1"),
                "the hint names the flag: {}",
                stderr(&output)
            );
        }
        assert_untouched(&sandbox, &before);
    }
}

#[test]
fn a_panic_inside_revcal_during_the_review_stops_the_reviewer_and_removes_the_checkouts() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let output = sandbox
        .command(&["--review-cmd", "sleep 60", "--plants-file", &sandbox.plants(), "--scorer", "repro"])
        .env("REVCAL_TEST_PANIC_DURING_REVIEW", "1")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(101), "{}", stderr(&output));
    assert!(stderr(&output).contains("injected panic"), "{}", stderr(&output));
    assert_untouched(&sandbox, &before);
}

#[test]
fn a_read_only_target_is_planted_in_the_checkout_and_left_alone_in_the_repository() {
    let sandbox = Sandbox::new();
    let target = sandbox.repo().join("src/calc.py");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = snapshot(&sandbox.repo());
    let seen = sandbox.path("seen.py");
    let reviewer = format!("cp src/calc.py {}; echo '[]'", seen.display());
    let output =
        sandbox.run(&["--review-cmd", &reviewer, "--plants-file", &sandbox.plants(), "--scorer", "repro"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(std::fs::read_to_string(&seen).unwrap().contains("return a - b"), "the reviewer saw the plants");
    assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o444);
    assert_untouched(&sandbox, &before);
}

#[test]
fn review_calibration_is_the_same_command() {
    let sandbox = Sandbox::new();
    let reviewer = sandbox.test_suite_reviewer(&[(2, "grep -q 'return a + b' src/calc.py")]);
    let output = Command::new(env!("CARGO_BIN_EXE_review-calibration"))
        .args(["--review-cmd", &reviewer, "--plants-file", &sandbox.plants(), "--scorer", "repro", "--json"])
        .current_dir(sandbox.repo())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let report = json(&output);
    assert_eq!(report["caught"], 1);
    let help = Command::new(env!("CARGO_BIN_EXE_review-calibration")).arg("--help").output().unwrap();
    assert!(stdout(&help).contains("--review-cmd") && stdout(&help).contains("--min-recall"));
}

#[test]
fn junit_and_html_reports_are_written() {
    let sandbox = Sandbox::new();
    let reviewer = sandbox.test_suite_reviewer(&[(2, "grep -q 'return a + b' src/calc.py")]);
    let (junit, html) = (sandbox.path("calib.xml"), sandbox.path("calib.html"));
    let output = sandbox.run(&[
        "--review-cmd",
        &reviewer,
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--junit",
        junit.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "--trials",
        "2",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let xml = std::fs::read_to_string(junit).unwrap();
    assert!(xml.contains("<testsuite") && xml.contains("failures=\"2\""), "{xml}");
    let page = std::fs::read_to_string(html).unwrap();
    assert!(page.contains("<svg") && page.contains("return a - b"), "self-contained page with the plants");
}

// The built-in LLM judge, end to end, against a local server speaking each provider's wire
// format (no network, no key).

use crate::http_server::{Recorded, Reply, TestServer, defect_sentence_verdict, prompt_of};

/// A provider's answer carrying `matched`, in the format its request (recognised by its
/// path) expects.
fn provider_reply(request: &Recorded, matched: bool) -> Reply {
    let body = if request.path.ends_with("/v1/messages") {
        crate::http_server::anthropic_tool_answer(&format!(r#"{{"match": {matched}, "reason": "r"}}"#))
    } else if request.path.ends_with("/chat/completions") {
        crate::http_server::openai_answer(&crate::http_server::verdict_text(matched), "stop")
    } else {
        crate::http_server::gemini_answer(&crate::http_server::verdict_text(matched), "STOP")
    };
    Reply::new(200, body)
}

/// A test server that judges like a careful judge: a match when the finding states the
/// planted defect.
fn reading_judge_server() -> TestServer {
    TestServer::start(|_, request| provider_reply(request, defect_sentence_verdict(&prompt_of(request))))
}

/// The environment that points `provider`'s client at `server`.
fn provider_env(provider: &str, server: &TestServer) -> Vec<(&'static str, String)> {
    match provider {
        "anthropic" => vec![("ANTHROPIC_API_KEY", "test-key".into()), ("ANTHROPIC_BASE_URL", server.url())],
        "openai" => {
            vec![("OPENAI_API_KEY", "test-key".into()), ("OPENAI_BASE_URL", format!("{}/v1", server.url()))]
        }
        _ => vec![("GEMINI_API_KEY", "test-key".into()), ("GEMINI_BASE_URL", server.url())],
    }
}

impl Sandbox {
    /// A reviewer that states the first plant's defect, only quotes the second's line and
    /// says nothing of the third.
    fn llm_like_reviewer(&self) -> String {
        self.script(
            "llm-reviewer.sh",
            r#"cat <<'JSON'
{"findings": [
  {"file": "src/calc.py", "line": 2, "title": "add subtracts: every sum is wrong"},
  {"file": "src/calc.py", "line": 6, "title": "This line changed: `return age > 18`"}
]}
JSON"#,
        )
    }

    fn run_with_env(&self, args: &[&str], env: &[(&str, String)]) -> Output {
        let mut command = self.command(args);
        command.envs(env.iter().map(|(k, v)| (*k, v.as_str())));
        command.output().unwrap()
    }
}

#[test]
fn each_provider_judges_controls_and_review_end_to_end() {
    for provider in ["anthropic", "openai", "gemini"] {
        let sandbox = Sandbox::new();
        let before = snapshot(&sandbox.repo());
        let server = reading_judge_server();
        let reviewer = sandbox.llm_like_reviewer();
        let output = sandbox.run_with_env(
            &["--review-cmd", &reviewer, "--plants-file", &sandbox.plants(), "--min-recall", "0.3", "--json"],
            &provider_env(provider, &server),
        );
        assert_eq!(output.status.code(), Some(0), "{provider}: {}", stderr(&output));
        let report = json(&output);
        assert_eq!(report["scorer"], "judge");
        assert_eq!(report["controls"]["echo"]["recall"], 0.0, "{provider}: {}", report["controls"]);
        assert_eq!(report["controls"]["oracle"]["recall"], 1.0, "{provider}: {}", report["controls"]);
        assert_eq!((report["caught"].as_u64(), report["total"].as_u64()), (Some(1), Some(3)), "{provider}");
        let judge = &report["judge"];
        assert_eq!(judge["provider"], provider);
        // 3 echo + 3 oracle + 2 located review findings; the review's second finding is the
        // echo control's question again, answered from the cache.
        assert_eq!(judge["calls"], 7, "{provider}: {judge}");
        assert_eq!(server.requests().len(), 7);
        assert_eq!(judge["cacheHits"], 1);
        assert_eq!(report["judgeErrors"], 0, "{provider}");
        assert!(judge["inputTokens"].as_u64().unwrap() > 0, "{judge}");
        assert!(stderr(&output).contains(&format!("judge      {provider}")), "{}", stderr(&output));
        assert_untouched(&sandbox, &before);
    }
}

#[test]
fn a_rerun_takes_its_verdicts_from_the_cache_and_no_judge_cache_asks_again() {
    let sandbox = Sandbox::new();
    let server = reading_judge_server();
    let reviewer = sandbox.llm_like_reviewer();
    let cache = sandbox.path("verdicts");
    let env = provider_env("openai", &server);
    let args = |extra: &'static [&'static str]| {
        let mut args = vec![
            "--review-cmd".to_owned(),
            reviewer.clone(),
            "--plants-file".to_owned(),
            sandbox.plants(),
            "--min-recall".to_owned(),
            "0".to_owned(),
            "--json".to_owned(),
        ];
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        args
    };
    let run = |args: Vec<String>| {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        json(&sandbox.run_with_env(&refs, &env))
    };
    let mut first_args = args(&[]);
    first_args.extend(["--judge-cache".to_owned(), cache.display().to_string()]);
    let first = run(first_args.clone());
    assert_eq!((first["judge"]["calls"].as_u64(), first["judge"]["cacheHits"].as_u64()), (Some(7), Some(1)));
    let second = run(first_args);
    assert_eq!(
        (second["judge"]["calls"].as_u64(), second["judge"]["cacheHits"].as_u64()),
        (Some(0), Some(8))
    );
    assert_eq!(second["caught"], first["caught"], "a rerun repeats exactly");
    assert_eq!(server.requests().len(), 7);
    let uncached = run(args(&["--no-judge-cache"]));
    assert_eq!(
        (uncached["judge"]["calls"].as_u64(), uncached["judge"]["cacheHits"].as_u64()),
        (Some(8), Some(0))
    );
    // The default cache is the user's cache directory (XDG_CACHE_HOME here).
    let default = run(args(&[]));
    assert_eq!(default["judge"]["calls"], 7);
    assert!(sandbox.path("cache/revcal/judge").is_dir());
    assert_eq!(run(args(&[]))["judge"]["cacheHits"], 8);
}

#[test]
fn a_judge_that_keeps_failing_exits_1_with_the_tree_untouched() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let server = TestServer::start(|_, _| Reply::new(500, r#"{"error": {"message": "internal"}}"#));
    let output = sandbox.run_with_env(
        &["--review-cmd", "echo LGTM", "--plants-file", &sandbox.plants(), "--judge-retries", "1", "--json"],
        &provider_env("anthropic", &server),
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("gave up after 2 attempts") && stderr(&output).contains("500"),
        "{}",
        stderr(&output)
    );
    let document = json(&output);
    assert!(document.get("recall").is_none(), "no report for a run the judge could not score: {document}");
    assert!(document["error"].as_str().unwrap().contains("gave up after 2 attempts"), "{document}");
    assert_eq!(server.requests().len(), 2);
    assert_untouched(&sandbox, &before);
}

#[test]
fn a_rejected_key_exits_1_naming_the_variable() {
    let sandbox = Sandbox::new();
    let server =
        TestServer::start(|_, _| Reply::new(401, r#"{"error": {"message": "Incorrect API key provided"}}"#));
    let output = sandbox.run_with_env(
        &["--review-cmd", "echo LGTM", "--plants-file", &sandbox.plants()],
        &provider_env("openai", &server),
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("OPENAI_API_KEY"), "{}", stderr(&output));
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_judge_that_always_says_match_fails_the_echo_control() {
    let sandbox = Sandbox::new();
    let server = TestServer::start(|_, request| provider_reply(request, true));
    let output = sandbox.run_with_env(
        &["--review-cmd", "echo LGTM", "--plants-file", &sandbox.plants()],
        &provider_env("gemini", &server),
    );
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(err.contains("echo control"), "{err}");
    // What to do, and what the broken judge cost.
    assert!(err.contains("revcal judge calibrate") && err.contains("stronger judge model"), "{err}");
    let calls = server.requests().len();
    assert!(calls > 0);
    let spent =
        format!("spent {calls} calls · 0 cache hits · {} input / {} output tokens", 80 * calls, 10 * calls);
    assert!(err.contains(&spent), "{spent} in {err}");
}

#[test]
fn the_call_budget_stops_the_run_with_exit_1() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let server = reading_judge_server();
    let output = sandbox.run_with_env(
        &[
            "--review-cmd",
            "echo LGTM",
            "--plants-file",
            &sandbox.plants(),
            "--max-judge-calls",
            "2",
            "--no-judge-cache",
        ],
        &provider_env("anthropic", &server),
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("--max-judge-calls 2"), "{}", stderr(&output));
    assert_eq!(server.requests().len(), 2, "no request past the budget");
    assert_untouched(&sandbox, &before);
}

#[test]
fn a_judge_of_the_reviewers_own_provider_is_refused_unless_allowed() {
    let sandbox = Sandbox::new();
    let server = reading_judge_server();
    let reviewer = sandbox.llm_like_reviewer();
    let env = provider_env("anthropic", &server);
    let base = ["--review-cmd", reviewer.as_str(), "--plants-file", &sandbox.plants(), "--min-recall", "0"];
    let mut args = base.to_vec();
    args.extend(["--review-provider", "anthropic"]);
    let output = sandbox.run_with_env(&args, &env);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("--allow-same-provider"), "{}", stderr(&output));
    assert!(server.requests().is_empty(), "refused before any call");
    args.push("--allow-same-provider");
    assert_eq!(sandbox.run_with_env(&args, &env).status.code(), Some(0));
    let mut other = base.to_vec();
    other.extend(["--review-provider", "openai"]);
    assert_eq!(sandbox.run_with_env(&other, &env).status.code(), Some(0));
}

#[test]
fn a_chosen_provider_without_its_key_exits_1_before_the_reviewer_runs() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let marker = sandbox.path("reviewed");
    let reviewer = format!("touch {}", marker.display());
    let output = sandbox.run(&[
        "--review-cmd",
        &reviewer,
        "--plants-file",
        &sandbox.plants(),
        "--judge-provider",
        "gemini",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("GEMINI_API_KEY"), "{}", stderr(&output));
    assert!(!marker.exists());
    assert_untouched(&sandbox, &before);
}

#[test]
fn a_repro_run_never_calls_a_judge_found_in_the_environment() {
    let sandbox = Sandbox::new();
    let server = reading_judge_server();
    let reviewer = sandbox.test_suite_reviewer(&[(2, "grep -q 'return a + b' src/calc.py")]);
    let output = sandbox.run_with_env(
        &["--review-cmd", &reviewer, "--plants-file", &sandbox.plants(), "--scorer", "repro", "--json"],
        &provider_env("anthropic", &server),
    );
    assert!(output.status.code().is_some_and(|c| c == 0 || c == 2), "{}", stderr(&output));
    assert!(server.requests().is_empty());
    assert!(json(&output).get("judge").is_none());
}

/// A server that judges the controls (the first six questions) like a careful judge, then
/// answers the review's questions with `review`.
fn controls_then(review: fn(&Recorded) -> Reply) -> TestServer {
    TestServer::start(move |index, request| {
        if index < 6 {
            provider_reply(request, defect_sentence_verdict(&prompt_of(request)))
        } else {
            review(request)
        }
    })
}

#[test]
fn bad_answers_about_the_review_are_counted_apart_in_a_report_and_exit_1() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let server = controls_then(|_| {
        Reply::new(
            200,
            crate::http_server::openai_answer(r#""{\"match\": \"yes\", \"reason\": \"r\"}""#, "stop"),
        )
    });
    let reviewer = sandbox.llm_like_reviewer();
    let output = sandbox.run_with_env(
        &[
            "--review-cmd",
            &reviewer,
            "--plants-file",
            &sandbox.plants(),
            "--min-recall",
            "0",
            "--no-judge-cache",
            "--json",
        ],
        &provider_env("openai", &server),
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = json(&output);
    assert_eq!(report["judgeErrors"], 2, "both review questions lacked a verdict");
    assert_eq!(report["caught"], 0, "an error is never a match");
    assert!(stderr(&output).contains("no verdict on 2 question"), "{}", stderr(&output));
    assert!(stderr(&output).contains("not what was asked for"), "the cause is printed: {}", stderr(&output));
    assert_eq!(server.requests().len(), 8, "a bad answer does not stop the other questions");
    assert_untouched(&sandbox, &before);
}

#[test]
fn a_provider_that_fails_during_the_review_is_not_asked_again_and_the_report_is_written() {
    let sandbox = Sandbox::new();
    let server = controls_then(|_| Reply::new(503, r#"{"error": {"message": "unavailable"}}"#));
    let reviewer = sandbox.llm_like_reviewer();
    let junit = sandbox.path("calibration.xml");
    let output = sandbox.run_with_env(
        &[
            "--review-cmd",
            &reviewer,
            "--plants-file",
            &sandbox.plants(),
            "--no-judge-cache",
            "--judge-retries",
            "0",
            "--junit",
            &junit.display().to_string(),
        ],
        &provider_env("gemini", &server),
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(server.requests().len(), 7, "one failed question, then no more calls");
    assert!(stdout(&output).contains("2 questions without a verdict"), "{}", stdout(&output));
    assert!(stderr(&output).contains("503"), "{}", stderr(&output));
    assert!(junit.exists(), "the reports are written");
    assert!(stderr(&output).contains("--judge-retries"), "the hint: {}", stderr(&output));
}

// ---- a hostile reviewer, a second run, a broken journal ------------------------------------

#[test]
fn two_runs_in_one_repository_at_once_each_review_in_their_own_checkouts() {
    // Nothing is planted in the repository, so nothing needs a lock: a second run (and
    // --recover) while the first one reviews is fine, and neither sees the other's plants.
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let (first, started) = start_hanging_review(&sandbox, &[]);
    let seen = sandbox.path("second.py");
    let reviewer = format!("cp src/calc.py {}; echo '[]'", seen.display());
    let second = sandbox.run(&[
        "--review-cmd",
        &reviewer,
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--json",
    ]);
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    assert_eq!(json(&second)["total"], 3);
    let first_checkout = std::fs::read_to_string(started.with_extension("cwd")).unwrap();
    assert!(!stderr(&second).contains(first_checkout.trim()), "each run has its own checkouts");
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap(),
        CALC.replace("a + b", "a - b").replace("age >= 18", "age > 18").replace("items[0]", "items[1]"),
        "each plant once: the first run's plants are not in the second's checkout"
    );
    let recover = sandbox.run(&["--recover"]);
    assert_eq!(recover.status.code(), Some(0), "{}", stderr(&recover));
    signal(first.id(), libc::SIGTERM);
    let output = first.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(128 + libc::SIGTERM), "{}", stderr(&output));
    assert_untouched(&sandbox, &before);
}

#[test]
fn targets_outside_the_tree_through_a_symlink_or_untracked_are_refused() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo();
    // Outside the work tree: a file next to it and a directory a committed link points to.
    std::fs::write(sandbox.path("outside.py"), CALC).unwrap();
    std::fs::create_dir_all(sandbox.path("ext")).unwrap();
    std::fs::write(sandbox.path("ext/mod.py"), CALC).unwrap();
    std::os::unix::fs::symlink("../ext", repo.join("lib")).unwrap();
    std::fs::write(repo.join("README.md"), "calc, linked\n").unwrap();
    git(&repo, &["add", "lib", "README.md"]);
    git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "link"]);
    // Untracked (and never written by calibration).
    std::fs::write(repo.join("src/new.py"), CALC).unwrap();
    let before = snapshot(&repo);
    let outside = sandbox.path("outside.py").display().to_string();
    for (files, reason) in [
        ("../outside.py", "leaves the repository"),
        (outside.as_str(), "absolute"),
        ("lib/mod.py", "symbolic link"),
        ("src/new.py", "not tracked"),
    ] {
        let output = sandbox.run(&[
            "--review-cmd",
            "echo '[]'",
            "--files",
            files,
            "--plants",
            "2",
            "--min-plants",
            "1",
            "--scorer",
            "string",
        ]);
        assert_eq!(output.status.code(), Some(1), "{files}: {}", stderr(&output));
        assert!(stderr(&output).contains(reason), "{files}: {}", stderr(&output));
    }
    // The same rule for a plants file.
    std::fs::write(
        sandbox.path("linked.yaml"),
        "- file: lib/mod.py\n  line: 2\n  original: \"return a + b\"\n  mutated: \"return a - b\"\n",
    )
    .unwrap();
    let linked = sandbox.path("linked.yaml").display().to_string();
    let output = sandbox.run(&[
        "--review-cmd",
        "echo '[]'",
        "--plants-file",
        &linked,
        "--min-plants",
        "1",
        "--scorer",
        "string",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("symbolic link"), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(sandbox.path("outside.py")).unwrap(), CALC);
    assert_eq!(std::fs::read_to_string(sandbox.path("ext/mod.py")).unwrap(), CALC);
    assert_eq!(snapshot(&repo), before);
    assert!(!repo.join(".git/revcal-calibrate-journal").exists());
}

#[test]
fn a_planted_file_replaced_by_a_hard_link_in_the_checkout_is_replaced_for_the_next_trial() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let seen = sandbox.path("seen");
    // Each trial records what it was given, then links another file in the plant's place.
    let reviewer = sandbox.script(
        "linker.sh",
        &format!(
            "cat src/calc.py >> {}; rm src/calc.py; ln README.md src/calc.py; echo '[]'",
            seen.display()
        ),
    );
    let output = sandbox.run(&[
        "--review-cmd",
        &reviewer,
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--trials",
        "2",
        "--jobs",
        "1",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let planted =
        CALC.replace("a + b", "a - b").replace("age >= 18", "age > 18").replace("items[0]", "items[1]");
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap(),
        format!("{planted}{planted}"),
        "both trials saw the plants"
    );
    assert_eq!(std::fs::read_to_string(sandbox.repo().join("README.md")).unwrap(), "calc\n");
    assert_untouched(&sandbox, &before);
}

/// Leaves in the sandbox's repository what an earlier release left when killed during a
/// review: the plant in src/calc.py and its restore journal (format 2) under `.git/`, owned
/// by `pid`.
fn journal_of_an_earlier_release(sandbox: &Sandbox, pid: u32) -> PathBuf {
    let repo = sandbox.repo();
    let journal = repo.join(".git/revcal-calibrate-journal");
    std::fs::create_dir_all(&journal).unwrap();
    std::fs::write(journal.join("owner.json"), format!("{{\"pid\": {pid}, \"start_time\": 1}}")).unwrap();
    std::fs::write(journal.join("0.orig"), CALC).unwrap();
    use sha2_free::hex_sha256;
    let manifest = serde_json::json!({
        "version": 2,
        "work_tree": repo,
        "pid": pid,
        "files": [{"path": "src/calc.py", "mode": 0o100640, "blob": "0.orig", "len": CALC.len(), "sha256": hex_sha256(CALC.as_bytes())}],
    });
    std::fs::write(journal.join("journal.json"), manifest.to_string()).unwrap();
    std::fs::write(repo.join("src/calc.py"), CALC.replace("a + b", "a - b")).unwrap();
    journal
}

/// SHA-256 without a dependency: `sha256sum`, as a user would check a blob.
mod sha2_free {
    pub(super) fn hex_sha256(bytes: &[u8]) -> String {
        use std::io::Write;
        let mut child = std::process::Command::new("sha256sum")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(bytes).unwrap();
        let output = child.wait_with_output().unwrap();
        String::from_utf8(output.stdout).unwrap().split_whitespace().next().unwrap().to_owned()
    }
}

#[test]
fn recover_puts_back_what_an_earlier_release_left_and_refuses_a_blob_whose_checksum_does_not_match() {
    let sandbox = Sandbox::new();
    let mut dead = Command::new("true").spawn().unwrap();
    dead.wait().unwrap();
    let journal = journal_of_an_earlier_release(&sandbox, dead.id());
    let blob = journal.join("0.orig");
    // Same length, one byte changed: `a + b` becomes `a * b`.
    let tampered = CALC.replace("a + b", "a * b");
    std::fs::write(&blob, &tampered).unwrap();
    let refused = sandbox.run(&["--recover"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("0.orig") && stderr(&refused).contains("src/calc.py"),
        "{}",
        stderr(&refused)
    );
    assert!(
        std::fs::read_to_string(sandbox.repo().join("src/calc.py")).unwrap().contains("return a - b"),
        "nothing was written from a journal that failed its check"
    );
    // A calibration in the meantime reads the commit, not the planted tree, and says so.
    let meanwhile =
        sandbox.run(&["--review-cmd", "echo LGTM", "--plants-file", &sandbox.plants(), "--scorer", "repro"]);
    assert_eq!(meanwhile.status.code(), Some(2), "{}", stderr(&meanwhile));
    assert!(stderr(&meanwhile).contains("--recover"), "{}", stderr(&meanwhile));

    std::fs::write(&blob, CALC).unwrap();
    let recovered = sandbox.run(&["--recover"]);
    assert_eq!(recovered.status.code(), Some(0), "{}", stderr(&recovered));
    assert!(stderr(&recovered).contains("restored src/calc.py"), "{}", stderr(&recovered));
    assert_eq!(std::fs::read_to_string(sandbox.repo().join("src/calc.py")).unwrap(), CALC);
    let mode = std::fs::metadata(sandbox.repo().join("src/calc.py")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640, "the journalled mode is back");
    assert!(!journal.exists());
    let again = sandbox.run(&["--recover"]);
    assert_eq!(again.status.code(), Some(0), "nothing to restore is success too");
    assert!(stderr(&again).contains("nothing to recover"));

    // A journal whose earlier-release run is still alive is not touched.
    let mut alive = Command::new("sleep").arg("30").spawn().unwrap();
    let journal = journal_of_an_earlier_release(&sandbox, alive.id());
    std::fs::write(journal.join("owner.json"), format!("{{\"pid\": {}, \"start_time\": null}}", alive.id()))
        .unwrap();
    let busy = sandbox.run(&["--recover"]);
    alive.kill().unwrap();
    alive.wait().unwrap();
    assert_eq!(busy.status.code(), Some(1), "{}", stderr(&busy));
    assert!(stderr(&busy).contains(&alive.id().to_string()), "{}", stderr(&busy));
}

#[test]
fn a_run_that_cannot_write_its_checkout_exits_1_and_leaves_nothing_behind() {
    use std::os::unix::process::CommandExt;
    let sandbox = Sandbox::new();
    let repo = sandbox.repo();
    // A target larger than the file size limit below, so that its copy in a checkout cannot
    // be written (the disk is "full" for this process: setrlimit(2), RLIMIT_FSIZE).
    let padded = format!("{CALC}{}", "# padding\n".repeat(600));
    std::fs::write(repo.join("src/calc.py"), &padded).unwrap();
    git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "padded"]);
    std::fs::write(
        sandbox.path("plain.yaml"),
        "- file: src/calc.py\n  line: 2\n  original: \"return a + b\"\n  mutated: \"return a - b\"\n",
    )
    .unwrap();
    let plain = sandbox.path("plain.yaml").display().to_string();
    let args =
        ["--review-cmd", "echo '[]'", "--plants-file", &plain, "--min-plants", "1", "--scorer", "string"];
    let before = snapshot(&repo);
    let mut command = sandbox.command(&args);
    // SAFETY: setrlimit is async-signal-safe; it only lowers this child's own limit.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 4096, rlim_max: 4096 };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let full = command.output().unwrap();
    assert_eq!(full.status.code(), Some(1), "{}", stderr(&full));
    assert!(
        stderr(&full).contains("src/calc.py") && stderr(&full).contains("File too large"),
        "{}",
        stderr(&full)
    );
    assert_untouched(&sandbox, &before);
    let next = sandbox.run(&args);
    assert_eq!(next.status.code(), Some(2), "{}", stderr(&next));
    assert_untouched(&sandbox, &before);
}

#[test]
fn hostile_reviewers_cannot_reach_the_repository_or_make_revcal_run_their_code() {
    // Each reviewer first runs git in its checkout (a second trial in the same slot would
    // trigger whatever the first trial left in `.git`), then does its damage.
    let probe = "git status >/dev/null 2>&1; git -c advice.detachedHead=false checkout -q --detach HEAD >/dev/null 2>&1;";
    let marker_attack = "MARKER=\"$1\"\n\
        printf '#!/bin/sh\\ntouch %s\\n' \"$MARKER\" > evil.sh; chmod +x evil.sh\n\
        git config core.fsmonitor \"$PWD/evil.sh\"\n\
        mkdir -p .git/hooks; cp evil.sh .git/hooks/post-checkout; cp evil.sh .git/hooks/pre-commit\n\
        git config core.hooksPath .git/hooks\n\
        printf '* filter=evil\\n' > .gitattributes\n\
        git config filter.evil.clean \"$PWD/evil.sh\"; git config filter.evil.smudge \"$PWD/evil.sh\"\n\
        printf '[core]\\n\\tfsmonitor = %s\\n' \"$PWD/evil.sh\" > extra.cfg; git config include.path \"$PWD/extra.cfg\"";
    let cases: [(&str, String); 10] = [
        ("rewrites every tracked file", "for f in $(git ls-files); do echo rewritten > \"$f\"; done".into()),
        ("stashes with untracked files", "echo new > untracked.txt; git stash push -q -u".into()),
        ("stashes everything", "echo new > ignored.log; git stash push -q -a".into()),
        ("commits", "git -c user.name=r -c user.email=r@r commit -qam plants".into()),
        ("resets to the parent", "git reset -q --hard HEAD~1".into()),
        ("removes everything", "rm -rf ./* ./.[!.]*".into()),
        ("locks a directory", "chmod 000 src".into()),
        (
            "leaves a writer behind",
            "setsid sh -c 'while :; do date >> src/calc.py; date > \"$0\"; sleep 0.02; done' \"$2\" </dev/null >/dev/null 2>&1 &".into(),
        ),
        ("plants git configuration that runs its code", marker_attack.into()),
        ("writes into git's metadata", "echo garbage > .git/index; echo ref: refs/heads/nowhere > .git/HEAD; rm -rf .git/objects".into()),
    ];
    for (name, attack) in cases {
        let sandbox = Sandbox::new();
        let repo = sandbox.repo();
        // A repository with history, an executable, ignored and untracked files and a stash.
        std::fs::write(repo.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(repo.join("run.sh"), "#!/bin/sh\necho run\n").unwrap();
        std::fs::set_permissions(repo.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        git(&repo, &["add", "."]);
        git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "more"]);
        std::fs::write(repo.join("README.md"), "stashed work\n").unwrap();
        git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "stash", "-q"]);
        std::fs::write(repo.join("debug.log"), "ignored\n").unwrap();
        std::fs::write(repo.join("notes.txt"), "untracked\n").unwrap();
        std::fs::set_permissions(repo.join("README.md"), std::fs::Permissions::from_mode(0o444)).unwrap();
        let before = snapshot(&repo);
        let marker = sandbox.path("marker");
        let alive = sandbox.path("alive");
        let reviewer = sandbox.script("hostile.sh", &format!("{probe}\n{attack}\necho '[]'"));
        let command = format!("{reviewer} {} {}", marker.display(), alive.display());
        let output = sandbox.run(&[
            "--review-cmd",
            &command,
            "--plants-file",
            &sandbox.plants(),
            "--scorer",
            "repro",
            "--trials",
            "2",
            "--jobs",
            "1",
            "--json",
        ]);
        assert_eq!(output.status.code(), Some(2), "{name}: {}", stderr(&output));
        assert_eq!(json(&output)["trials"].as_array().map(Vec::len), Some(2), "{name}");
        assert!(!marker.exists(), "{name}: code the reviewer planted in git's configuration ran");
        if alive.exists() {
            // The writer was ended with its review: it writes no more.
            let stamp = std::fs::metadata(&alive).unwrap().modified().unwrap();
            std::thread::sleep(Duration::from_millis(300));
            assert_eq!(
                std::fs::metadata(&alive).unwrap().modified().unwrap(),
                stamp,
                "{name}: still writing"
            );
        }
        assert_untouched(&sandbox, &before);
    }
}

#[test]
fn a_descendant_that_left_the_process_group_is_ended_with_its_review() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let copy = sandbox.path("planted.py");
    let late = sandbox.path("late");
    let reviewer = sandbox.script(
        "escaper.sh",
        &format!(
            "cp src/calc.py {copy}\nsetsid sh -c 'sleep 0.5; touch {late}; cp src/calc.py {repo}/src/calc.py' </dev/null >/dev/null 2>&1 &\nsleep 0.2\necho '[]'",
            copy = copy.display(),
            late = late.display(),
            repo = sandbox.repo().display(),
        ),
    );
    let output =
        sandbox.run(&["--review-cmd", &reviewer, "--plants-file", &sandbox.plants(), "--scorer", "repro"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(std::fs::read_to_string(&copy).unwrap().contains("return a - b"), "the reviewer saw the plants");
    std::thread::sleep(Duration::from_millis(1000));
    assert!(!late.exists(), "the descendant was ended before it woke up");
    assert_untouched(&sandbox, &before);
}

#[test]
fn every_signal_that_would_end_revcal_stops_the_reviews_and_removes_the_checkouts() {
    for (sig, name) in [
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGXCPU, "SIGXCPU"),
        (libc::SIGRTMIN() + 3, "SIGRTMIN+3"),
    ] {
        let sandbox = Sandbox::new();
        let before = snapshot(&sandbox.repo());
        let (child, started) = start_hanging_review(&sandbox, &["--no-checkout-cache"]);
        signal(child.id(), sig);
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(128 + sig), "{name}: {:?} {}", output.status, stderr(&output));
        assert!(stderr(&output).contains(name), "{name}: {}", stderr(&output));
        assert!(reviewer_group_is_gone(&started), "{name}: the reviewer's process group was killed");
        assert_untouched(&sandbox, &before);
    }
    // A broken pipe is no reason to stop (writes fail with EPIPE instead): the run goes on
    // until something does stop it.
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let (child, _started) = start_hanging_review(&sandbox, &[]);
    signal(child.id(), libc::SIGPIPE);
    std::thread::sleep(Duration::from_millis(200));
    signal(child.id(), libc::SIGTERM);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(128 + libc::SIGTERM), "{:?} {}", output.status, stderr(&output));
    assert_untouched(&sandbox, &before);
}

#[test]
fn a_runaway_plant_is_run_twice_named_and_excluded_with_its_reason_and_a_slow_first_run_is_not_one() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    // The plant on line 2 makes its witness loop forever, the one on line 6 makes it eat
    // memory; both pass quickly on the original. The one on line 10 hangs only the first
    // time it runs with the plant (a loaded machine, say): run again, it fails as a witness
    // should, and the plant counts. --repro-timeout 3 keeps the test short: the limit is
    // otherwise at least 20 s.
    let once = sandbox.path("tmp/hung-once");
    let plants = format!(
        r#"- file: src/calc.py
  line: 2
  original: "return a + b"
  mutated: "return a - b"
  witness: "grep -q 'return a + b' src/calc.py || sleep 60"
- file: src/calc.py
  line: 6
  original: ">="
  mutated: ">"
  witness: "grep -q 'age >= 18' src/calc.py || python3 -c 'import time\nl = []\nwhile True: l.append(b\"x\" * (32 << 20)); time.sleep(0.005)'"
- file: src/calc.py
  line: 10
  original: "items[0]"
  mutated: "items[1]"
  witness: "grep -q 'items\\[0\\]' src/calc.py || {{ [ -e {once} ] || {{ touch {once}; sleep 60; }}; exit 1; }}"
"#,
        once = once.display()
    );
    std::fs::write(sandbox.path("runaway.yaml"), plants).unwrap();
    let file = sandbox.path("runaway.yaml").display().to_string();
    let output = sandbox.run(&[
        "--review-cmd",
        "echo '[]'",
        "--plants-file",
        &file,
        "--scorer",
        "repro",
        "--min-plants",
        "1",
        "--repro-timeout",
        "3",
        "--repro-memory",
        "256",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let report = json(&output);
    assert!(once.exists(), "the third witness hung once");
    assert_eq!(report["total"], 1, "runaway plants are not counted: {report}");
    assert_eq!(report["runawayExcluded"], 2);
    assert_eq!(report["equivalentExcluded"], 0);
    let plants = report["plants"].as_array().unwrap();
    assert_eq!(plants[0]["status"], "excluded");
    assert_eq!(
        plants[0]["excludedReason"],
        "runaway: its witness ran past its time limit with the plant applied, twice"
    );
    assert!(plants[1]["excludedReason"].as_str().unwrap().contains("memory"), "{}", plants[1]);
    assert_eq!(plants[2]["status"], "missed", "{}", plants[2]);
    assert!(stderr(&output).contains("2 runaway plants excluded"), "{}", stderr(&output));

    // Too few plants left: the message counts runaways apart from equivalent plants.
    let output = sandbox.run(&[
        "--review-cmd",
        "echo '[]'",
        "--plants-file",
        &file,
        "--scorer",
        "repro",
        "--repro-timeout",
        "3",
        "--repro-memory",
        "256",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output)
            .contains("fewer valid plants (1, after excluding 2 as runaways) than the minimum (3)"),
        "{}",
        stderr(&output)
    );
    assert_untouched(&sandbox, &before);
}

#[test]
fn a_repro_that_hangs_with_the_plant_catches_it_by_timeout_counted_apart() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    // The reviewer's test for line 2 hangs when `a + b` is gone (the loop it tests never
    // ends); the one for line 6 fails fast.
    let reviewer = sandbox.script(
        "hanging-tests.sh",
        r#"cat <<'JSON'
{"findings": [
  {"file": "src/calc.py", "line": 2, "message": "add loops", "repro": "grep -q 'return a + b' src/calc.py || sleep 60"},
  {"file": "src/calc.py", "line": 6, "message": "boundary", "repro": "grep -q 'age >= 18' src/calc.py"}
]}
JSON"#,
    );
    let output = sandbox.run(&[
        "--review-cmd",
        &reviewer,
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--repro-timeout",
        "2",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = json(&output);
    assert_eq!((report["caught"].as_u64(), report["total"].as_u64()), (Some(2), Some(3)), "{report}");
    assert_eq!(report["caughtByTimeout"], 1, "{report}");
    assert_eq!(report["plants"][0]["caughtByTimeout"], 1, "{}", report["plants"][0]);
    assert!(report["plants"][1].get("caughtByTimeout").is_none(), "{}", report["plants"][1]);
    assert!(stderr(&output).contains("1 by timeout"), "{}", stderr(&output));
    assert_untouched(&sandbox, &before);
}

/// A reviewer whose finding's repro command writes to the user's repository and connects to
/// a local server (a prompt-injected reviewer would do worse) before doing its check.
fn hostile_repro_reviewer(sandbox: &Sandbox, port: u16) -> String {
    let repro = sandbox.script(
        "repro.sh",
        &format!(
            "echo hacked >> {readme}\npython3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=1)' 2>/dev/null\ngrep -q 'return a + b' src/calc.py",
            readme = sandbox.repo().join("README.md").display()
        ),
    );
    sandbox.script(
        "hostile.sh",
        &format!("echo '{{\"findings\": [{{\"file\": \"src/calc.py\", \"line\": 2, \"message\": \"subtracts\", \"repro\": \"{repro}\"}}]}}'"),
    )
}

#[test]
fn repro_commands_run_sandboxed_unless_explicitly_unsandboxed() {
    use std::net::TcpListener;
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    // The temporary directory (where the scratch copy goes) is apart from the repository.
    let tmp = sandbox.path("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let reviewer = hostile_repro_reviewer(&sandbox, port);
    let args = ["--review-cmd", reviewer.as_str(), "--plants-file", "PLANTS", "--scorer", "repro", "--json"];
    let plants = sandbox.plants();
    let args: Vec<&str> = args.iter().map(|a| if *a == "PLANTS" { plants.as_str() } else { a }).collect();
    let output = sandbox.command(&args).env("TMPDIR", &tmp).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let report = json(&output);
    assert_eq!(report["caught"], 1, "the check itself still runs: {report}");
    assert_eq!(report["reproSandbox"], "landlock", "{report}");
    assert!(listener.accept().is_err(), "no connection left the sandbox");
    assert_untouched(&sandbox, &before);

    // Opted out: the same commands run as the user, and the report says so.
    let mut unsandboxed = args.clone();
    unsandboxed.push("--unsandboxed-repro");
    let output = sandbox.command(&unsandboxed).env("TMPDIR", &tmp).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(json(&output)["reproSandbox"], "off", "{}", stdout(&output));
    assert!(std::fs::read_to_string(sandbox.repo().join("README.md")).unwrap().contains("hacked"));
    assert!(listener.accept().is_ok(), "unsandboxed, the repro reached the server");
    assert_eq!(run_dirs(&sandbox), Vec::<PathBuf>::new());
}

#[test]
fn a_directory_the_reviewer_made_read_only_is_reset_for_the_next_trial() {
    // Resetting a checkout writes into its directories, which needs their write permission.
    // (Run as root, as CI is, the kernel grants it anyway: this test bites for other users.)
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let seen = sandbox.path("seen");
    let reviewer = sandbox.script(
        "chmod.sh",
        &format!("cat src/calc.py >> {}; echo x > src/calc.py; chmod a-w src; echo '[]'", seen.display()),
    );
    let output = sandbox.run(&[
        "--review-cmd",
        &reviewer,
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--trials",
        "2",
        "--jobs",
        "1",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let planted =
        CALC.replace("a + b", "a - b").replace("age >= 18", "age > 18").replace("items[0]", "items[1]");
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap(),
        format!("{planted}{planted}"),
        "the second trial saw the plants"
    );
    let mode = std::fs::metadata(sandbox.repo().join("src")).unwrap().permissions().mode();
    assert_ne!(mode & 0o200, 0, "the repository's directory keeps its mode");
    assert_untouched(&sandbox, &before);
}

#[test]
fn a_linter_exit_code_is_a_crash_naming_the_flag_until_ok_exit_codes_accepts_it() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    // pylint's exit code is a bit mask: 4 warning | 8 refactor | 16 convention.
    let reviewer = sandbox.script("linter.sh", "echo '{\"findings\": []}'; exit 28");
    let plants = sandbox.plants();
    let base = ["--review-cmd", reviewer.as_str(), "--scorer", "repro", "--plants-file", plants.as_str()];

    let crashed = sandbox.run(&base);
    assert_eq!(crashed.status.code(), Some(1), "{}", stderr(&crashed));
    let message = stderr(&crashed);
    assert!(message.contains("exit code 28; the exit codes accepted from it are 0 or 2"), "{message}");
    assert!(message.contains("--ok-exit-codes 0,28"), "the hint names the flag: {message}");
    assert_untouched(&sandbox, &before);

    for accepted in ["0-31", "0,28", "0, 4-28"] {
        let scored = sandbox.run(&[&base[..], &["--ok-exit-codes", accepted, "--json"]].concat());
        assert_eq!(
            scored.status.code(),
            Some(2),
            "{accepted}: a report, failing the gate: {}",
            stderr(&scored)
        );
        assert_eq!(json(&scored)["reviewExitCode"], 28, "{accepted}");
        assert_untouched(&sandbox, &before);
    }

    for bad in ["1-0", "256", "x", "0,"] {
        let refused = sandbox.run(&[&base[..], &["--ok-exit-codes", bad]].concat());
        assert_eq!(refused.status.code(), Some(1), "{bad}: a usage error: {}", stderr(&refused));
        assert!(stderr(&refused).contains("--ok-exit-codes"), "{bad}: {}", stderr(&refused));
    }
}

#[test]
fn a_reviewer_command_that_cannot_run_is_named_as_such_and_never_advised_into_ok_exit_codes() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let plants = sandbox.plants();
    let not_executable = sandbox.repo().parent().unwrap().join("review-not-executable.sh");
    std::fs::write(&not_executable, "#!/bin/sh\necho '[]'\n").unwrap();
    let not_executable = not_executable.display().to_string();
    for (command, code, says) in
        [("ruff-typo check .", 127, "was not found"), (not_executable.as_str(), 126, "is not executable")]
    {
        // Even listed in --ok-exit-codes, the shell's "could not run" is no review.
        for extra in [&[][..], &["--ok-exit-codes", "0,126,127"]] {
            let base = ["--review-cmd", command, "--scorer", "repro", "--plants-file", plants.as_str()];
            let output = sandbox.run(&[&base[..], extra].concat());
            let message = stderr(&output);
            assert_eq!(output.status.code(), Some(1), "{command}: {message}");
            assert!(message.contains("could not run") && message.contains(says), "{command}: {message}");
            assert!(message.contains(&format!("exit code {code}")), "{command}: {message}");
            assert!(!message.contains("accept it with --ok-exit-codes"), "{command}: {message}");
            assert!(message.contains("check the command"), "{command}: {message}");
        }
    }
    assert_untouched(&sandbox, &before);
}

#[test]
fn ruff_output_as_it_comes_locates_its_finding_and_unlocated_findings_are_named() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    // ruff's JSON, as `ruff check --output-format json` prints it, exiting 1.
    let ruff = r#"[{"cell": null, "code": "SIM300", "end_location": {"column": 22, "row": 6}, "filename": "$PWD/src/calc.py", "fix": null, "location": {"column": 12, "row": 6}, "message": "Yoda condition detected", "noqa_row": 6, "url": "https://docs.astral.sh/ruff/rules/yoda-conditions"}]"#;
    let reviewer = sandbox.script("ruff.sh", &format!("cat <<EOF\n{ruff}\nEOF\nexit 1"));
    let plants = sandbox.plants();
    let located = sandbox.run(&[
        "--review-cmd",
        &reviewer,
        "--ok-exit-codes",
        "0,1",
        "--scorer",
        "string",
        "--plants-file",
        &plants,
        "--json",
    ]);
    let report = json(&located);
    assert_eq!(report["caught"], 1, "{}", stderr(&located));
    assert_eq!(report["truePositives"], 1);
    assert!(!stderr(&located).contains("could not locate"), "{}", stderr(&located));

    let unlocated = sandbox.script("vague.sh", "echo '[{\"message\": \"something is off\"}]'");
    let vague = sandbox.run(&["--review-cmd", &unlocated, "--scorer", "string", "--plants-file", &plants]);
    assert_eq!(vague.status.code(), Some(2));
    assert!(
        stderr(&vague).contains("could not locate any of the 1 findings read as findings"),
        "{}",
        stderr(&vague)
    );
    assert_untouched(&sandbox, &before);
}

#[test]
fn a_control_that_did_not_run_reads_not_run_and_is_null_in_json() {
    let sandbox = Sandbox::new();
    // No witness anywhere: under the repro scorer the oracle has no repro to run.
    let plants: String = PLANTS
        .lines()
        .filter(|line| !line.trim_start().starts_with("witness:"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(sandbox.path("plants.yaml"), plants).unwrap();
    let output = sandbox.run(&[
        "--review-cmd",
        "echo LGTM",
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let oracle = &json(&output)["controls"]["oracle"];
    assert_eq!(oracle["recall"], Value::Null, "{oracle}");
    assert_eq!(oracle["passed"], Value::Null, "{oracle}");
    assert_eq!(oracle["notRun"], "no plant has a witness to serve as the oracle's repro");
    let summary = stderr(&output);
    assert!(summary.contains("oracle not run (no plant has a witness"), "{summary}");
    assert!(!summary.contains("oracle 0.00"), "{summary}");
    assert_eq!(json(&output)["controls"]["echo"]["passed"], true);
}

#[test]
fn log_lines_carry_colour_only_when_colour_is_asked_for() {
    let sandbox = Sandbox::new();
    let vague = sandbox.script("vague.sh", "echo '[{\"message\": \"something is off\"}]'");
    let plants = sandbox.plants();
    let args = ["--review-cmd", vague.as_str(), "--scorer", "string", "--plants-file", plants.as_str()];
    let run = |extra: &[&str], env: Option<(&str, &str)>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_revcal"));
        command.args(extra).arg("calibrate").args(args).current_dir(sandbox.repo()).env_remove("NO_COLOR");
        if let Some((key, value)) = env {
            command.env(key, value);
        }
        let output = command.output().unwrap();
        assert!(
            stderr(&output).contains("could not locate any"),
            "the warning is logged: {}",
            stderr(&output)
        );
        stderr(&output)
    };
    assert!(!run(&[], None).contains('\x1b'), "stderr is a pipe: no escape codes");
    assert!(!run(&["--color", "never"], None).contains('\x1b'));
    assert!(!run(&["--color", "auto"], Some(("NO_COLOR", "1"))).contains('\x1b'));
    assert!(run(&["--color", "always"], None).contains("\x1b["), "asked for");
}

#[test]
fn off_a_terminal_each_stage_and_check_is_a_plain_line_unless_quiet() {
    let sandbox = Sandbox::new();
    let reviewer = sandbox.test_suite_reviewer(&[(2, "grep -q 'return a + b' src/calc.py")]);
    let plants = sandbox.plants();
    let args = ["--review-cmd", reviewer.as_str(), "--scorer", "repro", "--plants-file", plants.as_str()];
    let output = sandbox.run(&args);
    let log = stderr(&output);
    for line in [
        "s checking witnesses (3)",
        "s checking witnesses 3/3",
        "s running the reviews (1)",
        // A count within a second of the stage's line waits for the next; the last is always shown.
        "s reviews: 0 running, 1/1 finished",
        "s scoring the findings 1/1",
    ] {
        assert!(log.lines().any(|l| l.starts_with("revcal: ") && l.ends_with(line)), "{line:?} in:\n{log}");
    }
    assert!(!log.contains('\r') && !log.contains('\x1b'), "plain lines: {log:?}");
    let quiet = sandbox.run(&[&args[..], &["--quiet"]].concat());
    assert!(!stderr(&quiet).contains("revcal: "), "{}", stderr(&quiet));
    assert_eq!(quiet.status.code(), output.status.code());
}

#[test]
fn messages_say_what_is_wrong_once_and_json_stays_json() {
    let sandbox = Sandbox::new();
    for (flag, value) in [("--plants", "0"), ("--trials", "0")] {
        let output = sandbox.run(&["--review-cmd", "true", flag, value]);
        assert_eq!(output.status.code(), Some(1));
        let message = stderr(&output);
        assert!(message.contains(&format!("invalid value '0' for '{flag}")), "{message}");
        assert!(
            message.contains("must be at least 1") && !message.contains("18446744073709551615"),
            "{message}"
        );
    }
    // A missing target is named as missing.
    let missing_target =
        sandbox.run(&["--review-cmd", "true", "--scorer", "repro", "--files", "src/gone.py"]);
    assert_eq!(missing_target.status.code(), Some(1));
    assert!(
        stderr(&missing_target).contains("src/gone.py cannot be planted in: it is not tracked in the commit"),
        "{}",
        stderr(&missing_target)
    );
    // A missing plants file: said once, and with --json the error is the JSON on stdout.
    let missing =
        sandbox.run(&["--review-cmd", "true", "--plants-file", "nope.yaml", "--scorer", "repro", "--json"]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(stderr(&missing).matches("nope.yaml").count(), 1, "{}", stderr(&missing));
    let error = json(&missing);
    assert!(error["error"].as_str().unwrap().contains("cannot read plants file nope.yaml"), "{error}");

    // The plant list reads like the code: by file and line, whatever order the plants came in.
    let reversed: Vec<&str> = PLANTS.split("\n- ").collect();
    let reversed = format!(
        "- {}\n",
        reversed.iter().rev().map(|p| p.trim_start_matches("- ").trim_end()).collect::<Vec<_>>().join("\n- ")
    );
    assert!(reversed.starts_with("- file: src/calc.py\n  line: 10\n"), "{reversed}");
    std::fs::write(sandbox.path("reversed.yaml"), reversed).unwrap();
    let reversed_plants = sandbox.path("reversed.yaml").display().to_string();
    let report = sandbox.run(&[
        "--review-cmd",
        "true",
        "--plants-file",
        &reversed_plants,
        "--scorer",
        "repro",
        "--json",
    ]);
    let lines: Vec<u64> =
        json(&report)["plants"].as_array().unwrap().iter().map(|p| p["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [2, 6, 10], "{}", stderr(&report));
}

/// A Rust crate in a fresh repository: `add` on integers and `greet` appending to a String.
fn rust_repo() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let repo = root.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(
        repo.join("Cargo.toml"),
        "[package]\nname = \"plantme\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("src/lib.rs"),
        "pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n\npub fn greet(name: &str) -> String {\n    let mut s = String::from(\"hi \");\n    s += name;\n    s\n}\n\npub fn is_adult(age: u32) -> bool {\n    age >= 18\n}\n",
    )
    .unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "crate"]);
    let plants = r#"- {file: src/lib.rs, line: 2, original: "a + b", mutated: "a - b", category: arithmetic}
- {file: src/lib.rs, line: 7, original: "s += name", mutated: "s -= name", category: arithmetic}
- {file: src/lib.rs, line: 12, original: "age >= 18", mutated: "age > 18", category: off-by-one}
- {file: src/lib.rs, line: 6, original: "let mut s", mutated: "let s", category: mutability}
"#;
    std::fs::write(root.path().join("plants.yaml"), plants).unwrap();
    (root, repo)
}

#[test]
fn plants_that_break_the_build_are_excluded_with_the_reason() {
    let (root, repo) = rust_repo();
    let before = snapshot(&repo);
    let plants = root.path().join("plants.yaml").display().to_string();
    let run = |extra: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_revcal"));
        command
            .args(["calibrate", "--review-cmd", "echo LGTM", "--scorer", "string", "--plants-file", &plants])
            .args(["--min-plants", "1", "--json"])
            .args(extra)
            .current_dir(&repo)
            .env_remove("CARGO_TARGET_DIR");
        command.output().unwrap()
    };
    // Cargo.toml at the root: `cargo check --all-targets` by default.
    let checked = run(&[]);
    assert_eq!(checked.status.code(), Some(2), "{}", stderr(&checked));
    let report = json(&checked);
    assert_eq!(report["buildExcluded"], 2, "{report}");
    assert_eq!(report["total"], 2, "the two plants that build are counted");
    let reasons: Vec<&str> =
        report["plants"].as_array().unwrap().iter().filter_map(|p| p["excludedReason"].as_str()).collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons
            .iter()
            .all(|r| r.starts_with("build: `cargo check --all-targets` fails with the plant applied"))
    );
    assert!(stderr(&checked).contains("2 plants breaking the build excluded"), "{}", stderr(&checked));
    assert_untouched_repo(&repo, &before);

    // Turned off: every plant counts.
    let unchecked = run(&["--build-cmd", ""]);
    assert_eq!(json(&unchecked)["total"], 4, "{}", stderr(&unchecked));
    assert_eq!(json(&unchecked)["buildExcluded"], 0);

    // A build that fails before any plant stops the run, naming the command.
    let broken = run(&["--build-cmd", "exit 3"]);
    assert_eq!(broken.status.code(), Some(1));
    assert!(stderr(&broken).contains("the build command `exit 3` fails on the original tree (exit code 3)"));
    assert!(stderr(&broken).contains("--build-cmd ''"), "the hint says how to turn it off");
    assert_untouched_repo(&repo, &before);
}

fn assert_untouched_repo(repo: &Path, before: &Snapshot) {
    assert!(&snapshot(repo) == before, "the repository changed");
}

#[test]
fn the_call_budget_holds_for_a_judge_command_too() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let calls = sandbox.path("calls");
    let judge = sandbox.script(
        "judge.sh",
        &format!("cat >/dev/null; echo x >> {}; echo '{{\"match\": false}}'", calls.display()),
    );
    let output = sandbox.run(&[
        "--review-cmd",
        "echo LGTM",
        "--plants-file",
        &sandbox.plants(),
        "--judge-cmd",
        &judge,
        "--max-judge-calls",
        "2",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("--max-judge-calls 2"), "{}", stderr(&output));
    let made = std::fs::read_to_string(&calls).unwrap_or_default().lines().count();
    assert_eq!(made, 2, "the command ran exactly as often as the budget allows");
    assert_untouched(&sandbox, &before);
}

#[test]
fn a_reviewer_worse_in_one_category_than_its_baseline_fails_naming_it() {
    let root = tempfile::tempdir().unwrap();
    let repo = root.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    let source: String = (0..12).map(|i| format!("def f{i}(a, b):\n    return a + b\n\n\n")).collect();
    std::fs::write(repo.join("src/ops.py"), &source).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "ops"]);
    // Twelve plants: eight "arithmetic", four "off-by-one" (the labels are the plants file's).
    let lines: Vec<u32> = (0..12).map(|i| 2 + 4 * i).collect();
    let plants: String = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let category = if i < 8 { "arithmetic" } else { "off-by-one" };
            format!("- {{file: src/ops.py, line: {line}, original: \"a + b\", mutated: \"a - b\", category: {category}}}\n")
        })
        .collect();
    std::fs::write(root.path().join("plants.yaml"), plants).unwrap();
    let reviewer = |name: &str, lines: &[u32]| {
        let findings: Vec<String> = lines
            .iter()
            .map(|l| format!("{{\"file\": \"src/ops.py\", \"line\": {l}, \"message\": \"sign\"}}"))
            .collect();
        let path = root.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\necho '[{}]'\n", findings.join(", "))).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    };
    let good = reviewer("good.sh", &lines);
    let worse = reviewer("worse.sh", &lines[8..]);
    let plants = root.path().join("plants.yaml").display().to_string();
    let baseline = root.path().join("baseline.json").display().to_string();
    let run = |review: &str, extra: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_revcal"));
        command
            .args(["calibrate", "--review-cmd", review, "--scorer", "string", "--plants-file", &plants])
            // Stand-ins that say the same of every checkout.
            .args(["--min-recall", "0", "--no-preexisting-filter"])
            .args(extra)
            .current_dir(&repo);
        command.output().unwrap()
    };
    let saved = run(&good, &["--save-baseline", &baseline]);
    assert_eq!(saved.status.code(), Some(0), "{}", stderr(&saved));

    let same = run(&good, &["--baseline", &baseline, "--json"]);
    assert_eq!(same.status.code(), Some(0), "the reviewer against itself: {}", stderr(&same));
    let comparison = &json(&same)["baseline"];
    assert_eq!(comparison["test"], "mcnemar", "the same plants are paired");
    assert_eq!(comparison["regression"], false);

    let dropped = run(&worse, &["--baseline", &baseline, "--json"]);
    assert_eq!(dropped.status.code(), Some(2), "{}", stderr(&dropped));
    let comparison = &json(&dropped)["baseline"];
    assert_eq!(comparison["regressed"], serde_json::json!(["arithmetic"]), "{comparison}");
    // Eight plants lost, none gained: 0.5^8, tested at 0.05 / 2 categories.
    let p = comparison["perCategory"]["arithmetic"]["pValue"].as_f64().unwrap();
    assert!((p - 0.5f64.powi(8)).abs() < 1e-12, "{p}");
    assert_eq!(comparison["perCategory"]["off-by-one"]["dropped"], false);
    assert!(stderr(&dropped).contains("REGRESSION in arithmetic"), "{}", stderr(&dropped));

    // Not a report: refused before anything is planted.
    std::fs::write(root.path().join("bad.json"), "{}").unwrap();
    let bad = run(&good, &["--baseline", &root.path().join("bad.json").display().to_string()]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("not a calibration report"), "{}", stderr(&bad));
}

/// `--realistic` plants only the realistic profile's operators, one per line.
#[test]
fn realistic_plants_come_from_the_realistic_profile() {
    let sandbox = Sandbox::new();
    let run = |extra: &[&str]| {
        let output = sandbox.run(
            &[
                &[
                    "--review-cmd",
                    "echo '[]'",
                    "--scorer",
                    "string",
                    "--plants",
                    "20",
                    "--min-plants",
                    "1",
                    "--min-recall",
                    "0",
                    "--json",
                    "--build-cmd",
                    "",
                ][..],
                extra,
            ]
            .concat(),
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        json(&output)
    };
    let operators = |report: &Value| -> Vec<String> {
        report["plants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["operator"].as_str().unwrap().to_owned())
            .collect()
    };
    // The file has mutants of other operators, which the profile leaves out.
    let listed = Command::new(env!("CARGO_BIN_EXE_revcal"))
        .args(["mutate", "src/calc.py", "--json"])
        .current_dir(sandbox.repo())
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|m| !revcal_mutate::REALISTIC_OPERATORS.contains(&m["operator"].as_str().unwrap())),
        "{listed}"
    );
    // Over a few seeds the default profile plants some of them; the realistic one never.
    let default: Vec<String> =
        (0..6).flat_map(|seed| operators(&run(&["--seed", &seed.to_string()]))).collect();
    assert!(
        default.iter().any(|op| !revcal_mutate::REALISTIC_OPERATORS.contains(&op.as_str())),
        "{default:?}"
    );
    for seed in 0..6 {
        let realistic = operators(&run(&["--realistic", "--seed", &seed.to_string()]));
        assert!(
            realistic.iter().all(|op| revcal_mutate::REALISTIC_OPERATORS.contains(&op.as_str())),
            "{realistic:?}"
        );
    }
    let report = run(&["--realistic"]);
    let realistic = operators(&report);
    assert!(!realistic.is_empty());
    assert!(
        realistic.iter().all(|op| revcal_mutate::REALISTIC_OPERATORS.contains(&op.as_str())),
        "{realistic:?}"
    );
    let lines: BTreeMap<u64, usize> =
        report["plants"].as_array().unwrap().iter().fold(BTreeMap::new(), |mut lines, p| {
            *lines.entry(p["line"].as_u64().unwrap()).or_default() += 1;
            lines
        });
    assert!(lines.values().all(|&n| n == 1), "one plant per line: {lines:?}");
}

// ---- scratch checkouts and jobs --------------------------------------------------------------

#[test]
fn the_reviewer_runs_in_its_checkout_with_the_base_and_commit_named_and_no_path_to_the_repository() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo();
    std::fs::write(repo.join("src/calc.py"), format!("{CALC}\n\ndef neg(x):\n    return -x\n")).unwrap();
    git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "neg"]);
    let commit = String::from_utf8(git(&repo, &["rev-parse", "HEAD"]).stdout).unwrap().trim().to_owned();
    let base = String::from_utf8(git(&repo, &["rev-parse", "HEAD^"]).stdout).unwrap().trim().to_owned();
    let before = snapshot(&repo);
    let seen = sandbox.path("env");
    // A script next to the repository, named relative to where revcal starts (the sandbox):
    // found there, although the reviewer runs in a checkout.
    sandbox.script(
        "review.sh",
        &format!(
            "{{ pwd; echo \"REVCAL_REPO=$REVCAL_REPO\"; echo \"$REVCAL_BASE\"; echo \"$REVCAL_COMMIT\"; echo \"$1\"; echo \"$CARGO_TARGET_DIR\"; echo \"GIT_DIR=$GIT_DIR\"; git rev-parse HEAD; git diff --name-only \"$1\"; }} > {}\necho '[]'",
            seen.display()
        ),
    );
    let plants = sandbox.plants();
    let run = |extra: &[(&str, &str)]| {
        let mut command = sandbox.command(&[
            "-C",
            "repo",
            "--review-cmd",
            "./review.sh {base}",
            "--plants-file",
            &plants,
            "--scorer",
            "repro",
        ]);
        command.current_dir(sandbox.root.path());
        // As if revcal were run from a git hook of the user's repository.
        command.env("GIT_DIR", repo.join(".git"));
        for (key, value) in extra {
            command.env(key, value);
        }
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        std::fs::read_to_string(&seen).unwrap()
    };
    let seen_env = run(&[]);
    let lines: Vec<&str> = seen_env.lines().collect();
    let checkout = Path::new(lines[0]);
    assert!(
        checkout.starts_with(sandbox.path("cache/revcal/checkouts")) && checkout.ends_with("slot-1/tree"),
        "a kept checkout in the user's cache directory: {seen_env}"
    );
    assert_eq!(
        lines[1], "REVCAL_REPO=",
        "no path to the user's repository (its files are the unplanted ones)"
    );
    assert_eq!((lines[2], lines[4]), (base.as_str(), base.as_str()), "{seen_env}");
    assert_eq!(
        Path::new(lines[5]),
        checkout.parent().unwrap().join("target"),
        "a cargo target directory per slot"
    );
    assert_eq!(lines[6], "GIT_DIR=", "the user's GIT_DIR does not reach the reviewer");
    assert_eq!(lines[3], lines[7], "REVCAL_COMMIT names HEAD, the commit under review");
    assert_ne!(lines[7], commit, "made for the review: the original commit is not in the checkout");
    assert_eq!(lines[8..], ["src/calc.py"], "and sees the commit's change and the plants against the base");
    // A target directory the user chose is not the reviewer's: planted code is built per slot.
    let chosen = sandbox.path("target");
    let seen_env = run(&[("CARGO_TARGET_DIR", chosen.to_str().unwrap())]);
    let lines: Vec<&str> = seen_env.lines().collect();
    assert_eq!(Path::new(lines[5]), Path::new(lines[0]).parent().unwrap().join("target"));
    assert!(!chosen.exists());
    assert_untouched(&sandbox, &before);
}

#[test]
fn paths_into_the_checkout_in_findings_are_made_relative_to_the_repository() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let judge_log = sandbox.path("judged");
    let judge = sandbox.script(
        "judge.sh",
        &format!(
            "req=$(cat); printf '%s\\n' \"$req\" >> {}; defect=$(printf '%s' \"$req\" | sed 's/.*\"defect\":\"\\([^\"]*\\)\".*/\\1/'); case \"$req\" in *\"text\\\":\\\"$defect\"*|*'\"text\":\"in src/calc.py: add subtracts'*) echo '{{\"match\": true}}';; *) echo '{{\"match\": false}}';; esac",
            judge_log.display()
        ),
    );
    let reviewer = sandbox.script(
        "absolute.sh",
        r#"printf '{"findings": [{"file": "%s/src/calc.py", "line": 2, "message": "in %s/src/calc.py: add subtracts", "repro": "grep -q \\"return a + b\\" %s/src/calc.py"}]}\n' "$PWD" "$PWD" "$PWD""#,
    );
    for scorer in [vec!["--scorer", "repro"], vec!["--scorer", "judge", "--judge-cmd", judge.as_str()]] {
        let mut args = vec!["--review-cmd", reviewer.as_str(), "--plants-file"];
        let plants = sandbox.plants();
        args.push(&plants);
        args.extend(scorer.iter().copied());
        args.extend(["--min-recall", "0", "--json"]);
        let output = sandbox.run(&args);
        assert_eq!(output.status.code(), Some(0), "{scorer:?}: {}", stderr(&output));
        let report = json(&output);
        assert_eq!(report["caught"], 1, "{scorer:?}: {report}");
        assert_eq!(report["plants"][0]["caughtBy"], "in src/calc.py: add subtracts", "{scorer:?}");
        assert!(!stdout(&output).contains("revcal-run-"), "{scorer:?}: no slot path in the report");
    }
    let asked = std::fs::read_to_string(&judge_log).unwrap();
    assert!(asked.contains(r#""file":"src/calc.py""#) && !asked.contains("revcal-run-"), "{asked}");
    assert_untouched(&sandbox, &before);
}

#[test]
fn the_report_is_the_same_for_every_number_of_jobs() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    // Reviews that finish in a different order every time, findings with absolute paths into
    // the checkout, a repro and a judge: one review per plant, three trials.
    let reviewer = sandbox.script(
        "jittery.sh",
        r#"sleep 0.$(( $(od -An -N1 -tu1 /dev/urandom) % 4 ))
printf '{"findings": [
  {"file": "%s/src/calc.py", "line": 2, "message": "add subtracts", "repro": "grep -q \\"return a + b\\" src/calc.py"},
  {"file": "src/calc.py", "line": 6, "message": "adults at 18"},
  {"file": "src/calc.py", "line": 10, "message": "first is the second item"}
]}\n' "$PWD""#,
    );
    let calls = sandbox.path("calls");
    let judge = sandbox.script(
        "judge.sh",
        &format!(
            "req=$(cat); echo x >> {}; defect=$(printf '%s' \"$req\" | sed 's/.*\"defect\":\"\\([^\"]*\\)\".*/\\1/'); case \"$req\" in *\"text\\\":\\\"$defect\"*|*'\"text\":\"add subtracts'*|*'\"text\":\"first is the second'*) echo '{{\"match\": true}}';; *) echo '{{\"match\": false}}';; esac",
            calls.display()
        ),
    );
    let plants = sandbox.plants();
    let run = |jobs: &str, extra: &[&str]| {
        let _ = std::fs::remove_file(&calls);
        let mut args = vec![
            "--review-cmd",
            reviewer.as_str(),
            "--plants-file",
            plants.as_str(),
            "--judge-cmd",
            judge.as_str(),
            "--one-at-a-time",
            "--trials",
            "3",
            "--min-recall",
            "0",
            "--json",
            "--jobs",
            jobs,
        ];
        args.extend(extra);
        let output = sandbox.run(&args);
        let asked = std::fs::read_to_string(&calls).map(|text| text.lines().count()).unwrap_or(0);
        (output.status.code(), stdout(&output), asked, stderr(&output))
    };
    let (code, one, asked_one, log) = run("1", &[]);
    assert_eq!(code, Some(0), "{log}");
    assert_eq!(json_text(&one)["caught"], 6, "{one}");
    for jobs in ["2", "8"] {
        let (code, many, asked, log) = run(jobs, &[]);
        assert_eq!(code, Some(0), "{log}");
        assert_eq!(many, one, "--jobs {jobs} and --jobs 1 print the same report");
        assert_eq!(asked, asked_one, "--jobs {jobs}: the judge was asked the same questions");
    }
    // A budget that runs out: the same questions fall past it, whatever the jobs.
    let (code, one, _, log) = run("1", &["--max-judge-calls", "7"]);
    assert_eq!(code, Some(1), "{log}");
    assert!(json_text(&one)["judgeErrors"].as_u64().unwrap() > 0, "{one}");
    let (code, many, _, log) = run("8", &["--max-judge-calls", "7"]);
    assert_eq!(code, Some(1), "{log}");
    assert_eq!(many, one, "the budget gives the same report for every number of jobs");
    assert_untouched(&sandbox, &before);
}

fn json_text(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn with_two_jobs_two_reviews_run_at_once_each_in_its_own_checkout() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let meeting = sandbox.path("meeting");
    let reviewer = meeting_reviewer(&sandbox, &meeting);
    let output = sandbox.run(&[
        "--review-cmd",
        &reviewer,
        "--plants-file",
        &sandbox.plants(),
        "--scorer",
        "repro",
        "--trials",
        "2",
        "--jobs",
        "2",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let mut saw = Vec::new();
    let mut checkouts = Vec::new();
    for entry in std::fs::read_dir(&meeting).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap().trim().to_owned();
        if path.file_name().unwrap().to_string_lossy().starts_with("saw") {
            saw.push(text);
        } else {
            checkouts.push(text);
        }
    }
    assert_eq!(saw, ["2", "2"], "each review saw the other one running");
    assert_ne!(checkouts[0], checkouts[1], "in checkouts of their own");
    assert_untouched(&sandbox, &before);
}
