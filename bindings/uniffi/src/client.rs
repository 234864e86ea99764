//! [`LikeClient`], its subscriptions, and the foreign traits it calls:
//! [`LikeObserver`], [`TokenProvider`] and [`AsyncTokenProvider`], whose
//! exceptions arrive as [`CallbackError`] and go to the client's
//! [`CallbackErrorListener`] or the native standard error.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use crate::dispatch::Dispatch;
use crate::types::{core_id, foreign_id, wait_ms};
use crate::{
    CallbackDispatcher, LikeClientOptions, LikeError, Live, PostView, ScriptedServer, Stats,
};

/// Hears about a client's changes and failures (see
/// [`LikeClient::subscribe`]). Implemented in Kotlin, Swift or Python.
///
/// Calls come one at a time and in order, on whichever thread is
/// delivering: the tapping thread for a tap's own change when no other
/// delivery is under way (before the tap returns), else the thread already
/// delivering (a runtime thread, or another tapping thread), after the
/// events before it; answers, retries, rollbacks and reads likewise. Return
/// quickly: a slow observer holds up every later call. For UI code give the
/// client a [`CallbackDispatcher`] (the main thread's), and every call
/// comes where it runs them. An exception thrown here is a
/// [`CallbackError`]: LikeKit gives it to the client's
/// [`CallbackErrorListener`], or else writes it (a line, or the
/// exception's whole text with its stack trace, as the language renders
/// it) on the native standard error, and goes on with the next call.
/// Android discards that stream: give the client a listener.
#[uniffi::export(with_foreign)]
pub trait LikeObserver: Send + Sync {
    /// A post's displayed state changed (a tap, an answer, a read, a
    /// rollback): redraw it.
    ///
    /// # Errors
    ///
    /// Whatever the observer throws, as [`CallbackError`].
    fn on_change(&self, view: PostView) -> Result<(), CallbackError>;

    /// The viewer's latest like (`wanted` true) or unlike (`wanted` false)
    /// of `post_id` did not save, after any retries; the post is back at its
    /// confirmed state (an `on_change` with that state follows). Tell the
    /// viewer "your like didn't save".
    ///
    /// # Errors
    ///
    /// Whatever the observer throws, as [`CallbackError`].
    fn on_failure(&self, post_id: i64, wanted: bool, error: LikeError)
    -> Result<(), CallbackError>;
}

/// Supplies the sign-in token sent as `Authorization: Bearer <token>`.
/// Implemented in Kotlin, Swift or Python.
///
/// Asked before every request with `refresh` false; after a 401 asked once
/// more with `refresh` true (return the newest token, or null/nil/None to
/// give up: the call then fails with [`LikeError::Unauthorized`]). It is
/// called on the library's own threads, one request at a time each; a slow
/// one (a keychain read, a renewal over the network) delays only the
/// request that asked, which fails with [`LikeError::Timeout`] past its
/// request timeout, not the other requests and clients. One that throws
/// gives no token; what it threw goes to the client's
/// [`CallbackErrorListener`], or else to standard error.
#[uniffi::export(with_foreign)]
pub trait TokenProvider: Send + Sync {
    /// The token to send, or none.
    ///
    /// # Errors
    ///
    /// Whatever the provider throws, as [`CallbackError`].
    fn token(&self, refresh: bool) -> Result<Option<String>, CallbackError>;
}

/// Supplies the sign-in token asynchronously, for an app that renews it
/// over the network: Kotlin `suspend fun token(refresh: Boolean): String?`,
/// Swift `func token(refresh: Bool) async -> String?`, Python
/// `async def token(self, refresh)` (run on the event loop given to
/// `likekit.uniffi_set_event_loop`, since LikeKit asks from its own
/// threads). Implemented in Kotlin, Swift or Python; given to
/// [`LikeClient::with_async_token_provider`].
///
/// The same contract as [`TokenProvider`]: asked before each request with
/// `refresh` false, and once more with `refresh` true after a 401 (return
/// the renewed token, or null/nil/None to give up: the call then fails with
/// [`LikeError::Unauthorized`]). The request waits for the answer; the tap
/// it carries has already returned. One that throws gives no token; what
/// it threw goes to the client's [`CallbackErrorListener`], or else to
/// standard error.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait AsyncTokenProvider: Send + Sync {
    /// The token to send, or none.
    ///
    /// # Errors
    ///
    /// Whatever the provider throws, as [`CallbackError`].
    async fn token(&self, refresh: bool) -> Result<Option<String>, CallbackError>;
}

