//! Every input of `revcal elo` has a size limit, read no further than the limit.

use super::{json_out, revcal_command, stderr};
use std::path::Path;
use std::process::Stdio;

fn with_stdin_from(dir: &Path, args: &[&str], file: &str) -> std::process::Output {
    revcal_command(dir, args)
        .stdin(Stdio::from(std::fs::File::open(file).unwrap()))
        .output()
        .expect("revcal runs")
}

#[test]
fn handle_answers_an_endless_input_with_a_rejection_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let output = with_stdin_from(dir.path(), &["elo", "handle", "--ledger", "l.db"], "/dev/zero");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let response = json_out(&output);
    assert_eq!(response["code"], "invalid", "{response}");
    assert!(response["field"].is_null(), "no field is at fault: {response}");
    let reason = response["reason"].as_str().unwrap();
    assert!(reason.contains("more than the limit of 1 MiB"), "{reason}");
}

#[test]
fn ingest_refuses_a_file_past_its_limit_before_storing_anything() {
    let dir = tempfile::tempdir().unwrap();
    let output =
        revcal_command(dir.path(), &["elo", "ingest", "--ledger", "l.db", "/dev/zero"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("/dev/zero: larger than the limit of 512 MiB"), "{}", stderr(&output));
    assert!(!dir.path().join("l.db").exists(), "nothing was stored");
}

#[test]
fn ingest_rejects_a_line_past_the_message_limit_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.jsonl");
    std::fs::write(&file, format!("{{\"pad\": \"{}\"}}\n", "x".repeat(2 << 20))).unwrap();
    let output = revcal_command(dir.path(), &["elo", "ingest", "--ledger", "l.db", "--json", "big.jsonl"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = json_out(&output);
    let reason = report["rejections"][0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("more than the limit of 1 MiB"), "{report}");
}
