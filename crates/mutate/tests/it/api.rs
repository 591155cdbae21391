//! The public API's promises: JSON keys, positions, selection, apply, bad input.

use proptest::prelude::*;
use revcal_mutate::{
    Category, Language, Mutant, MutateError, Options, analyze, apply, generate_mutants, select,
};
use std::collections::BTreeSet;
use std::path::Path;

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
    let flag = true;
    if flag == false { total = base - 1; }
    Ok(total)
}
"#;

fn rust_mutants() -> Vec<Mutant> {
    generate_mutants(Path::new("src/process.rs"), RUST, &Options::default()).unwrap()
}

#[test]
fn json_has_exactly_the_spec_keys_in_order() {
    let mutants = rust_mutants();
    let json = serde_json::to_value(&mutants[0]).unwrap();
    let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
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
            "mutated_line"
        ]
    );
    assert_eq!(json["language"], "rust");
    let back: Vec<Mutant> = serde_json::from_str(&serde_json::to_string(&mutants).unwrap()).unwrap();
    assert_eq!(back, mutants);
}

#[test]
fn every_category_appears_in_a_small_rust_function() {
    let categories: BTreeSet<Category> = rust_mutants().iter().map(|mutant| mutant.category).collect();
    assert_eq!(categories, Category::ALL.into_iter().collect());
}

#[test]
fn positions_and_lines_agree_with_the_source() {
    for mutant in rust_mutants() {
        assert_eq!(&RUST[mutant.start_byte..mutant.end_byte], mutant.original);
        let line_start = RUST[..mutant.start_byte].rfind('\n').map_or(0, |at| at + 1);
        assert_eq!(RUST[..line_start].matches('\n').count() + 1, mutant.line);
        assert_eq!(RUST[line_start..mutant.start_byte].chars().count() + 1, mutant.column);
        let applied = apply(RUST, std::slice::from_ref(&mutant)).unwrap();
        assert!(applied[line_start..].starts_with(&mutant.mutated_line), "{mutant:#?}");
        assert!(
            mutant.description.starts_with('`') && mutant.description.ends_with('.'),
            "{}",
            mutant.description
        );
        assert_eq!(mutant.language, Language::Rust);
    }
}

#[test]
fn columns_count_characters() {
    let source = "def f(x):\n    return \"é\" if x < 1 else x\n";
    let mutants = generate_mutants(Path::new("f.py"), source, &Options::default()).unwrap();
    let boundary = mutants.iter().find(|mutant| mutant.operator == "comparison-boundary").unwrap();
    assert_eq!((boundary.line, boundary.column), (2, 21)); // 22 if `é` counted as its two bytes
    assert_eq!(boundary.start_byte, source.find('<').unwrap());
}

#[test]
fn options_filter_categories_and_operators() {
    let only = Options { categories: vec![Category::Arithmetic], ..Options::default() };
    let mutants = generate_mutants(Path::new("a.rs"), RUST, &only).unwrap();
    assert!(!mutants.is_empty() && mutants.iter().all(|mutant| mutant.category == Category::Arithmetic));
    let without = Options { exclude_operators: vec!["zero-one-swap".into()], ..Options::default() };
    let mutants = generate_mutants(Path::new("a.rs"), RUST, &without).unwrap();
    assert!(mutants.iter().all(|mutant| mutant.operator != "zero-one-swap"));
    assert!(rust_mutants().iter().any(|mutant| mutant.operator == "zero-one-swap"));
}

#[test]
fn sample_of_eight_is_stratified_non_overlapping_and_one_per_line() {
    let mutants = rust_mutants();
    let sample = select(&mutants, 8, 1);
    assert_eq!(sample.len(), 8);
    let categories: BTreeSet<Category> = sample.iter().map(|mutant| mutant.category).collect();
    assert_eq!(categories.len(), 8, "8 categories round-robin: {categories:?}");
    let mut lines = BTreeSet::new();
    for (index, mutant) in sample.iter().enumerate() {
        for line in mutant.line..=mutant.end_line {
            assert!(lines.insert(line), "two mutants on line {line}");
        }
        for other in &sample[index + 1..] {
            assert!(!mutant.overlaps(other));
        }
    }
    assert_eq!(sample, select(&mutants, 8, 1));
    let seeds: BTreeSet<Vec<String>> =
        (0..6).map(|seed| select(&mutants, 8, seed).into_iter().map(|m| m.id).collect()).collect();
    assert!(seeds.len() > 1, "different seeds give different samples");
    let planted = apply(RUST, &sample).unwrap();
    assert_ne!(planted, RUST);
}

