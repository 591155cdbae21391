//! Exit codes: the one place that decides what number each outcome of each command gives.
//!
//! A usage error (unknown flag, bad value) must never share a code with a result: CI reads
//! `revcal calibrate`'s 2 as "the gate failed" and `revcal score`'s 2 as UNCLEAR. So each
//! command maps a usage error to the code it already uses for "could not do the job".

use revcal_score::Verdict;

/// calibrate: the gate passed.
pub(crate) const CALIBRATE_PASS: u8 = 0;
/// calibrate: operational or usage error (nothing trustworthy was measured).
pub(crate) const CALIBRATE_ERROR: u8 = 1;
/// calibrate: the gate failed.
pub(crate) const CALIBRATE_GATE_FAIL: u8 = 2;

/// score: the input (review, rubric or command line) is invalid.
pub(crate) const SCORE_INVALID_INPUT: u8 = 3;

/// Every other command: usage or I/O error.
pub(crate) const USAGE: u8 = 2;

/// The exit code of a scoring verdict: 0 PASS, 1 FAIL, 2 UNCLEAR.
pub(crate) fn verdict(verdict: Verdict) -> u8 {
    match verdict {
        Verdict::Pass => 0,
        Verdict::Fail => 1,
        Verdict::Unclear => 2,
    }
}

/// The code for a usage error or a failure of the command named `command` (the first
/// positional argument of `revcal`, or `calibrate` for `review-calibration`).
pub(crate) fn for_error_in(command: Option<&str>) -> u8 {
    match command {
        Some("calibrate") | Some("judge") | Some("bench") => CALIBRATE_ERROR,
        Some("score") => SCORE_INVALID_INPUT,
        _ => USAGE,
    }
}

/// A command's `--help` epilogue: its text, a blank line, its exit-code table.
pub(crate) fn with_table(text: &str, table: &str) -> String {
    format!("{text}\n\n{table}")
}

/// `revcal calibrate`'s and `review-calibration`'s exit-code table, for `--help`.
pub(crate) const CALIBRATE_TABLE: &str = "\
Exit status:
  0        the gate passed
  2        the gate failed (recall or precision below its minimum, or a significant drop)
  1        operational or usage error: unknown flag or bad value, not a repository,
           a reviewer command that could not run (126, 127), crashed or timed out,
           a --reviewer model that gave no review (an error, or
           --max-review-calls spent), too few plants, a failed control,
           no judge, a judge error, --max-judge-calls spent, a judge of the
           reviewer's provider (--review-provider, --reviewer),
           a reviewer exit code not in --ok-exit-codes, a calibration --record-to
           could not record (refused by the ledger, or the ledger unreachable:
           the report is written first); before the run, with --record-to: an
           authority's key the reviewer could reach (a file's path, an ancestor
           that exposes it, CAP_SYS_PTRACE) or another application's database
  128+N    signal N stopped the run (the reviews are stopped and their checkouts removed)";

/// `revcal judge calibrate`'s exit-code table, for `--help`.
pub(crate) const JUDGE_TABLE: &str = "\
Exit status:
  0  the judge meets the bar (agreement and false-match rate)
  2  the judge is below the bar
  1  operational or usage error: no judge configured, a judge error, an unreadable cases file";

/// `revcal score`'s exit-code table, for `--help`.
pub(crate) const SCORE_TABLE: &str = "\
Exit status:
  0  PASS
  1  FAIL
  2  UNCLEAR (low or missing confidence, or a score below a threshold without a failure)
  3  invalid input: the review, the rubric, or the command line (unknown flag, bad value)";

/// `revcal rubric lint`'s exit-code table, for `--help`.
pub(crate) const LINT_TABLE: &str = "\
Exit status:
  0  no errors (and no warnings with --deny-warnings)
  1  problems found
  2  usage or I/O error";

/// The exit-code table of `rubric list|get|search|schema|rules`, for `--help`.
pub(crate) const RUBRIC_QUERY_TABLE: &str = "\
Exit status:
  0  done
  1  nothing found (get: no such id; search: no match)
  2  usage or I/O error, or an invalid library";

/// `revcal mutate`'s exit-code table, for `--help`.
pub(crate) const MUTATE_TABLE: &str = "\
Exit status:
  0  mutants listed (also when there are none)
  2  usage or I/O error (unknown flag, a path that does not exist, a bad config file)";

/// `revcal demo`'s exit-code table, for `--help`.
pub(crate) const DEMO_TABLE: &str = "\
Exit status:
  0  both calibrations ran and their reports were printed
  2  usage error, or the demo could not run (no cargo or git, a failed calibration)";

/// `revcal completions`'s exit-code table, for `--help`.
pub(crate) const COMPLETIONS_TABLE: &str = "\
Exit status:
  0  the script was printed
  2  usage error (an unknown shell)";

/// `revcal cache`'s exit-code table, for `--help`.
pub(crate) const CACHE_TABLE: &str = "\
Exit status:
  0  listed, or cleared
  2  usage or I/O error (an unreadable cache directory)";

/// `revcal elo`'s exit-code table, for `--help`.
pub(crate) const ELO_TABLE: &str = "\
Exit status:
  0  done (ingest: every line stored or already present; verify-receipt: it verifies)
  1  a refusal: ingest rejected a line, handle rejected the message, sign refused the
     message, verify-receipt found a bad signature, check found an inconsistency
  2  usage or I/O error (unknown flag, bad value, unreadable file or ledger)";

/// `revcal bugs mine`: stopped because the tests fail at the fix of candidate after candidate.
pub(crate) const BUGS_STOPPED: u8 = 1;

/// `revcal bugs`'s exit-code table, for `--help`.
pub(crate) const BUGS_TABLE: &str = "\
Exit status:
  0  done (mine: also when no candidate was verified, or --max was reached; the summary
     says why)
  1  mine stopped early: the tests already failed at the fix of 3 candidates in a row, so
     the test command does not work on this history (fix it, or pass --keep-going)
  2  usage or I/O error (unknown flag, not a repository, a bad range, an unreadable bugs file)
  130, 143  interrupted (the scratch clones are removed; your repository was never touched)";

/// `revcal bench`'s exit-code table, for `--help` (its codes are calibrate's).
pub(crate) const BENCH_TABLE: &str = "\
Exit status:
  0        done: standard and merge, the gate passed (by default --min-recall 0: it ran);
           verify, every bug reproduces; generate --check, the files are current;
           compare, the reports were compared; setup, every environment is ready
  2        standard and merge: the gate failed (recall or precision below its minimum, or a
           significant drop against --baseline); verify: some bugs no longer reproduce
           (listed); generate --check: suite.yaml or manifest.yaml is stale
  1        operational or usage error: unknown flag or bad value, a benchmark that cannot be
           read, a repository that cannot be reached, a setup command that failed, a unit
           that failed, and every error of calibrate suite; compare: reports of different
           suites or not of a suite
  128+N    signal N stopped the run (reviews, setups and checks are stopped)";
