//! A reviewer's recall may come only from reading the change: its checkout is an ordinary
//! commit under review, in which git shows no plant and the unplanted files are nowhere, and
//! planted and clean rounds look alike.

use crate::util::git;
use revcal_calibrate::{Calibration, ScorerKind};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const BEFORE: &str = "def add(a, b):\n    return a + b\n";

/// The commit under calibration appends three functions to `calc.py`; comparisons give the
/// clean rounds their sites.
const AFTER: &str = "def add(a, b):\n    return a + b\n\n\ndef less(a, b):\n    return a < b\n\n\ndef scale(values, factor):\n    total = 0\n    for value in values:\n        total = total + value * factor\n    return total\n\n\ndef more(c, d):\n    return c > d\n";

/// Two plants on lines the commit added (10 and 12).
const PLANTS: &str = r#"[
 {"file": "calc.py", "line": 10, "original": "total = 0", "mutated": "total = 1", "category": "boundary"},
 {"file": "calc.py", "line": 12, "original": "value * factor", "mutated": "value + factor", "category": "arithmetic"}
]"#;

/// A repository whose HEAD (by Ada, with a message of two paragraphs) changes `calc.py`; the
/// directory, the repository and a plants file.
fn repository() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("calc.py"), BEFORE).unwrap();
    std::fs::write(repo.join("README"), "calc\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "add"]);
    std::fs::write(repo.join("calc.py"), AFTER).unwrap();
    git(&repo, &["add", "."]);
    git(
        &repo,
        &[
            "-c",
            "user.name=Ada Lovelace",
            "-c",
            "user.email=ada@example.com",
            "commit",
            "-qm",
            "Add less, scale and more\n\nScale sums the values, each times the factor.",
        ],
    );
    let plants = dir.path().join("plants.json");
    std::fs::write(&plants, PLANTS).unwrap();
    (dir, repo, plants)
}

fn calibration(repo: &Path, plants: &Path, reviewer: &str) -> Calibration {
    Calibration::builder()
        .dir(repo)
        .review_cmd(reviewer)
        .plants_file(plants)
        .scorer(ScorerKind::String)
        .min_plants(1)
        .min_recall(0.0)
        .jobs(2)
}

/// Writes `script` (Python) into `dir` and gives the command that runs it.
fn python(dir: &Path, name: &str, script: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    format!("python3 {}", path.display())
}

