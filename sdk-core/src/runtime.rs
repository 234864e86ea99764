//! The runtime shim: spawn a task and sleep, whatever runs the client.
//!
//! Natively the client runs its calls and timers on tokio: on the runtime it
//! is given or finds itself in, or, when it is built outside any runtime (a
//! UI thread behind a binding), on a small runtime of its own. On
//! `wasm32-unknown-unknown` it runs them on the browser's (or Node's) event
//! loop with `wasm-bindgen-futures` and `gloo-timers`; tokio is not used
//! there at all.
//!
//! Futures are `Send` natively, so that the client is usable from many
//! threads, and need not be on wasm, where JavaScript values are not `Send`.
//! [`SendOutsideWasm`] and [`SyncOutsideWasm`] carry that difference, so the
//! rest of the crate is written once.
//!
//! ```
//! use likekit_core::runtime::{BoxFuture, SendOutsideWasm};
//!
//! fn boxed<'a, T>(fut: impl Future<Output = T> + SendOutsideWasm + 'a) -> BoxFuture<'a, T> {
//!     Box::pin(fut)
//! }
//! let _answer: BoxFuture<'static, u32> = boxed(async { 42 });
//! ```

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use crate::LikeError;

/// `Send` natively; nothing on wasm, where futures and callbacks hold
/// JavaScript values that are not `Send`.
///
/// ```
/// fn needs_it<T: likekit_core::runtime::SendOutsideWasm>(_: T) {}
/// needs_it(42_u32); // every type that is Send natively
/// ```
#[cfg(not(target_arch = "wasm32"))]
pub trait SendOutsideWasm: Send {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Send + ?Sized> SendOutsideWasm for T {}

/// `Send` natively; nothing on wasm, where futures and callbacks hold
/// JavaScript values that are not `Send`.
#[cfg(target_arch = "wasm32")]
pub trait SendOutsideWasm {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> SendOutsideWasm for T {}

/// `Sync` natively; nothing on wasm.
///
/// ```
/// fn needs_it<T: likekit_core::runtime::SyncOutsideWasm>(_: &T) {}
/// needs_it(&std::sync::Mutex::new(0));
/// ```
#[cfg(not(target_arch = "wasm32"))]
pub trait SyncOutsideWasm: Sync {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Sync + ?Sized> SyncOutsideWasm for T {}

/// `Sync` natively; nothing on wasm.
#[cfg(target_arch = "wasm32")]
pub trait SyncOutsideWasm {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> SyncOutsideWasm for T {}

/// A boxed future, `Send` natively (not on wasm). What [`Transport`]
/// methods return.
///
/// ```
/// let answer: likekit_core::runtime::BoxFuture<'static, u8> = Box::pin(async { 7 });
/// # drop(answer);
/// ```
///
/// [`Transport`]: crate::Transport
#[cfg(not(target_arch = "wasm32"))]
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A boxed future, `Send` natively (not on wasm). What [`Transport`]
/// methods return.
///
/// [`Transport`]: crate::Transport
#[cfg(target_arch = "wasm32")]
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// Waits `delay`: tokio's timer natively, a JavaScript timer on wasm.
///
/// Natively it must be polled inside a tokio runtime with its timer enabled,
/// as every task the client spawns is. On wasm the delay is counted in
/// whole milliseconds, rounded up, and is at most [`MAX_TIMER_MS`]
/// (24.8 days, the longest a JavaScript timer waits): a longer delay waits
/// that long.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// likekit_core::runtime::sleep(std::time::Duration::from_millis(1)).await;
/// # }
/// ```
pub async fn sleep(delay: Duration) {
    #[cfg(not(target_arch = "wasm32"))]
    tokio::time::sleep(delay).await;
    #[cfg(target_arch = "wasm32")]
    gloo_timers::future::TimeoutFuture::new(timer_millis(delay)).await;
}

/// The longest a JavaScript timer waits: 2^31 − 1 ms. A longer delay
/// makes `setTimeout` fire at once.
pub const MAX_TIMER_MS: u32 = i32::MAX as u32;

/// `delay` as a JavaScript timer's: whole milliseconds, rounded up so that
/// the timer never fires early, at most [`MAX_TIMER_MS`].
///
/// ```
/// use std::time::Duration;
/// use likekit_core::runtime::{MAX_TIMER_MS, timer_millis};
/// assert_eq!(timer_millis(Duration::from_micros(1500)), 2);
/// assert_eq!(timer_millis(Duration::from_secs(100_000_000)), MAX_TIMER_MS);
/// ```
pub fn timer_millis(delay: Duration) -> u32 {
    let millis = delay
        .as_secs()
        .saturating_mul(1000)
        .saturating_add(u64::from(delay.subsec_nanos().div_ceil(1_000_000)));
    u32::try_from(millis).map_or(MAX_TIMER_MS, |ms| ms.min(MAX_TIMER_MS))
}

/// Where the client runs its calls, timers and reads.
///
/// Cheap to clone. Natively it is a tokio runtime handle, plus ownership of
/// the runtime when the executor made its own; the runtime stops when the
/// last clone (and with it the last task) is gone. On wasm it is the event
/// loop.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let executor = likekit_core::runtime::Executor::current_or_new().unwrap();
/// let (tx, rx) = std::sync::mpsc::channel();
/// executor.spawn(async move { tx.send(42).unwrap() });
/// # likekit_core::runtime::sleep(std::time::Duration::from_millis(10)).await;
/// assert_eq!(rx.recv().unwrap(), 42);
/// # }
/// ```
#[derive(Clone)]
pub struct Executor {
    #[cfg(not(target_arch = "wasm32"))]
    handle: tokio::runtime::Handle,
    #[cfg(not(target_arch = "wasm32"))]
    _owned: Option<std::sync::Arc<OwnedRuntime>>,
}

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Executor");
        #[cfg(not(target_arch = "wasm32"))]
        d.field("owns_runtime", &self._owned.is_some());
        d.finish_non_exhaustive()
    }
}

impl Executor {
    /// Natively: the tokio runtime the caller runs in, or else a runtime of
    /// the executor's own (one worker thread, named `likekit`). On wasm: the
    /// event loop.
    ///
    /// # Errors
    ///
    /// [`LikeError::Config`] when a runtime was needed and could not be
    /// started.
    ///
    /// ```
    /// // outside any runtime: the executor starts its own
    /// let executor = likekit_core::runtime::Executor::current_or_new().unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// executor.spawn(async move { tx.send("ran").unwrap() });
    /// assert_eq!(rx.recv().unwrap(), "ran");
    /// ```
    pub fn current_or_new() -> Result<Self, LikeError> {
        #[cfg(not(target_arch = "wasm32"))]
        {
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => Ok(Self::from_handle(handle)),
                Err(_) => {
                    let runtime = tokio::runtime::Builder::new_multi_thread()
                        .worker_threads(1)
                        .thread_name("likekit")
                        .enable_all()
                        .build()
                        .map_err(|e| LikeError::Config {
                            message: format!("could not start a runtime: {e}"),
                        })?;
                    Ok(Self {
                        handle: runtime.handle().clone(),
                        _owned: Some(std::sync::Arc::new(OwnedRuntime(Some(runtime)))),
                    })
                }
            }
        }
        #[cfg(target_arch = "wasm32")]
        {
            Ok(Self {})
        }
    }