#[test]
fn apply_refuses_overlaps_and_stale_mutants() {
    let mutants = rust_mutants();
    let wide = mutants.iter().find(|mutant| mutant.operator == "negate-condition").unwrap();
    let inner = mutants
        .iter()
        .find(|mutant| {
            mutant.id != wide.id && mutant.start_byte >= wide.start_byte && mutant.end_byte <= wide.end_byte
        })
        .unwrap();
    let error = apply(RUST, &[wide.clone(), inner.clone()]).unwrap_err();
    assert!(matches!(error, MutateError::Overlap { .. }), "{error}");
    assert!(error.to_string().contains(&wide.id) && error.to_string().contains(&inner.id));

    let stale = apply(&RUST.replace("limit", "LIMIT"), std::slice::from_ref(wide)).unwrap_err();
    assert!(matches!(stale, MutateError::OriginalMismatch { .. }), "{stale}");
    let beyond = apply("fn f() {}", std::slice::from_ref(wide)).unwrap_err();
    assert!(
        matches!(beyond, MutateError::OutOfRange { .. })
            || matches!(beyond, MutateError::OriginalMismatch { .. })
    );
}

#[test]
fn ids_are_stable_across_runs_and_unique() {
    let first: Vec<String> = rust_mutants().into_iter().map(|mutant| mutant.id).collect();
    let second: Vec<String> = rust_mutants().into_iter().map(|mutant| mutant.id).collect();
    assert_eq!(first, second);
    assert_eq!(first.iter().collect::<BTreeSet<_>>().len(), first.len());
}

#[test]
fn broken_files_warn_and_keep_mutants_out_of_the_broken_region() {
    let source = "def ok(a, b):\n    return a < b\n\ndef broken(:\n    return 1 + 1\n\ndef fine(x):\n    return x == 0\n";
    let analysis = analyze(Path::new("pkg/mod.py"), source, &Options::default()).unwrap();
    assert!(!analysis.warnings.is_empty());
    let warning = analysis.warnings[0].to_string();
    assert!(warning.starts_with("pkg/mod.py:4:"), "{warning}");
    assert!(analysis.mutants.iter().all(|mutant| mutant.line != 4));
    assert!(analysis.mutants.iter().any(|mutant| mutant.line == 2), "the intact function is mutated");
}

#[test]
fn empty_unknown_and_oversized_input() {
    assert!(generate_mutants(Path::new("empty.rs"), "", &Options::default()).unwrap().is_empty());
    let unknown = generate_mutants(Path::new("notes.txt"), "a < b", &Options::default()).unwrap_err();
    assert!(unknown.to_string().starts_with("notes.txt: unsupported file type"), "{unknown}");
    let big =
        format!("{}def f(a):\n    return a < 1\n", "# filler line of a generated file\n".repeat(150_000));
    assert!(big.len() > 5_000_000);
    let refused = generate_mutants(Path::new("big.py"), &big, &Options::default()).unwrap_err();
    assert!(matches!(refused, MutateError::FileTooLarge { .. }), "{refused}");
    assert!(refused.to_string().contains("big.py") && refused.to_string().contains("max_file_bytes"));
    let raised = Options { max_file_bytes: 8 << 20, ..Options::default() };
    let mutants = generate_mutants(Path::new("big.py"), &big, &raised).unwrap();
    assert!(mutants.iter().any(|mutant| mutant.operator == "comparison-boundary" && mutant.line == 150_002));
}

fn code_like() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "if ",
        "x",
        "y",
        " < ",
        " <= ",
        " == ",
        " && ",
        " and ",
        " or ",
        "!",
        "not ",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        ":",
        ";",
        "\n",
        "    ",
        "return ",
        "0",
        "1",
        "+ 1",
        "- 1",
        "true",
        "True",
        "null",
        "None",
        "?",
        "?.",
        "??",
        "\"s",
        "'",
        "#",
        "//",
        "/*",
        "*/",
        "fn f() ",
        "def f():",
        "function f() ",
        "raise E",
        "throw e;",
        "try {",
        "} catch (e) {",
        "except E:",
        ".unwrap_or(1)",
        ".close();",
        " += ",
        "..",
        "é",
        "\t",
    ]);
    prop::collection::vec(token, 0..80).prop_map(|tokens| tokens.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// No input makes the engine panic; whatever it returns is consistent with the source.
    #[test]
    fn arbitrary_source_never_panics(text in prop_oneof![code_like(), any::<String>()], ext in prop::sample::select(vec!["rs", "js", "mjs", "py"])) {
        let path = format!("src/input.{ext}");
        let mutants = generate_mutants(Path::new(&path), &text, &Options::default()).unwrap();
        for mutant in &mutants {
            prop_assert_eq!(&text[mutant.start_byte..mutant.end_byte], mutant.original.as_str());
            apply(&text, std::slice::from_ref(mutant)).unwrap();
        }
        let sample = select(&mutants, 5, 9);
        apply(&text, &sample).unwrap();
    }
}
