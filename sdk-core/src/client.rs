//! The public client: [`LikeClient`], its builder, observers and
//! subscriptions.

use std::fmt;
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::driver::{Driver, Journal, RestoreReport, SubscriptionId};
use crate::events::LikeObserver;
use crate::journal::JournalStore;
use crate::runtime::Executor;
use crate::transport::{
    AsyncTokenProvider, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_REQUEST_TIMEOUT, HttpTransport,
    TokenProvider, Transport,
};
use crate::{LikeError, Machine, MachineConfig, PostId, PostView, RetryPolicy, Stats};

/// The LikeKit client for one signed-in viewer: taps that show at once,
/// calls that go one at a time per post and retry, and the events that tell
/// the UI what to redraw.
///
/// Cheap to clone (clones share one client), `Send` and `Sync`: use it from
/// any thread. Taps ([`set_liked`](Self::set_liked),
/// [`toggle`](Self::toggle)) are synchronous and return the new view before
/// any I/O; the calls run in the background on the client's runtime (see
/// [`LikeClientBuilder::runtime`]). Work already asked for goes on when the
/// last clone is dropped; use [`shutdown`](Self::shutdown) to wait for it.
///
/// ```
/// use likekit_core::{LikeClient, MemoryTransport};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), likekit_core::LikeError> {
/// let post = likekit_core::PostId::new(42)?; // ids are checked once, here
/// // In an app: LikeClient::builder().base_url("https://…").token_provider(…)
/// let server = MemoryTransport::new().with_post(post, 1203);
/// let client = LikeClient::builder().transport(server).build()?;
///
/// let view = client.refresh(post).await?;
/// assert_eq!(view.line.to_string(), "1,203 likes");
///
/// let view = client.toggle(post); // instant
/// assert!(view.liked && view.pending);
/// assert_eq!(view.line.to_string(), "Liked by you and 1,203 others");
///
/// assert!(client.wait_idle(std::time::Duration::from_secs(5)).await);
/// assert!(!client.view(post).unwrap().pending); // the server confirmed it
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct LikeClient {
    driver: Arc<Driver>,
}

