//! Verifying one fix candidate in a scratch clone: the reversal onto the target first (no
//! test runs for a fix that cannot be put back), then tests at the fix, the fix reversed, the
//! build, tests with the bug, and the witness rerun both ways. Each command carries the
//! workspace's run token, so that whatever it leaves behind, also in another session, is
//! ended after it.

use super::history::Candidate;
use super::runner::{self, Ecosystem};
use super::{Bug, BugsError, RejectReason, git, patch, shape};
use revcal_process::SignalWatch;
use revcal_process::{self as process, Exit, Finished, ShellCommand};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A phase of a candidate's verification that runs a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Phase {
    /// The build check at the fix.
    BuildAtFix,
    /// The test command at the fix.
    TestsAtFix,
    /// The build check with the fix reversed.
    BuildWithBug,
    /// The test command with the fix reversed.
    TestsWithBug,
    /// The witness, rerun at the fix (it must pass).
    WitnessAtFix,
    /// The witness, rerun with the bug (it must fail).
    WitnessWithBug,
    /// The witness at the target, where the bugs file's patch applies (it must pass).
    WitnessAtTarget,
    /// The build check at the target with the patch applied.
    BuildWithBugAtTarget,
    /// The witness at the target with the patch applied (it must fail).
    WitnessWithBugAtTarget,
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Phase::BuildAtFix => "build at the fix",
            Phase::TestsAtFix => "tests at the fix",
            Phase::BuildWithBug => "build with the bug",
            Phase::TestsWithBug => "tests with the bug",
            Phase::WitnessAtFix => "witness rerun at the fix",
            Phase::WitnessWithBug => "witness rerun with the bug",
            Phase::WitnessAtTarget => "witness at the target",
            Phase::BuildWithBugAtTarget => "build with the bug at the target",
            Phase::WitnessWithBugAtTarget => "witness with the bug at the target",
        })
    }
}

/// Why a verification ended without a verdict.
#[derive(Debug)]
pub(crate) enum Abort {
    /// It could not run (or a signal stopped it).
    Failed(BugsError),
    /// Mining stopped while it ran; its processes were ended.
    Cancelled,
}

impl From<BugsError> for Abort {
    fn from(error: BugsError) -> Abort {
        Abort::Failed(error)
    }
}

/// How a verification hears that it must stop, and tells which phase it is in.
pub(crate) struct Control<'a> {
    /// Signals sent to revcal.
    pub(crate) signals: &'a SignalWatch,
    /// Set when mining stops: no command starts after it, and the current one is ended.
    pub(crate) cancel: &'a AtomicBool,
    /// Hears each phase as it begins.
    pub(crate) phase: &'a dyn Fn(Phase),
}

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
    withheld: Vec<String>,
    token: String,
}

impl Workspace {
    /// A scratch clone of `repo` whose commands carry `token` in
    /// [`process::RUN_TOKEN_VARIABLE`].
    pub(crate) fn new(repo: &Path, token: &str) -> Result<Workspace, BugsError> {
        let dir = tempfile::Builder::new()
            .prefix("revcal-bugs-")
            .tempdir()
            .map_err(|cause| BugsError::Io { what: "create a scratch directory".into(), cause })?;
        let tree = dir.path().join("tree");
        let tmp = dir.path().join("tmp");
        std::fs::create_dir_all(&tmp)
            .map_err(|cause| BugsError::Io { what: format!("create {}", tmp.display()), cause })?;
        let source = repo.display().to_string();
        git(dir.path(), &["clone", "--quiet", "--shared", "--no-checkout", &source, "tree"])?;
        let env = vec![
            ("TMPDIR", tmp.display().to_string()),
            // One build directory per clone, outside the tree: `git clean` keeps it, so each
            // candidate after the first builds incrementally.
            ("CARGO_TARGET_DIR", dir.path().join("target").display().to_string()),
            ("PYTHONDONTWRITEBYTECODE", "1".into()),
            ("CI", "true".into()),
            (process::RUN_TOKEN_VARIABLE, token.to_owned()),
        ];
        // Byte code the build check writes anyway (`py_compile`) goes beside the sources,
        // where `git clean` removes it with each checkout, never into a prefix of the user's:
        // there it would outlive the checkout, and a source of the same size rewritten within
        // the same second would run as its stale byte code.
        let withheld = vec!["PYTHONPYCACHEPREFIX".to_owned()];
        Ok(Workspace { _dir: dir, tree, env, withheld, token: token.to_owned() })
    }

