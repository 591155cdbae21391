//! Two reports next to each other, each under its title, padded by visible width (ANSI
//! colour codes take no columns).

use crate::style::Style;

/// Visible width of `text`: characters outside ANSI escape sequences.
fn visible_width(text: &str) -> usize {
    let mut width = 0;
    let mut in_escape = false;
    for c in text.chars() {
        match (in_escape, c) {
            (false, '\x1b') => in_escape = true,
            (true, 'm') => in_escape = false,
            (true, _) => {}
            (false, _) => width += 1,
        }
    }
    width
}

/// `columns` (title, body) side by side, separated by a bar.
pub(crate) fn render(columns: &[(String, String)], style: &Style) -> String {
    let bodies: Vec<Vec<&str>> = columns.iter().map(|(_, body)| body.lines().collect()).collect();
    let widths: Vec<usize> = columns
        .iter()
        .zip(&bodies)
        .map(|((title, _), lines)| {
            lines.iter().map(|l| visible_width(l)).chain([title.len()]).max().unwrap_or(0)
        })
        .collect();
    let rows = bodies.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = String::new();
    let cell = |text: &str, width: usize, last: bool| {
        if last {
            text.to_owned()
        } else {
            format!("{text}{}", " ".repeat(width.saturating_sub(visible_width(text))))
        }
    };
    let titles: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, (title, _))| cell(&style.bold(title), widths[i], i + 1 == columns.len()))
        .collect();
    out.push_str(titles.join(" │ ").trim_end());
    out.push('\n');
    for row in 0..rows {
        let cells: Vec<String> = bodies
            .iter()
            .enumerate()
            .map(|(i, lines)| cell(lines.get(row).copied().unwrap_or(""), widths[i], i + 1 == bodies.len()))
            .collect();
        out.push_str(cells.join(" │ ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_by_visible_width() {
        let style = Style::for_stdout(crate::args::ColorChoice::Never);
        let text = render(
            &[("a".into(), "\x1b[1mxy\x1b[0m\nlonger".into()), ("b".into(), "1\n2\n3".into())],
            &style,
        );
        assert_eq!(text, "a      │ b\n\x1b[1mxy\x1b[0m     │ 1\nlonger │ 2\n       │ 3\n");
    }
}
