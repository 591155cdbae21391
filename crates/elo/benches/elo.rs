//! The ledger's speed targets (docs/reputation.md, section 7), each measured and printed as
//! a ratio in one run:
//!
//! - ingest of 100,000 signed messages (signatures verified): target > 20,000 messages/s;
//! - the leaderboard over a ledger holding 1,000,000 scored reviews: target < 50 ms.
//!
//! The 100,000 messages are real signed messages (20,000 stories of a request, three
//! reviews and an outcome, 40 authors, 200 reviewers) ingested through
//! `Ledger::ingest_lines_pipelined` in batches of 1,000 lines, the way `revcal elo ingest` does. The 1,000,000-review ledger
//! is generated directly in SQL (the same tables `ingest` fills, 10,000 reviewers with 100
//! scored reviews each): signing and ingesting 1.4 million messages would take minutes and
//! exercise nothing the leaderboard reads.
//!
//! Verifying alone (`SignedMessage::parse` on one thread) and storing alone (the serial part:
//! the same messages, verified beforehand, stored on one thread) are timed too. Run: `cargo bench -p revcal-elo` (add `-- --quick` for a short run).

use criterion::{BatchSize, Criterion, Throughput};
use revcal_elo::{
    Content, Keypair, Ledger, LedgerLocation, Message, OutcomeContent, RequestContent, ReviewContent,
    ReviewVerdict, SignedMessage,
};
use std::path::Path;
use std::time::{Duration, Instant};

const MESSAGES: usize = 100_000;
const BATCH: usize = 1_000;
const INGEST_ROUNDS: usize = 3;
const INGEST_TARGET_PER_SECOND: f64 = 20_000.0;
const SCORED_REVIEWS: u64 = 1_000_000;
const REVIEWERS: u64 = 10_000;
const LEADERBOARD_TARGET: Duration = Duration::from_millis(50);

fn signed_stream(messages: usize) -> Vec<String> {
    let authors: Vec<Keypair> = (0..40u8).map(|n| Keypair::from_seed([n; 32])).collect();
    let reviewers: Vec<Keypair> = (0..200u8)
        .map(|n| {
            let mut seed = [0xAA; 32];
            seed[0] = n;
            Keypair::from_seed(seed)
        })
        .collect();
    let mut lines = Vec::with_capacity(messages);
    let sign = |key: &Keypair, ts: u64, content| {
        let message = Message { from: key.agent_id(), to: "#review".into(), ts, content };
        SignedMessage::sign(&message, key).map(|signed| signed.canonical().to_owned())
    };
    for story in 0..messages / 5 {
        let author = &authors[story % authors.len()];
        let ts = 1_700_000_000 + story as u64;
        let request = Message {
            from: author.agent_id(),
            to: "#review".into(),
            ts,
            content: Content::Request(RequestContent {
                repo: Some("github.com/acme/api".into()),
                change: Some(format!("PR #{story}")),
                ..Default::default()
            }),
        };
        let request = SignedMessage::sign(&request, author).expect("sign");
        lines.push(request.canonical().to_owned());
        for offset in 0..3 {
            let reviewer = &reviewers[(story * 7 + offset * 13) % reviewers.len()];
            let verdict = [ReviewVerdict::Approve, ReviewVerdict::RequestChanges, ReviewVerdict::Comment]
                [(story + offset) % 3];
            let content = Content::Review(ReviewContent {
                request_id: request.id.clone(),
                verdict,
                comments: vec![revcal_elo::Comment {
                    file: "src/lib.rs".into(),
                    line: 10,
                    body: "bounds".into(),
                }],
                summary: None,
                name: None,
            });
            lines.push(sign(reviewer, ts, content).expect("sign"));
        }
        let incident = story % 4 == 0;
        let content = Content::Outcome(OutcomeContent {
            request_id: request.id.clone(),
            merged: true,
            incident,
            incident_details: incident.then(|| "rollback".to_owned()),
            calibration: None,
        });
        lines.push(sign(author, ts, content).expect("sign"));
    }
    lines
}

