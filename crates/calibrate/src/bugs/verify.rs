//! Verifying one fix candidate in a scratch clone: tests at the fix, the fix reversed, the
//! build, tests with the bug, the witness rerun both ways, and the reversal onto the target.

use super::history::Candidate;
use super::runner::{self, Ecosystem};
use super::{Bug, BugsError, RejectReason, git, patch, shape};
use crate::process::{self, Exit, Finished, ShellCommand};
use crate::signals::SignalWatch;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What every verification shares.
#[derive(Debug)]
pub(crate) struct Settings<'a> {
    /// The user's repository (only read).
    pub(crate) repo: &'a Path,
    /// The full id of the commit the patches must apply to.
    pub(crate) target: &'a str,
    /// The test command, or `None` for the ecosystem's.
    pub(crate) test_cmd: Option<&'a str>,
    /// The build check, or `None` for the ecosystem's.
    pub(crate) build_cmd: Option<&'a str>,
    /// Time limit of each run.
    pub(crate) timeout: Duration,
}

/// Output kept of each test run: the summaries that name failing tests come at the end of
/// long outputs, so the cap is generous.
const OUTPUT_CAP: usize = 16 << 20;

/// The runs with the bug may take this many times the run at the fix...
const BUG_TIMEOUT_MULTIPLIER: u32 = 5;
/// ...and at least this long.
const BUG_TIMEOUT_FLOOR: Duration = Duration::from_secs(20);

/// A scratch clone sharing the repository's objects (`git clone --shared`): checking out
/// and patching it never touches the user's work tree, index or refs. Removed when dropped.
#[derive(Debug)]
pub(crate) struct Workspace {
    _dir: tempfile::TempDir,
    tree: PathBuf,
    env: Vec<(&'static str, String)>,
}

impl Workspace {
    pub(crate) fn new(repo: &Path) -> Result<Workspace, BugsError> {
        let dir = tempfile::Builder::new()
            .prefix("revcal-bugs-")
            .tempdir()
            .map_err(|source| BugsError::Io { what: "create a scratch directory".into(), source })?;
        let tree = dir.path().join("tree");
        let tmp = dir.path().join("tmp");
        std::fs::create_dir_all(&tmp)
            .map_err(|source| BugsError::Io { what: format!("create {}", tmp.display()), source })?;
        let source = repo.display().to_string();
        git(
            dir.path(),
            &["clone", "--quiet", "--shared", "--no-checkout", &source, "tree"].map(str::to_owned),
        )?;
        let env = vec![
            ("TMPDIR", tmp.display().to_string()),
            // One build directory per clone, outside the tree: `git clean` keeps it, so each
            // candidate after the first builds incrementally.
            ("CARGO_TARGET_DIR", dir.path().join("target").display().to_string()),
            ("PYTHONDONTWRITEBYTECODE", "1".into()),
            ("CI", "true".into()),
        ];
        Ok(Workspace { _dir: dir, tree, env })
    }

    fn git(&self, args: &[&str]) -> Result<Vec<u8>, BugsError> {
        git(&self.tree, &args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>())
    }

    /// The tree at `commit`, with untracked files removed (ignored ones, build caches, kept).
    fn checkout(&self, commit: &str) -> Result<(), BugsError> {
        self.git(&["checkout", "--quiet", "--force", "--detach", commit])?;
        self.git(&["clean", "--quiet", "--force", "-d"])?;
        Ok(())
    }

    /// Applies `diff` in reverse; with `merge`, a diff that does not apply as it is (the
    /// code around it moved on) is merged three ways from the blobs it names. `Err` carries
    /// what git said.
    fn reverse(&self, diff: &str, merge: bool) -> Result<(), String> {
        let path = self.tree.with_file_name("fix.diff");
        std::fs::write(&path, diff).map_err(|e| e.to_string())?;
        let path = path.display().to_string();
        let first_line = |error: BugsError| match error {
            BugsError::Git { message, .. } => message.lines().next().unwrap_or("git apply failed").to_owned(),
            other => other.to_string(),
        };
        let plain =
            self.git(&["apply", "--reverse", "--whitespace=nowarn", &path]).map(drop).map_err(first_line);
        match plain {
            Err(error) if merge => {
                // A conflicted merge leaves markers behind: the caller checks out again.
                self.git(&["apply", "--reverse", "--3way", "--whitespace=nowarn", &path])
                    .map(drop)
                    .map_err(|_| format!("{error}; a three-way merge conflicts too"))
            }
            other => other,
        }
    }