/// What a [`LikeObserver`], [`TokenProvider`] or [`AsyncTokenProvider`]
/// threw. Any exception arrives as [`Threw`](Self::Threw) (an
/// implementation may also throw this one itself). LikeKit gives it to the
/// client's [`CallbackErrorListener`] when it has one, or else writes it on
/// the native standard error (`likekit: a LikeObserver in on_change
/// threw: …`, then the exception's text, a stack trace included where the
/// language renders one), and goes on: the observer's next call comes as
/// usual; a provider that threw gives no token. Android discards that
/// stream: give the client a listener that logs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, uniffi::Error)]
pub enum CallbackError {
    /// The callback threw.
    #[error("{reason}")]
    Threw {
        /// What it threw, as text.
        reason: String,
    },
}

impl From<uniffi::UnexpectedUniFFICallbackError> for CallbackError {
    fn from(error: uniffi::UnexpectedUniFFICallbackError) -> Self {
        Self::Threw {
            reason: error.reason,
        }
    }
}

/// Hears what a client's observers and token providers throw, in place of
/// the native standard error, which Android discards: give one as the
/// client options' `callback_error_listener` to send it to the app's own
/// log or crash reporter. Implemented in Kotlin, Swift or Python.
#[uniffi::export(with_foreign)]
pub trait CallbackErrorListener: Send + Sync {
    /// `callback` threw `reason`. `callback` names the callback and, for an
    /// observer, the call: `a LikeObserver in on_change`, `a LikeObserver
    /// in on_failure`, `a TokenProvider` or `an AsyncTokenProvider`.
    /// `reason` is what it threw, as text: from Kotlin the exception's
    /// whole text with its stack trace; from Swift its description; from
    /// Python its `repr()` (`ValueError('boom')`, no traceback).
    ///
    /// Called at once, on the thread where the callback threw (the
    /// client's callback dispatcher's, for an observer given one; a
    /// LikeKit thread, for a token provider): return quickly. If it throws
    /// too, both are written on the native standard error.
    fn on_callback_error(&self, callback: String, reason: String) -> Result<(), CallbackError>;
}

/// Where a client's adapters report what a callback threw: its
/// [`CallbackErrorListener`], held weakly (the client owns it, as it owns
/// the token provider), or the native standard error.
#[derive(Clone, Default)]
struct ThrownTo {
    listener: Option<Weak<dyn CallbackErrorListener>>,
}

impl ThrownTo {
    fn new(options: &LikeClientOptions) -> Self {
        Self {
            listener: options.callback_error_listener.as_ref().map(Arc::downgrade),
        }
    }

    /// Gives what `callback` threw to the listener, or writes it on
    /// standard error when there is none (or it is gone, or it threw too).
    fn report(&self, callback: &str, error: &CallbackError) {
        if let Some(listener) = self.listener.as_ref().and_then(Weak::upgrade) {
            let heard = catch_unwind(AssertUnwindSafe(|| {
                listener.on_callback_error(callback.to_owned(), error.to_string())
            }));
            match heard {
                Ok(Ok(())) => return,
                Ok(Err(thrown)) => eprintln!("likekit: a CallbackErrorListener threw: {thrown}"),
                // Only a foreign side that breaks uniffi's contract unwinds.
                Err(_) => eprintln!("likekit: a CallbackErrorListener failed"),
            }
        }
        eprintln!("likekit: {callback} threw: {error}");
    }
}

/// A token provider's answer as the core takes it: the token, or none
/// when `what` threw (reported to `thrown`) or broke uniffi's contract
/// (the unwind caught).
fn given_token(
    answer: std::thread::Result<Result<Option<String>, CallbackError>>,
    what: &str,
    thrown: &ThrownTo,
) -> Option<String> {
    match answer {
        Ok(Ok(token)) => token,
        Ok(Err(error)) => {
            thrown.report(what, &error);
            None
        }
        Err(_) => None,
    }
}

/// A core builder for `base_url` with `options`, on the shared runtime.
fn builder(
    base_url: String,
    options: &LikeClientOptions,
) -> Result<likekit_core::LikeClientBuilder, LikeError> {
    Ok(builder_with(options)?.base_url(base_url))
}

