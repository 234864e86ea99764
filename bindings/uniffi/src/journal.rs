//! [`IntentJournal`]: where a client keeps the viewer's unconfirmed taps so
//! that they survive the app being closed, and [`RestoreReport`], what it
//! held at start.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use likekit_core::{Intent, JournalStore};

use crate::types::foreign_id;
use crate::{LikeError, Live, PostView};

/// The viewer's unconfirmed taps, kept across starts: give it to
/// `LikeClientOptions.journal`, then call `LikeClient.restore()` once the
/// app listens. One journal per signed-in viewer: the viewer's key (the
/// user id, say) is written in it and checked, so one viewer's taps are
/// never sent with another's token; tokens are never written.
///
/// One client at a time: a second client given a journal that a live
/// client uses is refused with `Journal`. The journal is free again once
/// that client is closed and its calls still out and retries still
/// waiting have ended: closing abandons them, and they end within moments,
/// which a client made meanwhile with the same journal waits for (up to
/// two seconds), so a sign-out followed at once by a sign-in works. The journal itself holds
/// the file's lock until it is closed (Kotlin `close()`/`use`, Swift by
/// releasing it, Python `del`).
#[derive(uniffi::Object)]
pub struct IntentJournal {
    store: Arc<dyn JournalStore>,
    /// Whether a client uses the store (set by [`take`](Self::take),
    /// cleared when that client's last reference to it goes).
    hold: Arc<Hold>,
    _live: Live,
}

/// How long [`IntentJournal::take`] waits for a closed client's abandoned
/// calls to let go of the journal.
const RELEASE_WAIT: Duration = Duration::from_secs(2);

/// Who holds a journal, and a wake-up for a client waiting to take it.
#[derive(Debug, Default)]
pub(crate) struct Hold {
    state: Mutex<Holding>,
    freed: Condvar,
}

#[derive(Debug, Default)]
struct Holding {
    holder: Holder,
    /// Which taking it is: one more with each, so that a client's word
    /// (closed, let go) is never taken as another's.
    ticket: u64,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Holder {
    #[default]
    Free,
    /// A live client.
    Client,
    /// A closed client whose abandoned calls are ending.
    Closing,
}

impl Hold {
    /// The taking that holds the journal now, for the client just built
    /// with it to name when it is closed.
    pub(crate) fn ticket(&self) -> u64 {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .ticket
    }

    /// The client of taking `ticket` was closed: its store goes when its
    /// abandoned calls have ended.
    pub(crate) fn closing(&self, ticket: u64) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.ticket == ticket && state.holder == Holder::Client {
            state.holder = Holder::Closing;
        }
    }

    /// The store of taking `ticket` is gone: the journal is free.
    fn let_go(&self, ticket: u64) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.ticket == ticket {
            state.holder = Holder::Free;
            self.freed.notify_all();
        }
    }
}

impl std::fmt::Debug for IntentJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntentJournal").finish_non_exhaustive()
    }
}

#[uniffi::export]
impl IntentJournal {
    /// The journal of `viewer` in `directory` (the app's files or
    /// application-support directory; made if missing): one file per
    /// viewer, replaced atomically on each save, and locked while this
    /// journal, or a client given it, lives.
    ///
    /// # Errors
    ///
    /// [`LikeError::Config`] when `viewer` is empty or longer than 114
    /// bytes (it names the file: the user's id fits);
    /// [`LikeError::Journal`] when the directory cannot be made or another
    /// client holds the same viewer's journal.
    #[uniffi::constructor]
    pub fn file(directory: String, viewer: String) -> Result<Arc<Self>, LikeError> {
        let store = likekit_core::FileJournal::open(directory, viewer)?;
        Ok(Self::new(Arc::new(store)))
    }

    /// A journal kept in memory only (lost with the process): the offline
    /// behaviour without keeping anything across starts, and tests.
    #[uniffi::constructor]
    pub fn memory(viewer: String) -> Arc<Self> {
        Self::new(Arc::new(likekit_core::MemoryJournal::new(viewer)))
    }
}

impl IntentJournal {
    fn new(store: Arc<dyn JournalStore>) -> Arc<Self> {
        Arc::new(Self {
            store,
            hold: Arc::default(),
            _live: Live::new(),
        })
    }

    /// The store for one client, or [`LikeError::Journal`] while another
    /// client's driver still holds it (two drivers would each rewrite the
    /// whole journal with their own intents only, erasing the other's).
    /// A closed client's is waited for, up to [`RELEASE_WAIT`]: its
    /// abandoned calls are ending.
    pub(crate) fn take(&self) -> Result<Arc<dyn JournalStore>, LikeError> {
        self.take_within(RELEASE_WAIT)
    }

