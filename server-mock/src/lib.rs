//! The LikeKit reference server: exact like counts, per-viewer friends lines,
//! sign-in tokens, and fault injection for client tests.
//!
//! The same code runs as the `likekit-server` binary and in-process from
//! other crates' tests:
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use std::time::Duration;
//! use likekit_server::{Config, spawn};
//!
//! // A private in-memory database on a free loopback port.
//! let server = spawn(Config {
//!     admin_key: Some("test-admin".into()),
//!     cache_ttl: Duration::from_millis(100),
//!     ..Config::default()
//! })
//! .await
//! .unwrap();
//! server.create_user(7, "Ana").await.unwrap();
//! server.create_post(42).await.unwrap();
//! let token = server.mint_token(7, Duration::from_secs(3600));
//! let url = format!("{}/posts/42/like", server.base_url());
//! // POST `url` with `Authorization: Bearer {token}` to like post 42.
//! # let _ = (token, url);
//! server.shutdown().await.unwrap();
//! # });
//! ```
//!
//! * [`spawn`] / [`ServerHandle`]: start and stop a server.
//! * [`Config`]: every setting, with defaults for tests.
//! * [`store`]: the [`Store`](store::Store) trait, the SQLite backend with
//!   group commit, and the shared backend test suite.
//! * [`Tokens`]: HS256 sign-in tokens.
//!
//! The HTTP API is described in the crate README and served as OpenAPI at
//! `GET /openapi.json`.

mod admin;
mod api;
mod app;
mod auth;
pub mod bench;
mod config;
mod error;
mod faults;
mod metrics;
mod naive;
mod net;
mod openapi;
mod server;
pub mod store;
mod ttl_cache;
mod views;
mod web;

pub use auth::{TokenError, Tokens};
pub use config::{Config, Database, RateLimit};
pub use error::Error;
pub use faults::{MAX_LATENCY_MS, MAX_RULES};
pub use server::{ServerHandle, spawn, spawn_with_store};

/// Bodies of the HTTP API, re-exported from `likekit_core::wire`.
pub use likekit_core::wire;
