//! Slots kept between runs in the checkout cache: reused (an untouched file is not written
//! again), undone after a hostile reviewer as a fresh slot is, and the same report either way.

use crate::util::git;
use revcal_calibrate::{Calibration, CheckoutCache, Report, ScorerKind};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

const CALC: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";

/// A repository with `src/calc.py` and ten other files; the directory, the repository and a
/// plants file of two plants.
fn repository() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("src/other")).unwrap();
    std::fs::write(repo.join("src/calc.py"), CALC).unwrap();
    for i in 0..10 {
        std::fs::write(repo.join(format!("src/other/f{i}.txt")), format!("file {i}\n")).unwrap();
    }
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "calc"]);
    let plants = dir.path().join("plants.yaml");
    std::fs::write(
        &plants,
        "- {file: src/calc.py, line: 2, original: a + b, mutated: a - b, category: arithmetic}\n- {file: src/calc.py, line: 6, original: a - b, mutated: a + b, category: arithmetic}\n",
    )
    .unwrap();
    (dir, repo, plants)
}

fn calibration(repo: &Path, plants: &Path, reviewer: &str, cache: Option<&Path>) -> Calibration {
    Calibration::builder()
        .dir(repo)
        .review_cmd(reviewer)
        .plants_file(plants)
        .scorer(ScorerKind::String)
        .min_plants(1)
        .min_recall(0.0)
        .checkout_cache(cache.map(CheckoutCache::at))
}

fn json(report: &Report) -> String {
    serde_json::to_string_pretty(report).unwrap()
}

#[test]
fn a_kept_slot_is_reused_undone_after_a_hostile_reviewer_and_reports_the_same() {
    let (dir, repo, plants) = repository();
    let cache = dir.path().join("cache");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep"), "keep\n").unwrap();
    // An honest reviewer: reads calc.py and reports the subtraction in add.
    let honest =
        r#"grep -n 'a - b' src/calc.py | head -1 | sed 's/^\([0-9]*\):.*/src\/calc.py:\1: subtracts/'"#;

    // The same report from fresh slots and from kept ones, whatever the jobs.
    let fresh = calibration(&repo, &plants, honest, None).jobs(1).run().unwrap();
    let first = calibration(&repo, &plants, honest, Some(&cache)).jobs(1).run().unwrap();
    let again = calibration(&repo, &plants, honest, Some(&cache)).jobs(2).trials(1).run().unwrap();
    assert_eq!(json(&fresh), json(&first));
    assert_eq!(json(&first), json(&again));
    let listed = CheckoutCache::at(&cache).list().unwrap();
    assert_eq!(listed.len(), 1, "one repository");
    let slot = listed[0].path.join("slot-1");
    assert!(slot.join("manifest.json").exists());

    // Reused: a file no round changes keeps its inode from run to run.
    let untouched = slot.join("tree/src/other/f3.txt");
    let inode = std::fs::metadata(&untouched).unwrap().ino();
    calibration(&repo, &plants, honest, Some(&cache)).jobs(1).run().unwrap();
    assert_eq!(std::fs::metadata(&untouched).unwrap().ino(), inode, "not written again");

    // A hostile reviewer leaves the kept checkout changed every way it can.
    let hostile = format!(
        r#"echo 'x = 1' >> src/other/f1.txt; chmod 777 src/other/f2.txt; rm src/other/f3.txt; ln -s {outside}/keep src/other/f3.txt;
           ln src/other/f4.txt {outside}/hardlink 2>/dev/null; echo extra > src/extra.py; mkdir -p deep/er; echo x > deep/er/y;
           printf '[core]\n\thooksPath = /tmp\n' >> .git/config; echo 'ref: refs/heads/evil' > .git/HEAD; chmod 000 src/other; echo '[]'"#,
        outside = outside.display()
    );
    calibration(&repo, &plants, &hostile, Some(&cache)).jobs(1).run().unwrap();
    // The next run's reviewer sees the commit and nothing else.
    let probe = dir.path().join("probe");
    let probing = format!(
        "find . -path ./.git -prune -o -type f -print | sort > {0}.files; cat src/other/f1.txt > {0}.f1; stat -c %a src/other/f2.txt > {0}.mode; test -L src/other/f3.txt && echo link > {0}.link; git status --porcelain > {0}.status; cat .git/HEAD > {0}.head; echo '[]'",
        probe.display()
    );
    calibration(&repo, &plants, &probing, Some(&cache)).jobs(1).preexisting_filter(false).run().unwrap();
    let read = |ext: &str| std::fs::read_to_string(probe.with_extension(ext)).unwrap_or_default();
    let mut expected: Vec<String> = (0..10).map(|i| format!("./src/other/f{i}.txt")).collect();
    expected.push("./src/calc.py".into());
    expected.sort();
    assert_eq!(read("files").lines().collect::<Vec<_>>(), expected, "no extra file is left");
    assert_eq!(read("f1"), "file 1\n");
    assert_eq!(read("mode"), "644\n");
    assert_eq!(read("link"), "", "the link is a file again");
    assert_eq!(read("status"), "", "a clean status");
    assert!(read("head").len() == 41 && !read("head").starts_with("ref:"), "HEAD: {}", read("head"));
    assert_eq!(std::fs::read_to_string(outside.join("keep")).unwrap(), "keep\n", "nothing written outside");
    if outside.join("hardlink").exists() {
        assert_eq!(std::fs::read_to_string(outside.join("hardlink")).unwrap(), "file 4\n");
    }
    // Clearing the cache removes it all: every slot the runs made, at most one per job (a
    // run with two jobs opens a second slot only while its reviews outlast a preparation).
    let slots = std::fs::read_dir(&listed[0].path)
        .unwrap()
        .filter(|entry| entry.as_ref().unwrap().file_name().to_string_lossy().starts_with("slot-"))
        .count();
    assert!((1..=2).contains(&slots), "{slots} slots");
    assert_eq!(CheckoutCache::at(&cache).clear(None).unwrap(), slots);
    assert!(CheckoutCache::at(&cache).list().unwrap().is_empty());
}

