//! Source text with a line index: byte offsets to lines, columns and tree-sitter points.

use tree_sitter::{Node, Point};

/// A file's text and the byte offset where each line starts.
pub(crate) struct Source<'a> {
    pub(crate) text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> Source<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(index, _)| index + 1));
        Source { text, line_starts }
    }

    /// The text of a node (empty when tree-sitter's range splits a character, which a
    /// `&str` source cannot produce).
    pub(crate) fn of(&self, node: Node) -> &'a str {
        self.text.get(node.start_byte()..node.end_byte()).unwrap_or("")
    }

    /// 0-based row of a byte offset.
    pub(crate) fn row(&self, byte: usize) -> usize {
        self.line_starts.partition_point(|&start| start <= byte).saturating_sub(1)
    }

    /// The tree-sitter point (row, byte column) of a byte offset.
    pub(crate) fn point(&self, byte: usize) -> Point {
        let row = self.row(byte);
        Point::new(row, byte - self.line_starts[row])
    }

    /// Byte offset where a 0-based row starts.
    pub(crate) fn line_start(&self, row: usize) -> usize {
        self.line_starts.get(row).copied().unwrap_or(self.text.len())
    }

    /// Byte offset where a 0-based row ends, before its line break (and a `\r` before it).
    pub(crate) fn line_end(&self, row: usize) -> usize {
        let end = self.line_starts.get(row + 1).map_or(self.text.len(), |next| next - 1);
        let start = self.line_start(row);
        if end > start && self.text.as_bytes().get(end - 1) == Some(&b'\r') { end - 1 } else { end }
    }

    /// 1-based line and 1-based character column of a byte offset.
    pub(crate) fn line_column(&self, byte: usize) -> (usize, usize) {
        let row = self.row(byte);
        let start = self.line_start(row);
        let column = self.text.get(start..byte).map_or(byte - start, |prefix| prefix.chars().count());
        (row + 1, column + 1)
    }

    /// The text of the line holding `byte`, up to `byte`.
    pub(crate) fn line_prefix(&self, byte: usize) -> &'a str {
        self.text.get(self.line_start(self.row(byte))..byte).unwrap_or("")
    }
}

/// The point just past `text` when it is inserted at `start`.
pub(crate) fn point_after(start: Point, text: &str) -> Point {
    match text.rfind('\n') {
        Some(last) => Point::new(start.row + text.matches('\n').count(), text.len() - last - 1),
        None => Point::new(start.row, start.column + text.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_characters_and_handle_crlf() {
        let source = Source::new("ab\r\nçé x\nlast");
        assert_eq!(source.line_column(0), (1, 1));
        assert_eq!(source.line_column(4), (2, 1));
        let x = source.text.find('x').unwrap();
        assert_eq!(source.line_column(x), (2, 4));
        assert_eq!(source.point(x), Point::new(1, 5));
        assert_eq!(&source.text[source.line_start(0)..source.line_end(0)], "ab");
        assert_eq!(&source.text[source.line_start(2)..source.line_end(2)], "last");
        assert_eq!(point_after(Point::new(3, 4), "a\nbc"), Point::new(4, 2));
        assert_eq!(point_after(Point::new(3, 4), "abc"), Point::new(3, 7));
    }
}
