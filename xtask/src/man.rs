//! `cargo xtask man [OUT_DIR]`: a man page per command (`revcal.1`, `revcal-calibrate.1`,
//! `revcal-rubric-lint.1`, ...), written from the CLI's own clap definitions into OUT_DIR
//! (default `target/man`).

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub(crate) fn run(root: &Path, args: &[&str]) -> Result<ExitCode> {
    let out = args.first().map_or_else(|| root.join("target/man"), PathBuf::from);
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut command = revcal_cli::command();
    command.build();
    let written = write_pages(&command, "revcal", &out)?;
    eprintln!("wrote {written} man pages to {}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// Writes `name.1` for `command` and one page per visible subcommand, named after its path.
fn write_pages(command: &clap::Command, name: &str, out: &Path) -> Result<usize> {
    let mut text = Vec::new();
    clap_mangen::Man::new(command.clone()).title(name.to_uppercase()).render(&mut text)?;
    let path = out.join(format!("{name}.1"));
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    let mut written = 1;
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set() && sub.get_name() != "help") {
        written += write_pages(sub, &format!("{name}-{}", sub.get_name()), out)?;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_visible_command_gets_a_page_with_its_flags() {
        let dir = std::env::temp_dir().join(format!("revcal-man-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut command = revcal_cli::command();
        command.build();
        let written = write_pages(&command, "revcal", &dir).unwrap();
        let calibrate = std::fs::read_to_string(dir.join("revcal-calibrate.1")).unwrap();
        let lint = dir.join("revcal-rubric-lint.1").exists();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(written >= 20, "{written} pages");
        assert!(lint, "nested commands have pages");
        assert!(calibrate.contains("review\\-cmd"), "the page lists the flags");
    }
}
