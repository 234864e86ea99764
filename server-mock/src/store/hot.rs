//! Hot posts: spreading one post's count over shard rows.
//!
//! One row takes a few thousand updates a second, because every like of a
//! post updates that post's row and waits for the row lock. A viral post gets
//! about 2,500 likes a second — half of that — so a store spreads a hot
//! post's count over up to [`MAX_SHARDS`] shard rows, `post_count_shards
//! (post_id, shard, count, version, likers, likers_at)`, one picked at random
//! per write.
//!
//! The rules that keep everything exact:
//!
//! * A post's count is its own row's `count` plus the `count` of each of its
//!   shard rows; the same for `version`. Each real change adds ±1 to the
//!   count and +1 to the version of exactly one of those rows, in the
//!   transaction that inserts or deletes the like row, so the sums are exact
//!   whichever row each write picked. A single shard row may go below zero
//!   (a like counted on one shard, its unlike on another); the sum never does.
//! * Each row keeps its own recent likers, newest first, with the time of
//!   each like (`likers_at`). A user is listed in at most one row: a like
//!   lists its user in the row it counted on, and an unlike counts on the row
//!   that lists its user (when one does), taking the user off. The post's
//!   recent likers are all rows' lists merged newest first (see
//!   `merge_likers`).
//! * Reads sum the rows (behind the server's one-second view cache), so they
//!   cost one more keyed range read for a post that was ever hot.
//!
//! Which posts are hot is decided per server by [`HotPosts`], from the writes
//! it sees; servers need not agree, because exactness never depends on which
//! row a write picked.

use std::{
    collections::HashMap,
    sync::{
        Mutex, PoisonError,
        atomic::{AtomicI64, AtomicU16, AtomicU32, Ordering},
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use likekit_proto::{PostId, UserId};

use super::RECENT_LIKERS;

/// The most shard rows one post's count may spread over.
pub const MAX_SHARDS: u16 = 64;

/// When a post counts as hot, and how far its count spreads then.
///
/// ```
/// use likekit_server::store::HotPostOptions;
/// let options = HotPostOptions::default();
/// assert_eq!((options.threshold, options.shards), (200, 16));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HotPostOptions {
    /// A post is hot once this server sees more than this many writes
    /// (likes and unlikes, changed or not) to it within one clock second.
    /// 0 makes every write hot.
    pub threshold: u32,
    /// How many shard rows a hot post's count spreads over (at most
    /// [`MAX_SHARDS`]); 0 or 1 turns sharding off.
    pub shards: u16,
    /// How long a post stays hot after the last second that passed the
    /// threshold (whole seconds).
    pub cool_down: Duration,
}

impl Default for HotPostOptions {
    /// Hot above 200 writes a second on one server, 16 shard rows, cooled
    /// after 10 quiet seconds.
    fn default() -> Self {
        Self {
            threshold: 200,
            shards: 16,
            cool_down: Duration::from_secs(10),
        }
    }
}

/// The writes of one post in the current second.
#[derive(Debug, Clone, Copy)]
struct Window {
    second: u64,
    writes: u32,
    /// Hot while the clock is before this second.
    hot_until: u64,
}

#[derive(Debug, Default)]
struct Bucket {
    windows: HashMap<PostId, Window>,
    inserted: u32,
}

const BUCKETS: usize = 16;

/// Decides, write by write, whether a post is hot and which shard row a hot
/// write goes to. Shared by every backend; the threshold and shard count can
/// be changed while the server runs.
///
/// ```
/// use likekit_server::store::{HotPostOptions, HotPosts};
/// let hot = HotPosts::new(HotPostOptions { threshold: 0, ..HotPostOptions::default() });
/// let post = likekit_server::wire::PostId::new(42).unwrap();
/// assert!(hot.on_write(post).is_some_and(|shard| shard < 16));
/// hot.set_shards(0);
/// assert_eq!(hot.on_write(post), None);
/// ```
#[derive(Debug)]
pub struct HotPosts {
    threshold: AtomicU32,
    shards: AtomicU16,
    cool_secs: u64,
    start: Instant,
    buckets: [Mutex<Bucket>; BUCKETS],
}

impl HotPosts {
    /// A tracker that has seen no writes yet.
    pub fn new(options: HotPostOptions) -> Self {
        Self {
            threshold: AtomicU32::new(options.threshold),
            shards: AtomicU16::new(options.shards.min(MAX_SHARDS)),
            cool_secs: options.cool_down.as_secs(),
            start: Instant::now(),
            buckets: std::array::from_fn(|_| Mutex::new(Bucket::default())),
        }
    }

    /// The options in force now.
    pub fn options(&self) -> HotPostOptions {
        HotPostOptions {
            threshold: self.threshold.load(Ordering::Relaxed),
            shards: self.shards.load(Ordering::Relaxed),
            cool_down: Duration::from_secs(self.cool_secs),
        }
    }

    /// Changes the threshold (writes per second per post; 0: every write).
    pub fn set_threshold(&self, writes_per_second: u32) {
        self.threshold.store(writes_per_second, Ordering::Relaxed);
    }

    /// Changes how many shard rows hot writes spread over (0 or 1: none,
    /// every write goes to the post's own row). Capped at [`MAX_SHARDS`].
    pub fn set_shards(&self, shards: u16) {
        self.shards.store(shards.min(MAX_SHARDS), Ordering::Relaxed);
    }

    /// Records one write to `post`. Returns the shard row it should go to
    /// (`0..shards`, at random) when the post is hot, `None` when the write
    /// goes to the post's own row.
    pub fn on_write(&self, post: PostId) -> Option<u16> {
        let shards = self.shards.load(Ordering::Relaxed);
        if shards < 2 {
            return None;
        }
        let now = self.start.elapsed().as_secs();
        self.record(post, now).then(|| fastrand::u16(0..shards))
    }

    /// Counts a write at `now` (seconds on this tracker's clock) and says
    /// whether the post is hot.
    fn record(&self, post: PostId, now: u64) -> bool {
        let threshold = self.threshold.load(Ordering::Relaxed);
        // Post ids are mostly sequential, so the low bits spread them well.
        let bucket = &self.buckets[(post.get() % BUCKETS as u64) as usize];
        let mut bucket = bucket.lock().unwrap_or_else(PoisonError::into_inner);
        let bucket = &mut *bucket;
        let cool_secs = self.cool_secs;
        let window = bucket.windows.entry(post).or_insert_with(|| {
            bucket.inserted = bucket.inserted.wrapping_add(1);
            Window {
                second: now,
                writes: 0,
                hot_until: 0,
            }
        });
        if window.second != now {
            window.second = now;
            window.writes = 0;
        }
        window.writes = window.writes.saturating_add(1);
        if window.writes > threshold {
            window.hot_until = now + cool_secs + 1;
        }
        let hot = now < window.hot_until;
        // Forget posts that are neither hot nor written lately, now and then
        // (amortised: after as many new posts as half the map), so the map
        // holds only the posts being written.
        if bucket.inserted as usize >= (bucket.windows.len() / 2).max(256) {
            bucket.inserted = 0;
            bucket
                .windows
                .retain(|_, w| now < w.hot_until || w.second + 1 >= now);
        }
        hot
    }

    /// How many posts the tracker remembers (for tests).
    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.buckets
            .iter()
            .map(|b| {
                b.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .windows
                    .len()
            })
            .sum()
    }
}