impl fmt::Debug for LikeClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LikeClient")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl LikeClient {
    /// Starts building a client.
    ///
    /// ```
    /// let client = likekit_core::LikeClient::builder()
    ///     .base_url("http://127.0.0.1:8080")
    ///     .token_provider(likekit_core::StaticToken::new("token"))
    ///     .build();
    /// assert!(client.is_ok());
    /// ```
    pub fn builder() -> LikeClientBuilder {
        LikeClientBuilder::default()
    }

    /// The viewer wants the post liked (`true`) or not (`false`). Returns
    /// the new view at once, before any I/O; the call follows in the
    /// background (or none, when the server is known to have that state
    /// already), and observers hear of the change. On a post this client
    /// has not read, the call is always sent: an app showing the post from
    /// data of its own may unlike one liked in another session.
    ///
    /// After [`shutdown`](Self::shutdown) began nothing changes: the view
    /// returned is the current one with `error` set to
    /// [`LikeError::Shutdown`].
    ///
    /// ```
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new().with_post(post, 0)).build().unwrap();
    /// let view = client.set_liked(post, true);
    /// assert!(view.liked);
    /// assert_eq!(view.count, 1);
    /// assert!(view.pending); // on its way
    /// ```
    pub fn set_liked(&self, post: PostId, liked: bool) -> PostView {
        self.driver.tap(post, Some(liked))
    }

    /// The viewer taps the heart: like if it shows empty, unlike if filled.
    /// Only the wanted *state* goes on the wire. Otherwise as
    /// [`set_liked`](Self::set_liked).
    ///
    /// "Shows" means as the client tracks it: a post that was read
    /// ([`refresh`](Self::refresh), [`refresh_many`](Self::refresh_many)),
    /// tapped or [subscribed to](Self::subscribe). A post the client does
    /// not track — never read, or forgotten since to stay within
    /// [`max_posts`](LikeClientBuilder::max_posts) (subscribed posts never
    /// are) — counts as not liked, so `toggle` likes it. For a post the app
    /// renders from data of its own without subscribing, call
    /// `set_liked(post, !shown_liked)` instead.
    ///
    /// ```
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new().with_post(post, 0)).build().unwrap();
    /// assert!(client.toggle(post).liked);
    /// assert!(!client.toggle(post).liked);
    /// ```
    pub fn toggle(&self, post: PostId) -> PostView {
        self.driver.tap(post, None)
    }

    /// What the post shows now, or `None` if the client knows nothing of it
    /// yet: never read or tapped (or evicted since). A post someone
    /// [`subscribe`](Self::subscribe)s to before its first read is `None`
    /// too, not a made-up count of 0; its first read is always heard as a
    /// [`LikeEvent::Changed`](crate::LikeEvent::Changed), even when it holds no like.
    ///
    /// ```
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new().with_post(post, 0)).build().unwrap();
    /// assert_eq!(client.view(post), None);
    /// client.set_liked(post, true);
    /// assert!(client.view(post).unwrap().liked);
    /// ```
    pub fn view(&self, post: PostId) -> Option<PostView> {
        self.driver.view(post)
    }

    /// Reads the post from the server (`GET /posts/{post}/likes`) and
    /// returns its view. The read updates others' likes and the friends
    /// line; the viewer's pending tap stays on top of it, and a read older
    /// than what the client holds is ignored.
    ///
    /// The read runs on the client's runtime, so the future may be awaited
    /// anywhere.
    ///
    /// # Errors
    ///
    /// The read's [`LikeError`] (nothing changes then), or
    /// [`LikeError::Shutdown`] after shutdown began.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// # let post_999 = likekit_core::PostId::new(999).unwrap();
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new().with_post(post, 7)).build().unwrap();
    /// let view = client.refresh(post).await.unwrap();
    /// assert_eq!(view.count, 7);
    /// assert!(client.refresh(post_999).await.unwrap_err().code() == "post_not_found");
    /// # }
    /// ```
    pub async fn refresh(&self, post: PostId) -> Result<PostView, LikeError> {
        self.driver.refresh(post).await
    }

    /// Reads a feed page in as few reads as possible (one
    /// `GET /likes?posts=…` per [`MAX_BATCH_POSTS`](crate::wire::MAX_BATCH_POSTS)
    /// posts, at most four out at once: a browser opens about six
    /// connections to a server, and a read waiting in its queue would spend
    /// its request timeout there) and returns the views of the posts that
    /// exist, in the order asked (duplicates once).
    ///
    /// # Errors
    ///
    /// The first failed read's [`LikeError`]; pages that did arrive are
    /// applied even so.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let post_1 = likekit_core::PostId::new(1).unwrap();
    /// # let post_2 = likekit_core::PostId::new(2).unwrap();
    /// # let post_404 = likekit_core::PostId::new(404).unwrap();
    /// # let client = likekit_core::LikeClient::builder().transport(
    /// #     likekit_core::MemoryTransport::new().with_post(post_1, 10).with_post(post_2, 20)).build().unwrap();
    /// let views = client.refresh_many(&[post_1, post_2, post_404]).await.unwrap();
    /// let counts: Vec<u64> = views.iter().map(|v| v.count).collect();
    /// assert_eq!(counts, [10, 20]); // post 404 does not exist
    /// # }
    /// ```
    pub async fn refresh_many(&self, posts: &[PostId]) -> Result<Vec<PostView>, LikeError> {
        self.driver.refresh_many(posts).await
    }

    /// Calls `observer` with every change of `post` and every failure of
    /// the viewer's intent for it, until the returned [`Subscription`] is
    /// dropped. A watched post is never evicted from the cache.
    ///
    /// There is no event for the current state: read it with
    /// [`view`](Self::view), or subscribe with
    /// [`subscribe_with_view`](Self::subscribe_with_view), which delivers it
    /// first. Observers are called outside the client's lock, one event at
    /// a time, in order; they may call the client.
    ///
    /// ```
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// use std::sync::{Arc, Mutex};
    /// use likekit_core::LikeEvent;
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new().with_post(post, 0)).build().unwrap();
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&seen);
    /// let subscription = client.subscribe(post, move |event: &LikeEvent| {
    ///     if let LikeEvent::Changed(view) = event {
    ///         log.lock().unwrap().push(view.liked);
    ///     }
    /// });
    /// client.set_liked(post, true);
    /// assert_eq!(seen.lock().unwrap().first(), Some(&true));
    /// drop(subscription); // no more events
    /// ```
    pub fn subscribe(&self, post: PostId, observer: impl LikeObserver + 'static) -> Subscription {
        self.subscribe_shared(post, Arc::new(observer))
    }

    /// [`subscribe`](Self::subscribe) with an observer shared with others.
    ///
    /// ```
    /// # let post_1 = likekit_core::PostId::new(1).unwrap();
    /// # let post_2 = likekit_core::PostId::new(2).unwrap();
    /// use std::sync::Arc;
    /// use likekit_core::{LikeEvent, LikeObserver};
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new()).build().unwrap();
    /// let redraw: Arc<dyn LikeObserver> = Arc::new(|_: &LikeEvent| {});
    /// let _a = client.subscribe_shared(post_1, Arc::clone(&redraw));
    /// let _b = client.subscribe_shared(post_2, redraw);
    /// ```
    pub fn subscribe_shared(&self, post: PostId, observer: Arc<dyn LikeObserver>) -> Subscription {
        self.subscribe_to(post, observer, false)
    }

    /// [`subscribe`](Self::subscribe), and `observer` hears first the view
    /// the client holds now, as a [`LikeEvent::Changed`](crate::LikeEvent::Changed) (nothing when it
    /// knows nothing of the post yet), in order with every change: what
    /// it hears last is always the newest view.
    ///
    /// Reading [`view`](Self::view) just after [`subscribe`](Self::subscribe)
    /// is not the same: a change made just before may still be on its way
    /// to the new observer (another thread is delivering it, or an app's
    /// dispatcher holds it), and would then arrive after the newer view
    /// that was read. A stream of views (Kotlin's `views()`, Swift's
    /// `views(postId:)`) starts this way.
    ///
    /// ```
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// use std::sync::{Arc, Mutex};
    /// use likekit_core::LikeEvent;
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new().with_post(post, 0)).build().unwrap();
    /// client.set_liked(post, true);
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&seen);
    /// let _subscription = client.subscribe_with_view(post, Arc::new(move |event: &LikeEvent| {
    ///     if let LikeEvent::Changed(view) = event {
    ///         log.lock().unwrap().push(view.liked);
    ///     }
    /// }));
    /// assert_eq!(seen.lock().unwrap().first(), Some(&true));
    /// ```
    pub fn subscribe_with_view(
        &self,
        post: PostId,
        observer: Arc<dyn LikeObserver>,
    ) -> Subscription {
        self.subscribe_to(post, observer, true)
    }

    fn subscribe_to(
        &self,
        post: PostId,
        observer: Arc<dyn LikeObserver>,
        first_view: bool,
    ) -> Subscription {
        let id = self.driver.subscribe(Some(post), observer, first_view);
        Subscription {
            driver: Arc::downgrade(&self.driver),
            id,
            post: Some(post),
        }
    }

    /// Calls `observer` with the changes and failures of every post, until
    /// the returned [`Subscription`] is dropped. It keeps no post from being
    /// evicted.
    ///
    /// ```
    /// use likekit_core::{LikeEvent, LikeFailure, LikeObserver, PostView};
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new()).build().unwrap();
    ///
    /// struct Toaster;
    /// impl LikeObserver for Toaster {
    ///     fn on_change(&self, _view: &PostView) {}
    ///     fn on_failure(&self, failure: &LikeFailure) {
    ///         println!("{failure}"); // "Your like didn't save: …"
    ///     }
    /// }
    /// let _subscription = client.subscribe_all(Toaster);
    /// ```
    pub fn subscribe_all(&self, observer: impl LikeObserver + 'static) -> Subscription {
        self.subscribe_all_shared(Arc::new(observer))
    }

    /// [`subscribe_all`](Self::subscribe_all) with an observer shared with
    /// others.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use likekit_core::{LikeEvent, LikeObserver};
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new()).build().unwrap();
    /// let log: Arc<dyn LikeObserver> = Arc::new(|e: &LikeEvent| println!("{e:?}"));
    /// let _subscription = client.subscribe_all_shared(log);
    /// ```
    pub fn subscribe_all_shared(&self, observer: Arc<dyn LikeObserver>) -> Subscription {
        let id = self.driver.subscribe(None, observer, false);
        Subscription {
            driver: Arc::downgrade(&self.driver),
            id,
            post: None,
        }
    }

    /// The counters so far: taps, calls sent, taps coalesced away, retries,
    /// rollbacks, evictions.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new().with_post(post, 0)).build().unwrap();
    /// client.toggle(post); // like: a call goes out
    /// client.toggle(post); // unlike: waits for the like's answer…
    /// client.toggle(post); // like: …and is replaced; the call out already carries it
    /// client.wait_idle(std::time::Duration::from_secs(5)).await;
    /// let stats = client.stats();
    /// assert_eq!((stats.taps, stats.calls_sent, stats.coalesced), (3, 1, 2));
    /// assert_eq!(stats.taps, stats.intents_sent + stats.coalesced);
    /// # }
    /// ```
    pub fn stats(&self) -> Stats {
        self.driver.stats()
    }

    /// Sends what the intent journal held at start (see
    /// [`LikeClientBuilder::journal`]): each intent still young enough is
    /// shown at once as a pending view, its call on its way (one per post,
    /// as any tap; a post tapped since keeps the newer tap); each older
    /// than the `max_intent_age` is dropped, and observers hear one failure
    /// ([`LikeError::Expired`]) for it. Call it once the app listens; later
    /// calls find nothing left. Until it is called, what the journal held
    /// stays in it.
    ///
    /// A journal that could not be read is reported here once
    /// ([`RestoreReport::problem`], [`LikeError::Journal`]); the client
    /// then starts without it. A damaged one is replaced by the next save;
    /// one that could not be read at all is left untouched (see
    /// [`RestoreReport::problem`]).
    ///
    /// A tap on a post in this run, even one that changes nothing,
    /// supersedes what the journal held for it: that post is not restored.
    /// After [`shutdown`](Self::shutdown) began, nothing is restored (nor
    /// sent): what the journal held stays there for the next client.
    /// An intent stamped more than five minutes in the future (the clock
    /// was set back) counts as expired, as its age cannot be known.
    pub fn restore(&self) -> RestoreReport {
        self.driver.restore()
    }

    /// Why the intent journal is not kept as it should be now: the last
    /// save failed (it is tried again at the next change, and after a delay
    /// that doubles from 0.5 s up to a minute; calls are not held back
    /// meanwhile), or the journal could not be read at start and this
    /// client keeps none. `None` when all is well or there is no journal.
    ///
    /// ```
    /// let client = likekit_core::LikeClient::builder()
    ///     .transport(likekit_core::MemoryTransport::new())
    ///     .journal(likekit_core::MemoryJournal::new("ana"))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(client.journal_problem(), None);
    /// ```
    pub fn journal_problem(&self) -> Option<LikeError> {
        self.driver.journal_problem()
    }

    /// Sends now every call waiting to be retried: for an app that knows
    /// the network is back (the browser's `online` event, Android's
    /// `ConnectivityManager` callback, `NWPathMonitor` on Apple
    /// platforms), so that a tap kept while offline, or one in its retry
    /// backoff, does not wait out the rest of its delay. A call still out
    /// counts too: if it fails, its retry goes out at once. A wait the
    /// server asked for (`Retry-After`) is kept. Calls still go one at a
    /// time per post, and a retry sent now counts as one of its retries.
    /// Harmless with nothing waiting, and after shutdown.
    ///
    /// ```
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new().with_post(post, 0)).build().unwrap();
    /// // The network came back:
    /// client.retry_now();
    /// ```
    pub fn retry_now(&self) {
        self.driver.retry_now();
    }

    /// Whether any post has a call in flight or waiting to be retried.
    ///
    /// ```
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new().with_post(post, 0)).build().unwrap();
    /// assert!(!client.has_pending_calls());
    /// ```
    pub fn has_pending_calls(&self) -> bool {
        self.driver.has_pending_calls()
    }

    /// Waits until no call is in flight or waiting to be retried (every tap
    /// so far has been confirmed or rolled back), the observers have
    /// heard every event so far and the intent journal (if any) is saved
    /// — or its save failed: see [`journal_problem`](Self::journal_problem)
    /// — at most `timeout`. Returns whether that
    /// happened. New taps may start new calls meanwhile. (Awaited from
    /// inside an observer, it waits for that observer's own delivery to
    /// end, so it times out: observers should not wait for idle.)
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new().with_post(post, 0)).build().unwrap();
    /// client.set_liked(post, true);
    /// assert!(client.wait_idle(std::time::Duration::from_secs(5)).await);
    /// assert_eq!(client.view(post).unwrap().count, 1);
    /// # }
    /// ```
    pub async fn wait_idle(&self, timeout: Duration) -> bool {
        self.driver.wait_idle(timeout).await
    }

    /// Shuts the client down: from now on taps change nothing (their view
    /// carries [`LikeError::Shutdown`]) and reads fail with it. Calls
    /// already asked for — in flight, waiting to be retried, or queued
    /// behind another — go on for up to `deadline`. Those still unfinished
    /// then are abandoned — the server may or may not have applied them —
    /// and their posts go back to the confirmed state in this client, with
    /// a failure event ([`LikeError::Shutdown`]) each.
    ///
    /// Without a [journal](LikeClientBuilder::journal) that is the end of
    /// those intents. With one, they stay in it: the next client for the
    /// viewer sends them again at [`restore`](Self::restore) (unless they
    /// have grown too old by then). For such a client, a `Shutdown` failure
    /// means "not saved yet", not "given up".
    ///
    /// Shutdown begins at the call, before the returned future is first
    /// awaited: a tap or [`restore`](Self::restore) made after it sends
    /// nothing. It runs on the client's own executor, so the deadline holds
    /// even when the caller stops awaiting the future (a cancelled
    /// coroutine, a dropped future): the calls still out then are abandoned
    /// at it all the same. Returns `true` when every call finished within
    /// the deadline. Calling it again is harmless.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new().with_post(post, 0)).build().unwrap();
    /// use std::time::Duration;
    /// client.set_liked(post, true);
    /// assert!(client.shutdown(Duration::from_secs(2)).await);
    /// assert!(client.view(post).unwrap().liked); // it was saved
    /// let late = client.set_liked(post, false);
    /// assert!(late.liked);
    /// assert_eq!(late.error, Some(likekit_core::LikeError::Shutdown));
    /// # }
    /// ```
    pub fn shutdown(&self, deadline: Duration) -> impl Future<Output = bool> + 'static {
        // At the call, not at the first poll: a tap or a restore made
        // between the two (a promise's next microtask, on the web) would
        // still be sent. And on the client's executor, not in the future
        // returned: the deadline holds even when the caller stops awaiting
        // it (a cancelled coroutine, a dropped future).
        let answer = self.driver.shut_down(deadline);
        let driver = Arc::clone(&self.driver);
        async move {
            match answer.await {
                Ok(clean) => clean,
                // The executor is gone (its runtime stopped): stop here.
                Err(_) => {
                    driver.stop();
                    !driver.has_pending_calls()
                }
            }
        }
    }

    /// Stops at once, as [`shutdown`](Self::shutdown) does at its
    /// deadline, without waiting: no tap or read is taken from now on, and
    /// every call still out (in flight, waiting to be retried, or queued) is
    /// abandoned — the server may or may not have applied it — its post
    /// going back to the confirmed state with a [`LikeError::Shutdown`]
    /// failure, and with a journal its tap staying there for the next
    /// client of the viewer. No request goes out after it. What a binding
    /// does when the app releases its client without `shutdown`, so that a
    /// release never sends a call without its token nor drops a journaled
    /// tap.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use likekit_core::{LikeClient, LikeError, PostId, ScriptedServer};
    /// let post = PostId::new(42).unwrap();
    /// let server = ScriptedServer::new();
    /// let client = LikeClient::builder().transport(server.clone()).build().unwrap();
    /// client.set_liked(post, true);
    /// let _call = server.next_call().await; // the call is out, unanswered
    /// client.stop_now();
    /// assert!(client.is_shut_down());
    /// assert!(client.wait_idle(std::time::Duration::from_secs(1)).await);
    /// let view = client.view(post).unwrap();
    /// assert!(!view.liked && !view.pending); // abandoned, rolled back
    /// assert_eq!(client.set_liked(post, true).error, Some(LikeError::Shutdown));
    /// # }
    /// ```
    pub fn stop_now(&self) {
        self.driver.close();
        self.driver.stop();
    }

    /// Whether [`shutdown`](Self::shutdown) began.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let client = likekit_core::LikeClient::builder()
    /// #     .transport(likekit_core::MemoryTransport::new()).build().unwrap();
    /// assert!(!client.is_shut_down());
    /// client.shutdown(std::time::Duration::from_secs(1)).await;
    /// assert!(client.is_shut_down());
    /// # }
    /// ```
    pub fn is_shut_down(&self) -> bool {
        self.driver.is_closed()
    }
}