fn ingest_all(location: &LedgerLocation, lines: &[&str]) -> usize {
    let mut ledger = Ledger::open_at(location, None).expect("open");
    let mut stored = 0;
    ledger
        .ingest_lines_pipelined(lines, BATCH, |outcomes| {
            stored += outcomes.iter().filter(|(_, o)| o.is_stored()).count()
        })
        .expect("ingest");
    stored
}

/// Runs `ingest` (which returns the messages stored, its wall and CPU time) once per round
/// into a new ledger each, printing each round: this machine's speed varies from run to
/// run, and the median (wall, CPU) is what is compared.
fn median_ingest(label: &str, mut ingest: impl FnMut(usize) -> (usize, Duration, f64)) -> (Duration, f64) {
    let mut rounds: Vec<(Duration, f64)> = (0..INGEST_ROUNDS)
        .map(|round| {
            let (stored, wall, cpu) = ingest(round);
            assert_eq!(stored, MESSAGES);
            println!(
                "{label}: round {}: {:.2} s wall = {:.0} msg/s",
                round + 1,
                wall.as_secs_f64(),
                MESSAGES as f64 / wall.as_secs_f64()
            );
            (wall, cpu)
        })
        .collect();
    rounds.sort_by_key(|round| round.0);
    rounds[rounds.len() / 2]
}

/// A ledger with `SCORED_REVIEWS` scored reviews over `REVIEWERS` reviewers, written in SQL.
fn million_review_ledger(path: &Path) {
    drop(Ledger::open(path).expect("create"));
    let connection = rusqlite::Connection::open(path).expect("open");
    connection
        .execute_batch(&format!(
            "BEGIN;
             WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last})
             INSERT INTO scored_reviews (review_id, request_id, outcome_id, reviewer, requester, verdict,
                                         incident, outcome, elo_delta, rating_after, ts)
             SELECT unhex(printf('%064x', i)), unhex(printf('%064x', i / 3)),
                    unhex(printf('%064x', i / 3 + 1000000000)),
                    printf('@%016x', i % {REVIEWERS}), '@00000000000000aa',
                    CASE i % 3 WHEN 0 THEN 'APPROVE' WHEN 1 THEN 'REQUEST_CHANGES' ELSE 'COMMENT' END,
                    i % 4 = 0,
                    CASE i % 3 WHEN 0 THEN (CASE WHEN i % 4 = 0 THEN 'missed_bug' ELSE 'correct_approval' END)
                               WHEN 1 THEN (CASE WHEN i % 4 = 0 THEN 'caught_bug' ELSE 'false_positive' END)
                               ELSE 'neutral' END,
                    0, 0, 1700000000 + i
             FROM n;
             INSERT INTO ratings (agent, rating, reviews, decisive, correct)
             SELECT reviewer, 1200 + sum(CASE outcome WHEN 'caught_bug' THEN 25 WHEN 'missed_bug' THEN -30
                                                   WHEN 'false_positive' THEN -5 WHEN 'correct_approval' THEN 5 ELSE 0 END),
                    count(*), sum(outcome != 'neutral'), sum(outcome IN ('caught_bug', 'correct_approval'))
             FROM scored_reviews GROUP BY reviewer;
             COMMIT;",
            last = SCORED_REVIEWS - 1
        ))
        .expect("generate");
}

/// The leaderboard as it would be without materialised ratings: aggregated from every
/// scored review at query time (the side-by-side baseline).
fn aggregate_leaderboard(connection: &rusqlite::Connection) -> usize {
    let mut statement = connection
        .prepare_cached(
            "SELECT reviewer, 1200 + sum(elo_delta) AS rating, count(*) FROM scored_reviews
             GROUP BY reviewer ORDER BY rating DESC LIMIT 20",
        )
        .expect("prepare");
    statement.query_map([], |row| row.get::<_, String>(0)).expect("query").count()
}

fn time<T>(run: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    let value = run();
    (value, started.elapsed())
}

