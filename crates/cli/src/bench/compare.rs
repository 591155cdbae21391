//! `revcal bench compare A.json B.json`: two reviewers' reports of the same benchmark, paired
//! plant by plant (revcal-bench's `compare`, over revcal-report's McNemar test).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use revcal_bench::{Comparison, PairedFigures};
use revcal_calibrate::Report;

use crate::exit::CALIBRATE_PASS;
use crate::output::{emit, outln};

/// Arguments of `revcal bench compare`.
#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// Reviewer A's report (`bench standard --json` or --save-baseline output).
    #[arg(value_name = "A.json")]
    pub(crate) a: PathBuf,
    /// Reviewer B's report, of the same benchmark (and --language selection).
    #[arg(value_name = "B.json")]
    pub(crate) b: PathBuf,
    /// The significance level the summary's verdict is read at (the p-values are printed
    /// whatever it is).
    #[arg(long, value_name = "F", default_value_t = 0.05)]
    pub(crate) alpha: f64,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// A report written by revcal (JSON, at most 256 MiB).
fn read_report(path: &Path) -> anyhow::Result<Report> {
    let text = crate::input::read_text(path, 256 << 20)?;
    serde_json::from_str(&text).with_context(|| {
        format!("{}: not a calibration report (write one with --json or --save-baseline)", path.display())
    })
}

/// One row of the table.
fn row(out: &mut String, name: &str, figures: &PairedFigures) {
    let side = |caught: usize, total: usize, recall: f64| format!("{caught}/{total} {recall:.2}");
    outln!(
        out,
        "  {name:<10} {:>12}  {:>12}  {:>6}  {:>6}  {:<7}  {:>9.3}  {:>9.3}  {:>9.3}",
        side(figures.a.caught, figures.a.total, figures.a.recall),
        side(figures.b.caught, figures.b.total, figures.b.recall),
        figures.a_only,
        figures.b_only,
        figures.test,
        figures.p_value,
        figures.p_a_better,
        figures.p_b_better
    );
}

/// The comparison as people read it.
fn human(comparison: &Comparison, args: &CompareArgs) -> String {
    let mut out = String::new();
    let benchmark =
        comparison.benchmark.as_deref().map(|name| format!(" (benchmark {name})")).unwrap_or_default();
    outln!(out, "revcal bench compare  suite {}{benchmark}", comparison.suite);
    let name = |reviewer: &Option<String>| reviewer.clone().unwrap_or_else(|| "(unnamed)".to_owned());
    outln!(out, "  A  {}  ({})", name(&comparison.reviewer_a), args.a.display());
    outln!(out, "  B  {}  ({})", name(&comparison.reviewer_b), args.b.display());
    outln!(out);
    outln!(
        out,
        "  {:<10} {:>12}  {:>12}  {:>6}  {:>6}  {:<7}  {:>9}  {:>9}  {:>9}",
        "plants",
        "A",
        "B",
        "A only",
        "B only",
        "test",
        "p",
        "p A>B",
        "p B>A"
    );
    if let Some(all) = comparison.kinds.get("all") {
        row(&mut out, "all", all);
    }
    for (kind, figures) in comparison.kinds.iter().filter(|(kind, _)| *kind != "all") {
        row(&mut out, kind, figures);
    }
    if let Some(all) = comparison.kinds.get("all") {
        outln!(out);
        let verdict = if all.p_value < args.alpha {
            let better = if all.p_a_better < all.p_b_better { "A" } else { "B" };
            format!("{better} is better (two-sided p={:.3} < {})", all.p_value, args.alpha)
        } else {
            format!(
                "no significant difference (two-sided p={:.3} >= {}): the gap is within what chance gives",
                all.p_value, args.alpha
            )
        };
        outln!(
            out,
            "  {verdict}; {} discordant plant(s) of {} shared",
            all.a_only + all.b_only,
            all.shared_plants
        );
        if all.different_plants > 0 {
            outln!(
                out,
                "  {} plant(s) count in one report and not the other (excluded in one run): the test is {}",
                all.different_plants,
                all.test
            );
        }
    }
    out
}

/// Runs `revcal bench compare`.
pub(crate) fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        anyhow::bail!("--alpha must be between 0 and 1 (exclusive), got {}", args.alpha);
    }
    let (a, b) = (read_report(&args.a)?, read_report(&args.b)?);
    let comparison = revcal_bench::compare(&a, &b)?;
    if args.json {
        let mut text =
            serde_json::to_string_pretty(&comparison).context("cannot serialise the comparison")?;
        text.push('\n');
        emit(&text)?;
    } else {
        emit(&human(&comparison, args))?;
    }
    Ok(ExitCode::from(CALIBRATE_PASS))
}
