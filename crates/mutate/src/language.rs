//! Supported languages, detected from the file extension.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// A language with a tree-sitter grammar and an operator table. Languages are added as
/// grammars are, so a `match` on it needs a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Language {
    /// Rust: `.rs`.
    Rust,
    /// JavaScript: `.js .mjs .cjs .jsx`.
    JavaScript,
    /// Python: `.py`.
    Python,
    /// TypeScript: `.ts .mts .cts` (JavaScript's operators; types are never mutated).
    TypeScript,
    /// TypeScript with JSX: `.tsx` (the same operators over the TSX grammar).
    Tsx,
    /// Java: `.java`.
    Java,
    /// Go: `.go`.
    Go,
}

impl Language {
    /// Every supported language.
    pub const ALL: [Language; 7] = [
        Language::Rust,
        Language::JavaScript,
        Language::Python,
        Language::TypeScript,
        Language::Tsx,
        Language::Java,
        Language::Go,
    ];

    /// The language of a file, from its extension; `None` for anything else.
    pub fn from_path(path: &Path) -> Option<Language> {
        let extension = path.extension()?.to_str()?;
        Language::ALL.into_iter().find(|language| language.extensions().contains(&extension))
    }

    /// The lowercase name used in JSON and in `--stats`.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::JavaScript => "javascript",
            Language::Python => "python",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Java => "java",
            Language::Go => "go",
        }
    }

    /// The file extensions (without the dot) that select this language.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Language::Rust => &["rs"],
            Language::JavaScript => &["js", "mjs", "cjs", "jsx"],
            Language::Python => &["py"],
            Language::TypeScript => &["ts", "mts", "cts"],
            Language::Tsx => &["tsx"],
            Language::Java => &["java"],
            Language::Go => &["go"],
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_every_extension_and_nothing_else() {
        for (name, expected) in [
            ("a.rs", Some(Language::Rust)),
            ("dir/a.mjs", Some(Language::JavaScript)),
            ("a.cjs", Some(Language::JavaScript)),
            ("a.jsx", Some(Language::JavaScript)),
            ("a.js", Some(Language::JavaScript)),
            ("a.py", Some(Language::Python)),
            ("a.ts", Some(Language::TypeScript)),
            ("a.mts", Some(Language::TypeScript)),
            ("a.d.ts", Some(Language::TypeScript)),
            ("a.tsx", Some(Language::Tsx)),
            ("src/main/java/a/B.java", Some(Language::Java)),
            ("cmd/main.go", Some(Language::Go)),
            ("Makefile", None),
            ("rs", None),
        ] {
            assert_eq!(Language::from_path(Path::new(name)), expected, "{name}");
        }
        assert_eq!(serde_json::to_string(&Language::JavaScript).unwrap(), "\"javascript\"");
    }
}