/// A core builder with `options`, on the shared runtime, with no server yet.
fn builder_with(options: &LikeClientOptions) -> Result<likekit_core::LikeClientBuilder, LikeError> {
    let mut builder = likekit_core::LikeClient::builder()
        .retry_policy(options.retry_policy()?)
        .runtime(runtime()?);
    if let Some(timeout) = options.request_timeout()? {
        builder = builder.request_timeout(timeout);
    }
    if let Some(max_posts) = options.max_posts()? {
        builder = builder.max_posts(max_posts);
    }
    if let Some(bytes) = options.max_answer_bytes()? {
        builder = builder.max_answer_bytes(bytes);
    }
    if let Some(pem) = options.extra_root_certificates_pem() {
        builder = builder.extra_root_certificates_pem(pem);
    }
    if let Some(journal) = &options.journal {
        builder = builder.shared_journal(journal.take()?);
    }
    if let Some(age) = options.max_intent_age()? {
        builder = builder.max_intent_age(age);
    }
    if let Some(every) = options.keep_while_offline()? {
        builder = builder.keep_while_offline(every);
    }
    Ok(builder)
}

/// The one runtime every client's calls and timers run on: started with
/// the first client, stopped for good by [`stop_runtime`].
static RUNTIME: Mutex<SharedRuntime> = Mutex::new(SharedRuntime::NotStarted);

#[derive(Debug)]
enum SharedRuntime {
    NotStarted,
    /// Started in the process `pid`.
    Running {
        runtime: tokio::runtime::Runtime,
        pid: u32,
    },
    /// It could not be started: why.
    Failed(String),
    Stopped,
}

fn runtime() -> Result<tokio::runtime::Handle, LikeError> {
    let mut shared = RUNTIME.lock().unwrap_or_else(PoisonError::into_inner);
    let pid = std::process::id();
    if matches!(&*shared, SharedRuntime::Running { pid: started_in, .. } if *started_in != pid) {
        // This process is a fork (Python's `multiprocessing`, a pre-forking
        // server) of the one that started the runtime: it has the
        // runtime's memory but none of its threads, so a client made on it
        // would wait forever. Start one of this process's own. The
        // parent's is let go of without being dropped: dropping it would
        // wait for threads that are not here.
        if let SharedRuntime::Running { runtime, .. } =
            std::mem::replace(&mut *shared, SharedRuntime::NotStarted)
        {
            std::mem::forget(runtime);
        }
    }
    if matches!(*shared, SharedRuntime::NotStarted) {
        *shared = match tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("likekit-ffi")
            .enable_all()
            .build()
        {
            Ok(runtime) => SharedRuntime::Running { runtime, pid },
            Err(e) => SharedRuntime::Failed(format!("could not start the LikeKit runtime: {e}")),
        };
    }
    let message = match &*shared {
        SharedRuntime::Running { runtime, .. } => return Ok(runtime.handle().clone()),
        SharedRuntime::Failed(message) => message.clone(),
        SharedRuntime::NotStarted | SharedRuntime::Stopped => {
            "LikeKit's runtime was stopped (stop_runtime): the process is exiting".to_owned()
        }
    };
    Err(LikeError::from(likekit_core::LikeError::Config { message }))
}

/// Stops, for good, the runtime whose two threads (`likekit-ffi`) run
/// every client's calls, retries and timers, waiting up to `deadline_ms`
/// for them to end: for a process that is exiting. Calls still out are
/// abandoned (a journal keeps their taps for the next start), observers
/// hear nothing more, and a client made afterwards fails with
/// [`LikeError::Config`]. Calling it again does nothing.
///
/// The Python module calls it itself when the interpreter exits (an
/// `atexit` hook, `stop_runtime(1000)`): CPython ends a thread that calls
/// into it while it is finalizing in a way that aborts the process when
/// the thread runs Rust code, so no runtime thread may still be calling
/// an observer or a token provider by then. Kotlin and Swift have no need
/// of it.
#[uniffi::export]
pub fn stop_runtime(deadline_ms: u32) {
    let taken = std::mem::replace(
        &mut *RUNTIME.lock().unwrap_or_else(PoisonError::into_inner),
        SharedRuntime::Stopped,
    );
    if let SharedRuntime::Running { runtime, pid } = taken {
        if pid == std::process::id() {
            runtime.shutdown_timeout(Duration::from_millis(u64::from(deadline_ms)));
        } else {
            // A fork's copy of its parent's runtime, whose threads are not
            // in this process: nothing to stop, and nothing to wait for.
            std::mem::forget(runtime);
        }
    }
}

