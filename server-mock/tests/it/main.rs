//! likekit-server's tests of the HTTP API, the command line, the cache and
//! the SQLite store, as one test binary. Each file here was a binary of its
//! own, and each linked the whole server: seventeen copies of it in a debug
//! build. The PostgreSQL and Citus suites stay binaries of their own
//! (`tests/store_postgres.rs` runs under libtest with one shared cluster,
//! `tests/store_citus.rs` only against a coordinator).
//!
//! One file's tests: `cargo test -p likekit-server --test it admin::`.

#[path = "../common/mod.rs"]
mod common;

mod admin;
mod auth;
mod cache_races;
mod cli;
mod concurrency;
mod connections;
mod crash;
mod error_codes;
mod faults;
mod http_api;
mod journal_outcomes;
mod journal_wait;
mod jwks;
mod log_flood;
mod openapi_conformance;
mod readiness_log;
mod seed_table;
mod store_sqlite;
mod views;
mod web_root;
mod write_logs;
