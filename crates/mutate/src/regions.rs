//! Where mutants may not go, computed once per file: comments, test code, skip markers,
//! syntax errors (hard: never touched), and strings, types, imports, attributes and the like
//! (opaque: never changed inside, though a mutant may replace one whole).

use std::collections::BTreeSet;

/// The comment that marks a line as not to be mutated, in any language's comment syntax.
pub const SKIP_MARKER: &str = "revcal: skip";

/// The skip regions of one file.
#[derive(Debug, Default)]
pub(crate) struct Regions {
    hard: Vec<(usize, usize)>,
    opaque: Vec<(usize, usize)>,
    skipped_rows: BTreeSet<usize>,
}

impl Regions {
    pub(crate) fn add_hard(&mut self, start: usize, end: usize) {
        self.hard.push((start, end));
    }

    pub(crate) fn add_opaque(&mut self, start: usize, end: usize) {
        self.opaque.push((start, end));
    }

    pub(crate) fn skip_row(&mut self, row: usize) {
        self.skipped_rows.insert(row);
    }

    /// Sorts and merges the regions; call once, before [`Regions::permits`].
    pub(crate) fn finish(&mut self) {
        self.hard = merge(std::mem::take(&mut self.hard));
        // Only outermost opaque regions matter: a candidate that crosses an inner one
        // crosses its outer one too, and one that contains the outer contains the inner.
        self.opaque.sort_by_key(|&(start, end)| (start, std::cmp::Reverse(end)));
        let mut outermost: Vec<(usize, usize)> = Vec::with_capacity(self.opaque.len());
        for region in std::mem::take(&mut self.opaque) {
            match outermost.last() {
                Some(&(_, end)) if region.1 <= end => {}
                _ => outermost.push(region),
            }
        }
        self.opaque = outermost;
    }

    /// True when a mutation of bytes `start..end` spanning rows `rows` is allowed.
    pub(crate) fn permits(&self, start: usize, end: usize, rows: std::ops::RangeInclusive<usize>) -> bool {
        if self.skipped_rows.range(rows).next().is_some() {
            return false;
        }
        let touches = |&(region_start, region_end): &(usize, usize)| {
            (region_start < end && start < region_end)
                || (start == end && region_start <= start && start < region_end)
        };
        let first_hard = self.hard.partition_point(|&(_, region_end)| region_end <= start);
        if self
            .hard
            .get(first_hard)
            .is_some_and(|region| touches(region) || region.0 == start && start == end)
        {
            return false;
        }
        // Opaque regions may overlap each other's ends only by nesting, which `finish`
        // removed, so they are disjoint and sorted: check the ones that can intersect.
        let first_opaque = self.opaque.partition_point(|&(_, region_end)| region_end <= start);
        for region in &self.opaque[first_opaque..] {
            if region.0 >= end {
                break;
            }
            let contained = start <= region.0 && region.1 <= end;
            if touches(region) && !contained {
                return false;
            }
        }
        true
    }
}

/// Sorted, disjoint union of ranges.
fn merge(mut ranges: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    ranges.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_regions_block_any_touch_and_opaque_ones_only_partial_ones() {
        let mut regions = Regions::default();
        regions.add_hard(10, 20);
        regions.add_hard(15, 30);
        regions.add_opaque(40, 50);
        regions.add_opaque(42, 45);
        regions.skip_row(7);
        regions.finish();
        assert!(regions.permits(0, 10, 0..=0));
        assert!(!regions.permits(5, 11, 0..=0));
        assert!(!regions.permits(25, 26, 0..=0));
        assert!(regions.permits(30, 35, 0..=0));
        assert!(!regions.permits(43, 44, 0..=0), "inside an opaque region");
        assert!(!regions.permits(35, 45, 0..=0), "crossing an opaque region");
        assert!(regions.permits(35, 55, 0..=0), "containing an opaque region whole");
        assert!(!regions.permits(60, 61, 6..=7), "a skipped row");
    }
}
