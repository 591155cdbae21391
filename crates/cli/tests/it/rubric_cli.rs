//! `revcal rubric ...` run as a user runs it: a real process, real files, exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// `revcal ARGS` in `dir`, with a clean environment for colour and library selection.
fn revcal_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_revcal"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("REVCAL_RUBRICS")
        .env_remove("RUST_LOG")
        .output()
        .expect("revcal runs")
}

fn revcal(args: &[&str]) -> Output {
    revcal_in(&root(), args)
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

const BROKEN: &str = "rubric_id: broken_v1
name: Broken
version: 1.0.0
artifact_type: notes
criteria:
  - name: clarity
    description: Can a reader act on it?
    weight: essential
    threshold: 7
    anchors: {1: a, 2: b, 3: c, 4: d, 5: e}
    examples: {score_1: x, score_5: y}
scoring: {pass_threshold: 3.5}
";

fn broken_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.yaml"), BROKEN).unwrap();
    dir
}

#[test]
fn the_shipped_library_lints_clean_with_warnings_denied() {
    let output = revcal(&["rubric", "lint", "rubrics", "--deny-warnings"]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert!(stdout(&output).contains("checked 4 rubrics in 4 files: no problems"), "{}", stdout(&output));
    // `rubrics` is the default path.
    assert_eq!(revcal(&["rubric", "lint"]).status.code(), Some(0));
}

#[test]
fn human_output_is_compiler_style_and_points_at_the_node() {
    let dir = broken_dir();
    let output = revcal_in(dir.path(), &["rubric", "lint", "broken.yaml"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "broken.yaml:9:16: error[RL-05]: threshold 7 of `clarity` is outside the scale 1..5"
    );
    assert_eq!(lines[2], "9 |     threshold: 7");
    assert_eq!(lines[3], "  |                ^");
    assert_eq!(lines[4], "  = field: criteria[0].threshold");
    assert_eq!(lines[5], "  = hint: pick a value between 1 and 5");
    assert!(text.contains("1 error in 1 file"), "{text}");
    assert!(!text.contains('\x1b'), "no colour when stdout is not a terminal");
}

#[test]
fn json_output_has_the_documented_keys() {
    let dir = broken_dir();
    let output = revcal_in(dir.path(), &["rubric", "lint", ".", "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((document["files"].as_u64(), document["errors"].as_u64()), (Some(1), Some(1)));
    let diagnostic = &document["diagnostics"][0];
    let keys: Vec<&str> = diagnostic.as_object().unwrap().keys().map(String::as_str).take(8).collect();
    assert_eq!(keys, ["file", "line", "column", "pointer", "rule", "severity", "message", "hint"]);
    assert_eq!(diagnostic["file"], "./broken.yaml");
    assert_eq!((diagnostic["line"].as_u64(), diagnostic["column"].as_u64()), (Some(9), Some(16)));
    assert_eq!(diagnostic["pointer"], "/criteria/0/threshold");
    assert_eq!(diagnostic["rule"], "RL-05");
    assert_eq!(diagnostic["severity"], "error");
}

#[test]
fn github_output_is_workflow_commands() {
    let dir = broken_dir();
    let output = revcal_in(dir.path(), &["rubric", "lint", "broken.yaml", "--format", "github"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.starts_with("::error file=broken.yaml,line=9,col=16,endLine=9,endColumn=17,title=RL-05 "),
        "{text}"
    );
    assert!(
        text.lines().next().unwrap().contains("::threshold 7 of `clarity` is outside the scale 1..5"),
        "{text}"
    );
}

#[test]
fn warnings_pass_unless_denied() {
    let example = root().join("examples/rubrics");
    let example = example.to_str().unwrap();
    let output = revcal(&["rubric", "lint", example]);
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).contains("warning[PATTERN]"), "{}", stdout(&output));
    assert_eq!(revcal(&["rubric", "lint", example, "--deny-warnings"]).status.code(), Some(1));
}

#[test]
fn colour_follows_the_flag() {
    let dir = broken_dir();
    let coloured = revcal_in(dir.path(), &["rubric", "lint", "broken.yaml", "--color", "always"]);
    assert!(stdout(&coloured).contains("\x1b[1;31merror[RL-05]"), "{}", stdout(&coloured));
    let plain = revcal_in(dir.path(), &["rubric", "lint", "broken.yaml", "--color", "never"]);
    assert!(!stdout(&plain).contains('\x1b'));
}

/// On a real terminal (a pseudo-terminal from `script`), output is coloured unless
/// NO_COLOR is set.
#[test]
fn colour_on_a_terminal_honours_no_color() {
    let dir = broken_dir();
    let command = format!("{} rubric lint broken.yaml", env!("CARGO_BIN_EXE_revcal"));
    let run = |no_color: bool| {
        let mut script = Command::new("script");
        script.args(["-qec", &command, "/dev/null"]).current_dir(dir.path()).env_remove("NO_COLOR");
        if no_color {
            script.env("NO_COLOR", "1");
        }
        script.output()
    };
    let Ok(on_terminal) = run(false) else {
        panic!("`script` (util-linux) is needed to give revcal a terminal in this test");
    };
    assert!(String::from_utf8_lossy(&on_terminal.stdout).contains('\x1b'), "colour on a terminal");
    let no_color = run(true).unwrap();
    let text = String::from_utf8_lossy(&no_color.stdout);
    assert!(text.contains("error[RL-05]") && !text.contains('\x1b'), "{text}");
}

#[test]
fn exit_two_for_missing_paths_unreadable_files_and_bad_usage() {
    let empty = tempfile::tempdir().unwrap();
    let output = revcal_in(empty.path(), &["rubric", "lint"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("`rubrics` does not exist"), "{}", stderr(&output));

    let output = revcal_in(empty.path(), &["rubric", "lint", "."]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no rubric files"), "{}", stderr(&output));

    std::os::unix::fs::symlink(empty.path().join("gone.yaml"), empty.path().join("link.yaml")).unwrap();
    let output = revcal_in(empty.path(), &["rubric", "lint", "."]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stdout(&output).contains("link.yaml:1:1: error[FILE]: cannot open file"), "{}", stdout(&output));

    let output = revcal(&["rubric", "lint", "--format", "xml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("possible values: human, json, github"), "{}", stderr(&output));
}

#[test]
fn search_by_artifact_type() {
    let output = revcal(&["rubric", "search", "--artifact-type", "jira_tickets"]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(text.contains("user_story_quality_v1@1.0.0"), "{text}");
    assert_eq!(text.lines().count(), 2, "a header and one rubric: {text}");

    let output = revcal(&["rubric", "search", "--json", "review"]);
    let found: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(found[0]["rubric_id"], "code_review_v1");

    let output = revcal(&["rubric", "search", "--artifact-type", "poems"]);
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn get_prints_a_rubric_as_json_or_yaml() {
    let output = revcal(&["rubric", "get", "prd_quality_v1", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let rubric: revcal_rubric_model::Rubric = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(rubric.rubric_id, "prd_quality_v1");
    assert_eq!(rubric.criteria.len(), 5);

    let output = revcal(&["rubric", "get", "code_review_v1"]);
    let rubric: revcal_rubric_model::Rubric = serde_yaml::from_slice(&output.stdout).unwrap();
    assert_eq!(rubric.criteria[0].anchors.iter().next().unwrap().0, "9-10");

    let output = revcal(&["rubric", "get", "prd_qualty_v1"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("did you mean `prd_quality_v1`?"), "{}", stderr(&output));
}

#[test]
fn outside_the_repository_the_built_in_library_is_used() {
    let elsewhere = tempfile::tempdir().unwrap();
    let output = revcal_in(elsewhere.path(), &["rubric", "list"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output).lines().count(), 5, "{}", stdout(&output));
    assert!(stderr(&output).contains("4 rubrics from the built-in library"), "{}", stderr(&output));

    // An explicit directory wins, and a bad one is an error that names it.
    let output = revcal_in(elsewhere.path(), &["rubric", "list", "--rubrics", "nowhere"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("`nowhere`"), "{}", stderr(&output));

    // An invalid library is refused with its first error.
    let broken = broken_dir();
    let output =
        revcal_in(elsewhere.path(), &["rubric", "list", "--rubrics", broken.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("[RL-05]"), "{}", stderr(&output));
}

#[test]
fn the_built_in_library_is_the_shipped_one() {
    let elsewhere = tempfile::tempdir().unwrap();
    for id in ["code_review_v1", "prd_quality_v1", "test_plan_quality_v1", "user_story_quality_v1"] {
        let built_in = revcal_in(elsewhere.path(), &["rubric", "get", id, "--format", "json"]);
        let on_disk = revcal(&["rubric", "get", id, "--format", "json"]);
        assert!(built_in.stdout == on_disk.stdout, "{id}: the built-in copy differs from rubrics/");
    }
}

#[test]
fn schema_prints_the_checked_in_schema() {
    let output = revcal(&["rubric", "schema"]);
    let checked_in = std::fs::read_to_string(root().join("rubrics/schema.json")).unwrap();
    assert!(stdout(&output) == checked_in, "rubrics/schema.json is stale: run `cargo xtask schema`");
}

/// `rubric rules` lists every rule of `Rule::ALL`, in its order, with its summary, as JSON
/// and as text: a new rule cannot be left out.
#[test]
fn rules_lists_every_rule() {
    use revcal_rubric_model::Rule;
    let output = revcal(&["rubric", "rules", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let expected: Vec<serde_json::Value> = Rule::ALL
        .iter()
        .map(|rule| serde_json::json!({"rule": rule.id(), "checks": rule.summary()}))
        .collect();
    assert_eq!(listed, serde_json::Value::Array(expected));
    let text = stdout(&revcal(&["rubric", "rules"]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), Rule::ALL.len(), "{text}");
    for (line, rule) in lines.iter().zip(Rule::ALL) {
        let mut words = line.split_whitespace();
        assert_eq!(words.next(), Some(rule.id()), "{line}");
        assert_eq!(words.collect::<Vec<_>>().join(" "), rule.summary(), "{line}");
    }
}

/// The README's tour shows real output: every line it quotes appears in what
/// `revcal rubric lint examples/broken` prints.
#[test]
fn the_readme_tour_matches_real_output() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme.find("$ revcal rubric lint examples/broken\n").expect("the tour is in the README");
    let block = &readme[start..];
    let block = &block[..block.find("```").unwrap()];
    let output = revcal(&["rubric", "lint", "examples/broken"]);
    assert_eq!(output.status.code(), Some(1));
    let actual = stdout(&output);
    let quoted: Vec<&str> = block.lines().skip(1).filter(|line| *line != "...").collect();
    assert!(quoted.len() > 10, "the tour quotes real lines");
    for line in quoted {
        assert!(
            actual.lines().any(|real| real == line),
            "README line not in real output: {line:?}\n{actual}"
        );
    }
}

#[test]
fn output_failures_are_errors_not_panics() {
    // A full disk: a clear error and exit 2.
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_revcal"))
        .args(["rubric", "lint", "examples/broken", "--format", "json"])
        .current_dir(root())
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("cannot write the lint report") && !message.contains("panicked"), "{message}");

    // A reader that goes away (`revcal ... | head -1`): a quiet end, with the exit status
    // of the lint itself.
    let many = tempfile::tempdir().unwrap();
    for n in 0..200 {
        std::fs::write(many.path().join(format!("b{n}.yaml")), BROKEN).unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_revcal"))
        .args(["rubric", "lint", "."])
        .current_dir(many.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let message = stderr(&output);
    assert!(!message.contains("panicked"), "{message}");
    assert_eq!(output.status.code(), Some(1), "{message}");
}

/// `BROKEN` made valid, with one focus area whose red-flag id is repeated.
const DUPLICATE_FLAG: &str = "rubric_id: focus_v1
name: Focus
version: 1.0.0
artifact_type: notes
criteria:
  - name: clarity
    description: Can a reader act on it?
    weight: essential
    threshold: 3
    anchors: {1: a, 2: b, 3: c, 4: d, 5: e}
    examples: {score_1: x, score_5: y}
focus_areas:
  - name: Security
    description: Leaks and injections.
    checks: [Queries use parameters.]
    red_flags:
      - id: sql_injection
        description: SQL built from input.
      - id: sql_injection
        description: The same id again.
scoring: {pass_threshold: 3.5}
";

#[test]
fn lint_catches_a_focus_area_with_a_duplicate_red_flag_id() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("focus.yaml"), DUPLICATE_FLAG).unwrap();
    let output = revcal_in(dir.path(), &["rubric", "lint", "focus.yaml", "--color", "never"]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains(
            "focus.yaml:19:13: error[FOCUS]: red flag `sql_injection` is already defined in this area"
        ),
        "{text}"
    );
    assert!(text.contains("= field: focus_areas[0].red_flags[1].id"), "{text}");

    let output = revcal_in(dir.path(), &["rubric", "lint", "focus.yaml", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let diagnostic = &report["diagnostics"][0];
    assert_eq!(diagnostic["rule"], "FOCUS");
    assert_eq!(diagnostic["pointer"], "/focus_areas/0/red_flags/1/id");
    assert_eq!((diagnostic["line"].as_u64(), diagnostic["column"].as_u64()), (Some(19), Some(13)));
}

#[test]
fn get_with_focus_prints_the_areas_checks_and_red_flags_for_a_prompt() {
    let output = revcal(&["rubric", "get", "code_review_v1", "--focus", "security"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.starts_with("Focus of this review: Security (code_review_v1@1.0.0)\n"), "{text}");
    assert!(text.contains("Check that:\n- Every query, shell command and template"), "{text}");
    for id in ["hardcoded_secret", "sql_injection", "xss", "insecure_deserialization", "csrf_csp_disabled"] {
        assert!(text.contains(&format!("\n- {id}: ")), "{id} missing from {text}");
    }
    assert!(!text.contains("n_plus_one_queries"), "only the asked area: {text}");
    assert!(text.contains("`rubric_focus: [Security]`"), "{text}");

    let output =
        revcal(&["rubric", "get", "code_review_v1", "--focus", "Testing,PERFORMANCE", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let areas: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> = areas.as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Testing", "Performance"]);
    assert_eq!(areas[0]["red_flags"][2]["id"], "hardcoded_sleep");
}

#[test]
fn get_with_an_unknown_focus_exits_1_and_suggests_one() {
    let output = revcal(&["rubric", "get", "code_review_v1", "--focus", "secrity"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).is_empty());
    assert!(stderr(&output).contains("no focus area `secrity`"), "{}", stderr(&output));
    assert!(stderr(&output).contains("did you mean `security`?"), "{}", stderr(&output));
    let output = revcal(&["rubric", "get", "user_story_quality_v1", "--focus", "security"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("has no focus areas"), "{}", stderr(&output));
}

/// Every `$ revcal rubric ...` session in docs/rubric-format.md is a real run.
#[test]
fn the_rubric_sessions_in_the_docs_are_real_runs() {
    let doc = std::fs::read_to_string(root().join("docs/rubric-format.md")).unwrap();
    let mut checked = 0;
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(command) = line.strip_prefix("$ revcal ") else { continue };
        let mut expected = Vec::new();
        for line in lines.by_ref() {
            if line == "$ echo $?" {
                break;
            }
            expected.push(line);
        }
        let code: i32 = lines.next().unwrap().parse().unwrap();
        let args: Vec<&str> = command.split_whitespace().collect();
        let output = revcal(&args);
        let actual = format!("{}{}", stdout(&output), stderr(&output));
        assert_eq!(actual.trim_end(), expected.join("\n"), "docs/rubric-format.md: revcal {command}");
        assert_eq!(output.status.code(), Some(code), "docs/rubric-format.md: revcal {command}");
        checked += 1;
    }
    assert!(checked >= 1, "the focus-area sessions are in the docs ({checked} found)");
}

#[test]
fn lint_of_an_endless_file_reads_no_further_than_the_limit() {
    // The diagnostic renderer used to re-read the whole file to show its line: 13 GB for /dev/zero.
    let output = revcal(&["rubric", "lint", "/dev/zero"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = format!("{}{}", stdout(&output), stderr(&output));
    assert!(text.contains("/dev/zero") && text.contains("1 MiB"), "{text}");
}
