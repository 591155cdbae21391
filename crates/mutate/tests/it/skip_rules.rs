//! No mutant touches a comment, a string's contents, test code, an import, a type, a
//! `const`/`static` initialiser, a decorator or a skip-marked line; the code around them is
//! mutated. The fixtures mark forbidden lines with BEGIN-FORBIDDEN ... END-FORBIDDEN (in
//! comments) and lines holding a literal with STRING-LINE.

use crate::util::fixtures;
use revcal_mutate::{Mutant, Options, analyze, generate_mutants};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The fixture's text, and the relative path it is analysed under (the absolute path lies
/// under `tests/`, which would make every fixture a test file).
fn fixture(name: &str) -> (PathBuf, String) {
    let path = fixtures("skip").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    (PathBuf::from("src").join(name), text)
}

/// 1-based lines from each BEGIN-FORBIDDEN line to the next END-FORBIDDEN line.
fn forbidden_lines(text: &str) -> BTreeSet<usize> {
    let mut lines = BTreeSet::new();
    let mut open: Option<usize> = None;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.contains("BEGIN-FORBIDDEN") {
            open = Some(number);
        }
        if let Some(start) = open {
            lines.insert(number);
            if line.contains("END-FORBIDDEN") {
                lines.extend(start..=number);
                open = None;
            }
        }
    }
    assert!(open.is_none(), "unbalanced markers");
    lines
}

/// Byte ranges of the literal on each STRING-LINE line: from just after `= ` to the end of
/// the statement.
fn literal_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.contains("STRING-LINE") {
            let start = line.find("= ").unwrap() + 2;
            let end = line.rfind(';').or_else(|| line.find("  #")).unwrap();
            ranges.push((offset + start, offset + end));
        }
        offset += line.len();
    }
    ranges
}

fn check(name: &str) -> Vec<Mutant> {
    let (path, text) = fixture(name);
    let analysis = analyze(&path, &text, &Options::default()).unwrap();
    assert!(analysis.warnings.is_empty(), "{:?}", analysis.warnings);
    let forbidden = forbidden_lines(&text);
    assert!(!forbidden.is_empty());
    for mutant in &analysis.mutants {
        // Removed lines end just past a line break: the line they end on is not touched.
        let last = if mutant.removes_lines() { mutant.end_line - 1 } else { mutant.end_line };
        for line in mutant.line..=last {
            assert!(!forbidden.contains(&line), "{name}: mutant in a forbidden line: {mutant:#?}");
        }
        for (start, end) in literal_ranges(&text) {
            let inside = |byte: usize| byte > start && byte < end - 1;
            assert!(
                !inside(mutant.start_byte) && !inside(mutant.end_byte),
                "{name}: mutant inside a literal: {mutant:#?}"
            );
        }
    }
    analysis.mutants
}

fn operators_on_line(mutants: &[Mutant], text: &str, needle: &str) -> BTreeSet<String> {
    let line = text.lines().position(|line| line.contains(needle)).unwrap() + 1;
    mutants.iter().filter(|mutant| mutant.line == line).map(|mutant| mutant.operator.clone()).collect()
}

#[test]
fn rust_fixture_mutates_logic_and_nothing_forbidden() {
    let mutants = check("skips.rs");
    let (_, text) = fixture("skips.rs");
    assert!(operators_on_line(&mutants, &text, "if values[i] > limit").contains("comparison-boundary"));
    assert!(operators_on_line(&mutants, &text, "for i in 0..values.len()").contains("range-end"));
    let after = operators_on_line(&mutants, &text, "a <= b || a == 0");
    assert!(after.contains("and-or-swap") && after.contains("equality-flip"), "{after:?}");
    assert!(operators_on_line(&mutants, &text, "count += 1;").contains("compound-assignment-swap"));
}

#[test]
fn python_fixture_mutates_logic_and_nothing_forbidden() {
    let mutants = check("skips.py");
    let (_, text) = fixture("skips.py");
    assert!(operators_on_line(&mutants, &text, "if values[i] > limit").contains("comparison-boundary"));
    assert!(operators_on_line(&mutants, &text, "for i in range(len(values))").contains("range-end"));
    assert!(operators_on_line(&mutants, &text, "if b is None").contains("none-guard-removed"));
    let annotated = operators_on_line(&mutants, &text, "sizes: list[int] = [1, 2]");
    assert!(annotated.contains("empty-collection"), "the value is mutated: {annotated:?}");
    let line = text.lines().position(|line| line.contains("sizes: list[int]")).unwrap() + 1;
    for mutant in mutants.iter().filter(|mutant| mutant.line == line) {
        assert!(mutant.column > "    sizes: list[int] ".len(), "annotation touched: {mutant:#?}");
    }
}