    fn take_within(&self, wait: Duration) -> Result<Arc<dyn JournalStore>, LikeError> {
        let state = self
            .hold
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (mut state, _) = self
            .hold
            .freed
            .wait_timeout_while(state, wait, |state| state.holder == Holder::Closing)
            .unwrap_or_else(PoisonError::into_inner);
        let message = match state.holder {
            Holder::Free => {
                state.holder = Holder::Client;
                state.ticket += 1;
                return Ok(Arc::new(Taken {
                    store: Arc::clone(&self.store),
                    hold: Arc::clone(&self.hold),
                    ticket: state.ticket,
                }));
            }
            Holder::Client => "this journal is in use by another client: close that client first",
            Holder::Closing => {
                "this journal is still held by a closed client whose calls have not ended \
                 (a token provider or a request that does not return): await its shutdown \
                 before closing it"
            }
        };
        Err(likekit_core::LikeError::Journal {
            fault: likekit_core::JournalFault::InUse,
            message: message.to_owned(),
        }
        .into())
    }

    /// Who holds the journal, for the client that took it to say when it
    /// is closed.
    pub(crate) fn hold(&self) -> Arc<Hold> {
        Arc::clone(&self.hold)
    }
}

/// The journal's store as one client holds it: frees the journal for
/// another client when the last reference goes (the client closed and its
/// calls ended, or the client was never built).
struct Taken {
    store: Arc<dyn JournalStore>,
    hold: Arc<Hold>,
    ticket: u64,
}

impl JournalStore for Taken {
    fn load(&self) -> Result<Vec<Intent>, likekit_core::LikeError> {
        self.store.load()
    }

    fn save(&self, intents: &[Intent]) -> Result<(), likekit_core::LikeError> {
        self.store.save(intents)
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        self.hold.let_go(self.ticket);
    }
}

/// A tap from an earlier run dropped as too old: the post, what the viewer
/// wanted, and why (`Expired`).
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct ExpiredTap {
    /// The post.
    pub post_id: i64,
    /// `true`: the like did not save; `false`: the unlike.
    pub wanted: bool,
    /// Why.
    pub error: LikeError,
}

/// What the journal held at start (see `LikeClient.restore()`).
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct RestoreReport {
    /// The posts restored, each showing its tap, pending; their calls are
    /// on their way.
    pub restored: Vec<PostView>,
    /// The taps too old to send (older than `maxIntentAgeMs`): each was
    /// dropped, and observers heard one `onFailure` with `Expired`.
    pub expired: Vec<ExpiredTap>,
    /// Why the journal could not be read, if it could not (`Journal`); the
    /// client started without what it held. A journal whose content is
    /// unusable (damaged, another viewer's, a newer format: code
    /// `journal_damaged`) is replaced by the next save. One that could not
    /// be read at all (an I/O failure, a permission refused: code
    /// `journal_unreadable`) is left untouched for a later start, and this
    /// client keeps no journal: its taps are not written down
    /// (`LikeClient.journalProblem()` keeps saying so).
    pub problem: Option<LikeError>,
}

impl From<likekit_core::RestoreReport> for RestoreReport {
    fn from(report: likekit_core::RestoreReport) -> Self {
        Self {
            restored: report.restored.into_iter().map(Into::into).collect(),
            expired: report
                .expired
                .into_iter()
                .map(|f| ExpiredTap {
                    post_id: foreign_id(f.post_id),
                    wanted: f.wanted,
                    error: f.error.into(),
                })
                .collect(),
            problem: report.problem.map(Into::into),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn one_client_at_a_time_and_free_once_it_lets_go() {
        let journal = IntentJournal::memory("ana".into());
        let first = journal.take().unwrap();
        let Err(again) = journal.take() else {
            panic!("a second client took the journal");
        };
        assert!(matches!(again, LikeError::Journal { .. }), "{again:?}");
        assert!(again.to_string().contains("in use"), "{again}");
        assert!(
            matches!(&again, LikeError::Journal { code, .. } if code == "journal_in_use"),
            "{again:?}"
        );
        first.save(&[]).unwrap();
        drop(first);
        let second = journal.take().unwrap();
        assert!(second.load().unwrap().is_empty());
    }

    #[test]
    fn a_closed_clients_journal_is_waited_for_until_its_calls_let_go() {
        let journal = IntentJournal::memory("ana".into());
        let first = journal.take().unwrap();
        let first_ticket = journal.hold().ticket();
        journal.hold().closing(first_ticket);
        // The closed client's last call lets go a little later, on another
        // thread: the next client waits for it rather than fail.
        let releasing = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            drop(first);
        });
        let second = journal.take_within(Duration::from_secs(60)).unwrap();
        releasing.join().unwrap();
        // A live client's journal is refused at once, not waited for.
        let Err(held) = journal.take_within(Duration::from_secs(60)) else {
            panic!("a live client's journal was taken");
        };
        assert!(
            held.to_string().contains("close that client first"),
            "{held}"
        );
        // The first client's word no longer counts: the second holds it.
        journal.hold().closing(first_ticket);
        assert!(journal.take_within(Duration::ZERO).is_err());
        // A closed client's that never lets go is refused after the wait,
        // saying why.
        journal.hold().closing(journal.hold().ticket());
        let Err(stuck) = journal.take_within(Duration::from_millis(1)) else {
            panic!("a closing client's journal was taken");
        };
        assert!(
            stuck.to_string().contains("calls have not ended"),
            "{stuck}"
        );
        drop(second);
        assert!(journal.take_within(Duration::ZERO).is_ok());
    }
}
