//! The bodies of revcal's fuzz targets. `fuzz/` (run with `cargo xtask fuzz` or
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET`) calls them with the fuzzer's input, and this
//! crate's tests feed them every file of `fuzz/seeds/<target>/`, so an ordinary
//! `cargo test` replays what the fuzzer found on the stable toolchain.
//!
//! Each body takes arbitrary bytes and panics only when revcal breaks a promise: a library
//! that panics on input, a diagnostic outside its document, a mutant that no longer parses.
//!
//! ```
//! revcal_fuzz_targets::findings(b"src/a.rs:3: `<` should be `<=`");
//! revcal_fuzz_targets::mutate(b"\x01def f(a):\n    return a + 1\n");
//! ```

mod checkout;

pub use checkout::checkout;

use std::path::Path;
use std::sync::{Mutex, OnceLock};

use revcal_mutate::{Options, apply, generate_mutants};
use revcal_rubric_repo::{Linter, Repository};
use revcal_score::{Reviews, Scorer, parse_document};

/// A target's body: arbitrary bytes in, a panic when revcal breaks a promise.
pub type Target = fn(&[u8]);

/// The targets by name, as `fuzz/fuzz_targets/<name>.rs` and `fuzz/seeds/<name>/` call them.
pub const TARGETS: [(&str, Target); 8] = [
    ("rubric", rubric),
    ("review", review),
    ("findings", findings),
    ("plants", plants),
    ("message", message),
    ("mutate", mutate),
    ("shards", shards),
    ("checkout", checkout),
];

/// A rubric file: every diagnostic lies inside the document.
pub fn rubric(data: &[u8]) {
    static LINTER: OnceLock<Option<Linter>> = OnceLock::new();
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Some(linter) = LINTER.get_or_init(|| Linter::new().ok()) else {
        panic!("the linter cannot be built")
    };
    let report = linter.lint_sources(&[("fuzz.yaml", text)]);
    let lines = text.split('\n').count().max(1);
    for diagnostic in &report.diagnostics {
        assert!(
            (1..=lines).contains(&diagnostic.line) && diagnostic.column >= 1,
            "diagnostic at {}:{} outside a document of {lines} lines: {}",
            diagnostic.line,
            diagnostic.column,
            diagnostic.message
        );
    }
}

/// A review or council scored against the shipped `code_review_v1`: parsing and scoring
/// return errors, never panic, and every evaluation serialises.
pub fn review(data: &[u8]) {
    static RUBRICS: OnceLock<Repository> = OnceLock::new();
    let Ok(text) = std::str::from_utf8(data) else { return };
    let repository = RUBRICS.get_or_init(|| {
        let source = include_str!("../../../rubrics/code_review_v1.yaml");
        Repository::from_sources(&[("code_review_v1.yaml", source)]).expect("the shipped rubric loads")
    });
    let rubric = repository.get("code_review_v1").expect("the shipped rubric is there");
    let scorer = Scorer::new(&rubric).expect("the shipped rubric scores");
    let Ok(document) = parse_document(text, None) else { return };
    let evaluation = match &document.reviews {
        Reviews::Single(review) => {
            scorer.score(review, Some(text)).map(|e| serde_json::to_value(e).map(drop))
        }
        Reviews::Council(members) => {
            scorer.score_council(members, Some(text)).map(|e| serde_json::to_value(e).map(drop))
        }
    };
    if let Ok(serialised) = evaluation {
        serialised.expect("an evaluation serialises");
    }
}

/// A reviewer's output: the parser never fails, and a finding's line, when read, is 1 or more.
pub fn findings(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let parsed = revcal_findings::parse_findings(&text);
    assert!(parsed.format.is_some() || parsed.findings.is_empty());
    for finding in &parsed.findings {
        assert!(finding.line.is_none_or(|line| line >= 1), "line 0 in {finding:?}");
    }
}

/// A plants file's text, as YAML and as JSON: an error or a count, never a panic.
pub fn plants(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = revcal_calibrate::check_plants_text(text, Path::new("plants.yaml"));
    let _ = revcal_calibrate::check_plants_text(text, Path::new("plants.json"));
}