    fn run(&self, script: &str, timeout: Duration, signals: &SignalWatch) -> Result<Finished, BugsError> {
        let command = ShellCommand {
            script,
            dir: &self.tree,
            timeout,
            output_cap: OUTPUT_CAP,
            env: &self.env,
            stdin: None,
            kill_past_cap: false,
            memory_cap: None,
            sandbox: None,
        };
        let finished = process::run(&command, signals)
            .map_err(|source| BugsError::Io { what: format!("run `{script}`"), source })?;
        if let Exit::Interrupted(signal) = finished.exit {
            return Err(BugsError::Interrupted { signal, name: crate::signals::name(signal) });
        }
        tracing::debug!(script, exit = %finished.exit, seconds = finished.elapsed.as_secs_f64(), "bug check run");
        Ok(finished)
    }
}

/// A test run's verdict: its exit and the failing tests it named.
struct TestRun {
    exit: Exit,
    failing: BTreeSet<runner::TestName>,
}

fn test_run(finished: &Finished) -> TestRun {
    let mut output = String::from_utf8_lossy(&finished.stdout).into_owned();
    output.push('\n');
    output.push_str(&String::from_utf8_lossy(&finished.stderr));
    TestRun { exit: finished.exit, failing: runner::failing_tests(&output) }
}

/// The last `lines` lines of a run's output, on one line.
fn tail(finished: &Finished, lines: usize) -> String {
    let stderr = String::from_utf8_lossy(&finished.stderr);
    let stdout = String::from_utf8_lossy(&finished.stdout);
    let text = if stderr.trim().is_empty() { stdout } else { stderr };
    let kept: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = kept.len().saturating_sub(lines);
    let joined = kept[start..].join(" | ");
    if joined.chars().count() > 300 { joined.chars().take(300).collect::<String>() + "..." } else { joined }
}

/// Verifies one candidate: `Ok(Ok(bug))` kept, `Ok(Err(reason))` rejected, `Err` when the
/// verification itself could not run.
pub(crate) fn verify(
    candidate: &Candidate,
    settings: &Settings<'_>,
    workspace: &mut Workspace,
    signals: &SignalWatch,
) -> Result<Result<Bug, RejectReason>, BugsError> {
    workspace.checkout(&candidate.id)?;
    let ecosystem = Ecosystem::detect(&workspace.tree);
    let test_cmd = match (settings.test_cmd, ecosystem) {
        (Some(cmd), _) => cmd.to_owned(),
        (None, Some(ecosystem)) => ecosystem.default_test_cmd(),
        (None, None) => return Ok(Err(RejectReason::NoTestCommand)),
    };
    let mut args = vec!["diff", "--no-ext-diff", "--no-color", &candidate.parent, &candidate.id, "--"];
    args.extend(candidate.sources.iter().map(String::as_str));
    let fix_diff = String::from_utf8_lossy(&workspace.git(&args)?).into_owned();

    // At the fix: it must build (old fixes may not with today's tools), then the tests run.
    let quoted: Vec<String> = candidate.sources.iter().map(|s| runner::shell_quote(s)).collect();
    let build_cmd = match (settings.build_cmd, ecosystem) {
        (Some(cmd), _) => Some(cmd.to_owned()),
        (None, Some(ecosystem)) => Some(ecosystem.default_build_cmd(&quoted.join(" "))),
        (None, None) => None,
    };
    if let Some(build_cmd) = &build_cmd {
        let built = workspace.run(build_cmd, settings.timeout, signals)?;
        if !built.exit.success() {
            return Ok(Err(RejectReason::BuildBreaks {
                detail: format!("at the fix already ({}): {}", built.exit, tail(&built, 3)),
            }));
        }
    }
    let at_fix = workspace.run(&test_cmd, settings.timeout, signals)?;
    if at_fix.exit == Exit::TimedOut {
        return Ok(Err(RejectReason::TimedOut { detail: "the tests at the fix".into() }));
    }
    // A bug may loop forever: the runs with it get five times the run at the fix (at least
    // 20 s, at most the limit), cargo-mutants' rule for its test timeout.
    let bug_timeout = (at_fix.elapsed * BUG_TIMEOUT_MULTIPLIER).max(BUG_TIMEOUT_FLOOR).min(settings.timeout);
    let at_fix = test_run(&at_fix);

    // The fix reversed: it must build, and some test must flip.
    if let Err(detail) = workspace.reverse(&fix_diff, false) {
        return Ok(Err(RejectReason::ReversalDoesNotApply {
            detail: format!("at the fix itself: {detail}"),
        }));
    }
    if let Some(build_cmd) = &build_cmd {
        let built = workspace.run(build_cmd, settings.timeout, signals)?;
        if !built.exit.success() {
            return Ok(Err(RejectReason::BuildBreaks {
                detail: format!("with the fix reversed ({}): {}", built.exit, tail(&built, 3)),
            }));
        }
    }
    let with_bug = workspace.run(&test_cmd, bug_timeout, signals)?;
    if with_bug.exit == Exit::TimedOut {
        return Ok(Err(RejectReason::TimedOut {
            detail: format!("the tests with the bug ran past {:.0} s", bug_timeout.as_secs_f64()),
        }));
    }
    let with_bug = test_run(&with_bug);
    let flipped: BTreeSet<runner::TestName> = with_bug.failing.difference(&at_fix.failing).cloned().collect();
    let witness = if !flipped.is_empty() {
        runner::witness(&test_cmd, &flipped)
    } else if at_fix.exit.success() && !with_bug.exit.success() && with_bug.failing.is_empty() {
        // No names to read, but the suite passes at the fix and fails with the bug.
        test_cmd.trim().to_owned()
    } else {
        let detail = if at_fix.exit.success() {
            format!("the tests pass with the bug too ({})", with_bug.exit)
        } else if with_bug.failing.is_empty() && at_fix.failing.is_empty() {
            format!("the tests fail at the fix already ({}) and name no failing test", at_fix.exit)
        } else {
            let first = with_bug.failing.iter().next().map(|test| test.name.as_str()).unwrap_or("");
            format!(
                "{} test(s) fail with the bug, all of them at the fix too ({first})",
                with_bug.failing.len()
            )
        };
        return Ok(Err(RejectReason::NoTestFlips { detail }));
    };

    // The witness, rerun: it must pass at the fix and fail with the bug again.
    workspace.checkout(&candidate.id)?;
    let rerun = workspace.run(&witness, settings.timeout, signals)?;
    if !rerun.exit.success() {
        return Ok(Err(RejectReason::Flaky {
            detail: format!("`{witness}` fails on a rerun at the fix ({})", rerun.exit),
        }));
    }
    if let Err(detail) = workspace.reverse(&fix_diff, false) {
        return Ok(Err(RejectReason::ReversalDoesNotApply {
            detail: format!("at the fix itself: {detail}"),
        }));
    }
    let rerun = workspace.run(&witness, bug_timeout, signals)?;
    if rerun.exit.success() {
        return Ok(Err(RejectReason::Flaky {
            detail: format!("`{witness}` passes on a rerun with the bug"),
        }));
    }

    // The same reversal on the target: the bugs file's patch.
    workspace.checkout(settings.target)?;
    if let Err(detail) = workspace.reverse(&fix_diff, true) {
        workspace.checkout(settings.target)?;
        return Ok(Err(RejectReason::ReversalDoesNotApply { detail }));
    }
    // Against the target's tree (a three-way merge also updates the index).
    let mut args = vec!["diff", "--no-ext-diff", "--no-color", "HEAD", "--"];
    args.extend(candidate.sources.iter().map(String::as_str));
    let patch_text = String::from_utf8_lossy(&workspace.git(&args)?).into_owned();
    workspace.checkout(settings.target)?;
    let hunks = patch::hunks(&patch_text);
    let Some(first) = hunks.first() else {
        return Ok(Err(RejectReason::ReversalDoesNotApply {
            detail: "the target already reads as the bug (the fix was undone later)".into(),
        }));
    };
    let body =
        String::from_utf8_lossy(&workspace.git(&["log", "-1", "--format=%b", &candidate.id])?).into_owned();
    Ok(Ok(Bug {
        file: first.file.clone(),
        line: first.new_span().0,
        category: shape::category(&hunks).to_owned(),
        defect: shape::defect(&candidate.subject, &body, &hunks),
        witness: Some(witness),
        patch: patch_text,
        fix_commit: candidate.id.clone(),
        fix_subject: candidate.subject.clone(),
    }))
}