/// Builds a [`LikeClient`].
///
/// ```
/// use std::time::Duration;
/// use likekit_core::{LikeClient, RetryPolicy, StaticToken};
///
/// let client = LikeClient::builder()
///     .base_url("https://likes.example.com")
///     .token_provider(StaticToken::new("token"))
///     .retry_policy(RetryPolicy { max_retries: 2, ..RetryPolicy::default() })
///     .request_timeout(Duration::from_secs(5))
///     .max_answer_bytes(4 << 20)
///     .max_posts(2_000)
///     .build()
///     .unwrap();
/// # drop(client);
/// ```
pub struct LikeClientBuilder {
    base_url: Option<String>,
    tokens: Option<Arc<dyn TokenProvider>>,
    async_tokens: Option<Arc<dyn AsyncTokenProvider>>,
    transport: Option<Arc<dyn Transport>>,
    config: MachineConfig,
    request_timeout: Duration,
    max_answer_bytes: usize,
    /// Every PEM given to `extra_root_certificates_pem`, one after the
    /// other; `None` when it was never called.
    #[cfg(not(target_arch = "wasm32"))]
    extra_roots_pem: Option<Vec<u8>>,
    #[cfg(not(target_arch = "wasm32"))]
    runtime: Option<tokio::runtime::Handle>,
    journal: Option<Arc<dyn JournalStore>>,
    max_intent_age: Duration,
}

