//! How scores are rounded and written.

/// Scores are rounded to nine decimals, so that 6.5 x 0.35 + ... reads 7.475 and not
/// 7.4750000000000005, and comparisons with thresholds are not decided by binary noise.
/// Rounding is monotone, so it never reorders two scores.
pub(crate) fn round(value: f64) -> f64 {
    if !value.is_finite() {
        return value;
    }
    let scaled = (value * 1e9).round() / 1e9;
    if scaled == 0.0 { 0.0 } else { scaled }
}

/// A score for people: at least one decimal (`7.0`), at most three (`7.475`).
pub fn format_score(value: f64) -> String {
    let text = format!("{value:.3}");
    let trimmed = text.trim_end_matches('0');
    if trimmed.ends_with('.') { format!("{trimmed}0") } else { trimmed.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_removes_binary_noise() {
        let weighted = 6.5 * 0.35 + 7.0 * 0.2 + 8.5 * 0.2 + 8.0 * 0.15 + 9.0 * 0.1;
        assert_eq!(round(weighted), 7.475);
        assert_eq!(round(-0.0), 0.0);
    }

    #[test]
    fn scores_read_with_one_to_three_decimals() {
        assert_eq!(format_score(7.0), "7.0");
        assert_eq!(format_score(7.475), "7.475");
        assert_eq!(format_score(0.78), "0.78");
        assert_eq!(format_score(2.0 / 3.0), "0.667");
    }
}