/// The LikeKit client for one signed-in viewer: taps that show at once,
/// calls that go one at a time per post and retry, and observers that hear
/// what to redraw. Use it from any thread.
///
/// Close it (Kotlin `close()`/`use`, Python `del`, or let it be collected)
/// when the viewer signs out. Closing stops it at once, as `shutdown` does
/// at its deadline: every call still out is abandoned (the server may or
/// may not have applied it), its post rolls back with `Shutdown`, and with
/// a journal its tap stays there for the next sign-in; no request goes out
/// after it, and the token provider is released on the closing thread. To
/// let calls finish first, await [`shutdown`](Self::shutdown) before
/// closing. Its `IntentJournal` is free for another client once this one
/// is closed and its abandoned calls have ended.
#[derive(uniffi::Object)]
pub struct LikeClient {
    inner: likekit_core::LikeClient,
    /// The foreign token provider, owned here so that it is released on the
    /// thread that releases the client, never on a runtime thread (where a
    /// foreign runtime may already be shutting down); the core holds a weak
    /// reference.
    _tokens: Option<Arc<dyn TokenProvider>>,
    /// The same for an asynchronous provider.
    _async_tokens: Option<Arc<dyn AsyncTokenProvider>>,
    /// The app's callback dispatcher, owned here as the token provider is,
    /// and the queue that feeds it (none: observers run on LikeKit's
    /// threads).
    _dispatcher: Option<Arc<dyn CallbackDispatcher>>,
    dispatch: Option<Arc<Dispatch>>,
    /// The app's callback error listener, owned here as the token provider
    /// is, and where the observers' adapters report to it.
    _error_listener: Option<Arc<dyn CallbackErrorListener>>,
    thrown: ThrownTo,
    /// Who holds its journal, if it was given one, and this client's
    /// taking of it: told when it is closed.
    journal: Option<(Arc<crate::journal::Hold>, u64)>,
    _live: Live,
}

/// Released without `shutdown` (Kotlin `close()`, Python `del`, Swift's
/// last reference, the garbage collector): stopped at once, before the
/// token provider goes, so that no call still out is sent on without its
/// token, failed `Unauthorized` and dropped from the journal.
impl Drop for LikeClient {
    fn drop(&mut self) {
        self.inner.stop_now();
        // Its journal goes when the abandoned calls end; a client made
        // meanwhile with it waits for that.
        if let Some((hold, ticket)) = &self.journal {
            hold.closing(*ticket);
        }
    }
}

impl LikeClient {
    fn with_parts(
        inner: likekit_core::LikeClient,
        tokens: Option<Arc<dyn TokenProvider>>,
        async_tokens: Option<Arc<dyn AsyncTokenProvider>>,
        options: &LikeClientOptions,
    ) -> Arc<Self> {
        let dispatcher = options.callback_dispatcher.clone();
        Arc::new(Self {
            inner,
            _tokens: tokens,
            _async_tokens: async_tokens,
            dispatch: dispatcher.as_ref().map(Dispatch::new),
            _dispatcher: dispatcher,
            _error_listener: options.callback_error_listener.clone(),
            thrown: ThrownTo::new(options),
            // Built: the journal's taking now is this client's own.
            journal: options.journal.as_ref().map(|journal| {
                let hold = journal.hold();
                let ticket = hold.ticket();
                (hold, ticket)
            }),
            _live: Live::new(),
        })
    }

    /// `observer` subscribed to `post_id`, hearing first the view held now
    /// when `with_view`.
    fn subscribe_to(
        &self,
        post_id: i64,
        observer: Arc<dyn LikeObserver>,
        with_view: bool,
    ) -> Result<Arc<LikeSubscription>, LikeError> {
        let post_id = core_id(post_id)?;
        let adapter = ObserverAdapter::new(&observer, self.dispatch.clone(), self.thrown.clone());
        let subscription = if with_view {
            self.inner.subscribe_with_view(post_id, Arc::new(adapter))
        } else {
            self.inner.subscribe(post_id, adapter)
        };
        Ok(LikeSubscription::new(subscription, observer))
    }
}

impl std::fmt::Debug for LikeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LikeClient")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

