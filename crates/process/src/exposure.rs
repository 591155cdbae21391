//! Keeping a secret that this process holds out of reach of the commands it runs.
//!
//! A command revcal runs (a reviewer, a repro command) runs as the same user, so it may read
//! whatever that user's processes expose in `/proc`: every process's command line, and the
//! environment, open files and memory of every *dumpable* process of the user (proc(5),
//! "ptrace access mode checking"). Holding a secret safely against such a command takes:
//! this process made non-dumpable ([`make_undumpable`]), no capability that overrides that
//! in the commands it starts ([`ptrace_capable`]), the secret on no command line and in no
//! environment, open file or memory of an ancestor those commands can read
//! ([`ancestors_exposing`]: revcal looks where such a command would look), and never in a
//! file that the user can open by its path ([`reopenable_path`]).

use std::io;
use std::os::fd::RawFd;
use std::path::PathBuf;

/// Makes this process non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`): a process of the same user
/// without `CAP_SYS_PTRACE` can no longer read its `/proc/PID/environ`, `mem`, `fd`, `maps`
/// or `cwd`, attach to it, or get a core dump of it. The commands it starts are dumpable
/// again (the flag is reset by `execve`), and hold nothing of its memory.
pub fn make_undumpable() -> io::Result<()> {
    // SAFETY: PR_SET_DUMPABLE only sets a flag of this process.
    let done = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0) };
    if done != 0 {
        return Err(io::Error::last_os_error());
    }
    match is_dumpable()? {
        false => Ok(()),
        true => Err(io::Error::other("PR_SET_DUMPABLE 0 did not take")),
    }
}

/// Whether this process is dumpable (`prctl(PR_GET_DUMPABLE)`).
pub fn is_dumpable() -> io::Result<bool> {
    // SAFETY: PR_GET_DUMPABLE only reads a flag of this process.
    let dumpable = unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
    if dumpable < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(dumpable != 0)
}

/// The bit of `CAP_SYS_PTRACE` in the capability sets of proc_pid_status(5).
const CAP_SYS_PTRACE: u32 = 19;

/// Whether the commands this process starts may read every process of the user however it
/// protects itself: `CAP_SYS_PTRACE` in this process's effective, permitted or ambient set,
/// or, for root, in its bounding set (root's commands get every capability the bounding set
/// allows). Read from `/proc/self/status`.
pub fn ptrace_capable() -> io::Result<bool> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    Ok(ptrace_capable_in(&status))
}

/// [`ptrace_capable`] of a `/proc/PID/status` text.
fn ptrace_capable_in(status: &str) -> bool {
    let set = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .unwrap_or(0)
    };
    let has = |bits: u64| bits >> CAP_SYS_PTRACE & 1 == 1;
    let root = status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .is_some_and(|ids| ids.split_whitespace().any(|id| id == "0"));
    has(set("CapEff")) || has(set("CapPrm")) || has(set("CapAmb")) || (root && has(set("CapBnd")))
}

/// Where a secret was found that a command this process starts could read too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exposure {
    /// The process.
    pub pid: u32,
    /// Its name (`/proc/PID/comm`).
    pub name: String,
    /// Where in it: `command line`, `environment`, or `open file N` (a file descriptor).
    pub place: String,
}

impl std::fmt::Display for Exposure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the {} of process {} ({})", self.place, self.pid, self.name)
    }
}

/// The most bytes of an ancestor's open file read when looking for the secret.
const OPEN_FILE_LIMIT: u64 = 1 << 20;
/// The most open files looked at per ancestor.
const OPEN_FILES_PER_PROCESS: usize = 256;