/// Shard result files and their merge (`revcal calibrate merge`): the input is split at NUL
/// bytes into up to four files, each read as a shard result; merging them, checking gates
/// and pooling the report give an error or a report, never a panic, and a merged report's
/// figures hold together.
pub fn shards(data: &[u8]) {
    let files: Vec<(std::path::PathBuf, revcal_suite::ShardResult)> = data
        .split(|byte| *byte == 0)
        .take(4)
        .enumerate()
        .filter_map(|(index, part)| {
            let path = std::path::PathBuf::from(format!("shard-{index}.json"));
            let text = std::str::from_utf8(part).ok()?;
            revcal_suite::ShardResult::from_json(text, &path).ok().map(|shard| (path, shard))
        })
        .collect();
    if files.is_empty() {
        return;
    }
    let Ok(merged) = revcal_suite::merge(files) else { return };
    let _ = merged.require_gates(revcal_calibrate::Gates { min_recall: 0.5, min_precision: None }, 0.05);
    let report = merged.report();
    assert!(report.caught <= report.total, "caught {} of {}", report.caught, report.total);
    assert!((0.0..=1.0).contains(&report.recall), "recall {}", report.recall);
    let units: usize = merged.entries.iter().map(|entry| entry.trials).sum();
    assert_eq!(report.suite.as_ref().map(|suite| suite.units), Some(units));
    let _ = revcal_report::render_human(&report, false);
}

/// A protocol message: parsing never panics, a message that parses has the id of its
/// canonical form and parses again from it, and a ledger answers it without panicking.
pub fn message(data: &[u8]) {
    static LEDGER: OnceLock<Option<(tempfile::TempDir, Mutex<revcal_elo::Ledger>)>> = OnceLock::new();
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(message) = revcal_elo::SignedMessage::parse(text) {
        let again = revcal_elo::SignedMessage::parse(message.canonical()).expect("the canonical form parses");
        assert_eq!(again.id, message.id, "the id is the canonical form's");
    }
    let ledger = LEDGER.get_or_init(|| {
        let dir = tempfile::tempdir().ok()?;
        let ledger = revcal_elo::Ledger::open(dir.path().join("fuzz.sqlite")).ok()?;
        Some((dir, Mutex::new(ledger)))
    });
    let Some((_, ledger)) = ledger else { panic!("no ledger in a temporary directory") };
    let mut ledger = ledger.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    ledger.handle(text).expect("the ledger answers, whatever the message");
}

/// Source text in Rust, JavaScript or Python (the first byte chooses): every mutant applies,
/// and in a file that parses cleanly every mutant parses cleanly too.
pub fn mutate(data: &[u8]) {
    let Some((&choice, rest)) = data.split_first() else { return };
    let Ok(source) = std::str::from_utf8(rest) else { return };
    let (path, language): (&str, tree_sitter::Language) = match choice % 3 {
        0 => ("fuzz.rs", tree_sitter_rust::LANGUAGE.into()),
        1 => ("fuzz.py", tree_sitter_python::LANGUAGE.into()),
        _ => ("fuzz.js", tree_sitter_javascript::LANGUAGE.into()),
    };
    let Ok(mutants) = generate_mutants(Path::new(path), source, &Options::default()) else { return };
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&language).expect("the grammar loads");
    let clean = parser.parse(source, None).is_some_and(|tree| !tree.root_node().has_error());
    for mutant in &mutants {
        let mutated = apply(source, std::slice::from_ref(mutant)).expect("a mutant applies to its source");
        if clean {
            let tree = parser.parse(&mutated, None).expect("tree-sitter parses");
            assert!(
                !tree.root_node().has_error(),
                "{} at {}:{} (`{}` -> `{}`) does not parse:\n{mutated}",
                mutant.operator,
                mutant.line,
                mutant.column,
                mutant.original,
                mutant.replacement
            );
        }
    }
}
