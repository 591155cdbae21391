//! The calibrating authority's key: where it is read from (a file, standard input, an
//! inherited file descriptor or `$REVCAL_AUTHORITY_KEY`) and, when revcal holds it while it
//! runs a reviewer (`calibrate --record-to`), what keeps it out of the reviewer's reach
//! (docs/reputation.md, "Who must be kept apart").
//!
//! The reviewer runs as the user, so it can read every process's command line, the user's
//! files, and the environment, open files and memory of the user's dumpable processes. The
//! key is safe from it only when revcal is not dumpable, the key came through a channel
//! revcal read whole and closed (standard input, a descriptor, the variable, which revcal
//! removes from its own environment at start), and nothing the reviewer can read holds it:
//! no file it can open, and no ancestor's command line, environment or open file. Where
//! revcal cannot make sure of that, `--record-to` is refused and the separate step named.

use anyhow::Result;
use revcal_elo::{KeyFile, Keypair};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The variable that may hold the authority's key file (its JSON text).
pub(crate) const AUTHORITY_KEY_VARIABLE: &str = "REVCAL_AUTHORITY_KEY";

/// The largest key file.
const MAX_KEY_BYTES: usize = 64 << 10;

/// `$REVCAL_AUTHORITY_KEY` as revcal found it at start (taken out of its environment).
static FROM_ENVIRONMENT: Mutex<Option<String>> = Mutex::new(None);

/// Takes `$REVCAL_AUTHORITY_KEY` out of this process's environment and keeps its value for
/// [`AuthorityKey::read`], so that no command revcal starts inherits it.
///
/// Call it at start, before any thread is started: it changes the process's environment.
pub(crate) fn take_from_environment() {
    let Some(value) = std::env::var_os(AUTHORITY_KEY_VARIABLE) else { return };
    // SAFETY: called by the binaries' entry points before they start any thread (revcal()
    // and review_calibration() do it first thing), so nothing reads the environment
    // meanwhile.
    unsafe { std::env::remove_var(AUTHORITY_KEY_VARIABLE) };
    let value = value.into_string().unwrap_or_default();
    *FROM_ENVIRONMENT.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(value);
}

/// Where the authority's key comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeySource {
    /// `--authority-key FILE`.
    File(PathBuf),
    /// `--authority-key -`.
    Stdin,
    /// `--authority-key-fd N`.
    Descriptor(i32),
    /// `$REVCAL_AUTHORITY_KEY`.
    Environment,
}

impl KeySource {
    /// The source the flags name, else the variable; an error when there is none, or more
    /// than one.
    pub(crate) fn of(file: Option<&Path>, descriptor: Option<i32>) -> Result<KeySource> {
        let variable = FROM_ENVIRONMENT.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_some();
        let source = match (file, descriptor) {
            (Some(_), Some(_)) => {
                anyhow::bail!("give the authority's key once: --authority-key or --authority-key-fd")
            }
            (Some(path), None) if path == Path::new("-") => KeySource::Stdin,
            (Some(path), None) => KeySource::File(path.to_owned()),
            (None, Some(0)) => KeySource::Stdin,
            (None, Some(fd)) => KeySource::Descriptor(fd),
            (None, None) if variable => return Ok(KeySource::Environment),
            (None, None) => anyhow::bail!(
                "the calibrating authority's key is needed: --authority-key FILE|-, --authority-key-fd N, or ${AUTHORITY_KEY_VARIABLE}"
            ),
        };
        if variable {
            anyhow::bail!(
                "both {} and ${AUTHORITY_KEY_VARIABLE} give the authority's key: give one",
                source.flag()
            );
        }
        Ok(source)
    }

    /// How the source is named in messages.
    fn flag(&self) -> String {
        match self {
            KeySource::File(path) => format!("--authority-key {}", path.display()),
            KeySource::Stdin => "--authority-key -".to_owned(),
            KeySource::Descriptor(fd) => format!("--authority-key-fd {fd}"),
            KeySource::Environment => format!("${AUTHORITY_KEY_VARIABLE}"),
        }
    }

    /// True when the key is read from standard input.
    pub(crate) fn is_stdin(&self) -> bool {
        *self == KeySource::Stdin
    }
}

/// What the key is read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exposure {
    /// Nothing untrusted runs while revcal holds the key (`elo record`, `calibrate merge`).
    NoReviewer,
    /// Reviewers (and the repro commands they print) run while revcal holds it
    /// (`calibrate --record-to`, `calibrate suite --record-to`).
    ReviewersRun,
}

/// What to do instead, when the key cannot be kept from the reviewer.
const SEPARATE_STEP: &str = "record in a separate step instead: `revcal calibrate ... --save-baseline report.json` \
     here, then `revcal elo record report.json --authority-key FILE --agent @AGENT --agent-key FILE` \
     where no reviewer runs (docs/reputation.md, \"Who must be kept apart\")";

