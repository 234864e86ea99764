//! Log lines that a failing dependency repeats on every request (or every
//! group commit, every retry), written at most once a second each.
//!
//! When the database fails, every request that reaches it fails the same
//! way. At tens of thousands of requests a second, a line per failure
//! would drown every other line and cost CPU and disk just when the log is
//! read most. Such a line goes through [`limited!`]: the first is written
//! at once, then at most one per [`EVERY`]; a line written after others
//! were held back carries `suppressed`, how many were left out since the
//! last one written, so the log still says how often it happened. The line
//! written is one of the failures with its own fields, and, on a request's
//! task, its request id (`logs`): it can be looked up like any other.
//!
//! Each call site of [`limited!`] is a kind of line of its own, with its
//! own [`LogLimit`] (a `storage failure` flood never holds back the first
//! `the database cannot take the request now`). The limit is two atomics
//! and no lock: a line held back costs a clock read and two atomic
//! operations. A line the log's filter leaves out (`RUST_LOG`) is neither
//! written nor counted.
//!
//! [`LogLimit`] takes the time as an argument ([`LogLimit::admit_at`]);
//! [`limited!`] gives it the process's monotonic clock.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A limited line is written at most once per this.
pub(crate) const EVERY: Duration = Duration::from_secs(1);

/// [`EVERY`] in the unit of a [`LogLimit`]'s clock.
const EVERY_MS: u64 = EVERY.as_millis() as u64;

/// Whether one kind of log line may be written now, and how many of it
/// were held back since the last one written.
#[derive(Debug)]
pub(crate) struct LogLimit {
    /// When (milliseconds on the caller's clock) the next line may be
    /// written; 0 at first, so the first line always is.
    open_at: AtomicU64,
    /// Lines held back since the last one written.
    held: AtomicU64,
}

/// Leave to write one line, from [`LogLimit::admit_at`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub(crate) struct Admitted {
    held: u64,
}

impl Admitted {
    /// The line's `suppressed` field: how many lines of its kind were held
    /// back since the last one written; `None`, and the field left out,
    /// when none were.
    pub(crate) fn suppressed(self) -> Option<u64> {
        (self.held > 0).then_some(self.held)
    }
}

impl LogLimit {
    /// A limit that has written nothing yet.
    pub(crate) const fn new() -> Self {
        Self {
            open_at: AtomicU64::new(0),
            held: AtomicU64::new(0),
        }
    }

    /// A line at `now` (a monotonic clock's reading, from any fixed
    /// start): `Some` when it is to be written, the first at once and then
    /// one per [`EVERY`]; `None` when it is held back, and counted for the
    /// next line written.
    ///
    /// Of lines asked for at once on several threads, one is written. Each
    /// line held back is counted in exactly one later line's `suppressed`
    /// (or still held when no line comes after it).
    pub(crate) fn admit_at(&self, now: Duration) -> Option<Admitted> {
        let now = u64::try_from(now.as_millis()).unwrap_or(u64::MAX);
        let open_at = self.open_at.load(Ordering::Relaxed);
        if now >= open_at
            && self
                .open_at
                .compare_exchange(
                    open_at,
                    now.saturating_add(EVERY_MS),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
        {
            // A line held back on another thread between the exchange and
            // here is counted in this one: it was left out before it.
            return Some(Admitted {
                held: self.held.swap(0, Ordering::Relaxed),
            });
        }
        self.held.fetch_add(1, Ordering::Relaxed);
        None
    }

    /// [`admit_at`](Self::admit_at) on the process's monotonic clock.
    pub(crate) fn admit(&self) -> Option<Admitted> {
        static START: OnceLock<Instant> = OnceLock::new();
        self.admit_at(START.get_or_init(Instant::now).elapsed())
    }
}

/// `tracing::event!($level, …)` at most once per [`EVERY`], through a
/// [`LogLimit`] of this call site's own, with `suppressed` added when
/// lines were held back before it. Nothing is written or counted when the
/// log's filter leaves the line out.
///
/// ```ignore
/// limited!(Level::ERROR, error = %err, writes = batch.len(), "group commit failed");
/// ```
macro_rules! limited {
    ($level:expr, $($event:tt)+) => {{
        static LIMIT: $crate::log_limit::LogLimit = $crate::log_limit::LogLimit::new();
        if ::tracing::event_enabled!($level)
            && let ::std::option::Option::Some(admitted) = LIMIT.admit()
        {
            ::tracing::event!($level, suppressed = admitted.suppressed(), $($event)+);
        }
    }};
}
pub(crate) use limited;

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    use tracing::Level;
    use tracing_subscriber::filter::dynamic_filter_fn;
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;
    use crate::logs::tests::Buffer;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// What `limit` says at each of `times` (milliseconds): the
    /// `suppressed` of each line written, `None` for each held back.
    fn run(limit: &LogLimit, times: &[u64]) -> Vec<Option<Option<u64>>> {
        times
            .iter()
            .map(|&t| limit.admit_at(ms(t)).map(Admitted::suppressed))
            .collect()
    }