    /// The tree at `commit`, with untracked files removed (ignored ones, build caches, kept).
    fn checkout(&self, commit: &str) -> Result<(), BugsError> {
        git(&self.tree, &["checkout", "--quiet", "--force", "--detach", commit])?;
        git(&self.tree, &["clean", "--quiet", "--force", "-d"])?;
        Ok(())
    }

    /// Applies `diff` in reverse; with `merge`, a diff that does not apply as it is (the
    /// code around it moved on) is merged three ways from the blobs it names. `Err` carries
    /// what git said.
    fn reverse(&self, diff: &str, merge: bool) -> Result<(), String> {
        let plain = self.apply(diff, &["--reverse"]);
        match plain {
            Err(error) if merge => {
                // A conflicted merge leaves markers behind: the caller checks out again.
                self.apply(diff, &["--reverse", "--3way"])
                    .map_err(|_| format!("{error}; a three-way merge conflicts too"))
            }
            other => other,
        }
    }

    /// `git apply` of `diff` with `options`; `Err` carries the first line git said.
    fn apply(&self, diff: &str, options: &[&str]) -> Result<(), String> {
        let path = self.tree.with_file_name("fix.diff");
        std::fs::write(&path, diff).map_err(|e| e.to_string())?;
        let path = path.display().to_string();
        let mut args = vec!["apply"];
        args.extend_from_slice(options);
        args.extend(["--whitespace=nowarn", path.as_str()]);
        git(&self.tree, &args).map(drop).map_err(|error| match error {
            BugsError::Git { message, .. } => message.lines().next().unwrap_or("git apply failed").to_owned(),
            other => other.to_string(),
        })
    }

    /// Runs `script` in the tree; then ends whatever it left running, in its process group or
    /// out of it (`setsid`, a double fork), so that nothing writes to the tree afterwards.
    fn run(&self, script: &str, timeout: Duration, control: &Control<'_>) -> Result<Finished, Abort> {
        if control.cancel.load(Ordering::SeqCst) {
            return Err(Abort::Cancelled);
        }
        let command = ShellCommand::new(script, &self.tree, timeout)
            .output_cap(OUTPUT_CAP)
            .env(&self.env)
            .withhold(&self.withheld);
        let finished = process::run(&command, control.signals);
        process::end_descendants(&self.token);
        // Ended from outside because mining stopped: its exit says nothing about the bug, and
        // its wait may fail (ECHILD) when the stopping thread reaped it first.
        if control.cancel.load(Ordering::SeqCst) {
            return Err(Abort::Cancelled);
        }
        let finished = finished.map_err(|cause| BugsError::Io { what: format!("run `{script}`"), cause })?;
        if let Exit::Interrupted(signal) = finished.exit {
            return Err(BugsError::Interrupted { signal, name: revcal_process::signal_name(signal) }.into());
        }
        tracing::debug!(script, exit = %finished.exit, seconds = finished.elapsed.as_secs_f64(), "bug check run");
        Ok(finished)
    }

    /// Runs `script` as `phase`, announced first.
    fn phase(
        &self,
        phase: Phase,
        script: &str,
        timeout: Duration,
        control: &Control<'_>,
    ) -> Result<Finished, Abort> {
        (control.phase)(phase);
        self.run(script, timeout, control)
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        // Before the directory goes: nothing may still be writing into it.
        process::end_descendants(&self.token);
    }
}

/// A test run's verdict: its exit and the failing tests it named.
struct TestRun {
    exit: Exit,
    failing: BTreeSet<runner::TestName>,
    /// The first line naming a failure, else the exit and the end of the output.
    example: String,
}