#[uniffi::export]
impl LikeClient {
    /// A client for the server at `base_url` (such as
    /// `https://likes.example.com`), with the viewer's token from
    /// `token_provider` (none: requests carry no token) and `options`.
    ///
    /// # Errors
    ///
    /// [`LikeError::Config`] when `base_url` is not an absolute http(s) URL,
    /// or `options.extra_root_certificates_pem` holds no usable certificate;
    /// [`LikeError::Journal`] when `options.journal` is in use by another
    /// live client.
    #[uniffi::constructor(default(token_provider = None, options))]
    pub fn new(
        base_url: String,
        token_provider: Option<Arc<dyn TokenProvider>>,
        options: LikeClientOptions,
    ) -> Result<Arc<Self>, LikeError> {
        let mut builder = builder(base_url, &options)?;
        if let Some(tokens) = &token_provider {
            builder = builder.async_token_provider(TokenAdapter {
                inner: Arc::downgrade(tokens),
                thrown: ThrownTo::new(&options),
                _live: Live::new(),
            });
        }
        Ok(Self::with_parts(
            builder.build()?,
            token_provider,
            None,
            &options,
        ))
    }

    /// A client like [`new`](Self::new)'s whose token comes from an
    /// `AsyncTokenProvider` (a suspend or async function).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    #[uniffi::constructor(default(options))]
    pub fn with_async_token_provider(
        base_url: String,
        token_provider: Arc<dyn AsyncTokenProvider>,
        options: LikeClientOptions,
    ) -> Result<Arc<Self>, LikeError> {
        let builder = builder(base_url, &options)?.async_token_provider(AsyncTokenAdapter {
            inner: Arc::downgrade(&token_provider),
            thrown: ThrownTo::new(&options),
            _live: Live::new(),
        });
        Ok(Self::with_parts(
            builder.build()?,
            None,
            Some(token_provider),
            &options,
        ))
    }

    /// A client whose calls go to `server`, a [`ScriptedServer`] the test
    /// answers by hand, with `options` (the network ones unused).
    ///
    /// # Errors
    ///
    /// [`LikeError::Config`] when the runtime could not start;
    /// [`LikeError::Journal`] when `options.journal` is in use by another
    /// live client.
    #[uniffi::constructor(default(options))]
    pub fn scripted(
        server: &ScriptedServer,
        options: LikeClientOptions,
    ) -> Result<Arc<Self>, LikeError> {
        let inner = builder_with(&options)?
            .transport(server.inner.clone())
            .build()?;
        Ok(Self::with_parts(inner, None, None, &options))
    }

    /// The viewer wants the post liked (`true`) or not (`false`). Returns
    /// the new view at once, before any I/O; the call follows in the
    /// background and observers hear how it went. After shutdown the view
    /// is unchanged and carries [`LikeError::Shutdown`].
    ///
    /// # Errors
    ///
    /// [`LikeError::InvalidId`] for a post id below 1; nothing is tapped.
    pub fn set_liked(&self, post_id: i64, liked: bool) -> Result<PostView, LikeError> {
        Ok(self.inner.set_liked(core_id(post_id)?, liked).into())
    }

    /// The viewer taps the heart: like if it shows empty, unlike if
    /// filled. Otherwise as [`set_liked`](Self::set_liked).
    ///
    /// "Shows" means as the client holds it: a post that was read
    /// ([`refresh`](Self::refresh), [`refresh_many`](Self::refresh_many))
    /// or tapped, whose [`view`](Self::view) is not none. A post it holds
    /// nothing for — not read yet (subscribed to or not), or forgotten
    /// since to stay within `maxPosts` (subscribed posts never are) —
    /// counts as not liked with a count of 0, so `toggle` likes it and
    /// returns a count of 1 whatever the server holds: keep the heart
    /// disabled until the post's first view. For a post the app renders
    /// from data of its own, call `set_liked(post_id, !shown_liked)`
    /// instead.
    ///
    /// # Errors
    ///
    /// [`LikeError::InvalidId`] for a post id below 1; nothing is tapped.
    pub fn toggle(&self, post_id: i64) -> Result<PostView, LikeError> {
        Ok(self.inner.toggle(core_id(post_id)?).into())
    }

    /// What the post shows now, or none if the client knows nothing of it
    /// yet (never read or tapped, or forgotten since): a post subscribed
    /// to but not read yet is none too, until its first read.
    ///
    /// # Errors
    ///
    /// [`LikeError::InvalidId`] for a post id below 1.
    pub fn view(&self, post_id: i64) -> Result<Option<PostView>, LikeError> {
        Ok(self.inner.view(core_id(post_id)?).map(Into::into))
    }