#[test]
fn javascript_fixture_mutates_logic_and_nothing_forbidden() {
    let mutants = check("skips.js");
    let (_, text) = fixture("skips.js");
    assert!(operators_on_line(&mutants, &text, "i < values.length").contains("comparison-boundary"));
    assert!(operators_on_line(&mutants, &text, "if (b == null)").contains("none-guard-removed"));
    assert!(operators_on_line(&mutants, &text, "a <= b || a === 0").contains("and-or-swap"));
}

#[test]
fn test_files_yield_nothing_unless_asked() {
    for name in ["test_skips.py", "skips.test.js"] {
        let (path, text) = fixture(name);
        assert!(generate_mutants(&path, &text, &Options::default()).unwrap().is_empty(), "{name}");
        let with_tests = Options { skip_test_files: false, ..Options::default() };
        assert!(
            !generate_mutants(&path, &text, &with_tests).unwrap().is_empty(),
            "{name} with tests included"
        );
    }
}

/// Java: test methods by JUnit's annotations, comments, strings, annotations and imports are
/// never mutated; operators that could only type-check by chance are not proposed.
#[test]
fn java_skips_tests_and_types_what_it_plants() {
    let source = r#"package org.example;

import java.util.List;

public class Cart {
    private int total;
    private final String name;

    public Cart(String name) {
        this.name = name;
    }

    @Deprecated(since = "1")
    public int add(int price, int count) {
        // a comment with a < b and 0
        total += price * count;
        return total - 1;
    }

    public String label(int n) {
        return "items: " + n + 1;
    }

    public boolean isEmpty() {
        return total == 0;
    }

    public String owner() {
        if (name == null) {
            throw new IllegalStateException("no owner < 1");
        }
        return name;
    }

    public void drain() {
        while (true) {
            if (total == 0) {
                return;
            }
            total -= 1;
        }
    }

    public int parse(String text) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(text);
        }
    }

    public void log(String text) {
        try {
            total = Integer.parseInt(text);
        } catch (NumberFormatException e) {
            total = 0;
        }
    }

    @Test
    void addsUp() {
        assertEquals(3, new Cart("a").add(1, 3));
    }

    @org.junit.jupiter.api.BeforeEach
    void setUp() {
        total = 0;
    }
}
"#;
    let analysis =
        analyze(Path::new("src/main/java/org/example/Cart.java"), source, &Options::default()).unwrap();
    let mutants = &analysis.mutants;
    let line_of = |needle: &str| source.lines().position(|line| line.contains(needle)).unwrap() + 1;
    let on = |needle: &str| -> BTreeSet<&str> {
        let line = line_of(needle);
        mutants.iter().filter(|m| m.line == line).map(|m| m.operator.as_str()).collect()
    };
    // Planted where the logic is.
    assert!(on("total += price * count").contains("arithmetic-swap"));
    assert!(on("return total - 1").contains("minus-one-dropped"));
    assert!(on("return total == 0").contains("constant-return"));
    assert!(on("if (name == null)").contains("none-guard-removed"));
    assert!(on("return name;").contains("return-none"), "a String-returning method may return null");
    // Never where it could not compile or changes nothing.
    assert!(!on("total += price * count").contains("compound-assignment-swap"), "`+=` may join strings");
    assert!(!on("return \"items: \"").contains("arithmetic-swap"), "string concatenation");
    assert!(!on("return total - 1").contains("return-none"), "an int method cannot return null");
    assert!(on("throw new IllegalStateException").is_empty(), "the throw is its block's last statement");
    assert!(on("this.name = name").is_empty(), "a final field's only assignment stays");
    assert!(on("while (true)").is_empty(), "`while (false)` would not compile (unreachable body)");
    let catches: Vec<&Mutant> = mutants.iter().filter(|m| m.operator == "error-swallowed").collect();
    assert_eq!(catches.len(), 1, "not the one ending a method that returns a value: {catches:?}");
    assert!(source[..catches[0].start_byte].contains("public void log"));
    // Test code, comments, strings, annotations and imports: nothing.
    let first_test_line = line_of("@Test");
    assert!(mutants.iter().all(|m| m.line < first_test_line), "nothing in @Test or @BeforeEach methods");
    for needle in ["a comment", "@Deprecated", "import java.util.List"] {
        assert!(on(needle).is_empty(), "{needle}: {:?}", on(needle));
    }
    // No mutant starts or ends inside a string literal (one may replace a whole expression
    // that holds one).
    let quotes: Vec<usize> = source.match_indices('"').map(|(at, _)| at).collect();
    for pair in quotes.chunks(2) {
        let inside = pair[0] + 1..pair[1];
        for mutant in mutants {
            assert!(
                !inside.contains(&mutant.start_byte)
                    && !inside.contains(&(mutant.end_byte.saturating_sub(1))),
                "{mutant:?} inside a string"
            );
        }
    }

    // A test class by name yields nothing.
    let test_file =
        analyze(Path::new("src/main/java/org/example/CartTest.java"), source, &Options::default()).unwrap();
    assert!(test_file.mutants.is_empty());
}