/// The last value [`liked_at`] gave (or [`liked_after`] set).
static LAST: AtomicI64 = AtomicI64::new(0);

/// Makes every later [`liked_at`] greater than `at`: the SQLite store calls
/// it when it opens, with the newest like time it holds, so likes made after a
/// restart with the clock set back still sort as the newest (a fold or a
/// merge of shard rows keeps the newest likers).
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
pub(crate) fn liked_after(at: i64) {
    LAST.fetch_max(at, Ordering::Relaxed);
}

/// When a like happened, for ordering recent likers across rows:
/// microseconds since the Unix epoch, strictly increasing within this
/// process (two likes never share a value) and after every time given to
/// [`liked_after`].
// The stores use it; a build with neither (the fuzz targets) does not.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn liked_at() -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    let mut last = LAST.load(Ordering::Relaxed);
    loop {
        let next = now.max(last.saturating_add(1));
        match LAST.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

/// Merges several rows' recent likers (each newest first, with the time of
/// each like) into the post's: newest first, each user once, at most
/// [`RECENT_LIKERS`], with their times. A missing time counts as older than
/// any other (rows written before times were kept); ties keep the rows'
/// order.
// The stores use it; a build with neither (the fuzz targets) does not.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn merge_timed<'a>(
    rows: impl IntoIterator<Item = (&'a [UserId], &'a [i64])>,
) -> Vec<(UserId, i64)> {
    let mut all: Vec<(UserId, i64)> = Vec::new();
    for (likers, at) in rows {
        all.extend(
            likers
                .iter()
                .enumerate()
                .map(|(i, &user)| (user, at.get(i).copied().unwrap_or(i64::MIN))),
        );
    }
    // Stable: equal times keep the order they were listed in.
    all.sort_by_key(|&(_, at)| std::cmp::Reverse(at));
    let mut seen = std::collections::HashSet::with_capacity(all.len());
    all.retain(|&(user, _)| seen.insert(user));
    all.truncate(RECENT_LIKERS);
    all
}

