//! The progress bar on stderr: shown only on a terminal, and never with --quiet.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use revcal_calibrate::Progress;
use std::io::IsTerminal;
use std::time::Duration;

/// A progress callback for the calibration; a no-op when stderr is not a terminal or
/// `quiet` is set.
pub(crate) fn bar(quiet: bool) -> impl Fn(Progress) + Send + Sync + 'static {
    let visible = !quiet && std::io::stderr().is_terminal();
    let bar = ProgressBar::with_draw_target(
        None,
        if visible { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() },
    );
    let counted = ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} {elapsed}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    let spinner = ProgressStyle::with_template("{spinner} {msg} {elapsed}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    move |event| match event {
        Progress::Stage { label, total } => {
            bar.reset();
            match total {
                Some(total) => {
                    bar.set_style(counted.clone());
                    bar.set_length(total);
                }
                None => {
                    bar.set_style(spinner.clone());
                    bar.unset_length();
                }
            }
            bar.set_message(label);
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        Progress::Step => bar.inc(1),
        Progress::Done => bar.finish_and_clear(),
    }
}