    #[test]
    fn the_first_line_is_written_at_once() {
        assert_eq!(run(&LogLimit::new(), &[0]), [Some(None)]);
        // Whatever the clock reads when the first failure comes.
        assert_eq!(run(&LogLimit::new(), &[86_400_000]), [Some(None)]);
    }

    #[test]
    fn lines_within_the_second_are_held_back_and_counted() {
        let limit = LogLimit::new();
        assert_eq!(
            run(&limit, &[5_000, 5_000, 5_001, 5_500, 5_999]),
            [Some(None), None, None, None, None]
        );
        assert_eq!(limit.held.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn the_next_line_after_the_second_carries_the_count() {
        let limit = LogLimit::new();
        assert_eq!(
            run(&limit, &[0, 1, 2, 999, 1_000]),
            [Some(None), None, None, None, Some(Some(3))]
        );
        // The second is counted from the line written last.
        assert_eq!(run(&limit, &[1_999, 2_000]), [None, Some(Some(1))]);
        // After a quiet spell, nothing was left out: no `suppressed`.
        assert_eq!(run(&limit, &[60_000]), [Some(None)]);
        assert_eq!(limit.held.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn two_kinds_are_independent() {
        let (unavailable, failure) = (LogLimit::new(), LogLimit::new());
        assert_eq!(run(&unavailable, &[0]), [Some(None)]);
        assert_eq!(run(&unavailable, &[1; 100]), [None; 100]);
        // A flood of one kind neither holds back nor adds to the other.
        assert_eq!(run(&failure, &[500, 600]), [Some(None), None]);
        assert_eq!(run(&unavailable, &[1_000]), [Some(Some(100))]);
        assert_eq!(run(&failure, &[1_000, 1_500]), [None, Some(Some(2))]);
    }

    /// Lines asked for on several threads at once: each is written or
    /// counted, exactly once, and written lines stay a second apart.
    #[test]
    fn every_line_held_back_is_counted_once_across_threads() {
        const THREADS: u64 = 4;
        const TIMES: u64 = 5_000;
        let limit = Arc::new(LogLimit::new());
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                let limit = limit.clone();
                std::thread::spawn(move || {
                    (0..TIMES)
                        .filter_map(|t| limit.admit_at(ms(t)).map(|a| (t, a.held)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut written: Vec<(u64, u64)> = threads
            .into_iter()
            .flat_map(|thread| thread.join().unwrap_or_default())
            .collect();
        written.sort_unstable();
        let counted: u64 = written.iter().map(|(_, held)| held).sum();
        let still_held = limit.held.load(Ordering::Relaxed);
        assert_eq!(
            written.len() as u64 + counted + still_held,
            THREADS * TIMES,
            "{written:?}, {still_held} held"
        );
        assert!(
            written
                .windows(2)
                .all(|pair| pair[1].0 >= pair[0].0 + 1_000),
            "{written:?}"
        );
        assert!(!written.is_empty() && written.len() <= 5, "{written:?}");
    }

    /// A line the filter leaves out is not counted: when the filter lets
    /// it through again, the first is written, with nothing suppressed.
    #[test]
    fn a_line_the_filter_leaves_out_is_neither_written_nor_counted() {
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let on = Arc::new(AtomicBool::new(false));
        let filter_on = on.clone();
        // A filter asked at every line, so it can be turned on and off: a
        // plain `filter_fn`'s answer is kept per call site. It also leaves
        // the lines of the other tests' subscribers as their own filters
        // say (it never answers for all of them at once).
        let subscriber = tracing_subscriber::registry()
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(move || writer.clone())
                    .with_ansi(false),
            )
            .with(dynamic_filter_fn(move |_, _| {
                filter_on.load(Ordering::Relaxed)
            }));
        let _default = tracing::subscriber::set_default(subscriber);
        let fail = |n: u32| limited!(Level::ERROR, n, "the disk failed");

        for n in 0..3 {
            fail(n);
        }
        assert_eq!(buffer.text(), "");
        on.store(true, Ordering::Relaxed);
        fail(3);
        let text = buffer.text();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("the disk failed n=3"), "{text}");
        assert!(!text.contains("suppressed"), "{text}");
    }
}
