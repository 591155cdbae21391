//! Usage errors never share an exit code with a result, and every command's `--help` shows
//! its exit-code table.

use std::process::{Command, Output};

fn run(binary: &str, args: &[&str]) -> Output {
    Command::new(binary).args(args).env("NO_COLOR", "1").output().unwrap()
}

const REVCAL: &str = env!("CARGO_BIN_EXE_revcal");
const REVIEW_CALIBRATION: &str = env!("CARGO_BIN_EXE_review-calibration");

#[test]
fn a_mistyped_flag_exits_1_from_calibrate_and_3_from_score_for_both_binaries() {
    let cases: [(&str, &[&str], i32); 7] = [
        // calibrate's 2 means "the gate failed": a usage error is an operational error, 1.
        (REVCAL, &["calibrate", "--min-recal", "0.6", "--review-cmd", "true"], 1),
        (REVIEW_CALIBRATION, &["--min-recal", "0.6", "--review-cmd", "true"], 1),
        // A bad value is a usage error too.
        (REVCAL, &["calibrate", "--min-recall", "lots", "--review-cmd", "true"], 1),
        // bench keeps calibrate's codes: its 2 means "the gate failed" or "bugs no longer reproduce".
        (REVCAL, &["bench", "standard", "--review-cmd", "true", "--after", "someday"], 1),
        (REVIEW_CALIBRATION, &["--plants", "-3", "--review-cmd", "true"], 1),
        // score's 2 means UNCLEAR: a usage error is invalid input, 3.
        (REVCAL, &["score", "--rubirc", "x"], 3),
        (REVCAL, &["-v", "--color", "never", "score", "review.json", "--jsn"], 3),
    ];
    for (binary, args, code) in cases {
        let output = run(binary, args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "{binary} {args:?}: {stderr}");
        assert!(stderr.contains("error:"), "{binary} {args:?} explains itself: {stderr}");
        assert!(output.stdout.is_empty(), "{binary} {args:?} prints nothing on stdout");
    }
}

#[test]
fn other_commands_keep_2_for_usage_errors_and_help_exits_0() {
    for args in [
        &["rubric", "lint", "--formt", "json"][..],
        &["mutate", "--smaple", "3", "."],
        &["elo", "leaderbord"],
        &["agentchat", "post", "--server", "ws://127.0.0.1:1", "--key", "k", "m.json", "--wiat", "3"],
        &["agentchat"],
        &["nonsense"],
        &[],
    ] {
        assert_eq!(run(REVCAL, args).status.code(), Some(2), "revcal {args:?}");
    }
    for args in [&["--help"][..], &["calibrate", "--help"], &["score", "-h"], &["--version"]] {
        let output = run(REVCAL, args);
        assert_eq!(output.status.code(), Some(0), "revcal {args:?}");
        assert!(!output.stdout.is_empty());
    }
    assert_eq!(run(REVIEW_CALIBRATION, &["--help"]).status.code(), Some(0));
}

#[test]
fn every_command_documents_its_exit_codes_in_its_help() {
    let commands: [(&str, &[&str], &[&str]); 14] = [
        (
            REVCAL,
            &["calibrate"],
            &[
                "0        the gate passed",
                "2        the gate failed",
                "1        operational or usage error",
                "a --reviewer model that gave no review",
                "--max-review-calls spent",
                "128+N",
            ],
        ),
        (
            REVIEW_CALIBRATION,
            &[],
            &["0        the gate passed", "2        the gate failed", "1        operational or usage error"],
        ),
        (REVCAL, &["score"], &["0  PASS", "1  FAIL", "2  UNCLEAR", "3  invalid input"]),
        (REVCAL, &["rubric", "lint"], &["0  no errors", "1  problems found", "2  usage or I/O error"]),
        (REVCAL, &["rubric", "get"], &["1  nothing found", "2  usage or I/O error"]),
        (REVCAL, &["mutate"], &["0  mutants listed", "2  usage or I/O error"]),
        (REVCAL, &["demo"], &["0  both calibrations ran", "2  usage error"]),
        (REVCAL, &["elo"], &["0  done", "1  a refusal", "2  usage or I/O error"]),
        (REVCAL, &["agentchat", "serve"], &["0  stopped by SIGINT or SIGTERM", "2  could not run"]),
        (
            REVCAL,
            &["agentchat", "post"],
            &[
                "0  every message answered",
                "1  a refusal",
                "3  no answer within --wait",
                "2  usage or I/O error",
            ],
        ),
        (REVCAL, &["agentchat", "review"], &["0  stopped by SIGINT or SIGTERM", "2  could not run"]),
        (
            REVCAL,
            &["bench"],
            &[
                "0        done: standard and merge, the gate passed",
                "2        standard and merge: the gate failed",
                "1        operational or usage error",
                "128+N",
            ],
        ),
        (
            REVCAL,
            &["bench", "standard"],
            &["verify: some bugs no longer", "generate --check: suite.yaml or manifest.yaml is stale"],
        ),
        (
            REVCAL,
            &["bench", "compare"],
            &["compare: reports of different", "compare, the reports were compared"],
        ),
    ];
    for (binary, command, rows) in commands {
        let mut args = command.to_vec();
        args.push("--help");
        let output = run(binary, &args);
        assert_eq!(output.status.code(), Some(0), "{binary} {args:?}");
        let help = String::from_utf8_lossy(&output.stdout);
        assert!(help.contains("Exit status:"), "{binary} {args:?} has an exit-status table:\n{help}");
        for row in rows {
            assert!(help.contains(row), "{binary} {args:?} lists `{row}`:\n{help}");
        }
    }
}

#[test]
fn completions_are_printed_for_each_shell_and_an_unknown_shell_is_a_usage_error() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_revcal"))
            .args(["completions", shell])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{shell}");
        let script = String::from_utf8(output.stdout).unwrap();
        assert!(
            script.contains("calibrate") && script.contains("review-cmd"),
            "{shell}: every command and flag"
        );
    }
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_revcal"))
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn the_top_level_help_leads_with_the_demo_calibrate_and_score() {
    let help = String::from_utf8(run(REVCAL, &["--help"]).stdout).unwrap();
    let commands = &help[help.find("Commands:").expect("a command list")..];
    let position = |name: &str| {
        commands.find(&format!("\n  {name} ")).unwrap_or_else(|| panic!("`{name}` is not listed:\n{help}"))
    };
    assert!(position("demo") < position("calibrate"), "{help}");
    assert!(position("calibrate") < position("score"), "{help}");
    assert!(position("score") < position("rubric"), "{help}");
    // The examples after the list begin with the same three commands, each one a real command.
    let start = &help[help.find("Start with:").expect("a Start with: section")..];
    let examples: Vec<&str> = start.lines().skip(1).take(3).map(str::trim).collect();
    assert!(examples[0].starts_with("revcal demo "), "{start}");
    assert!(examples[1].starts_with("revcal calibrate --review-cmd"), "{start}");
    assert!(examples[2].starts_with("revcal score "), "{start}");
}
