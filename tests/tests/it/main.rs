//! The LikeKit SDK against the real reference server, as one test binary.
//! Each file here was a binary of its own, and each linked the whole
//! server and SDK: nine copies of them in a debug build.
//!
//! One file's tests: `cargo test -p likekit-tests --test it chaos::`.

mod chaos;
mod errors;
mod faults_after;
mod https;
mod reads;
mod seed_table;
mod shutdown;
mod taps;
mod train;
