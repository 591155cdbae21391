//! What the binary embeds (`crates/cli/assets/`, inside the crate so that it can be
//! published) is byte for byte what users see in the repository (`rubrics/`,
//! `examples/demo/`). Change the repository's copy, then copy it over.

use std::path::{Path, PathBuf};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
}

/// Every file of `dir`, relative to it, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    found.sort();
    found
}

fn assert_same(embedded: &Path, canonical: &Path) {
    let (a, b) = (std::fs::read(embedded).unwrap(), std::fs::read(canonical).unwrap());
    assert!(
        a == b,
        "{} differs from {}: copy it over (cp {} {})",
        embedded.display(),
        canonical.display(),
        canonical.display(),
        embedded.display()
    );
}

#[test]
fn the_embedded_rubrics_are_the_shipped_library() {
    let embedded = files(&assets().join("rubrics"));
    let mut shipped = files(&repository().join("rubrics"));
    shipped.retain(|path| path.extension().is_some_and(|e| e == "yaml"));
    assert_eq!(embedded, shipped, "the same rubric files");
    for file in &embedded {
        assert_same(&assets().join("rubrics").join(file), &repository().join("rubrics").join(file));
    }
}

#[test]
fn the_embedded_demo_is_examples_demo() {
    let demo = repository().join("examples/demo");
    let embedded = assets().join("demo");
    // A nested Cargo.toml would make the directory a package of its own, which cargo leaves
    // out of the published crate: the embedded copy carries it as Cargo.toml.in.
    let mut expected: Vec<PathBuf> = files(&demo)
        .into_iter()
        .filter(|path| !path.starts_with("target"))
        .map(|path| if path == Path::new("Cargo.toml") { PathBuf::from("Cargo.toml.in") } else { path })
        .collect();
    expected.sort();
    assert_eq!(files(&embedded), expected, "the same demo files");
    for file in &expected {
        let canonical =
            if file == Path::new("Cargo.toml.in") { demo.join("Cargo.toml") } else { demo.join(file) };
        assert_same(&embedded.join(file), &canonical);
    }
}

#[test]
fn every_published_crate_carries_the_repositorys_license_files() {
    let crates = repository().join("crates");
    let mut checked = 0;
    for entry in std::fs::read_dir(&crates).unwrap() {
        let krate = entry.unwrap().path();
        let manifest = std::fs::read_to_string(krate.join("Cargo.toml")).unwrap();
        if manifest.lines().any(|line| line.replace(' ', "") == "publish=false") {
            continue;
        }
        for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
            assert_same(&krate.join(license), &repository().join(license));
            checked += 1;
        }
    }
    // Every crate the workspace publishes is pinned in [workspace.dependencies] by its path.
    let root = std::fs::read_to_string(repository().join("Cargo.toml")).unwrap();
    let published =
        root.lines().filter(|line| line.starts_with("revcal-") && line.contains("path = \"crates/")).count();
    assert!(published >= 7, "{published}");
    assert_eq!(checked, 2 * published, "{published} published crates, two license files each");
}
