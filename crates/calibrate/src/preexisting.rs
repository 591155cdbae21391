//! Findings the reviewer had already: a linter's warning that exists at the unplanted commit is
//! no evidence that the reviewer found a plant, however close to it the warning lands, nor a
//! false positive of the planted review.
//!
//! Each trial also reviews the unplanted change, in a checkout like the others. A finding of a
//! planted (or clean) review is set aside when the unplanted review made the same finding: the
//! same file, the same message (whitespace collapsed, numbers read as any number, so that
//! `line too long (120 > 88)` matches `(121 > 88)`), at its line moved by the round's edits (a
//! plant that adds or removes lines moves the warnings below it). Each finding of the
//! unplanted review sets aside at most one finding, so a warning the plant doubled still
//! counts once.

use crate::plants::{Plant, Planting};
use revcal_findings::Finding;
use revcal_report::PlantEdit;

/// `text` with its whitespace collapsed and every run of digits read as `#`.
fn message_key(text: &str) -> String {
    let mut key = String::with_capacity(text.len());
    let mut in_digits = false;
    for word in text.split_whitespace() {
        if !key.is_empty() {
            key.push(' ');
        }
        for c in word.chars() {
            if c.is_ascii_digit() {
                if !in_digits {
                    key.push('#');
                }
                in_digits = true;
            } else {
                key.push(c);
                in_digits = false;
            }
        }
        in_digits = false;
    }
    key
}

/// Where line `line` (1-based) of the unplanted file stands once `edits` (that file's, in the
/// unplanted file's lines) are applied: moved by every edit above it; a line an edit replaced
/// stands at the first line of what replaced it.
fn moved(line: u32, edits: &[PlantEdit]) -> u32 {
    let index = i64::from(line) - 1;
    let mut shift = 0i64;
    for edit in edits {
        let (start, old) = (i64::try_from(edit.start).unwrap_or(i64::MAX), edit.old.len() as i64);
        if index >= start.saturating_add(old) {
            shift += edit.new.len() as i64 - old;
        } else if index >= start {
            return u32::try_from(start + shift + 1).unwrap_or(line);
        }
    }
    u32::try_from(index + shift + 1).unwrap_or(line)
}

/// Splits a review's `findings` into those kept and the number set aside as made by the
/// unplanted review too (`before`), where the round carried `plants` (a clean round's neutral
/// edit is a plant too). Both sides' paths are already read against the run's changed files.
pub(crate) fn set_aside(
    findings: Vec<Finding>,
    before: &[Finding],
    plants: &[&Plant],
) -> (Vec<Finding>, usize) {
    let mut unused: Vec<(&str, u32, String)> = before
        .iter()
        .filter_map(|finding| {
            let (file, line) = (finding.file.as_deref()?, finding.line?);
            let mut edits: Vec<PlantEdit> = plants.iter().flat_map(|plant| plant.edits_in(file)).collect();
            edits.sort_by_key(|edit| edit.start);
            Some((file, moved(line, &edits), message_key(&finding.text)))
        })
        .collect();
    let mut kept = Vec::with_capacity(findings.len());
    let mut count = 0;
    for finding in findings {
        let matched = match (finding.file.as_deref(), finding.line) {
            (Some(file), Some(line)) => {
                let key = message_key(&finding.text);
                unused.iter().position(|(old_file, old_line, old_key)| {
                    *old_file == file && *old_line == line && *old_key == key
                })
            }
            _ => None,
        };
        match matched {
            Some(position) => {
                unused.swap_remove(position);
                count += 1;
            }
            None => kept.push(finding),
        }
    }
    (kept, count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use revcal_findings::FindingFormat;

    fn finding(file: &str, line: u32, text: &str) -> Finding {
        let mut finding = Finding::new(FindingFormat::Ruff, text.into());
        finding.file = Some(file.into());
        finding.line = Some(line);
        finding
    }

    fn edit(start: usize, old: usize, new: usize) -> PlantEdit {
        PlantEdit { file: "a.py".into(), start, old: vec!["x".into(); old], new: vec!["y".into(); new] }
    }

    #[test]
    fn a_line_moves_with_the_edits_above_it() {
        // Line 3 (index 2) deleted; lines 7-8 become three lines.
        let edits = [edit(2, 1, 0), edit(6, 2, 3)];
        let cases = [(1, 1), (2, 2), (3, 3), (4, 3), (6, 5), (7, 6), (8, 6), (9, 9), (20, 20)];
        for (line, at) in cases {
            assert_eq!(moved(line, &edits), at, "line {line}");
        }
        assert_eq!(moved(5, &[]), 5);
    }

    #[test]
    fn messages_match_whatever_their_numbers_and_spacing() {
        assert_eq!(
            message_key("E501  line too long (120 > 88)"),
            message_key("E501 line too long (121 > 88)")
        );
        assert_ne!(message_key("unused variable 'x'"), message_key("unused variable 'y'"));
        assert_eq!(message_key(" a\n\tb 12c3 "), "a b #c#");
    }

    #[test]
    fn an_old_finding_is_set_aside_once_a_new_one_is_kept() {
        let plant = Plant::new("a.py", 5, "arithmetic", "swap", "x", "y");
        let before =
            [finding("a.py", 5, "RUF036 None not at the end"), finding("b.py", 9, "W0612 unused 'x'")];
        let after = vec![
            finding("a.py", 5, "RUF036 None not at the end"),
            finding("a.py", 5, "RUF036 None not at the end"),
            finding("b.py", 9, "W0612 unused 'x'"),
            finding("b.py", 9, "W0612 unused 'y'"),
            finding("a.py", 6, "a new finding"),
        ];
        let (kept, count) = set_aside(after, &before, &[&plant]);
        assert_eq!(count, 2);
        let texts: Vec<&str> = kept.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, ["RUF036 None not at the end", "W0612 unused 'y'", "a new finding"]);
    }
}
