//! Test files, recognised by path.

use std::path::{Component, Path};

/// True when the path names a test file by the rules of [docs/mutation.md][rules]: a
/// `tests`, `test` or `__tests__` directory anywhere in the path; Python `test_*.py`,
/// `*_test.py` and `conftest.py`; JavaScript `*.test.*` and `*.spec.*`; Rust `tests.rs` and
/// `*_test.rs` (a `mod tests;` kept in its own file); Go `*_test.go`; Java `*Test.java`, `*Tests.java`,
/// `*TestCase.java`, `*IT.java` and `TestX.java` (Maven's `src/test/java` is a `test`
/// directory). Test code inside other files (`#[test]`, `#[cfg(test)]`, JUnit's `@Test`) is
/// found by the parser instead.
///
/// [rules]: https://github.com/revcal/revcal/blob/main/docs/mutation.md#what-is-never-mutated
pub fn is_test_path(path: &Path) -> bool {
    let in_test_dir = path.parent().is_some_and(|parent| {
        parent.components().any(|component| match component {
            Component::Normal(name) => matches!(name.to_str(), Some("tests" | "test" | "__tests__")),
            _ => false,
        })
    });
    if in_test_dir {
        return true;
    }
    let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
        return false;
    };
    let stem = name.split('.').next().unwrap_or(name);
    let inner_parts: Vec<&str> = name.split('.').skip(1).collect();
    let js_marker = inner_parts.len() >= 2
        && inner_parts[..inner_parts.len() - 1].iter().any(|part| matches!(*part, "test" | "spec"));
    match Path::new(name).extension().and_then(|ext| ext.to_str()) {
        Some("py") => stem.starts_with("test_") || stem.ends_with("_test") || stem == "conftest",
        Some("rs") => stem == "tests" || stem.ends_with("_test") || stem.ends_with("_tests"),
        Some("js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx") => js_marker,
        // `go test`'s files.
        Some("go") => stem.ends_with("_test"),
        // Maven Surefire's and Gradle's default test class names.
        Some("java") => {
            stem.ends_with("Test")
                || stem.ends_with("Tests")
                || stem.ends_with("TestCase")
                || stem.ends_with("IT")
                || (stem.starts_with("Test") && stem[4..].starts_with(char::is_uppercase))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_the_spec_rules() {
        for test in [
            "tests/integration.rs",
            "crate/tests/a.rs",
            "pkg/test_util.py",
            "pkg/util_test.py",
            "pkg/conftest.py",
            "lib/tests/helpers.py",
            "src/a.test.js",
            "src/a.spec.mjs",
            "src/__tests__/a.js",
            "src/parser/tests.rs",
            "src/parser_test.rs",
            "src/test/java/org/x/Parser.java",
            "src/main/java/org/x/ParserTest.java",
            "ParserTests.java",
            "ParserIT.java",
            "TestParser.java",
            "cmd/root_test.go",
        ] {
            assert!(is_test_path(Path::new(test)), "{test}");
        }
        for code in [
            "src/lib.rs",
            "src/testing.rs",
            "pkg/contest.py",
            "pkg/attest.py",
            "src/latest.js",
            "src/spec.js",
            "tests.js",
            "src/test.js",
            "src/main/java/org/x/Testing.java",
            "src/main/java/org/x/Contest.java",
            "src/main/java/org/x/Attestation.java",
            "cmd/latest.go",
        ] {
            assert!(!is_test_path(Path::new(code)), "{code}");
        }
    }
}
