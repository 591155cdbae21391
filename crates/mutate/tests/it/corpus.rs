//! The engine on real code that no one here wrote: a few thousand lines each of Rust crates
//! from the cargo registry, the Python standard library and npm's JavaScript. Each test
//! skips with a message when its corpus or tool is not on the machine.
//!
//! Checked: every mutant re-parses (a fresh, non-incremental tree-sitter parse) without new
//! ERROR or MISSING nodes; `original` is the file's bytes at the range and `mutated_line` is
//! what applying the mutant leaves on those lines; 200 applied mutants per language pass the
//! language's own tool (`python3 -m py_compile`, `node --check`, `rustfmt`); the same input
//! gives the same output.

use crate::util::fixtures;
use revcal_mutate::{Category, Language, Mutant, Options, analyze, apply, is_test_path, select};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Lines of each corpus to mutate: "a few thousand", small enough for a debug build on CI.
const LINES_PER_CORPUS: usize = 3000;
/// Applied mutants checked by the language's own tool.
const TOOL_SAMPLE: usize = 200;

pub(crate) struct CorpusFile {
    pub(crate) path: PathBuf,
    pub(crate) text: String,
}

/// Files of one corpus in a fixed order: source files of 80..1200 lines that are not
/// tests, at most `per_dir` from one directory, until `LINES_PER_CORPUS` lines.
pub(crate) fn pick(root: &Path, language: Language, per_dir: usize) -> Vec<CorpusFile> {
    let mut all = Vec::new();
    collect(root, &mut all, 0);
    all.sort();
    let mut picked = Vec::new();
    let mut lines = 0;
    let mut per_parent: std::collections::HashMap<PathBuf, usize> = Default::default();
    for path in all {
        if Language::from_path(&path) != Some(language)
            || is_test_path(path.strip_prefix(root).unwrap_or(&path))
        {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let count = text.lines().count();
        let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let taken = per_parent.entry(parent).or_default();
        if !(80..=1200).contains(&count) || *taken >= per_dir {
            continue;
        }
        *taken += 1;
        lines += count;
        picked.push(CorpusFile { path, text });
        if lines >= LINES_PER_CORPUS {
            break;
        }
    }
    picked
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    if depth > 6 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.')
            || matches!(name.as_ref(), "test" | "tests" | "idle_test" | "examples" | "benches")
        {
            continue;
        }
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect(&path, out, depth + 1),
            Ok(kind) if kind.is_file() => out.push(path),
            _ => {}
        }
    }
}

pub(crate) fn rust_corpus() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))?;
    let src = home.join("registry/src");
    let mut indexes: Vec<PathBuf> =
        std::fs::read_dir(src).ok()?.flatten().map(|entry| entry.path()).collect();
    indexes.sort();
    indexes.into_iter().find(|path| {
        path.file_name().is_some_and(|name| name.to_string_lossy().starts_with("index.crates.io"))
    })
}

pub(crate) fn python_corpus() -> Option<PathBuf> {
    let output = Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"])
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    path.is_dir().then_some(path)
}

pub(crate) fn javascript_corpus() -> Option<PathBuf> {
    let output = Command::new("sh").args(["-c", "readlink -f \"$(command -v npm)\""]).output().ok()?;
    let npm = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    // .../node_modules/npm/bin/npm-cli.js -> .../node_modules/npm
    let root = npm.ancestors().find(|dir| {
        dir.file_name().is_some_and(|name| name == "npm") && dir.join("package.json").is_file()
    })?;
    Some(root.to_path_buf())
}

pub(crate) fn tool_present(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn parser(language: Language) -> tree_sitter::Parser {
    let grammar: tree_sitter::Language = match language {
        Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Language::Python => tree_sitter_python::LANGUAGE.into(),
        Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        Language::Java => tree_sitter_java::LANGUAGE.into(),
        Language::Go => tree_sitter_go::LANGUAGE.into(),
        other => panic!("no grammar for {other:?} in the corpus test: add it here"),
    };
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&grammar).unwrap();
    parser
}

