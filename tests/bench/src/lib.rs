//! LikeKit's server bench, in a crate of its own so the product server
//! ships none of it. `cargo xtask bench --only server` builds the release
//! server and this crate's binary and runs `likekit-bench run`.
//!
//! * [`data`]: the deterministic data set (100,000 posts, 1,000,000 like
//!   rows, 10,000 users with 300 friends each) built straight into a store
//!   through the store's own seed path, sign-in tokens in bulk, and the
//!   exact-count audit.
//! * [`serve`]: the **bare route** — the same paths on the same HTTP stack,
//!   a fixed JSON body — the ceiling any route can reach.
//! * [`naive`]: the **naive baseline** — `COUNT(*)` over the like rows and a
//!   friends join on every view, no cache — a small server of its own
//!   reading the same database as the server under test.
//! * [`load`]: the run — wrk with `bench/load.lua` against each of them and
//!   the real server, on SQLite and on a throwaway PostgreSQL cluster (and,
//!   given a coordinator with `--citus`, on Citus, the server on the
//!   coordinator and on the workers), with an audit after every write load;
//!   every figure a `likekit-metric` line.
//!
//! Benchmarks are not tests: the targets live in `cargo xtask bench`'s
//! report, never in assertions here.

pub mod data;
pub mod load;
pub mod naive;
pub mod serve;
