//! `revcal elo keygen`, `revcal elo sign` and `revcal elo id`.

use super::{display, load_key_file, read_text};
use crate::output::{emit, outln};
use anyhow::{Context, Result};
use revcal_elo::{Keypair, MessageError, sign_value};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

pub(crate) fn keygen(out: &Path, force: bool) -> Result<ExitCode> {
    let key = Keypair::generate()?;
    let text = serde_json::to_string_pretty(&key.to_key_file())? + "\n";
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(out).with_context(|| {
        if out.exists() && !force {
            format!("{} exists; pass --force to replace it", out.display())
        } else {
            format!("cannot create {}", out.display())
        }
    })?;
    file.write_all(text.as_bytes()).with_context(|| format!("cannot write {}", out.display()))?;
    let mut stdout = String::new();
    outln!(stdout, "{}", key.agent_id());
    emit(&stdout)?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn sign(message: &Path, key: &Path, request_id: Option<&str>) -> Result<ExitCode> {
    let keypair =
        load_key_file(key)?.keypair().map_err(|error| anyhow::anyhow!("{}: {error}", key.display()))?;
    let text = read_text(message, revcal_elo::MAX_MESSAGE_BYTES as u64)?;
    let mut value = match revcal_elo::parse_strict(&text) {
        Ok(value) => value,
        Err(error) => return Ok(invalid(message, &format!("not valid JSON: {error}"))),
    };
    if let Some(id) = request_id {
        match value.get_mut("content").and_then(serde_json::Value::as_object_mut) {
            Some(content) => {
                content.insert("request_id".into(), id.trim().into());
            }
            None => {
                return Ok(invalid(message, "`content`: --request-id needs a message with a content object"));
            }
        }
    }
    if let Some(object) = value.as_object_mut()
        && !object.contains_key("ts")
    {
        // Milliseconds, as the protocol's examples write `ts` (docs/reputation.md, section 2).
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        object.insert("ts".into(), now.into());
    }
    match sign_value(value, &keypair) {
        Ok(signed) => {
            emit(&format!("{}\n", signed.canonical()))?;
            eprintln!(
                "{} {} signed by {}",
                signed.message.message_type().as_str(),
                signed.id.as_str(),
                signed.message.from
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(error @ MessageError::WrongSender { .. }) => Ok(invalid(
            message,
            &format!(
                "{error}; `revcal elo sign` fills `from` from the key, so remove it or sign with that agent's key"
            ),
        )),
        Err(error) => Ok(invalid(message, &error.to_string())),
    }
}

/// `revcal elo id`: the id of each signed message, one per line.
pub(crate) fn ids(file: &Path) -> Result<ExitCode> {
    let text = read_text(file, super::MAX_STREAM_BYTES)?;
    let mut out = String::new();
    let mut failed = false;
    for (number, line) in (1..).zip(text.lines()) {
        if line.trim().is_empty() {
            continue;
        }
        match revcal_elo::SignedMessage::parse(line.trim()) {
            Ok(signed) => outln!(out, "{}", signed.id.as_str()),
            Err(error) => {
                eprintln!("error: {}:{number}: {error}", display(file));
                failed = true;
            }
        }
    }
    emit(&out)?;
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// Reports an invalid message on stderr; exit status 1.
fn invalid(path: &Path, reason: &str) -> ExitCode {
    eprintln!("error: {}: {reason}", display(path));
    ExitCode::FAILURE
}
