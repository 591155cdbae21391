//! Progress on stderr: a bar on a terminal; off a terminal (a CI log, a file) one plain line
//! per stage, then a line for its steps at most once a second (and for its last step), with
//! the time since the run began, so that a long run is never silent and a fast stage is not
//! twenty lines; nothing at all with --quiet.

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
    let lines = Mutex::new(Lines::new(Instant::now()));
    move |event| {
        // A poisoned lock only means an earlier line panicked mid-print; keep going.
        let mut lines = lines.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(line) = lines.advance(event, Instant::now()) {
            eprintln!("{line}");
        }
    }
}

/// The least time between two lines of the same stage.
const LINE_INTERVAL: Duration = Duration::from_secs(1);

/// The state of plain-line progress.
struct Lines {
    started: Instant,
    label: String,
    total: Option<u64>,
    done: u64,
    /// When this stage last printed a line.
    printed: Instant,
}

impl Lines {
    fn new(now: Instant) -> Lines {
        Lines { started: now, label: String::new(), total: None, done: 0, printed: now }
    }

    /// The line to print for `event` at `now`, if any: every stage; a step or a reviews count
    /// once a second at most, and the last one always (so each stage ends on its count).
    fn advance(&mut self, event: Progress, now: Instant) -> Option<String> {
        let elapsed = now.duration_since(self.started).as_secs_f64();
        let due = now.duration_since(self.printed) >= LINE_INTERVAL;
        let line = match event {
            Progress::Stage { label, total } => {
                (self.label, self.total, self.done) = (label, total, 0);
                let count = total.map(|t| format!(" ({t})")).unwrap_or_default();
                format!("revcal: {elapsed:7.1}s {}{count}", self.label)
            }
            Progress::Step => {
                self.done += 1;
                if !due && self.total != Some(self.done) {
                    return None;
                }
                let of = self.total.map(|t| format!("/{t}")).unwrap_or_default();
                format!("revcal: {elapsed:7.1}s {} {}{of}", self.label, self.done)
            }
            Progress::Reviews { running, finished, total } => {
                if !due && finished != total {
                    return None;
                }
                format!("revcal: {elapsed:7.1}s reviews: {running} running, {finished}/{total} finished")
            }
            _ => return None,
        };
        self.printed = now;
        Some(line)
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
        let start = Instant::now();
        let at = |seconds: u64| start + Duration::from_secs(seconds);
        let mut lines = Lines::new(start);
        let stage =
            lines.advance(Progress::Stage { label: "checking witnesses".into(), total: Some(2) }, at(1));
        assert!(stage.unwrap().ends_with("s checking witnesses (2)"));
        let step = lines.advance(Progress::Step, at(2)).unwrap();
        assert!(step.starts_with("revcal: ") && step.ends_with("s checking witnesses 1/2"), "{step}");
        lines.advance(Progress::Stage { label: "choosing plants".into(), total: None }, at(3));
        assert!(lines.advance(Progress::Step, at(4)).unwrap().ends_with("s choosing plants 1"));
        let reviews = lines.advance(Progress::Reviews { running: 2, finished: 3, total: 8 }, at(5)).unwrap();
        assert!(reviews.ends_with("s reviews: 2 running, 3/8 finished"), "{reviews}");
        assert_eq!(lines.advance(Progress::Done, at(6)), None);
    }

    #[test]
    fn a_fast_stage_prints_its_start_and_its_last_step_not_every_step() {
        let start = Instant::now();
        let mut lines = Lines::new(start);
        let mut printed = Vec::new();
        printed.extend(
            lines.advance(Progress::Stage { label: "scoring controls".into(), total: Some(20) }, start),
        );
        for _ in 0..20 {
            printed.extend(lines.advance(Progress::Step, start));
        }
        assert_eq!(printed.len(), 2, "{printed:?}");
        assert!(printed[1].ends_with("scoring controls 20/20"), "{printed:?}");
        // Steps a second apart are each shown; half a second apart, every other one.
        let mut lines = Lines::new(start);
        lines.advance(Progress::Stage { label: "building".into(), total: None }, start);
        let shown = (1..=10u64)
            .filter_map(|i| lines.advance(Progress::Step, start + Duration::from_millis(500 * i)))
            .count();
        assert_eq!(shown, 5);
        // Reviews counts likewise, and the last one always.
        let mut lines = Lines::new(start);
        let counts: Vec<String> = (1..=4u64)
            .filter_map(|finished| lines.advance(Progress::Reviews { running: 1, finished, total: 4 }, start))
            .collect();
        assert_eq!(counts.len(), 1, "{counts:?}");
        assert!(counts[0].ends_with("4/4 finished"));
    }
}