/// Go: comments, strings, imports and constants are never mutated, `*_test.go` files yield
/// nothing, and operators keep to what compiles.
#[test]
fn go_skips_what_it_must_and_types_what_it_plants() {
    let source = r#"package cart

import (
	"errors"
	"os"
)

const limit = 10

type Cart struct {
	total int
	items []int
}

// add adds, with a < b in the comment and 0.
func (c *Cart) Add(price, count int) int {
	c.total += price * count
	return c.total - 1
}

func Label(n int) string {
	return "items: " + itoa(n+1)
}

func (c *Cart) Empty() bool {
	return c.total == 0
}

func Open(name string) (*os.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f == nil {
		_ = os.Remove(name)
		panic("no file < 1")
	}
	return f, nil
}

func First(items []int) *int {
	if len(items) > 0 {
		return &items[0]
	}
	return nil
}

func Loop() {
	for true {
		break
	}
	var ErrEmpty = errors.New("empty")
	_ = ErrEmpty
}
"#;
    let analysis = analyze(Path::new("cart/cart.go"), source, &Options::default()).unwrap();
    let mutants = &analysis.mutants;
    let line_of = |needle: &str| source.lines().position(|line| line.contains(needle)).unwrap() + 1;
    let on = |needle: &str| -> BTreeSet<&str> {
        let line = line_of(needle);
        mutants.iter().filter(|m| m.line == line).map(|m| m.operator.as_str()).collect()
    };
    assert!(on("c.total += price * count").contains("arithmetic-swap"));
    assert!(on("return c.total - 1").contains("minus-one-dropped"));
    assert!(on("return c.total == 0").contains("constant-return"));
    assert!(on("if err != nil").contains("error-check-removed"));
    assert!(on("return nil, err").contains("error-swallowed"));
    assert!(on("defer f.Close()").contains("cleanup-call-removed"));
    assert!(on("if f == nil").contains("none-guard-removed"));
    assert!(on("panic(").contains("panic-removed"));
    assert!(on("return &items[0]").contains("return-none"), "a pointer may be nil");
    // Never where it could not compile.
    assert!(!on("c.total += price * count").contains("compound-assignment-swap"), "`+=` may join strings");
    let concatenation = source.find("\"items: \" +").unwrap() + "\"items: \" ".len();
    assert!(mutants.iter().all(|m| m.start_byte != concatenation), "string concatenation");
    assert!(on("return \"items: \"").contains("arithmetic-swap"), "`n+1` inside it is arithmetic");
    assert!(!on("return c.total - 1").contains("return-none"), "an int cannot be nil");
    assert!(on("f, err := os.Open(name)").is_empty(), "a declaration is not removed");
    assert!(on("for true").is_empty(), "no `for false`");
    for needle in ["\"errors\"", "const limit", "// add adds", "total int"] {
        assert!(on(needle).is_empty(), "{needle}: {:?}", on(needle));
    }
    let quotes: Vec<usize> = source.match_indices('"').map(|(at, _)| at).collect();
    for pair in quotes.chunks(2) {
        let inside = pair[0] + 1..pair[1];
        assert!(mutants.iter().all(|m| !inside.contains(&m.start_byte)), "nothing inside a string");
    }
    let test_file = analyze(Path::new("cart/cart_test.go"), source, &Options::default()).unwrap();
    assert!(test_file.mutants.is_empty());
}
