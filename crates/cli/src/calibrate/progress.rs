//! Progress on stderr: a bar on a terminal; off a terminal (a CI log, a file) one plain line
//! per stage and per step, with the time since the run began, so that a long run is never
//! silent; nothing at all with --quiet.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use revcal_calibrate::Progress;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A progress callback for the calibration: a bar when stderr is a terminal, plain lines when
/// it is not, nothing when `quiet` is set.
pub(crate) fn bar(quiet: bool) -> Box<dyn Fn(Progress) + Send + Sync + 'static> {
    if quiet {
        Box::new(|_| {})
    } else if std::io::stderr().is_terminal() {
        Box::new(terminal_bar())
    } else {
        Box::new(lines())
    }
}

/// Plain-line progress on stderr, also on a terminal: for a command that prints lines of its
/// own between the events (`bugs mine`'s verdicts), which a bar would draw over.
pub(crate) fn lines() -> impl Fn(Progress) + Send + Sync + 'static {
    let lines = Mutex::new(Lines { started: Instant::now(), label: String::new(), total: None, done: 0 });
    move |event| {
        // A poisoned lock only means an earlier line panicked mid-print; keep going.
        let mut lines = lines.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(line) = lines.advance(event) {
            eprintln!("{line}");
        }
    }
}

/// The state of plain-line progress.
struct Lines {
    started: Instant,
    label: String,
    total: Option<u64>,
    done: u64,
}

impl Lines {
    /// The line to print for `event`, if any.
    fn advance(&mut self, event: Progress) -> Option<String> {
        let elapsed = self.started.elapsed().as_secs_f64();
        match event {
            Progress::Stage { label, total } => {
                (self.label, self.total, self.done) = (label, total, 0);
                let count = total.map(|t| format!(" ({t})")).unwrap_or_default();
                Some(format!("revcal: {elapsed:7.1}s {}{count}", self.label))
            }
            Progress::Step => {
                self.done += 1;
                let of = self.total.map(|t| format!("/{t}")).unwrap_or_default();
                Some(format!("revcal: {elapsed:7.1}s {} {}{of}", self.label, self.done))
            }
            Progress::Reviews { running, finished, total } => Some(format!(
                "revcal: {elapsed:7.1}s reviews: {running} running, {finished}/{total} finished"
            )),
            _ => None,
        }
    }
}

fn terminal_bar() -> impl Fn(Progress) + Send + Sync + 'static {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
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
        Progress::Reviews { running, finished, total } => {
            bar.set_length(total);
            bar.set_position(finished);
            bar.set_message(format!("running the reviews ({running} running)"));
        }
        Progress::Done => bar.finish_and_clear(),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_name_the_stage_and_count_its_steps() {
        let mut lines = Lines { started: Instant::now(), label: String::new(), total: None, done: 0 };
        let stage = lines.advance(Progress::Stage { label: "checking witnesses".into(), total: Some(2) });
        assert!(stage.unwrap().ends_with("s checking witnesses (2)"));
        let step = lines.advance(Progress::Step).unwrap();
        assert!(step.starts_with("revcal: ") && step.ends_with("s checking witnesses 1/2"), "{step}");
        lines.advance(Progress::Stage { label: "choosing plants".into(), total: None });
        assert!(lines.advance(Progress::Step).unwrap().ends_with("s choosing plants 1"));
        let reviews = lines.advance(Progress::Reviews { running: 2, finished: 3, total: 8 }).unwrap();
        assert!(reviews.ends_with("s reviews: 2 running, 3/8 finished"), "{reviews}");
        assert_eq!(lines.advance(Progress::Done), None);
    }
}
