//! Mutants that read like real bugs: no mutant a linter flags by itself (a Python block left
//! as `pass`), no mutant that changes nothing (a clamp's boundary, a default replaced by the
//! default), and categories named for what the mutant does.

use revcal_mutate::{Mutant, Options, apply, generate_mutants};
use std::path::Path;

fn mutants(path: &str, source: &str) -> Vec<Mutant> {
    generate_mutants(Path::new(path), source, &Options::default()).expect("the file is mutated")
}

fn at(mutants: &[Mutant], line: usize) -> Vec<&str> {
    mutants.iter().filter(|m| m.line == line).map(|m| m.operator.as_str()).collect()
}

const CLAMP: &str = "\
def clamp(b, k, chunks, names):
    if b > 1.0:
        b = 1.0
    if 0 > k:
        k = 0
    del chunks[k]
    del names
    x = b * 2
    log(x)
    if b:
        print(b)
    return x
";

#[test]
fn python_deletion_removes_the_line_and_never_leaves_a_block_empty() {
    let found = mutants("clamp.py", CLAMP);
    for mutant in found.iter().filter(|m| m.operator.ends_with("-removed")) {
        assert_eq!(mutant.replacement, "", "{} deletes, never writes `pass`", mutant.operator);
        let mutated = apply(CLAMP, std::slice::from_ref(mutant)).unwrap();
        assert!(!mutated.contains("pass"), "{mutated}");
    }
    assert_eq!(at(&found, 8), ["assignment-removed", "arithmetic-swap"]);
    assert_eq!(at(&found, 9), ["call-statement-removed"]);
    // `b = 1.0`, `k = 0` and `print(b)` are alone in their blocks: no deletion.
    assert!(!at(&found, 3).contains(&"assignment-removed"), "{:?}", at(&found, 3));
    assert!(!at(&found, 5).contains(&"assignment-removed"));
    assert!(at(&found, 11).is_empty(), "{:?}", at(&found, 11));
}

#[test]
fn del_of_an_item_is_a_deletion_and_del_of_a_name_releases_a_reference() {
    let found = mutants("clamp.py", CLAMP);
    let category =
        |line| found.iter().find(|m| m.line == line).map(|m| (m.operator.as_str(), m.category.as_str()));
    assert_eq!(category(6), Some(("del-removed", "statement-deletion")));
    assert_eq!(category(7), Some(("cleanup-call-removed", "resource-cleanup")));
}

#[test]
fn a_clamp_keeps_its_boundary_but_a_plain_condition_does_not() {
    let found = mutants("clamp.py", CLAMP);
    // `if b > 1.0: b = 1.0` and `if 0 > k: k = 0` are clamps: `>=` would change nothing.
    assert!(!at(&found, 2).contains(&"comparison-boundary"), "{:?}", at(&found, 2));
    assert!(!at(&found, 4).contains(&"comparison-boundary"), "{:?}", at(&found, 4));
    let guard = "def f(b, limit):\n    if b > limit:\n        raise ValueError(b)\n    return b\n";
    assert!(at(&mutants("guard.py", guard), 2).contains(&"comparison-boundary"));
    let not_a_clamp = "def f(b, c):\n    if b > c:\n        b = c + 1\n    return b\n";
    assert!(at(&mutants("near.py", not_a_clamp), 2).contains(&"comparison-boundary"));
}

#[test]
fn rust_default_return_leaves_a_value_that_already_is_the_default() {
    let source = "\
pub struct S { v: Vec<u8> }
impl S {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn zero(&self) -> u32 {
        0
    }
    pub fn empty(&self) -> Vec<u8> {
        Vec::new()
    }
    pub fn size(&self) -> usize {
        self.v.len()
    }
    pub fn ten(&self) -> u32 {
        10
    }
}
";
    let found = mutants("lib.rs", source);
    let defaults: Vec<usize> =
        found.iter().filter(|m| m.operator == "default-return").map(|m| m.line).collect();
    assert_eq!(defaults, [13, 16], "only `self.v.len()` and `10` are not already defaults");
}

