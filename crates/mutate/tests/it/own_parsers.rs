//! Mutants checked by each language's own parser, not only by tree-sitter: TypeScript's
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
