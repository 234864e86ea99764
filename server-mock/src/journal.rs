//! The request journal: every request to a public route, with what the
//! fault rules and the handler did to it, kept in memory for client tests
//! to read back (`GET /admin/requests`) — "one POST per coalesced burst",
//! "no DELETE was sent", "the retry waited for Retry-After".
//!
//! It holds at most `capacity` entries (`--journal-size`), dropping the
//! oldest. It is on only with an admin key (nobody else could read it);
//! off, the middleware does nothing for it but one check.

use std::{
    collections::VecDeque,
    pin::pin,
    sync::{
        Mutex, MutexGuard,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
};

use axum::http::HeaderValue;
use likekit_proto::admin::{Journal as JournalPage, JournalEntry, RequestFilter, WriteResult};

/// Whether a like or unlike changed its row, on the answer for the request
/// journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Written {
    pub(crate) changed: bool,
}

impl Written {
    /// What the journal says the write did.
    pub(crate) fn result(self) -> WriteResult {
        if self.changed {
            WriteResult::Applied
        } else {
            WriteResult::Unchanged
        }
    }
}

/// The default `--journal-size`.
pub const DEFAULT_JOURNAL_SIZE: usize = 10_000;

#[derive(Debug, Default)]
pub(crate) struct Journal {
    capacity: usize,
    dropped: AtomicU64,
    listed: Mutex<Listed>,
    /// Reads waiting for entries ([`Journal::wait`]): each change of the
    /// journal wakes them, but only while there are any, so that a journal
    /// nobody waits on pays one atomic load per change.
    waiting: AtomicUsize,
    changed: tokio::sync::Notify,
    /// Set when the server begins stopping: waits end at once.
    closing: AtomicBool,
}

/// The entries, and the `seq` the last one listed took: both under one
/// lock, so that entries are listed in the order of their `seq` and a
/// reader that saw `seq` N has seen every entry below it that is still
/// kept (`since=N` never skips one).
#[derive(Debug, Default)]
struct Listed {
    last_seq: u64,
    entries: VecDeque<Kept>,
}

/// An entry as the journal keeps it: the request's id (the `X-Request-Id`
/// value, copied: see [`Journal::arrive`]), written into the entry's
/// `request_id` only when the entry is read.
#[derive(Debug)]
struct Kept {
    id: HeaderValue,
    /// The entry, its `request_id` left empty.
    entry: JournalEntry,
}

impl Kept {
    /// The entry as read, with its id.
    fn read(&self) -> JournalEntry {
        JournalEntry {
            request_id: self.id.to_str().unwrap_or_default().to_owned(),
            ..self.entry.clone()
        }
    }
}

