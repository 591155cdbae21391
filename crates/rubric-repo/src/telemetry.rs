//! Lookup telemetry: how often each rubric is fetched and how long fetching takes.
//!
//! Counters are atomics so that `get` stays lock-free and `&self`; latencies go into a
//! power-of-two histogram of nanoseconds (bucket `i` holds lookups that took less than
//! `2^i` ns and at least `2^(i-1)`).

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

const BUCKETS: usize = 40;

/// Live counters owned by a repository.
#[derive(Debug)]
pub(crate) struct Telemetry {
    lookups: AtomicU64,
    misses: AtomicU64,
    latency: [AtomicU64; BUCKETS],
}

impl Default for Telemetry {
    fn default() -> Self {
        Telemetry {
            lookups: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            latency: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl Telemetry {
    pub(crate) fn record(&self, found: bool, nanos: u64) {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        if !found {
            self.misses.fetch_add(1, Ordering::Relaxed);
        }
        let bucket = (u64::BITS - nanos.leading_zeros()) as usize;
        self.latency[bucket.min(BUCKETS - 1)].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, rubrics: usize, usage: BTreeMap<String, u64>) -> Stats {
        let counts: Vec<u64> = self.latency.iter().map(|b| b.load(Ordering::Relaxed)).collect();
        Stats {
            rubrics,
            lookups: self.lookups.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            usage,
            latency: LatencyHistogram::from_counts(&counts),
        }
    }
}

/// A point-in-time copy of a repository's telemetry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// Rubrics loaded.
    pub rubrics: usize,
    /// `get` calls so far.
    pub lookups: u64,
    /// `get` calls for an id that is not loaded.
    pub misses: u64,
    /// `get` calls per rubric id (every loaded id appears, unused ones with 0).
    pub usage: BTreeMap<String, u64>,
    /// How long lookups took.
    pub latency: LatencyHistogram,
}

/// Lookup durations in power-of-two nanosecond buckets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyHistogram {
    /// `(upper bound in ns, lookups)` for every non-empty bucket, fastest first.
    pub buckets: Vec<(u64, u64)>,
    /// Upper bound of the bucket holding the median lookup.
    pub p50_ns: Option<u64>,
    /// Upper bound of the bucket holding the 99th-percentile lookup.
    pub p99_ns: Option<u64>,
}

impl LatencyHistogram {
    fn from_counts(counts: &[u64]) -> LatencyHistogram {
        let total: u64 = counts.iter().sum();
        let upper = |bucket: usize| 1u64 << bucket;
        let percentile = |fraction: f64| -> Option<u64> {
            if total == 0 {
                return None;
            }
            let wanted = ((total as f64) * fraction).ceil().max(1.0) as u64;
            let mut seen = 0;
            counts.iter().enumerate().find_map(|(bucket, &count)| {
                seen += count;
                (seen >= wanted).then(|| upper(bucket))
            })
        };
        LatencyHistogram {
            buckets: counts
                .iter()
                .enumerate()
                .filter(|(_, c)| **c > 0)
                .map(|(b, &c)| (upper(b), c))
                .collect(),
            p50_ns: percentile(0.50),
            p99_ns: percentile(0.99),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_the_buckets() {
        let telemetry = Telemetry::default();
        for _ in 0..98 {
            telemetry.record(true, 100); // bucket < 128 ns
        }
        telemetry.record(false, 5_000); // < 8192 ns
        telemetry.record(true, 5_000);
        let stats = telemetry.snapshot(1, BTreeMap::new());
        assert_eq!((stats.lookups, stats.misses), (100, 1));
        assert_eq!(stats.latency.p50_ns, Some(128));
        assert_eq!(stats.latency.p99_ns, Some(8192));
        assert_eq!(stats.latency.buckets, vec![(128, 98), (8192, 2)]);
    }
}
