//! The numbers of the rating rules, with the defaults of docs/reputation.md, section 3.

use crate::message::ReviewVerdict;
use serde::{Deserialize, Serialize};

/// What a scored review turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeClass {
    /// REQUEST_CHANGES on a change that caused an incident.
    CaughtBug,
    /// APPROVE on a change that caused an incident.
    MissedBug,
    /// REQUEST_CHANGES on a change that caused no incident.
    FalsePositive,
    /// APPROVE on a change that caused no incident.
    CorrectApproval,
    /// COMMENT: no decision, no points.
    Neutral,
}

impl OutcomeClass {
    /// Classifies a verdict against the outcome.
    pub fn of(verdict: ReviewVerdict, incident: bool) -> OutcomeClass {
        match (verdict, incident) {
            (ReviewVerdict::RequestChanges, true) => OutcomeClass::CaughtBug,
            (ReviewVerdict::Approve, true) => OutcomeClass::MissedBug,
            (ReviewVerdict::RequestChanges, false) => OutcomeClass::FalsePositive,
            (ReviewVerdict::Approve, false) => OutcomeClass::CorrectApproval,
            (ReviewVerdict::Comment, _) => OutcomeClass::Neutral,
        }
    }

    /// The wire name, e.g. `caught_bug`.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeClass::CaughtBug => "caught_bug",
            OutcomeClass::MissedBug => "missed_bug",
            OutcomeClass::FalsePositive => "false_positive",
            OutcomeClass::CorrectApproval => "correct_approval",
            OutcomeClass::Neutral => "neutral",
        }
    }

    /// The class with this wire name.
    pub fn from_wire(name: &str) -> Option<OutcomeClass> {
        [
            OutcomeClass::CaughtBug,
            OutcomeClass::MissedBug,
            OutcomeClass::FalsePositive,
            OutcomeClass::CorrectApproval,
            OutcomeClass::Neutral,
        ]
        .into_iter()
        .find(|class| class.as_str() == name)
    }

    /// True for a decisive verdict (APPROVE or REQUEST_CHANGES).
    pub fn is_decisive(self) -> bool {
        self != OutcomeClass::Neutral
    }

    /// True for a decisive verdict the outcome proved right.
    pub fn is_correct(self) -> bool {
        matches!(self, OutcomeClass::CaughtBug | OutcomeClass::CorrectApproval)
    }
}

/// The rating rules' numbers. `Policy::default()` holds the defaults of docs/reputation.md,
/// section 3.
///
/// A field missing from the JSON reads as its default: each ledger stores its policy once,
/// at creation, so a ledger written before a field existed must still open. A new field's
/// default must therefore be the value that rates as the rules did before the field
/// existed. An unknown field is still refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Policy {
    /// Every reviewer's first rating (1200).
    pub start_rating: f64,
    /// Base delta for REQUEST_CHANGES + incident (+25).
    pub caught_bug: f64,
    /// Base delta for APPROVE + incident (-30).
    pub missed_bug: f64,
    /// Base delta for REQUEST_CHANGES + no incident (-5).
    pub false_positive: f64,
    /// Base delta for APPROVE + no incident (+5).
    pub correct_approval: f64,
    /// Base delta for COMMENT (0).
    pub neutral: f64,
    /// K while the reviewer has fewer than `k_threshold` scored reviews (40).
    pub k_new: f64,
    /// K from `k_threshold` scored reviews on (20).
    pub k_established: f64,
    /// Scored reviews after which `k_established` applies (20).
    pub k_threshold: u64,
    /// Applied delta = base x K / `k_scale` (20).
    pub k_scale: f64,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            start_rating: 1200.0,
            caught_bug: 25.0,
            missed_bug: -30.0,
            false_positive: -5.0,
            correct_approval: 5.0,
            neutral: 0.0,
            k_new: 40.0,
            k_established: 20.0,
            k_threshold: 20,
            k_scale: 20.0,
        }
    }
}