    /// Calls `observer` with every change of `post_id` and every failure of
    /// the viewer's tap on it, until the subscription is cancelled or
    /// dropped. A watched post is never forgotten. No event is sent for the
    /// current state: read it with [`view`](Self::view), or subscribe with
    /// [`subscribe_with_view`](Self::subscribe_with_view).
    ///
    /// # Errors
    ///
    /// [`LikeError::InvalidId`] for a post id below 1; nothing is watched.
    pub fn subscribe(
        &self,
        post_id: i64,
        observer: Arc<dyn LikeObserver>,
    ) -> Result<Arc<LikeSubscription>, LikeError> {
        self.subscribe_to(post_id, observer, false)
    }

    /// [`subscribe`](Self::subscribe), and `observer` first hears the view
    /// the client holds now as an `on_change` (nothing when it knows
    /// nothing of the post yet), in order with the changes: what it hears
    /// last is always the newest view. Reading [`view`](Self::view) after
    /// [`subscribe`](Self::subscribe) is not the same: a change made just
    /// before may still be on its way (on another thread, or held by the
    /// callback dispatcher) and arrive after the newer view read. Kotlin's
    /// `views()` and Swift's `views(postId:)` start this way.
    ///
    /// # Errors
    ///
    /// [`LikeError::InvalidId`] for a post id below 1; nothing is watched.
    pub fn subscribe_with_view(
        &self,
        post_id: i64,
        observer: Arc<dyn LikeObserver>,
    ) -> Result<Arc<LikeSubscription>, LikeError> {
        self.subscribe_to(post_id, observer, true)
    }

    /// Calls `observer` with the changes and failures of every post, until
    /// the subscription is cancelled or dropped.
    pub fn subscribe_all(&self, observer: Arc<dyn LikeObserver>) -> Arc<LikeSubscription> {
        let adapter = ObserverAdapter::new(&observer, self.dispatch.clone(), self.thrown.clone());
        LikeSubscription::new(self.inner.subscribe_all(adapter), observer)
    }

    /// The counters so far: taps, calls sent, taps coalesced away, retries,
    /// rollbacks, evictions.
    pub fn stats(&self) -> Stats {
        self.inner.stats().into()
    }

    /// Why the intent journal (`options.journal`) is not kept as it should
    /// be now: the last save failed (it is tried again at the next change,
    /// and after a delay that doubles from 0.5 s up to a minute; calls are
    /// not held back meanwhile), or the journal could not be read at start
    /// and this client keeps none. Null when all is well or there is no
    /// journal. Always a [`LikeError::Journal`].
    pub fn journal_problem(&self) -> Option<LikeError> {
        self.inner.journal_problem().map(Into::into)
    }

    /// Whether any post has a call in flight or waiting to be retried.
    pub fn has_pending_calls(&self) -> bool {
        self.inner.has_pending_calls()
    }

    /// Sends now every call waiting to be retried, for an app that knows
    /// the network is back (Android's `ConnectivityManager` callback,
    /// `NWPathMonitor` on Apple platforms): a tap kept while offline, or
    /// one in its retry backoff, does not wait out the rest of its delay.
    /// A wait the server asked for (`Retry-After`) is kept; calls still go
    /// one at a time per post. Harmless with nothing waiting.
    pub fn retry_now(&self) {
        self.inner.retry_now();
    }

    /// Whether [`shutdown`](Self::shutdown) began.
    pub fn is_shut_down(&self) -> bool {
        self.inner.is_shut_down()
    }
}

#[uniffi::export(async_runtime = "tokio")]
impl LikeClient {
    /// Reads the post from the server and returns its view. Others' likes
    /// and the friends line update; the viewer's pending tap stays on top.
    ///
    /// # Errors
    ///
    /// The read's error ([`LikeError::NotFound`] for an unknown post),
    /// [`LikeError::Shutdown`] after shutdown began, or
    /// [`LikeError::InvalidId`] for a post id below 1 (nothing is sent).
    pub async fn refresh(&self, post_id: i64) -> Result<PostView, LikeError> {
        Ok(self.inner.refresh(core_id(post_id)?).await?.into())
    }

