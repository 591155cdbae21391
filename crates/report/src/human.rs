//! The human summary: headline numbers, the gate, a per-category table with bars, the plants.

use std::fmt::Write;

use crate::{PlantStatus, Report};

/// Width of a full bar, in characters.
const BAR_WIDTH: usize = 20;

/// ANSI styling that collapses to nothing when colour is off.
struct Paint {
    color: bool,
}

impl Paint {
    fn wrap(&self, code: &str, text: &str) -> String {
        if self.color { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    }
    fn bold(&self, text: &str) -> String {
        self.wrap("1", text)
    }
    fn green(&self, text: &str) -> String {
        self.wrap("32", text)
    }
    fn red(&self, text: &str) -> String {
        self.wrap("31", text)
    }
    fn yellow(&self, text: &str) -> String {
        self.wrap("33", text)
    }
    fn dim(&self, text: &str) -> String {
        self.wrap("2", text)
    }
}

/// The summary people read: recall with its interval and gate, precision, the controls, a
/// per-category table with bars, one line per plant, and a warning when the number is not
/// trustworthy. ANSI colour only when `color` is true.
pub fn render_human(report: &Report, color: bool) -> String {
    let paint = Paint { color };
    let mut out = String::new();
    let failed_units = report.suite.as_ref().map_or(0, |suite| suite.unit_errors.len());
    let verdict = if failed_units > 0 {
        paint.red(&format!(
            "INCOMPLETE ({failed_units} unit{} failed)",
            if failed_units == 1 { "" } else { "s" }
        ))
    } else if report.gate_pass {
        paint.green("PASS")
    } else {
        paint.red("FAIL")
    };
    let _ = writeln!(
        out,
        "{} {verdict}  commit {}  scorer {}",
        paint.bold("revcal calibrate"),
        short_commit(&report.commit),
        report.scorer
    );

    let plants = report.plants.iter().filter(|p| p.status != PlantStatus::Excluded).count();
    let (counted, over) = if let Some(suite) = &report.suite {
        (
            format!(
                "{}/{} caught over {plants} plants of {} entries ({} units)",
                report.caught,
                report.total,
                report.entries.len(),
                suite.units
            ),
            format!("over {plants} plants "),
        )
    } else if report.trials.len() > 1 {
        (
            format!(
                "{plants} plants x {} trials: {}/{} caught",
                report.trials.len(),
                report.caught,
                report.total
            ),
            format!("over {plants} plants "),
        )
    } else {
        (format!("{}/{} plants caught", report.caught, report.total), String::new())
    };
    let counted = if report.caught_by_timeout > 0 {
        format!("{counted} ({} by timeout)", report.caught_by_timeout)
    } else {
        counted
    };
    let interval = report
        .recall_interval
        .map(|i| format!("  (95% CI {over}{:.2}-{:.2})", i.low, i.high))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "  recall     {}  {counted}{interval}  gate >= {:.2}",
        paint.bold(&format!("{:.2}", report.recall)),
        report.min_recall
    );
    let precision = report.precision.map_or_else(|| "n/a ".to_string(), |p| format!("{p:.2}"));
    let precision_gate =
        report.min_precision.map_or_else(|| "no gate".to_string(), |m| format!("gate >= {m:.2}"));
    let per_plant = report.findings_per_plant.map(|f| format!(" ({f:.2} per plant)")).unwrap_or_default();
    let _ = writeln!(
        out,
        "  precision  {}  {} true / {} false positive findings{per_plant}  {precision_gate}",
        paint.bold(&precision),
        report.true_positives,
        report.false_positives
    );
    if let Some(count) = report.preexisting.filter(|count| *count > 0) {
        let findings = if count == 1 { "1 finding" } else { &format!("{count} findings") };
        let _ = writeln!(
            out,
            "  set aside  {findings} the reviewer also made on the unplanted change (neither caught nor false)"
        );
    }
    if let Some(clean) = &report.clean_rounds {
        let flagged = report.false_alarms.unwrap_or(0);
        let reviews = report.clean_reviews.unwrap_or(0);
        let rate = report.false_alarm_rate.map_or_else(|| "n/a ".to_string(), |r| format!("{r:.2}"));
        let counted = if reviews == clean.changes {
            format!("{flagged}/{} clean changes flagged", clean.changes)
        } else {
            format!("{flagged}/{reviews} clean reviews flagged ({} changes)", clean.changes)
        };
        let interval = report
            .false_alarm_interval
            .map(|i| format!("  (95% CI {:.2}-{:.2})", i.low, i.high))
            .unwrap_or_default();
        let asked = if clean.changes < clean.requested {
            format!("  {} asked for", clean.requested)
        } else {
            String::new()
        };
        let _ = writeln!(out, "  false alarms {}  {counted}{interval}{asked}", paint.bold(&rate));
    }
    if let Some(agreement) = report.trial_agreement {
        let runs = if report.suite.is_some() {
            format!("up to {} runs per plant", report.trials.len())
        } else {
            format!("{} runs", report.trials.len())
        };
        let plants = if report.suite.is_some() { "plants reviewed more than once" } else { "plants" };
        let _ = writeln!(
            out,
            "  trials     {runs} · same outcome in every run for {:.0}% of the {plants}",
            agreement * 100.0
        );
    }

