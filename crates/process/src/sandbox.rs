//! The sandbox of witness and repro commands: a reviewer prints repro commands, and a
//! prompt-injected reviewer could print any command at all. Each one runs under Linux
//! Landlock (<https://docs.kernel.org/userspace-api/landlock.html>), which an unprivileged
//! process applies to itself and its descendants: it may read the whole file system and run
//! programs, but write only beneath the scratch copy and the temporary directory, make no TCP
//! connection and bind no TCP port (Landlock ABI 4), and signal no process outside the sandbox
//! nor reach its abstract UNIX sockets (ABI 6). Rules the kernel does not know are dropped
//! (best effort), and the run reports how much was enforced.

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, RestrictionStatus, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};
use std::path::{Path, PathBuf};

/// The newest Landlock ABI this sandbox asks for; older kernels get what they know.
const ABI_WANTED: ABI = ABI::V6;

/// How much of the sandbox the running kernel enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Enforcement {
    /// Every rule.
    Full,
    /// Some rules (an older Landlock: typically no network or signal rules).
    Partial,
    /// None: the kernel offers no Landlock.
    None,
    /// The caller turned the sandbox off.
    Off,
}

impl Enforcement {
    /// The report's word for it.
    pub fn describe(self) -> &'static str {
        match self {
            Enforcement::Full => "landlock",
            Enforcement::Partial => {
                "landlock (partial: this kernel's Landlock enforces only some of the rules)"
            }
            Enforcement::None => "none (this kernel offers no Landlock)",
            Enforcement::Off => "off",
        }
    }
}

/// The rules for commands whose writes go beneath `writable` only.
#[derive(Debug, Clone)]
pub struct Sandbox {
    writable: Vec<PathBuf>,
}

impl Sandbox {
    /// A sandbox that lets commands write beneath `writable` (the scratch copy, the temporary
    /// directory) and `/dev` (for `/dev/null` and terminals).
    pub fn new(writable: Vec<PathBuf>) -> Sandbox {
        Sandbox { writable }
    }

    /// The ruleset, created in the calling process (opening the paths allocates, which a
    /// forked child must not do); the child only calls [`restrict`].
    pub(crate) fn prepare(&self) -> Result<RulesetCreated, landlock::RulesetError> {
        let abi = ABI_WANTED;
        let mut writable: Vec<&Path> = self.writable.iter().map(PathBuf::as_path).collect();
        writable.push(Path::new("/dev"));
        Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(abi))?
            .handle_access(AccessNet::from_all(abi))?
            .scope(Scope::Signal | Scope::AbstractUnixSocket)?
            .create()?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))?
            .add_rules(path_beneath_rules(writable, AccessFs::from_all(abi)))
    }

    /// How much of this sandbox the kernel enforces, found by applying it to a thread of its
    /// own (Landlock restricts the calling thread only) that then ends.
    pub fn probe(&self) -> Enforcement {
        let Ok(ruleset) = self.prepare() else { return Enforcement::None };
        let status = std::thread::spawn(move || ruleset.restrict_self()).join();
        match status {
            Ok(Ok(RestrictionStatus { ruleset: RulesetStatus::FullyEnforced, .. })) => Enforcement::Full,
            Ok(Ok(RestrictionStatus { ruleset: RulesetStatus::PartiallyEnforced, .. })) => {
                Enforcement::Partial
            }
            _ => Enforcement::None,
        }
    }
}

/// Applies a prepared ruleset to the calling (forked, about to exec) process. Allocates
/// nothing on success, so it is fit for `pre_exec`.
pub(crate) fn restrict(ruleset: RulesetCreated) -> std::io::Result<()> {
    match ruleset.restrict_self() {
        Ok(_) => Ok(()),
        Err(_) => Err(std::io::Error::from_raw_os_error(libc::EPERM)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Exit, ShellCommand, run};
    use crate::signals::SignalWatch;
    use std::time::Duration;

    #[test]
    fn a_sandboxed_command_writes_only_where_it_may() {
        let allowed = tempfile::tempdir().unwrap();
        let denied = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new(vec![allowed.path().to_path_buf()]);
        if sandbox.probe() != Enforcement::Full {
            // Without Landlock there is nothing to enforce; the report says so.
            return;
        }
        let script = format!(
            "echo in > {}/in.txt; echo out > {}/out.txt",
            allowed.path().display(),
            denied.path().display()
        );
        let command = ShellCommand::new(&script, allowed.path(), Duration::from_secs(20))
            .output_cap(4096)
            .sandbox(Some(&sandbox));
        let done = run(&command, &SignalWatch::inert()).unwrap();
        assert_ne!(done.exit, Exit::Code(0), "the second write failed");
        assert!(allowed.path().join("in.txt").exists());
        assert!(!denied.path().join("out.txt").exists());
        // revcal itself is not restricted by having sandboxed a child.
        std::fs::write(denied.path().join("parent.txt"), b"ok").unwrap();
    }
}