/// How old an intent may grow before it is dropped instead of sent: one
/// day. Long enough for a phone left off overnight or a long flight; short
/// enough that the viewer still remembers the tap when it lands. A like
/// replayed a week later, on a post long scrolled past, would surprise.
pub const DEFAULT_MAX_INTENT_AGE: Duration = Duration::from_secs(24 * 60 * 60);

impl Default for LikeClientBuilder {
    fn default() -> Self {
        Self {
            base_url: None,
            tokens: None,
            async_tokens: None,
            transport: None,
            config: MachineConfig::default(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            #[cfg(not(target_arch = "wasm32"))]
            extra_roots_pem: None,
            #[cfg(not(target_arch = "wasm32"))]
            runtime: None,
            journal: None,
            max_intent_age: DEFAULT_MAX_INTENT_AGE,
        }
    }
}

impl fmt::Debug for LikeClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LikeClientBuilder")
            .field("base_url", &self.base_url)
            .field("config", &self.config)
            .field("request_timeout", &self.request_timeout)
            .field("max_answer_bytes", &self.max_answer_bytes)
            .finish_non_exhaustive()
    }
}

impl LikeClientBuilder {
    /// The server, such as `https://likes.example.com` or
    /// `http://127.0.0.1:8080/api` (the routes go under it).
    ///
    /// ```
    /// let err = likekit_core::LikeClient::builder().base_url("not a url").build().unwrap_err();
    /// assert_eq!(err.code(), "config");
    /// ```
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Where the sign-in token comes from (see [`TokenProvider`]). Without
    /// one, requests carry no token.
    ///
    /// ```
    /// let client = likekit_core::LikeClient::builder()
    ///     .base_url("http://127.0.0.1:8080")
    ///     .token_provider(|_refresh: bool| Some("token".to_string()))
    ///     .build();
    /// # client.unwrap();
    /// ```
    pub fn token_provider(self, tokens: impl TokenProvider + 'static) -> Self {
        self.shared_token_provider(Arc::new(tokens))
    }

