//! What observers hear: [`LikeEvent`]s — a post's new view, or a
//! [`LikeFailure`] ("your like didn't save") — delivered to a
//! [`LikeObserver`]. The driver emits them; the client hands out the
//! subscriptions.

use std::fmt;

use crate::runtime::{SendOutsideWasm, SyncOutsideWasm};
use crate::{LikeError, PostId, PostView};

/// What an observer hears about.
///
/// ```
/// # let post = likekit_core::PostId::new(42).unwrap();
/// use likekit_core::LikeEvent;
/// # let client = likekit_core::LikeClient::builder()
/// #     .transport(likekit_core::MemoryTransport::new().with_post(post, 0)).build().unwrap();
/// let _subscription = client.subscribe(post, |event: &LikeEvent| match event {
///     LikeEvent::Changed(view) => println!("redraw {}: {}", view.post_id, view.line),
///     LikeEvent::Failed(failure) => println!("{failure}"),
/// });
/// client.toggle(post);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LikeEvent {
    /// A post's displayed state changed (a tap, an answer, a read, a
    /// rollback): redraw it.
    Changed(PostView),
    /// The viewer's latest intent for a post did not save. When this run
    /// showed that intent (a tap, or a restored intent), the post is back
    /// at its confirmed state and a [`LikeEvent::Changed`] with that state
    /// follows. An intent of an earlier run too old to restore
    /// ([`LikeError::Expired`], also in
    /// [`RestoreReport::expired`](crate::RestoreReport::expired)) was never
    /// shown: it fails alone, nothing on screen changes, and no `Changed`
    /// follows.
    Failed(LikeFailure),
}

impl LikeEvent {
    /// The post the event is about.
    ///
    /// ```
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// use likekit_core::{LikeError, LikeEvent, LikeFailure};
    /// let e = LikeEvent::Failed(LikeFailure { post_id: post, wanted: true, error: LikeError::Timeout });
    /// assert_eq!(e.post_id(), post);
    /// ```
    pub fn post_id(&self) -> PostId {
        match self {
            Self::Changed(view) => view.post_id,
            Self::Failed(failure) => failure.post_id,
        }
    }
}

/// "Your like didn't save": the viewer's latest intent for a post failed
/// for good (after any retries) and was rolled back. Its `Display` is a
/// sentence for the UI.
///
/// Two cases to know of:
///
/// * After an error that [may have applied](LikeError::may_have_applied)
///   (a timeout, a 5xx, a broken connection), the server may hold the
///   intent after all; nothing more is sent for it, and the next read of
///   the post shows what the server holds.
/// * [`LikeError::Shutdown`]: the client shut down before the call ended.
///   Without an intent journal the intent is given up. With one it stays
///   in the journal and the next client sends it again at
///   [`LikeClient::restore`](crate::LikeClient::restore): not saved *yet*.
///
/// No failure is reported when a read newer than the intent's call already
/// showed the server holding what the viewer wanted.
///
/// ```
/// # let post = likekit_core::PostId::new(42).unwrap();
/// use likekit_core::{LikeError, LikeFailure};
/// let failure = LikeFailure { post_id: post, wanted: true, error: LikeError::Timeout };
/// assert_eq!(failure.to_string(), "Your like didn't save: the request timed out");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LikeFailure {
    /// The post.
    pub post_id: PostId,
    /// What the viewer wanted: `true` for a like, `false` for an unlike.
    pub wanted: bool,
    /// Why it failed.
    pub error: LikeError,
}

impl fmt::Display for LikeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.wanted { "like" } else { "unlike" };
        write!(f, "Your {what} didn't save: {}", self.error)
    }
}

/// Hears about changes and failures (see [`LikeClient::subscribe`](crate::LikeClient::subscribe)).
///
/// Implement [`on_change`](Self::on_change) and
/// [`on_failure`](Self::on_failure), or pass a closure taking
/// `&LikeEvent`. Calls come one event at a time, in the order the events
/// happened, never under the client's lock. A tap's own change is usually
/// delivered on the tapping thread before the tap returns; when another
/// thread is delivering events at that moment (an answer arriving on one of
/// the client's runtime threads), that thread delivers it right after its
/// own. Answers, retries, rollbacks and reads arrive on the client's
/// runtime threads. Return quickly: hand the work to the UI thread. An
/// observer that panics is caught (natively; the panic hook prints it as
/// usual): the other observers still hear the event, and the client goes on.
///
/// ```
/// use likekit_core::{LikeFailure, LikeObserver, PostView};
///
/// struct Redraw;
/// impl LikeObserver for Redraw {
///     fn on_change(&self, view: &PostView) {
///         println!("{} {} {}", if view.liked { "♥" } else { "♡" }, view.count, view.line);
///     }
///     fn on_failure(&self, failure: &LikeFailure) {
///         eprintln!("{failure}");
///     }
/// }
/// # let _ = Redraw;
/// ```
pub trait LikeObserver: SendOutsideWasm + SyncOutsideWasm {
    /// A post's displayed state changed.
    fn on_change(&self, view: &PostView);

    /// The viewer's latest intent for a post did not save and was rolled
    /// back.
    fn on_failure(&self, failure: &LikeFailure);

    /// Any event; calls [`on_change`](Self::on_change) or
    /// [`on_failure`](Self::on_failure) unless overridden. The client calls
    /// this one.
    ///
    /// ```
    /// use likekit_core::{LikeEvent, LikeObserver, PostView, LikeFailure};
    /// struct Count(std::sync::atomic::AtomicUsize);
    /// impl LikeObserver for Count {
    ///     fn on_change(&self, _: &PostView) {}
    ///     fn on_failure(&self, _: &LikeFailure) {}
    ///     fn on_event(&self, _: &LikeEvent) {
    ///         self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ///     }
    /// }
    /// # let _ = Count(Default::default());
    /// ```
    fn on_event(&self, event: &LikeEvent) {
        match event {
            LikeEvent::Changed(view) => self.on_change(view),
            LikeEvent::Failed(failure) => self.on_failure(failure),
        }
    }
}

impl<F> LikeObserver for F
where
    F: Fn(&LikeEvent) + SendOutsideWasm + SyncOutsideWasm,
{
    fn on_change(&self, view: &PostView) {
        self(&LikeEvent::Changed(view.clone()));
    }

    fn on_failure(&self, failure: &LikeFailure) {
        self(&LikeEvent::Failed(failure.clone()));
    }

    fn on_event(&self, event: &LikeEvent) {
        self(event);
    }
}