#[test]
fn between_runs_a_changed_file_is_rewritten_and_a_planted_one_always_is() {
    let (dir, repo, plants) = repository();
    let cache = dir.path().join("cache");
    calibration(&repo, &plants, "echo '[]'", Some(&cache)).jobs(1).preexisting_filter(false).run().unwrap();
    let slot = CheckoutCache::at(&cache).list().unwrap()[0].path.join("slot-1");
    // Between runs, a file no round changes is changed; and the planted file is replaced by
    // its unplanted bytes with the manifest rewritten to vouch for them.
    std::fs::write(slot.join("tree/src/other/f5.txt"), "tampered\n").unwrap();
    let planted = slot.join("tree/src/calc.py");
    assert!(!planted.exists(), "an idle slot holds no file a round changes");
    std::fs::write(&planted, CALC).unwrap();
    let meta = std::fs::symlink_metadata(&planted).unwrap();
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(slot.join("manifest.json")).unwrap()).unwrap();
    manifest["written"]["src/calc.py"] = serde_json::json!({
        "id": git(&repo, &["rev-parse", "HEAD:src/calc.py"]),
        "kind": 0,
        "stamp": [meta.dev(), meta.ino(), meta.mode(), meta.size(), meta.mtime(), meta.mtime_nsec(), meta.ctime(), meta.ctime_nsec(), 0],
    });
    std::fs::write(slot.join("manifest.json"), manifest.to_string()).unwrap();
    let probe = dir.path().join("seen");
    let probing = format!("cat src/other/f5.txt src/calc.py > {}; echo '[]'", probe.display());
    calibration(&repo, &plants, &probing, Some(&cache)).jobs(1).preexisting_filter(false).run().unwrap();
    let seen = std::fs::read_to_string(&probe).unwrap();
    assert!(seen.starts_with("file 5\n"), "the changed file is written again: {seen}");
    assert!(
        seen.contains("return a - b\n\n\ndef sub"),
        "the round's plants, whatever the manifest says: {seen}"
    );
}
