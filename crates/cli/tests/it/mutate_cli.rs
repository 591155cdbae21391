//! `revcal mutate ...` run as a user runs it: a real process over real files (and a real git
//! repository for `--in-diff`), checking output formats, filters, samples and bad input.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

fn revcal_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_revcal"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .output()
        .expect("revcal runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

const RUST: &str = r#"pub fn process(items: &mut Vec<u32>, limit: u32, cache: Option<u32>) -> Result<u32, String> {
    let mut total = 0;
    for i in 0..items.len() {
        if items[i] > limit && !items.is_empty() {
            total += items[i] * 2;
        }
    }
    if cache.is_none() {
        return Err("empty".to_string());
    }
    let base = cache.unwrap_or(1);
    let file = std::fs::File::open("x").map_err(|e| e.to_string())?;
    drop(file);
    items.push(total + 1);
    if base == 0 { total = base - 1; }
    Ok(total)
}
"#;

const JS: &str = "export function pick(items, limit, opts) {
  const port = opts?.port ?? 8080;
  for (let i = 0; i < items.length; i++) {
    if (items[i] === null || items[i] > limit) {
      throw new Error('bad item ' + i);
    }
  }
  const timer = setTimeout(() => {}, 10);
  clearTimeout(timer);
  if (!opts) return port + limit;
  let total = 0;
  total += port * 2;
  try { total = total - 1; } catch (e) { console.error(e); }
  return total > 0 ? [total] : [];
}
";

const PY: &str = "def pick(items, limit, default=None):
    total = 0
    for i in range(len(items)):
        if items[i] is None:
            raise ValueError('missing')
        if items[i] > limit and i != 0:
            total += items[i] * 2
    if not items:
        return limit - 1
    name = default or 'anon'
    handle = open(name)
    handle.close()
    try:
        total = total - 1
    except OSError:
        raise
    return [total] if total > 1 else []
";

/// A small project: one file per language, a test file, a README, an ignored file.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("tests")).unwrap();
    std::fs::write(root.join("src/lib.rs"), RUST).unwrap();
    std::fs::write(root.join("src/app.js"), JS).unwrap();
    std::fs::write(root.join("src/tool.py"), PY).unwrap();
    std::fs::write(root.join("tests/test_tool.py"), "def test_x():\n    assert 1 + 1 == 2\n").unwrap();
    std::fs::write(root.join("README.md"), "# demo\n").unwrap();
    std::fs::write(root.join(".gitignore"), "generated/\n").unwrap();
    std::fs::create_dir_all(root.join("generated")).unwrap();
    std::fs::write(root.join("generated/out.js"), "if (a < b) { f(); }\n").unwrap();
    dir
}

fn json_mutants(dir: &Path, args: &[&str]) -> Vec<Value> {
    let output = revcal_in(dir, args);
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_str::<Value>(&stdout(&output)).unwrap().as_array().unwrap().clone()
}

#[test]
fn text_lines_name_position_category_operator_and_change() {
    let dir = project();
    let output = revcal_in(dir.path(), &["mutate", "src/lib.rs"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("src/lib.rs:4:21 [off-by-one/comparison-boundary] > -> >=\n"), "{text}");
    assert!(
        // A removed statement takes its whole line: it starts at column 1.
        text.contains("src/lib.rs:13:1 [resource-cleanup/cleanup-call-removed] drop(file); -> (removed)\n"),
        "{text}"
    );
    assert!(!text.contains('\x1b'), "no colour when stdout is not a terminal");
}

#[test]
fn json_keys_bytes_and_mutated_lines() {
    let dir = project();
    let mutants = json_mutants(dir.path(), &["mutate", "src", "--json"]);
    let expected = [
        "id",
        "file",
        "language",
        "line",
        "column",
        "end_line",
        "end_column",
        "start_byte",
        "end_byte",
        "category",
        "operator",
        "description",
        "original",
        "replacement",
        "original_line",
        "mutated_line",
    ];
    let files: BTreeSet<&str> = mutants.iter().map(|m| m["file"].as_str().unwrap()).collect();
    assert_eq!(
        files,
        BTreeSet::from(["src/app.js", "src/lib.rs", "src/tool.py"]),
        "walked, ignored and test files left out"
    );
    for mutant in &mutants {
        let keys: Vec<&str> = mutant.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, expected);
        let source = std::fs::read_to_string(dir.path().join(mutant["file"].as_str().unwrap())).unwrap();
        let start = mutant["start_byte"].as_u64().unwrap() as usize;
        let end = mutant["end_byte"].as_u64().unwrap() as usize;
        assert_eq!(&source[start..end], mutant["original"].as_str().unwrap());
        let line_start = source[..start].rfind('\n').map_or(0, |at| at + 1);
        let applied =
            format!("{}{}{}", &source[..start], mutant["replacement"].as_str().unwrap(), &source[end..]);
        assert!(applied[line_start..].starts_with(mutant["mutated_line"].as_str().unwrap()), "{mutant}");
        assert_eq!(source[..start].matches('\n').count() + 1, mutant["line"].as_u64().unwrap() as usize);
    }
}