/// A policy that cannot rate (a zero scale, or numbers that are not finite).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("policy field `{field}`: {reason}")]
#[non_exhaustive]
pub struct PolicyError {
    /// The field at fault.
    pub field: &'static str,
    /// Why.
    pub reason: &'static str,
}

impl Policy {
    /// Checks that every number is finite and the scale is not zero.
    pub fn validate(&self) -> Result<(), PolicyError> {
        let numbers = [
            ("start_rating", self.start_rating),
            ("caught_bug", self.caught_bug),
            ("missed_bug", self.missed_bug),
            ("false_positive", self.false_positive),
            ("correct_approval", self.correct_approval),
            ("neutral", self.neutral),
            ("k_new", self.k_new),
            ("k_established", self.k_established),
            ("k_scale", self.k_scale),
        ];
        if let Some((field, _)) = numbers.iter().find(|(_, value)| !value.is_finite()) {
            return Err(PolicyError { field, reason: "must be a finite number" });
        }
        if self.k_scale == 0.0 {
            return Err(PolicyError { field: "k_scale", reason: "must not be zero" });
        }
        Ok(())
    }

    /// The base delta of a class.
    pub fn base_delta(&self, class: OutcomeClass) -> f64 {
        match class {
            OutcomeClass::CaughtBug => self.caught_bug,
            OutcomeClass::MissedBug => self.missed_bug,
            OutcomeClass::FalsePositive => self.false_positive,
            OutcomeClass::CorrectApproval => self.correct_approval,
            OutcomeClass::Neutral => self.neutral,
        }
    }

    /// K for a reviewer with `scored_before` scored reviews before this one.
    pub fn k(&self, scored_before: u64) -> f64 {
        if scored_before < self.k_threshold { self.k_new } else { self.k_established }
    }

    /// The applied delta: base x K / scale.
    pub fn applied_delta(&self, class: OutcomeClass, scored_before: u64) -> f64 {
        self.base_delta(class) * self.k(scored_before) / self.k_scale
    }
}

/// A reviewer's standing: the materialised result of every scored review.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Standing {
    /// Current rating.
    pub rating: f64,
    /// Scored reviews, COMMENT included.
    pub reviews: u64,
    /// Scored APPROVE and REQUEST_CHANGES verdicts.
    pub decisive: u64,
    /// Decisive verdicts the outcome proved right.
    pub correct: u64,
}

impl Standing {
    /// A reviewer before any scored review.
    pub fn new(policy: &Policy) -> Standing {
        Standing { rating: policy.start_rating, reviews: 0, decisive: 0, correct: 0 }
    }

    /// Correct decisive verdicts / decisive verdicts; `None` before the first decisive one.
    pub fn accuracy(&self) -> Option<f64> {
        (self.decisive > 0).then(|| self.correct as f64 / self.decisive as f64)
    }