    /// [`token_provider`](Self::token_provider) with a provider shared
    /// with others.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use likekit_core::{StaticToken, TokenProvider};
    /// let tokens: Arc<dyn TokenProvider> = Arc::new(StaticToken::new("token"));
    /// let client = likekit_core::LikeClient::builder()
    ///     .base_url("http://127.0.0.1:8080")
    ///     .shared_token_provider(tokens)
    ///     .build();
    /// # client.unwrap();
    /// ```
    pub fn shared_token_provider(mut self, tokens: Arc<dyn TokenProvider>) -> Self {
        self.tokens = Some(tokens);
        self.async_tokens = None;
        self
    }

    /// Where the sign-in token comes from, awaited (see
    /// [`AsyncTokenProvider`]): for a provider that renews the token over
    /// the network. Replaces a [`token_provider`](Self::token_provider)
    /// given before, as that one replaces this.
    pub fn async_token_provider(self, tokens: impl AsyncTokenProvider + 'static) -> Self {
        self.shared_async_token_provider(Arc::new(tokens))
    }

    /// [`async_token_provider`](Self::async_token_provider) with a provider
    /// shared with others.
    pub fn shared_async_token_provider(mut self, tokens: Arc<dyn AsyncTokenProvider>) -> Self {
        self.async_tokens = Some(tokens);
        self.tokens = None;
        self
    }

