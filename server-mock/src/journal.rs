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
    sync::{
        Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use axum::http::HeaderValue;
use likekit_proto::admin::{Journal as JournalPage, JournalEntry, RequestFilter};

/// The default `--journal-size`.
pub const DEFAULT_JOURNAL_SIZE: usize = 10_000;

#[derive(Debug, Default)]
pub(crate) struct Journal {
    capacity: usize,
    next: AtomicU64,
    dropped: AtomicU64,
    entries: Mutex<VecDeque<Kept>>,
}

/// An entry as the journal keeps it: the request's id as the request
/// carries it (the `X-Request-Id` value, whose clone shares its bytes),
/// written into the entry's `request_id` only when the entry is read, so
/// that journaling a request makes no string for its id.
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

    /// The next entry's `seq`, taken when the request arrives so that the
    /// order is the order of arrival.
    pub(crate) fn take_seq(&self) -> u64 {
        self.next.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Records an entry of the request with id `id` (its `seq` from
    /// [`Journal::take_seq`]; its `request_id` is not read: `id` is kept in
    /// its place) or, when one with its `seq` is there (recorded at
    /// arrival, in flight), replaces it; drops the oldest past the
    /// capacity. A finished entry whose arrival was cleared or dropped
    /// meanwhile is not recorded again.
    pub(crate) fn record(&self, id: &HeaderValue, entry: JournalEntry) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let at = entries.partition_point(|e| e.entry.seq < entry.seq);
        match entries.get_mut(at) {
            Some(there) if there.entry.seq == entry.seq => there.entry = entry,
            _ if !entry.in_flight => {}
            _ => {
                let id = id.clone();
                entries.insert(at, Kept { id, entry });
                while entries.len() > self.capacity {
                    entries.pop_front();
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// Replaces the entry with `entry`'s `seq` while it is in flight (what
    /// a fault rule is doing to it); an entry cleared, dropped or finished
    /// meanwhile stays as it is.
    pub(crate) fn update_in_flight(&self, entry: JournalEntry) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let at = entries.partition_point(|e| e.entry.seq < entry.seq);
        if let Some(there) = entries.get_mut(at)
            && there.entry.seq == entry.seq
            && there.entry.in_flight
        {
            there.entry = entry;
        }
    }

    /// The entries `query` matches, oldest first.
    pub(crate) fn read(&self, query: &RequestFilter) -> JournalPage {
        // The id is compared as kept; the other filters on the entry.
        let id = query.request_id.as_deref();
        let rest = RequestFilter {
            request_id: None,
            ..query.clone()
        };
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        JournalPage {
            entries: entries
                .iter()
                .filter(|k| id.is_none_or(|id| k.id == id) && rest.matches(&k.entry))
                .map(Kept::read)
                .collect(),
            capacity: self.capacity as u64,
            dropped: self.dropped.load(Ordering::Relaxed),
        }
    }

    /// Empties the journal (`seq` goes on counting).
    pub(crate) fn clear(&self) {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.dropped.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use likekit_proto::{
        PostId, UserId,
        admin::{FaultMethod, FaultRoute},
    };

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
            fault_phase: None,
            fault: None,
            in_flight: true,
        }
    }

    #[test]
    fn keeps_arrival_order_within_its_capacity() {
        let journal = Journal::new(3);
        assert!(journal.is_on());
        let seqs: Vec<u64> = (0..5).map(|_| journal.take_seq()).collect();
        for &seq in &seqs {
            journal.record(&id(seq), entry(seq, FaultRoute::Like, 1, Some(7)));
        }
        // They finish in another order than they arrived; the first two
        // were dropped meanwhile and do not come back.
        for &seq in [3, 1, 2, 5, 4].iter() {
            let mut done = entry(seqs[seq - 1], FaultRoute::Like, 1, Some(7));
            done.in_flight = false;
            done.status = Some(200 + seq as u16);
            journal.record(&HeaderValue::from_static("unused"), done);
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
        journal.clear();
        assert!(journal.read(&RequestFilter::default()).entries.is_empty());
        assert_eq!(journal.take_seq(), 6, "seq goes on after a clear");
        assert!(!Journal::new(0).is_on());
    }

    fn id(seq: u64) -> HeaderValue {
        HeaderValue::try_from(format!("req-{seq}")).unwrap()
    }

    #[test]
    fn filters_combine() {
        let journal = Journal::new(10);
        journal.record(&id(1), entry(1, FaultRoute::Like, 42, Some(7)));
        journal.record(&id(2), entry(2, FaultRoute::Unlike, 42, Some(7)));
        journal.record(&id(3), entry(3, FaultRoute::Like, 43, Some(8)));
        journal.record(&id(4), entry(4, FaultRoute::Likes, 42, None));
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
        update.fault = Some("latency".into());
        journal.update_in_flight(update);
        let read = journal.read(&RequestFilter {
            request_id: Some("req-2".into()),
            ..RequestFilter::default()
        });
        let ids: Vec<_> = read
            .entries
            .iter()
            .map(|e| (e.request_id.as_str(), e.fault.as_deref()))
            .collect();
        assert_eq!(ids, [("req-2", Some("latency"))]);
    }
}
