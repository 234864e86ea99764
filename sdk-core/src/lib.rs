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
//! * [`PostView`] and [`LikeLine`] — what a post shows: heart, count and
//!   "Liked by Ana and 1,203 others".
//! * [`wire`] — the JSON bodies of the protocol, shared with the server.
//! * [`LikeError`] — the one public error type.

pub mod error;
pub mod line;
pub mod machine;
pub mod view;
pub mod wire;

pub use error::LikeError;
pub use line::LikeLine;
pub use machine::{Action, CallId, Effect, Machine, MachineConfig, RetryPolicy, Stats};
pub use view::PostView;
pub use wire::{PostId, UserId};