    /// How failed calls are retried (default: [`RetryPolicy::default`]).
    ///
    /// ```
    /// use likekit_core::RetryPolicy;
    /// let fast = RetryPolicy { min_delay: std::time::Duration::from_millis(10), ..RetryPolicy::default() };
    /// # let _ = likekit_core::LikeClient::builder().retry_policy(fast);
    /// ```
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.config.retry = policy;
        self
    }

    /// How long one request may take, from opening the connection to the
    /// answer's last byte (default 10 s). A
    /// request that takes longer fails with [`LikeError::Timeout`] and is
    /// retried.
    ///
    /// ```
    /// # let _ = likekit_core::LikeClient::builder().request_timeout(std::time::Duration::from_secs(3));
    /// ```
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// The most bytes of an answer's body the client reads (default
    /// [`DEFAULT_MAX_ANSWER_BYTES`], 16 MiB: above the largest answer the
    /// server can give; its documentation has the sums). A longer
    /// answer fails the call with [`LikeError::InvalidResponse`] ("answer
    /// larger than … bytes"); a like or unlike is then retried, as after
    /// any unreadable answer. The client stops reading as soon as an
    /// answer passes the cap, natively and on the web alike, so a hostile
    /// or broken server cannot make it allocate without bound (see
    /// [`HttpTransport::with_max_answer_bytes`]).
    ///
    /// ```
    /// # let _ = likekit_core::LikeClient::builder().max_answer_bytes(4 << 20);
    /// ```
    pub fn max_answer_bytes(mut self, bytes: usize) -> Self {
        self.max_answer_bytes = bytes;
        self
    }

    /// Also trusts the root certificates in `pem` for `https` base URLs:
    /// one or more `-----BEGIN CERTIFICATE-----` blocks (text and other
    /// blocks around them are ignored), such as the certificate of a
    /// company's private CA or of a test CA. Give the CA that signed the
    /// server's certificate, not the server's own. The roots are added to
    /// the platform's, never instead of them; calling this again adds
    /// more. How each platform trusts certificates: "TLS" on
    /// [`HttpTransport`](crate::HttpTransport#tls).
    ///
    /// The PEM is read by [`build`](Self::build), which fails with
    /// [`LikeError::Config`] if it holds no certificate, is not readable
    /// PEM, or holds a certificate that cannot be a trust anchor. Not on
    /// the web: there the browser decides what to trust.
    ///
    /// ```
    /// let err = likekit_core::LikeClient::builder()
    ///     .base_url("https://likes.internal.example")
    ///     .extra_root_certificates_pem("-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n")
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(err.code(), "config");
    /// assert!(err.to_string().starts_with("invalid configuration: extra root certificates: unreadable PEM"), "{err}");
    /// ```
    #[cfg(not(target_arch = "wasm32"))]
    pub fn extra_root_certificates_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        let all = self.extra_roots_pem.get_or_insert_with(Vec::new);
        all.extend_from_slice(pem.as_ref());
        all.push(b'\n');
        self
    }

    /// How many posts the client keeps before it forgets idle ones, least
    /// recently used first (default 10,000). Watched posts and posts with
    /// pending work are always kept.
    ///
    /// ```
    /// # let _ = likekit_core::LikeClient::builder().max_posts(500);
    /// ```
    pub fn max_posts(mut self, max_posts: usize) -> Self {
        self.config.max_posts = max_posts;
        self
    }

    /// Keeps the viewer's unconfirmed taps in `journal`, so that they
    /// survive the app being closed: each is written before its call goes
    /// out (the tap still returns at once) and dropped once the server
    /// confirms it or it fails for good. The journal is read when the
    /// client is built; call [`LikeClient::restore`] once the app listens
    /// to send what an earlier run left.
    ///
    /// ```
    /// let client = likekit_core::LikeClient::builder()
    ///     .transport(likekit_core::MemoryTransport::new())
    ///     .journal(likekit_core::MemoryJournal::new("ana"))
    ///     .build()
    ///     .unwrap();
    /// assert!(client.restore().restored.is_empty());
    /// ```
    pub fn journal(self, journal: impl JournalStore + 'static) -> Self {
        self.shared_journal(Arc::new(journal))
    }

    /// [`journal`](Self::journal), shared.
    pub fn shared_journal(mut self, journal: Arc<dyn JournalStore>) -> Self {
        self.journal = Some(journal);
        self
    }

    /// How old an intent may grow before it is dropped instead of sent
    /// (default [`DEFAULT_MAX_INTENT_AGE`], one day): at restore, and for
    /// an intent kept while offline. A dropped intent is one failure with
    /// [`LikeError::Expired`]. An intent stamped more than five minutes in
    /// the future (the device's clock was set back, or a bogus stamp)
    /// counts as expired too: its age cannot be known.
    pub fn max_intent_age(mut self, age: Duration) -> Self {
        self.max_intent_age = age;
        self
    }

    /// Keeps a tap pending while offline instead of rolling it back when
    /// its retries are used up on transient failures (no network, 5xx,
    /// timeouts): it is tried again every `every` until it saves, fails
    /// for good, or grows older than the [`max_intent_age`](Self::max_intent_age);
    /// meanwhile its view stays pending and carries the last error. A
    /// server's `Retry-After` stretches the wait up to the retry policy's
    /// [ceiling](RetryPolicy::retry_after_ceiling), no further. On the web
    /// a wait is at most 2^31 − 1 ms (24.8 days, the longest a JavaScript
    /// timer waits). The default rolls back, as the design's "your like
    /// didn't save" asks.
    pub fn keep_while_offline(mut self, every: Duration) -> Self {
        self.config.offline_retry = Some(every);
        self
    }

    /// Sends calls through `transport` instead of HTTP (the base URL, token
    /// provider, timeout, answer cap and extra roots are then unused): for
    /// tests, demos and apps with networking of their own.
    ///
    /// ```
    /// let client = likekit_core::LikeClient::builder()
    ///     .transport(likekit_core::MemoryTransport::new())
    ///     .build();
    /// # client.unwrap();
    /// ```
    pub fn transport(self, transport: impl Transport) -> Self {
        self.shared_transport(Arc::new(transport))
    }

    /// [`transport`](Self::transport) with a transport shared with others.
    ///
    /// ```
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// use std::sync::Arc;
    /// use likekit_core::{LikeClient, MemoryTransport};
    /// let server = Arc::new(MemoryTransport::new().with_post(post, 0));
    /// let phone = LikeClient::builder().shared_transport(server.clone()).build().unwrap();
    /// let laptop = LikeClient::builder().shared_transport(server).build().unwrap();
    /// # drop((phone, laptop));
    /// ```
    pub fn shared_transport(mut self, transport: Arc<dyn Transport>) -> Self {
        self.transport = Some(transport);
        self
    }

    /// Runs the client's calls and timers on this tokio runtime (it needs
    /// its I/O and time drivers). Without it the client uses the runtime
    /// `build` is called in, or, outside any, a runtime of its own with one
    /// worker thread.
    ///
    /// The runtime must outlive the client: once it is shut down, the
    /// client's calls are never started (a tap stays pending, `wait_idle`
    /// gives up, reads fail with [`LikeError::Shutdown`]). A client built
    /// inside a short-lived `block_on` is tied to that runtime; build it
    /// outside any runtime (it then has its own) or give it one that lives
    /// as long as it does.
    ///
    /// ```
    /// let runtime = tokio::runtime::Runtime::new().unwrap();
    /// let client = likekit_core::LikeClient::builder()
    ///     .transport(likekit_core::MemoryTransport::new())
    ///     .runtime(runtime.handle().clone())
    ///     .build();
    /// # client.unwrap();
    /// ```
    #[cfg(not(target_arch = "wasm32"))]
    pub fn runtime(mut self, handle: tokio::runtime::Handle) -> Self {
        self.runtime = Some(handle);
        self
    }

    /// Builds the client.
    ///
    /// # Errors
    ///
    /// [`LikeError::Config`] when there is neither a base URL nor a
    /// transport, the base URL is not an absolute `http(s)` URL, the
    /// [extra root certificates](Self::extra_root_certificates_pem) cannot
    /// be read, no runtime could be started, or a setting would retry in a
    /// busy loop or never end a call: a retry factor that is not a finite
    /// number above 0, a zero request timeout or a zero
    /// [`keep_while_offline`](Self::keep_while_offline) interval; or one
    /// that would make the client useless: a zero
    /// [`max_answer_bytes`](Self::max_answer_bytes) (every answer refused)
    /// or a zero [`max_posts`](Self::max_posts) (every post forgotten).
    ///
    /// ```
    /// use likekit_core::{LikeClient, RetryPolicy};
    /// use std::time::Duration;
    /// assert!(LikeClient::builder().base_url("https://likes.example.com").build().is_ok());
    /// assert_eq!(LikeClient::builder().build().unwrap_err().code(), "config");
    /// let busy = LikeClient::builder()
    ///     .base_url("https://likes.example.com")
    ///     .keep_while_offline(Duration::ZERO)
    ///     .build();
    /// assert_eq!(busy.unwrap_err().code(), "config");
    /// let never = LikeClient::builder()
    ///     .base_url("https://likes.example.com")
    ///     .retry_policy(RetryPolicy { factor: f32::NAN, ..RetryPolicy::default() })
    ///     .build();
    /// assert_eq!(never.unwrap_err().code(), "config");
    /// let nothing_kept = LikeClient::builder()
    ///     .base_url("https://likes.example.com")
    ///     .max_posts(0)
    ///     .build();
    /// assert_eq!(
    ///     nothing_kept.unwrap_err().to_string(),
    ///     "invalid configuration: max_posts and max_answer_bytes must be above 0"
    /// );
    /// let nothing_read = LikeClient::builder()
    ///     .base_url("https://likes.example.com")
    ///     .max_answer_bytes(0)
    ///     .build();
    /// assert_eq!(nothing_read.unwrap_err().code(), "config");
    /// ```
    // On wasm nothing is Send: the client lives on the one JavaScript thread.
    #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
    pub fn build(self) -> Result<LikeClient, LikeError> {
        // Settings that would retry in a busy loop, or never end a call.
        let retry = &self.config.retry;
        let refused = if !(retry.factor > 0.0 && retry.factor.is_finite()) {
            Some("the retry factor must be a finite number above 0")
        } else if self.request_timeout.is_zero() {
            Some("the request timeout must be above 0")
        } else if self
            .config
            .offline_retry
            .is_some_and(|every| every.is_zero())
        {
            Some("keep_while_offline's interval must be above 0")
        } else if self.max_answer_bytes == 0 || self.config.max_posts == 0 {
            // Every answer would be refused as too large (and every tap
            // retried and rolled back), or every post forgotten as soon as
            // it was read.
            Some("max_posts and max_answer_bytes must be above 0")
        } else {
            None
        };
        if let Some(message) = refused {
            return Err(LikeError::Config {
                message: message.into(),
            });
        }
        let transport: Arc<dyn Transport> = match (self.transport, self.base_url) {
            (Some(transport), _) => transport,
            (None, Some(url)) => {
                #[cfg(not(target_arch = "wasm32"))]
                let http = match &self.extra_roots_pem {
                    Some(pem) => HttpTransport::new_with_extra_roots(&url, pem)?,
                    None => HttpTransport::new(&url)?,
                };
                #[cfg(target_arch = "wasm32")]
                let http = HttpTransport::new(&url)?;
                let mut http = http
                    .with_timeout(self.request_timeout)
                    .with_max_answer_bytes(self.max_answer_bytes);
                if let Some(tokens) = self.tokens {
                    http = http.with_shared_token_provider(tokens);
                }
                if let Some(tokens) = self.async_tokens {
                    http = http.with_async_token_provider(tokens);
                }
                Arc::new(http)
            }
            (None, None) => {
                return Err(LikeError::Config {
                    message: "a base URL (or a transport) is needed".into(),
                });
            }
        };
        #[cfg(not(target_arch = "wasm32"))]
        let executor = match self.runtime {
            Some(handle) => Executor::from_handle(handle),
            None => Executor::current_or_new()?,
        };
        #[cfg(target_arch = "wasm32")]
        let executor = Executor::current_or_new()?;
        Ok(LikeClient {
            driver: Driver::new(
                Machine::new(self.config),
                transport,
                executor,
                Journal::open(self.journal, self.max_intent_age),
            ),
        })
    }
}

/// A live subscription; dropping it unsubscribes (an event already being
/// delivered may still arrive). It does not keep the client alive.
///
/// ```
/// # let post = likekit_core::PostId::new(42).unwrap();
/// # let client = likekit_core::LikeClient::builder()
/// #     .transport(likekit_core::MemoryTransport::new()).build().unwrap();
/// let subscription = client.subscribe(post, |_: &likekit_core::LikeEvent| {});
/// assert_eq!(subscription.post_id(), Some(post));
/// subscription.unsubscribe(); // the same as dropping it
/// ```
#[must_use = "dropping a Subscription unsubscribes at once"]
pub struct Subscription {
    driver: Weak<Driver>,
    id: SubscriptionId,
    post: Option<PostId>,
}

impl Subscription {
    /// The post watched, or `None` for every post (see the example on
    /// [`Subscription`]).
    pub fn post_id(&self) -> Option<PostId> {
        self.post
    }

    /// Unsubscribes now (see the example on [`Subscription`]).
    pub fn unsubscribe(self) {}
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .field("post", &self.post)
            .finish()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(driver) = self.driver.upgrade() {
            driver.unsubscribe(self.id, self.post);
        }
    }
}