/// Every place among this process's ancestors (its parent, that one's parent, up to and
/// including process 1) where `secret` can be read by a process of this user: a command line
/// (any user's processes can read those), and the environment and open regular files and
/// pipes of the ancestors this process can read (so can the commands it starts). What this
/// process cannot read, they cannot either. An empty `secret` is never found.
pub fn ancestors_exposing(secret: &[u8]) -> Vec<Exposure> {
    let mut found = Vec::new();
    if secret.is_empty() {
        return found;
    }
    let mut pid = std::os::unix::process::parent_id();
    let mut visited = 0;
    while pid > 0 && visited < 4096 {
        visited += 1;
        let name = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|name| name.trim_end().to_owned())
            .unwrap_or_default();
        let mut place = |place: String| found.push(Exposure { pid, name: name.clone(), place });
        for (file, place_name) in [("cmdline", "command line"), ("environ", "environment")] {
            if read_capped(&format!("/proc/{pid}/{file}"), OPEN_FILE_LIMIT)
                .is_some_and(|data| contains(&data, secret))
            {
                place(place_name.to_owned());
            }
        }
        if let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
            for entry in entries.flatten().take(OPEN_FILES_PER_PROCESS) {
                let path = entry.path();
                let Ok(kind) = std::fs::metadata(&path).map(|meta| meta.file_type()) else { continue };
                use std::os::unix::fs::FileTypeExt;
                if !(kind.is_file() || kind.is_fifo()) {
                    continue;
                }
                if read_capped(&path.display().to_string(), OPEN_FILE_LIMIT)
                    .is_some_and(|data| contains(&data, secret))
                {
                    place(format!("open file {}", entry.file_name().to_string_lossy()));
                }
            }
        }
        if pid == 1 {
            break;
        }
        pid = parent_of(pid).unwrap_or(0);
    }
    found
}

/// Up to `limit` bytes of `path`, opened without blocking (a pipe without data reads as
/// nothing); `None` when it cannot be opened or read.
fn read_capped(path: &str, limit: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).ok()?;
    let mut data = Vec::new();
    match file.take(limit).read_to_end(&mut data) {
        Ok(_) => Some(data),
        Err(error) if error.kind() == io::ErrorKind::WouldBlock => Some(data),
        Err(_) => None,
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

/// The parent of `pid`, from field 4 of `/proc/PID/stat` (readable for every process).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.get(stat.rfind(')')? + 1..)?.split_whitespace().nth(1)?.parse().ok()
}

/// The path by which this user can open again the regular file that `fd` reads, when it
/// can (the same file, found through `/proc/self/fd/FD`): a secret read from it is within
/// reach of every process of the user. `None` for a pipe, a socket, a terminal, a deleted
/// file or one this user cannot open by its path.
pub fn reopenable_path(fd: RawFd) -> io::Result<Option<PathBuf>> {
    use std::os::unix::fs::MetadataExt;
    let link = PathBuf::from(format!("/proc/self/fd/{fd}"));
    let opened = std::fs::metadata(&link)?;
    if !opened.file_type().is_file() {
        return Ok(None);
    }
    let Ok(path) = std::fs::read_link(&link) else { return Ok(None) };
    let Ok(file) = std::fs::File::open(&path) else { return Ok(None) };
    let Ok(reopened) = file.metadata() else { return Ok(None) };
    Ok((reopened.dev() == opened.dev() && reopened.ino() == opened.ino()).then_some(path))
}

/// Reads everything from the inherited file descriptor `fd` (at most `limit` bytes; more
/// is an error) and leaves nothing of it behind for the commands this process starts:
/// standard input (0) is replaced by `/dev/null`, any other descriptor is closed. Standard
/// output and standard error (1, 2) are refused.
pub fn take_secret_fd(fd: RawFd, limit: usize) -> io::Result<Vec<u8>> {
    if fd == 1 || fd == 2 || fd < 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("descriptor {fd} is not one to read a secret from"),
        ));
    }
    // SAFETY: F_GETFD only asks whether the descriptor is open.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut data = Vec::new();
    let mut chunk = [0u8; 4096];
    let read = loop {
        // SAFETY: reads into a buffer this function owns, at most its length.
        let count = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len()) };
        if count < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break Err(error);
        }
        if count == 0 {
            break Ok(());
        }
        data.extend_from_slice(&chunk[..count as usize]);
        if data.len() > limit {
            break Err(io::Error::new(io::ErrorKind::InvalidData, format!("more than {limit} bytes")));
        }
    };
    let released = release_fd(fd);
    chunk.fill(0);
    read?;
    released?;
    Ok(data)
}

