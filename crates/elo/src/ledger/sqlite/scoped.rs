//! Verified outcomes in the SQLite file: `authorities`, `calibration_outcomes` and
//! `scoped_ratings` (schema version 4).

use super::{SqliteStorage, standing_at};
use crate::ledger::LedgerError;
use crate::ledger::scoped_storage::{LinkRow, ScopedRow, ScopedStorage, ScoredScopeRow};
use crate::ledger::storage::to_i64;
use revcal_elo_protocol::Standing;
use rusqlite::OptionalExtension;

impl ScopedStorage for SqliteStorage {
    fn authorities(&self) -> Result<Vec<(String, String)>, LedgerError> {
        self.run(|c| {
            c.prepare_cached("SELECT agent, pubkey FROM authorities ORDER BY agent, pubkey")?
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
                .collect()
        })
    }

    fn add_authority(&self, pubkey: &str, agent: &str) -> Result<bool, LedgerError> {
        self.run(|c| {
            c.prepare_cached(
                "INSERT INTO authorities (pubkey, agent) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            )?
            .execute((pubkey, agent))
            .map(|inserted| inserted == 1)
        })
    }

    fn remove_authority(&self, agent: &str) -> Result<bool, LedgerError> {
        self.run(|c| {
            c.prepare_cached("DELETE FROM authorities WHERE agent = ?1")?
                .execute([agent])
                .map(|deleted| deleted > 0)
        })
    }

    fn recorded_round(
        &self,
        authority: &str,
        report: &[u8],
        round: i64,
        trial: i64,
    ) -> Result<Option<Vec<u8>>, LedgerError> {
        self.run(|c| {
            c.prepare_cached(
                "SELECT outcome_id FROM calibration_outcomes \
                 WHERE authority = ?1 AND report = ?2 AND round = ?3 AND trial = ?4",
            )?
            .query_row((authority, report, round, trial), |row| row.get(0))
            .optional()
        })
    }

    fn scoped_standings(&self, keys: &[(String, String)]) -> Result<Vec<ScopedRow>, LedgerError> {
        // In-process: a lookup per key costs no round trip.
        self.run(|c| {
            let mut statement = c.prepare_cached(
                "SELECT rating, reviews, decisive, correct FROM scoped_ratings WHERE scope = ?1 AND agent = ?2",
            )?;
            let mut found = Vec::new();
            for (scope, agent) in keys {
                if let Some(standing) = statement.query_row((scope, agent), |row| standing_at(row, 0)).optional()? {
                    found.push((scope.clone(), agent.clone(), standing));
                }
            }
            Ok(found)
        })
    }

    fn ranked_in(&self, scope: &str, limit: Option<u32>) -> Result<Vec<(String, Standing)>, LedgerError> {
        let limit = limit.map_or(-1, i64::from);
        self.run(|c| {
            c.prepare_cached(
                "SELECT agent, rating, reviews, decisive, correct FROM scoped_ratings WHERE scope = ?1 \
                 ORDER BY rating DESC, reviews DESC, agent LIMIT ?2",
            )?
            .query_map((scope, limit), |row| Ok((row.get(0)?, standing_at(row, 1)?)))?
            .collect()
        })
    }

    fn all_scoped(&self) -> Result<Vec<ScopedRow>, LedgerError> {
        self.run(|c| {
            c.prepare_cached("SELECT scope, agent, rating, reviews, decisive, correct FROM scoped_ratings")?
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?, standing_at(row, 2)?)))?
                .collect()
        })
    }

    fn scope_keys(&self) -> Result<Vec<String>, LedgerError> {
        self.run(|c| {
            c.prepare_cached("SELECT DISTINCT scope FROM scoped_ratings ORDER BY scope")?
                .query_map([], |row| row.get(0))?
                .collect()
        })
    }

    fn write_scoped(&self, links: &[LinkRow], standings: &[ScopedRow]) -> Result<(), LedgerError> {
        self.run(|c| {
            let mut link = c.prepare_cached(
                "INSERT INTO calibration_outcomes (outcome_id, authority, report, round, trial, domains, reviewer, \
                 plants) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            for row in links {
                link.execute((
                    &row.outcome_id,
                    &row.authority,
                    &row.report,
                    row.round,
                    row.trial,
                    &row.domains,
                    &row.reviewer,
                    &row.plants,
                ))?;
            }
            let mut rating = c.prepare_cached(
                "INSERT INTO scoped_ratings (scope, agent, rating, reviews, decisive, correct) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (scope, agent) \
                 DO UPDATE SET rating = ?3, reviews = ?4, decisive = ?5, correct = ?6",
            )?;
            for (scope, agent, standing) in standings {
                rating.execute((
                    scope,
                    agent,
                    standing.rating,
                    to_i64(standing.reviews),
                    to_i64(standing.decisive),
                    to_i64(standing.correct),
                ))?;
            }
            Ok(())
        })
    }

    fn links(&self) -> Result<Vec<LinkRow>, LedgerError> {
        self.run(|c| {
            c.prepare(
                "SELECT outcome_id, authority, report, round, trial, domains, reviewer, plants FROM calibration_outcomes",
            )?
            .query_map([], |row| {
                Ok(LinkRow {
                    outcome_id: row.get(0)?,
                    authority: row.get(1)?,
                    report: row.get(2)?,
                    round: row.get(3)?,
                    trial: row.get(4)?,
                    domains: row.get(5)?,
                    reviewer: row.get(6)?,
                    plants: row.get(7)?,
                })
            })?
            .collect()
        })
    }

    fn scored_scopes(&self, visit: &mut dyn FnMut(ScoredScopeRow)) -> Result<(), LedgerError> {
        self.run(|c| {
            let mut statement = c.prepare(
                "SELECT s.reviewer, s.outcome, c.authority, c.domains, c.reviewer, c.plants FROM scored_reviews AS s \
                 LEFT JOIN calibration_outcomes AS c ON c.outcome_id = s.outcome_id ORDER BY s.rowid",
            )?;
            let mut rows = statement.query([])?;
            while let Some(row) = rows.next()? {
                visit(ScoredScopeRow {
                    reviewer: row.get(0)?,
                    outcome: row.get(1)?,
                    authority: row.get(2)?,
                    domains: row.get(3)?,
                    link_reviewer: row.get(4)?,
                    plants: row.get(5)?,
                });
            }
            Ok(())
        })
    }

    fn clear_scoped(&self) -> Result<(), LedgerError> {
        self.run(|c| c.execute_batch("DELETE FROM scoped_ratings"))
    }
}
