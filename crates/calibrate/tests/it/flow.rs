//! The calibration flow through the library API, on real git repositories in temporary
//! directories with real reviewer and judge processes.

use revcal_calibrate::{BuildCheck, CalibrateError, Calibration, PlantStatus, Recovered, ScorerKind};
use revcal_judge::{CommandJudge, JudgeError};
use std::path::PathBuf;

use crate::util::git;

const LIB: &str = "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {
    if x < lo {
        return lo;
    }
    if x > hi {
        return hi;
    }
    x
}

pub fn sum(items: &[i32]) -> i32 {
    let mut total = 0;
    for i in 0..items.len() {
        total += items[i];
    }
    total
}

pub fn is_even(n: u32) -> bool {
    n % 2 == 0
}

pub fn scale(values: &mut Vec<i32>, factor: i32) {
    for value in values.iter_mut() {
        *value = *value * factor;
    }
}
";

/// A repository whose HEAD changes src/lib.rs (and a test and a config file, which are not
/// targets) against its parent.
fn rust_repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::create_dir_all(repo.join("tests")).unwrap();
    std::fs::write(repo.join("src/lib.rs"), "pub fn placeholder() {}\n").unwrap();
    std::fs::write(repo.join("README.md"), "x\n").unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "first"]);
    std::fs::write(repo.join("src/lib.rs"), LIB).unwrap();
    std::fs::write(repo.join("tests/it.rs"), "#[test]\nfn t() { assert!(1 < 2); }\n").unwrap();
    std::fs::write(repo.join("build.rs"), "fn main() { let x = 1 + 2; }\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "second"]);
    (dir, repo)
}

#[test]
fn mutant_plants_land_in_the_commits_source_files_only_and_base_is_the_first_parent() {
    let (dir, repo) = rust_repo();
    let seen = dir.path().join("seen");
    // One file per review: the planted one, and the review of the unplanted change.
    let reviewer = format!(
        "echo {{base}} > {0}.base; cat src/lib.rs > {0}-$REVCAL_RUN_TOKEN.lib; echo '[]'",
        seen.display()
    );
    let report = Calibration::builder()
        .dir(&repo)
        .review_cmd(reviewer)
        .scorer(ScorerKind::String)
        .plants(5)
        .min_recall(0.0)
        .run()
        .unwrap();
    assert_eq!(report.total, 5);
    assert!(report.plants.iter().all(|p| p.file == "src/lib.rs"), "{:?}", report.plants);
    let seen_files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "lib"))
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    assert_eq!(seen_files.len(), 2, "the planted change and the unplanted one");
    assert!(seen_files.iter().any(|text| text == LIB), "one review saw the unplanted change");
    let planted = seen_files.iter().find(|text| *text != LIB).unwrap();
    for plant in &report.plants {
        let line = planted.lines().nth(plant.line as usize - 1).unwrap();
        assert_eq!(line, plant.mutated, "the reviewer saw each plant at its line");
        assert_eq!(LIB.lines().nth(plant.line as usize - 1).unwrap(), plant.original);
    }
    let parent = git(&repo, &["rev-parse", "HEAD^"]);
    assert_eq!(std::fs::read_to_string(seen.with_extension("base")).unwrap().trim(), parent);
    assert_eq!(std::fs::read_to_string(repo.join("src/lib.rs")).unwrap(), LIB);
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    // The same seed gives the same plants.
    let again = Calibration::builder()
        .dir(&repo)
        .review_cmd("echo '[]'")
        .scorer(ScorerKind::String)
        .plants(5)
        .min_recall(0.0)
        .run()
        .unwrap();
    assert_eq!(again.plants, report.plants);
}

#[test]
fn a_commit_without_eligible_files_needs_fallback_files() {
    let (_dir, repo) = rust_repo();
    std::fs::write(repo.join("README.md"), "y\n").unwrap();
    git(&repo, &["commit", "-qam", "docs only"]);
    let error =
        Calibration::builder().dir(&repo).review_cmd("true").scorer(ScorerKind::String).run().unwrap_err();
    assert!(matches!(&error, CalibrateError::NoTargets { fallback, .. } if fallback.is_empty()), "{error}");
    assert!(error.to_string().contains("name fallback target files"), "{error}");
    assert!(!error.to_string().contains("--"), "library messages name no flags: {error}");
    let report = Calibration::builder()
        .dir(&repo)
        .review_cmd("echo '[]'")
        .files(vec!["src/lib.rs".into()])
        .scorer(ScorerKind::String)
        .min_recall(0.0)
        .run()
        .unwrap();
    assert!(report.total >= 3);
}