#[test]
fn every_checkout_is_an_ordinary_commit_under_review_holding_no_unplanted_object() {
    let (dir, repo, plants) = repository();
    let probes = dir.path().join("probes");
    std::fs::create_dir_all(&probes).unwrap();
    let original = git(&repo, &["rev-parse", "HEAD"]);
    let original_tree = git(&repo, &["rev-parse", "HEAD^{tree}"]);
    let original_blob = git(&repo, &["rev-parse", "HEAD:calc.py"]);
    let parent = git(&repo, &["rev-parse", "HEAD~1"]);
    // What a reviewer sees of git and its environment, one file per review.
    let probe = format!(
        r#"
import json, os, subprocess
def run(*args):
    done = subprocess.run(["git", *args], capture_output=True, text=True)
    return [done.returncode, done.stdout]
objects = run("cat-file", "--batch-all-objects", "--batch-check=%(objectname)")[1].split()
dot_git = sorted(
    os.path.relpath(os.path.join(root, name), ".git")
    for root, dirs, files in os.walk(".git") for name in files
    if not os.path.relpath(root, ".git").startswith("objects/") or root.endswith(("info", "pack")))
probe = {{
    "status": run("status", "--porcelain"),
    "diff": run("diff"),
    "cached": run("diff", "--cached"),
    "head": run("rev-parse", "HEAD"),
    "parent": run("rev-parse", "HEAD~1"),
    "count": run("rev-list", "--count", "HEAD"),
    "log": run("log", "-1", "--format=%an <%ae>%n%cn <%ce>%n%B"),
    "original": run("cat-file", "-e", "{original}"),
    "objects": objects,
    "loose": len([o for o in objects if os.path.exists(os.path.join(".git/objects", o[:2], o[2:]))]),
    "dot_git": dot_git,
    "env": sorted(name for name in os.environ if name.startswith(("REVCAL", "GIT"))),
    "commit": os.environ.get("REVCAL_COMMIT"),
    "calc": open("calc.py").read(),
}}
json.dump(probe, open(os.path.join("{probes}", os.environ["REVCAL_RUN_TOKEN"]), "w"))
print("[]")
"#,
        probes = probes.display()
    );
    let reviewer = python(dir.path(), "probe.py", &probe);
    let report = calibration(&repo, &plants, &reviewer).clean_rounds(2).trials(2).run().unwrap();
    assert_eq!(report.clean_rounds.as_ref().map(|clean| clean.changes), Some(2));

    let probes: Vec<serde_json::Value> = std::fs::read_dir(&probes)
        .unwrap()
        .map(|entry| serde_json::from_slice(&std::fs::read(entry.unwrap().path()).unwrap()).unwrap())
        .collect();
    assert_eq!(probes.len(), 8, "(1 planted + 2 clean rounds + the unplanted change) x 2 trials");
    let planted: Vec<&serde_json::Value> =
        probes.iter().filter(|p| p["calc"].as_str().unwrap().contains("total = 1")).collect();
    assert_eq!(planted.len(), 2);
    let ok = |value: &serde_json::Value| -> String {
        assert_eq!(value[0], 0, "{value}");
        value[1].as_str().unwrap().to_owned()
    };
    for probe in &probes {
        assert_eq!(ok(&probe["status"]), "", "git status is clean");
        assert_eq!(ok(&probe["diff"]), "", "the work tree is the index");
        assert_eq!(ok(&probe["cached"]), "", "the index is HEAD");
        assert_eq!(ok(&probe["parent"]).trim(), parent, "HEAD's parent is the original's");
        assert_eq!(ok(&probe["count"]).trim(), "2", "the parent is the history's end");
        assert_eq!(
            ok(&probe["log"]),
            "Ada Lovelace <ada@example.com>\nAda Lovelace <ada@example.com>\nAdd less, scale and more\n\nScale sums the values, each times the factor.\n\n",
            "the original's author, committer and message"
        );
        assert_eq!(probe["commit"].as_str(), Some(ok(&probe["head"]).trim()), "REVCAL_COMMIT is HEAD");
        let objects: BTreeSet<&str> =
            probe["objects"].as_array().unwrap().iter().map(|o| o.as_str().unwrap()).collect();
        if probe["calc"] == AFTER {
            // The review of the unplanted change, whose findings are set aside from the
            // others': it holds the original, as it must.
            assert!(objects.contains(original_blob.as_str()));
            continue;
        }
        assert_ne!(ok(&probe["head"]).trim(), original);
        assert_ne!(probe["original"][0], 0, "the original commit is not in the store: {probe}");
        for unplanted in [&original, &original_tree, &original_blob] {
            assert!(!objects.contains(unplanted.as_str()), "{unplanted} is in a checkout's store");
        }
    }
    assert_eq!(probes.iter().filter(|p| p["calc"] == AFTER).count(), 2, "one unplanted review per trial");
    // Nothing of git or the environment differs between a planted and a clean round: the
    // same names, the same files in `.git`, as many objects of the round's own.
    let shape = |probe: &serde_json::Value| {
        (
            probe["dot_git"].clone(),
            probe["env"].clone(),
            probe["loose"].clone(),
            probe["objects"].as_array().unwrap().len(),
        )
    };
    for probe in &probes {
        assert_eq!(shape(probe), shape(planted[0]), "a clean round looks like a planted one");
    }
}

/// Reviewers that read no code: each locates plants only through what git or the checkout
/// gives away. The string scorer credits location alone, so any leak shows as recall.
#[test]
fn reviewers_that_read_git_instead_of_the_change_catch_nothing() {
    let (dir, repo, plants) = repository();
    let hunks = r#"
import json, re, subprocess, sys
found, path = [], None
diff = subprocess.run(["git", "diff", "-U0", *sys.argv[1:]], capture_output=True, text=True).stdout
for line in diff.splitlines():
    if line.startswith("+++ "):
        path = line[6:] if line.startswith("+++ b/") else None
    hunk = re.match(r"@@ -\d+(?:,\d+)? \+(\d+)", line)
    if hunk and path:
        found.append({"file": path, "line": int(hunk.group(1)), "message": "changed here"})
print(json.dumps(found))
"#;
    let status = r#"
import json, subprocess
found = []
for line in subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True).stdout.splitlines():
    path = line[3:]
    for number in range(1, len(open(path).read().splitlines()) + 1):
        found.append({"file": path, "line": number, "message": "modified"})
