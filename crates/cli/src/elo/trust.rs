//! `revcal elo trust`: the calibrating authorities whose outcomes a ledger counts as
//! verified.

use super::{LedgerArg, load_key_file};
use crate::output::{emit, outln};
use crate::style::Style;
use anyhow::Result;
use revcal_elo::{AgentId, Scope};
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;

/// What `revcal elo trust` does.
pub(crate) enum TrustAction<'a> {
    /// Trust the key in this file, which must be the agent's.
    Add(&'a str, &'a Path),
    /// No longer trust the agent.
    Revoke(&'a str),
    /// List the trusted authorities.
    List,
}

pub(crate) fn run(
    ledger: &LedgerArg,
    action: TrustAction<'_>,
    json: bool,
    style: &Style,
) -> Result<ExitCode> {
    let mut out = String::new();
    match action {
        TrustAction::List => {
            let ledger = ledger.open_existing()?;
            let authorities = ledger.authorities()?;
            if json {
                let items: Vec<_> = authorities
                    .iter()
                    .map(|(agent, key)| json!({"agent": agent, "public_key": key.to_base64()}))
                    .collect();
                outln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(
                        &json!({"ledger": ledger.location().to_string(), "authorities": items})
                    )?
                );
            } else if authorities.is_empty() {
                outln!(
                    out,
                    "{} trusts no calibrating authority: every outcome counts as self-reported",
                    ledger.location()
                );
            } else {
                for (agent, key) in &authorities {
                    outln!(out, "{agent}  {}", key.to_base64());
                }
            }
        }
        TrustAction::Add(agent, key_file) => {
            let agent = agent_id(agent)?;
            let key = load_key_file(key_file)?
                .public()
                .map_err(|error| anyhow::anyhow!("{}: {error}", key_file.display()))?;
            if key.agent_id() != agent {
                anyhow::bail!(
                    "--key-file {} is the key of {}, not of {agent}",
                    key_file.display(),
                    key.agent_id()
                );
            }
            let mut ledger = ledger.open_or_create()?;
            let added = ledger.trust(&key)?;
            let verified =
                ledger.standings_in(&Scope::Verified)?.values().map(|standing| standing.reviews).sum::<u64>();
            if json {
                outln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(
                        &json!({"ledger": ledger.location().to_string(), "agent": agent, "trusted": true, "changed": added, "verified_reviews": verified})
                    )?
                );
            } else if added {
                outln!(
                    out,
                    "{} {agent} in {}: its calibration outcomes count as verified ({verified} verified scored reviews now)",
                    style.success("trusted"),
                    ledger.location()
                );
            } else {
                outln!(out, "{agent} was trusted already in {}; nothing changed", ledger.location());
            }
        }
        TrustAction::Revoke(agent) => {
            let agent = agent_id(agent)?;
            let mut ledger = ledger.open_existing()?;
            let removed = ledger.distrust(&agent)?;
            if json {
                outln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(
                        &json!({"ledger": ledger.location().to_string(), "agent": agent, "trusted": false, "changed": removed})
                    )?
                );
            } else if removed {
                outln!(
                    out,
                    "{} {agent} in {}: its calibration outcomes count as self-reported from now on, the stored ones included",
                    style.warning("no longer trusted"),
                    ledger.location()
                );
            } else {
                outln!(out, "{agent} was not trusted in {}; nothing changed", ledger.location());
            }
        }
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn agent_id(text: &str) -> Result<AgentId> {
    AgentId::parse(text).ok_or_else(|| {
        anyhow::anyhow!(
            "`{text}` is not an agent id: expected @ and 16 lowercase hex digits, e.g. @3f9a0c1d2e4b5a69"
        )
    })
}
