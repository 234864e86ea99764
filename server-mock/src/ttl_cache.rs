//! A small concurrent cache: a lock-free map (papaya, with the fast foldhash
//! hasher) of values that expire after a fixed time, bounded in size.
//!
//! Reads take no lock and touch no shared counters, which matters on the
//! view path. Expired entries are ignored on read and removed by
//! [`TtlCache::sweep`], which the server runs every second; when the cache is
//! full, new keys are simply not cached until a sweep makes room.
//!
//! The bound counts entries ([`PerEntry`], the default), or, for values
//! whose size varies by orders of magnitude (a viewer's friend set: a
//! kilobyte, or hundreds), what each weighs by a [`Weigh`] of the cache's
//! own, usually its bytes. A weighed cache keeps a running total beside
//! the map, on a cache line of its own, changed only where entries come
//! and go; a read never looks at it.
//!
//! The map grows by blocking resizes: the writer that finds the table full
//! copies it whole while other writers wait (a cache insert, after a miss,
//! waits at most one copy; readers never wait). papaya's default, the
//! incremental resize, spreads the copy over later writes, and until they
//! have finished it a read that meets an entry already copied probes the
//! old table, then the new one. A read-mostly cache may see few writes
//! after a burst has grown it, so its reads stay on that slow path: in
//! `cargo bench -p likekit-bench --bench view_path` (no writes while
//! measuring) the two lookups of a cached view took 1,600 of its
//! instructions incrementally and 440 with blocking resizes (callgrind).

use std::{
    hash::Hash,
    marker::PhantomData,
    sync::atomic::{AtomicUsize, Ordering},
    time::{Duration, Instant},
};

use papaya::{Compute, HashMap, Operation, ResizeMode};

#[derive(Debug)]
struct Entry<V> {
    value: V,
    /// Nanoseconds since the cache's `start`.
    expires_at: u64,
}

/// What a value takes of a cache's capacity.
pub(crate) trait Weigh<V> {
    /// `false` for a capacity that counts entries: the map's own length is
    /// then the total, and no running total is kept.
    const WEIGHED: bool = true;

    /// The value's weight (for a weighed cache, the cache adds its map's
    /// share of the entry, [`TtlCache::ENTRY_BYTES`]).
    fn weigh(value: &V) -> usize;
}

/// A capacity in entries: every entry counts one.
#[derive(Debug)]
pub(crate) struct PerEntry;

impl<V> Weigh<V> for PerEntry {
    const WEIGHED: bool = false;

    fn weigh(_: &V) -> usize {
        1
    }
}

/// A weighed cache's running total, alone on its cache line: inserts
/// change it, and the readers of the map's fields beside it must not see
/// their line taken away each time.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Total(AtomicUsize);

pub(crate) struct TtlCache<K, V, W = PerEntry> {
    map: HashMap<K, Entry<V>, foldhash::fast::RandomState>,
    ttl: Duration,
    /// Entries, or for a weighed cache the most its entries may weigh.
    capacity: usize,
    start: Instant,
    /// What the entries weigh together (weighed caches only): a value's
    /// weight is added before it goes in and taken off once it has left,
    /// so the total is never below what the map holds, and the map never
    /// holds more than `capacity`.
    weight: Total,
    weigh: PhantomData<fn() -> W>,
}

impl<K: Hash + Eq, V, W> std::fmt::Debug for TtlCache<K, V, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TtlCache")
            .field("len", &self.map.len())
            .field("weight", &self.weight.0.load(Ordering::Relaxed))
            .field("ttl", &self.ttl)
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl<K, V> TtlCache<K, V>
where
    K: Hash + Eq + Clone + Send + Sync,
    V: Clone + Send + Sync,
{
    /// A cache of at most `capacity` entries.
    pub(crate) fn new(ttl: Duration, capacity: usize) -> Self {
        Self::build(ttl, capacity)
    }
}