/// ERROR and MISSING nodes of a fresh parse.
fn syntax_errors(parser: &mut tree_sitter::Parser, text: &str) -> usize {
    let tree = parser.parse(text, None).unwrap();
    let mut count = 0;
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            count += 1;
        } else if node.has_error() {
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
    }
    count
}

/// Generates, checks every mutant, and returns the mutants with their files' text.
fn run_corpus(language: Language, files: &[CorpusFile]) -> Vec<(Mutant, String)> {
    let lines: usize = files.iter().map(|file| file.text.lines().count()).sum();
    let all = check_files(language, files);
    let categories: BTreeSet<Category> = all.iter().map(|(mutant, _)| mutant.category).collect();
    eprintln!(
        "{language}: {} files, {lines} lines, {} mutants, categories: {:?}",
        files.len(),
        all.len(),
        categories.iter().map(|category| category.as_str()).collect::<Vec<_>>()
    );
    assert!(lines >= LINES_PER_CORPUS / 2, "corpus too small: {lines} lines");
    assert!(all.len() > lines / 10, "too few mutants: {} over {lines} lines", all.len());
    assert!(categories.len() >= 7, "categories seen: {categories:?}");
    all
}

/// The excerpts kept in the repository run everywhere, corpora or not.
#[test]
fn excerpts_in_the_repository() {
    let dir = fixtures("corpus");
    for (name, language, at_least) in [
        ("bisect.py", Language::Python, 40),
        ("ini.js", Language::JavaScript, 100),
        ("lcs.rs", Language::Rust, 60),
        ("util.ts", Language::TypeScript, 60),
        ("ISO8601Utils.java", Language::Java, 150),
        ("tabwriter.go", Language::Go, 200),
    ] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        // Analysed under a relative path: the fixture directory lies under `tests/`.
        let files = [CorpusFile { path: PathBuf::from("src").join(name), text }];
        let all = check_files(language, &files);
        assert!(all.len() >= at_least, "{name}: {} mutants", all.len());
        if language == Language::Rust {
            let tests_start = files[0].text.find("#[test]").unwrap();
            assert!(
                all.iter().all(|(mutant, _)| mutant.start_byte < tests_start),
                "nothing in the test module"
            );
        }
    }
}

/// Every mutant of these files: its bytes, its lines, and a fresh re-parse.
fn check_files(language: Language, files: &[CorpusFile]) -> Vec<(Mutant, String)> {
    let mut all = Vec::new();
    for file in files {
        let analysis = analyze(&file.path, &file.text, &Options::default()).unwrap();
        let again = analyze(&file.path, &file.text, &Options::default()).unwrap();
        assert_eq!(analysis, again, "{}: not deterministic", file.path.display());
        let mut parser = parser(language);
        let baseline = syntax_errors(&mut parser, &file.text);
        for mutant in analysis.mutants {
            assert_eq!(&file.text[mutant.start_byte..mutant.end_byte], mutant.original, "{mutant:#?}");
            let mutated = apply(&file.text, std::slice::from_ref(&mutant)).unwrap();
            assert!(
                syntax_errors(&mut parser, &mutated) <= baseline,
                "{}:{}: `{}` -> `{}` ({}) does not re-parse",
                mutant.file,
                mutant.line,
                mutant.original,
                mutant.replacement,
                mutant.operator
            );
            // The mutated file, from the start of `line`, begins with `mutated_line`
            // followed by a line break or the end of the file.
            let line_start = file.text[..mutant.start_byte].rfind('\n').map_or(0, |at| at + 1);
            let from_line = &mutated[line_start..];
            if mutant.removes_lines() {
                // Whole lines removed, line breaks included: the file goes on, at `line`, with
                // what followed them, and `original_line` is those lines.
                assert!(mutant.mutated_line.is_empty(), "{mutant:#?}");
                assert_eq!(line_start, mutant.start_byte, "{mutant:#?}");
                assert_eq!(from_line, &file.text[mutant.end_byte..], "{mutant:#?}");
                let removed = &file.text[mutant.start_byte..mutant.end_byte - 1];
                assert_eq!(
                    removed.strip_suffix('\r').unwrap_or(removed),
                    mutant.original_line,
                    "{mutant:#?}"
                );
                assert!(!removed.trim().is_empty(), "{mutant:#?}");
                all.push((mutant, file.text.clone()));
                continue;
            }
            assert!(from_line.starts_with(&mutant.mutated_line), "{mutant:#?}");
            let rest = &from_line[mutant.mutated_line.len()..];
            assert!(rest.is_empty() || rest.starts_with(['\n', '\r']), "{mutant:#?}");
            let original_lines: Vec<&str> =
                file.text[line_start..].lines().take(mutant.end_line - mutant.line + 1).collect();
            assert_eq!(original_lines.join("\n"), mutant.original_line, "{mutant:#?}");
            all.push((mutant, file.text.clone()));
        }
    }
    all
}