/// The authority's signing key, read from `source`. With [`Exposure::ReviewersRun`], the
/// key must stay out of the reviewers' reach for the whole run: a file path is refused, and
/// so is a run where revcal cannot keep it from them.
pub(crate) fn read(source: &KeySource, exposure: Exposure) -> Result<Keypair> {
    if exposure == Exposure::ReviewersRun {
        if let KeySource::File(path) = source {
            anyhow::bail!(
                "--authority-key {}: a reviewer runs as your user and can read this file (its path is on revcal's \
                 command line, which every process can read), then sign calibrations as the authority. With \
                 --record-to, give the key on standard input (--authority-key -), on an inherited file descriptor \
                 (--authority-key-fd N) or in ${AUTHORITY_KEY_VARIABLE}, from a source the reviewer cannot read; or {SEPARATE_STEP}",
                path.display()
            );
        }
        guard_process()?;
    }
    let (text, name) = match source {
        KeySource::File(path) => (super::read_text(path, MAX_KEY_BYTES as u64)?, path.display().to_string()),
        KeySource::Stdin => {
            (from_descriptor(0, exposure)?, "the authority's key on standard input".to_owned())
        }
        KeySource::Descriptor(fd) => {
            (from_descriptor(*fd, exposure)?, format!("the authority's key on descriptor {fd}"))
        }
        KeySource::Environment => {
            let text = FROM_ENVIRONMENT.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
            (text.unwrap_or_default(), format!("the authority's key in ${AUTHORITY_KEY_VARIABLE}"))
        }
    };
    // The parse error never quotes the text: it may hold the secret.
    let key = KeyFile::parse(&text)
        .and_then(|file| file.keypair())
        .map_err(|error| anyhow::anyhow!("{name}: {error}"))?;
    let secret = key.to_key_file().secret_key.unwrap_or_default();
    crate::secrets::register_secret(&secret);
    if exposure == Exposure::ReviewersRun {
        let exposed = revcal_process::ancestors_exposing(secret.as_bytes());
        if !exposed.is_empty() {
            let places: Vec<String> = exposed.iter().map(ToString::to_string).collect();
            anyhow::bail!(
                "the authority's key is readable in {}: that process is an ancestor of the reviewer's, which runs as \
                 your user and can read it too. Give the key to revcal alone (e.g. `{AUTHORITY_KEY_VARIABLE}=... revcal \
                 calibrate ...` sets it for revcal only; an exported variable reaches every later command), or {SEPARATE_STEP}",
                places.join(", ")
            );
        }
    }
    Ok(key)
}

/// What revcal itself must be for the key to stay out of a reviewer's reach: not dumpable
/// (a same-user process cannot read its environment, descriptors or memory), without a
/// capability that lets its commands read any process, and without the variable in its
/// environment.
fn guard_process() -> Result<()> {
    match revcal_process::is_dumpable() {
        Ok(false) => {}
        Ok(true) => anyhow::bail!(
            "revcal could not make itself non-dumpable (PR_SET_DUMPABLE), so a reviewer could read the authority's \
             key from its memory; {SEPARATE_STEP}"
        ),
        Err(error) => anyhow::bail!(
            "revcal cannot tell whether it is dumpable ({error}), so it cannot keep the authority's key from a \
             reviewer; {SEPARATE_STEP}"
        ),
    }
    match revcal_process::ptrace_capable() {
        Ok(false) => {}
        Ok(true) => anyhow::bail!(
            "revcal runs with CAP_SYS_PTRACE (as root, or given the capability), and so would the reviewer: it could \
             read the authority's key from revcal's memory whatever revcal does. Run the calibration as an ordinary \
             user, or {SEPARATE_STEP}"
        ),
        Err(error) => anyhow::bail!(
            "revcal cannot read its capabilities ({error}), so it cannot tell whether a reviewer could read its \
             memory; {SEPARATE_STEP}"
        ),
    }
    if std::env::var_os(AUTHORITY_KEY_VARIABLE).is_some() {
        anyhow::bail!(
            "${AUTHORITY_KEY_VARIABLE} is still in revcal's environment, where a reviewer would inherit it"
        );
    }
    Ok(())
}

/// The key file's text from descriptor `fd`, read whole and closed (standard input is
/// replaced by `/dev/null`). While reviewers run, a descriptor that reads a file this user
/// can open by its path is refused: the reviewer could open it too.
fn from_descriptor(fd: i32, exposure: Exposure) -> Result<String> {
    let name = if fd == 0 { "standard input".to_owned() } else { format!("descriptor {fd}") };
    if exposure == Exposure::ReviewersRun {
        match revcal_process::reopenable_path(fd) {
            Ok(None) => {}
            Ok(Some(path)) => anyhow::bail!(
                "the authority's key on {name} is the file {}, which your user (and so a reviewer) can open: pipe \
                 it from a source the reviewer cannot read (a secret store, another account, another machine), or \
                 {SEPARATE_STEP}",
                path.display()
            ),
            Err(error) => anyhow::bail!("the authority's key: cannot read {name}: {error}"),
        }
    }
    let bytes = revcal_process::take_secret_fd(fd, MAX_KEY_BYTES)
        .map_err(|error| anyhow::anyhow!("the authority's key: cannot read {name}: {error}"))?;
    String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("the authority's key ({name}): not UTF-8 text"))
}
