//! Ingest as a pipeline: verifying threads take small chunks of lines as they free up, and
//! the storing thread takes the verified chunks in order, one transaction per batch.
//!
//! Signature checks are about three quarters of the work and storing the rest, and storing
//! is serial. So there is one verifying thread fewer than there are cores, and the storing
//! thread verifies the next chunk itself whenever the chunk it needs is not ready yet: every
//! core works until the lines run out, and no more threads run than there are cores (a third
//! thread on two cores made each message cost a third more CPU, in cache and scheduling).

use super::store::{BatchFailure, LineOutcome};
use super::{Ledger, LedgerError};
use revcal_elo_protocol::{KeyCache, MessageError, SignedMessage};
use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard};

/// Lines per chunk: small enough that the last chunks of a run spread over the cores, large
/// enough that taking one costs nothing next to verifying it.
const CHUNK_LINES: usize = 64;

/// One verified chunk: the index in the input of each non-blank line, and its result.
type Verified = (Vec<usize>, Vec<Result<SignedMessage, MessageError>>);

/// What the verifying threads and the storing thread share.
struct Shared<'a> {
    lines: &'a [&'a str],
    /// Chunks in all.
    chunks: usize,
    /// How many chunks past the last one stored may be verified.
    ahead: usize,
    state: Mutex<State>,
    /// Signalled when a chunk is verified, or the run stops.
    verified: Condvar,
    /// Signalled when the storing thread takes a chunk, or the run stops.
    taken: Condvar,
}

#[derive(Default)]
struct State {
    /// The next chunk nobody has claimed.
    next: usize,
    /// Verified chunks not yet taken, by chunk number.
    ready: BTreeMap<usize, Verified>,
    /// Chunks taken by the storing thread.
    taken: usize,
    /// Set when the storing thread is done or gives up: the verifying threads stop.
    stopped: bool,
    /// Set when a verifying thread panicked: its chunk will never come.
    failed: bool,
}

impl State {
    /// Claims the next chunk, when there is one within reach.
    fn claim(&mut self, chunks: usize, ahead: usize) -> Option<usize> {
        let number = self.next;
        (number < chunks && number < self.taken + ahead && !self.stopped).then(|| {
            self.next += 1;
            number
        })
    }
}

impl Shared<'_> {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock means a thread panicked while holding it; the state is still
        // consistent (every write under it is a single insert or assignment).
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn stop(&self) {
        self.lock().stopped = true;
        self.verified.notify_all();
        self.taken.notify_all();
    }

    /// Parses and verifies chunk `number` and hands it over.
    fn verify(&self, number: usize, keys: &mut KeyCache) {
        let start = number * CHUNK_LINES;
        let part = self.lines.get(start..(start + CHUNK_LINES).min(self.lines.len())).unwrap_or_default();
        let verified = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let (indices, texts): (Vec<usize>, Vec<&str>) = part
                .iter()
                .enumerate()
                .filter(|(_, line)| !line.trim().is_empty())
                .map(|(i, line)| (start + i, *line))
                .unzip();
            let parsed = texts.iter().map(|text| SignedMessage::parse_with(text, keys)).collect();
            (indices, parsed)
        }));
        let mut state = self.lock();
        match verified {
            Ok(chunk) => {
                state.ready.insert(number, chunk);
            }
            // Parsing never panics on input; should the impossible happen, the run stops
            // with an error rather than waiting forever for this chunk.
            Err(_) => state.failed = true,
        }
        drop(state);
        // Only the storing thread waits for verified chunks.
        self.verified.notify_one();
    }
}

impl Ledger {
    /// As [`Ledger::ingest_lines`], one transaction per `batch_size` lines, with later lines
    /// parsed and verified on every core while earlier ones are stored. `on_batch` sees each
    /// batch's outcomes (indices into `lines`) as soon as it is committed. A failure is a
    /// [`LedgerError::Interrupted`] that says how many messages were stored before it.
    pub fn ingest_lines_pipelined(
        &mut self,
        lines: &[&str],
        batch_size: usize,
        on_batch: impl FnMut(Vec<(usize, LineOutcome)>),
    ) -> Result<(), LedgerError> {
        let cores = std::thread::available_parallelism().map_or(1, usize::from).min(8);
        // No more verifying threads than chunks besides the one the storing thread takes.
        let helpers = (cores - 1).min(lines.len().div_ceil(CHUNK_LINES).saturating_sub(1));
        self.ingest_lines_with_helpers(lines, batch_size, helpers, on_batch)
    }

    /// [`Ledger::ingest_lines_pipelined`] with `helpers` verifying threads besides the
    /// storing one.
    pub(crate) fn ingest_lines_with_helpers(
        &mut self,
        lines: &[&str],
        batch_size: usize,
        helpers: usize,
        mut on_batch: impl FnMut(Vec<(usize, LineOutcome)>),
    ) -> Result<(), LedgerError> {
        let batch_size = batch_size.max(1);
        let shared = Shared {
            lines,
            chunks: lines.len().div_ceil(CHUNK_LINES),
            // Verified lines wait for the storing thread at most two batches ahead.
            ahead: (2 * batch_size).div_ceil(CHUNK_LINES).max(2 * (helpers + 1)),
            state: Mutex::new(State::default()),
            verified: Condvar::new(),
            taken: Condvar::new(),
        };
        std::thread::scope(|scope| {
            for _ in 0..helpers {
                scope.spawn(|| verify_chunks(&shared));
            }
            let stored = self.store_chunks(batch_size, &shared, &mut on_batch);
            shared.stop();
            stored
        })
    }

