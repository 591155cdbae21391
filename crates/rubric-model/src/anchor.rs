//! Anchor keys: single points (`3`) and bands (`9-10`) of a scale.

use std::fmt;
use std::ops::RangeInclusive;

/// A parsed anchor key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnchorKey {
    /// One point, written `3`.
    Point(u32),
    /// An inclusive band, written `9-10`.
    Band(u32, u32),
}

/// Why an anchor key could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnchorKeyError {
    /// Not `N` or `N-M`.
    #[error("anchor key `{0}` is neither a point (`3`) nor a band (`9-10`)")]
    Malformed(String),
    /// `N-M` with `N > M`.
    #[error("anchor band `{0}` runs backwards")]
    Reversed(String),
}

impl AnchorKey {
    /// Parses `3` or `9-10`.
    ///
    /// ```
    /// use revcal_rubric_model::AnchorKey;
    /// assert_eq!(AnchorKey::parse("9-10"), Ok(AnchorKey::Band(9, 10)));
    /// assert_eq!(AnchorKey::parse("3"), Ok(AnchorKey::Point(3)));
    /// assert!(AnchorKey::parse("ten").is_err());
    /// assert!(AnchorKey::parse("5-3").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<AnchorKey, AnchorKeyError> {
        let number = |part: &str| -> Option<u32> {
            let part = part.trim();
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            part.parse().ok()
        };
        let malformed = || AnchorKeyError::Malformed(text.to_owned());
        match text.split_once('-') {
            None => number(text).map(AnchorKey::Point).ok_or_else(malformed),
            Some((low, high)) => {
                let (low, high) = (number(low).ok_or_else(malformed)?, number(high).ok_or_else(malformed)?);
                match low.cmp(&high) {
                    std::cmp::Ordering::Less => Ok(AnchorKey::Band(low, high)),
                    std::cmp::Ordering::Equal => Ok(AnchorKey::Point(low)),
                    std::cmp::Ordering::Greater => Err(AnchorKeyError::Reversed(text.to_owned())),
                }
            }
        }
    }

    /// The points the key covers.
    pub fn points(self) -> RangeInclusive<u32> {
        match self {
            AnchorKey::Point(p) => p..=p,
            AnchorKey::Band(low, high) => low..=high,
        }
    }

    /// True when `score` falls inside the key.
    pub fn contains(self, score: f64) -> bool {
        let range = self.points();
        score >= f64::from(*range.start()) && score <= f64::from(*range.end())
    }
}

impl fmt::Display for AnchorKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnchorKey::Point(p) => write!(f, "{p}"),
            AnchorKey::Band(low, high) => write!(f, "{low}-{high}"),
        }
    }
}
