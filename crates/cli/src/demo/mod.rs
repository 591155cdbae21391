//! `revcal demo`: the zero-setup tour. It copies a small bundled Rust project (with its own
//! tests, from `examples/demo/`) into temporary git repositories and calibrates two bundled
//! model-free reviewers on it: a test-suite reviewer that runs the project's unit tests and
//! reports the changed lines they implicate with a `repro` command, and a reviewer that
//! approves everything. Both reports are real measurements, printed side by side.

mod project;
mod reviewers;
mod side_by_side;

use crate::output::emit;
use crate::style::Style;
use anyhow::Context;
use clap::{Args, ValueEnum};
use revcal_calibrate::{Calibration, Report, ScorerKind};
use revcal_report::render_human;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// A bundled reviewer, run by the demo through `revcal demo --reviewer NAME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DemoReviewer {
    /// Runs the unit tests; for failing tests, reports the changed lines with a repro.
    TestSuite,
    /// Approves everything.
    Approve,
}

impl DemoReviewer {
    fn name(self) -> &'static str {
        match self {
            DemoReviewer::TestSuite => "test-suite",
            DemoReviewer::Approve => "approve",
        }
    }

    fn title(self) -> &'static str {
        match self {
            DemoReviewer::TestSuite => "test-suite reviewer (cargo test)",
            DemoReviewer::Approve => "approve-everything reviewer",
        }
    }
}

