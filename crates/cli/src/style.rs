//! Terminal colour: on only for a terminal, off when NO_COLOR is set (<https://no-color.org>).

use crate::args::ColorChoice;
use std::io::IsTerminal;

/// ANSI styling, or none.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    enabled: bool,
}

impl Style {
    /// Styling for standard output.
    pub(crate) fn for_stdout(choice: ColorChoice) -> Style {
        Style::decide(choice, std::io::stdout().is_terminal())
    }

    /// Styling for standard error.
    pub(crate) fn for_stderr(choice: ColorChoice) -> Style {
        Style::decide(choice, std::io::stderr().is_terminal())
    }

    fn decide(choice: ColorChoice, terminal: bool) -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let enabled = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && !no_color,
        };
        Style { enabled }
    }

    /// Whether this style paints at all.
    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.enabled { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() }
    }

    /// Bold red.
    pub(crate) fn error(&self, text: &str) -> String {
        self.paint("1;31", text)
    }

    /// Bold yellow.
    pub(crate) fn warning(&self, text: &str) -> String {
        self.paint("1;33", text)
    }

    /// Bold blue, for gutters and carets' frames.
    pub(crate) fn gutter(&self, text: &str) -> String {
        self.paint("1;34", text)
    }

    /// Bold.
    pub(crate) fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }

    /// Green, for success.
    pub(crate) fn success(&self, text: &str) -> String {
        self.paint("1;32", text)
    }

    /// Dim, for secondary text.
    pub(crate) fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }
}