    /// Runs tasks on the given tokio runtime. It must have its I/O and time
    /// drivers enabled (`enable_all`), as `#[tokio::main]` runtimes do.
    ///
    /// ```
    /// let runtime = tokio::runtime::Runtime::new().unwrap();
    /// let executor = likekit_core::runtime::Executor::from_handle(runtime.handle().clone());
    /// # let _ = executor;
    /// ```
    #[cfg(not(target_arch = "wasm32"))]
    pub fn from_handle(handle: tokio::runtime::Handle) -> Self {
        Self {
            handle,
            _owned: None,
        }
    }

    /// Starts `task` in the background. It runs to its end; nothing waits
    /// for it.
    ///
    /// ```
    /// let executor = likekit_core::runtime::Executor::current_or_new().unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// executor.spawn(async move {
    ///     likekit_core::runtime::sleep(std::time::Duration::from_millis(1)).await;
    ///     tx.send(()).unwrap();
    /// });
    /// rx.recv().unwrap();
    /// ```
    pub fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + SendOutsideWasm + 'static,
    {
        #[cfg(not(target_arch = "wasm32"))]
        drop(self.handle.spawn(task));
        #[cfg(target_arch = "wasm32")]
        wasm_bindgen_futures::spawn_local(task);
    }
}

impl Executor {
    /// Runs `work`, which may block (a file write), off the runtime's
    /// worker threads natively; on wasm, at once (browser storage is
    /// synchronous and quick).
    pub fn spawn_blocking<F>(&self, work: F)
    where
        F: FnOnce() + SendOutsideWasm + 'static,
    {
        #[cfg(not(target_arch = "wasm32"))]
        drop(self.handle.spawn_blocking(work));
        #[cfg(target_arch = "wasm32")]
        work();
    }
}

/// The wall clock, in milliseconds since the Unix epoch (0 if the clock is
/// before it).
pub fn now_ms() -> u64 {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
    #[cfg(target_arch = "wasm32")]
    {
        // Whole milliseconds, far below 2^53.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let ms = js_sys::Date::now() as u64;
        ms
    }
}

/// A runtime the executor started itself. Dropped without waiting for its
/// tasks, so that the last client handle may go away anywhere, even on one
/// of the runtime's own threads.
#[cfg(not(target_arch = "wasm32"))]
struct OwnedRuntime(Option<tokio::runtime::Runtime>);

#[cfg(not(target_arch = "wasm32"))]
impl Drop for OwnedRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}
