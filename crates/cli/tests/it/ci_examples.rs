//! The CI recipes of examples/ci/ (docs/ci.md) run as written: their `revcal` commands are
//! taken from the workflow files, the CI's variables filled in as the CI would, and run one
//! shard after another against a suite, a reviewer and a baseline, with a local server standing
//! in for the judge's provider; then the merge job's command gates. The files are also checked
//! by yamllint and by the CI systems' published schemas (check-jsonschema) when those tools
//! are installed, and the test says so when they are not.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_yaml::Value;

use crate::http_server::{Reply, TestServer, anthropic_tool_answer, defect_sentence_verdict, prompt_of};

fn example(name: &str) -> (PathBuf, Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ci").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    (path, serde_yaml::from_str(&text).unwrap())
}

/// Every string of a job's steps (`run`) or script lines that runs `revcal calibrate SUB`.
fn commands(job: &Value, sub: &str) -> Vec<String> {
    let needle = format!("revcal calibrate {sub}");
    let mut found = Vec::new();
    let steps = job.get("steps").and_then(Value::as_sequence).cloned().unwrap_or_default();
    for step in steps {
        if let Some(run) = step.get("run").and_then(Value::as_str) {
            found.push(run.to_owned());
        }
    }
    for line in job.get("script").and_then(Value::as_sequence).cloned().unwrap_or_default() {
        if let Some(line) = line.as_str() {
            found.push(line.to_owned());
        }
    }
    found.into_iter().filter(|command| command.contains(&needle)).collect()
}

const CALC: &str = "def add(a, b):\n    return a + b\n\n\ndef is_adult(age):\n    return age >= 18\n\n\ndef first(items):\n    return items[0]\n";

const PLANTS: &str = r#"- {file: src/calc.py, line: 2, original: "return a + b", mutated: "return a - b", category: arithmetic, defect: "add subtracts: every sum is wrong"}
- {file: src/calc.py, line: 6, original: ">=", mutated: ">", category: off-by-one, defect: "an 18-year-old is no longer an adult"}
- {file: src/calc.py, line: 10, original: "items[0]", mutated: "items[1]", category: boundary, defect: "first returns the second item"}
"#;

/// A reviewer that reads the code and states two of the three defects it finds there.
const REVIEWER: &str = r#"#!/bin/sh
awk '
  /a - b/ { printf "%s{\"file\": \"src/calc.py\", \"line\": %d, \"title\": \"add subtracts: every sum is wrong\"}", sep, FNR; sep = "," }
  /age > 18/ { printf "%s{\"file\": \"src/calc.py\", \"line\": %d, \"title\": \"an 18-year-old is no longer an adult\"}", sep, FNR; sep = "," }
  BEGIN { printf "[" } END { print "]" }' src/calc.py
"#;

/// The project a CI job checks out: calibration/ with the suite, the reviewer and the
/// baseline; the repository the suite calibrates on is elsewhere, named by URL.
struct Project {
    root: tempfile::TempDir,
    server: TestServer,
}

