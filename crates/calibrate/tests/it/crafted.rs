//! Crafted commits: trees git itself would refuse, and commits larger than a checkout may be.
//! Whatever a commit holds, nothing is created outside the run's scratch directory.

use crate::util::{commit_tree, git, write_object, write_tree};
use revcal_calibrate::{BuildCheck, CalibrateError, Calibration, CheckoutLimits, ScorerKind};
use std::path::{Path, PathBuf};

const CALC: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
const PLANTS: &str = r#"[{"file": "calc.py", "line": 2, "original": "a + b", "mutated": "a - b", "category": "arithmetic", "witness": "grep -q 'a + b' calc.py"}]"#;

/// A repository whose HEAD adds `calc.py`; the directory holding it, the repository, and a
/// plants file.
fn repository() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("README"), "calc\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "readme"]);
    std::fs::write(repo.join("calc.py"), CALC).unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "calc"]);
    let plants = dir.path().join("plants.json");
    std::fs::write(&plants, PLANTS).unwrap();
    (dir, repo, plants)
}

/// Every path beneath `dir` (links not followed), relative to it.
fn listing(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            found.push(path.strip_prefix(dir).unwrap().display().to_string());
            if entry.file_type().unwrap().is_dir() {
                pending.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The commit of `repo`'s HEAD tree with `extra` entries added to its root, on HEAD's
/// parent.
fn crafted_commit(repo: &Path, extra: &[(&str, &str, &str)]) -> String {
    let mut entries: Vec<(String, String, String)> = git(repo, &["ls-tree", "HEAD"])
        .lines()
        .map(|line| {
            let (meta, name) = line.split_once('\t').unwrap();
            let parts: Vec<&str> = meta.split(' ').collect();
            (parts[0].trim_start_matches('0').to_owned(), name.to_owned(), parts[2].to_owned())
        })
        .collect();
    entries.extend(extra.iter().map(|(m, n, i)| ((*m).to_owned(), (*n).to_owned(), (*i).to_owned())));
    // git's order (a directory's name read with a `/` after it); equal names keep their order.
    entries.sort_by_key(|(mode, name, _)| if mode == "40000" { format!("{name}/") } else { name.clone() });
    let borrowed: Vec<(&str, &str, &str)> =
        entries.iter().map(|(m, n, i)| (m.as_str(), n.as_str(), i.as_str())).collect();
    let tree = write_tree(repo, &borrowed);
    commit_tree(repo, &tree, "HEAD~1", "calc, crafted")
}

/// An error with all its sources, as the CLI prints it.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn calibrate(repo: &Path, plants: &Path, commit: &str) -> Calibration {
    Calibration::builder()
        .dir(repo)
        .commit(commit)
        .review_cmd("echo '[]'")
        .plants_file(plants)
        .scorer(ScorerKind::String)
        .min_plants(1)
        .min_recall(0.0)
        .jobs(2)
        .trials(2)
        .build_check(BuildCheck::Command("true".into()))
}

#[test]
fn a_link_and_a_directory_of_one_name_write_nothing_outside_the_checkout() {
    let (dir, repo, plants) = repository();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let hooks = repo.join(".git/hooks");
    let hooks_before = listing(&hooks);
    let hook = write_object(&repo, "blob", b"#!/bin/sh\necho pwned > /dev/tty\n");
    let inner = write_tree(&repo, &[("100755", "pre-commit", &hook)]);
    for target in [hooks.clone(), outside.clone()] {
        let link = write_object(&repo, "blob", target.display().to_string().as_bytes());
        // `evil` a link to the target, then `evil/` a directory holding an executable.
        let commit = crafted_commit(&repo, &[("120000", "evil", &link), ("40000", "evil", &inner)]);
        let error = calibrate(&repo, &plants, &commit).run().unwrap_err();
        assert!(matches!(error, CalibrateError::CraftedTree { .. }), "{error:?}");
        let message = error.to_string();
        assert!(message.contains("evil") && message.contains("twice"), "{message}");
        assert!(message.contains("a symbolic link") && message.contains("a directory"), "{message}");
    }
    assert_eq!(listing(&hooks), hooks_before, "no hook was created in the user's repository");
    assert!(listing(&outside).is_empty(), "nothing was created outside");
    // Two files of one name are refused the same way.
    let blob = write_object(&repo, "blob", b"x\n");
    let commit = crafted_commit(&repo, &[("100644", "twice.txt", &blob), ("100644", "twice.txt", &blob)]);
    let error = calibrate(&repo, &plants, &commit).run().unwrap_err().to_string();
    assert!(error.contains("twice.txt") && error.contains("two") || error.contains("twice"), "{error}");
}

#[test]
fn a_commit_past_the_checkout_limits_is_refused_with_a_short_error_naming_what() {
    let (_dir, repo, plants) = repository();
    // A file of 3 MiB, over a limit of 1 MiB for one file.
    let big = write_object(&repo, "blob", &vec![b'x'; 3 << 20]);
    let commit = crafted_commit(&repo, &[("100644", "big.bin", &big)]);
    let limits = CheckoutLimits { max_file_bytes: 1 << 20, max_checkout_bytes: 64 << 20 };
    let error = calibrate(&repo, &plants, &commit).checkout_limits(limits).run().unwrap_err();
    assert!(matches!(error, CalibrateError::TooLarge { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("3 MiB") && message.contains("limit of 1 MiB"), "{message}");
    // The default limits take it.
    calibrate(&repo, &plants, &commit).run().unwrap();

    // Three files of 600 KiB: each fits, all together do not fit in 1 MiB.
    let parts: Vec<String> =
        (0..3).map(|i| write_object(&repo, "blob", &vec![b'a' + i; 600 << 10])).collect();
    let commit = crafted_commit(
        &repo,
        &[("100644", "p0.bin", &parts[0]), ("100644", "p1.bin", &parts[1]), ("100644", "p2.bin", &parts[2])],
    );
    let limits = CheckoutLimits { max_file_bytes: 1 << 20, max_checkout_bytes: 1 << 20 };
    let message = calibrate(&repo, &plants, &commit).checkout_limits(limits).run().unwrap_err().to_string();
    assert!(message.contains("checkout") && message.contains("limit of 1 MiB"), "{message}");

    // Directories nested 3,000 deep: a short message.
    let leaf = write_object(&repo, "blob", b"deep\n");
    let mut tree = write_tree(&repo, &[("100644", "leaf", &leaf)]);
    for _ in 0..3000 {
        tree = write_tree(&repo, &[("40000", "d", &tree)]);
    }
    let commit = crafted_commit(&repo, &[("40000", "deep", &tree)]);
    let error = calibrate(&repo, &plants, &commit).run().unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, CalibrateError::CraftedTree { .. }), "{error:?}");
    assert!(message.contains("deeper than 100 directories"), "{message}");
    assert!(message.len() < 400, "a short message: {} bytes: {message}", message.len());
}

#[test]
fn a_witness_that_turns_a_directory_of_its_copy_into_a_link_cannot_make_revcal_write_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("src/calc.py"), CALC).unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "calc"]);
    // A directory outside with a file of the same name, which the link points at.
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("calc.py"), "mine\n").unwrap();
    let witness = format!("if [ ! -L src ]; then rm -rf src && ln -s {} src; fi; exit 0", outside.display());
    let plants = dir.path().join("plants.json");
    std::fs::write(
        &plants,
        serde_json::json!([
            {"file": "src/calc.py", "line": 2, "original": "a + b", "mutated": "a - b", "witness": witness},
            {"file": "src/calc.py", "line": 6, "original": "a - b", "mutated": "a + b", "witness": witness},
        ])
        .to_string(),
    )
    .unwrap();
    let error = Calibration::builder()
        .dir(&repo)
        .review_cmd("echo '[]'")
        .plants_file(&plants)
        .scorer(ScorerKind::String)
        .min_plants(1)
        // Without the sandbox too: the link is the scratch copy's own, revcal must not follow it.
        .sandbox_repro(false)
        .run()
        .unwrap_err();
    let error = chain(&error);
    assert!(error.contains("src") && error.contains("not a directory"), "{error}");
    assert_eq!(std::fs::read_to_string(outside.join("calc.py")).unwrap(), "mine\n");
    assert_eq!(listing(&outside), ["calc.py"]);
}