    /// Reads a feed page in as few requests as possible and returns the
    /// views of the posts that exist, in the order asked (duplicates once).
    ///
    /// # Errors
    ///
    /// The first failed read's error; pages that did arrive are applied.
    /// [`LikeError::InvalidId`] if any id is below 1 (nothing is sent).
    pub async fn refresh_many(&self, post_ids: Vec<i64>) -> Result<Vec<PostView>, LikeError> {
        let posts = post_ids
            .into_iter()
            .map(core_id)
            .collect::<Result<Vec<_>, _>>()?;
        let views = self.inner.refresh_many(&posts).await?;
        Ok(views.into_iter().map(Into::into).collect())
    }

    /// Sends what the journal (`options.journal`) held at start: each tap
    /// still young enough shows at once as a pending view and its call goes
    /// out (a post tapped since keeps the newer tap); each older than
    /// `maxIntentAgeMs` is dropped, and observers hear one `onFailure`
    /// (`Expired`) for it. Call it once the app listens; later calls find
    /// nothing. A journal that could not be read is reported here once, in
    /// `problem` (and by [`journal_problem`](Self::journal_problem) while
    /// this client keeps none). Without a journal the report is empty.
    pub fn restore(&self) -> crate::RestoreReport {
        self.inner.restore().into()
    }

    /// Waits until no call is in flight or waiting to be retried, the
    /// observers have heard every change so far and the journal (if any)
    /// is saved — or its save failed: see
    /// [`journal_problem`](Self::journal_problem) — at most `timeout_ms`.
    /// Returns whether that happened. (Not from inside an observer: it
    /// would wait for that observer to return, and time out.)
    pub async fn wait_idle(&self, timeout_ms: i64) -> bool {
        self.inner.wait_idle(wait_ms(timeout_ms)).await
    }

    /// Shuts the client down: taps change nothing from now on and reads
    /// fail with [`LikeError::Shutdown`]. Calls already asked for — in
    /// flight, waiting to be retried, or queued behind another — go on for
    /// up to `deadline_ms`. Those still unfinished then are abandoned — the
    /// server may or may not have applied them — and their posts go back
    /// to the confirmed state in this client, with an `onFailure`
    /// ([`LikeError::Shutdown`]) each.
    ///
    /// Without a journal (`options.journal`) that is the end of those
    /// taps. With one, they stay in it: the next client for the viewer
    /// sends them again at [`restore`](Self::restore) (unless they have
    /// grown older than `maxIntentAgeMs` by then). For such a client, a
    /// `Shutdown` failure means "not saved yet", not "given up".
    ///
    /// Returns whether every call finished in time. Harmless to repeat.
    pub async fn shutdown(&self, deadline_ms: i64) -> bool {
        self.inner.shutdown(wait_ms(deadline_ms)).await
    }
}

/// A live subscription. `cancel()` it, or drop it (Kotlin `close()`), to
/// stop its observer hearing anything more (an event already being
/// delivered may still arrive).
///
/// Dropping it includes losing it: a subscription nothing refers to ends,
/// silently — in Kotlin when the garbage collector takes it, in Python at
/// once (the result of `subscribe` not assigned), in Swift when it is
/// released. Keep it, in a field of whatever listens, for as long as the
/// observer should hear.
#[derive(uniffi::Object)]
pub struct LikeSubscription {
    /// The core's subscription and the foreign observer, released together
    /// by `cancel` or with the handle (so on a foreign thread; the core
    /// holds a weak reference to the observer).
    inner: Mutex<Option<(likekit_core::Subscription, Arc<dyn LikeObserver>)>>,
    post_id: Option<i64>,
    _live: Live,
}

impl std::fmt::Debug for LikeSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LikeSubscription")
            .field("post_id", &self.post_id)
            .field("active", &self.is_active())
            .finish()
    }
}

impl LikeSubscription {
    fn new(inner: likekit_core::Subscription, observer: Arc<dyn LikeObserver>) -> Arc<Self> {
        Arc::new(Self {
            post_id: inner.post_id().map(foreign_id),
            inner: Mutex::new(Some((inner, observer))),
            _live: Live::new(),
        })
    }
}

#[uniffi::export]
impl LikeSubscription {
    /// Unsubscribes now. Harmless to repeat.
    pub fn cancel(&self) {
        let subscription = self
            .inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        // Dropped outside the lock: unsubscribing may deliver queued events.
        drop(subscription);
    }

