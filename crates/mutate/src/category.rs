//! Bug categories: what kind of defect a mutant plants.

use crate::MutateError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The kind of defect a mutant plants (see [docs/mutation.md][categories]). Calibration
/// reports recall per category.
///
/// [categories]: https://github.com/revcal/revcal/blob/main/docs/mutation.md#categories-and-operators
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// A boundary moved by one: `<` vs `<=`, `+ 1` dropped, a range end moved.
    OffByOne,
    /// A condition that now means the opposite: `==`/`!=`, `&&`/`||`, negation, swapped branches.
    LogicInversion,
    /// A missing-value guard or default removed, or a value replaced by null/None.
    NullHandling,
    /// An arithmetic operator swapped: `+`/`-`, `*`/`/`, compound assignments.
    Arithmetic,
    /// A boundary constant changed: `0`/`1` swapped, a collection emptied.
    Boundary,
    /// An error swallowed, a raise/throw removed, `?` replaced.
    ErrorHandling,
    /// A function returns a constant or default instead of its computed value.
    ReturnValue,
    /// A close/drop/release call removed.
    ResourceCleanup,
    /// A call statement or assignment removed.
    StatementDeletion,
}

impl Category {
    /// Every category, in report order.
    pub const ALL: [Category; 9] = [
        Category::OffByOne,
        Category::LogicInversion,
        Category::NullHandling,
        Category::Arithmetic,
        Category::Boundary,
        Category::ErrorHandling,
        Category::ReturnValue,
        Category::ResourceCleanup,
        Category::StatementDeletion,
    ];

    /// The kebab-case name used in JSON, on the command line and in config files.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::OffByOne => "off-by-one",
            Category::LogicInversion => "logic-inversion",
            Category::NullHandling => "null-handling",
            Category::Arithmetic => "arithmetic",
            Category::Boundary => "boundary",
            Category::ErrorHandling => "error-handling",
            Category::ReturnValue => "return-value",
            Category::ResourceCleanup => "resource-cleanup",
            Category::StatementDeletion => "statement-deletion",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Category {
    type Err = MutateError;

    /// Parses a kebab-case name; `_` is accepted for `-` and case is ignored.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let normal = name.trim().to_ascii_lowercase().replace('_', "-");
        Category::ALL.into_iter().find(|category| category.as_str() == normal).ok_or_else(|| {
            MutateError::UnknownCategory {
                name: name.to_string(),
                expected: Category::ALL.map(Category::as_str).join(", "),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_from_str_and_serde() {
        for category in Category::ALL {
            assert_eq!(category.as_str().parse::<Category>().unwrap(), category);
            let json = serde_json::to_string(&category).unwrap();
            assert_eq!(json, format!("\"{}\"", category.as_str()));
        }
        assert_eq!("Off_By_One".parse::<Category>().unwrap(), Category::OffByOne);
        let error = "typo".parse::<Category>().unwrap_err().to_string();
        assert!(error.contains("`typo`") && error.contains("off-by-one"), "{error}");
    }
}
