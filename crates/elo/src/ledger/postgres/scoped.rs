//! Verified outcomes on PostgreSQL: `revcal_authorities`, `revcal_calibration_outcomes` and
//! `revcal_scoped_ratings` (schema version 2). Each write is one statement over parallel
//! arrays, as the batch's other writes are.

use super::{PostgresStorage, get, standing_at};
use crate::ledger::LedgerError;
use crate::ledger::scoped_storage::{LinkRow, ScopedRow, ScopedStorage, ScoredScopeRow};
use crate::ledger::storage::to_i64;
use revcal_elo_protocol::Standing;

/// Scored reviews per statement when they are all read back (a rebuild of the scoped
/// standings): each statement short, the memory bounded.
const SCORED_PAGE: i64 = 4096;

impl ScopedStorage for PostgresStorage {
    fn authorities(&self) -> Result<Vec<(String, String)>, LedgerError> {
        let rows = self.query("SELECT agent, pubkey FROM revcal_authorities ORDER BY agent, pubkey", &[])?;
        self.decode(rows, |row| Ok((get(row, 0)?, get(row, 1)?)))
    }

    fn add_authority(&self, pubkey: &str, agent: &str) -> Result<bool, LedgerError> {
        let rows = self.query(
            "INSERT INTO revcal_authorities (pubkey, agent) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING agent",
            &[&pubkey, &agent],
        )?;
        Ok(!rows.is_empty())
    }

    fn remove_authority(&self, agent: &str) -> Result<bool, LedgerError> {
        let rows =
            self.query("DELETE FROM revcal_authorities WHERE agent = $1 RETURNING agent", &[&agent])?;
        Ok(!rows.is_empty())
    }

    fn recorded_round(
        &self,
        authority: &str,
        report: &[u8],
        round: i64,
        trial: i64,
    ) -> Result<Option<Vec<u8>>, LedgerError> {
        let rows = self.query(
            "SELECT outcome_id FROM revcal_calibration_outcomes \
             WHERE authority = $1 AND report = $2 AND round = $3 AND trial = $4",
            &[&authority, &report, &round, &trial],
        )?;
        self.first(rows, |row| get(row, 0))
    }

