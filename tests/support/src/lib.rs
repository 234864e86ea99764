//! # LikeKit test support
//!
//! What the project's tests and benchmarks share, kept out of the product
//! crates:
//!
//! * [`postgres`]: the one throwaway PostgreSQL cluster helper (`initdb` in
//!   a folder on a free loopback port, cleaned up however the parent ends).
//!   Always built; it needs nothing but the standard library, so build tools
//!   can take it with `default-features = false`.
//! * [`pgbouncer`]: a throwaway PgBouncer in front of such a cluster, in
//!   session or transaction mode, cleaned up the same way. Standard
//!   library only.
//! * [`citus`]: the Citus test mode — a coordinator someone else runs,
//!   named by `LIKEKIT_TEST_CITUS_URL`, a schema per test, the skip message
//!   when it is not set. Also standard library only.
//! * `suite` (feature `store-suite`): the behaviour every
//!   `likekit_server::store::Store` backend must have, as async functions,
//!   and `store_suite!` to stamp them out as tests for one backend; and
//!   `intercept`, a store forwarding every call to a real one with hooks
//!   around each, for tests that make a chosen call fail or wait.
//! * `admin` (feature `admin-client`): `admin::AdminClient`, a typed
//!   client for the mock server's admin and fault API.
//! * `tls` (feature `tls`): a throwaway certificate authority made at test
//!   time and `tls::TlsFront`, an HTTPS front on loopback that forwards to
//!   a plain-HTTP server; also as the program `likekit-tls-front`, for test
//!   runners in other languages.
//!
//! `store-suite` and `admin-client` are on by default; `tls` is not.

pub mod citus;
pub mod pgbouncer;
pub mod postgres;

#[cfg(feature = "admin-client")]
pub mod admin;
#[cfg(feature = "store-suite")]
pub mod intercept;
#[cfg(feature = "store-suite")]
pub mod suite;
#[cfg(feature = "tls")]
pub mod tls;