#[test]
fn rust_and_javascript_clamps_keep_their_boundary_too() {
    let rust = "\
pub fn clamp(mut x: i64, max: i64) -> i64 {
    if x > max {
        x = max;
    }
    if 0 > x { x = 0 }
    if x > max {
        x = max + 1;
    }
    x
}
";
    let found = mutants("lib.rs", rust);
    assert!(!at(&found, 2).contains(&"comparison-boundary"), "{:?}", at(&found, 2));
    assert!(!at(&found, 5).contains(&"comparison-boundary"), "{:?}", at(&found, 5));
    assert!(at(&found, 6).contains(&"comparison-boundary"), "not a clamp: {:?}", at(&found, 6));

    let javascript = "\
function clamp(x, max) {
  if (x > max) x = max;
  if (x < 0) {
    x = 0;
  }
  if (x < 0) {
    x = 0;
  } else {
    x = 1;
  }
  return x;
}
";
    let found = mutants("clamp.js", javascript);
    assert!(!at(&found, 2).contains(&"comparison-boundary"), "{:?}", at(&found, 2));
    assert!(!at(&found, 3).contains(&"comparison-boundary"), "{:?}", at(&found, 3));
    assert!(at(&found, 6).contains(&"comparison-boundary"), "an else makes it no clamp: {:?}", at(&found, 6));
}

/// The realistic profile keeps a subset of the default profile's mutants: only its
/// operators, none on a logging or printing line, at most one per line; on every corpus
/// excerpt of every language.
#[test]
fn the_realistic_profile_is_a_subset_with_one_mutant_per_line_and_no_arid_lines() {
    use revcal_mutate::{Profile, REALISTIC_OPERATORS};
    let dir = crate::util::fixtures("corpus");
    let logging = "import logging\n\ndef f(a, b):\n    logging.info('%d', a + 1)\n    print(a - 1)\n    if a < b and b > 0:\n        return a + b\n    return 0\n";
    let mut texts: Vec<(String, String)> =
        ["bisect.py", "ini.js", "lcs.rs", "util.ts", "ISO8601Utils.java", "tabwriter.go"]
            .iter()
            .map(|name| (format!("src/{name}"), std::fs::read_to_string(dir.join(name)).unwrap()))
            .collect();
    texts.push(("src/logs.py".into(), logging.into()));
    for (path, text) in &texts {
        let all = generate_mutants(Path::new(path), text, &Options::default()).unwrap();
        let realistic = Options { profile: Profile::Realistic, ..Options::default() };
        let kept = generate_mutants(Path::new(path), text, &realistic).unwrap();
        assert!(!kept.is_empty() && kept.len() < all.len(), "{path}: {} of {}", kept.len(), all.len());
        let mut lines = std::collections::HashSet::new();
        for mutant in &kept {
            assert!(all.contains(mutant), "{path}: {} is a default mutant too", mutant.id);
            assert!(REALISTIC_OPERATORS.contains(&mutant.operator.as_str()), "{path}: {}", mutant.operator);
            assert!(lines.insert(mutant.line), "{path}:{}: one mutant per line", mutant.line);
            let code = mutant.original_line.trim_start();
            assert!(!code.starts_with("logging.") && !code.starts_with("print("), "{path}: {code}");
        }
        // Every line that had a realistic-operator mutant (not a logging line) keeps one.
        let eligible: std::collections::HashSet<usize> = all
            .iter()
            .filter(|m| REALISTIC_OPERATORS.contains(&m.operator.as_str()))
            .filter(|m| {
                !m.original_line.trim_start().starts_with("logging.")
                    && !m.original_line.trim_start().starts_with("print(")
            })
            .map(|m| m.line)
            .collect();
        assert_eq!(lines, eligible, "{path}");
    }
}
