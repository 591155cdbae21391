//! The README's tour, run as written: every `$ ` command of every session in the "A tour"
//! section runs in one shell (so `BOB=$(...)` carries over), in a fresh directory where
//! `examples/` is the repository's and `revcal` is this build, and every line the README
//! quotes must come out of that command, in order (`...` skips lines). Agent ids and message
//! ids are random per run (fresh keys), so they are compared by shape.

use std::path::Path;
use std::process::Command;

/// The repository root.
fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// A session: its commands, each with the lines the README shows after it.
fn sessions(readme: &str) -> Vec<Vec<(String, Vec<String>)>> {
    let tour = &readme[readme.find("## A tour").expect("a tour section")..];
    let tour = &tour[..tour[3..].find("\n## ").map_or(tour.len(), |i| i + 3)];
    let mut sessions = Vec::new();
    for block in tour.split("```text\n").skip(1) {
        let block = &block[..block.find("```").unwrap_or(block.len())];
        let mut commands: Vec<(String, Vec<String>)> = Vec::new();
        for line in block.lines() {
            match line.strip_prefix("$ ") {
                Some(command) => commands.push((command.to_owned(), Vec::new())),
                None => {
                    if let Some((_, expected)) = commands.last_mut() {
                        expected.push(line.to_owned());
                    }
                }
            }
        }
        if !commands.is_empty() {
            sessions.push(commands);
        }
    }
    sessions
}

/// `line` with agent ids (`@` and 16 hex digits) and message ids (64 hex digits) replaced by
/// placeholders, and runs of spaces collapsed (a longer id would shift the columns).
fn shape(line: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let hex_run =
            chars[i..].iter().take_while(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()).count();
        if chars[i] == '@' && chars[i + 1..].iter().take_while(|c| c.is_ascii_hexdigit()).count() == 16 {
            out.push_str("@AGENT");
            i += 17;
        } else if hex_run >= 64 {
            out.push_str("MESSAGE-ID");
            i += hex_run;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_session_of_the_readme_tour_runs_as_written() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let sessions = sessions(&readme);
    assert!(sessions.len() >= 4, "score, mutate, elo and rubric sessions: {}", sessions.len());
    let binary = Path::new(env!("CARGO_BIN_EXE_revcal"));
    let path =
        format!("{}:{}", binary.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    for commands in sessions {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(root().join("examples"), dir.path().join("examples")).unwrap();
        let mut script = String::new();
        for (index, (command, _)) in commands.iter().enumerate() {
            script.push_str(&format!("echo '@@@ {index}'\n{{ {command}\n}} 2>&1\n"));
        }
        let output = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .current_dir(dir.path())
            .env("PATH", &path)
            .env_remove("REVCAL_LEDGER")
            .env_remove("NO_COLOR")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        let outputs: Vec<&str> = text.split("@@@ ").skip(1).collect();
        assert_eq!(outputs.len(), commands.len(), "{text}");
        for ((command, expected), actual) in commands.iter().zip(outputs) {
            let actual: Vec<String> = actual.lines().skip(1).map(shape).collect();
            let mut from = 0;
            for line in expected.iter().filter(|line| line.as_str() != "...") {
                let wanted = shape(line);
                match actual[from..].iter().position(|real| *real == wanted) {
                    Some(at) => from += at + 1,
                    None => panic!(
                        "`$ {command}`: the README's line {line:?} is not in the output:\n{}",
                        actual.join("\n")
                    ),
                }
            }
        }
    }
}