/// A plants file over src/calc.py with greps as witnesses, in a one-commit repository.
fn python_repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/calc.py"), "def add(a, b):\n    return a + b\n\n\ndef neg(x):\n    return -x\n\n\ndef half(x):\n    return x / 2\n").unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "calc"]);
    let plants = dir.path().join("plants.json");
    std::fs::write(
        &plants,
        r#"[
  {"file": "src/calc.py", "line": 2, "original": "a + b", "mutated": "a - b", "category": "arithmetic",
   "defect": "add subtracts", "witness": "grep -q 'a + b' src/calc.py"},
  {"file": "src/calc.py", "line": 6, "original": "-x", "mutated": "x", "category": "arithmetic",
   "defect": "neg returns its argument", "witness": "grep -q -- '-x' src/calc.py"},
  {"file": "src/calc.py", "line": 10, "original": "x / 2", "mutated": "x / 3", "category": "arithmetic",
   "defect": "half divides by three", "witness": "grep -q 'x / 2' src/calc.py"}
]"#,
    )
    .unwrap();
    (dir, repo, plants)
}

#[test]
fn judge_agreement_compares_the_judge_with_repro_verified_findings() {
    let (_dir, repo, plants) = python_repo();
    // Two findings with working repros; the judge accepts only texts that say "subtracts".
    let reviewer = r#"echo '[{"file": "src/calc.py", "line": 2, "message": "add subtracts", "repro": "grep -q \"a + b\" src/calc.py"},
        {"file": "src/calc.py", "line": 6, "message": "looks odd", "repro": "grep -q -- \"-x\" src/calc.py"},
        {"file": "src/other.py", "line": 1, "message": "unrelated"}]'"#;
    let judge = CommandJudge::new(
        r#"req=$(cat); case "$req" in *'"text":"add subtracts"'*|*'"text":"add subtracts ('*|*'neg returns its argument ('*|*'half divides by three ('*) echo '{"match": true}';; *) echo '{"match": false}';; esac"#,
    );
    let report = Calibration::builder()
        .dir(&repo)
        .review_cmd(reviewer)
        // The stand-in says the same of every checkout: its findings are not set aside as
        // made on the unplanted change too.
        .preexisting_filter(false)
        .plants_file(&plants)
        .scorer(ScorerKind::Judge)
        .judge(Box::new(judge))
        .min_recall(0.0)
        .run()
        .unwrap();
    assert_eq!((report.caught, report.total), (1, 3));
    assert_eq!((report.true_positives, report.false_positives), (1, 1));
    assert_eq!(report.precision, Some(0.5));
    assert_eq!(report.judge_agreement, Some(0.5), "two repro-verified findings, the judge agreed on one");
    assert_eq!(report.plants[0].status, PlantStatus::Caught);
    assert_eq!(report.plants[1].status, PlantStatus::Missed);
}

#[test]
fn a_judge_that_answers_garbage_stops_the_run_and_never_matches() {
    let (_dir, repo, plants) = python_repo();
    let error = Calibration::builder()
        .dir(&repo)
        .review_cmd("echo '[]'")
        .plants_file(&plants)
        .scorer(ScorerKind::Judge)
        .judge(Box::new(CommandJudge::new("cat >/dev/null; echo maybe")))
        .run()
        .unwrap_err();
    assert!(matches!(error, CalibrateError::Judge(JudgeError::NotJson { .. })), "{error:?}");
    let source = std::error::Error::source(&error).map(ToString::to_string).unwrap_or_default();
    assert!(source.contains("not JSON"), "the judge's error is the source: {source}");
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
}

