//! Lines per second per language: every mutant of ~3,000 lines generated and re-parse-checked.
//! The input is a real-code excerpt of `tests/fixtures/corpus`, mutated as many times as it
//! takes to reach 3,000 lines (as many files of its size; one huge file would measure
//! tree-sitter's cost on unusually flat trees instead). Criterion reports the throughput in
//! lines ("elem") per second.

use criterion::{Criterion, Throughput};
use revcal_mutate::{Options, generate_mutants};
use std::hint::black_box;
use std::path::Path;

/// The excerpt and how many copies make 3,000 lines.
fn input(name: &str) -> (String, usize) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus").join(name);
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines = text.lines().count().max(1);
    (text, 3000_usize.div_ceil(lines))
}

fn lines_per_second(c: &mut Criterion) {
    let mut group = c.benchmark_group("generate_mutants");
    group.sample_size(10);
    for (language, name, file) in [
        ("rust", "lcs.rs", "src/lcs.rs"),
        ("javascript", "ini.js", "lib/ini.js"),
        ("python", "bisect.py", "lib/bisect.py"),
    ] {
        let (source, copies) = input(name);
        let lines = (source.lines().count() * copies) as u64;
        let mutants =
            generate_mutants(Path::new(file), &source, &Options::default()).map_or(0, |m| m.len()) * copies;
        println!("{language}: {lines} lines, {mutants} mutants per run");
        group.throughput(Throughput::Elements(lines));
        group.bench_function(language, |b| {
            b.iter(|| {
                for _ in 0..copies {
                    black_box(generate_mutants(
                        black_box(Path::new(file)),
                        black_box(&source),
                        &Options::default(),
                    ))
                    .ok();
                }
            })
        });
    }
    group.finish();
}

/// Runs the benchmark and prints Criterion's summary: what `criterion_group!` and
/// `criterion_main!` generate, written out because the function they generate has no
/// documentation.
fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    lines_per_second(&mut criterion);
    criterion.final_summary();
}
