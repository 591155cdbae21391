//! `revcal bugs ...`: mine a repository's fixes into a bugs file of real bugs, and list one.

use crate::output::{emit, emit_json, outln, plural};
use crate::style::Style;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use revcal_calibrate::Progress;
use revcal_calibrate::bugs::{
    BROKEN_IN_A_ROW, Bug, BugMiner, BugsError, MineEvent, MineReport, RejectReason, Stop, read_bugs_file,
    tests_fail_at_fix, write_bugs_yaml,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `revcal bugs`.
#[derive(Debug, Args)]
#[command(after_help = crate::exit::with_table(
    "Examples:\n  revcal bugs mine --max 10 -o bugs.yaml          the last 2,000 commits of HEAD\n  revcal bugs mine --rev v2.0..HEAD --jobs 2 -o bugs.yaml\n  revcal bugs list bugs.yaml\n  revcal calibrate --review-cmd './review.sh {base}' --plants-file bugs.yaml\n\nThe method and its limits: docs/real-bugs.md.",
    crate::exit::BUGS_TABLE,
))]
pub(crate) struct BugsArgs {
    #[command(subcommand)]
    command: BugsCommand,
}

#[derive(Debug, Subcommand)]
enum BugsCommand {
    /// Find fixes that came with a test in a repository's history and verify each by
    /// re-introducing the bug: the bugs file lists those whose test fails with the bug and
    /// passes with the fix.
    ///
    /// A candidate is a non-merge commit that changes 1-3 Rust, Python, JavaScript,
    /// TypeScript, Go or Java source files (at most --max-lines changed lines), adds or changes
    /// a test file, and touches nothing else but what is not code (docs, changelogs, release
    /// notes); a commit that reads as a feature is set aside unless --include-features. The
    /// commits passed over are counted by reason, and named at -v. Each is verified in a scratch clone (your work
    /// tree, index and refs are never touched): at the fix the tests run, the fix's source
    /// hunks are reversed, the build is checked, the tests run again; the tests that fail with
    /// the bug and passed at the fix make the witness, which is rerun both ways to rule out a
    /// flaky test, then run at --target without and with the bugs file's patch (a later change
    /// may hide the bug or rename its test: not-at-target). The reversal must apply to
    /// --target (the bugs file's patches are against it): that is checked first, before any
    /// test runs.
    ///
    /// Each candidate's long phases (a build, the tests at the fix, the tests with the bug,
    /// the witness runs) are progress lines on stderr, at most one a second per candidate.
    /// When the tests already fail at the fix and none flips, the test command most likely
    /// does not work there: the first such candidate is named with its first failure, and
    /// mining stops after 3 in a row (exit 1) unless --keep-going. Ctrl-C (or SIGTERM) ends
    /// the verifications under way and keeps the bugs verified before it, written as a
    /// finished run's are; the exit code is then 128 + the signal's number.
    #[command(
        after_help = "Examples:\n  revcal bugs mine --max 10 -o bugs.yaml\n  revcal bugs mine ../markupsafe --test-cmd 'python3 -m pytest -q -x' -o bugs.yaml\n  revcal bugs mine --rev v1.0..v2.0 --target v2.0 --jobs 2 --json > mined.json\n  revcal bugs mine --test-cmd 'PYTHONPATH=src python3 -m pytest -q' --keep-going -o bugs.yaml\n\nDefault test commands: cargo test; python3 -m pytest -q (python3 -m unittest without\npytest); npm test. Default build checks: cargo test --no-run; python3 -m py_compile; node --check.\nA project whose configuration turns warnings into errors may need the runner's warning\nflags in --test-cmd (pytest: -W ignore::pytest.PytestRemovedIn10Warning); see docs/real-bugs.md."
    )]
    Mine(MineArgs),
    /// Show a bugs file: one line per bug with its fix, category, place and witness.
    #[command(after_help = "Examples:\n  revcal bugs list bugs.yaml\n  revcal bugs list bugs.yaml --json")]
    List {
        /// The bugs file (YAML, or JSON ending in .json).
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Print the entries as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
struct MineArgs {
    /// The repository: a work tree (any directory in it) or a bare repository (a mirror).
    #[arg(value_name = "REPO", default_value = ".")]
    repo: PathBuf,
    /// A `git log` range to read (`v1.0..HEAD`) [default: the last 2,000 commits of --target].
    ///
    /// As in git, A..B is every commit reachable from B and not from A: the commits merged in
    /// from side branches count too, so HEAD~60..HEAD (60 steps back along first parents) may
    /// hold hundreds. How many it holds is printed before mining; --first-parent reads only
    /// the first-parent line.
    #[arg(long, value_name = "RANGE")]
    rev: Option<String>,
    /// Read only the first-parent line (git log --first-parent): the commits made on the
    /// branch itself. Its merge commits are never candidates, so in a project that merges
    /// pull requests with merge commits it finds the fixes committed directly only.
    #[arg(long)]
    first_parent: bool,
    /// Stop once this many bugs are verified (newest fixes first); verifications then under
    /// way are ended.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max: Option<u64>,
    /// Verify the commits that read as features too: by default a commit whose message marks
    /// a feature (feat, add, implement, introduce, support, with no word of a fix) or whose
    /// reversal only removes code its tests call by name is set aside, counted apart.
    #[arg(long)]
    include_features: bool,
    /// Verify every candidate, also after 3 in a row whose tests already fail at the fix (by
    /// default mining stops there, exit 1: the test command does not work on this history).
    #[arg(long)]
    keep_going: bool,
    /// The test command, run at the repository root [default: by ecosystem, see below].
    #[arg(long, value_name = "CMD")]
    test_cmd: Option<String>,
    /// The build check run with the fix reversed; exit 0 means it builds [default: by ecosystem].
    #[arg(long, value_name = "CMD")]
    build_cmd: Option<String>,
    /// Candidates verified at once, each in its own scratch clone.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    jobs: u64,
    /// Time limit of one test or build run, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    test_timeout: u64,
    /// The commit the bugs file's patches apply to.
    #[arg(long, value_name = "REF", default_value = "HEAD")]
    target: String,
    /// The most source lines (added plus deleted) a fix may change.
    #[arg(long, value_name = "N", default_value_t = 12)]
    max_lines: u32,
    /// Write the bugs file here (YAML) [default: standard output, unless --json].
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print the whole report (bugs, rejections with reasons, counts) as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// No progress lines on stderr.
    #[arg(short, long)]
    quiet: bool,
}

pub(crate) fn run(args: BugsArgs, style: &Style) -> Result<ExitCode> {
    match args.command {
        BugsCommand::Mine(args) => mine(args),
        BugsCommand::List { file, json } => list(&file, json, style),
    }
}

fn mine(args: MineArgs) -> Result<ExitCode> {
    let stderr = Style::for_stderr(crate::args::ColorChoice::Auto);
    if !args.repo.is_dir() {
        bail!("{} is not a directory", args.repo.display());
    }
    let mut miner = BugMiner::new(&args.repo)
        .jobs(usize::try_from(args.jobs).unwrap_or(1))
        .test_timeout(Duration::from_secs(args.test_timeout))
        .target(&args.target)
        .first_parent(args.first_parent)
        .keep_going(args.keep_going)
        .include_features(args.include_features)
        .max_fix_size(3, args.max_lines);
    if let Some(range) = &args.rev {
        miner = miner.range(range);
    }
    if let Some(max) = args.max {
        miner = miner.max_bugs(usize::try_from(max).unwrap_or(usize::MAX));
    }
    if let Some(cmd) = &args.test_cmd {
        miner = miner.test_cmd(cmd);
    }
    if let Some(cmd) = &args.build_cmd {
        miner = miner.build_cmd(cmd);
    }
    let quiet = args.quiet;
    let keep_going = args.keep_going;
    // Phases go through calibrate's plain-line progress; the verdicts are lines of their own.
    let phases = crate::calibrate::progress_lines();
    let mut warned_broken = false;
    let mut progress = |event: MineEvent| {
        if quiet {
            return;
        }
        match event {
            MineEvent::Scanned {
                range,
                first_parent,
                commits,
                first_parent_commits,
                candidates,
                features,
                skipped,
                ..
            } => {
                eprintln!(
                    "revcal: {}, {candidates} fix candidate{} to verify{}",
                    commits_read(range.as_deref(), first_parent, commits, first_parent_commits),
                    plural(candidates),
                    set_aside(features, &skipped)
                )
            }
            MineEvent::Phase { number, total, fix_commit, phase } => phases(Progress::Stage {
                label: format!("candidate {number} of {total}: {} {phase}", short(&fix_commit)),
                total: None,
            }),
            MineEvent::Checked { done, total, fix_commit, subject, rejected, elapsed } => {
                let verdict = match &rejected {
                    None => stderr.success("verified"),
                    Some(reason) => format!("{} ({reason})", stderr.dim("rejected")),
                };
                eprintln!(
                    "revcal: [{done}/{total}] {} {verdict} in {:.1}s: {}",
                    short(&fix_commit),
                    elapsed.as_secs_f64(),
                    subject
                );
                if let Some(RejectReason::TestsFailAtFix { failing, example }) = &rejected
                    && !warned_broken
                {
                    warned_broken = true;
                    let then = if keep_going {
                        "--keep-going verifies every candidate anyway".to_owned()
                    } else {
                        format!(
                            "mining stops after {BROKEN_IN_A_ROW} such candidates in a row (--keep-going goes on)"
                        )
                    };
                    eprintln!(
                        "revcal: {} {}: your test command is broken here, for example: {example}; {then}",
                        stderr.warning("warning:"),
                        tests_fail_at_fix(*failing)
                    );
                }
            }
            MineEvent::Stopped { stop: Stop::Signal { name, .. }, in_flight } => eprintln!(
                "revcal: stopped by {name}{}; the bugs verified so far are kept",
                match in_flight {
                    0 => String::new(),
                    n => format!(", ending the {n} verification{} under way", plural(n)),
                }
            ),
            MineEvent::Stopped { stop: Stop::MaxReached { bugs }, in_flight } => eprintln!(
                "revcal: {bugs} bug{} verified (--max): stopping{}",
                plural(bugs),
                match in_flight {
                    0 => String::new(),
                    n => format!(", ending the {n} verification{} under way", plural(n)),
                }
            ),
            _ => {}
        }
    };
    let report = match miner.mine(&mut progress) {
        Ok(report) => report,
        Err(BugsError::Interrupted { signal, name }) => {
            eprintln!("revcal: stopped by {name}; the scratch clones are removed");
            return Ok(ExitCode::from(u8::try_from(128 + signal).unwrap_or(1)));
        }
        Err(error) => return Err(error).with_context(|| format!("cannot mine {}", args.repo.display())),
    };
    if !quiet {
        eprintln!("{}", summary(&report));
    }
    let header = format!(
        "Real bugs mined by revcal {} from {}: patches against {}.\nEach patch re-introduces the bug its fix_commit fixed; the witness passes without it and fails with it.\nCalibrate on them: revcal calibrate --review-cmd CMD --plants-file FILE",
        env!("CARGO_PKG_VERSION"),
        report.repo.display(),
        report.target,
    );
    let yaml = write_bugs_yaml(&report.verified, &header)?;
    if let Some(path) = &args.output {
        std::fs::write(path, &yaml).with_context(|| format!("cannot write {}", path.display()))?;
        if !quiet {
            eprintln!(
                "revcal: wrote {} bug{} to {}",
                report.verified.len(),
                plural(report.verified.len()),
                path.display()
            );
        }
    }
    if args.json {
        emit_json(&report).context("cannot write the report")?;
    } else if args.output.is_none() {
        emit(&yaml).context("cannot write the bugs file")?;
    }
    if let Some(Stop::Signal { signal, name }) = &report.stopped {
        // Said even with --quiet: it is why the exit code is not 0.
        let kept = match &args.output {
            Some(path) => format!("written to {}", path.display()),
            None if args.json => "in the report".to_owned(),
            None => "printed above".to_owned(),
        };
        eprintln!(
            "revcal: stopped by {name}: {} bug{} verified before it ({kept}), {} candidate{} not verified; the scratch clones are removed",
            report.verified.len(),
            plural(report.verified.len()),
            report.unverified,
            plural(report.unverified)
        );
        return Ok(ExitCode::from(u8::try_from(128 + signal).unwrap_or(1)));
    }
    if let Some(Stop::TestsFailAtFix { in_a_row, example }) = &report.stopped {
        // Said even with --quiet: it is why the exit code is not 0.
        eprintln!(
            "revcal: stopped: the tests already fail at the fix of {in_a_row} candidates in a row, so the test command does not work on this history (for example: {example}); fix --test-cmd, or verify the rest anyway with --keep-going"
        );
        return Ok(ExitCode::from(crate::exit::BUGS_STOPPED));
    }
    Ok(ExitCode::SUCCESS)
}

/// A fix commit's id, shortened.
fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// What the history read holds: "HEAD~60..HEAD holds 234 commits (60 on its first-parent
/// line; ...)", or, with no range, how many commits were read.
fn commits_read(range: Option<&str>, first_parent: bool, commits: usize, on_line: Option<usize>) -> String {
    let line = if first_parent { " on its first-parent line" } else { "" };
    let Some(range) = range else {
        return format!("{commits} commit{} read{line}", plural(commits));
    };
    let mut text = format!("{range} holds {commits} commit{}{line}", plural(commits));
    if let Some(on_line) = on_line.filter(|on_line| *on_line != commits) {
        text.push_str(&format!(
            " ({on_line} on its first-parent line; a range also holds the commits merged in from side branches, --first-parent reads only that line)"
        ));
    }
    text
}

/// What the candidate rule left out: ", 2 features set aside, 3 commits passed over (2
/// no-test, 1 too-many-lines)", or nothing.
fn set_aside(features: usize, skipped: &BTreeMap<String, usize>) -> String {
    let mut text = String::new();
    if features > 0 {
        text.push_str(&format!(", {features} feature{} set aside", plural(features)));
    }
    let passed_over: usize = skipped.values().sum();
    if passed_over > 0 {
        let by_reason: Vec<String> = skipped.iter().map(|(reason, n)| format!("{n} {reason}")).collect();
        text.push_str(&format!(
            ", {passed_over} commit{} passed over ({})",
            plural(passed_over),
            by_reason.join(", ")
        ));
    }
    text
}

/// One paragraph: counts, rejections by reason, time.
fn summary(report: &MineReport) -> String {
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for rejection in &report.rejected {
        *reasons.entry(rejection.reason.name()).or_default() += 1;
    }
    let by_reason: Vec<String> = reasons.iter().map(|(reason, n)| format!("{n} {reason}")).collect();
    let mut text = format!(
        "revcal: {} candidate{} of {} commit{}: {} verified, {} rejected",
        report.candidates,
        plural(report.candidates),
        report.scanned,
        plural(report.scanned),
        report.verified.len(),
        report.rejected.len()
    );
    if !by_reason.is_empty() {
        text.push_str(&format!(" ({})", by_reason.join(", ")));
    }
    if report.unverified > 0 {
        let why = match &report.stopped {
            Some(Stop::MaxReached { .. }) => "--max reached",
            Some(Stop::TestsFailAtFix { .. }) => "stopped: the tests fail at the fix",
            Some(Stop::Signal { name, .. }) => &format!("stopped by {name}"),
            _ => "stopped",
        };
        text.push_str(&format!(", {} not verified ({why})", report.unverified));
    }
    if !report.features.is_empty() {
        let n = report.features.len();
        text.push_str(&format!("; {n} feature{} set aside (--include-features verifies them)", plural(n)));
    }
    let passed_over: usize = report.skipped.values().sum();
    if passed_over > 0 {
        text.push_str(&format!("; {passed_over} commit{} passed over (-v names them)", plural(passed_over)));
    }
    text.push_str(&format!(" in {:.1}s", report.seconds));
    text
}

fn list(file: &Path, json: bool, style: &Style) -> Result<ExitCode> {
    let bugs: Vec<Bug> = read_bugs_file(file)?;
    if json {
        emit_json(&bugs).context("cannot write the list")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    for (index, bug) in bugs.iter().enumerate() {
        let lines = bug
            .patch
            .lines()
            .filter(|l| l.starts_with(['+', '-']) && !l.starts_with("+++") && !l.starts_with("---"))
            .count();
        outln!(
            out,
            "{:>3}  {}  {:<16} {}:{}  {} changed line{}",
            index + 1,
            style.bold(&bug.fix_commit[..bug.fix_commit.len().min(10)]),
            bug.category,
            bug.file,
            bug.line,
            lines,
            plural(lines)
        );
        outln!(out, "     fix:     {}", bug.fix_subject);
        outln!(out, "     witness: {}", bug.witness.as_deref().unwrap_or("(none)"));
    }
    outln!(out, "{} bug{} in {}", bugs.len(), plural(bugs.len()), file.display());
    // A calibration that plants several bugs in one file shows each where it sits once all
    // are in, so its lines can differ from these: say which line this is.
    if !bugs.is_empty() {
        outln!(
            out,
            "(file:line is the first line a bug changes with it alone applied to the target; a calibration report\n \
             gives each bug's line with every bug of the run applied, so bugs sharing a file may show other lines there)"
        );
    }
    emit(&out).context("cannot write the list")?;
    Ok(ExitCode::SUCCESS)
}