/// A seeded sample of mutants, each applied alone and written under `dir` with the
/// original file name.
fn write_sample(all: &[(Mutant, String)], dir: &Path, extension: &str) -> Vec<(PathBuf, Mutant)> {
    let mutants: Vec<Mutant> = all.iter().map(|(mutant, _)| mutant.clone()).collect();
    let sample = select(&mutants, TOOL_SAMPLE, 42);
    assert_eq!(sample, select(&mutants, TOOL_SAMPLE, 42), "same seed, same sample");
    assert_ne!(sample, select(&mutants, TOOL_SAMPLE, 43), "another seed, another sample");
    assert_eq!(sample.len(), TOOL_SAMPLE.min(mutants.len()));
    sample
        .into_iter()
        .enumerate()
        .map(|(index, mutant)| {
            let text = &all.iter().find(|(m, _)| m.id == mutant.id).unwrap().1;
            let mutated = apply(text, std::slice::from_ref(&mutant)).unwrap();
            let path = dir.join(format!("m{index:03}.{extension}"));
            std::fs::write(&path, mutated).unwrap();
            (path, mutant)
        })
        .collect()
}

#[test]
fn python_standard_library() {
    let Some(root) = python_corpus() else {
        eprintln!("skipped: no python3 standard library on this machine");
        return;
    };
    let files = pick(&root, Language::Python, 100);
    let all = run_corpus(Language::Python, &files);
    if !tool_present("python3", &["--version"]) {
        eprintln!("skipped the py_compile check: no python3");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.py");
    std::fs::write(&broken, "x: int += 1\n").unwrap();
    let control = Command::new("python3").args(["-m", "py_compile"]).arg(&broken).output().unwrap();
    assert!(!control.status.success(), "py_compile must reject `x: int += 1`");
    let written = write_sample(&all, dir.path(), "py");
    let output = Command::new("python3")
        .args(["-m", "py_compile"])
        .args(written.iter().map(|(path, _)| path))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let failed: Vec<&Mutant> = written
        .iter()
        .filter(|(path, _)| stderr.contains(&*path.to_string_lossy()))
        .map(|(_, m)| m)
        .collect();
    assert!(output.status.success() && failed.is_empty(), "py_compile failed:\n{stderr}\n{failed:#?}");
}

#[test]
fn javascript_of_npm() {
    let Some(root) = javascript_corpus() else {
        eprintln!("skipped: npm's JavaScript is not on this machine");
        return;
    };
    let files = pick(&root, Language::JavaScript, 2);
    let all = run_corpus(Language::JavaScript, &files);
    if !tool_present("node", &["--version"]) {
        eprintln!("skipped the node --check check: no node");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The check can fail: a file with a syntax error is rejected.
    let broken = dir.path().join("broken.js");
    std::fs::write(&broken, "function f( {\n").unwrap();
    assert_eq!(node_rejects(&[&broken.to_string_lossy()]).len(), 1);
    let written = write_sample(&all, dir.path(), "js");
    let originals: BTreeSet<&str> = written.iter().map(|(_, mutant)| mutant.file.as_str()).collect();
    let originals: Vec<&str> = originals.into_iter().collect();
    let rejected_originals = node_rejects(&originals);
    let mutated: Vec<(String, &Mutant)> = written
        .iter()
        .filter(|(_, mutant)| !rejected_originals.contains(&mutant.file))
        .map(|(path, mutant)| (path.to_string_lossy().into_owned(), mutant))
        .collect();
    let paths: Vec<&str> = mutated.iter().map(|(path, _)| path.as_str()).collect();
    let rejected = node_rejects(&paths);
    let failures: Vec<&&Mutant> =
        mutated.iter().filter(|(path, _)| rejected.contains(path)).map(|(_, mutant)| mutant).collect();
    assert!(failures.is_empty(), "node rejects {failures:#?}");
    assert!(mutated.len() >= TOOL_SAMPLE / 2, "only {} mutants could be checked by node", mutated.len());
}

/// The files node cannot compile, in one node process: each is compiled as node compiles a
/// CommonJS module for `node --check` (wrapped in the module function, never run). `.mjs`
/// files are left to `node --check` itself.
fn node_rejects(files: &[&str]) -> BTreeSet<String> {
    const SCRIPT: &str = r#"
const fs = require('fs'), vm = require('vm'), { wrap } = require('module'), { execFileSync } = require('child_process');
for (const file of process.argv.slice(1)) {
  try {
    if (file.endsWith('.mjs')) execFileSync(process.execPath, ['--check', file], { stdio: 'ignore' });
    else new vm.Script(wrap(fs.readFileSync(file, 'utf8')), { filename: file });
  } catch (error) { console.log(file); }
}"#;
    let output = Command::new("node").arg("-e").arg(SCRIPT).args(files).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).lines().map(str::to_string).collect()
}

#[test]
fn rust_crates_of_the_registry() {
    let Some(root) = rust_corpus() else {
        eprintln!("skipped: no cargo registry sources on this machine");
        return;
    };
    let files = pick(&root, Language::Rust, 1);
    let all = run_corpus(Language::Rust, &files);
    if !tool_present("rustfmt", &["--version"]) {
        eprintln!("skipped the rustfmt check: no rustfmt");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.rs");
    std::fs::write(&broken, "fn f() { let x = ; }\n").unwrap();
    assert!(!rustfmt_parses(&broken), "rustfmt must reject a syntax error");
    let mut checked = 0;
    let mut originals_ok: std::collections::HashMap<String, bool> = Default::default();
    for (path, mutant) in write_sample(&all, dir.path(), "rs") {
        let original_ok = *originals_ok
            .entry(mutant.file.clone())
            .or_insert_with(|| rustfmt_parses(Path::new(&mutant.file)));
        if !original_ok {
            continue;
        }
        assert!(rustfmt_parses(&path), "rustfmt cannot parse {mutant:#?}");
        checked += 1;
    }
    assert!(checked >= TOOL_SAMPLE / 2, "only {checked} mutants could be checked by rustfmt");
}

/// rustfmt reads the file on stdin (so `mod x;` lines are not followed) and fails only on
/// syntax errors: formatting differences are written out, not reported.
fn rustfmt_parses(path: &Path) -> bool {
    let Ok(text) = std::fs::read(path) else { return false };
    let Ok(mut child) = Command::new("rustfmt")
        .args(["--edition", "2021", "--emit", "stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        let _ = stdin.write_all(&text);
    }
    child.wait().is_ok_and(|status| status.success())
}
