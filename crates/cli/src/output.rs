//! Standard output without panics: `println!` panics when the reader has gone away
//! (`revcal ... | head`) or the disk is full. Commands build their text and hand it here.

use std::io::{self, Write};

/// Appends one formatted line to a `String` buffer.
macro_rules! outln {
    ($buffer:expr) => {
        $buffer.push('\n')
    };
    ($buffer:expr, $($arg:tt)*) => {{
        $buffer.push_str(&format!($($arg)*));
        $buffer.push('\n');
    }};
}
pub(crate) use outln;

/// Writes `text` to standard output and flushes it. A reader that has closed the pipe
/// (`revcal ... | head -1`) has all it wants: the rest is dropped and the command still
/// ends with the exit status of its result.
pub(crate) fn emit(text: &str) -> io::Result<()> {
    let text = crate::secrets::redact(text);
    let mut stdout = io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Writes `text` to the file `path`, redacted as [`emit`] redacts: a report holds what
/// reviewers and servers said.
pub(crate) fn write(path: &std::path::Path, text: &str) -> io::Result<()> {
    std::fs::write(path, crate::secrets::redact(text).as_bytes())
}

/// Standard error for the log: each event (one line, formatted whole before it is written)
/// is redacted as [`emit`] redacts, then written at once.
#[derive(Default)]
pub(crate) struct RedactingStderr {
    line: Vec<u8>,
}

impl Write for RedactingStderr {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.line.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.line.is_empty() {
            let text = String::from_utf8_lossy(&self.line).into_owned();
            self.line.clear();
            io::stderr().lock().write_all(crate::secrets::redact(&text).as_bytes())?;
        }
        Ok(())
    }
}

impl Drop for RedactingStderr {
    fn drop(&mut self) {
        // Nowhere to report a failed write of the log.
        let _ = self.flush();
    }
}

/// Writes `value` to standard output as pretty JSON and a newline, as it is serialized
/// (a large listing is never held whole in memory), and flushes it. A closed pipe is
/// handled as in [`emit`].
pub(crate) fn emit_json<T: serde::Serialize + ?Sized>(value: &T) -> io::Result<()> {
    let mut stdout = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let written = serde_json::to_writer_pretty(&mut stdout, value)
        .map_err(io::Error::from)
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush());
    match written {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// True when `error` is a write to a pipe whose reader has closed it: not a failure of
/// the command, so it ends quietly.
pub(crate) fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|io| io.kind() == io::ErrorKind::BrokenPipe)
}

/// The plural ending for a count: `""` for one, `"s"` otherwise (`format!("{n} file{}", plural(n))`).
pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