#[test]
fn stryker_format_validates_against_the_report_schema() {
    let dir = project();
    let output = revcal_in(dir.path(), &["mutate", "src", "--format", "stryker"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let schema_path =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../mutate/tests/fixtures/mutation-testing-report-schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&report).map(|error| error.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The check can fail: a report without `thresholds` is rejected.
    let mut broken = report.clone();
    broken.as_object_mut().unwrap().remove("thresholds");
    assert!(!validator.is_valid(&broken));
    let mutant = &report["files"]["src/lib.rs"]["mutants"][0];
    assert!(mutant["description"].as_str().unwrap().starts_with('`'), "the defect sentence: {mutant}");
    assert_eq!(report["files"]["src/lib.rs"]["source"], RUST);
}

#[test]
fn sample_is_stratified_deterministic_and_seeded() {
    let dir = project();
    let args = ["mutate", "src", "--sample", "8", "--seed", "1", "--json"];
    let first = revcal_in(dir.path(), &args);
    let second = revcal_in(dir.path(), &args);
    assert_eq!(first.stdout, second.stdout, "byte-identical for the same seed");
    let sample: Vec<Value> =
        serde_json::from_slice::<Value>(&first.stdout).unwrap().as_array().unwrap().clone();
    assert_eq!(sample.len(), 8);
    let categories: BTreeSet<&str> = sample.iter().map(|m| m["category"].as_str().unwrap()).collect();
    assert_eq!(categories.len(), 8, "round-robin over categories: {categories:?}");
    let mut lines = BTreeSet::new();
    for mutant in &sample {
        let key = (mutant["file"].as_str().unwrap(), mutant["line"].as_u64().unwrap());
        assert!(lines.insert(key), "two mutants on {key:?}");
    }
    let other = revcal_in(dir.path(), &["mutate", "src", "--sample", "8", "--seed", "2", "--json"]);
    assert_ne!(first.stdout, other.stdout, "another seed, another sample");
}

#[test]
fn stats_count_every_category_per_language_and_what_was_skipped() {
    let dir = project();
    std::fs::write(dir.path().join("src/blob.py"), b"x = 1\0\x01\x02").unwrap();
    std::fs::write(dir.path().join("src/latin1.py"), b"name = '\xe9t\xe9'\n").unwrap();
    let output = revcal_in(dir.path(), &["mutate", ".", "--stats", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let stats: Value = serde_json::from_str(&stdout(&output)).unwrap();
    for language in ["rust", "javascript", "python"] {
        let categories = stats["languages"][language]["categories"].as_object().unwrap();
        assert_eq!(categories.len(), 9);
        for (category, count) in categories {
            assert!(count.as_u64().unwrap() > 0, "{language} has no {category} mutant: {stats:#}");
        }
    }
    assert_eq!(
        stats["skipped"]["unknown extension"], 1,
        "README.md (hidden files are not walked): {stats:#}"
    );
    assert_eq!(stats["skipped"]["test file"], 1);
    assert_eq!(stats["skipped"]["binary"], 1);
    assert_eq!(stats["skipped"]["invalid UTF-8"], 1);
    let errors = stderr(&output);
    assert!(errors.contains("src/blob.py: skipped: binary file"), "{errors}");
    assert!(errors.contains("src/latin1.py:1: skipped: invalid UTF-8 at byte 8"), "{errors}");
    let text = stdout(&revcal_in(dir.path(), &["mutate", ".", "--stats"]));
    assert!(text.contains("statement-deletion"), "{text}");
}

#[test]
fn filters_by_category_and_operator_and_rejects_unknown_names() {
    let dir = project();
    let only = json_mutants(dir.path(), &["mutate", "src", "--json", "--category", "arithmetic,boundary"]);
    assert!(!only.is_empty());
    assert!(only.iter().all(|m| matches!(m["category"].as_str(), Some("arithmetic" | "boundary"))));
    let without = json_mutants(
        dir.path(),
        &[
            "mutate",
            "src",
            "--json",
            "--exclude-operator",
            "zero-one-swap",
            "--exclude-category",
            "arithmetic",
        ],
    );
    assert!(without.iter().all(|m| m["operator"] != "zero-one-swap" && m["category"] != "arithmetic"));
    let one = json_mutants(dir.path(), &["mutate", "src", "--json", "--operator", "ternary-swap"]);
    assert_eq!(one.len(), 2, "one ternary in JS, one in Python");

    let bad = revcal_in(dir.path(), &["mutate", "src", "--category", "off-by-two"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("unknown category `off-by-two`") && stderr(&bad).contains("off-by-one"),
        "{}",
        stderr(&bad)
    );
    let bad = revcal_in(dir.path(), &["mutate", "src", "--operator", "nope"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("unknown operator `nope`"), "{}", stderr(&bad));
}

#[test]
fn config_file_holds_the_same_switches() {
    let dir = project();
    std::fs::write(
        dir.path().join("revcal.toml"),
        "[calibrate]\nanything = 1\n\n[mutate]\nexclude-category = [\"statement-deletion\", \"boundary\"]\nsample = 3\nseed = 5\n",
    )
    .unwrap();
    let picked = json_mutants(dir.path(), &["mutate", "src", "--json"]);
    assert_eq!(picked.len(), 3);
    assert!(picked.iter().all(|m| m["category"] != "statement-deletion" && m["category"] != "boundary"));
    let flag_wins = json_mutants(dir.path(), &["mutate", "src", "--json", "--sample", "5"]);
    assert_eq!(flag_wins.len(), 5);

    std::fs::write(dir.path().join("revcal.toml"), "[mutate]\nexclude-categories = [\"boundary\"]\n")
        .unwrap();
    let bad = revcal_in(dir.path(), &["mutate", "src"]);
    assert_eq!(bad.status.code(), Some(2));
    let message = stderr(&bad);
    assert!(message.contains("revcal.toml") && message.contains("exclude-categories"), "{message}");
}

#[test]
fn show_prints_the_unified_diff_of_one_mutant() {
    let dir = project();
    let mutants =
        json_mutants(dir.path(), &["mutate", "src/lib.rs", "--json", "--operator", "comparison-boundary"]);
    let id = mutants[0]["id"].as_str().unwrap();
    let output = revcal_in(dir.path(), &["mutate", "src/lib.rs", "--show", &id[..10]]);
    assert!(output.status.success(), "{}", stderr(&output));
    let diff = stdout(&output);
    assert!(diff.contains("--- a/src/lib.rs") && diff.contains("+++ b/src/lib.rs"), "{diff}");
    assert!(
        diff.contains("-        if items[i] > limit") && diff.contains("+        if items[i] >= limit"),
        "{diff}"
    );
    let missing = revcal_in(dir.path(), &["mutate", "src/lib.rs", "--show", "ffffffffffff"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("no mutant with id `ffffffffffff`"), "{}", stderr(&missing));
}

#[test]
fn in_diff_keeps_only_changed_lines() {
    let dir = project();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(status.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&status.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "base"]);
    let changed =
        PY.replace("        if items[i] > limit and i != 0:", "        if items[i] >= limit and i != 1:");
    std::fs::write(dir.path().join("src/tool.py"), changed).unwrap();
    std::fs::write(dir.path().join("src/new.py"), "def f(a):\n    return a < 1\n").unwrap();
    let mutants = json_mutants(dir.path(), &["mutate", "src", "--json", "--in-diff", "HEAD"]);
    let places: BTreeSet<(String, u64)> = mutants
        .iter()
        .map(|m| (m["file"].as_str().unwrap().to_string(), m["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        places,
        BTreeSet::from([("src/new.py".to_string(), 2), ("src/tool.py".to_string(), 6)]),
        "only the changed line and the new file"
    );
    let bad = revcal_in(dir.path(), &["mutate", "src", "--in-diff", "no-such-rev"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("no-such-rev"), "{}", stderr(&bad));
}

#[test]
fn broken_and_missing_input_is_reported_not_fatal() {
    let dir = project();
    std::fs::write(dir.path().join("src/broken.js"), "function ok(a) { return a < 1; }\nfunction (((\n")
        .unwrap();
    std::fs::write(dir.path().join("src/empty.py"), "").unwrap();
    let output = revcal_in(dir.path(), &["mutate", "src/broken.js", "src/empty.py"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("src/broken.js:2:"), "{}", stderr(&output));
    assert!(stdout(&output).contains("src/broken.js:1:"), "the intact line is mutated: {}", stdout(&output));

    let missing = revcal_in(dir.path(), &["mutate", "nowhere"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("nowhere: no such file or directory"), "{}", stderr(&missing));
}

#[test]
fn operator_list_covers_forty_variants_and_help_teaches() {
    let dir = project();
    let output = revcal_in(dir.path(), &["mutate", "--list-operators", "--json"]);
    assert!(output.status.success());
    let list: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let list = list.as_array().unwrap();
    assert!(list.len() >= 40, "{} operator variants", list.len());
    for language in ["rust", "javascript", "python"] {
        let categories: BTreeSet<&str> = list
            .iter()
            .filter(|op| op["language"] == language)
            .map(|op| op["category"].as_str().unwrap())
            .collect();
        assert_eq!(categories.len(), 9, "{language}: {categories:?}");
    }
    let help = stdout(&revcal_in(dir.path(), &["mutate", "--help"]));
    assert!(help.contains("--sample 8 --seed 1") && help.contains("revcal: skip"), "{help}");
}

#[test]
fn a_named_file_of_an_unsupported_kind_is_an_error_naming_what_is_supported() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "return a + b\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_revcal")).arg("mutate").arg(&notes).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(message.contains("notes.txt: not a file revcal can mutate"), "{message}");
    assert!(message.contains("python (py)"), "{message}");
    // In a directory the same file is skipped quietly, as any other file of another kind.
    let walked = Command::new(env!("CARGO_BIN_EXE_revcal")).arg("mutate").arg(dir.path()).output().unwrap();
    assert_eq!(walked.status.code(), Some(0));
}

#[test]
fn a_sample_previews_the_plants_calibrate_chooses_with_the_same_seed() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mutate/tests/fixtures/corpus");
    std::fs::create_dir(repo.join("src")).unwrap();
    for file in ["bisect.py", "ini.js"] {
        std::fs::copy(corpus.join(file), repo.join("src").join(file)).unwrap();
    }
    let git = |args: &[&str]| {
        let status = Command::new("git").args(args).current_dir(repo).status().unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "code"]);
    let revcal = |args: &[&str]| {
        let output =
            Command::new(env!("CARGO_BIN_EXE_revcal")).args(args).current_dir(repo).output().unwrap();
        serde_json::from_slice::<Value>(&output.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&output.stderr)))
    };
    for seed in ["0", "3", "11"] {
        let sample =
            revcal(&["mutate", "src/bisect.py", "src/ini.js", "--sample", "6", "--seed", seed, "--json"]);
        let mut previewed: Vec<(String, u64, String)> = sample
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["file"].as_str().unwrap().into(),
                    m["line"].as_u64().unwrap(),
                    m["mutated_line"].as_str().unwrap().into(),
                )
            })
            .collect();
        let report = revcal(&[
            "calibrate",
            "--review-cmd",
            "true",
            "--scorer",
            "string",
            "--plants",
            "6",
            "--seed",
            seed,
            "--min-plants",
            "1",
            "--json",
        ]);
        let mut planted: Vec<(String, u64, String)> = report["plants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["file"].as_str().unwrap().into(),
                    p["line"].as_u64().unwrap(),
                    p["mutated"].as_str().unwrap().into(),
                )
            })
            .collect();
        previewed.sort();
        planted.sort();
        assert_eq!(previewed.len(), 6, "seed {seed}");
        assert_eq!(previewed, planted, "seed {seed}: the same inputs give the same plants");
    }
}

