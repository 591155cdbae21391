//! Embeds the standard benchmark (`suites/standard/` of the repository: its suite, manifest,
//! repositories and bugs files, all YAML) into the binary, so that `revcal bench standard`
//! runs the benchmark this revcal was built with from any directory, and two people with the
//! same build run the same bugs. A build outside the repository (a published crate) finds no
//! such directory and embeds nothing: `revcal bench` then asks for `--suite DIR`.

use std::path::{Path, PathBuf};

/// Every `*.yaml` file under `dir`, as paths relative to it, sorted.
fn yaml_files(dir: &Path, relative: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir.join(relative)) else { return };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let path = relative.join(entry.file_name());
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            yaml_files(dir, &path, found);
        } else if kind.is_file() && path.extension().is_some_and(|ext| ext == "yaml") {
            found.push(path);
        }
    }
}

fn main() {
    let manifest_dir =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let standard = manifest_dir.join("../../suites/standard");
    let out =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("standard_suite.rs");
    let mut files = Vec::new();
    if standard.is_dir() {
        // A directory is scanned whole for changes by cargo.
        println!("cargo::rerun-if-changed={}", standard.display());
        yaml_files(&standard, Path::new(""), &mut files);
    } else {
        println!("cargo::rerun-if-changed=build.rs");
    }
    let mut text = String::from(
        "/// The standard benchmark's files (relative path, bytes), as they were when this binary was built.\npub(crate) const FILES: &[(&str, &[u8])] = &[\n",
    );
    for file in &files {
        let absolute = standard.join(file).canonicalize().expect("a file just listed");
        text.push_str(&format!(
            "    ({:?}, include_bytes!({:?})),\n",
            file.to_string_lossy().replace('\\', "/"),
            absolute.to_string_lossy()
        ));
    }
    text.push_str("];\n");
    std::fs::write(&out, text).expect("OUT_DIR is writable");
}
