//! "Did you mean" suggestions for misspelt names.

/// The candidate closest to `input` by edit distance, when it is close enough to be a
/// plausible typo (at most a third of the longer name, and never more than 3 edits); else
/// the candidate that shares the longest start with it, when that start is at least six
/// characters (another form of the same word: `concision` for `conciseness`).
///
/// ```
/// use revcal_rubric_model::suggest::closest;
/// assert_eq!(closest("wieght", ["weight", "share", "threshold"]), Some("weight"));
/// assert_eq!(closest("concision", ["accuracy", "conciseness"]), Some("conciseness"));
/// assert_eq!(closest("colour", ["weight", "share"]), None);
/// ```
pub fn closest<'a, I>(input: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let input_lower = input.to_lowercase();
    let candidates: Vec<&'a str> = candidates.into_iter().filter(|candidate| *candidate != input).collect();
    let typo = candidates
        .iter()
        .map(|candidate| (edit_distance(&input_lower, &candidate.to_lowercase()), *candidate))
        .filter(|(distance, candidate)| {
            let longest = input.chars().count().max(candidate.chars().count());
            *distance <= (longest / 3).clamp(1, 3)
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate);
    typo.or_else(|| {
        candidates
            .iter()
            .map(|candidate| (common_start(&input_lower, &candidate.to_lowercase()), *candidate))
            .filter(|(shared, _)| *shared >= 6)
            .max_by_key(|(shared, _)| *shared)
            .map(|(_, candidate)| candidate)
    })
}

/// How many characters `a` and `b` share at their start.
fn common_start(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and
/// transpositions of adjacent characters each cost one.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut table = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        table[i * width] = i;
    }
    for (j, cell) in table.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (table[(i - 1) * width + j] + 1)
                .min(table[i * width + j - 1] + 1)
                .min(table[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(table[(i - 2) * width + j - 2] + 1);
            }
            table[i * width + j] = best;
        }
    }
    table[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("wieght", "weight"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn suggestions_prefer_the_nearest_plausible_name() {
        assert_eq!(closest("treshold", ["threshold", "share"]), Some("threshold"));
        assert_eq!(closest("acuracy", ["accuracy", "clarity"]), Some("accuracy"));
        assert_eq!(closest("xyz", ["accuracy", "clarity"]), None);
        // A name that is already exact is not suggested back.
        assert_eq!(closest("share", ["share"]), None);
    }
}
