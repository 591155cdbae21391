//! A planted bug must not give itself away by its layout: the planted line looks like code a
//! person wrote, so a formatter or a style linter run as a "reviewer" finds nothing in it
//! that it does not find in the unplanted code. A deleted statement takes its whole line
//! with it (never a line of bare indentation), no double space or trailing blank is left,
//! the indentation is kept.
//!
//! For each language, real code (the Python standard library, crates of the cargo registry,
//! Go's own standard library, npm's JavaScript) is brought to the formatter's own layout
//! first, so that it is clean; then every operator's mutants (up to [`PER_OPERATOR`] each,
//! spread over the files) are applied one at a time and the formatter is asked about each
//! planted file: `rustfmt`, `gofmt -l`, `prettier --list-different`. Python is checked with
//! ruff's layout rules (pycodestyle's `E1`, `E2`, `E3` and `W`) on the files as they are: a
//! complaint counts when the planted file has it and the unplanted one does not. Each test
//! prints a table (operator, plants checked, plants flagged) and asserts that no operator
//! has a flagged plant. A test whose tool or corpus is missing says so on stderr and passes.

use crate::corpus::{CorpusFile, javascript_corpus, pick, python_corpus, rust_corpus, tool_present};
use crate::util::fixtures;
use revcal_mutate::{Language, Mutant, Options, analyze, apply};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Mutants checked per operator and language: enough to meet every shape an operator
/// makes in a few thousand lines, few enough for a debug build on a loaded machine.
const PER_OPERATOR: usize = 40;

/// A plant the tool flagged, for the failure message.
struct Flagged {
    operator: String,
    at: String,
    original: String,
    mutated: String,
}

/// Plants checked and flagged per operator.
#[derive(Default)]
struct Tally {
    checked: BTreeMap<String, usize>,
    flagged: Vec<Flagged>,
}

impl Tally {
    fn record(&mut self, mutant: &Mutant, flagged: bool) {
        *self.checked.entry(mutant.operator.clone()).or_default() += 1;
        if flagged {
            self.flagged.push(Flagged {
                operator: mutant.operator.clone(),
                at: mutant.location(),
                original: mutant.original_line.clone(),
                mutated: mutant.mutated_line.clone(),
            });
        }
    }

    /// Prints the table and fails when any plant was flagged.
    fn assert_clean(&self, language: &str, tool: &str) {
        let total: usize = self.checked.values().sum();
        eprintln!("{language}: {total} plants checked with {tool}, {} flagged", self.flagged.len());
        let mut flagged_per_operator: BTreeMap<&str, usize> = BTreeMap::new();
        for flagged in &self.flagged {
            *flagged_per_operator.entry(flagged.operator.as_str()).or_default() += 1;
        }
        for (operator, checked) in &self.checked {
            let flagged = flagged_per_operator.get(operator.as_str()).copied().unwrap_or(0);
            eprintln!("  {operator:<28} {checked:>4} checked {flagged:>4} flagged");
        }
        assert!(total >= 100, "{language}: only {total} plants could be checked");
        // Three examples of each operator that has any.
        let mut shown: BTreeMap<&str, usize> = BTreeMap::new();
        let examples: Vec<String> = self
            .flagged
            .iter()
            .filter(|f| {
                let count = shown.entry(f.operator.as_str()).or_default();
                *count += 1;
                *count <= 3
            })
            .map(|f| format!("{} {}:\n    {:?}\n -> {:?}", f.operator, f.at, f.original, f.mutated))
            .collect();
        assert!(
            self.flagged.is_empty(),
            "{language}: {} of {total} plants flagged by {tool}:\n{}",
            self.flagged.len(),
            examples.join("\n")
        );
    }
}