    /// Takes the verified chunks in order and stores them, `batch_size` lines a transaction;
    /// while the next chunk is not ready, verifies one itself.
    fn store_chunks(
        &mut self,
        batch_size: usize,
        shared: &Shared,
        on_batch: &mut impl FnMut(Vec<(usize, LineOutcome)>),
    ) -> Result<(), LedgerError> {
        let mut keys = KeyCache::default();
        let mut stored = 0u64;
        let interrupted = |stored, failure: BatchFailure| LedgerError::Interrupted {
            stored,
            unconfirmed: failure.unconfirmed,
            error: Box::new(failure.error),
        };
        let mut indices = Vec::with_capacity(batch_size + CHUNK_LINES);
        let mut parsed = Vec::with_capacity(batch_size + CHUNK_LINES);
        for number in 0..shared.chunks {
            let (chunk_indices, chunk_parsed) = loop {
                let mut state = shared.lock();
                if let Some(chunk) = state.ready.remove(&number) {
                    state.taken = number + 1;
                    drop(state);
                    shared.taken.notify_all();
                    break chunk;
                }
                if state.failed {
                    let error = self.corrupt("a verifying thread stopped on an internal error");
                    return Err(interrupted(stored, BatchFailure { error, unconfirmed: 0 }));
                }
                if let Some(claimed) = state.claim(shared.chunks, shared.ahead) {
                    drop(state);
                    shared.verify(claimed, &mut keys);
                } else {
                    // Every chunk up to the one needed is being verified elsewhere.
                    drop(shared.verified.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner));
                }
            };
            indices.extend(chunk_indices);
            parsed.extend(chunk_parsed);
            if parsed.len() >= batch_size || number + 1 == shared.chunks {
                let outcomes = self
                    .ingest_parsed(std::mem::take(&mut parsed))
                    .map_err(|failure| interrupted(stored, failure))?;
                stored += outcomes.iter().filter(|outcome| outcome.is_stored()).count() as u64;
                on_batch(std::mem::take(&mut indices).into_iter().zip(outcomes).collect());
            }
        }
        Ok(())
    }
}

/// A verifying thread: claims the next chunk while it is within reach of the storing thread,
/// verifies it with its own key cache, and hands it over, until the chunks run out.
fn verify_chunks(shared: &Shared) {
    let mut keys = KeyCache::default();
    loop {
        let claimed = {
            let mut state = shared.lock();
            loop {
                if let Some(number) = state.claim(shared.chunks, shared.ahead) {
                    break Some(number);
                }
                if state.stopped || state.next >= shared.chunks {
                    break None;
                }
                state = shared.taken.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        };
        let Some(number) = claimed else { return };
        shared.verify(number, &mut keys);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use revcal_elo_protocol::{Content, Keypair, Message, RequestContent};

    fn request_lines(count: usize) -> Vec<String> {
        let key = Keypair::from_seed([7; 32]);
        (0..count)
            .map(|n| {
                let message = Message {
                    from: key.agent_id(),
                    to: "#review".into(),
                    ts: 1_700_000_000 + n as u64,
                    content: Content::Request(RequestContent {
                        repo: Some("github.com/acme/api".into()),
                        change: Some(format!("pull/{n}")),
                        ..Default::default()
                    }),
                };
                match SignedMessage::sign(&message, &key) {
                    Ok(signed) => signed.canonical().to_string(),
                    Err(error) => panic!("signing: {error}"),
                }
            })
            .collect()
    }

    /// Whatever the number of verifying threads (none: the storing thread verifies all) and
    /// the batch size, every line comes back
    /// once, in order, with blank lines skipped and bad lines reported in place; the
    /// batches are at least `batch_size` lines but the last.
    #[test]
    fn every_line_comes_back_once_in_order() {
        let mut lines = request_lines(300);
        lines.insert(7, String::new());
        lines.insert(150, "{not json".into());
        lines.insert(299, "   ".into());
        let texts: Vec<&str> = lines.iter().map(String::as_str).collect();
        for (helpers, batch_size) in [(0, 1), (0, 100), (1, 50), (2, 64), (7, 1000)] {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let mut ledger = Ledger::open(dir.path().join("ledger.sqlite")).expect("a new ledger");
            let mut seen = Vec::new();
            let mut batches = Vec::new();
            ledger
                .ingest_lines_with_helpers(&texts, batch_size, helpers, |outcomes| {
                    batches.push(outcomes.len());
                    seen.extend(outcomes);
                })
                .expect("ingest");
            let indices: Vec<usize> = seen.iter().map(|(index, _)| *index).collect();
            let expected: Vec<usize> = (0..texts.len()).filter(|&i| !texts[i].trim().is_empty()).collect();
            assert_eq!(indices, expected, "{helpers} helpers, batches of {batch_size}");
            assert!(matches!(seen.iter().find(|(i, _)| *i == 150), Some((_, LineOutcome::Invalid(_)))));
            assert_eq!(seen.iter().filter(|(_, outcome)| outcome.is_stored()).count(), 300);
            let (last, full) = batches.split_last().expect("at least one batch");
            assert!(full.iter().all(|&n| n >= batch_size) && *last > 0, "{batches:?}");
            assert_eq!(ledger.message_count().expect("count"), 300);
        }
    }
}