print(json.dumps(found))
"#;
    // Looks in the object store for another version of each file with as many lines, and
    // reports the lines where they differ.
    let store = r#"
import json, subprocess
found = []
ids = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"], capture_output=True, text=True).stdout.split("\n")
blobs = [line.split()[0] for line in ids if line.endswith(" blob")]
for path in subprocess.run(["git", "ls-files"], capture_output=True, text=True).stdout.split():
    mine = open(path).read().splitlines()
    for blob in blobs:
        theirs = subprocess.run(["git", "cat-file", "blob", blob], capture_output=True, text=True).stdout.splitlines()
        if len(theirs) == len(mine) and theirs != mine:
            found += [{"file": path, "line": n + 1, "message": "differs"} for n, (a, b) in enumerate(zip(mine, theirs)) if a != b]
print(json.dumps(found))
"#;
    let cheats = [
        ("git diff", python(dir.path(), "hunks.py", hunks)),
        ("git diff HEAD", format!("{} HEAD", python(dir.path(), "hunks.py", hunks))),
        ("git status", python(dir.path(), "status.py", status)),
        ("the object store", python(dir.path(), "store.py", store)),
    ];
    for (name, reviewer) in cheats {
        let report = calibration(&repo, &plants, &reviewer).run().unwrap();
        assert_eq!((report.caught, report.total), (0, 2), "{name}: {report:#?}");
    }
    // Reading the change itself finds what it says: one hunk, the appended functions, which
    // it finds on the unplanted change too (set aside), and without the filter a false
    // positive.
    let change = format!("{} {{base}}", python(dir.path(), "hunks.py", hunks));
    let report = calibration(&repo, &plants, &change).run().unwrap();
    assert_eq!((report.true_positives, report.false_positives, report.preexisting), (0, 0, Some(1)));
    let report = calibration(&repo, &plants, &change).preexisting_filter(false).run().unwrap();
    assert_eq!((report.true_positives, report.false_positives, report.preexisting), (0, 1, None));
}

/// Files of one name in several directories: a finding is credited to the plant in the file
/// its path names, never to another file of the same base name; a bare base name that several
/// changed files share names none of them.
#[test]
fn findings_locate_plants_by_path_not_by_base_name() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let files = [
        "tenacity/__init__.py",
        "tenacity/asyncio/__init__.py",
        "src/x/mod.rs",
        "src/y/mod.rs",
        "web/a/index.js",
        "web/b/index.js",
        "cmd/a/main.go",
        "cmd/b/main.go",
    ];
    for file in files {
        let path = repo.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "first = 0\nsecond = 0\ntotal = 1 + 2\n").unwrap();
    }
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "many files of one name"]);
    let plants: Vec<serde_json::Value> = files
        .iter()
        .map(|file| serde_json::json!({"file": file, "line": 3, "original": "1 + 2", "mutated": "1 - 2", "category": "arithmetic"}))
        .collect();
    let plants_file = dir.path().join("plants.json");
    std::fs::write(&plants_file, serde_json::to_string(&plants).unwrap()).unwrap();
    let finding = |file: &str| serde_json::json!({"file": file, "line": 3, "message": "subtracts"});
    let findings = serde_json::json!([
        finding("tenacity/__init__.py"),
        finding("./src/x/mod.rs"),
        finding("/home/ci/work/repo/web/b/index.js"),
        finding("asyncio\\__init__.py"),
        finding("main.go"),
    ]);
    let reviewer = format!("printf '%s' '{findings}'");
    // The oracle control (every defect stated at its own path) holds: a run that is refused
    // when a finding is credited to the wrong file. (The stand-in says the same of every
    // checkout, so its findings are not set aside as made on the unplanted change too.)
    let report = calibration(&repo, &plants_file, &reviewer).preexisting_filter(false).run().unwrap();
    let controls = report.controls.as_ref().unwrap();
    assert_eq!(controls.oracle.recall, Some(1.0), "{controls:?}");
    let caught: BTreeSet<&str> = report
        .plants
        .iter()
        .filter(|plant| plant.caught_by.is_some())
        .map(|plant| plant.file.as_str())
        .collect();
    assert_eq!(
        caught,
        BTreeSet::from([
            "tenacity/__init__.py",
            "src/x/mod.rs",
            "web/b/index.js",
            "tenacity/asyncio/__init__.py"
        ]),
        "each finding catches the plant of the file it names, and `main.go` names no one file"
    );
    assert_eq!((report.true_positives, report.false_positives), (4, 1), "{report:#?}");
}