impl Journal {
    /// A journal of at most `capacity` entries (0: off).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            ..Self::default()
        }
    }

    /// Whether requests are recorded.
    pub(crate) fn is_on(&self) -> bool {
        self.capacity > 0
    }

    fn listed(&self) -> MutexGuard<'_, Listed> {
        self.listed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lists a request with id `id` as it arrives (in flight): `entry`
    /// makes its entry for the `seq` it takes, the next one, and that
    /// `seq` is returned. Drops the oldest past the capacity.
    ///
    /// The id's bytes are copied (at most 128): a client's `X-Request-Id`
    /// is a slice of its request's whole header block, which a clone would
    /// keep alive for as long as the entry (up to the 400 KiB a request
    /// head may take, for each of the journal's entries).
    pub(crate) fn arrive(&self, id: &HeaderValue, entry: impl FnOnce(u64) -> JournalEntry) -> u64 {
        let id = HeaderValue::from_bytes(id.as_bytes()).unwrap_or_else(|_| id.clone());
        let mut listed = self.listed();
        listed.last_seq += 1;
        let seq = listed.last_seq;
        listed.entries.push_back(Kept {
            id,
            entry: entry(seq),
        });
        while listed.entries.len() > self.capacity {
            listed.entries.pop_front();
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        drop(listed);
        self.wake();
        seq
    }

    /// Replaces the entry with `entry`'s `seq` (listed by
    /// [`Journal::arrive`]) with `entry`, its request answered (its
    /// `request_id` is not read: the id it arrived with is kept). An entry
    /// removed or dropped meanwhile is not listed again.
    pub(crate) fn finish(&self, entry: JournalEntry) {
        self.replace(entry, false);
    }

    /// Replaces the entry with `entry`'s `seq` while it is in flight (what
    /// a fault rule is doing to it); an entry removed, dropped or finished
    /// meanwhile stays as it is.
    pub(crate) fn update_in_flight(&self, entry: JournalEntry) {
        self.replace(entry, true);
    }

    fn replace(&self, entry: JournalEntry, only_in_flight: bool) {
        let mut listed = self.listed();
        let entries = &mut listed.entries;
        let at = entries.partition_point(|e| e.entry.seq < entry.seq);
        if let Some(there) = entries.get_mut(at)
            && there.entry.seq == entry.seq
            && (there.entry.in_flight || !only_in_flight)
        {
            there.entry = entry;
            drop(listed);
            self.wake();
        }
    }

    /// The entries `query` matches, oldest first.
    pub(crate) fn read(&self, query: &RequestFilter) -> JournalPage {
        let matcher = Matcher::new(query);
        self.page(&self.listed(), &matcher)
    }

    fn page(&self, listed: &Listed, matcher: &Matcher<'_>) -> JournalPage {
        JournalPage {
            entries: listed
                .entries
                .iter()
                .filter(|k| matcher.matches(k))
                .map(Kept::read)
                .collect(),
            capacity: self.capacity as u64,
            dropped: self.dropped.load(Ordering::Relaxed),
            last_seq: listed.last_seq,
            met: None,
        }
    }

    /// The entries `query` matches, with `met: true`, when at least `count`
    /// of them are there and none of them is in flight; else, when
    /// `anyway`, as they are, with `met: false`. One look: the answer is
    /// what was checked.
    fn look(&self, query: &RequestFilter, count: u64, anyway: bool) -> Option<JournalPage> {
        let matcher = Matcher::new(query);
        let listed = self.listed();
        let mut matched = 0_u64;
        let mut in_flight = false;
        for kept in listed.entries.iter().filter(|k| matcher.matches(k)) {
            in_flight |= kept.entry.in_flight;
            matched += 1;
        }
        let settled = !in_flight && matched >= count;
        (settled || anyway).then(|| JournalPage {
            met: Some(settled),
            ..self.page(&listed, &matcher)
        })
    }

    /// The entries `query` matches once at least `count` of them are
    /// there and none of them is in flight (`met: true`), or as they are at
    /// `deadline` or when the server begins stopping, whichever comes first
    /// (`met: false`). More than the journal holds is answered at once.
    pub(crate) async fn wait(
        &self,
        query: &RequestFilter,
        count: u64,
        deadline: tokio::time::Instant,
    ) -> JournalPage {
        /// Counts a waiting read in [`Journal::waiting`] while it lives.
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&self.waiting);
        loop {
            // Listening before looking: a change between the look and
            // the wait still wakes this read.
            let mut changed = pin!(self.changed.notified());
            changed.as_mut().enable();
            let over = self.closing.load(Ordering::SeqCst)
                || tokio::time::Instant::now() >= deadline
                || count > self.capacity as u64;
            if let Some(page) = self.look(query, count, over) {
                return page;
            }
            let _ = tokio::time::timeout_at(deadline, changed).await;
        }
    }

    /// Ends every wait at once, and every later one at its first look: the
    /// server is stopping.
    pub(crate) fn close_waits(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// Wakes the waiting reads, if there are any, after a change.
    fn wake(&self) {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.changed.notify_waiters();
        }
    }

    /// Removes the entries `query` matches, and returns how many. With no
    /// filter it empties the journal and sets `dropped` back to 0;
    /// otherwise `dropped` stays as it is. `seq` goes on counting.
    pub(crate) fn remove(&self, query: &RequestFilter) -> usize {
        let mut listed = self.listed();
        let before = listed.entries.len();
        if *query == RequestFilter::default() {
            listed.entries.clear();
            self.dropped.store(0, Ordering::Relaxed);
        } else {
            let matcher = Matcher::new(query);
            listed.entries.retain(|k| !matcher.matches(k));
        }
        let removed = before - listed.entries.len();
        drop(listed);
        // An in-flight entry removed may be what a wait was held by.
        self.wake();
        removed
    }
}