impl Project {
    fn new() -> Project {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("calc");
        std::fs::create_dir_all(repo.join("src")).unwrap();
        std::fs::write(repo.join("src/calc.py"), CALC).unwrap();
        for args in [
            &["init", "-q"][..],
            &["add", "."],
            &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "calc"],
        ] {
            assert!(Command::new("git").args(args).current_dir(&repo).status().unwrap().success());
        }
        let calibration = root.path().join("project/calibration");
        std::fs::create_dir_all(&calibration).unwrap();
        std::fs::write(calibration.join("plants.yaml"), PLANTS).unwrap();
        // A suite names repositories outside its own directory by URL (as a CI's suite names
        // the projects it calibrates on); paths stay inside it.
        let url = format!("file://{}", repo.display());
        std::fs::write(
            calibration.join("suite.yaml"),
            format!("entries:\n  - {{repo: '{url}', name: calc, plants_file: plants.yaml, trials: 2}}\n  - {{repo: '{url}', name: calc-again, plants_file: plants.yaml}}\n"),
        )
        .unwrap();
        let reviewer = calibration.join("review.sh");
        std::fs::write(&reviewer, REVIEWER).unwrap();
        std::fs::set_permissions(&reviewer, std::fs::Permissions::from_mode(0o755)).unwrap();
        let server = TestServer::start(|_, request| {
            let matched = defect_sentence_verdict(&prompt_of(request));
            Reply::new(200, anthropic_tool_answer(&format!(r#"{{"match": {matched}, "reason": "r"}}"#)))
        });
        Project { root, server }
    }

    fn dir(&self) -> PathBuf {
        self.root.path().join("project")
    }

    /// Runs `command` with sh in the project, as a CI job runs it, with `env` set.
    fn sh(&self, command: &str, env: &[(&str, String)]) -> std::process::Output {
        let bin = Path::new(env!("CARGO_BIN_EXE_revcal")).parent().unwrap().to_path_buf();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
        let mut process = Command::new("sh");
        process
            .args(["-c", command])
            .current_dir(self.dir())
            .env("PATH", path)
            .env("XDG_CACHE_HOME", self.root.path().join("cache"))
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", self.server.url())
            .env_remove("OPENAI_API_KEY")
            .env_remove("GEMINI_API_KEY")
            .env_remove("GOOGLE_API_KEY")
            .env_remove("REVCAL_JUDGE_PROVIDER")
            .env_remove("REVCAL_JUDGE_MODEL");
        for (name, value) in env {
            process.env(name, value);
        }
        process.output().unwrap()
    }

    /// The baseline the recipes compare with: this reviewer's earlier report.
    fn save_baseline(&self, env: &[(&str, String)]) {
        let output = self.sh(
            "revcal calibrate suite calibration/suite.yaml --review-cmd \"$PWD/calibration/review.sh\" -q --save-baseline calibration/baseline.json",
            env,
        );
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    }

    /// Checks what the merge job left: the reports, and no regression against the baseline.
    fn check_outputs(&self) {
        for file in ["calibration.html", "calibration.xml", "candidate-baseline.json"] {
            assert!(self.dir().join(file).is_file(), "{file}");
        }
        let report: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(self.dir().join("candidate-baseline.json")).unwrap(),
        )
        .unwrap();
        assert_eq!((report["caught"].as_u64(), report["total"].as_u64()), (Some(6), Some(9)), "{report}");
        assert_eq!(report["baseline"]["regression"], false);
        assert_eq!(report["baseline"]["test"], "mcnemar");
    }
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_github_actions_recipe_runs_as_written() {
    let (_, workflow) = example("github-actions.yml");
    let shards: usize = workflow["env"]["SHARDS"].as_u64().unwrap() as usize;
    let matrix: Vec<u64> = workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(matrix, (1..=shards as u64).collect::<Vec<_>>(), "one job per shard, counted from 1");
    let [shard_command] = commands(&workflow["jobs"]["shard"], "suite").try_into().unwrap();
    let [merge_command] = commands(&workflow["jobs"]["merge"], "merge").try_into().unwrap();
    assert_eq!(workflow["jobs"]["merge"]["needs"], "shard");

    let project = Project::new();
    let env = vec![("GITHUB_WORKSPACE", project.dir().display().to_string())];
    project.save_baseline(&env);
    for index in 1..=shards {
        let command = shard_command
            .replace("${{ matrix.shard }}", &index.to_string())
            .replace("${{ env.SHARDS }}", &shards.to_string());
        assert!(!command.contains("${{"), "every expression filled in: {command}");
        let output = project.sh(&command, &env);
        assert_eq!(output.status.code(), Some(0), "{command}: {}", stderr(&output));
        assert!(project.dir().join(format!("shard-{index}.json")).is_file());
    }
    let output = project.sh(&merge_command, &env);
    assert_eq!(output.status.code(), Some(0), "{merge_command}: {}", stderr(&output));
    project.check_outputs();
}

#[test]
fn the_gitlab_ci_recipe_runs_as_written() {
    let (_, pipeline) = example("gitlab-ci.yml");
    let shards = pipeline["calibrate-shard"]["parallel"].as_u64().unwrap() as usize;
    let [shard_command] = commands(&pipeline["calibrate-shard"], "suite").try_into().unwrap();
    let [merge_command] = commands(&pipeline["calibration-report"], "merge").try_into().unwrap();

    let project = Project::new();
    let dir = project.dir().display().to_string();
    project.save_baseline(&[]);
    for index in 1..=shards {
        let env = vec![
            ("CI_PROJECT_DIR", dir.clone()),
            ("CI_NODE_INDEX", index.to_string()),
            ("CI_NODE_TOTAL", shards.to_string()),
        ];
        let output = project.sh(&shard_command, &env);
        assert_eq!(output.status.code(), Some(0), "{shard_command}: {}", stderr(&output));
    }
    let output = project.sh(&merge_command, &[("CI_PROJECT_DIR", dir)]);
    assert_eq!(output.status.code(), Some(0), "{merge_command}: {}", stderr(&output));
    project.check_outputs();
}

/// A linter over the recipes when it is installed; says so when it is not.
fn lint_with(tool: &str, args: &[&str], files: &[(&str, &[&str])]) {
    let installed = Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
    if !installed {
        eprintln!("skipped: {tool} is not installed (pip install {tool})");
        return;
    }
    for (file, extra) in files {
        let (path, _) = example(file);
        let output = Command::new(tool).args(args).args(*extra).arg(&path).output().unwrap();
        assert!(
            output.status.success(),
            "{tool} {file}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn the_recipes_pass_yamllint_and_their_ci_schemas() {
    lint_with(
        "yamllint",
        &[
            "-s",
            "-d",
            "{extends: default, rules: {line-length: {max: 120}, document-start: disable, truthy: {check-keys: false}}}",
        ],
        &[("github-actions.yml", &[]), ("gitlab-ci.yml", &[])],
    );
    lint_with(
        "check-jsonschema",
        &[],
        &[
            ("github-actions.yml", &["--builtin-schema", "vendor.github-workflows"]),
            ("gitlab-ci.yml", &["--builtin-schema", "vendor.gitlab-ci"]),
        ],
    );
}