impl<K, V, W> TtlCache<K, V, W>
where
    K: Hash + Eq + Clone + Send + Sync,
    V: Clone + Send + Sync,
    W: Weigh<V>,
{
    /// The map's own share of an entry, for a weighed cache: the key and
    /// the entry, which papaya boxes together, and its slots (a pointer and
    /// a metadata byte each; the table is 42 % to 85 % full, so about two
    /// per entry).
    pub(crate) const ENTRY_BYTES: usize = size_of::<(K, Entry<V>)>() + 2 * (size_of::<usize>() + 1);

    /// A cache whose entries weigh at most `budget` together, by `W`.
    pub(crate) fn weighed(ttl: Duration, budget: usize) -> Self {
        Self::build(ttl, budget)
    }

    fn build(ttl: Duration, capacity: usize) -> Self {
        Self {
            map: HashMap::builder()
                .hasher(foldhash::fast::RandomState::default())
                .resize_mode(ResizeMode::Blocking)
                .build(),
            ttl,
            capacity,
            start: Instant::now(),
            weight: Total::default(),
            weigh: PhantomData,
        }
    }

    /// What `value` takes of a weighed cache's budget.
    fn weight_of(value: &V) -> usize {
        W::weigh(value).saturating_add(Self::ENTRY_BYTES)
    }

    /// Adds `weight` to the total if it fits the budget beside what is
    /// there; `false` if it does not.
    fn reserve(&self, weight: usize) -> bool {
        self.weight
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |total| {
                total
                    .checked_add(weight)
                    .filter(|&total| total <= self.capacity)
            })
            .is_ok()
    }

    /// Takes the weight of `value`, which has left the map, off the total.
    fn release(&self, value: &V) {
        self.weight
            .0
            .fetch_sub(Self::weight_of(value), Ordering::AcqRel);
    }

    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn expiry(&self, now: u64) -> u64 {
        now.saturating_add(u64::try_from(self.ttl.as_nanos()).unwrap_or(u64::MAX))
    }

    /// The value, unless missing or expired.
    pub(crate) fn get<Q>(&self, key: &Q) -> Option<V>
    where
        Q: papaya::Equivalent<K> + Hash + ?Sized,
    {
        let map = self.map.pin();
        let entry = map.get(key)?;
        (entry.expires_at > self.now()).then(|| entry.value.clone())
    }

    /// Runs `read` on the value, unless missing or expired, without cloning
    /// it (no reference count touched: hot entries are read from every core).
    pub(crate) fn read<Q, T>(&self, key: &Q, read: impl FnOnce(&V) -> T) -> Option<T>
    where
        Q: papaya::Equivalent<K> + Hash + ?Sized,
    {
        let map = self.map.pin();
        let entry = map.get(key)?;
        (entry.expires_at > self.now()).then(|| read(&entry.value))
    }

    /// Caches `value` for the full TTL. A full cache takes no new key; a
    /// weighed one takes no value that does not fit beside the others
    /// (the weight of one it replaces is given back after).
    pub(crate) fn insert(&self, key: K, value: V) {
        let map = self.map.pin();
        if !W::WEIGHED {
            if map.len() >= self.capacity && map.get(&key).is_none() {
                return;
            }
            let expires_at = self.expiry(self.now());
            map.insert(key, Entry { value, expires_at });
            return;
        }
        if !self.reserve(Self::weight_of(&value)) {
            return;
        }
        let expires_at = self.expiry(self.now());
        if let Some(old) = map.insert(key, Entry { value, expires_at }) {
            self.release(&old.value);
        }
    }

    /// Caches `value` unless a live entry is at least as new by `newer`.
    pub(crate) fn insert_if_newer(&self, key: K, value: V, newer: impl Fn(&V, &V) -> bool) {
        let map = self.map.pin();
        if W::WEIGHED {
            if !self.reserve(Self::weight_of(&value)) {
                return;
            }
        } else if map.len() >= self.capacity && map.get(&key).is_none() {
            return;
        }
        let now = self.now();
        let expires_at = self.expiry(now);
        let done = map.compute(key, |current| match current {
            Some((_, entry)) if entry.expires_at > now && !newer(&value, &entry.value) => {
                Operation::Abort(())
            }
            _ => Operation::Insert(Entry {
                value: value.clone(),
                expires_at,
            }),
        });
        if W::WEIGHED {
            match done {
                Compute::Updated { old: (_, old), .. } => self.release(&old.value),
                Compute::Aborted(()) => self.release(&value),
                Compute::Inserted(..) | Compute::Removed(..) => {}
            }
        }
    }

    pub(crate) fn remove(&self, key: &K) {
        let map = self.map.pin();
        let removed = map.remove(key);
        if W::WEIGHED
            && let Some(old) = removed
        {
            self.release(&old.value);
        }
    }

    pub(crate) fn clear(&self) {
        let map = self.map.pin();
        if !W::WEIGHED {
            map.clear();
            return;
        }
        // One by one, for the weight each leaves behind.
        for (key, _) in &map {
            if let Some(old) = map.remove(key) {
                self.release(&old.value);
            }
        }
    }

    /// Drops expired entries.
    pub(crate) fn sweep(&self) {
        let now = self.now();
        let map = self.map.pin();
        if !W::WEIGHED {
            map.retain(|_, entry| entry.expires_at > now);
            return;
        }
        // `retain` may call its test again on a slot whose entry changed
        // meanwhile: only what `remove_if` removed is taken off the total.
        for (key, entry) in &map {
            if entry.expires_at <= now
                && let Ok(Some((_, old))) = map.remove_if(key, |_, entry| entry.expires_at <= now)
            {
                self.release(&old.value);
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// What the entries weigh together, as the cache counts it (a weighed
    /// cache's).
    pub(crate) fn weight(&self) -> usize {
        self.weight.0.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_sweep_removes_them() {
        let cache = TtlCache::new(Duration::from_millis(30), 10);
        cache.insert(1, "a");
        assert_eq!(cache.get(&1), Some("a"));
        assert_eq!(cache.read(&1, |v| v.len()), Some(1));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(cache.get(&1), None);
        assert_eq!(cache.read(&1, |v| v.len()), None);
        assert_eq!(cache.len(), 1);
        cache.sweep();
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn insert_if_newer_keeps_the_newest_live_value() {
        let cache = TtlCache::new(Duration::from_secs(60), 10);
        let newer = |a: &u64, b: &u64| a > b;
        cache.insert_if_newer(1, 5, newer);
        cache.insert_if_newer(1, 3, newer);
        assert_eq!(cache.get(&1), Some(5));
        cache.insert_if_newer(1, 7, newer);
        assert_eq!(cache.get(&1), Some(7));
    }

    #[test]
    fn an_expired_entry_is_replaced_even_by_an_older_value() {
        let cache = TtlCache::new(Duration::from_millis(20), 10);
        let newer = |a: &u64, b: &u64| a > b;
        cache.insert_if_newer(1, 5, newer);
        std::thread::sleep(Duration::from_millis(40));
        cache.insert_if_newer(1, 4, newer);
        assert_eq!(cache.get(&1), Some(4));
    }

    #[test]
    fn a_full_cache_takes_no_new_keys_but_updates_old_ones() {
        let cache = TtlCache::new(Duration::from_secs(60), 2);
        cache.insert(1, 1);
        cache.insert(2, 2);
        cache.insert(3, 3);
        assert_eq!(cache.get(&3), None);
        cache.insert(2, 20);
        assert_eq!(cache.get(&2), Some(20));
        cache.remove(&1);
        cache.insert(3, 3);
        assert_eq!(cache.get(&3), Some(3));
        cache.clear();
        assert_eq!(cache.len(), 0);
    }

    /// A value that weighs its number.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Heavy(usize);

    struct ByNumber;

    impl Weigh<Heavy> for ByNumber {
        fn weigh(value: &Heavy) -> usize {
            value.0
        }
    }

    type Weighed = TtlCache<u64, Heavy, ByNumber>;

    const ENTRY: usize = Weighed::ENTRY_BYTES;

    #[test]
    fn a_weighed_cache_holds_what_fits_its_budget_and_no_more() {
        // Room for 100 + 200 + 300 and their three entries, not a byte more.
        let budget = 600 + 3 * ENTRY;
        let cache = Weighed::weighed(Duration::from_secs(60), budget);
        cache.insert(1, Heavy(100));
        cache.insert(2, Heavy(200));
        cache.insert(3, Heavy(300));
        assert_eq!((cache.len(), cache.weight()), (3, budget));
        // Full: not even the lightest value goes in.
        cache.insert(4, Heavy(0));
        assert_eq!(cache.get(&4), None);
        assert_eq!((cache.len(), cache.weight()), (3, budget));

        cache.remove(&3);
        assert_eq!((cache.len(), cache.weight()), (2, 300 + 2 * ENTRY));
        // A value heavier than the whole budget never goes in.
        cache.insert(9, Heavy(budget));
        assert_eq!(cache.get(&9), None);
        // A replaced value's weight is given back.
        cache.insert(2, Heavy(250));
        assert_eq!(cache.get(&2), Some(Heavy(250)));
        assert_eq!(cache.weight(), 350 + 2 * ENTRY);
        // 251 more would pass the budget by one; 250 fits it exactly.
        cache.insert(5, Heavy(251));
        assert_eq!(cache.get(&5), None);
        cache.insert(5, Heavy(250));
        assert_eq!(cache.get(&5), Some(Heavy(250)));
        assert_eq!((cache.len(), cache.weight()), (3, budget));

        cache.clear();
        assert_eq!((cache.len(), cache.weight()), (0, 0));
        cache.insert(9, Heavy(600 + 2 * ENTRY));
        assert_eq!(cache.get(&9), Some(Heavy(600 + 2 * ENTRY)));
    }

    #[test]
    fn a_weighed_cache_gives_back_what_leaves_it() {
        let cache = Weighed::weighed(Duration::from_millis(30), 1_000 + 2 * ENTRY);
        let newer = |a: &Heavy, b: &Heavy| a.0 > b.0;
        cache.insert_if_newer(1, Heavy(100), newer);
        assert_eq!(cache.weight(), 100 + ENTRY);
        // Not newer: not kept, and its weight not counted.
        cache.insert_if_newer(1, Heavy(50), newer);
        assert_eq!(cache.get(&1), Some(Heavy(100)));
        assert_eq!(cache.weight(), 100 + ENTRY);
        // Newer: the old one's weight is given back.
        cache.insert_if_newer(1, Heavy(150), newer);
        assert_eq!(cache.get(&1), Some(Heavy(150)));
        assert_eq!(cache.weight(), 150 + ENTRY);
        cache.insert(2, Heavy(10));
        assert_eq!((cache.len(), cache.weight()), (2, 160 + 2 * ENTRY));
        // Expired, then swept: nothing is left counted.
        std::thread::sleep(Duration::from_millis(60));
        cache.sweep();
        assert_eq!((cache.len(), cache.weight()), (0, 0));
        // Entry-counted caches keep no total.
        let counted = TtlCache::new(Duration::from_secs(60), 2);
        counted.insert(1, 1);
        assert_eq!((counted.len(), counted.weight()), (1, 0));
    }
}
