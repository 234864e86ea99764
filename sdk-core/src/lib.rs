//! # LikeKit client core
//!
//! The shared Rust core of the LikeKit like button: a tap fills the heart and
//! moves the count at once, before any I/O; calls for one post go one at a
//! time and coalesce to the latest intent; failures retry with backoff and
//! jitter, and roll back with a "your like didn't save" event when the latest
//! intent still fails.
//!
//! Layers, each testable alone:
//!
//! * [`machine`] — the pure, synchronous like machine: inputs in, effects
//!   out, no I/O, no clock, no runtime.
//! * the driver — runs the machine's effects on a [`runtime`] (tokio
//!   natively, the JavaScript event loop on wasm) through a [`Transport`]
//!   ([`HttpTransport`] for the real server: reqwest natively, the host's
//!   own `fetch` on wasm), and feeds the results back in. It holds no rule
//!   of its own.
//! * [`LikeClient`] — the public API: taps that return the new view at
//!   once, reads, subscriptions, stats and shutdown.
//! * [`PostView`] and [`LikeLine`] — what a post shows: heart, count and
//!   "Liked by Ana and 1,203 others".
//! * [`wire`] — the JSON bodies of the protocol, shared with the server.
//! * [`LikeError`] — the one public error type.
//!
//! ```no_run
//! use std::time::Duration;
//! use likekit_core::{LikeClient, LikeEvent, StaticToken};
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), likekit_core::LikeError> {
//! let post = likekit_core::PostId::new(42)?; // ids are checked once, here
//! let client = LikeClient::builder()
//!     .base_url("http://127.0.0.1:8080")
//!     .token_provider(StaticToken::new("<token from your sign-in>"))
//!     .build()?;
//! let _subscription = client.subscribe(post, |event: &LikeEvent| match event {
//!     LikeEvent::Changed(view) => println!("{} {}", view.count, view.line),
//!     LikeEvent::Failed(failure) => eprintln!("{failure}"),
//! });
//! client.refresh(post).await?;
//! let view = client.toggle(post); // the heart fills now; the call follows
//! assert!(view.liked);
//! client.shutdown(Duration::from_secs(5)).await;
//! # Ok(())
//! # }
//! ```

mod client;
#[cfg(test)]
mod client_tests;
mod driver;
pub mod error;
mod events;
#[doc(hidden)]
pub mod fuzzing;
pub mod journal;
pub mod line;
pub mod machine;
pub mod runtime;
mod scripted;
mod transport;
pub mod view;
pub mod wire;

pub use client::{DEFAULT_MAX_INTENT_AGE, LikeClient, LikeClientBuilder, Subscription};
pub use driver::RestoreReport;
pub use error::{JournalFault, LikeError};
pub use events::{LikeEvent, LikeFailure, LikeObserver};
#[cfg(not(target_arch = "wasm32"))]
pub use journal::FileJournal;
pub use journal::{Intent, JournalStore, MemoryJournal};
pub use line::LikeLine;
pub use machine::{
    Action, CallId, Effect, MAX_RETRY_AFTER, Machine, MachineConfig, RetryPolicy, Stats,
};
pub use runtime::BoxFuture;
pub use scripted::{ScriptedCall, ScriptedFailure, ScriptedServer};
pub use transport::{
    AsyncTokenProvider, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_REQUEST_TIMEOUT, HttpTransport,
    MemoryTransport, StaticToken, TokenProvider, Transport,
};
pub use view::PostView;
pub use wire::{PostId, UserId};