/// [`merge_timed`] without the times: the post's recent likers.
// The stores use it; a build with neither (the fuzz targets) does not.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn merge_likers<'a>(
    rows: impl IntoIterator<Item = (&'a [UserId], &'a [i64])>,
) -> Vec<UserId> {
    merge_timed(rows)
        .into_iter()
        .map(|(user, _)| user)
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn p(id: u64) -> PostId {
        PostId::new(id).unwrap()
    }

    fn users<const N: usize>(ids: [u64; N]) -> Vec<UserId> {
        ids.map(|id| UserId::new(id).unwrap()).to_vec()
    }

    fn tracker(threshold: u32) -> HotPosts {
        HotPosts::new(HotPostOptions {
            threshold,
            shards: 8,
            cool_down: Duration::from_secs(3),
        })
    }

    #[test]
    fn a_post_turns_hot_past_the_threshold_and_cools() {
        let hot = tracker(5);
        // Five writes in second 10: not more than the threshold.
        for _ in 0..5 {
            assert!(!hot.record(p(1), 10));
        }
        // The sixth passes it.
        assert!(hot.record(p(1), 10));
        // Still hot for the cool-down after that second, even with one write.
        for second in 11..=13 {
            assert!(hot.record(p(1), second), "second {second}");
        }
        assert!(!hot.record(p(1), 14), "cooled after 3 quiet seconds");
        // Another post is unaffected.
        assert!(!hot.record(p(2), 10));
    }

    #[test]
    fn writes_in_different_seconds_do_not_add_up() {
        let hot = tracker(3);
        for second in 0..20 {
            for _ in 0..3 {
                assert!(!hot.record(p(7), second));
            }
        }
    }

    #[test]
    fn threshold_zero_makes_every_write_hot_and_few_shards_none() {
        let hot = tracker(0);
        assert!(hot.record(p(1), 0));
        for _ in 0..100 {
            assert!(hot.on_write(p(1)).is_some_and(|s| s < 8));
        }
        hot.set_shards(1);
        assert_eq!(hot.on_write(p(1)), None);
        hot.set_shards(1000);
        assert_eq!(hot.options().shards, MAX_SHARDS);
        hot.set_threshold(u32::MAX);
        hot.set_shards(4);
        // Still inside the cool-down of the earlier hot writes.
        assert!(hot.on_write(p(1)).is_some());
        assert_eq!(hot.on_write(p(2)), None);
    }

    #[test]
    fn idle_posts_are_forgotten() {
        let hot = tracker(100);
        for post in 1..=5_000 {
            hot.record(p(post), 0);
        }
        for post in 5_000..10_000 {
            hot.record(p(post), 50);
        }
        assert!(hot.tracked() < 7_000, "tracked {}", hot.tracked());
    }

    #[test]
    fn liked_at_strictly_increases() {
        let mut last = liked_at();
        for _ in 0..10_000 {
            let next = liked_at();
            assert!(next > last);
            last = next;
        }
    }

    #[test]
    fn liked_at_goes_on_after_a_later_stored_time() {
        let tomorrow = liked_at() + 86_400_000_000;
        liked_after(tomorrow);
        assert!(liked_at() > tomorrow);
        // An older time changes nothing.
        liked_after(0);
        assert!(liked_at() > tomorrow);
    }

    #[test]
    fn likers_merge_newest_first_once_each() {
        let (base, shard_a, shard_b) = (users([3, 2, 1]), users([6, 4]), users([5, 2]));
        let base: (&[UserId], &[i64]) = (&base, &[30, 20, 10]);
        let shard_a: (&[UserId], &[i64]) = (&shard_a, &[60, 40]);
        let shard_b: (&[UserId], &[i64]) = (&shard_b, &[50, 5]);
        assert_eq!(
            merge_likers([base, shard_a, shard_b]),
            users([6, 5, 4, 3, 2, 1])
        );
        // Rows without times keep their order, after every timed one.
        let old = users([9, 8]);
        let old: (&[UserId], &[i64]) = (&old, &[]);
        assert_eq!(merge_likers([old, shard_a]), users([6, 4, 9, 8]));
        let many: Vec<UserId> = (1..=150).rev().map(|id| UserId::new(id).unwrap()).collect();
        let at: Vec<i64> = (1..=150).rev().collect();
        let merged = merge_likers([(many.as_slice(), at.as_slice())]);
        assert_eq!(merged.len(), RECENT_LIKERS);
        assert_eq!((merged[0].get(), merged[99].get()), (150, 51));
    }
}