    let mut facts = Vec::new();
    if let Some(agreement) = report.judge_agreement {
        facts.push(format!("judge agreement {agreement:.2}"));
    }
    if report.equivalent_excluded > 0 {
        let s = if report.equivalent_excluded == 1 { "" } else { "s" };
        facts.push(format!("{} equivalent plant{s} excluded", report.equivalent_excluded));
    }
    if let Some(sandbox) = report.repro_sandbox.as_deref().filter(|s| *s != "landlock") {
        facts.push(format!("repro sandbox: {sandbox}"));
    }
    if report.build_excluded > 0 {
        let s = if report.build_excluded == 1 { "" } else { "s" };
        facts.push(format!("{} plant{s} breaking the build excluded", report.build_excluded));
    }
    if report.runaway_excluded > 0 {
        let s = if report.runaway_excluded == 1 { "" } else { "s" };
        facts.push(format!("{} runaway plant{s} excluded", report.runaway_excluded));
    }
    if let Some(code) = report.review_exit_code {
        facts.push(format!("reviewer exit {code}"));
    }
    if !facts.is_empty() {
        let _ = writeln!(out, "  {}", paint.dim(&facts.join(" · ")));
    }
    if let Some(controls) = &report.controls {
        let describe = |name: &str, c: &crate::ControlOutcome| {
            let state = match (c.passed, c.enforced) {
                (None, _) => {
                    return format!("{name} not run ({})", c.not_run.as_deref().unwrap_or("no reason given"));
                }
                (Some(true), _) => paint.green("ok"),
                (Some(false), true) => paint.red("FAILED"),
                (Some(false), false) => paint.yellow("not enforced"),
            };
            format!("{name} {:.2} (needs {}, {state})", c.recall.unwrap_or(0.0), c.requirement)
        };
        let _ = writeln!(
            out,
            "  controls   {} · {}",
            describe("echo", &controls.echo),
            describe("oracle", &controls.oracle)
        );
    }
    if let Some(baseline) = &report.baseline {
        let overall = &baseline.overall;
        let verdict = if baseline.regression {
            let fell = if baseline.regressed.is_empty() {
                "overall".to_owned()
            } else {
                baseline.regressed.join(", ")
            };
            paint.red(&format!("REGRESSION in {fell}"))
        } else {
            paint.green("no significant drop")
        };
        let _ = writeln!(
            out,
            "  baseline   {}/{} -> {}/{} plants caught ({} p={:.3}, alpha {})  {verdict}",
            overall.caught_before,
            overall.total_before,
            overall.caught_now,
            overall.total_now,
            baseline.test,
            overall.p_value,
            baseline.alpha
        );
        for difference in &baseline.different_plants {
            let _ = writeln!(
                out,
                "             not the same plants: {}:{} was {}, is {}",
                difference.file, difference.line, difference.before, difference.now
            );
        }
    }
    if let Some(judge) = &report.judge {
        let _ = writeln!(
            out,
            "  judge      {} {} · {} call{} · {} cache hit{} · {} input / {} output tokens",
            judge.provider,
            judge.model,
            judge.calls,
            if judge.calls == 1 { "" } else { "s" },
            judge.cache_hits,
            if judge.cache_hits == 1 { "" } else { "s" },
            judge.input_tokens,
            judge.output_tokens
        );
    }
    if let Some(errors) = report.judge_errors.filter(|e| *e > 0) {
        let _ = writeln!(
            out,
            "  {}",
            paint.red(&format!(
                "judge      {errors} question{} without a verdict: counted as not caught, apart from misses; recall is a lower bound",
                if errors == 1 { "" } else { "s" }
            ))
        );
    }
    for trial in &report.trials {
        let _ = writeln!(
            out,
            "  trial {:<3} recall {:.2} ({}/{}), reviewer exit {}",
            trial.trial,
            trial.recall,
            trial.caught,
            trial.total,
            trial.review_exit_code.map_or_else(|| "-".to_string(), |c| c.to_string())
        );
    }