fn test_run(finished: &Finished) -> TestRun {
    let mut output = String::from_utf8_lossy(&finished.stdout).into_owned();
    output.push('\n');
    output.push_str(&String::from_utf8_lossy(&finished.stderr));
    let example = runner::first_failure_line(&output)
        .unwrap_or_else(|| format!("{}, the output ends: {}", finished.exit, tail(finished, 3)));
    TestRun { exit: finished.exit, failing: runner::failing_tests(&output), example }
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

/// The fix reversed onto the target: the bugs file's patch, or why it cannot be had.
fn reversal_onto_target(
    fix_diff: &str,
    candidate: &Candidate,
    settings: &Settings<'_>,
    workspace: &Workspace,
) -> Result<Result<String, RejectReason>, BugsError> {
    workspace.checkout(settings.target)?;
    let mut sources = candidate.sources.clone();
    if let Err(detail) = workspace.reverse(fix_diff, true) {
        workspace.checkout(settings.target)?;
        // A source file the fix changed may have been renamed since: follow it to its name
        // at the target, the patch then names the file as it is there.
        let renames = renamed_since(workspace, candidate, settings.target)?;
        let moved = (!renames.is_empty()).then(|| renamed_diff(fix_diff, &renames));
        let followed = match &moved {
            Some(diff) => workspace.reverse(diff, true).is_ok(),
            None => false,
        };
        if !followed {
            workspace.checkout(settings.target)?;
            return Ok(Err(RejectReason::ReversalDoesNotApply { detail }));
        }
        for source in &mut sources {
            if let Some((_, new)) = renames.iter().find(|(old, _)| old == source) {
                source.clone_from(new);
            }
        }
    }
    // Against the target's tree (a three-way merge also updates the index).
    let mut args = vec!["diff", "--no-ext-diff", "--no-color", "HEAD", "--"];
    args.extend(sources.iter().map(String::as_str));
    let patch_text = String::from_utf8_lossy(&git(&workspace.tree, &args)?).into_owned();
    workspace.checkout(settings.target)?;
    if let Some(detail) = other_lines(fix_diff, &patch_text) {
        return Ok(Err(RejectReason::ReversalDoesNotApply { detail }));
    }
    if patch::hunks(&patch_text).is_empty() {
        return Ok(Err(RejectReason::ReversalDoesNotApply {
            detail: "the target already reads as the bug (the fix was undone later)".into(),
        }));
    }
    Ok(Ok(patch_text))
}

/// The witness where the bugs file's patch applies: it must pass at the target and fail with
/// the patch applied there, as every user of the bugs file will run it. At the fix it did;
/// the target may differ: a later change can hide the bug (the reversed lines no longer
/// reached), move or rename the witness's test, or a three-way reversal can merge into code
/// that is not the bug. `Ok(Err(reason))` when it does not reproduce.
fn reproduces_at_target(
    patch_text: &str,
    witness: &str,
    build_cmd: Option<&str>,
    bug_timeout: Duration,
    settings: &Settings<'_>,
    workspace: &Workspace,
    control: &Control<'_>,
) -> Result<Result<(), RejectReason>, Abort> {
    workspace.checkout(settings.target)?;
    let clean = workspace.phase(Phase::WitnessAtTarget, witness, settings.timeout, control)?;
    if clean.exit == Exit::TimedOut {
        return Ok(Err(RejectReason::TimedOut { detail: "the witness at the target".into() }));
    }
    if !clean.exit.success() {
        return Ok(Err(RejectReason::NotAtTarget {
            detail: format!(
                "`{witness}` fails at the target without the bug ({}): {}",
                clean.exit,
                tail(&clean, 3)
            ),
        }));
    }
    if let Err(detail) = workspace.apply(patch_text, &[]) {
        return Ok(Err(RejectReason::ReversalDoesNotApply {
            detail: format!("its patch, at the target: {detail}"),
        }));
    }
    if let Some(build_cmd) = build_cmd {
        let built = workspace.phase(Phase::BuildWithBugAtTarget, build_cmd, settings.timeout, control)?;
        if !built.exit.success() {
            return Ok(Err(RejectReason::BuildBreaks {
                detail: format!("with the bug at the target ({}): {}", built.exit, tail(&built, 3)),
            }));
        }
    }
    let with_bug = workspace.phase(Phase::WitnessWithBugAtTarget, witness, bug_timeout, control)?;
    if with_bug.exit.success() {
        return Ok(Err(RejectReason::NotAtTarget {
            detail: format!("`{witness}` passes at the target with the bug: a later change hides it"),
        }));
    }
    Ok(Ok(()))
}

/// Why `patch_text` (the fix reversed onto the target) is not the fix reversed, if it is not:
/// every line it removes must be one the fix added, and every line it adds one the fix removed
/// (as multisets, trailing blanks aside). Less than the whole reversal is fine: where a later
/// change already undid part of the fix, the target reads as the bug there, and the merge
/// leaves it. A three-way merge can report a clean merge and yet put the old lines beside the
/// new ones (more-itertools' `iterate` fix, reversed onto a target that had rewritten the
/// loop, appended the old loop after the new one): a file that is neither the bug nor the
/// fix, which a witness may still fail on.
fn other_lines(fix_diff: &str, patch_text: &str) -> Option<String> {
    let changed = |diff: &str| {
        let (mut removed, mut added) = (BTreeMap::<String, usize>::new(), BTreeMap::<String, usize>::new());
        for hunk in patch::hunks(diff) {
            let (gone, new) = hunk.changes();
            for line in gone {
                *removed.entry(line.trim_end().to_owned()).or_default() += 1;
            }
            for line in new {
                *added.entry(line.trim_end().to_owned()).or_default() += 1;
            }
        }
        (removed, added)
    };
    // How many of `lines` are not in `allowed`, counted with their multiplicity.
    let beyond = |lines: &BTreeMap<String, usize>, allowed: &BTreeMap<String, usize>| -> usize {
        lines.iter().map(|(line, n)| n.saturating_sub(allowed.get(line).copied().unwrap_or(0))).sum()
    };
    let (fix_removed, fix_added) = changed(fix_diff);
    let (removed, added) = changed(patch_text);
    let (stray_added, stray_removed) = (beyond(&added, &fix_removed), beyond(&removed, &fix_added));
    (stray_added + stray_removed > 0).then(|| {
        format!(
            "the reversal merged into the target changes other lines than the fix did: it adds {stray_added} line(s) the fix did not remove and removes {stray_removed} it did not add"
        )
    })
}

/// The fix's source files renamed between the fix and `target`: (name at the fix, name at
/// the target), as git's rename detection finds them.
fn renamed_since(
    workspace: &Workspace,
    candidate: &Candidate,
    target: &str,
) -> Result<Vec<(String, String)>, BugsError> {
    let out = git(
        &workspace.tree,
        &[
            "diff",
            "--no-ext-diff",
            "--name-status",
            "-z",
            "--find-renames",
            "--diff-filter=R",
            &candidate.id,
            target,
        ],
    )?;
    // `-z`: each record is `R<score>`, the old name and the new one, NUL-separated.
    let fields: Vec<String> =
        out.split(|byte| *byte == 0).map(|f| String::from_utf8_lossy(f).into_owned()).collect();
    let mut renames = Vec::new();
    let mut rest = fields.iter();
    while let Some(status) = rest.next() {
        let (Some(old), Some(new)) = (rest.next(), rest.next()) else { break };
        if status.starts_with('R') && candidate.sources.contains(old) {
            renames.push((old.clone(), new.clone()));
        }
    }
    Ok(renames)
}

/// `diff` with the files of `renames` named by their new names.
fn renamed_diff(diff: &str, renames: &[(String, String)]) -> String {
    let mut out = String::with_capacity(diff.len());
    for line in diff.split_inclusive('\n') {
        let mut line = line.to_owned();
        for (old, new) in renames {
            if line.starts_with("diff --git ") {
                line = line.replace(&format!(" a/{old} b/{old}"), &format!(" a/{new} b/{new}"));
            } else if let Some(rest) = line.strip_prefix("--- a/").or_else(|| line.strip_prefix("+++ b/"))
                && rest.trim_end_matches('\n') == old
            {
                line = format!("{}{new}\n", &line[..6]);
            }
        }
        out.push_str(&line);
    }
    out
}

/// Verifies one candidate: `Ok(Ok(bug))` kept, `Ok(Err(reason))` rejected, `Err` when the
/// verification could not run or was cancelled.
pub(crate) fn verify(
    candidate: &Candidate,
    settings: &Settings<'_>,
    workspace: &mut Workspace,
    control: &Control<'_>,
) -> Result<Result<Bug, RejectReason>, Abort> {
    let mut args = vec!["diff", "--no-ext-diff", "--no-color", &candidate.parent, &candidate.id, "--"];
    args.extend(candidate.sources.iter().map(String::as_str));
    let fix_diff = String::from_utf8_lossy(&git(&workspace.tree, &args)?).into_owned();

    // First what costs no test run: a fix that cannot be put back into the target is no
    // bug of the target, whatever its tests say.
    let patch_text = match reversal_onto_target(&fix_diff, candidate, settings, workspace)? {
        Ok(patch_text) => patch_text,
        Err(reason) => return Ok(Err(reason)),
    };

    workspace.checkout(&candidate.id)?;
    let ecosystem = Ecosystem::detect(&workspace.tree);
    let test_cmd = match (settings.test_cmd, ecosystem) {
        (Some(cmd), _) => cmd.to_owned(),
        (None, Some(ecosystem)) => ecosystem.default_test_cmd(&workspace.tree),
        (None, None) => return Ok(Err(RejectReason::NoTestCommand)),
    };

    // At the fix: it must build (old fixes may not with today's tools), then the tests run.
    let quoted: Vec<String> = candidate.sources.iter().map(|s| runner::shell_quote(s)).collect();
    let build_cmd = match (settings.build_cmd, ecosystem) {
        (Some(cmd), _) => Some(cmd.to_owned()),
        (None, Some(ecosystem)) => {
            Some(ecosystem.default_build_cmd(&quoted.join(" "), &test_cmd, &workspace.tree))
        }
        (None, None) => None,
    };
    if let Some(build_cmd) = &build_cmd {
        let built = workspace.phase(Phase::BuildAtFix, build_cmd, settings.timeout, control)?;
        if !built.exit.success() {
            return Ok(Err(RejectReason::BuildBreaks {
                detail: format!("at the fix already ({}): {}", built.exit, tail(&built, 3)),
            }));
        }
    }
    let at_fix = workspace.phase(Phase::TestsAtFix, &test_cmd, settings.timeout, control)?;
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
        let built = workspace.phase(Phase::BuildWithBug, build_cmd, settings.timeout, control)?;
        if !built.exit.success() {
            return Ok(Err(RejectReason::BuildBreaks {
                detail: format!("with the fix reversed ({}): {}", built.exit, tail(&built, 3)),
            }));
        }
    }
    let with_bug = workspace.phase(Phase::TestsWithBug, &test_cmd, bug_timeout, control)?;
    if with_bug.exit == Exit::TimedOut {
        return Ok(Err(RejectReason::TimedOut {
            detail: format!("the tests with the bug ran past {:.0} s", bug_timeout.as_secs_f64()),
        }));
    }
    let with_bug = test_run(&with_bug);
    let flipped: BTreeSet<runner::TestName> = with_bug.failing.difference(&at_fix.failing).cloned().collect();
    let witness = if !flipped.is_empty() {
        let flipped = runner::gopath_packages_as_directories(flipped, &workspace.tree);
        let go_mod = std::fs::read_to_string(workspace.tree.join("go.mod")).ok();
        runner::witness(&test_cmd, &flipped, go_mod.as_deref().and_then(runner::go_module).as_deref())
    } else if at_fix.exit.success() && !with_bug.exit.success() && with_bug.failing.is_empty() {
        // No names to read, but the suite passes at the fix and fails with the bug.
        test_cmd.trim().to_owned()
    } else if !at_fix.exit.success() {
        // Nothing flips and the tests fail at the fix itself: most often the test command
        // does not work at this commit, which the user needs to hear about.
        return Ok(Err(RejectReason::TestsFailAtFix {
            failing: at_fix.failing.len(),
            example: at_fix.example,
        }));
    } else {
        return Ok(Err(RejectReason::NoTestFlips {
            detail: format!("the tests pass with the bug too ({})", with_bug.exit),
        }));
    };

    // The witness, rerun: it must pass at the fix and fail with the bug again.
    workspace.checkout(&candidate.id)?;
    let rerun = workspace.phase(Phase::WitnessAtFix, &witness, settings.timeout, control)?;
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
    let rerun = workspace.phase(Phase::WitnessWithBug, &witness, bug_timeout, control)?;
    if rerun.exit.success() {
        return Ok(Err(RejectReason::Flaky {
            detail: format!("`{witness}` passes on a rerun with the bug"),
        }));
    }

    // The build check at the target names the files as they are there (renamed, perhaps).
    let build_at_target = match (settings.build_cmd, ecosystem) {
        (Some(cmd), _) => Some(cmd.to_owned()),
        (None, Some(ecosystem)) => {
            let mut files: Vec<String> = Vec::new();
            for hunk in patch::hunks(&patch_text) {
                let quoted = runner::shell_quote(&hunk.file);
                if !files.contains(&quoted) {
                    files.push(quoted);
                }
            }
            Some(ecosystem.default_build_cmd(&files.join(" "), &test_cmd, &workspace.tree))
        }
        (None, None) => None,
    };
    if let Err(reason) = reproduces_at_target(
        &patch_text,
        &witness,
        build_at_target.as_deref(),
        bug_timeout,
        settings,
        workspace,
        control,
    )? {
        return Ok(Err(reason));
    }

    let hunks = patch::hunks(&patch_text);
    let Some(first) = hunks.first() else {
        // Checked in reversal_onto_target; kept as a rejection rather than a panic.
        return Ok(Err(RejectReason::ReversalDoesNotApply { detail: "the patch holds no hunk".into() }));
    };
    let body = String::from_utf8_lossy(&git(&workspace.tree, &["log", "-1", "--format=%b", &candidate.id])?)
        .into_owned();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// more-itertools' cd0a3a8 ("fix `iterate()` to enable `func` to raise StopIteration").
    const ITERATE_FIX: &str = "diff --git a/more_itertools/more.py b/more_itertools/more.py
index 41a2fd8..1facd8e 100755
--- a/more_itertools/more.py
+++ b/more_itertools/more.py
@@ -475,7 +475,10 @@ def iterate(func, start):
     \"\"\"
     while True:
         yield start
-        start = func(start)
+        try:
+            start = func(start)
+        except StopIteration:
+            break
 
 
 def with_iter(context_manager):
";

    #[test]
    fn a_reversal_that_is_the_fix_reversed_passes_and_a_garbled_merge_does_not() {
        // Reversed where the code is as the fix left it (moved 85 lines down).
        let faithful = "--- a/more_itertools/more.py
+++ b/more_itertools/more.py
@@ -560,10 +560,7 @@ def iterate(func, start):
     \"\"\"
     while True:
         yield start
-        try:
-            start = func(start)
-        except StopIteration:
-            break
+        start = func(start)
 
 
 def with_iter(context_manager):
";
        assert_eq!(other_lines(ITERATE_FIX, faithful), None);
        // What `git apply --reverse --3way` made of it at the target of the standard benchmark,
        // where the loop had been rewritten into `with suppress(StopIteration):`: a clean merge
        // that appends the old loop after the new one.
        let garbled = "diff --git a/more_itertools/more.py b/more_itertools/more.py
index f2dbe57..2845651 100755
--- a/more_itertools/more.py
+++ b/more_itertools/more.py
@@ -560,6 +560,9 @@ def iterate(func, start):
         while True:
             yield start
             start = func(start)
+    while True:
+        yield start
+        start = func(start)
 
 
 def with_iter(context_manager):
";
        let why = other_lines(ITERATE_FIX, garbled).unwrap();
        assert!(
            why.contains("it adds 2 line(s) the fix did not remove and removes 0 it did not add"),
            "{why}"
        );
        // Part of the reversal, where a later change already undid the rest: fine.
        let part = "--- a/more_itertools/more.py
+++ b/more_itertools/more.py
@@ -560,4 +560,3 @@ def iterate(func, start):
         yield start
-        try:
             start = func(start)
-        except StopIteration:
-            break
";
        assert_eq!(other_lines(ITERATE_FIX, part), None);
        // The old line twice: once more than the fix removed it.
        let twice = "--- a/more_itertools/more.py
+++ b/more_itertools/more.py
@@ -560,6 +560,4 @@ def iterate(func, start):
-        try:
-            start = func(start)
-        except StopIteration:
-            break
+        start = func(start)
+        start = func(start)
";
        assert!(other_lines(ITERATE_FIX, twice).is_some_and(|why| why.contains("adds 1 line(s)")));
    }
}