    /// Whether it still delivers events (it was not cancelled).
    pub fn is_active(&self) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// The post watched, or none for a subscription to every post.
    pub fn post_id(&self) -> Option<i64> {
        self.post_id
    }
}

/// A foreign observer as the core sees it: a weak reference (the
/// subscription owns the observer), counted in [`live_objects`](crate::live_objects)
/// while the core holds it.
struct ObserverAdapter {
    inner: Weak<dyn LikeObserver>,
    /// The client's callback dispatcher's queue, if it has one.
    dispatch: Option<Arc<Dispatch>>,
    /// Where what the observer throws goes.
    thrown: ThrownTo,
    _live: Live,
}

impl ObserverAdapter {
    fn new(
        inner: &Arc<dyn LikeObserver>,
        dispatch: Option<Arc<Dispatch>>,
        thrown: ThrownTo,
    ) -> Self {
        Self {
            inner: Arc::downgrade(inner),
            dispatch,
            thrown,
            _live: Live::new(),
        }
    }

    /// Calls the observer (if it is still subscribed) here, or through the
    /// client's dispatcher; `method` names the call in the line written
    /// when the observer throws.
    fn call(
        &self,
        method: &'static str,
        call: impl FnOnce(&dyn LikeObserver) -> Result<(), CallbackError> + Send + 'static,
    ) {
        let observer = Weak::clone(&self.inner);
        let thrown = self.thrown.clone();
        let job = move || {
            let Some(observer) = observer.upgrade() else {
                return;
            };
            // A foreign exception is an `Err`; the unwind is caught only for
            // a foreign side that breaks uniffi's contract, and kept from
            // the delivery loop.
            if let Ok(Err(error)) = catch_unwind(AssertUnwindSafe(|| call(&*observer))) {
                thrown.report(&format!("a LikeObserver in {method}"), &error);
            }
        };
        match &self.dispatch {
            Some(dispatch) => dispatch.send(Box::new(job)),
            None => job(),
        }
    }
}

impl likekit_core::LikeObserver for ObserverAdapter {
    fn on_change(&self, view: &likekit_core::PostView) {
        let view = PostView::from(view.clone());
        self.call("on_change", move |observer| observer.on_change(view));
    }

    fn on_failure(&self, failure: &likekit_core::LikeFailure) {
        let (post_id, wanted) = (foreign_id(failure.post_id), failure.wanted);
        let error = LikeError::from(failure.error.clone());
        self.call("on_failure", move |observer| {
            observer.on_failure(post_id, wanted, error)
        });
    }
}

/// A foreign token provider as the core sees it: a weak reference (the
/// client owns the provider).
struct TokenAdapter {
    inner: Weak<dyn TokenProvider>,
    thrown: ThrownTo,
    _live: Live,
}

/// Asked on the runtime's blocking threads, and awaited as an async
/// provider is: foreign code may take its time (a keychain, a renewal over
/// the network), and then holds only the request that asked, within its
/// timeout, not a worker every client's requests share.
impl likekit_core::AsyncTokenProvider for TokenAdapter {
    fn token(&self, refresh: bool) -> likekit_core::BoxFuture<'_, Option<String>> {
        let inner = Weak::clone(&self.inner);
        let thrown = self.thrown.clone();
        Box::pin(async move {
            let asked = tokio::task::spawn_blocking(move || {
                let provider = inner.upgrade()?;
                let answer = catch_unwind(AssertUnwindSafe(|| provider.token(refresh)));
                given_token(answer, "a TokenProvider", &thrown)
            });
            // Cancelled only when the runtime stops: no token then.
            asked.await.ok().flatten()
        })
    }
}

/// An [`AsyncTokenProvider`] as the core asks for one, holding it weakly
/// (as [`TokenAdapter`]).
struct AsyncTokenAdapter {
    inner: Weak<dyn AsyncTokenProvider>,
    thrown: ThrownTo,
    _live: Live,
}

impl likekit_core::AsyncTokenProvider for AsyncTokenAdapter {
    fn token(&self, refresh: bool) -> likekit_core::BoxFuture<'_, Option<String>> {
        use futures_util::FutureExt as _;
        Box::pin(async move {
            let provider = self.inner.upgrade()?;
            let answer = AssertUnwindSafe(provider.token(refresh))
                .catch_unwind()
                .await;
            given_token(answer, "an AsyncTokenProvider", &self.thrown)
        })
    }
}
