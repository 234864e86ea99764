//! # LikeKit for Kotlin, Swift and Python
//!
//! A thin [uniffi](https://mozilla.github.io/uniffi-rs/) layer over
//! [`likekit_core`]: it converts types and forwards calls, and holds no rule
//! about likes. The generated APIs (run `cargo xtask bindings`) are:
//!
//! | Rust here | Kotlin (`com.likekit`) | Swift (`LikeKit`) | Python (`likekit`) |
//! |---|---|---|---|
//! | [`LikeClient`] | `LikeClient` (`AutoCloseable`) | `LikeClient` | `LikeClient` |
//! | [`LikeClientOptions`], [`default_options`] | `LikeClientOptions` (every field optional: the core's default) | `LikeClientOptions` | `LikeClientOptions` |
//! | [`PostView`], [`LikeLine`], [`Stats`] | data classes | structs | dataclass-like |
//! | [`LikeError`] | `LikeException` (sealed) | `LikeError` (`Error`) | `LikeError` (`Exception`) |
//! | [`LikeObserver`], [`TokenProvider`], [`CallbackDispatcher`] | interfaces | protocols | abstract classes |
//! | [`LikeSubscription`] | `LikeSubscription` (`AutoCloseable`) | `LikeSubscription` | `LikeSubscription` |
//! | `refresh`, `refresh_many`, `wait_idle`, `shutdown` | `suspend fun` | `async` | `async def` |
//! | [`ScriptedServer`] (`LikeClient::scripted`), for tests | `ScriptedServer` | `ScriptedServer` | `ScriptedServer` |
//!
//! ## Ids and counts
//!
//! Post ids, counts and stats are signed 64-bit integers on the foreign side
//! (`Long`, `Int64`, `int`): that is what Kotlin and Swift code uses for ids,
//! and every id there is (1 to 2⁶³−1) fits. Every id passed in goes through
//! the core's one constructor ([`likekit_core::PostId`]'s `TryFrom<i64>`), so
//! zero and negative ids are refused at once, before anything is tapped or
//! sent, with [`LikeError::InvalidId`] — the core's code `bad_post_id`, the
//! same error the web binding and the server give for the same id. That is
//! why the taps, `view` and `subscribe` throw. Python's `int` can also hold
//! numbers past 2⁶³−1: the generated code refuses those itself, before the
//! call, with `ValueError` (it checks that every `int` fits 64 bits).
//!
//! ## Threads
//!
//! Every method may be called from any thread. Taps return at once; the
//! calls they cause run on one tokio runtime owned by this library (two
//! worker threads, named `likekit-ffi`), shared by every client.
//!
//! Observers are called one at a time, in the order things happened, by
//! whichever thread is delivering. A tap that finds no delivery under way
//! delivers its own change in place, on the tapping thread, before it
//! returns. A tap made while another thread is delivering (a runtime
//! thread still in an observer, say) leaves its change to that thread,
//! which delivers it after the events before it: the tap may then return
//! before any observer has heard of it, and the change arrives on that
//! other thread. Answers, retries, rollbacks and reads are delivered by a
//! runtime thread, or by a tapping thread that is delivering at the time.
//! So no observer call is tied to a thread: UI code gives the client a
//! [`CallbackDispatcher`] (`LikeClientOptions::callback_dispatcher`), and
//! every observer call then runs where it says, in order. The view a tap
//! returns is the one to draw at once.
//!
//! Python: observers and the generated async methods are resumed from the
//! runtime's threads. CPython ends any other thread that touches the
//! interpreter while it is exiting, which aborts the process when that
//! thread runs Rust code; so the generated module stops the runtime from
//! an `atexit` hook ([`stop_runtime`]) before the interpreter finalizes.
//!
//! ## Memory
//!
//! A client owns its token provider and a subscription its observer; the
//! core holds only weak references to them, so a foreign object is released
//! on the thread that closes its owner, never on a runtime thread (where the
//! foreign runtime may already be exiting). [`live_objects`] counts clients,
//! subscriptions and the core's references to observers and token
//! providers, so that tests can show that creating and dropping them leaks
//! nothing.

// uniffi's generated scaffolding (`setup_scaffolding!` and the export
// macros) is `extern "C"` glue that must use `unsafe`; this crate holds only
// that glue and plain conversions, and writes no `unsafe` of its own.
#![allow(unsafe_code)]

mod client;
mod dispatch;
mod error;
mod journal;
mod scripted;
mod types;

pub use client::{
    AsyncTokenProvider, CallbackError, CallbackErrorListener, LikeClient, LikeObserver,
    LikeSubscription, TokenProvider, stop_runtime,
};
pub use dispatch::{CallbackDispatcher, DispatchError, DispatchedCall};
pub use error::LikeError;
pub use journal::{ExpiredTap, IntentJournal, RestoreReport};
pub use scripted::{ScriptedCall, ScriptedFailure, ScriptedServer};
pub use types::{LikeClientOptions, LikeLine, PostView, Stats, default_options};

use std::sync::atomic::{AtomicI64, Ordering};

uniffi::setup_scaffolding!("likekit");

/// How many objects this library currently holds for the foreign side:
/// clients, subscriptions, and the core's references to observers and
/// token providers. A debugging aid: it goes back to where it was once
/// everything created has been closed (the core lets go of a closed
/// client's references when its background work ends, within moments).
#[uniffi::export]
pub fn live_objects() -> i64 {
    LIVE.load(Ordering::SeqCst)
}

static LIVE: AtomicI64 = AtomicI64::new(0);

/// Counts itself in [`live_objects`] while it exists; embedded in every
/// object handed to, or taken from, the foreign side.
#[derive(Debug)]
struct Live(());

impl Live {
    fn new() -> Self {
        LIVE.fetch_add(1, Ordering::SeqCst);
        Live(())
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}
