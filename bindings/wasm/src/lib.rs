//! # LikeKit for the web
//!
//! The LikeKit client core (`likekit-core`) as a wasm-bindgen package: a
//! `LikeClient` class with a callback API, Promises and TypeScript types,
//! for browsers and Node. `cargo xtask bindings` builds the npm-shaped
//! package into `bindings/wasm/pkg/`.
//!
//! This crate holds no rule of the like button: it converts JavaScript
//! values to Rust and back, and forwards each call to the core. On wasm the
//! core runs its calls on the JavaScript event loop (`wasm-bindgen-futures`
//! and timers) and speaks HTTP through `fetch`.
//!
//! ```js
//! import init, { LikeClient } from "likekit-wasm";
//!
//! await init(); // loads the .wasm once; no client can be made before it
//! const client = new LikeClient("https://likes.example.com", {
//!   token: () => session.token,
//! });
//! const view = client.toggle(42); // instant: view.liked, view.count, view.line
//! ```
//!
//! Post ids run from 1 to 2^63 − 1. They are taken as safe-integer
//! numbers, decimal strings or `BigInt`s, each checked by the core's one
//! constructor ([`likekit_core::PostId`]), so 0, -1 or `"abc"` fail with
//! code `"bad_post_id"` exactly as in the other bindings; a number past
//! `Number.MAX_SAFE_INTEGER`, which JavaScript cannot hold exactly, fails
//! with `"invalid_argument"` and a hint to pass a string or a `BigInt`
//! ([`args`]). Ids come back as numbers up to `Number.MAX_SAFE_INTEGER`
//! and as decimal strings above it. The client's errors are `Error`
//! objects named `LikeError` with a `code` (the core's
//! [`LikeError::code`](likekit_core::LikeError::code), or
//! `"invalid_argument"` for a value of the wrong type); wasm-bindgen's
//! glue throws a few plain `Error`s of its own, without a `code`, for a
//! handle used wrongly (a freed client: `null pointer passed to rust`).
//!
//! The plain objects (`PostView`, `LikeEvent`, `LikeClientOptions`…) are
//! Rust types in `types`: tsify derives their TypeScript declarations, doc
//! comments included, and small hand-written `Reflect` conversions on the
//! same types (held to serde-wasm-bindgen by a drift test) convert them.
//! `types.d.ts`
//! adds what has no serde form (`PostIdInput`, the `LikeError` interface,
//! `LikeErrorCode`, the callbacks, `JournalStorage`).
//!
//! Off wasm32 the crate builds only its pure argument checks ([`args`]),
//! so the workspace builds and tests on any host.

pub mod args;

#[cfg(target_arch = "wasm32")]
mod client;
#[cfg(target_arch = "wasm32")]
pub mod convert;
#[cfg(target_arch = "wasm32")]
pub mod journal;
#[cfg(target_arch = "wasm32")]
pub mod js;
#[cfg(target_arch = "wasm32")]
mod scripted;
#[cfg(target_arch = "wasm32")]
pub mod types;

#[cfg(target_arch = "wasm32")]
pub use client::LikeClient;
#[cfg(target_arch = "wasm32")]
pub use scripted::ScriptedServer;

/// The allocator: talc, in a third of the code of Rust's default
/// (dlmalloc). The package runs on one thread.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// The TypeScript that cannot be derived from the Rust types (see
/// [`types`]): `PostIdInput`, the `LikeError` interface and the callbacks.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("types.d.ts");
