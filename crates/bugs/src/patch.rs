//! Reading the unified diffs that re-introduce bugs: which files and lines they touch. The
//! miner reads a fix's diff with it, and revcal-calibrate a bugs file's `patch` when it
//! plants one.

/// One hunk of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The file the hunk changes (the `+++ b/` side).
    pub file: String,
    /// First line of the hunk on the old side (1-based).
    pub old_start: u32,
    /// First line of the hunk on the new side (1-based).
    pub new_start: u32,
    /// The hunk's lines, each with its marker (`' '`, `'-'`, `'+'`).
    pub lines: Vec<(char, String)>,
}

impl Hunk {
    /// The new-side lines the hunk adds or next to which it removes lines: `(first, last)`,
    /// 1-based. A pure removal spans the line after it (where the text went missing).
    pub fn new_span(&self) -> (u32, u32) {
        let mut line = self.new_start;
        let mut first: Option<u32> = None;
        let mut last = line;
        for (marker, _) in &self.lines {
            match marker {
                '+' => {
                    first.get_or_insert(line);
                    last = line;
                    line += 1;
                }
                '-' => {
                    first.get_or_insert(line);
                    last = last.max(line);
                }
                _ => line += 1,
            }
        }
        let first = first.unwrap_or(self.new_start);
        (first, last.max(first))
    }

    /// The removed (`-`) and added (`+`) lines.
    pub fn changes(&self) -> (Vec<&str>, Vec<&str>) {
        let pick = |wanted: char| {
            self.lines.iter().filter(|(marker, _)| *marker == wanted).map(|(_, text)| text.as_str()).collect()
        };
        (pick('-'), pick('+'))
    }
}

/// The hunks of a unified diff (`git diff` output), in order. Lines outside hunks (headers,
/// `\ No newline at end of file`) are skipped; a malformed hunk header ends the file's hunks.
pub fn hunks(diff: &str) -> Vec<Hunk> {
    let mut out: Vec<Hunk> = Vec::new();
    let mut file: Option<String> = None;
    let mut current: Option<Hunk> = None;
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("+++ ") {
            out.extend(current.take());
            file = path.strip_prefix("b/").or(Some(path)).filter(|p| *p != "/dev/null").map(str::to_owned);
        } else if line.starts_with("diff --git ") || line.starts_with("--- ") {
            out.extend(current.take());
        } else if let Some(header) = line.strip_prefix("@@ ") {
            out.extend(current.take());
            let Some(file) = &file else { continue };
            current = parse_header(header).map(|(old_start, new_start)| Hunk {
                file: file.clone(),
                old_start,
                new_start,
                lines: Vec::new(),
            });
        } else if let Some(hunk) = current.as_mut() {
            let mut chars = line.chars();
            match chars.next() {
                Some(marker @ (' ' | '-' | '+')) => hunk.lines.push((marker, chars.as_str().to_owned())),
                None => hunk.lines.push((' ', String::new())),
                _ => {}
            }
        }
    }
    out.extend(current);
    out
}

/// `-12,3 +12,4 @@ ...` → (12, 12).
fn parse_header(header: &str) -> Option<(u32, u32)> {
    let mut parts = header.split_whitespace();
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let start = |range: &str| range.split(',').next()?.parse::<u32>().ok();
    Some((start(old)?, start(new)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/src/a.py b/src/a.py
index 1..2 100644
--- a/src/a.py
+++ b/src/a.py
@@ -10,3 +10,3 @@ def f(x):
     if x:
-        return x + 1
+        return x
     return 0
@@ -20,3 +20,2 @@ def g():
     a = 1
-    b = 2
     return a
diff --git a/lib/b.js b/lib/b.js
--- a/lib/b.js
+++ b/lib/b.js
@@ -1 +1,2 @@
+'use strict'
 module.exports = 1
";

    #[test]
    fn hunks_give_files_spans_and_changed_lines() {
        let hunks = hunks(DIFF);
        assert_eq!(hunks.len(), 3);
        assert_eq!((hunks[0].file.as_str(), hunks[0].new_span()), ("src/a.py", (11, 11)));
        assert_eq!(hunks[0].changes(), (vec!["        return x + 1"], vec!["        return x"]));
        // A pure removal points at the line that follows it.
        assert_eq!(hunks[1].new_span(), (21, 21));
        assert_eq!((hunks[2].file.as_str(), hunks[2].new_span()), ("lib/b.js", (1, 1)));
        assert!(super::hunks("not a diff\n@@ nonsense @@\n").is_empty());
    }
}