/// CPU seconds this process has used (user + system, all threads), from /proc/self/stat;
/// 0 where that file does not exist. On a shared machine wall time measures the neighbours
/// too, so the ingest numbers are printed both ways.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
    let ticks = |index: usize| fields.get(index).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name; 100 ticks/s.
    (ticks(11) + ticks(12)) / 100.0
}

/// Runs `run`, returning its value, wall time and CPU seconds.
fn time_cpu<T>(run: impl FnOnce() -> T) -> (T, Duration, f64) {
    let cpu = cpu_seconds();
    let (value, wall) = time(run);
    (value, wall, cpu_seconds() - cpu)
}

fn benches(c: &mut Criterion) {
    // `cargo bench` builds with the optimised bench profile; a debug build (e.g. run through
    // `cargo test --benches`) verifies signatures ~30x slower and its timings mean nothing.
    if cfg!(debug_assertions) {
        println!("elo: WARNING: built with debug assertions, not the bench profile: timings are meaningless");
    }
    let dir = tempfile::tempdir().expect("tempdir");

    // --- ingest ---
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let (lines, generation, generation_cpu) = time_cpu(|| signed_stream(MESSAGES));
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    // Verifying alone, on this thread: the CPU the pipeline spreads over the cores.
    let (verified, verify_only, verify_cpu) =
        time_cpu(|| refs.iter().map(|line| SignedMessage::parse(line).expect("valid")).collect::<Vec<_>>());
    // Storing alone, on this thread, the messages verified above: the serial part of ingest.
    let (_, store_only, store_only_cpu) = time_cpu(|| {
        let mut ledger = Ledger::open(dir.path().join("store-only.sqlite")).expect("open");
        for batch in verified.chunks(BATCH) {
            let outcomes = ledger.ingest_batch(batch).expect("store");
            assert!(outcomes.iter().all(Result::is_ok));
        }
    });
    drop(verified);
    // The whole ingest, INGEST_ROUNDS times into a new ledger each: this machine's speed
    // varies from run to run, and the median is what is compared with the target.
    let (full, full_cpu) = median_ingest("elo ingest", |round| {
        let location = LedgerLocation::from(dir.path().join(format!("round-{round}.sqlite")));
        time_cpu(|| ingest_all(&location, &refs))
    });
    let rate = MESSAGES as f64 / full.as_secs_f64();
    let per_message = |cpu: f64| cpu * 1e6 / MESSAGES as f64;
    println!(
        "elo ingest: signing {MESSAGES} messages: {:.2} s wall, {:.1} us CPU per message",
        generation.as_secs_f64(),
        per_message(generation_cpu)
    );
    println!(
        "elo ingest: parse + canonicalise + verify only (one thread): {:.2} s wall = {:.0} msg/s; {:.1} us CPU per message",
        verify_only.as_secs_f64(),
        MESSAGES as f64 / verify_only.as_secs_f64(),
        per_message(verify_cpu)
    );
    println!(
        "elo ingest: store only (verified messages, one thread, batches of {BATCH}): {:.2} s wall = {:.0} msg/s; \
         {:.1} us CPU per message",
        store_only.as_secs_f64(),
        MESSAGES as f64 / store_only.as_secs_f64(),
        per_message(store_only_cpu)
    );
    println!(
        "elo ingest: {MESSAGES} messages into a new ledger (batches of {BATCH}), median of {INGEST_ROUNDS}: \
         {:.2} s wall = {:.0} msg/s; target {:.0} msg/s: ratio {:.2}x the target",
        full.as_secs_f64(),
        rate,
        INGEST_TARGET_PER_SECOND,
        rate / INGEST_TARGET_PER_SECOND
    );
    // Where the verify time goes, one thread, 10,000 messages.
    let part = &refs[..10_000];
    let values: Vec<serde_json::Value> =
        part.iter().map(|line| revcal_elo::parse_strict(line).expect("json")).collect();
    let signed: Vec<SignedMessage> =
        part.iter().map(|line| SignedMessage::parse(line).expect("valid")).collect();
    let (_, _, parse_cpu) =
        time_cpu(|| part.iter().filter(|line| revcal_elo::parse_strict(line).is_ok()).count());
    let (_, _, jcs_cpu) = time_cpu(|| {
        values.iter().map(|v| serde_json_canonicalizer::to_vec(v).map_or(0, |b| b.len())).sum::<usize>()
    });
    let (_, _, check_cpu) =
        time_cpu(|| signed.iter().filter(|m| m.pubkey.verifies(m.signed_bytes(), &m.sig)).count());
    let (_, _, whole_cpu) =
        time_cpu(|| part.iter().filter(|line| SignedMessage::parse(line).is_ok()).count());
    let us = |cpu: f64| cpu * 1e6 / part.len() as f64;
    println!(
        "elo ingest: one thread, per message: JSON parse {:.1} us, one JCS {:.1} us, Ed25519 verify {:.1} us; \
         SignedMessage::parse in all {:.1} us",
        us(parse_cpu),
        us(jcs_cpu),
        us(check_cpu),
        us(whole_cpu)
    );

    // Verification runs on every core while the previous batch is stored on one: on idle
    // cores the wall time would be about the larger of all CPU / cores and the store CPU.
    let store_cpu = (full_cpu - verify_cpu).max(0.0);
    let idle_estimate = MESSAGES as f64 / (full_cpu / cores as f64).max(store_cpu);
    println!(
        "elo ingest: CPU per message: {:.1} us verify (parallel) + {:.1} us store (serial); on {cores} idle cores \
         that is about {:.0} msg/s ({:.2}x the target)",
        per_message(verify_cpu),
        per_message(store_cpu),
        idle_estimate,
        idle_estimate / INGEST_TARGET_PER_SECOND
    );

    // --- leaderboard ---
    let big = dir.path().join("million.sqlite");
    let ((), generated) = time(|| million_review_ledger(&big));
    let ledger = Ledger::open(&big).expect("open");
    let (board, query) = time(|| ledger.leaderboard(Some(20)).expect("leaderboard"));
    assert_eq!(board.len(), 20);
    let (_, opened_query) =
        time(|| Ledger::open(&big).expect("open").leaderboard(Some(20)).expect("leaderboard"));
    let connection = rusqlite::Connection::open(&big).expect("open");
    let (_, aggregate) = time(|| aggregate_leaderboard(&connection));
    println!(
        "elo leaderboard: ledger with {SCORED_REVIEWS} scored reviews, {REVIEWERS} reviewers (generated in SQL in {:.1} s)",
        generated.as_secs_f64()
    );
    println!(
        "elo leaderboard: top 20 {:.3} ms (open + query {:.3} ms); target {} ms: {:.0}x under; \
         aggregating the scored reviews instead: {:.1} ms ({:.0}x slower)",
        query.as_secs_f64() * 1e3,
        opened_query.as_secs_f64() * 1e3,
        LEADERBOARD_TARGET.as_millis(),
        LEADERBOARD_TARGET.as_secs_f64() / opened_query.as_secs_f64(),
        aggregate.as_secs_f64() * 1e3,
        aggregate.as_secs_f64() / query.as_secs_f64()
    );

    // --- the same on PostgreSQL, side by side ---
    let sqlite_top20 = median_time(21, || ledger.leaderboard(Some(20)).expect("leaderboard").len());
    match postgres::Server::find_or_start() {
        Ok(server) => postgres::compare(&server, &refs, rate, sqlite_top20),
        Err(why) => println!("elo postgres: skipped: {why}"),
    }

    let mut group = c.benchmark_group("elo_ingest");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(BATCH as u64 * 10));
    let sample: Vec<&str> = refs[..BATCH * 10].to_vec();
    group.bench_function("verify_10k_one_thread", |b| {
        b.iter(|| sample.iter().filter(|line| SignedMessage::parse(line).is_ok()).count())
    });
    let mut round = 0u32;
    group.bench_function("ingest_10k_new_ledger", |b| {
        b.iter_batched(
            || {
                round += 1;
                dir.path().join(format!("round{round}.sqlite"))
            },
            |path| ingest_all(&LedgerLocation::from(path), &sample),
            BatchSize::PerIteration,
        )
    });
    group.finish();

    let mut group = c.benchmark_group("elo_leaderboard_1m_reviews");
    group.bench_function("top_20", |b| b.iter(|| ledger.leaderboard(Some(20)).expect("leaderboard").len()));
    group.bench_function("all_10k_reviewers", |b| {
        b.iter(|| ledger.leaderboard(None).expect("leaderboard").len())
    });
    group.bench_function("open_and_top_20", |b| {
        b.iter(|| Ledger::open(&big).expect("open").leaderboard(Some(20)).expect("leaderboard").len())
    });
    group.sample_size(10);
    group.bench_function("aggregate_baseline", |b| b.iter(|| aggregate_leaderboard(&connection)));
    group.finish();
}

