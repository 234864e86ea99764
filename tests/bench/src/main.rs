//! `likekit-bench`: the server bench's data set, tokens, audit, bare route,
//! naive baseline and the whole wrk run. `cargo xtask bench --only server`
//! runs `likekit-bench run`; the other subcommands are its parts, for
//! running one by hand.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode, time::Duration};

use clap::{Parser, Subcommand};
use likekit_bench::{
    data::{self, SeedParams},
    load::{self, RunOptions, Settings},
    naive::{self, NaiveViews},
    serve,
};
use likekit_server::{Database, Tokens};

// The server's allocator, so the bare route and the naive baseline run on
// the same stack as the server they are compared with.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(name = "likekit-bench", about = "LikeKit's server bench")]
struct Cli {
    #[command(subcommand)]
    command: BenchCommand,
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// The whole server bench: every load on every backend; prints each
    /// figure as a `likekit-metric name=value` line at the end.
    Run {
        /// The release `likekit-server` binary to measure.
        #[arg(long)]
        server: PathBuf,
        /// The load generator.
        #[arg(long, default_value = "wrk")]
        wrk: PathBuf,
        /// The wrk script.
        #[arg(long, default_value = "bench/load.lua")]
        script: PathBuf,
        /// The work folder (the cached data set, this run's copies and logs).
        #[arg(long, default_value = "target/bench")]
        dir: PathBuf,
        /// A few seconds per load, for trying the bench itself.
        #[arg(long, env = "LIKEKIT_BENCH_QUICK", value_parser = clap::builder::FalseyValueParser::new())]
        quick: bool,
        /// Also measure Citus on this coordinator (a libpq URL): the data
        /// set goes into a schema of its own there, dropped afterwards.
        #[arg(long, env = "LIKEKIT_BENCH_CITUS_URL", hide_env_values = true)]
        citus: Option<String>,
        /// Measure only this backend (sqlite, postgres, citus,
        /// citus_coordinator: Citus with `--citus-direct false`); repeatable.
        #[arg(long = "backend", value_parser = ["sqlite", "postgres", "citus", "citus_coordinator"])]
        backends: Vec<String>,
    },
    /// Build a data set into a folder (reused when it is already there with
    /// the same parameters): `likekit.db`, `views.txt` (post ids for the
    /// view load), `seed.txt` (the parameters and the hot post).
    Seed {
        /// The folder to build in.
        #[arg(long)]
        dir: PathBuf,
        /// Seed this database instead (a PostgreSQL URL); always seeded
        /// anew, and the folder gets only `views.txt` and `seed.txt`.
        #[arg(long)]
        db: Option<String>,
        #[command(flatten)]
        params: SeedParams,
    },
    /// Write sign-in tokens for users 1..=N, one per line.
    Tokens {
        #[arg(long)]
        users: u64,
        /// Lifetime in seconds.
        #[arg(long, default_value_t = 3600)]
        ttl: u64,
        /// The server's HS256 secret.
        #[arg(long, env = "LIKEKIT_TOKEN_SECRET", hide_env_values = true)]
        token_secret: String,
        #[arg(long)]
        out: PathBuf,
    },
    /// Check every post's count against its like rows; exits non-zero when
    /// any differs.
    Audit {
        #[arg(long)]
        db: String,
    },
    /// Serve the bare route: a fixed JSON body on the same HTTP stack.
    Bare {
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
    },
    /// Serve the naive baseline on a SQLite file or a PostgreSQL database.
    Naive {
        #[arg(long)]
        db: String,
        #[arg(long, env = "LIKEKIT_TOKEN_SECRET", hide_env_values = true)]
        token_secret: String,
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
        /// Read connections (SQLite) or pool size (PostgreSQL, at least 8).
        #[arg(long, default_value_t = 8)]
        connections: usize,
    },
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

fn run(command: BenchCommand) -> Result<(), String> {
    match command {
        BenchCommand::Run {
            server,
            wrk,
            script,
            dir,
            quick,
            citus,
            backends,
        } => load::run(RunOptions {
            server,
            wrk,
            script,
            dir,
            params: SeedParams::default(),
            settings: Settings::new(quick),
            citus,
            only: backends,
        }),
        BenchCommand::Seed { dir, db, params } => runtime()?.block_on(async {
            match db {
                Some(db) => data::seed_database(&db, &dir, &params).await,
                None => data::seed(&dir, &params).await,
            }
        }),
        BenchCommand::Tokens {
            users,
            ttl,
            token_secret,
            out,
        } => data::write_tokens(&token_secret, users, Duration::from_secs(ttl), &out),
        BenchCommand::Audit { db } => match runtime()?.block_on(data::audit(&db))? {
            true => Ok(()),
            false => Err("some posts have a count that differs from their rows".into()),
        },
        BenchCommand::Bare { listen } => {
            runtime()?.block_on(serve::serve(serve::bare_router(), listen))
        }
        BenchCommand::Naive {
            db,
            token_secret,
            listen,
            connections,
        } => {
            let database: Database = db.parse().map_err(|e| format!("--db {db}: {e}"))?;
            let views = NaiveViews::open(&database, connections)?;
            let tokens = Tokens::new(token_secret.as_bytes()).map_err(|e| e.to_string())?;
            runtime()?.block_on(serve::serve(naive::router(views, tokens), listen))
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