/// Up to [`PER_OPERATOR`] mutants of each operator, spread evenly over what the files give.
fn sample_per_operator(files: &[CorpusFile]) -> Vec<(usize, Mutant)> {
    let mut by_operator: BTreeMap<String, Vec<(usize, Mutant)>> = BTreeMap::new();
    for (index, file) in files.iter().enumerate() {
        let Ok(analysis) = analyze(&file.path, &file.text, &Options::default()) else { continue };
        // The plants: what a calibration plants (one line changed, or one line removed).
        for mutant in analysis.mutants.into_iter().filter(Mutant::is_one_line) {
            by_operator.entry(mutant.operator.clone()).or_default().push((index, mutant));
        }
    }
    let mut sample = Vec::new();
    for mutants in by_operator.into_values() {
        let step = mutants.len().div_ceil(PER_OPERATOR).max(1);
        sample.extend(mutants.into_iter().step_by(step));
    }
    sample
}

/// Runs `program` with `text` on its stdin in `dir`; its stdout when it succeeds.
fn pipe(program: &str, args: &[&str], dir: &Path, text: &str) -> Option<String> {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let input = text.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().ok()?;
    let _ = writer.join();
    output.status.success().then(|| String::from_utf8(output.stdout).ok()).flatten()
}

/// The corpus files in the formatter's layout, keeping those it formats to a fixed point
/// (formatting the formatted text changes nothing).
fn formatted(files: Vec<CorpusFile>, format: impl Fn(&str) -> Option<String>) -> Vec<CorpusFile> {
    files
        .into_iter()
        .filter_map(|file| {
            let once = format(&file.text)?;
            (format(&once)? == once).then_some(CorpusFile { path: file.path, text: once })
        })
        .collect()
}

/// Applies each sampled mutant alone to its (clean) file and asks `flagged` which of the
/// planted texts the tool would change.
fn check_formatted(
    files: &[CorpusFile],
    flagged: impl Fn(&[String]) -> Vec<bool>,
    language: &str,
    tool: &str,
) {
    assert!(!files.is_empty(), "{language}: no corpus file is in {tool}'s layout");
    let clean: Vec<String> = files.iter().map(|file| file.text.clone()).collect();
    assert!(flagged(&clean).iter().all(|f| !f), "{language}: the formatted files are clean");
    let sample = sample_per_operator(files);
    let planted: Vec<String> = sample
        .iter()
        .map(|(index, mutant)| apply(&files[*index].text, std::slice::from_ref(mutant)).unwrap())
        .collect();
    let verdicts = flagged(&planted);
    let mut tally = Tally::default();
    for ((_, mutant), flagged) in sample.iter().zip(verdicts) {
        tally.record(mutant, flagged);
    }
    tally.assert_clean(language, tool);
}

