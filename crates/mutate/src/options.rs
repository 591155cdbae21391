//! What to generate: category and operator filters and limits.

use crate::{Category, Profile};
use serde::{Deserialize, Serialize};

/// Filters and limits for [`generate_mutants`](crate::generate_mutants). The default
/// generates every operator of every category.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    /// Only these categories (empty: all).
    pub categories: Vec<Category>,
    /// Never these categories.
    pub exclude_categories: Vec<Category>,
    /// Only these operators (empty: all).
    pub operators: Vec<String>,
    /// Never these operators.
    pub exclude_operators: Vec<String>,
    /// Files larger than this many bytes (default 2 MiB: generated or minified code) are
    /// refused with
    /// [`MutateError::FileTooLarge`](crate::MutateError::FileTooLarge).
    pub max_file_bytes: usize,
    /// Skip test files by path ([`is_test_path`](crate::is_test_path)). Test functions and
    /// modules inside a file are always skipped.
    pub skip_test_files: bool,
    /// Which mutants to keep: every operator (the default), or the realistic profile (the
    /// operators coupled to real faults, no logging lines, one mutant per line).
    pub profile: Profile,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            categories: Vec::new(),
            exclude_categories: Vec::new(),
            operators: Vec::new(),
            exclude_operators: Vec::new(),
            max_file_bytes: 2 * 1024 * 1024,
            skip_test_files: true,
            profile: Profile::Default,
        }
    }
}

impl Options {
    /// True when mutants of this category and operator are wanted.
    pub fn allows(&self, category: Category, operator: &str) -> bool {
        (self.categories.is_empty() || self.categories.contains(&category))
            && !self.exclude_categories.contains(&category)
            && (self.operators.is_empty() || self.operators.iter().any(|name| name == operator))
            && !self.exclude_operators.iter().any(|name| name == operator)
            && self.profile.allows_operator(operator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_and_exclude_filters_combine() {
        let all = Options::default();
        assert!(all.allows(Category::Arithmetic, "arithmetic-swap"));
        let options = Options {
            categories: vec![Category::Arithmetic, Category::Boundary],
            exclude_operators: vec!["zero-one-swap".into()],
            ..Options::default()
        };
        assert!(options.allows(Category::Arithmetic, "arithmetic-swap"));
        assert!(!options.allows(Category::Boundary, "zero-one-swap"));
        assert!(!options.allows(Category::OffByOne, "comparison-boundary"));
        let options = Options { exclude_categories: vec![Category::Boundary], ..Options::default() };
        assert!(!options.allows(Category::Boundary, "empty-collection"));
    }
}
