//! Which commits `revcal bugs mine` takes for fixes, and what it says of the others: a fix
//! that also adds a release note is a fix; every commit passed over is counted by reason and
//! named at `-v`; a feature is not a bug fix unless `--include-features` says so.

use super::{commit, git, revcal, stderr};
use serde_json::Value;
use std::path::Path;

const TEST: &str = "import unittest\nimport shop\n\n\nclass ShopTest(unittest.TestCase):\n    def test_total(self):\n        self.assertEqual(shop.total([1, 2]), 3)\n";

/// A history of six commits after the start, each of one kind:
/// a fix with a release note (as jd/tenacity adds to every fix), a fix with a docs page, a
/// commit without a test, a fix that also changes the build file, a feature by its message
/// (`feat: add ...`), and a feature by its shape (it only adds a function the test calls).
fn history(repo: &Path) {
    git(repo, &["init", "-q", "-b", "main"]);
    let v1 = "def total(prices):\n    return sum(prices) + 1\n\n\ndef discount(price, percent):\n    return price * percent / 100\n\n\ndef label(name):\n    return name.upper()\n";
    let start = "import unittest\nimport shop\n\n\nclass ShopTest(unittest.TestCase):\n    def test_label(self):\n        self.assertEqual(shop.label('a'), 'A')\n";
    commit(
        repo,
        &[
            ("setup.py", "from setuptools import setup\nsetup(name='shop')\n"),
            ("shop.py", v1),
            ("test_shop.py", start),
        ],
        "Start",
    );
    std::fs::create_dir_all(repo.join("releasenotes/notes")).unwrap();
    std::fs::create_dir_all(repo.join("doc")).unwrap();

    let v2 = v1.replace("return sum(prices) + 1", "return sum(prices)");
    commit(
        repo,
        &[
            ("shop.py", &v2),
            ("test_shop.py", TEST),
            (
                "releasenotes/notes/total-off-by-one-3f2a.yaml",
                "---\nfixes:\n  - |\n    ``total`` no longer adds one.\n",
            ),
        ],
        "Total no longer adds one",
    );

    let v3 = v2.replace("return price * percent / 100", "return price - price * percent / 100");
    let t3 = format!(
        "{TEST}\n    def test_discount(self):\n        self.assertEqual(shop.discount(200, 10), 180)\n"
    );
    commit(
        repo,
        &[
            ("shop.py", &v3),
            ("test_shop.py", &t3),
            ("doc/discounts.rst", "Discounts\n=========\n\nSubtracted from the price.\n"),
        ],
        "Discount is subtracted from the price",
    );

    let v4 = v3.replace("return name.upper()", "return name.strip().upper()");
    commit(repo, &[("shop.py", &v4)], "Strip labels");

    let v5 = v4.replace("return name.strip().upper()", "return name.strip().title()");
    let t5 = format!("{t3}\n    def test_label(self):\n        self.assertEqual(shop.label(' ab '), 'Ab')\n");
    commit(
        repo,
        &[
            ("shop.py", &v5),
            ("test_shop.py", &t5),
            ("setup.py", "from setuptools import setup\nsetup(name='shop', version='2')\n"),
        ],
        "Title-case labels",
    );

    let v6 = v5.replace(
        "def label(name):",
        "def label(name, enabled=True):\n    if not enabled:\n        return name",
    );
    let t6 = format!(
        "{t5}\n    def test_label_disabled(self):\n        self.assertEqual(shop.label(' ab ', enabled=False), ' ab ')\n"
    );
    commit(repo, &[("shop.py", &v6), ("test_shop.py", &t6)], "feat: add enabled parameter to label");

    let v7 = format!("{v6}\n\ndef coupon(price, code):\n    return price - 5 if code == 'FIVE' else price\n");
    let t7 =
        format!("{t6}\n    def test_coupon(self):\n        self.assertEqual(shop.coupon(20, 'FIVE'), 15)\n");
    commit(repo, &[("shop.py", &v7), ("test_shop.py", &t7)], "Coupons take five off");
}

#[test]
fn a_release_note_beside_a_fix_keeps_it_and_every_commit_passed_over_is_counted_by_reason() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("shop");
    std::fs::create_dir_all(&repo).unwrap();
    history(&repo);

    let mined = revcal(
        &repo,
        &["-v", "bugs", "mine", "--rev", "HEAD~6..HEAD", "--test-cmd", "python3 -m unittest", "--json"],
    );
    assert_eq!(mined.status.code(), Some(0), "{}", stderr(&mined));
    let report: Value = serde_json::from_slice(&mined.stdout).unwrap();
    assert_eq!(report["scanned"], 6, "{report:#}");
    let verified: Vec<&str> = report["verified"]
        .as_array()
        .unwrap()
        .iter()
        .map(|bug| bug["fix_subject"].as_str().unwrap())
        .collect();
    assert_eq!(verified, ["Discount is subtracted from the price", "Total no longer adds one"], "{report:#}");
    assert_eq!(report["candidates"], 2, "{report:#}");
    assert_eq!(report["skipped"], serde_json::json!({"no-test": 1, "build-or-other-code": 1}), "{report:#}");
    let features: Vec<(&str, &str)> = report["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|feature| (feature["fixSubject"].as_str().unwrap(), feature["why"].as_str().unwrap()))
        .collect();
    assert_eq!(features.len(), 2, "{report:#}");
    assert_eq!(features[0].0, "Coupons take five off");
    assert!(features[0].1.contains("`coupon`"), "{features:?}");
    assert_eq!(features[1].0, "feat: add enabled parameter to label");
    assert!(features[1].1.contains("feat"), "{features:?}");

    let log = stderr(&mined);
    let first = log.lines().find(|line| line.starts_with("revcal: HEAD~6..HEAD holds")).unwrap_or("");
    assert!(
        first.contains("6 commits, 2 fix candidates to verify")
            && first.contains("2 features set aside")
            && first.contains("2 commits passed over (1 build-or-other-code, 1 no-test)"),
        "{log}"
    );
    // `-v` names each commit passed over, with its reason.
    for (subject, why) in [
        ("Strip labels", "no-test"),
        ("Title-case labels", "setup.py"),
        ("feat: add enabled parameter to label", "feature"),
        ("Coupons take five off", "feature"),
    ] {
        assert!(log.lines().any(|line| line.contains(subject) && line.contains(why)), "{subject}: {log}");
    }
    let summary = log.lines().find(|line| line.contains(" verified, ")).unwrap_or("");
    assert!(summary.contains("2 features set aside (--include-features verifies them)"), "{log}");

    // Told otherwise, the features are candidates like any fix.
    let included = revcal(
        &repo,
        &[
            "bugs",
            "mine",
            "--rev",
            "HEAD~6..HEAD",
            "--test-cmd",
            "python3 -m unittest",
            "--include-features",
            "--json",
        ],
    );
    assert_eq!(included.status.code(), Some(0), "{}", stderr(&included));
    let report: Value = serde_json::from_slice(&included.stdout).unwrap();
    assert_eq!(report["candidates"], 4, "{report:#}");
    assert_eq!(report["features"].as_array().unwrap().len(), 0, "{report:#}");
}
