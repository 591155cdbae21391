//! Top-level code that used to re-parse the whole file for every mutant: a data table at
//! the top of a file is checked element by element, and what comes out still parses.

use revcal_mutate::{Mutant, Options, analyze, apply, generate_mutants};
use std::path::Path;

fn mutants(path: &str, source: &str) -> Vec<Mutant> {
    generate_mutants(Path::new(path), source, &Options::default()).expect("the file is mutated")
}

/// Applies every `step`-th mutant and parses the result with the language's grammar.
fn assert_sample_parses(source: &str, mutants: &[Mutant], language: tree_sitter::Language, step: usize) {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&language).unwrap();
    for mutant in mutants.iter().step_by(step) {
        let mutated = apply(source, std::slice::from_ref(mutant)).unwrap();
        let tree = parser.parse(&mutated, None).unwrap();
        assert!(!tree.root_node().has_error(), "{} at line {} breaks the file", mutant.operator, mutant.line);
    }
}

#[test]
fn a_javascript_table_of_eight_thousand_rows_is_checked_row_by_row() {
    // 8,000 rows (275 KB) took minutes: every mutant re-parsed the whole declaration.
    let rows: Vec<String> =
        (0..8_000).map(|i| format!("  [{i}, {} + 1, 'name{i}', {}]", i + 1, i % 7 == 0)).collect();
    let source = format!("const TABLE = [\n{}\n];\nmodule.exports = TABLE;\n", rows.join(",\n"));
    let found = mutants("table.js", &source);
    let rows_hit = found.iter().map(|m| m.line).collect::<std::collections::BTreeSet<_>>().len();
    assert!(rows_hit >= 7_000, "mutants on most rows: {rows_hit}");
    assert!(found.iter().any(|m| m.line == 8_001), "the last row is mutated too");
    assert_sample_parses(&source, &found, tree_sitter_javascript::LANGUAGE.into(), 97);
}

#[test]
fn a_python_list_of_four_thousand_tuples_is_checked_tuple_by_tuple() {
    let rows: Vec<String> =
        (0..4_000).map(|i| format!("    ({i}, {} - 1, 'n{i}', {})", i + 1, i % 2 == 0)).collect();
    let source = format!("TABLE = [\n{}\n]\n", rows.join(",\n"));
    let found = mutants("table.py", &source);
    assert!(found.len() >= 4_000, "{} mutants", found.len());
    assert!(found.iter().any(|m| m.line == 4_001));
    assert_sample_parses(&source, &found, tree_sitter_python::LANGUAGE.into(), 53);
}

#[test]
fn eight_thousand_nested_brackets_are_mutated_down_to_the_depth_limit_with_a_warning() {
    // Every level's proposal looked up its parent from the root: seconds for 16 KB.
    let source = format!("const x = {}a + 1{};\n", "[".repeat(8_000), "]".repeat(8_000));
    let analysis = analyze(Path::new("nested.js"), &source, &Options::default()).unwrap();
    let deep: Vec<_> =
        analysis.warnings.iter().filter(|w| w.message.contains("nested deeper than 512")).collect();
    assert_eq!(deep.len(), 1, "{:?}", analysis.warnings);
    assert!(!analysis.mutants.is_empty() && analysis.mutants.len() < 600, "{}", analysis.mutants.len());
    assert!(analysis.mutants.iter().all(|m| m.operator == "empty-collection"));
    assert_sample_parses(&source, &analysis.mutants, tree_sitter_javascript::LANGUAGE.into(), 7);
}
