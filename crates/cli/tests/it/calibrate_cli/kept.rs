//! Kept checkouts through the command line: reports that do not depend on them, a hostile
//! reviewer's leftovers undone before the next run, `revcal cache list` and `clear`.

use super::{CALC, Sandbox, assert_untouched, json, meeting_reviewer, snapshot, stderr};
use serde_json::Value;
use std::process::{Command, Output};

/// The report without the fields that say how long things took.
fn timeless(mut report: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.retain(|key, _| !key.to_ascii_lowercase().contains("second") && !key.ends_with("Ms"));
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut report);
    report
}

fn cache(sandbox: &Sandbox, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_revcal"))
        .arg("cache")
        .args(args)
        .env("XDG_CACHE_HOME", sandbox.path("cache"))
        .output()
        .unwrap()
}

#[test]
fn kept_checkouts_report_what_fresh_ones_do_and_a_vandals_leftovers_are_undone() {
    let sandbox = Sandbox::new();
    let before = snapshot(&sandbox.repo());
    let seen = sandbox.path("seen");
    // Each review records what it was given, then vandalises its checkout: edits a file, adds
    // one, makes a link and a read-only directory, and rewrites the slot's HEAD.
    let reviewer = sandbox.script(
        "vandal.sh",
        &format!(
            "{{ cat src/calc.py; ls -A; git status --porcelain; }} >> {seen}\n\
             echo 'x = 1' >> src/calc.py; echo hi > extra.py; ln -sf /etc/passwd link.py\n\
             mkdir -p locked && chmod 000 locked; chmod 000 src/calc.py\n\
             git -c user.name=v -c user.email=v@v commit -qam vandal >/dev/null 2>&1\n\
             echo '[]'",
            seen = seen.display()
        ),
    );
    let plants = sandbox.plants();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--review-cmd",
            reviewer.as_str(),
            "--plants-file",
            plants.as_str(),
            "--scorer",
            "repro",
            "--json",
        ];
        args.extend(extra);
        let output = sandbox.run(&args);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        timeless(json(&output))
    };
    let fresh = run(&["--no-checkout-cache"]);
    let fresh_seen = std::fs::read_to_string(&seen).unwrap();
    std::fs::remove_file(&seen).unwrap();
    let first = run(&[]);
    let first_seen = std::fs::read_to_string(&seen).unwrap();
    std::fs::remove_file(&seen).unwrap();
    let second = run(&[]);
    let second_seen = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(first, fresh, "a first run in kept slots reports what fresh checkouts do");
    assert_eq!(second, fresh, "and so does the next, after the vandal");
    assert_eq!(first_seen, fresh_seen, "the reviewer saw the same checkouts");
    assert_eq!(second_seen, fresh_seen, "with every leftover of the last run undone");
    assert!(!second_seen.contains("extra.py") && !second_seen.contains("x = 1"), "{second_seen}");
    // Two reviews at once (each waits, up to 30 s, until the other has started): two slots.
    let meet = meeting_reviewer(&sandbox, &sandbox.path("meeting"));
    let jobs = sandbox.run(&[
        "--review-cmd",
        meet.as_str(),
        "--plants-file",
        plants.as_str(),
        "--scorer",
        "repro",
        "--json",
        "--jobs",
        "2",
        "--trials",
        "2",
    ]);
    assert_eq!(jobs.status.code(), Some(2), "{}", stderr(&jobs));
    assert_untouched(&sandbox, &before);
    assert_eq!(std::fs::read_to_string(sandbox.repo().join("src/calc.py")).unwrap(), CALC);

    // The cache lists the repository and clears it.
    let listed = cache(&sandbox, &["list", "--json"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let repositories = listed.as_array().unwrap();
    assert_eq!(repositories.len(), 1, "{listed}");
    assert_eq!(repositories[0]["slots"], 2, "two slots after --jobs 2: {listed}");
    assert!(repositories[0]["bytes"].as_u64().unwrap() > CALC.len() as u64, "{listed}");
    let table = cache(&sandbox, &["list"]);
    assert!(String::from_utf8_lossy(&table.stdout).contains("1 repositories"), "{table:?}");
    let cleared = cache(&sandbox, &["clear"]);
    assert_eq!(cleared.status.code(), Some(0), "{}", stderr(&cleared));
    assert!(stderr(&cleared).contains("removed 2 kept slot(s)"), "{}", stderr(&cleared));
    let listed: Value = serde_json::from_slice(&cache(&sandbox, &["list", "--json"]).stdout).unwrap();
    assert_eq!(listed, Value::Array(vec![]));
    assert_eq!(run(&[]), fresh, "a cleared cache starts again from nothing");
}

#[test]
fn an_idle_slot_holds_nothing_that_tells_the_rounds_apart() {
    let sandbox = Sandbox::new();
    let plants = sandbox.plants();
    let run = |reviewer: &str, jobs: &str| {
        let output = sandbox.run(&[
            "--review-cmd",
            reviewer,
            "--plants-file",
            &plants,
            "--scorer",
            "repro",
            "--preexisting-filter",
            "--trials",
            "2",
            "--jobs",
            jobs,
            "--json",
        ]);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    };
    // Two slots, each used: two trials reviewed at once (each review waits for the other to
    // have started), and the unplanted rounds.
    let started = sandbox.path("started");
    std::fs::create_dir_all(&started).unwrap();
    let together = sandbox.script(
        "together.sh",
        &format!(
            "touch {dir}/$$; n=0; while [ $(ls {dir} | wc -l) -lt 2 ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n+1)); done; echo '[]'",
            dir = started.display()
        ),
    );
    run(&together, "2");
    let slots: Vec<std::path::PathBuf> = glob_slots(&sandbox);
    assert_eq!(slots.len(), 2, "{slots:?}");
    for slot in &slots {
        assert!(slot.join("tree/src").is_dir(), "the files every round shares are kept");
        assert!(
            !slot.join("tree/src/calc.py").exists(),
            "the changed file is not left in {}",
            slot.display()
        );
        assert!(!slot.join("tree/.git").exists(), "nor the round's objects");
    }
    // A reviewer that looks into the other slots while it runs finds no other round there.
    let seen = sandbox.path("seen");
    let peeker = sandbox.script(
        "peek.sh",
        &format!(
            "me=$(basename \"$(dirname \"$PWD\")\")\nfor s in ../../slot-*; do [ \"$(basename \"$s\")\" = \"$me\" ] && continue; for f in \"$s/tree/src/calc.py\" \"$s/tree/.git\"; do [ -e \"$f\" ] && echo \"$f\" >> {seen}; done; done\necho \"$me\" >> {seen}.me\necho '[]'",
            seen = seen.display()
        ),
    );
    run(&peeker, "1");
    assert!(sandbox.path("seen.me").exists(), "the reviewer ran");
    let found = std::fs::read_to_string(&seen).unwrap_or_default();
    assert_eq!(found, "", "another slot's round was readable");
}

fn glob_slots(sandbox: &Sandbox) -> Vec<std::path::PathBuf> {
    let mut slots = Vec::new();
    for repository in std::fs::read_dir(sandbox.path("cache/revcal/checkouts")).unwrap().flatten() {
        for entry in std::fs::read_dir(repository.path()).into_iter().flatten().flatten() {
            if entry.file_name().to_string_lossy().starts_with("slot-") {
                slots.push(entry.path());
            }
        }
    }
    slots.sort();
    slots
}
