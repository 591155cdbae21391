//! Seeded, stratified selection of a few mutants to plant.

use crate::{Category, Mutant};
use std::collections::{BTreeMap, HashSet};

/// Picks up to `n` mutants, deterministically for a given `seed`.
///
/// Stratified: categories take turns (round-robin, in an order shuffled by the seed);
/// within a category its operators take turns; within an operator, files take turns and
/// each file's mutants come in seeded random order. A candidate is passed over when it
/// overlaps a chosen mutant or touches a line (of the same file) that a chosen mutant
/// touches, so the result is non-overlapping with at most one mutant per line. The result
/// is in selection order: its first `k` mutants are themselves a stratified sample.
pub fn select(mutants: &[Mutant], n: usize, seed: u64) -> Vec<Mutant> {
    let mut rng = SplitMix64::new(seed);
    // category -> operator -> file -> mutants; BTreeMaps keep the walk independent of input order.
    let mut strata: BTreeMap<Category, BTreeMap<&str, BTreeMap<&str, Vec<&Mutant>>>> = BTreeMap::new();
    let mut sorted: Vec<&Mutant> = mutants.iter().collect();
    sorted.sort_by(|a, b| (&a.file, a.start_byte, &a.id).cmp(&(&b.file, b.start_byte, &b.id)));
    sorted.dedup_by(|a, b| a.id == b.id);
    for mutant in sorted {
        strata
            .entry(mutant.category)
            .or_default()
            .entry(mutant.operator.as_str())
            .or_default()
            .entry(mutant.file.as_str())
            .or_default()
            .push(mutant);
    }
    let mut categories: Vec<CategoryQueue> = strata
        .into_values()
        .map(|operators| {
            let mut queues: Vec<Vec<&Mutant>> =
                operators.into_values().map(|files| interleave_files(files, &mut rng)).collect();
            rng.shuffle(&mut queues);
            CategoryQueue {
                operators: queues.into_iter().map(|queue| queue.into_iter().rev().collect()).collect(),
                turn: 0,
            }
        })
        .collect();
    rng.shuffle(&mut categories);

    let mut chosen: Vec<Mutant> = Vec::new();
    let mut used_lines: HashSet<(&str, usize)> = HashSet::new();
    while chosen.len() < n && categories.iter().any(|category| !category.is_empty()) {
        for category in categories.iter_mut() {
            if chosen.len() >= n {
                break;
            }
            while let Some(candidate) = category.next() {
                let lines = candidate.line..=candidate.end_line;
                let free = lines.clone().all(|line| !used_lines.contains(&(candidate.file.as_str(), line)))
                    && !chosen.iter().any(|picked| picked.overlaps(candidate));
                if free {
                    used_lines.extend(lines.map(|line| (candidate.file.as_str(), line)));
                    chosen.push(candidate.clone());
                    break;
                }
            }
        }
    }
    chosen
}

/// One category's operators, each a stack of candidates (next candidate last).
struct CategoryQueue<'a> {
    operators: Vec<Vec<&'a Mutant>>,
    turn: usize,
}

impl<'a> CategoryQueue<'a> {
    fn is_empty(&self) -> bool {
        self.operators.iter().all(Vec::is_empty)
    }

    /// The next candidate of the next operator that has one.
    fn next(&mut self) -> Option<&'a Mutant> {
        let count = self.operators.len();
        for step in 0..count {
            let index = (self.turn + step) % count;
            if let Some(mutant) = self.operators[index].pop() {
                self.turn = index + 1;
                return Some(mutant);
            }
        }
        None
    }
}

/// Files take turns: shuffle each file's mutants and the file order, then deal one from
/// each file in turn.
fn interleave_files<'a>(files: BTreeMap<&str, Vec<&'a Mutant>>, rng: &mut SplitMix64) -> Vec<&'a Mutant> {
    let mut lists: Vec<Vec<&Mutant>> = files.into_values().collect();
    for list in &mut lists {
        rng.shuffle(list);
    }
    rng.shuffle(&mut lists);
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    let mut dealt = Vec::new();
    for round in 0..longest {
        dealt.extend(lists.iter().filter_map(|list| list.get(round).copied()));
    }
    dealt
}

/// SplitMix64: a tiny, well-known generator whose output is fixed forever for a seed,
/// which keeps samples reproducible across platforms and dependency upgrades.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Fisher-Yates with a bounded draw (the modulo bias is irrelevant at these sizes).
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for index in (1..items.len()).rev() {
            let other = (self.next_u64() % (index as u64 + 1)) as usize;
            items.swap(index, other);
        }
    }
}