/// Writes `texts` as `dir/m{index}.{extension}`.
fn write_all(dir: &Path, texts: &[String], extension: &str) -> Vec<PathBuf> {
    texts
        .iter()
        .enumerate()
        .map(|(index, text)| {
            let path = dir.join(format!("m{index:04}.{extension}"));
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect()
}

/// Which of `paths` a `--list`-style tool names on stdout (one path per line).
fn listed(paths: &[PathBuf], stdout: &[u8]) -> Vec<bool> {
    let names: Vec<String> = String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| Path::new(line.trim()).file_name().unwrap_or_default().to_string_lossy().into_owned())
        .collect();
    paths
        .iter()
        .map(|path| {
            names.iter().any(|name| path.file_name().is_some_and(|own| own.to_string_lossy() == *name))
        })
        .collect()
}

#[test]
fn rust_plants_pass_rustfmt() {
    let Some(root) = rust_corpus() else {
        eprintln!("skipped: no cargo registry sources on this machine");
        return;
    };
    if !tool_present("rustfmt", &["--version"]) {
        eprintln!("skipped: rustfmt is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let format = |text: &str| pipe("rustfmt", &["--edition", "2021", "--emit", "stdout"], dir.path(), text);
    // The check can fail: a line of bare indentation is flagged.
    assert!(
        format("fn f() {\n    g();\n    \n}\n").is_some_and(|out| out != "fn f() {\n    g();\n    \n}\n")
    );
    let files = formatted(pick(&root, Language::Rust, 1), format);
    let flagged = |texts: &[String]| -> Vec<bool> {
        texts.iter().map(|text| format(text).as_deref() != Some(text)).collect()
    };
    check_formatted(&files, flagged, "rust", "rustfmt");
}

#[test]
fn go_plants_pass_gofmt() {
    let Some(root) = go_corpus() else {
        eprintln!(
            "skipped: Go is not installed (no `go env GOROOT`), so neither gofmt nor its standard library is here"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let format = |text: &str| pipe("gofmt", &[], dir.path(), text);
    assert!(format("package p\n\nfunc f() {\n\tg()\n\t\n}\n").is_some_and(|out| !out.contains("\t\n")));
    let files = formatted(pick(&root, Language::Go, 1), format);
    let flagged = |texts: &[String]| -> Vec<bool> {
        let out = tempfile::tempdir().unwrap();
        let paths = write_all(out.path(), texts, "go");
        let output = Command::new("gofmt").arg("-l").args(&paths).output().unwrap();
        listed(&paths, &output.stdout)
    };
    check_formatted(&files, flagged, "go", "gofmt -l");
}

/// Go's own standard library (`$GOROOT/src`), in gofmt's layout by rule.
fn go_corpus() -> Option<PathBuf> {
    let output = Command::new("go").args(["env", "GOROOT"]).output().ok()?;
    let root = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim()).join("src");
    let gofmt = Command::new("gofmt").arg("-l").arg(root.join("fmt/print.go")).output().ok()?;
    (root.join("fmt").is_dir() && gofmt.status.success()).then_some(root)
}

#[test]
fn javascript_and_typescript_plants_pass_prettier() {
    if !tool_present("prettier", &["--version"]) {
        eprintln!("skipped: prettier is not installed (npm install -g prettier)");
        return;
    }
    let Some(root) = javascript_corpus() else {
        eprintln!("skipped: npm's JavaScript is not on this machine");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (language, files, extension) in [
        ("javascript", pick(&root, Language::JavaScript, 2), "js"),
        (
            "typescript",
            vec![CorpusFile {
                path: PathBuf::from("src/util.ts"),
                text: std::fs::read_to_string(fixtures("corpus").join("util.ts")).unwrap(),
            }],
            "ts",
        ),
    ] {
        let stdin_path = format!("x.{extension}");
        let prettier = ["--no-config", "--no-editorconfig", "--stdin-filepath", stdin_path.as_str()];
        let format = |text: &str| pipe("prettier", &prettier, dir.path(), text);
        let files = formatted(files, format);
        let flagged = |texts: &[String]| -> Vec<bool> {
            let out = tempfile::tempdir().unwrap();
            let paths = write_all(out.path(), texts, extension);
            let output = Command::new("prettier")
                .args(["--no-config", "--no-editorconfig", "--list-different"])
                .args(&paths)
                .current_dir(out.path())
                .output()
                .unwrap();
            listed(&paths, &output.stdout)
        };
        if language == "typescript" {
            // One excerpt makes fewer than 100 plants: checked all the same, counted with
            // JavaScript's table below it.
            let sample = sample_per_operator(&files);
            let planted: Vec<String> = sample
                .iter()
                .map(|(i, m)| apply(&files[*i].text, std::slice::from_ref(m)).unwrap())
                .collect();
            let mut tally = Tally::default();
            for ((_, mutant), flagged) in sample.iter().zip(flagged(&planted)) {
                tally.record(mutant, flagged);
            }
            let examples: Vec<String> = tally
                .flagged
                .iter()
                .map(|f| format!("{} {}: {:?} -> {:?}", f.operator, f.at, f.original, f.mutated))
                .collect();
            eprintln!(
                "typescript: {} plants checked with prettier, {} flagged",
                sample.len(),
                examples.len()
            );
            assert!(sample.len() >= 30 && examples.is_empty(), "{}", examples.join("\n"));
        } else {
            check_formatted(&files, flagged, language, "prettier --list-different");
        }
    }
}

#[test]
fn python_plants_pass_ruff_s_layout_rules() {
    let Some(root) = python_corpus() else {
        eprintln!("skipped: no python3 standard library on this machine");
        return;
    };
    if !tool_present("ruff", &["--version"]) {
        eprintln!("skipped: ruff is not installed (pip install ruff)");
        return;
    }
    let files = pick(&root, Language::Python, 100);
    let dir = tempfile::tempdir().unwrap();
    // The check can fail: a line of bare indentation is W293.
    let control = complaints(dir.path(), &["def f():\n    g()\n    \n    h()\n".to_owned()]);
    assert!(control[0].contains(&("W293".to_owned(), 3)), "{control:?}");
    let sample = sample_per_operator(&files);
    let originals: Vec<String> = files.iter().map(|file| file.text.clone()).collect();
    let before = complaints(dir.path(), &originals);
    let planted: Vec<String> = sample
        .iter()
        .map(|(index, mutant)| apply(&files[*index].text, std::slice::from_ref(mutant)).unwrap())
        .collect();
    let after = complaints(dir.path(), &planted);
    let mut tally = Tally::default();
    for (((index, mutant), planted), after) in sample.iter().zip(&planted).zip(&after) {
        let new = new_complaints(mutant, &files[*index].text, planted, &before[*index], after);
        tally.record(mutant, new);
    }
    tally.assert_clean("python", "ruff check --select E1,E2,E3,W --preview");
}

/// Whether a linter's complaints (rule, 1-based row) about the planted text include one it
/// did not make about the original: rows are mapped to the original's, the plant's own lines
/// forming one bucket and the lines after them moved by the lines it added or removed.
fn new_complaints(
    mutant: &Mutant,
    original: &str,
    planted: &str,
    before: &[(String, usize)],
    after: &[(String, usize)],
) -> bool {
    let delta = planted.lines().count() as isize - original.lines().count() as isize;
    let last_original = mutant.end_line;
    let last_planted = (mutant.end_line as isize + delta).max(mutant.line as isize - 1) as usize;
    let bucket = |row: usize, last: usize, shift: isize| -> isize {
        if row < mutant.line {
            row as isize
        } else if row <= last {
            0
        } else {
            row as isize - shift
        }
    };
    let mut counts: HashMap<(String, isize), isize> = HashMap::new();
    for (rule, row) in before {
        *counts.entry((rule.clone(), bucket(*row, last_original, 0))).or_default() += 1;
    }
    for (rule, row) in after {
        *counts.entry((rule.clone(), bucket(*row, last_planted, delta))).or_default() -= 1;
    }
    counts.values().any(|count| *count < 0)
}

/// ruff's layout complaints of each text: (rule, 1-based row) of each.
fn complaints(dir: &Path, texts: &[String]) -> Vec<Vec<(String, usize)>> {
    let out = tempfile::tempdir_in(dir).unwrap();
    let paths = write_all(out.path(), texts, "py");
    let output = Command::new("ruff")
        .args([
            "check",
            "--isolated",
            "--no-cache",
            "--preview",
            "--select",
            "E1,E2,E3,W",
            "--output-format",
            "json",
        ])
        .args(["--exit-zero", "--target-version", "py311"])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "ruff: {}", String::from_utf8_lossy(&output.stderr));
    let found: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut per_file: Vec<Vec<(String, usize)>> = vec![Vec::new(); texts.len()];
    for item in found.as_array().unwrap() {
        let file = Path::new(item["filename"].as_str().unwrap());
        let Some(index) = paths.iter().position(|path| path.file_name() == file.file_name()) else {
            continue;
        };
        let row = item["location"]["row"].as_u64().unwrap() as usize;
        per_file[index].push((item["code"].as_str().unwrap_or("").to_owned(), row));
    }
    per_file
}

/// Checkstyle's layout checks: trailing blanks, blank lines doubled, spacing around
/// operators, keywords and parentheses, parentheses no one needs.
const CHECKSTYLE_LAYOUT: &str = r#"<?xml version="1.0"?>
<!DOCTYPE module PUBLIC "-//Checkstyle//DTD Checkstyle Configuration 1.3//EN" "https://checkstyle.org/dtds/configuration_1_3.dtd">
<module name="Checker">
  <module name="RegexpSingleline"><property name="format" value="\s+$"/><property name="message" value="trailing blank"/></module>
  <module name="TreeWalker">
    <module name="WhitespaceAround"/>
    <module name="WhitespaceAfter"/>
    <module name="NoWhitespaceBefore"/>
    <module name="ParenPad"/>
    <module name="MethodParamPad"/>
    <module name="UnnecessaryParentheses"/>
    <module name="EmptyLineSeparator">
      <property name="allowNoEmptyLineBetweenFields" value="true"/>
      <property name="allowMultipleEmptyLines" value="false"/>
      <property name="allowMultipleEmptyLinesInsideClassMembers" value="false"/>
    </module>
  </module>
</module>
"#;

#[test]
fn java_plants_pass_checkstyle_s_layout_checks() {
    if !tool_present("checkstyle", &["--version"]) {
        eprintln!("skipped: checkstyle is not installed (apt-get install checkstyle)");
        return;
    }
    // The JDK's own sources (`java.util`), when the JDK's src.zip is installed.
    let Some(java_home) = Command::new("sh")
        .args(["-c", "dirname \"$(dirname \"$(readlink -f \"$(command -v javac)\")\")\""])
        .output()
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map(|home| PathBuf::from(home.trim()))
    else {
        eprintln!("skipped: no JDK");
        return;
    };
    let zip = java_home.join("lib/src.zip");
    let dir = tempfile::tempdir().unwrap();
    let unpacked = Command::new("unzip")
        .args(["-q", "-o"])
        .arg(&zip)
        .arg("java.base/java/util/*.java")
        .arg("-d")
        .arg(dir.path())
        .status()
        .is_ok_and(|status| status.success());
    if !unpacked {
        eprintln!(
            "skipped: the JDK's sources are not installed ({} is missing; apt-get install openjdk-17-source)",
            zip.display()
        );
        return;
    }
    let config = dir.path().join("layout.xml");
    std::fs::write(&config, CHECKSTYLE_LAYOUT).unwrap();
    let files = pick(&dir.path().join("java.base/java/util"), Language::Java, 100);
    let complaints = |texts: &[String]| -> Vec<Vec<(String, usize)>> {
        let out = tempfile::tempdir_in(dir.path()).unwrap();
        let paths = write_all(out.path(), texts, "java");
        let output = Command::new("checkstyle").arg("-c").arg(&config).arg(out.path()).output().unwrap();
        let mut per_file = vec![Vec::new(); texts.len()];
        // `[WARN] /tmp/.../m0001.java:12:5: message [CheckName]`
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let Some(rest) = line.strip_prefix("[WARN] ").or_else(|| line.strip_prefix("[ERROR] ")) else {
                continue;
            };
            let Some((path, place)) = rest.split_once(".java:") else { continue };
            let Some(index) = paths.iter().position(|p| p.to_string_lossy() == format!("{path}.java")) else {
                continue;
            };
            let row: usize = place.split(':').next().and_then(|row| row.parse().ok()).unwrap_or(0);
            let check = line.rsplit_once('[').map_or("", |(_, check)| check.trim_end_matches(']')).to_owned();
            per_file[index].push((check, row));
        }
        per_file
    };
    let control = complaints(&[
        "class A {\n    void f() {\n        g();\n        \n        h();\n    }\n}\n".to_owned(),
    ]);
    assert!(control[0].iter().any(|(_, row)| *row == 4), "the check can fail: {control:?}");
    let sample = sample_per_operator(&files);
    let originals: Vec<String> = files.iter().map(|file| file.text.clone()).collect();
    let before = complaints(&originals);
    let planted: Vec<String> = sample
        .iter()
        .map(|(index, mutant)| apply(&files[*index].text, std::slice::from_ref(mutant)).unwrap())
        .collect();
    let after = complaints(&planted);
    let mut tally = Tally::default();
    for (((index, mutant), planted), after) in sample.iter().zip(&planted).zip(&after) {
        let new = new_complaints(mutant, &files[*index].text, planted, &before[*index], after);
        tally.record(mutant, new);
    }
    tally.assert_clean("java", "checkstyle (layout checks)");
}