    /// Scores one review and returns the applied delta.
    pub fn score(&mut self, policy: &Policy, class: OutcomeClass) -> f64 {
        let delta = policy.applied_delta(class, self.reviews);
        self.rating += delta;
        self.reviews += 1;
        if class.is_decisive() {
            self.decisive += 1;
        }
        if class.is_correct() {
            self.correct += 1;
        }
        delta
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_documented_ones() {
        let policy = Policy::default();
        assert_eq!(policy.applied_delta(OutcomeClass::CaughtBug, 0), 50.0);
        assert_eq!(policy.applied_delta(OutcomeClass::MissedBug, 19), -60.0);
        assert_eq!(policy.applied_delta(OutcomeClass::MissedBug, 20), -30.0);
        assert_eq!(policy.applied_delta(OutcomeClass::FalsePositive, 0), -10.0);
        assert_eq!(policy.applied_delta(OutcomeClass::CorrectApproval, 25), 5.0);
        assert_eq!(policy.applied_delta(OutcomeClass::Neutral, 0), 0.0);
        assert!(policy.validate().is_ok());
    }

    #[test]
    fn standing_counts_reviews_and_accuracy() {
        let policy = Policy::default();
        let mut standing = Standing::new(&policy);
        assert_eq!(standing.accuracy(), None);
        standing.score(&policy, OutcomeClass::Neutral);
        assert_eq!((standing.reviews, standing.accuracy()), (1, None));
        standing.score(&policy, OutcomeClass::CaughtBug);
        standing.score(&policy, OutcomeClass::FalsePositive);
        assert_eq!(standing.accuracy(), Some(0.5));
        assert_eq!(standing.rating, 1200.0 + 0.0 + 50.0 - 10.0);
    }

    /// A ledger's stored policy exactly as ledgers have written it since the ledger began
    /// (`serde_json::to_string(&Policy::default())`). Ledgers already written hold this text:
    /// never edit it. When `Policy` gains a field, this stays as it is (old ledgers must
    /// still open) and `the_serialized_form_is_unchanged` gets the new form.
    const STORED_POLICY: &str = r#"{"start_rating":1200.0,"caught_bug":25.0,"missed_bug":-30.0,"false_positive":-5.0,"correct_approval":5.0,"neutral":0.0,"k_new":40.0,"k_established":20.0,"k_threshold":20,"k_scale":20.0}"#;

    #[test]
    fn a_stored_policy_of_todays_form_still_reads() {
        let policy: Policy = serde_json::from_str(STORED_POLICY).unwrap();
        assert_eq!(policy, Policy::default());
    }

    #[test]
    fn the_serialized_form_is_unchanged() {
        // Ledgers store this text and compare policies read back from it.
        assert_eq!(serde_json::to_string(&Policy::default()).unwrap(), STORED_POLICY);
    }

    /// Every number of a policy's JSON moved off its default, so that a field read as
    /// its default is told apart from one read as written.
    fn moved_off_the_defaults() -> serde_json::Map<String, serde_json::Value> {
        let serde_json::Value::Object(fields) = serde_json::to_value(Policy::default()).unwrap() else {
            panic!("a policy serializes as an object");
        };
        fields
            .into_iter()
            .map(|(name, value)| {
                let moved = match value.as_u64() {
                    Some(count) => serde_json::json!(count + 1),
                    None => serde_json::json!(value.as_f64().unwrap() + 0.5),
                };
                (name, moved)
            })
            .collect()
    }

    #[test]
    fn every_field_missing_from_a_stored_policy_reads_as_its_default() {
        let empty: Policy = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, Policy::default());
        let defaults = serde_json::to_value(Policy::default()).unwrap();
        let written = moved_off_the_defaults();
        for name in written.keys() {
            let mut without = written.clone();
            without.remove(name);
            let read: Policy = serde_json::from_value(serde_json::Value::Object(without))
                .unwrap_or_else(|error| panic!("a policy without `{name}` does not read: {error}"));
            let read = serde_json::to_value(read).unwrap();
            for (field, value) in read.as_object().unwrap() {
                let expected = if field == name { &defaults[field] } else { &written[field] };
                assert_eq!(value, expected, "`{field}` of a policy without `{name}`");
            }
        }
    }

    #[test]
    fn an_unknown_field_is_still_refused() {
        let error = serde_json::from_str::<Policy>(r#"{"k_scael":20.0}"#).unwrap_err();
        assert!(error.to_string().contains("k_scael"), "{error}");
    }

    #[test]
    fn bad_policies_are_refused() {
        let zero = Policy { k_scale: 0.0, ..Policy::default() };
        assert_eq!(zero.validate().unwrap_err().field, "k_scale");
        let nan = Policy { missed_bug: f64::NAN, ..Policy::default() };
        assert_eq!(nan.validate().unwrap_err().field, "missed_bug");
    }
}