    if report.per_kind.len() > 1 || report.per_kind.contains_key("real") {
        let kinds: Vec<String> = report
            .per_kind
            .iter()
            .map(|(kind, score)| format!("{kind} {}/{} ({:.2})", score.caught, score.total, score.recall))
            .collect();
        let _ = writeln!(out, "  by kind: {}", kinds.join(", "));
    }

    if !report.per_category.is_empty() {
        let width = report.per_category.keys().map(|c| c.chars().count()).max().unwrap_or(0).max(8);
        let _ = writeln!(out);
        let _ = writeln!(out, "  {}", paint.bold(&format!("{:<width$}  caught  total  recall", "category")));
        for (category, score) in &report.per_category {
            let _ = writeln!(
                out,
                "  {category:<width$}  {:>6}  {:>5}  {:>6.2}  {}",
                score.caught,
                score.total,
                score.recall,
                bar(score.recall, &paint)
            );
        }
    }

    if !report.entries.is_empty() {
        let width = report.entries.iter().map(|e| e.name.chars().count()).max().unwrap_or(0).max(5);
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "  {}",
            paint.bold(&format!("{:<width$}  commit        caught  total  recall  95% CI", "entry"))
        );
        for entry in &report.entries {
            let interval = entry
                .recall_interval
                .map(|i| format!("{:.2}-{:.2}", i.low, i.high))
                .unwrap_or_else(|| "-".into());
            let errors = if entry.errors > 0 {
                format!("  {}", paint.red(&format!("{} unit(s) failed", entry.errors)))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {:<width$}  {:<12}  {:>6}  {:>5}  {:>6.2}  {interval}{errors}",
                entry.name,
                entry.commit.as_deref().map_or("-", short_commit),
                entry.caught,
                entry.total,
                entry.recall
            );
        }
    }
    if let Some(benchmark) = &report.benchmark {
        benchmark_tables(&mut out, benchmark, &paint);
    }
    if let Some(suite) = report.suite.as_ref().filter(|s| !s.unit_errors.is_empty()) {
        let _ = writeln!(out);
        for failed in &suite.unit_errors {
            let _ = writeln!(
                out,
                "  {} {}, trial {}: {}",
                paint.red("unit failed"),
                failed.entry,
                failed.trial,
                failed.error
            );
        }
    }

    if !report.plants.is_empty() {
        let _ = writeln!(out);
        for plant in &report.plants {
            let mark = match plant.status {
                PlantStatus::Caught => paint.green("caught  "),
                PlantStatus::Missed => paint.red("missed  "),
                PlantStatus::Excluded => paint.dim("excluded"),
            };
            let entry = plant.entry.as_deref().map(|e| format!("{e}: ")).unwrap_or_default();
            let _ = writeln!(
                out,
                "  {mark} {entry}{}:{}  {} / {}",
                plant.file, plant.line, plant.category, plant.operator
            );
            if let Some(reason) = &plant.excluded_reason {
                let _ = writeln!(out, "           {}", paint.dim(reason));
            }
        }
    }

    for warning in &report.warnings {
        let _ = writeln!(out);
        for line in wrap(&format!("warning: {warning}"), WARNING_WIDTH) {
            let _ = writeln!(out, "{}", paint.yellow(&line));
        }
    }
    if !report.trustworthy {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{}",
            paint.yellow(&format!(
                "warning: the {} scorer matches on location only; this recall is NOT trustworthy \
                 (a reviewer that merely points at changed lines scores 1.0)",
                report.scorer
            ))
        );
    }
    out
}

