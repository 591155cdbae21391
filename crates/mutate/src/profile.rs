//! Profiles: which of the operators' mutants a run keeps (docs/mutation.md#profiles).
//!
//! The default profile keeps every operator, so that every category of bug is planted. The
//! realistic profile keeps the mutants closest to the mistakes developers make and that
//! studies found coupled to real faults, and plants them the way Google's mutation service
//! surfaces them:
//!
//! - only the operator families whose mutants were measured against real faults: relational
//!   and conditional operator replacement, arithmetic operator replacement (operand
//!   dropping included), unary negation, literal value replacement and statement deletion:
//!   the operators of Major, with which Just et al. found 73% of 357 real faults coupled to
//!   mutants (FSE 2014), and the five of Google's service, AOR, LCR, ROR, UOI and SBR
//!   (Petrović and Ivanković, ICSE-SEIP 2018; Petrović et al., ICSE 2021, found its mutants
//!   coupled to real high-priority faults). Replacing a value by a constant (`return
//!   true`, `return None`, an empty collection) and the bug-class operators (dropped null
//!   checks, swallowed errors, removed cleanup) are left out: their coupling was not
//!   measured;
//! - no mutant on an arid line, one whose mutation developers do not find useful (Google's
//!   term): logging and printing;
//! - at most one mutant per line (Google's service limits mutants per line), the one of the
//!   operator listed first in [`REALISTIC_OPERATORS`], so that no line's bug is planted twice.

use serde::{Deserialize, Serialize};

use crate::Mutant;

/// Which mutants a run keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Every operator of every category.
    #[default]
    Default,
    /// The operators coupled to real faults, no arid lines, one mutant per line.
    Realistic,
}

/// The operators of the realistic profile, most preferred first (the order chooses the one
/// mutant of a line): relational, conditional, negation, arithmetic, literal, deletion.
pub const REALISTIC_OPERATORS: &[&str] = &[
    "comparison-boundary",
    "range-end",
    "equality-flip",
    "membership-flip",
    "and-or-swap",
    "negation-removed",
    "negate-condition",
    "arithmetic-swap",
    "plus-one-dropped",
    "minus-one-dropped",
    "compound-assignment-swap",
    "zero-one-swap",
    "boolean-flip",
    "call-statement-removed",
    "assignment-removed",
    "del-removed",
];

/// Calls whose line is arid: logging and printing, in each language's common forms.
const ARID_PREFIXES: &[&str] = &[
    "log.",
    "logger.",
    "logging.",
    "LOG.",
    "LOGGER.",
    "self.log",
    "this.log",
    "console.",
    "print(",
    "println!",
    "eprintln!",
    "print!",
    "eprint!",
    "dbg!",
    "trace!",
    "debug!",
    "info!",
    "warn!",
    "error!",
    "tracing::",
    "log::",
    "fmt.Print",
    "fmt.Fprint",
    "System.out.",
    "System.err.",
];

impl Profile {
    /// Whether the profile keeps this operator's mutants at all.
    pub fn allows_operator(self, operator: &str) -> bool {
        match self {
            Profile::Default => true,
            Profile::Realistic => REALISTIC_OPERATORS.contains(&operator),
        }
    }

    /// Applies the line rules to the mutants of one file (in document order): arid lines
    /// out, then one mutant per line.
    pub(crate) fn keep(self, mutants: Vec<Mutant>) -> Vec<Mutant> {
        if self == Profile::Default {
            return mutants;
        }
        let rank =
            |m: &Mutant| REALISTIC_OPERATORS.iter().position(|op| *op == m.operator).unwrap_or(usize::MAX);
        // Per line, the index of the mutant kept.
        let mut best: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
        for (index, mutant) in mutants.iter().enumerate().filter(|(_, m)| !is_arid(&m.original_line)) {
            let kept = best.entry(mutant.line).or_insert(index);
            let current = &mutants[*kept];
            if (rank(mutant), mutant.start_byte) < (rank(current), current.start_byte) {
                *kept = index;
            }
        }
        let chosen: std::collections::HashSet<usize> = best.into_values().collect();
        mutants.into_iter().enumerate().filter(|(index, _)| chosen.contains(index)).map(|(_, m)| m).collect()
    }
}

/// A logging or printing line.
fn is_arid(line: &str) -> bool {
    let code = line.trim_start();
    ARID_PREFIXES.iter().any(|prefix| code.starts_with(prefix))
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Profile::Default => "default",
            Profile::Realistic => "realistic",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_realistic_operator_exists() {
        let names: Vec<&str> = crate::operators().map(|op| op.name).collect();
        for operator in REALISTIC_OPERATORS {
            assert!(names.contains(operator), "{operator}");
        }
    }

    #[test]
    fn arid_lines_are_logging_and_printing() {
        for line in [
            "    log.info(\"x = %d\", x + 1)",
            "println!(\"{}\", a < b);",
            "\tfmt.Printf(\"%d\", n-1)",
            "console.log(a && b);",
        ] {
            assert!(is_arid(line), "{line}");
        }
        for line in ["if a < b {", "total += x;", "catalog.add(item)", "blog.post(x)"] {
            assert!(!is_arid(line), "{line}");
        }
    }
}
