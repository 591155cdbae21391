//! A self-contained HTML page: summary, a per-category bar chart in inline SVG, and every plant
//! with its diff and the finding that caught it. No scripts, no external resources.

use std::fmt::Write;

use crate::escape::markup;
use crate::{PlantStatus, Report};

/// Geometry of the bar chart, in SVG user units.
const MIN_LABEL_WIDTH: usize = 120;
/// Approximate width of one label character at the chart's 13-unit font size.
const CHAR_WIDTH: usize = 8;
const BAR_LENGTH: usize = 320;
const ROW_HEIGHT: usize = 28;

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1b1f24}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem}
table.summary td{padding:.15rem 1rem .15rem 0}
.pass{color:#1a7f37;font-weight:700}.fail{color:#cf222e;font-weight:700}.warn{background:#fff8c5;border:1px solid #d4a72c;padding:.6rem;border-radius:6px}
.plant{border:1px solid #d0d7de;border-radius:6px;margin:1rem 0;padding:.6rem .8rem}
.plant h3{font-size:1rem;margin:.2rem 0;font-family:ui-monospace,monospace}
.badge{display:inline-block;border-radius:1rem;padding:0 .6rem;font-size:.8rem;color:#fff;margin-right:.5rem}
.badge.caught{background:#1a7f37}.badge.missed{background:#cf222e}.badge.excluded{background:#6e7781}
pre.diff{background:#f6f8fa;padding:.5rem;overflow-x:auto}
.diff .add{color:#1a7f37}.diff .del{color:#cf222e}.diff .hunk{color:#8250df}
blockquote{margin:.4rem 0;padding:.3rem .8rem;border-left:4px solid #1a7f37;background:#f6fff8;white-space:pre-wrap}
";

/// One self-contained page for the report; all text from the run is HTML-escaped.
pub fn render_html(report: &Report) -> String {
    let mut html = String::new();
    let title = markup(&format!("revcal calibrate: {}", report.commit));
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    );
    summary(&mut html, report);
    for warning in &report.warnings {
        let _ = writeln!(html, "<p class=\"warn\">{}</p>", markup(warning));
    }
    if !report.trustworthy {
        let _ = writeln!(
            html,
            "<p class=\"warn\">The <code>{}</code> scorer matches on location only: this recall is not trustworthy.</p>",
            markup(report.scorer.as_str())
        );
    }
    if !report.per_category.is_empty() {
        let _ = writeln!(html, "<h2>Recall per category</h2>");
        chart(&mut html, report);
    }
    if !report.entries.is_empty() {
        entries(&mut html, report);
    }
    let _ = writeln!(html, "<h2>Plants</h2>");
    for plant in &report.plants {
        let status = plant.status.name();
        let _ = writeln!(html, "<section class=\"plant {status}\">");
        let entry = plant.entry.as_deref().map(|e| format!("{}: ", markup(e))).unwrap_or_default();
        let _ = writeln!(
            html,
            "<h3><span class=\"badge {status}\">{status}</span>{entry}{}:{} &middot; {} &middot; {}</h3>",
            markup(&plant.file),
            plant.line,
            markup(&plant.category),
            markup(&plant.operator)
        );
        if let Some(defect) = &plant.defect {
            let _ = writeln!(html, "<p>{}</p>", markup(defect));
        }
        let _ = writeln!(html, "<pre class=\"diff\">{}</pre>", diff_lines(&plant.diff));
        match (&plant.caught_by, plant.status) {
            (Some(finding), PlantStatus::Caught) => {
                let _ = writeln!(html, "<p>Caught by:</p>\n<blockquote>{}</blockquote>", markup(finding));
            }
            (_, PlantStatus::Missed) => {
                let _ = writeln!(html, "<p>No finding identified this defect.</p>");
            }
            (_, PlantStatus::Excluded) => {
                let why = match plant.excluded_reason.as_deref() {
                    Some(reason) if reason.starts_with("runaway: ") => {
                        format!("Excluded as a runaway: {}", markup(&reason["runaway: ".len()..]))
                    }
                    Some(reason) if reason.starts_with("build: ") => {
                        format!("Excluded for breaking the build: {}", markup(&reason["build: ".len()..]))
                    }
                    Some(reason) => format!("Excluded: {}", markup(reason)),
                    None => "Excluded: an equivalent mutant (its witness did not discriminate).".to_owned(),
                };
                let _ = writeln!(html, "<p>{why}</p>");
            }
            (None, PlantStatus::Caught) => {}
        }
        if let Some(trials) = plant.caught_in_trials {
            let _ = writeln!(html, "<p>Caught in {trials} of {} trials.</p>", report.trials.len());
        }
        let _ = writeln!(html, "</section>");
    }
    let _ = writeln!(html, "</body>\n</html>");
    html
}

/// A suite's table of entries, and the units that failed.
fn entries(html: &mut String, report: &Report) {
    let _ = writeln!(html, "<h2>Recall per entry</h2>\n<table>");
    let _ = writeln!(
        html,
        "<tr><th>Entry</th><th>Commit</th><th>Caught</th><th>Total</th><th>Recall</th><th>95% CI</th><th>Failed units</th></tr>"
    );
    for entry in &report.entries {
        let interval = entry
            .recall_interval
            .map(|i| format!("{:.2}&ndash;{:.2}", i.low, i.high))
            .unwrap_or_else(|| "n/a".into());
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{:.2}</td><td>{interval}</td><td>{}</td></tr>",
            markup(&entry.name),
            markup(entry.commit.as_deref().unwrap_or("n/a")),
            entry.caught,
            entry.total,
            entry.recall,
            entry.errors
        );
    }
    let _ = writeln!(html, "</table>");
    if let Some(suite) = report.suite.as_ref().filter(|s| !s.unit_errors.is_empty()) {
        let _ = writeln!(html, "<p class=\"warn\">Units that failed (not counted):</p>\n<ul>");
        for failed in &suite.unit_errors {
            let _ = writeln!(
                html,
                "<li>{}, trial {}: {}</li>",
                markup(&failed.entry),
                failed.trial,
                markup(&failed.error)
            );
        }
        let _ = writeln!(html, "</ul>");
    }
}

fn summary(html: &mut String, report: &Report) {
    let gate = if report.gate_pass {
        "<span class=\"pass\">PASS</span>"
    } else {
        "<span class=\"fail\">FAIL</span>"
    };
    let optional = |value: Option<f64>| value.map_or_else(|| "n/a".to_string(), |v| format!("{v:.2}"));
    let interval = report
        .recall_interval
        .map(|i| format!(" (95% CI {:.2}&ndash;{:.2})", i.low, i.high))
        .unwrap_or_default();
    let mut rows = vec![
        (
            "Gate".to_string(),
            format!(
                "{gate} (recall &ge; {:.2}{})",
                report.min_recall,
                match report.min_precision {
                    Some(min) => format!(", precision &ge; {min:.2}"),
                    None => String::new(),
                }
            ),
        ),
        (
            "Recall".into(),
            format!(
                "<b>{:.2}</b> &middot; {} of {} caught{interval}",
                report.recall, report.caught, report.total
            ),
        ),
        (
            "Precision".into(),
            format!(
                "{} &middot; {} true, {} false positives",
                optional(report.precision),
                report.true_positives,
                report.false_positives
            ),
        ),
        ("Scorer".into(), markup(report.scorer.as_str())),
    ];
    if let Some(clean) = &report.clean_rounds {
        let interval = report
            .false_alarm_interval
            .map(|i| format!(" (95% CI {:.2}&ndash;{:.2})", i.low, i.high))
            .unwrap_or_default();
        rows.push((
            "False alarms".into(),
            format!(
                "{} &middot; {} of {} clean reviews flagged ({} clean changes, {} asked for){interval}",
                optional(report.false_alarm_rate),
                report.false_alarms.unwrap_or(0),
                report.clean_reviews.unwrap_or(0),
                clean.changes,
                clean.requested
            ),
        ));
    }
    rows.extend([
        ("Judge agreement".into(), optional(report.judge_agreement)),
        ("Equivalent plants excluded".into(), report.equivalent_excluded.to_string()),
        ("Runaway plants excluded".into(), report.runaway_excluded.to_string()),
        ("Plants breaking the build excluded".into(), report.build_excluded.to_string()),
        ("Caught by timeout".into(), report.caught_by_timeout.to_string()),
        ("Commit".into(), format!("<code>{}</code>", markup(&report.commit))),
        (
            "Reviewer exit code".into(),
            report.review_exit_code.map_or_else(|| "n/a".to_string(), |c| c.to_string()),
        ),
    ]);
    if let Some(controls) = &report.controls {
        for (name, control) in [("Echo control", &controls.echo), ("Oracle control", &controls.oracle)] {
            let state = match (control.passed, control.enforced) {
                (None, _) => {
                    let reason = control.not_run.as_deref().unwrap_or("no reason given");
                    rows.push((name.to_string(), format!("not run ({})", markup(reason))));
                    continue;
                }
                (Some(true), _) => "ok",
                (Some(false), true) => "FAILED",
                (Some(false), false) => "not enforced",
            };
            rows.push((
                name.to_string(),
                format!(
                    "{:.2} (needs {}, {state})",
                    control.recall.unwrap_or(0.0),
                    markup(&control.requirement)
                ),
            ));
        }
    }
    for trial in &report.trials {
        rows.push((
            format!("Trial {}", trial.trial),
            format!("recall {:.2} ({}/{})", trial.recall, trial.caught, trial.total),
        ));
    }
    let _ = writeln!(html, "<table class=\"summary\">");
    for (label, value) in rows {
        let _ = writeln!(html, "<tr><td>{label}</td><td>{value}</td></tr>");
    }
    let _ = writeln!(html, "</table>");
}

/// A horizontal bar chart: one row per category, bar length proportional to recall.
fn chart(html: &mut String, report: &Report) {
    // Room for the longest category name, so labels are never cut at the left edge.
    let longest = report.per_category.keys().map(|c| c.chars().count()).max().unwrap_or(0);
    let label_width = (longest * CHAR_WIDTH + 16).max(MIN_LABEL_WIDTH);
    let width = label_width + BAR_LENGTH + 90;
    let height = report.per_category.len() * ROW_HEIGHT + 8;
    let _ = writeln!(
        html,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" \
         role=\"img\" aria-label=\"recall per category\" font-family=\"system-ui,sans-serif\" font-size=\"13\">"
    );
    for (row, (category, score)) in report.per_category.iter().enumerate() {
        let y = row * ROW_HEIGHT + 4;
        let filled = (score.recall.clamp(0.0, 1.0) * BAR_LENGTH as f64).round();
        let text_y = y + 15;
        let _ = writeln!(
            html,
            "<text x=\"{}\" y=\"{text_y}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{label_width}\" y=\"{y}\" width=\"{BAR_LENGTH}\" height=\"20\" fill=\"#eaeef2\"/>\
             <rect x=\"{label_width}\" y=\"{y}\" width=\"{filled}\" height=\"20\" fill=\"#2da44e\"/>\
             <text x=\"{}\" y=\"{text_y}\">{:.2} ({}/{})</text>",
            label_width - 8,
            markup(category),
            label_width + BAR_LENGTH + 8,
            score.recall,
            score.caught,
            score.total
        );
    }
    let _ = writeln!(html, "</svg>");
}

/// Diff lines, escaped, each wrapped by kind so additions and deletions are coloured.
fn diff_lines(diff: &str) -> String {
    diff.lines()
        .map(|line| {
            let class = if line.starts_with("+++") || line.starts_with("---") {
                None
            } else if line.starts_with('+') {
                Some("add")
            } else if line.starts_with('-') {
                Some("del")
            } else if line.starts_with("@@") {
                Some("hunk")
            } else {
                None
            };
            match class {
                Some(class) => format!("<span class=\"{class}\">{}</span>", markup(line)),
                None => markup(line),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