    fn scoped_standings(&self, keys: &[(String, String)]) -> Result<Vec<ScopedRow>, LedgerError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        // One round trip for the whole batch.
        let scopes: Vec<&str> = keys.iter().map(|(scope, _)| scope.as_str()).collect();
        let agents: Vec<&str> = keys.iter().map(|(_, agent)| agent.as_str()).collect();
        let rows = self.query(
            "SELECT r.scope, r.agent, r.rating, r.reviews, r.decisive, r.correct FROM revcal_scoped_ratings AS r \
             JOIN unnest($1::text[], $2::text[]) AS k(scope, agent) ON r.scope = k.scope AND r.agent = k.agent",
            &[&scopes, &agents],
        )?;
        self.decode(rows, |row| Ok((get(row, 0)?, get(row, 1)?, standing_at(row, 2)?)))
    }

    fn ranked_in(&self, scope: &str, limit: Option<u32>) -> Result<Vec<(String, Standing)>, LedgerError> {
        let limit = limit.map(i64::from);
        let rows = self.query(
            "SELECT agent, rating, reviews, decisive, correct FROM revcal_scoped_ratings WHERE scope = $1 \
             ORDER BY rating DESC, reviews DESC, agent LIMIT $2",
            &[&scope, &limit],
        )?;
        self.decode(rows, |row| Ok((get(row, 0)?, standing_at(row, 1)?)))
    }

    fn all_scoped(&self) -> Result<Vec<ScopedRow>, LedgerError> {
        let rows = self.query(
            "SELECT scope, agent, rating, reviews, decisive, correct FROM revcal_scoped_ratings",
            &[],
        )?;
        self.decode(rows, |row| Ok((get(row, 0)?, get(row, 1)?, standing_at(row, 2)?)))
    }

    fn scope_keys(&self) -> Result<Vec<String>, LedgerError> {
        let rows = self.query("SELECT DISTINCT scope FROM revcal_scoped_ratings ORDER BY scope", &[])?;
        self.decode(rows, |row| get(row, 0))
    }

    fn write_scoped(&self, links: &[LinkRow], standings: &[ScopedRow]) -> Result<(), LedgerError> {
        if !links.is_empty() {
            let outcome_ids: Vec<&[u8]> = links.iter().map(|row| row.outcome_id.as_slice()).collect();
            let authorities: Vec<&str> = links.iter().map(|row| row.authority.as_str()).collect();
            let reports: Vec<&[u8]> = links.iter().map(|row| row.report.as_slice()).collect();
            let rounds: Vec<i64> = links.iter().map(|row| row.round).collect();
            let trials: Vec<i64> = links.iter().map(|row| row.trial).collect();
            let domains: Vec<&str> = links.iter().map(|row| row.domains.as_str()).collect();
            let reviewers: Vec<Option<&str>> = links.iter().map(|row| row.reviewer.as_deref()).collect();
            let plants: Vec<Option<&str>> = links.iter().map(|row| row.plants.as_deref()).collect();
            self.execute(
                "INSERT INTO revcal_calibration_outcomes (outcome_id, authority, report, round, trial, domains, \
                 reviewer, plants) SELECT * FROM unnest($1::bytea[], $2::text[], $3::bytea[], $4::bigint[], \
                 $5::bigint[], $6::text[], $7::text[], $8::text[])",
                &[&outcome_ids, &authorities, &reports, &rounds, &trials, &domains, &reviewers, &plants],
            )?;
        }
        if !standings.is_empty() {
            let scopes: Vec<&str> = standings.iter().map(|(scope, _, _)| scope.as_str()).collect();
            let agents: Vec<&str> = standings.iter().map(|(_, agent, _)| agent.as_str()).collect();
            let ratings: Vec<f64> = standings.iter().map(|(_, _, standing)| standing.rating).collect();
            let count = |pick: fn(&Standing) -> u64| -> Vec<i64> {
                standings.iter().map(|(_, _, standing)| to_i64(pick(standing))).collect()
            };
            let (reviews, decisive, correct) =
                (count(|s| s.reviews), count(|s| s.decisive), count(|s| s.correct));
            self.execute(
                "INSERT INTO revcal_scoped_ratings (scope, agent, rating, reviews, decisive, correct) \
                 SELECT * FROM unnest($1::text[], $2::text[], $3::float8[], $4::bigint[], $5::bigint[], $6::bigint[]) \
                 ON CONFLICT (scope, agent) DO UPDATE SET rating = excluded.rating, reviews = excluded.reviews, \
                 decisive = excluded.decisive, correct = excluded.correct",
                &[&scopes, &agents, &ratings, &reviews, &decisive, &correct],
            )?;
        }
        Ok(())
    }

    fn links(&self) -> Result<Vec<LinkRow>, LedgerError> {
        let rows = self.query(
            "SELECT outcome_id, authority, report, round, trial, domains, reviewer, plants \
             FROM revcal_calibration_outcomes",
            &[],
        )?;
        self.decode(rows, |row| {
            Ok(LinkRow {
                outcome_id: get(row, 0)?,
                authority: get(row, 1)?,
                report: get(row, 2)?,
                round: get(row, 3)?,
                trial: get(row, 4)?,
                domains: get(row, 5)?,
                reviewer: get(row, 6)?,
                plants: get(row, 7)?,
            })
        })
    }

    fn scored_scopes(&self, visit: &mut dyn FnMut(ScoredScopeRow)) -> Result<(), LedgerError> {
        // Page by page in scoring order, as a replay reads the messages.
        let mut after = i64::MIN;
        loop {
            let rows = self.query(
                "SELECT s.pos, s.reviewer, s.outcome, c.authority, c.domains, c.reviewer, c.plants \
                 FROM revcal_scored_reviews AS s \
                 LEFT JOIN revcal_calibration_outcomes AS c ON c.outcome_id = s.outcome_id \
                 WHERE s.pos > $1 ORDER BY s.pos LIMIT $2",
                &[&after, &SCORED_PAGE],
            )?;
            let full = rows.len() as i64 == SCORED_PAGE;
            for row in rows {
                let decoded: Result<(i64, ScoredScopeRow), tokio_postgres::Error> = (|| {
                    Ok((
                        get(&row, 0)?,
                        ScoredScopeRow {
                            reviewer: get(&row, 1)?,
                            outcome: get(&row, 2)?,
                            authority: get(&row, 3)?,
                            domains: get(&row, 4)?,
                            link_reviewer: get(&row, 5)?,
                            plants: get(&row, 6)?,
                        },
                    ))
                })();
                let (pos, scored) = decoded.map_err(|error| self.error(error))?;
                after = pos;
                visit(scored);
            }
            if !full {
                return Ok(());
            }
        }
    }

    fn clear_scoped(&self) -> Result<(), LedgerError> {
        self.execute("DELETE FROM revcal_scoped_ratings", &[])
    }
}
