//! Planted bugs for Rust, JavaScript, TypeScript, Python, Java and Go: tree-sitter mutation operators
//! whose every mutant is syntactically valid, sits in real logic (never in comments, strings,
//! test code or skip-marked lines), carries a one-sentence defect description, and belongs to
//! one of nine [`Category`]s.
//!
//! [`generate_mutants`] lists the mutants of one file, [`select`](fn@select) picks a seeded,
//! stratified, non-overlapping sample, and [`apply`](fn@apply) writes mutants into the source.
//!
//! ```
//! use revcal_mutate::{Category, Options, apply, generate_mutants, select};
//! use std::path::Path;
//!
//! let source = "fn last(items: &[u32], i: usize) -> Option<u32> {\n    if i < items.len() {\n        return Some(items[i]);\n    }\n    None\n}\n";
//! let mutants = generate_mutants(Path::new("src/last.rs"), source, &Options::default()).unwrap();
//!
//! let boundary = mutants.iter().find(|m| m.operator == "comparison-boundary").unwrap();
//! assert_eq!((boundary.line, boundary.column), (2, 10));
//! assert_eq!(boundary.category, Category::OffByOne);
//! assert_eq!(boundary.mutated_line, "    if i <= items.len() {");
//! assert_eq!(&source[boundary.start_byte..boundary.end_byte], boundary.original);
//!
//! // Two planted bugs, never on the same line, reproducible from the seed.
//! let picked = select(&mutants, 2, 7);
//! assert_eq!(picked, select(&mutants, 2, 7));
//! assert_ne!(picked[0].line, picked[1].line);
//! let planted = apply(source, &picked).unwrap();
//! assert_ne!(planted, source);
//! ```

mod apply;
mod category;
mod engine;
mod error;
mod language;
mod languages;
mod mutant;
mod neutral;
mod options;
mod paths;
mod profile;
mod regions;
mod select;
mod source;

pub use apply::apply;
pub use category::Category;
pub use engine::{Analysis, Warning, analyze, generate_mutants};
pub use error::MutateError;
pub use language::Language;
pub use languages::{Operator, operators};
pub use mutant::Mutant;
pub use neutral::{NeutralEdit, neutral_edits, select_neutral};
pub use options::Options;
pub use paths::is_test_path;
pub use profile::{Profile, REALISTIC_OPERATORS};
pub use regions::SKIP_MARKER;
pub use select::select;
