//! `revcal demo` as a new user runs it: no arguments, a real cargo and git underneath.

use std::process::Command;

#[test]
fn the_demo_prints_two_real_reports_side_by_side_and_exits_0() {
    let output = Command::new(env!("CARGO_BIN_EXE_revcal"))
        .arg("demo")
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .output()
        .expect("revcal runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    let header = stdout.lines().next().unwrap_or("");
    assert!(
        header.contains("test-suite reviewer (cargo test)")
            && header.contains("│ approve-everything reviewer"),
        "{stdout}"
    );
    // The bundled unit tests kill five of the eight plants (the other three are boundary
    // cases the tests do not exercise; the witnesses prove they are real bugs).
    assert!(stdout.contains("test-suite reviewer (cargo test)   recall 0.62 (5/8"), "{stdout}");
    assert!(stdout.contains("approve-everything reviewer        recall 0.00 (0/8"), "{stdout}");
    assert!(stdout.contains("both measured on the same 8 planted bugs"), "{stdout}");
    assert!(stdout.contains("caught   src/lib.rs:6  arithmetic"), "{stdout}");
    assert!(stdout.contains("missed   src/lib.rs:29  off-by-one"), "{stdout}");
    assert!(!stdout.contains('\x1b'), "no colour when stdout is not a terminal");

    // The README quotes this output: every line it shows is a line of the real run (the
    // commit id differs from run to run).
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let start = readme.find("```text\ntest-suite reviewer (cargo test)").expect("the README quotes the demo");
    let block = &readme[start + "```text\n".len()..];
    let block = &block[..block.find("```").unwrap()];
    let without_commit = |line: &str| {
        line.split("  ")
            .filter(|part| !part.trim_start().starts_with("commit "))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let real: Vec<String> = stdout.lines().map(without_commit).collect();
    for line in block.lines().filter(|line| line.trim() != "...") {
        assert!(
            real.contains(&without_commit(line)),
            "README line not in the demo's output: {line:?}\n{stdout}"
        );
    }
}
