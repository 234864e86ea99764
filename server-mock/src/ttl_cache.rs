//! A small concurrent cache: a lock-free map (papaya, with the fast foldhash
//! hasher) of values that expire after a fixed time, bounded in size.
//!
//! Reads take no lock and touch no shared counters, which matters on the
//! view path. Expired entries are ignored on read and removed by
//! [`TtlCache::sweep`], which the server runs every second; when the cache is
//! full, new keys are simply not cached until a sweep makes room.
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
    time::{Duration, Instant},
};

use papaya::{HashMap, Operation, ResizeMode};

#[derive(Debug)]
struct Entry<V> {
    value: V,
    /// Nanoseconds since the cache's `start`.
    expires_at: u64,
}

pub(crate) struct TtlCache<K, V> {
    map: HashMap<K, Entry<V>, foldhash::fast::RandomState>,
    ttl: Duration,
    capacity: usize,
    start: Instant,
}

impl<K: Hash + Eq, V> std::fmt::Debug for TtlCache<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TtlCache")
            .field("len", &self.map.len())
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
    pub(crate) fn new(ttl: Duration, capacity: usize) -> Self {
        Self {
            map: HashMap::builder()
                .hasher(foldhash::fast::RandomState::default())
                .resize_mode(ResizeMode::Blocking)
                .build(),
            ttl,
            capacity,
            start: Instant::now(),
        }
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

    /// Caches `value` for the full TTL.
    pub(crate) fn insert(&self, key: K, value: V) {
        let map = self.map.pin();
        if map.len() >= self.capacity && map.get(&key).is_none() {
            return;
        }
        let expires_at = self.expiry(self.now());
        map.insert(key, Entry { value, expires_at });
    }

    /// Caches `value` unless a live entry is at least as new by `newer`.
    pub(crate) fn insert_if_newer(&self, key: K, value: V, newer: impl Fn(&V, &V) -> bool) {
        let map = self.map.pin();
        if map.len() >= self.capacity && map.get(&key).is_none() {
            return;
        }
        let now = self.now();
        let expires_at = self.expiry(now);
        map.compute(key, |current| match current {
            Some((_, entry)) if entry.expires_at > now && !newer(&value, &entry.value) => {
                Operation::Abort(())
            }
            _ => Operation::Insert(Entry {
                value: value.clone(),
                expires_at,
            }),
        });
    }

    pub(crate) fn remove(&self, key: &K) {
        self.map.pin().remove(key);
    }

    pub(crate) fn clear(&self) {
        self.map.pin().clear();
    }

    /// Drops expired entries.
    pub(crate) fn sweep(&self) {
        let now = self.now();
        self.map.pin().retain(|_, entry| entry.expires_at > now);
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
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
}