/// A benchmark's groups: by language, category and kind, the fix-date split and the false
/// alarms, each row with its plants and its interval over them.
fn benchmark_tables(out: &mut String, benchmark: &crate::BenchmarkFigures, paint: &Paint) {
    let mut rows: Vec<(String, &crate::GroupScore)> = Vec::new();
    for (title, scores) in [
        ("language", &benchmark.per_language),
        ("category", &benchmark.per_category),
        ("kind", &benchmark.per_kind),
    ] {
        rows.extend(scores.iter().map(|(group, score)| (format!("{title} {group}"), score)));
    }
    if let (Some(after), Some(before), Some(since)) =
        (&benchmark.after, &benchmark.fixed_before, &benchmark.fixed_after)
    {
        rows.push((format!("fixed before {after}"), before));
        rows.push((format!("fixed from {after}"), since));
    }
    let width = rows.iter().map(|(name, _)| name.chars().count()).max().unwrap_or(0).max(5);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "  {}",
        paint.bold(&format!(
            "{:<width$}  plants  caught  total  recall  95% CI",
            format!("benchmark {}", benchmark.name)
        ))
    );
    let line = |out: &mut String, name: &str, score: &crate::GroupScore| {
        let interval = score
            .recall_interval
            .map(|i| format!("{:.2}-{:.2}", i.low, i.high))
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "  {name:<width$}  {:>6}  {:>6}  {:>5}  {:>6.2}  {interval}",
            score.plants, score.caught, score.total, score.recall
        );
    };
    for (name, score) in &rows {
        line(out, name, score);
    }
    if let Some(alarms) = &benchmark.false_alarms {
        line(out, "false alarms", alarms);
    }
}

/// A bar of `BAR_WIDTH` cells, filled in proportion to `share`.
fn bar(share: f64, paint: &Paint) -> String {
    let filled = ((share.clamp(0.0, 1.0) * BAR_WIDTH as f64).round() as usize).min(BAR_WIDTH);
    format!("{}{}", paint.green(&"█".repeat(filled)), paint.dim(&"░".repeat(BAR_WIDTH - filled)))
}

/// A commit id shortened to 12 characters; other references as given.
fn short_commit(commit: &str) -> &str {
    let is_hash = commit.len() >= 40 && commit.chars().all(|c| c.is_ascii_hexdigit());
    if is_hash { &commit[..12] } else { commit }
}

/// The widest line of a warning in the human view: the report's own width, so that two
/// reports side by side (`revcal demo`) stay in their columns.
const WARNING_WIDTH: usize = 78;

/// `text` broken into lines of at most `width` characters at spaces (a longer word stands
/// alone), its own line breaks kept, continuation lines indented by two spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for (index, paragraph) in text.lines().enumerate() {
        let mut line = if index == 0 { String::new() } else { "  ".to_owned() };
        let mut words_on_line = 0;
        for word in paragraph.split_whitespace() {
            if words_on_line > 0 && line.chars().count() + 1 + word.chars().count() > width {
                lines.push(std::mem::replace(&mut line, "  ".to_owned()));
                words_on_line = 0;
            }
            if words_on_line > 0 {
                line.push(' ');
            }
            line.push_str(word);
            words_on_line += 1;
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod wrap_tests {
    use super::wrap;

    #[test]
    fn warnings_wrap_at_spaces_and_keep_their_line_breaks() {
        let lines = wrap("warning: one two three four five six\n  LGTM: ship it", 16);
        assert_eq!(lines, ["warning: one two", "  three four", "  five six", "  LGTM: ship it"]);
        assert!(lines.iter().all(|line| line.chars().count() <= 16));
        assert_eq!(wrap("a-very-long-word-alone x", 8), ["a-very-long-word-alone", "  x"]);
    }
}