/// The median wall time of `runs` calls of `run`.
fn median_time<T>(runs: usize, mut run: impl FnMut() -> T) -> Duration {
    let mut times: Vec<Duration> = (0..runs).map(|_| time(&mut run).1).collect();
    times.sort();
    times[times.len() / 2]
}

/// The PostgreSQL ledger, measured as the SQLite one: on the server `REVCAL_TEST_POSTGRES`
/// names, else on a throwaway cluster started (and stopped) with `.ci/postgres`.
mod postgres {
    use super::{BATCH, INGEST_ROUNDS, MESSAGES, REVIEWERS, SCORED_REVIEWS, median_time, time, time_cpu};
    use revcal_elo::{Ledger, LedgerLocation};
    use std::path::PathBuf;
    use std::process::Command;
    use std::time::Duration;

    /// A server to measure on; a cluster this run started is stopped on drop.
    pub(super) struct Server {
        started: Option<PathBuf>,
    }

    fn script() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.ci/postgres")
    }

    impl Server {
        pub(super) fn find_or_start() -> Result<Server, String> {
            if std::env::var(revcal_testpg::SERVER_VARIABLE).is_ok_and(|url| !url.is_empty()) {
                return Ok(Server { started: None });
            }
            let output =
                Command::new(script()).arg("start").output().map_err(|e| format!(".ci/postgres: {e}"))?;
            if !output.status.success() {
                return Err(String::from_utf8_lossy(&output.stderr).trim().to_owned());
            }
            let dir = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
            let url = Command::new(script()).arg("url").arg(&dir).output().map_err(|e| e.to_string())?;
            // SAFETY: set before any other thread of this benchmark reads the environment.
            unsafe {
                std::env::set_var(revcal_testpg::SERVER_VARIABLE, String::from_utf8_lossy(&url.stdout).trim())
            };
            println!("elo postgres: started a throwaway cluster in {}", dir.display());
            Ok(Server { started: Some(dir) })
        }
    }

    impl Drop for Server {
        fn drop(&mut self) {
            if let Some(dir) = &self.started {
                let _ = Command::new(script()).arg("stop").arg(dir).status();
            }
        }
    }

    fn database(name: &str) -> (revcal_testpg::TestDatabase, LedgerLocation) {
        let database = revcal_testpg::TestDatabase::create(name).expect("the server variable is set");
        let location = LedgerLocation::parse(database.url()).expect("the test server's URL");
        (database, location)
    }

    /// Ingest and the leaderboard on PostgreSQL, each printed next to SQLite's figure.
    pub(super) fn compare(_server: &Server, refs: &[&str], sqlite_rate: f64, sqlite_top20: Duration) {
        let (wall, cpu) = super::median_ingest("elo postgres ingest", |round| {
            let (_database, location) = database(&format!("bench_ingest_{round}"));
            time_cpu(|| super::ingest_all(&location, refs))
        });
        let rate = MESSAGES as f64 / wall.as_secs_f64();
        println!(
            "elo postgres ingest: {MESSAGES} messages into a new ledger (batches of {BATCH}), median of {INGEST_ROUNDS}: \
             {:.2} s wall = {rate:.0} msg/s, {:.1} us of this process's CPU per message; SQLite {sqlite_rate:.0} msg/s: \
             PostgreSQL / SQLite = {:.2}",
            wall.as_secs_f64(),
            cpu * 1e6 / MESSAGES as f64,
            rate / sqlite_rate
        );

        let (database, location) = database("bench_million");
        drop(Ledger::open_at(&location, None).expect("create"));
        let ((), generated) = time(|| generate_million(&database));
        let ledger = Ledger::open_at(&location, None).expect("open");
        assert_eq!(ledger.leaderboard(Some(20)).expect("leaderboard").len(), 20);
        let top20 = median_time(21, || ledger.leaderboard(Some(20)).expect("leaderboard").len());
        let all = median_time(5, || ledger.leaderboard(None).expect("leaderboard").len());
        let opened = median_time(5, || {
            Ledger::open_at(&location, None).expect("open").leaderboard(Some(20)).expect("leaderboard").len()
        });
        println!(
            "elo postgres leaderboard: {SCORED_REVIEWS} scored reviews, {REVIEWERS} reviewers (generated in SQL in {:.1} s): \
             top 20 {:.3} ms (SQLite {:.3} ms: PostgreSQL / SQLite = {:.1}); all {REVIEWERS} {:.1} ms; \
             connect + open + top 20 {:.1} ms",
            generated.as_secs_f64(),
            top20.as_secs_f64() * 1e3,
            sqlite_top20.as_secs_f64() * 1e3,
            top20.as_secs_f64() / sqlite_top20.as_secs_f64(),
            all.as_secs_f64() * 1e3,
            opened.as_secs_f64() * 1e3
        );
    }

    /// The same generated ledger as the SQLite one: 1,000,000 scored reviews over 10,000
    /// reviewers, ratings aggregated from them.
    fn generate_million(database: &revcal_testpg::TestDatabase) {
        let mut client = database.client();
        client
            .batch_execute(&format!(
                "BEGIN;
                 INSERT INTO revcal_scored_reviews (review_id, request_id, outcome_id, reviewer, requester, verdict,
                                                    incident, outcome, elo_delta, rating_after, ts)
                 SELECT decode(lpad(to_hex(i), 64, '0'), 'hex'), decode(lpad(to_hex(i / 3), 64, '0'), 'hex'),
                        decode(lpad(to_hex(i / 3 + 1000000000), 64, '0'), 'hex'),
                        '@' || lpad(to_hex(i % {REVIEWERS}), 16, '0'), '@00000000000000aa',
                        CASE i % 3 WHEN 0 THEN 'APPROVE' WHEN 1 THEN 'REQUEST_CHANGES' ELSE 'COMMENT' END,
                        i % 4 = 0,
                        CASE i % 3 WHEN 0 THEN (CASE WHEN i % 4 = 0 THEN 'missed_bug' ELSE 'correct_approval' END)
                                   WHEN 1 THEN (CASE WHEN i % 4 = 0 THEN 'caught_bug' ELSE 'false_positive' END)
                                   ELSE 'neutral' END,
                        0, 0, 1700000000 + i
                 FROM generate_series(0::bigint, {last}) AS i;
                 INSERT INTO revcal_ratings (agent, rating, reviews, decisive, correct)
                 SELECT reviewer, 1200 + sum(CASE outcome WHEN 'caught_bug' THEN 25 WHEN 'missed_bug' THEN -30
                                                       WHEN 'false_positive' THEN -5 WHEN 'correct_approval' THEN 5 ELSE 0 END),
                        count(*), sum((outcome <> 'neutral')::int), sum((outcome IN ('caught_bug', 'correct_approval'))::int)
                 FROM revcal_scored_reviews GROUP BY reviewer;
                 COMMIT;
                 ANALYZE;",
                last = SCORED_REVIEWS - 1
            ))
            .expect("generate");
    }
}

/// Runs the measurements above, then criterion's groups (what `criterion_group!` and
/// `criterion_main!` would generate).
fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    benches(&mut criterion);
    criterion.final_summary();
}
