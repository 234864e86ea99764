//! [`IntentJournal`]: where a client keeps the viewer's unconfirmed taps so
//! that they survive the app being closed, and [`RestoreReport`], what it
//! held at start.

use std::sync::Arc;

use likekit_core::JournalStore;

use crate::types::foreign_id;
use crate::{LikeError, Live, PostView};

/// The viewer's unconfirmed taps, kept across starts: give it to
/// `LikeClientOptions.journal`, then call `LikeClient.restore()` once the
/// app listens. One journal per signed-in viewer: the viewer's key (the
/// user id, say) is written in it and checked, so one viewer's taps are
/// never sent with another's token; tokens are never written.
#[derive(uniffi::Object)]
pub struct IntentJournal {
    pub(crate) store: Arc<dyn JournalStore>,
    _live: Live,
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
    /// journal lives.
    ///
    /// # Errors
    ///
    /// [`LikeError::Journal`] when the directory cannot be made or another
    /// client holds the same viewer's journal.
    #[uniffi::constructor]
    pub fn file(directory: String, viewer: String) -> Result<Arc<Self>, LikeError> {
        let store = likekit_core::FileJournal::open(directory, viewer)?;
        Ok(Arc::new(Self {
            store: Arc::new(store),
            _live: Live::new(),
        }))
    }

    /// A journal kept in memory only (lost with the process): the offline
    /// behaviour without keeping anything across starts, and tests.
    #[uniffi::constructor]
    pub fn memory(viewer: String) -> Arc<Self> {
        Arc::new(Self {
            store: Arc::new(likekit_core::MemoryJournal::new(viewer)),
            _live: Live::new(),
        })
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
    /// Why the journal could not be read, if it could not (`Journal`): the
    /// client started without it and the next save replaces it.
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
