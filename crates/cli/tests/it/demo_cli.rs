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
    assert!(stdout.contains("caught   src/lib.rs:6  arithmetic"), "{stdout}");
    assert!(stdout.contains("missed   src/lib.rs:29  off-by-one"), "{stdout}");
    assert!(!stdout.contains('\x1b'), "no colour when stdout is not a terminal");
}