/// A linter's warnings that were there before the plants: the one near a plant is no catch and
/// the one elsewhere no false positive, once each trial also reviews the unplanted change. A
/// warning a plant causes still counts.
#[test]
fn warnings_the_reviewer_had_on_the_unplanted_change_are_set_aside() {
    use revcal_calibrate::bugs::{Bug, write_bugs_yaml};
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let source = "def check(a, b):\n    if a == None:\n        return 0\n    total = a + b\n    return total\n\n\ndef other(x):\n    if x == None:\n        return 1\n    return 1\n\n\ndef third(y):\n    return y * 2\n";
    std::fs::write(repo.join("calc.py"), source).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "calc"]);
    let bug = |line: u32, patch: &str| Bug {
        file: "calc.py".into(),
        line,
        category: "real".into(),
        defect: "wrong".into(),
        witness: None,
        patch: patch.into(),
        fix_commit: "0000000".into(),
        fix_subject: "hand-written".into(),
    };
    let bugs = [
        // Two lines where there was one: every line below moves down by one.
        bug(
            4,
            "--- a/calc.py\n+++ b/calc.py\n@@ -4 +4,2 @@\n-    total = a + b\n+    total = a\n+    total -= b\n",
        ),
        // A comparison with None the linter flags: a warning of the plant's own.
        bug(15, "--- a/calc.py\n+++ b/calc.py\n@@ -15 +15 @@\n-    return y * 2\n+    return y == None\n"),
    ];
    let bugs_file = dir.path().join("bugs.yaml");
    std::fs::write(&bugs_file, write_bugs_yaml(&bugs, "test").unwrap()).unwrap();
    // A linter: E711 on every comparison to None.
    let linter = r#"awk '/== None/ { printf "calc.py:%d: E711 comparison to None should be `cond is None`\n", FNR }' calc.py"#;
    let run = |filter: Option<bool>| {
        let mut calibration = calibration(&repo, &bugs_file, linter).trials(2);
        if let Some(on) = filter {
            calibration = calibration.preexisting_filter(on);
        }
        calibration.run().unwrap()
    };
    // Without the filter, the old warning on line 2 "catches" the bug on lines 4-5, and the
    // one on line 9 (10 once planted) is a false positive.
    let counted = run(Some(false));
    assert_eq!((counted.caught, counted.total), (4, 4), "{counted:#?}");
    assert_eq!((counted.true_positives, counted.false_positives), (4, 2));
    assert_eq!(counted.preexisting, None);
    // By default, for a command, both old warnings are set aside in each trial.
    let filtered = run(None);
    assert_eq!((filtered.caught, filtered.total), (2, 4), "{filtered:#?}");
    assert_eq!((filtered.true_positives, filtered.false_positives), (2, 0));
    assert_eq!(filtered.preexisting, Some(4));
    assert_eq!(filtered.findings, 6, "every finding counts as made");
    let caught: Vec<u32> =
        filtered.plants.iter().filter(|plant| plant.caught_by.is_some()).map(|plant| plant.line).collect();
    assert_eq!(caught, [16], "the bug that causes a warning of its own is caught");
    assert!(filtered.trials.iter().all(|trial| trial.preexisting == 2), "{:?}", filtered.trials);
}