#[test]
fn trials_report_mean_recall_and_each_trial() {
    let (dir, repo, plants) = python_repo();
    // Catches the first plant in the first review it makes only (one job: one review at a
    // time, in an order drawn for the run), so in one trial of the two.
    let counter = dir.path().join("count");
    let reviewer = format!(
        r#"if [ -e {0} ]; then echo '[]'; else touch {0}; echo '[{{"file": "src/calc.py", "line": 2, "message": "m", "repro": "grep -q \"a + b\" src/calc.py"}}]'; fi"#,
        counter.display()
    );
    let report = Calibration::builder()
        .dir(&repo)
        .review_cmd(reviewer)
        // The stand-in says the same of every checkout: its findings are not set aside as
        // made on the unplanted change too.
        .preexisting_filter(false)
        .plants_file(&plants)
        .scorer(ScorerKind::Repro)
        .trials(2)
        .jobs(1)
        .min_recall(0.0)
        .run()
        .unwrap();
    assert_eq!(report.trials.len(), 2);
    let mut caught = [report.trials[0].caught, report.trials[1].caught];
    caught.sort_unstable();
    assert_eq!(caught, [0, 1]);
    assert_eq!((report.caught, report.total), (1, 6));
    assert!((report.recall - 1.0 / 6.0).abs() < 1e-9);
    let interval = report.recall_interval.unwrap();
    assert!(interval.low < report.recall && report.recall < interval.high);
}

#[test]
fn recover_with_no_journal_is_nothing_to_do() {
    let (_dir, repo, _plants) = python_repo();
    assert_eq!(revcal_calibrate::recover(&repo).unwrap(), Recovered::NothingToRecover);
    let plain = tempfile::tempdir().unwrap();
    assert!(matches!(
        Calibration::builder().dir(plain.path()).review_cmd("true").run(),
        Err(CalibrateError::NotARepository { .. })
    ));
}

#[test]
fn judge_agreement_is_measured_without_witnesses_too() {
    let (dir, repo, _) = python_repo();
    let plants = dir.path().join("plain.yaml");
    std::fs::write(
        &plants,
        "- {file: src/calc.py, line: 2, original: a + b, mutated: a - b, defect: add subtracts}\n- {file: src/calc.py, line: 6, original: '-x', mutated: x, defect: neg returns its argument}\n",
    )
    .unwrap();
    let reviewer = r#"echo '[{"file": "src/calc.py", "line": 2, "message": "add subtracts", "repro": "grep -q \"a + b\" src/calc.py"}]'"#;
    let judge = CommandJudge::new(
        r#"req=$(cat); case "$req" in *'"text":"add subtracts'*|*'"text":"neg returns its argument ('*) echo '{"match": true}';; *) echo '{"match": false}';; esac"#,
    );
    let report = Calibration::builder()
        .dir(&repo)
        .review_cmd(reviewer)
        // The stand-in says the same of every checkout: its findings are not set aside as
        // made on the unplanted change too.
        .preexisting_filter(false)
        .plants_file(&plants)
        .scorer(ScorerKind::Judge)
        .judge(Box::new(judge))
        .min_plants(2)
        .run()
        .unwrap();
    assert_eq!((report.caught, report.total), (1, 2));
    assert_eq!(report.judge_agreement, Some(1.0));
    assert!(report.gate_pass);
}

#[test]
fn a_plants_file_nested_past_the_limit_is_refused_before_it_is_deserialized() {
    // 100,000 levels took serde_yaml 15 s; the nesting is now checked on the parser's events.
    let (dir, repo, _plants) = python_repo();
    let deep = dir.path().join("deep.yaml");
    std::fs::write(&deep, format!("- file: src/calc.py\n  line: {}\n", "[".repeat(100_000))).unwrap();
    let error = Calibration::builder()
        .dir(&repo)
        .review_cmd("echo '[]'")
        .plants_file(&deep)
        .scorer(ScorerKind::Repro)
        .run()
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("deep.yaml") && message.contains("line 2: nested deeper than 64 levels"),
        "{message}"
    );
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
}

#[test]
fn a_plants_file_past_the_size_limit_is_refused_naming_the_limit() {
    let (_dir, repo, _plants) = python_repo();
    let error = Calibration::builder()
        .dir(&repo)
        .review_cmd("echo '[]'")
        .plants_file("/dev/zero")
        .scorer(ScorerKind::Repro)
        .run()
        .unwrap_err();
    assert!(error.to_string().contains("/dev/zero: larger than the limit of 16 MiB"), "{error}");
}

/// A project whose only sites for a neutral edit are three comparisons (lines 6, 10, 14).
fn comparisons_repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(
        repo.join("src/calc.py"),
        "def add(a, b):\n    return a + b\n\n\ndef less(a, b):\n    return a < b\n\n\ndef more(c, d):\n    return c > d\n\n\ndef same(e, f):\n    return e == f\n",
    )
    .unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "calc"]);
    let plants = dir.path().join("plants.json");
    std::fs::write(
        &plants,
        r#"[{"file": "src/calc.py", "line": 2, "original": "a + b", "mutated": "a - b", "category": "arithmetic"}]"#,
    )
    .unwrap();
    (dir, repo, plants)
}