/// Arguments of `revcal demo`.
#[derive(Debug, Args)]
#[command(after_help = crate::exit::with_table(
    "The demo needs git and cargo (nothing else: no network, no API key). It takes about half a\nminute: each planted bug is compiled and tested in a scratch copy.\n\nExamples:\n  revcal demo\n  revcal demo --keep     keep the temporary repositories to look at",
    crate::exit::DEMO_TABLE,
))]
pub(crate) struct DemoArgs {
    /// Keep the temporary repositories and print where they are.
    #[arg(long)]
    pub(crate) keep: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Run one bundled reviewer in the current directory (what the demo's --review-cmd calls).
    #[arg(long, value_enum, hide = true)]
    pub(crate) reviewer: Option<DemoReviewer>,
    /// The base commit, for --reviewer.
    #[arg(long, hide = true, default_value = "HEAD")]
    pub(crate) base: String,
    /// The cargo target directory, for --reviewer.
    #[arg(long, hide = true)]
    pub(crate) target_dir: Option<PathBuf>,
}

/// Runs `revcal demo`.
pub(crate) fn run(args: DemoArgs, style: &Style) -> anyhow::Result<ExitCode> {
    if let Some(reviewer) = args.reviewer {
        let target = args.target_dir.clone().unwrap_or_else(project::shared_target_dir);
        return reviewers::run(reviewer, &args.base, &target);
    }
    let started = Instant::now();
    let workspace = tempfile::Builder::new().prefix("revcal-demo-").tempdir()?;
    let exe = std::env::current_exe()?;
    // The two calibrations run at once, each in its own repository with its own target
    // directory (cargo would serialise builds that share one); most of their time is spent
    // waiting on cargo, not computing.
    let reviewers = [DemoReviewer::TestSuite, DemoReviewer::Approve];
    let outcomes: Vec<anyhow::Result<Report>> = std::thread::scope(|scope| {
        let handles: Vec<_> = reviewers
            .iter()
            .map(|&reviewer| {
                let (workspace, exe) = (workspace.path(), &exe);
                let quiet = args.quiet || reviewer != DemoReviewer::TestSuite;
                scope.spawn(move || {
                    let repo = workspace.join(reviewer.name());
                    let target = project::shared_target_dir().join(reviewer.name());
                    project::create_repository(&repo)?;
                    let plants = project::write_plants_file(
                        &workspace.join(format!("{}.plants.yaml", reviewer.name())),
                        &target,
                    )?;
                    calibrate(reviewer, &repo, &plants, exe, &target, quiet)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle.join().unwrap_or_else(|_| Err(anyhow::anyhow!("a demo calibration panicked")))
            })
            .collect()
    });
    let mut reports = Vec::new();
    for (reviewer, outcome) in reviewers.into_iter().zip(outcomes) {
        reports.push((reviewer, outcome?));
    }
    let colour = !style.bold("").is_empty();
    let columns: Vec<(String, String)> = reports
        .iter()
        .map(|(reviewer, report)| (reviewer.title().to_owned(), render_human(report, colour)))
        .collect();
    let mut text = side_by_side::render(&columns, style);
    text.push_str(&summary(&reports, started.elapsed().as_secs_f64()));
    if args.keep {
        let kept = workspace.keep();
        text.push_str(&format!("kept the demo repositories in {}\n", kept.display()));
    }
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn calibrate(
    reviewer: DemoReviewer,
    repo: &Path,
    plants: &Path,
    exe: &Path,
    target: &Path,
    quiet: bool,
) -> anyhow::Result<Report> {
    let review_cmd = format!(
        "{} demo --reviewer {} --base {{base}} --target-dir {}",
        reviewers::shell_quote(&exe.display().to_string()),
        reviewer.name(),
        reviewers::shell_quote(&target.display().to_string())
    );
    let report = Calibration::builder()
        .dir(repo)
        .review_cmd(review_cmd)
        .plants_file(plants)
        .scorer(ScorerKind::Repro)
        .min_recall(0.5)
        // The demo's plants are known to build (its witnesses compile each one); a build
        // check would add a cargo check per plant to a demo meant to take seconds.
        .build_check(revcal_calibrate::BuildCheck::Off)
        .on_progress(crate::calibrate::progress_bar(quiet))
        .run()
        .with_context(|| format!("calibrating the {} failed", reviewer.title()))?;
    Ok(report)
}

fn summary(reports: &[(DemoReviewer, Report)], seconds: f64) -> String {
    let mut text = String::from("\n");
    for (reviewer, report) in reports {
        text.push_str(&format!(
            "{:<34} recall {:.2} ({}/{} planted bugs caught{}), gate {}\n",
            reviewer.title(),
            report.recall,
            report.caught,
            report.total,
            excluded_words(report),
            if report.gate_pass { "pass" } else { "fail" }
        ));
    }
    // Both reviewers are measured on the same plants, unless a plant was excluded in one run
    // and not in the other: then the numbers do not compare, and the summary says which.
    if let [(first, a), (second, b)] = reports {
        let differences = revcal_calibrate::plant_differences(a, b);
        if differences.is_empty() {
            let plants = a.plants.len();
            text.push_str(&format!("both measured on the same {plants} planted bugs\n"));
        } else {
            text.push_str(
                "the two reviewers were not measured on the same plants (the numbers do not compare):\n",
            );
            for difference in differences {
                text.push_str(&format!(
                    "  {}:{}: {} for the {}, {} for the {}\n",
                    difference.file,
                    difference.line,
                    difference.before,
                    first.title(),
                    difference.now,
                    second.title()
                ));
            }
        }
    }
    text.push_str(&format!(
        "measured in {seconds:.1}s: every bug was planted in a scratch checkout, compiled and tested for real.\nnext: revcal calibrate --review-cmd 'your-reviewer {{base}}' --scorer repro   (see docs/calibration.md)\n"
    ));
    text
}

/// `; 1 excluded as equivalent, 2 as runaways` (nothing when no plant was excluded).
fn excluded_words(report: &Report) -> String {
    let mut words = Vec::new();
    if report.equivalent_excluded > 0 {
        words.push(format!("{} excluded as equivalent", report.equivalent_excluded));
    }
    if report.runaway_excluded > 0 {
        words.push(format!("{} excluded as runaways", report.runaway_excluded));
    }
    if report.build_excluded > 0 {
        words.push(format!("{} excluded for breaking the build", report.build_excluded));
    }
    if words.is_empty() { String::new() } else { format!("; {}", words.join(", ")) }
}