/// A filter as the journal applies it: the request id compared as kept
/// (it is not in the entry), the other filters on the entry.
struct Matcher<'q> {
    id: Option<&'q str>,
    rest: RequestFilter,
}

impl<'q> Matcher<'q> {
    fn new(query: &'q RequestFilter) -> Self {
        Self {
            id: query.request_id.as_deref(),
            rest: RequestFilter {
                request_id: None,
                ..query.clone()
            },
        }
    }

    fn matches(&self, kept: &Kept) -> bool {
        self.id.is_none_or(|id| kept.id == id) && self.rest.matches(&kept.entry)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use likekit_proto::{
        PostId, UserId,
        admin::{FaultMethod, FaultRoute, JournalFault},
    };

    /// A kept entry holds its id's bytes alone, not the buffer the id was
    /// a slice of (a request's whole header block): with the journal full
    /// of ids sent beside 400 KiB of other headers, the server kept
    /// gigabytes.
    #[test]
    fn an_entry_keeps_a_copy_of_its_id_not_the_request_s_headers() {
        let headers = bytes::Bytes::from(vec![b'a'; 400 * 1024]);
        let id = HeaderValue::from_maybe_shared(headers.slice(..16)).unwrap();
        let journal = Journal::new(10);
        journal.arrive(&id, |seq| entry(seq, FaultRoute::Like, 1, Some(7)));
        drop(id);
        assert!(headers.is_unique(), "the journal holds the header block");
        let page = journal.read(&RequestFilter::default());
        assert_eq!(page.entries[0].request_id, "a".repeat(16));
    }

    fn entry(seq: u64, route: FaultRoute, post: u64, user: Option<u64>) -> JournalEntry {
        JournalEntry {
            seq,
            request_id: String::new(),
            at_ms: 0,
            duration_ms: 0,
            method: match route {
                FaultRoute::Like => FaultMethod::Post,
                FaultRoute::Unlike => FaultMethod::Delete,
                _ => FaultMethod::Get,
            },
            route,
            path: String::new(),
            posts: vec![PostId::new(post).unwrap()],
            user: user.map(|u| UserId::new(u).unwrap()),
            status: Some(200),
            write: None,
            fault_rule: None,
            fault_tag: None,
            fault_phase: None,
            fault: None,
            in_flight: true,
        }
    }

    /// Lists a request of `route` on `post` by `user` with id `req-<seq>`.
    fn arrive(journal: &Journal, route: FaultRoute, post: u64, user: Option<u64>) -> u64 {
        let next = journal.listed().last_seq + 1;
        journal.arrive(&id(next), |seq| entry(seq, route, post, user))
    }

    #[test]
    fn keeps_arrival_order_within_its_capacity() {
        let journal = Journal::new(3);
        assert!(journal.is_on());
        let seqs: Vec<u64> = (0..5)
            .map(|_| arrive(&journal, FaultRoute::Like, 1, Some(7)))
            .collect();
        assert_eq!(seqs, [1, 2, 3, 4, 5]);
        // They finish in another order than they arrived; the first two
        // were dropped meanwhile and do not come back.
        for &seq in [3, 1, 2, 5, 4].iter() {
            let mut done = entry(seqs[seq - 1], FaultRoute::Like, 1, Some(7));
            done.in_flight = false;
            done.status = Some(200 + seq as u16);
            journal.finish(done);
        }
        let page = journal.read(&RequestFilter::default());
        let kept: Vec<(u64, &str, Option<u16>, bool)> = page
            .entries
            .iter()
            .map(|e| (e.seq, e.request_id.as_str(), e.status, e.in_flight))
            .collect();
        // An entry keeps the id it arrived with.
        assert_eq!(
            kept,
            [
                (3, "req-3", Some(203), false),
                (4, "req-4", Some(204), false),
                (5, "req-5", Some(205), false)
            ]
        );
        assert_eq!((page.capacity, page.dropped), (3, 2));
        // A finished entry is no longer in flight: an update for it is late.
        let mut late = entry(5, FaultRoute::Like, 1, Some(7));
        late.fault = Some(JournalFault::Latency);
        journal.update_in_flight(late);
        let page = journal.read(&RequestFilter::default());
        assert_eq!(page.entries[2].fault, None);
        assert_eq!(journal.remove(&RequestFilter::default()), 3);
        let page = journal.read(&RequestFilter::default());
        assert!(page.entries.is_empty());
        assert_eq!(page.dropped, 0, "emptied, nothing counts as dropped");
        assert_eq!(
            arrive(&journal, FaultRoute::Like, 1, Some(7)),
            6,
            "seq goes on after a clear"
        );
        assert!(!Journal::new(0).is_on());
    }

    /// A reader that asks for what came after the last `seq` it saw never
    /// misses an entry, however the writers interleave: an entry is listed
    /// under the lock that gives its `seq`.
    #[test]
    fn reading_since_the_last_seq_seen_misses_nothing() {
        const WRITERS: u64 = 4;
        const EACH: u64 = 500;
        let journal = std::sync::Arc::new(Journal::new(100_000));
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let journal = std::sync::Arc::clone(&journal);
                std::thread::spawn(move || {
                    for _ in 0..EACH {
                        journal.arrive(&HeaderValue::from_static("w"), |seq| {
                            // Making the entry takes a moment, as in the
                            // middleware, so that writers overlap.
                            std::hint::black_box((0..50).sum::<u64>());
                            entry(seq, FaultRoute::Like, 1, Some(w + 1))
                        });
                    }
                })
            })
            .collect();
        let mut seen = Vec::new();
        let mut since = 0;
        let mut read_since = |since: &mut u64| {
            let page = journal.read(&RequestFilter {
                since: Some(*since),
                ..RequestFilter::default()
            });
            seen.extend(page.entries.iter().map(|e| e.seq));
            *since = seen.last().copied().unwrap_or(*since);
        };
        while writers.iter().any(|w| !w.is_finished()) {
            read_since(&mut since);
        }
        read_since(&mut since);
        for writer in writers {
            writer.join().unwrap();
        }
        let expected: Vec<u64> = (1..=WRITERS * EACH).collect();
        assert_eq!(seen, expected, "each seq seen once, in order");
    }

    #[test]
    fn removing_with_a_filter_keeps_the_rest() {
        let journal = Journal::new(3);
        for user in [7, 8, 7, 8, 9] {
            arrive(&journal, FaultRoute::Like, 42, Some(user));
        }
        // Two were dropped past the capacity: 3, 4 and 5 are kept.
        let by_user = |user| RequestFilter {
            user: Some(UserId::new(user).unwrap()),
            ..RequestFilter::default()
        };
        assert_eq!(journal.remove(&by_user(8)), 1);
        assert_eq!(journal.remove(&by_user(8)), 0);
        let page = journal.read(&RequestFilter::default());
        let left: Vec<(u64, Option<UserId>)> =
            page.entries.iter().map(|e| (e.seq, e.user)).collect();
        assert_eq!(
            left,
            [(3, UserId::new(7).ok()), (5, UserId::new(9).ok())],
            "only user 8's entry went"
        );
        assert_eq!(
            page.dropped, 2,
            "a filtered removal keeps the count dropped"
        );
        let by_id = RequestFilter {
            request_id: Some("req-5".into()),
            ..RequestFilter::default()
        };
        assert_eq!(journal.remove(&by_id), 1);
        let seqs: Vec<u64> = journal
            .read(&RequestFilter::default())
            .entries
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, [3]);
    }

    /// `fault_tag=T` selects the entries a rule tagged `T` acted on (or
    /// delayed), to read and to remove: another tag's entries, and those
    /// no tagged rule touched, stay.
    #[test]
    fn filtering_by_the_rules_tag() {
        let journal = Journal::new(10);
        for (user, tag) in [(7, Some("a")), (8, Some("b")), (7, None), (7, Some("a"))] {
            let next = journal.listed().last_seq + 1;
            journal.arrive(&id(next), |seq| JournalEntry {
                fault_tag: tag.map(str::to_owned),
                fault: tag.map(|_| JournalFault::Status),
                ..entry(seq, FaultRoute::Like, 42, Some(user))
            });
        }
        let tagged = |tag: &str| RequestFilter {
            fault_tag: Some(tag.to_owned()),
            ..RequestFilter::default()
        };
        let seqs = |filter: &RequestFilter| -> Vec<u64> {
            journal.read(filter).entries.iter().map(|e| e.seq).collect()
        };
        assert_eq!(seqs(&tagged("a")), [1, 4]);
        assert_eq!(seqs(&tagged("b")), [2]);
        assert_eq!(seqs(&tagged("c")), [0_u64; 0], "a tag no entry has");
        // With another filter, both must match.
        let a_since_1 = RequestFilter {
            since: Some(1),
            ..tagged("a")
        };
        assert_eq!(seqs(&a_since_1), [4]);
        // Removing one tag's entries keeps the other's and the untagged.
        assert_eq!(journal.remove(&tagged("a")), 2);
        let left: Vec<(u64, Option<String>)> = journal
            .read(&RequestFilter::default())
            .entries
            .into_iter()
            .map(|e| (e.seq, e.fault_tag))
            .collect();
        assert_eq!(left, [(2, Some("b".to_owned())), (3, None)]);
    }

    fn id(seq: u64) -> HeaderValue {
        HeaderValue::try_from(format!("req-{seq}")).unwrap()
    }

    #[test]
    fn filters_combine() {
        let journal = Journal::new(10);
        arrive(&journal, FaultRoute::Like, 42, Some(7));
        arrive(&journal, FaultRoute::Unlike, 42, Some(7));
        arrive(&journal, FaultRoute::Like, 43, Some(8));
        arrive(&journal, FaultRoute::Likes, 42, None);
        let seqs = |query: RequestFilter| -> Vec<u64> {
            journal.read(&query).entries.iter().map(|e| e.seq).collect()
        };
        let post = Some(PostId::new(42).unwrap());
        assert_eq!(
            seqs(RequestFilter {
                post,
                ..RequestFilter::default()
            }),
            [1, 2, 4]
        );
        assert_eq!(
            seqs(RequestFilter {
                method: Some(FaultMethod::Post),
                ..RequestFilter::default()
            }),
            [1, 3]
        );
        assert_eq!(
            seqs(RequestFilter {
                route: Some(FaultRoute::Like),
                user: Some(UserId::new(7).unwrap()),
                ..RequestFilter::default()
            }),
            [1]
        );
        assert_eq!(
            seqs(RequestFilter {
                since: Some(2),
                ..RequestFilter::default()
            }),
            [3, 4]
        );
        let by_id = |request_id: &str, route| {
            seqs(RequestFilter {
                request_id: Some(request_id.to_owned()),
                route,
                ..RequestFilter::default()
            })
        };
        assert_eq!(by_id("req-3", None), [3]);
        assert_eq!(by_id("req-3", Some(FaultRoute::Unlike)), [0_u64; 0]);
        assert_eq!(by_id("req-9", None), [0_u64; 0]);
        // An in-flight update keeps the id.
        let mut update = entry(2, FaultRoute::Unlike, 42, Some(7));
        update.fault = Some(JournalFault::Latency);
        journal.update_in_flight(update);
        let read = journal.read(&RequestFilter {
            request_id: Some("req-2".into()),
            ..RequestFilter::default()
        });
        let ids: Vec<_> = read
            .entries
            .iter()
            .map(|e| (e.request_id.as_str(), e.fault))
            .collect();
        assert_eq!(ids, [("req-2", Some(JournalFault::Latency))]);
    }
}