/// `--realistic` (and `realistic = true` in revcal.toml) keeps the realistic profile's
/// operators, one mutant per line, and a subset of the default mutants.
#[test]
fn realistic_profile_from_the_flag_and_the_settings_file() {
    let dir = project();
    let all = json_mutants(dir.path(), &["mutate", "src", "--json"]);
    let realistic = json_mutants(dir.path(), &["mutate", "src", "--json", "--realistic"]);
    assert!(!realistic.is_empty() && realistic.len() < all.len(), "{} of {}", realistic.len(), all.len());
    let mut lines = BTreeSet::new();
    for mutant in &realistic {
        let operator = mutant["operator"].as_str().unwrap();
        assert!(revcal_mutate::REALISTIC_OPERATORS.contains(&operator), "{operator}");
        assert!(lines.insert((mutant["file"].to_string(), mutant["line"].as_u64())), "one per line");
        assert!(all.contains(mutant));
    }
    std::fs::write(dir.path().join("revcal.toml"), "[mutate]\nrealistic = true\n").unwrap();
    assert_eq!(
        json_mutants(dir.path(), &["mutate", "src", "--json"]),
        realistic,
        "the settings file says the same"
    );
}

#[test]
fn a_named_test_file_is_skipped_with_the_flag_that_mutates_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tests")).unwrap();
    std::fs::write(dir.path().join("tests/check.py"), "def total(a, b):\n    return a + b\n").unwrap();
    let output = revcal_in(dir.path(), &["mutate", "tests/check.py"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "");
    assert!(
        stderr(&output)
            .contains("no mutants: 0 file(s) read; 1 test file(s) skipped (`--include-tests` mutates them)"),
        "{}",
        stderr(&output)
    );
    let output = revcal_in(dir.path(), &["mutate", "tests/check.py", "--include-tests"]);
    assert!(
        stdout(&output).contains("tests/check.py:2:14 [arithmetic/arithmetic-swap] + -> -"),
        "{}",
        stdout(&output)
    );
}