/// Closes `fd`, or points standard input at `/dev/null`.
fn release_fd(fd: RawFd) -> io::Result<()> {
    if fd == 0 {
        let null = std::fs::File::open("/dev/null")?;
        use std::os::fd::AsRawFd;
        // SAFETY: dup2 onto descriptor 0, which this process owns as its standard input.
        if unsafe { libc::dup2(null.as_raw_fd(), 0) } < 0 {
            return Err(io::Error::last_os_error());
        }
        return Ok(());
    }
    // SAFETY: the caller handed this inherited descriptor over; nothing else uses it.
    if unsafe { libc::close(fd) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "Name:\trevcal\nUid:\t1000\t1000\t1000\t1000\nCapInh:\t0000000000000000\n\
                          CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\n\
                          CapAmb:\t0000000000000000\n";

    #[test]
    fn ptrace_capability_is_read_from_each_set_and_root_gets_its_bounding_set() {
        assert!(!ptrace_capable_in(STATUS), "an ordinary user with the full bounding set");
        let effective = STATUS.replace("CapEff:\t0000000000000000", "CapEff:\t0000000000080000");
        assert!(ptrace_capable_in(&effective));
        let ambient = STATUS.replace("CapAmb:\t0000000000000000", "CapAmb:\t0000000000080000");
        assert!(ptrace_capable_in(&ambient));
        let root = STATUS.replace("Uid:\t1000\t1000\t1000\t1000", "Uid:\t0\t0\t0\t0");
        assert!(ptrace_capable_in(&root), "root's commands get the bounding set");
        let container_root = root.replace("CapBnd:\t000001ffffffffff", "CapBnd:\t00000000a80425fb");
        assert!(!ptrace_capable_in(&container_root), "a container's root without CAP_SYS_PTRACE");
    }

    #[test]
    fn a_secret_in_an_ancestors_environment_is_found_and_an_absent_one_is_not() {
        let secret = format!("revcal-exposure-test-{}", std::process::id());
        let exe = std::env::current_exe().unwrap();
        // sh (the child's parent) has the secret in its environment; the test binary run by
        // it looks up its ancestors (`; :` keeps sh from replacing itself with the child).
        let script = "\"$0\" --exact exposure::tests::child_reports_exposures --nocapture; :";
        let output = std::process::Command::new("sh")
            .args(["-c", script, exe.to_str().unwrap()])
            .env("REVCAL_EXPOSURE_SECRET", &secret)
            .env("REVCAL_EXPOSURE_CHILD", "1")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stdout);
        assert!(said.contains("exposed in: the environment of process"), "{said}");
        assert!(ancestors_exposing(b"no ancestor of this test holds this text 9f3b").is_empty());
        assert!(ancestors_exposing(b"").is_empty());
    }

    /// Run by the test above as a grandchild: prints where the secret was found.
    #[test]
    fn child_reports_exposures() {
        if std::env::var_os("REVCAL_EXPOSURE_CHILD").is_none() {
            return;
        }
        let secret = std::env::var("REVCAL_EXPOSURE_SECRET").unwrap();
        for exposure in ancestors_exposing(secret.as_bytes()) {
            println!("exposed in: {exposure}");
        }
    }

    #[test]
    fn a_secret_descriptor_is_read_whole_and_closed() {
        use std::io::Write;
        use std::os::fd::IntoRawFd;
        let (reader, mut writer) = std::io::pipe().unwrap();
        writer.write_all(b"the key").unwrap();
        drop(writer);
        let fd = reader.into_raw_fd();
        assert_eq!(take_secret_fd(fd, 64).unwrap(), b"the key");
        // SAFETY: F_GETFD only asks whether the descriptor is open.
        assert!(unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0, "closed");
        let (reader, mut writer) = std::io::pipe().unwrap();
        writer.write_all(&[b'x'; 100]).unwrap();
        drop(writer);
        assert!(take_secret_fd(reader.into_raw_fd(), 64).is_err(), "past the limit");
        assert!(take_secret_fd(1, 64).is_err(), "stdout");
    }

    #[test]
    fn undumpable_sticks() {
        make_undumpable().unwrap();
        assert!(!is_dumpable().unwrap());
    }

    #[test]
    fn a_readable_file_is_reopenable_and_a_pipe_is_not() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        std::fs::write(&path, "secret").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        assert_eq!(reopenable_path(file.as_raw_fd()).unwrap(), Some(path.clone()));
        std::fs::remove_file(&path).unwrap();
        assert_eq!(reopenable_path(file.as_raw_fd()).unwrap(), None, "a deleted file");
        let (reader, _writer) = std::io::pipe().unwrap();
        assert_eq!(reopenable_path(reader.as_raw_fd()).unwrap(), None);
    }
}
