//! Mutants checked by each language's own parser, not only by tree-sitter: `gofmt -e` for Go
//! (when Go is installed), javac's parser for Java (`tests/tools/JavaParse.java`, when a JDK
//! is installed) and TypeScript's
//! compiler API (`ts.createSourceFile`, its parse diagnostics). The test runs when node and the
//! `typescript` package are installed (`npm install -g typescript`) and says so when they are
//! not.

use revcal_mutate::{Options, analyze, apply};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory holding the global `typescript` package, when node can load it.
fn typescript_module_root() -> Option<PathBuf> {
    let output = Command::new("npm").args(["root", "-g"]).output().ok()?;
    let root = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    root.join("typescript/package.json").is_file().then_some(root)
}

/// Parse diagnostics per text, from TypeScript's own parser; `kind` is `ts` or `tsx`.
fn parse_diagnostics(root: &Path, texts: &[String], kind: &str) -> Vec<u64> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("texts.json");
    std::fs::write(&input, serde_json::to_string(texts).unwrap()).unwrap();
    let script = format!(
        "const ts = require('typescript'); const texts = JSON.parse(require('fs').readFileSync({input:?}, 'utf8'));\n\
         const kind = {kind:?} === 'tsx' ? ts.ScriptKind.TSX : ts.ScriptKind.TS;\n\
         console.log(JSON.stringify(texts.map(t => ts.createSourceFile('a.' + {kind:?}, t, ts.ScriptTarget.Latest, false, kind).parseDiagnostics.length)));",
        input = input.display().to_string(),
    );
    let output = Command::new("node").args(["-e", &script]).env("NODE_PATH", root).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Up to `n` mutants of `text` spread evenly over the file, each applied alone.
fn sample(path: &str, text: &str, n: usize) -> Vec<String> {
    let mutants = analyze(Path::new(path), text, &Options::default()).unwrap().mutants;
    let count = n.min(mutants.len());
    (0..count)
        .map(|k| &mutants[k * mutants.len() / count])
        .map(|mutant| apply(text, std::slice::from_ref(mutant)).unwrap())
        .collect()
}

#[test]
fn typescript_mutants_parse_with_typescript_s_own_parser() {
    let Some(root) = typescript_module_root() else {
        eprintln!("skipped: the typescript package is not installed (npm install -g typescript)");
        return;
    };
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus/util.ts");
    let text = std::fs::read_to_string(fixture).unwrap();
    assert_eq!(
        parse_diagnostics(&root, std::slice::from_ref(&text), "ts"),
        vec![0],
        "the excerpt itself parses"
    );
    let mutated = sample("src/util.ts", &text, 100);
    assert_eq!(mutated.len(), 100, "a sample of 100");
    let diagnostics = parse_diagnostics(&root, &mutated, "ts");
    let invalid: Vec<usize> = (0..diagnostics.len()).filter(|&i| diagnostics[i] > 0).collect();
    assert!(invalid.is_empty(), "{} of {} mutants do not parse: {:?}", invalid.len(), mutated.len(), invalid);

    let tsx = "export function Badge({ n }: { n: number }) {\n  if (n === 0) return null;\n  return n > 9 ? <b title={`${n}`}>9+</b> : <i>{n + 1}</i>;\n}\n";
    let mutated = sample("src/badge.tsx", tsx, 100);
    assert!(mutated.len() >= 5, "{} tsx mutants", mutated.len());
    assert!(parse_diagnostics(&root, &mutated, "tsx").iter().all(|&d| d == 0));
}

/// Syntax errors per text, from javac's own parser (`tests/tools/JavaParse.java`).
fn javac_parse_errors(texts: &[String]) -> Vec<u64> {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = texts
        .iter()
        .enumerate()
        .map(|(index, text)| {
            let path = dir.path().join(format!("m{index}")).join("ISO8601Utils.java");
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/JavaParse.java");
    let output = Command::new("java").arg(tool).args(&files).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().lines().map(|line| line.trim().parse().unwrap()).collect()
}

#[test]
fn java_mutants_parse_with_javac_s_own_parser() {
    let java = Command::new("java").arg("-version").output().is_ok_and(|o| o.status.success());
    let javac = Command::new("javac").arg("-version").output().is_ok_and(|o| o.status.success());
    if !(java && javac) {
        eprintln!("skipped: a JDK (java and javac, 11 or later) is not installed");
        return;
    }
    // gson's ISO 8601 parser (Apache License 2.0): date arithmetic, bounds, exceptions.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus/ISO8601Utils.java");
    let text = std::fs::read_to_string(fixture).unwrap();
    assert_eq!(javac_parse_errors(std::slice::from_ref(&text)), vec![0], "the excerpt itself parses");
    // A file with a syntax error is counted as one: the checker can fail.
    assert!(javac_parse_errors(&[format!("{text}\n}}}}")])[0] > 0);
    let mutated = sample("src/main/java/com/google/gson/internal/bind/util/ISO8601Utils.java", &text, 100);
    assert_eq!(mutated.len(), 100, "a sample of 100");
    let errors = javac_parse_errors(&mutated);
    let invalid: Vec<usize> = (0..errors.len()).filter(|&i| errors[i] > 0).collect();
    assert!(invalid.is_empty(), "{} of {} mutants do not parse: {:?}", invalid.len(), mutated.len(), invalid);
}

#[test]
fn go_mutants_parse_with_gofmt() {
    // `gofmt -l /dev/null` fails on Go 1.19 (an empty file is no Go), so the test never ran;
    // `gofmt -l` on an empty standard input succeeds wherever gofmt runs.
    if !Command::new("gofmt").arg("-l").output().is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: gofmt is not installed (it comes with Go)");
        return;
    }
    // Go's text/tabwriter (BSD-style licence): column arithmetic, buffers, flags.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus/tabwriter.go");
    let text = std::fs::read_to_string(fixture).unwrap();
    let gofmt_fails = |texts: &[String]| -> Vec<usize> {
        let dir = tempfile::tempdir().unwrap();
        (0..texts.len())
            .filter(|&index| {
                let path = dir.path().join(format!("m{index}.go"));
                std::fs::write(&path, &texts[index]).unwrap();
                let output = Command::new("gofmt").arg("-e").arg("-l").arg(&path).output().unwrap();
                !output.status.success() || !output.stderr.is_empty()
            })
            .collect()
    };
    assert!(gofmt_fails(std::slice::from_ref(&text)).is_empty(), "the excerpt itself parses");
    assert_eq!(gofmt_fails(&[format!("{text}\nfunc (")]), vec![0], "the checker can fail");
    let mutated = sample("src/text/tabwriter/tabwriter.go", &text, 100);
    assert_eq!(mutated.len(), 100, "a sample of 100");
    let invalid = gofmt_fails(&mutated);
    assert!(invalid.is_empty(), "{} of {} mutants do not parse: {:?}", invalid.len(), mutated.len(), invalid);
}
