//! `revcal bench verify`: every bug's witness checked again, on a clean clone of its
//! repository at the target, by the calibration's own witness check (in a scratch copy of the
//! commit's files, with its time limits and memory cap): it must pass there and fail with the
//! bug's patch applied. Each repository is one unit of a suite that plants its bugs one at a
//! time and reviews them with a reviewer that approves everything, so what excludes a bug here
//! is what would exclude it from every reviewer's run.

use revcal_calibrate::report::{PlantStatus, Report};
use revcal_calibrate::{Calibration, ScorerKind};
use revcal_suite::{Suite, SuiteEvent, run_units};

use crate::{BenchError, Benchmark};

/// What the check found of one bug.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BugCheck {
    /// The bug's id.
    pub id: String,
    /// Its repository.
    pub repository: String,
    /// Its witness passed at the target and failed with the bug.
    pub reproduces: bool,
    /// Why it does not reproduce.
    pub reason: Option<String>,
}

/// The reviewer of a verification: it approves everything (nothing is scored but the
/// witnesses, which run before any review).
const APPROVE: &str = "echo '[]'";

/// Checks the witness of every bug of `suite`'s entries (a suite of `benchmark`, from
/// [`Benchmark::suite_for`]): `base` gives the calibration's limits, jobs and progress; the
/// reviewer, scorer and gates are the check's own. Repositories come from `repos_dir` as for
/// a run. The checks are in the manifest's order.
pub fn verify(
    benchmark: &Benchmark,
    suite: &Suite,
    repos_dir: &std::path::Path,
    base: &dyn Fn() -> Calibration,
    on_event: &mut dyn FnMut(SuiteEvent),
) -> Result<Vec<BugCheck>, BenchError> {
    let mut bugs_only = suite.clone();
    for entry in &mut bugs_only.entries {
        entry.plants = None;
        entry.clean_rounds = 0;
        entry.trials = 1;
        entry.one_at_a_time = true;
        entry.files.clear();
    }
    let configure = || base().review_cmd(APPROVE).scorer(ScorerKind::Repro).min_recall(0.0).min_plants(1);
    let units = run_units(&bugs_only, &bugs_only.units(), repos_dir, &configure, on_event)?;
    let mut checks = Vec::new();
    for bug in &benchmark.manifest.bugs {
        let Some(unit) = units.iter().find(|unit| unit.entry == bug.repository) else { continue };
        let (reproduces, reason) = match (&unit.report, &unit.error) {
            (Some(report), _) => judge(report, &bug.fix_commit),
            (None, error) => {
                (false, Some(format!("the check could not run: {}", error.as_deref().unwrap_or("no report"))))
            }
        };
        checks.push(BugCheck { id: bug.id.clone(), repository: bug.repository.clone(), reproduces, reason });
    }
    Ok(checks)
}

/// Whether the bug fixed by `fix_commit` was valid in `report`, and why not.
fn judge(report: &Report, fix_commit: &str) -> (bool, Option<String>) {
    let plant = report.plants.iter().find(|plant| plant.fix_commit.as_deref() == Some(fix_commit));
    match plant {
        None => (false, Some("its patch no longer applies at the target".to_owned())),
        Some(plant) if plant.status == PlantStatus::Excluded => {
            let reason = plant.excluded_reason.clone().unwrap_or_else(|| {
                "its witness no longer passes at the target and fails with the bug".to_owned()
            });
            (false, Some(reason))
        }
        Some(_) => (true, None),
    }
}
