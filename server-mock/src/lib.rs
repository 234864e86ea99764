//! The LikeKit reference server: exact like counts, per-viewer friends lines,
//! sign-in tokens, and fault injection for client tests.
//!
//! The same code runs as the `likekit-server` binary and in-process from
//! other crates' tests:
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use std::time::Duration;
//! use likekit_server::{Config, spawn, wire::{PostId, UserId}};
//!
//! // A private in-memory database on a free loopback port.
//! let server = spawn(Config {
//!     admin_key: Some("test-admin".into()),
//!     cache_ttl: Duration::from_millis(100),
//!     ..Config::default()
//! })
//! .await
//! .unwrap();
//! let (ana, post) = (UserId::new(7).unwrap(), PostId::new(42).unwrap());
//! server.create_user(ana, "Ana").await.unwrap();
//! server.create_post(post).await.unwrap();
//! let token = server.mint_token(ana, Duration::from_secs(3600));
//! let url = format!("{}/posts/42/like", server.base_url());
//! // POST `url` with `Authorization: Bearer {token}` to like post 42.
//! # let _ = (token, url);
//! server.shutdown().await.unwrap();
//! # });
//! ```
//!
//! * [`spawn`] / [`ServerHandle`]: start and stop a server ([`spawn_until`]:
//!   a start that a stop signal may give up).
//! * [`App`]: the server without a listener — its router
//!   ([`App::router`]), your routes under its middleware ([`App::wrap`]),
//!   its store, tokens and admin operations; for embedding the API in your
//!   own axum application or driving it in process. [`net`] serves a router
//!   so that fault rules can cut connections.
//! * [`Viewer`], [`PathId`], [`ApiError`]: the signed-in caller, an id from
//!   the path, and the JSON error answer, for handlers of your own.
//! * [`Config`]: every setting, with defaults for tests.
//! * [`store`]: the [`Store`](store::Store) trait, the SQLite and PostgreSQL
//!   backends (cargo features `sqlite` and `postgres`, both on by default),
//!   hot-post sharding, and the [rules](store::rules) every backend applies.
//! * [`Tokens`]: HS256 sign-in tokens.
//! * [`wire`]: the protocol crate `likekit-proto`, re-exported. Ids are
//!   [`wire::PostId`] and [`wire::UserId`]; the server parses them only
//!   through their constructors.
//!
//! The HTTP API is described in the crate README and served as OpenAPI at
//! `GET /openapi.json`.

mod admin;
mod api;
mod auth;
mod body;
mod claims;
mod config;
mod error;
mod extract;
mod faults;
#[doc(hidden)]
pub mod fuzzing;
mod journal;
mod jwks;
mod log_limit;
pub mod logs;
mod metrics;
mod middleware;
pub mod net;
mod openapi;
mod routes;
mod server;
mod state;
pub mod store;
mod ttl_cache;
mod views;
mod web;

pub use api::READY_DEADLINE;
pub use auth::Tokens;
pub use body::read_seed;
pub use claims::TokenError;
pub use config::{
    Config, DEFAULT_FRIENDS_CACHE_BYTES, DEFAULT_MAX_BODY_BYTES, DEFAULT_POST_CACHE_ENTRIES,
    RateLimit, cors_origin,
};
pub use error::{ApiError, Error};
pub use extract::{PathId, Viewer};
pub use faults::{MAX_LATENCY_MS, MAX_RULES};
pub use journal::DEFAULT_JOURNAL_SIZE;
pub use jwks::{JwksSource, TokenPolicy};
/// The wire protocol: the bodies of the HTTP API, the [`PostId`](wire::PostId)
/// and [`UserId`](wire::UserId) newtypes, error codes, and (`wire::admin`) the
/// admin, fault and seed bodies — the `likekit-proto` crate, re-exported.
pub use likekit_proto as wire;
pub use server::{ServerHandle, spawn, spawn_until, spawn_with_store};
pub use state::App;
pub use store::{BadDatabase, Database};