#[test]
fn clean_rounds_review_neutral_edits_and_count_false_alarms_over_clean_changes() {
    let (_dir, repo, plants) = comparisons_repo();
    // A finding 3 lines from the `e == f` edit (line 14) and more than 3 from the others.
    let reviewer = r#"echo '[{"file": "./src/calc.py", "line": 17, "message": "equality looks wrong"}]'"#;
    let report = Calibration::builder()
        .dir(&repo)
        .review_cmd(reviewer)
        // The stand-in says the same of every checkout: its findings are not set aside as
        // made on the unplanted change too.
        .preexisting_filter(false)
        .plants_file(&plants)
        .scorer(ScorerKind::String)
        .min_plants(1)
        .min_recall(0.0)
        .clean_rounds(5)
        .trials(2)
        .jobs(2)
        // The `a < b` edit (written `b > a`) does not "build": it is excluded with the reason.
        .build_check(BuildCheck::Command("! grep -q 'b > a' src/calc.py".into()))
        .run()
        .unwrap();
    let clean = report.clean_rounds.clone().unwrap();
    assert_eq!((clean.requested, clean.changes), (5, 2));
    assert_eq!(clean.excluded.len(), 1);
    assert_eq!((clean.excluded[0].file.as_str(), clean.excluded[0].line), ("src/calc.py", 6));
    assert!(clean.excluded[0].reason.starts_with("build: "), "{:?}", clean.excluded[0]);
    assert!(
        report.warnings.iter().any(|w| w.starts_with("5 clean rounds were asked for, 2 ran")),
        "{:?}",
        report.warnings
    );
    // One planted round, then the two clean ones, each reviewed in both trials.
    assert_eq!(report.rounds.len(), 3);
    assert_eq!(report.rounds[0].plants.len(), 1);
    let mut touched: Vec<u32> = report.rounds[1..].iter().map(|round| round.touched[0].first).collect();
    touched.sort_unstable();
    assert_eq!(touched, [10, 14]);
    for round in &report.rounds[1..] {
        assert_eq!(round.trials.len(), 2);
        for trial in &round.trials {
            assert_eq!(trial.flagged, round.touched[0].first == 14, "{round:?}");
            assert_eq!(trial.findings.len(), 1, "the located finding is kept");
        }
    }
    // The false-alarm rate is over clean changes: 2 of 4 clean reviews, Wilson at n = 2.
    assert_eq!((report.false_alarms, report.clean_reviews), (Some(2), Some(4)));
    assert_eq!(report.false_alarm_rate, Some(0.5));
    let interval = report.false_alarm_interval.unwrap();
    let (z, n, p) = (1.959_963_984_540_054_f64, 2.0, 0.5);
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
    assert!(
        (interval.low - (0.5 - half)).abs() < 1e-9 && (interval.high - (0.5 + half)).abs() < 1e-9,
        "{interval:?}"
    );
    // Clean reviews do not enter the plants' figures.
    assert_eq!(
        (report.caught, report.total, report.false_positives),
        (0, 2, 2),
        "one finding far from the plant per trial"
    );
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
}

#[test]
fn without_clean_rounds_the_report_has_no_false_alarm_figures_but_lists_its_rounds() {
    let (_dir, repo, plants) = comparisons_repo();
    let report = Calibration::builder()
        .dir(&repo)
        .review_cmd("echo LGTM")
        .plants_file(&plants)
        .scorer(ScorerKind::String)
        .min_plants(1)
        .min_recall(0.0)
        .run()
        .unwrap();
    let json = serde_json::to_value(&report).unwrap();
    for key in ["cleanRounds", "falseAlarms", "cleanReviews", "falseAlarmRate", "falseAlarmInterval"] {
        assert!(json.get(key).is_none(), "{key} in a run without clean rounds");
    }
    assert_eq!(json["reviewer"], "echo LGTM");
    assert_eq!(json["rounds"][0]["plants"][0]["line"], 2);
    assert_eq!(json["rounds"][0]["trials"][0]["statuses"][0], "missed");
    assert_eq!(json["rounds"][0]["trials"][0]["flagged"], false);
}
