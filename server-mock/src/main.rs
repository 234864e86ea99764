//! `likekit-server`: the LikeKit reference server.
//!
//! Run `likekit-server --help` for the flags; see the crate README for the
//! API.

use std::{
    ffi::OsString,
    io::{IsTerminal as _, Write as _},
    net::SocketAddr,
    num::NonZeroU32,
    path::PathBuf,
    process::ExitCode,
    time::Duration,
};

use clap::{Args, CommandFactory as _, FromArgMatches as _, Parser, Subcommand};
use likekit_server::logs;
use likekit_server::{
    Config, Database, JwksSource, RateLimit, TokenPolicy, Tokens,
    net::MAX_CONNECTIONS,
    store::{HotPostOptions, MAX_SHARDS},
    wire::UserId,
};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{FilterExt as _, filter_fn};
use tracing_subscriber::fmt::format::JsonFields;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

// mimalloc: markedly less time in malloc/free than the system allocator on
// the view path (many small, short-lived allocations per request).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The LikeKit reference server: exact like counts, friends lines, sign-in
/// tokens, and an admin/fault-injection API for client tests.
#[derive(Debug, Parser)]
#[command(
    name = "likekit-server",
    version,
    about,
    args_conflicts_with_subcommands = true,
    allow_negative_numbers = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the server (the default).
    #[command(allow_negative_numbers = true)]
    Serve(Box<ServeArgs>),
    /// Print a sign-in token for a user (for development and scripts).
    Token(TokenArgs),
}

/// How log lines are written (on standard error).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    /// For people: one line of text per event.
    Text,
    /// For log pipelines: one JSON object per line.
    Json,
}

/// The upper bounds of the duration flags: one day for timeouts and the
/// grace, one hour for the shutdown delay and the view cache.
const DAY_SECS: u64 = 24 * 60 * 60;
const HOUR_SECS: u64 = 60 * 60;
const DAY_MS: u64 = DAY_SECS * 1000;
const HOUR_MS: u64 = HOUR_SECS * 1000;

/// The bounds of the cache sizes: ten million posts (about 13 GB with 100
/// likers each), 64 GiB of friend sets.
const MAX_POST_CACHE_ENTRIES: u64 = 10_000_000;
const MAX_FRIENDS_CACHE_MIB: u64 = 64 * 1024;
const DEFAULT_FRIENDS_CACHE_MIB: u64 = (likekit_server::DEFAULT_FRIENDS_CACHE_BYTES >> 20) as u64;

#[derive(Debug, Args)]
struct ServeArgs {
    /// How log lines are written: `text` or `json` (RUST_LOG sets what is
    /// logged).
    #[arg(long, env = "LIKEKIT_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// IP address and port to listen on (port 0 picks a free one; host
    /// names are not looked up).
    #[arg(long, env = "LIKEKIT_LISTEN", default_value = "127.0.0.1:8080",
          value_parser = listen_addr)]
    listen: SocketAddr,
    /// SQLite database file, `:memory:` for a throwaway one, or a
    /// PostgreSQL URL (`postgres://user:password@host:port/database`).
    // `--help` does not show the variable's value: a URL may hold a password.
    // Never empty, from the variable either (see `command`).
    #[arg(
        long,
        env = "LIKEKIT_DB",
        default_value = "likekit.db",
        hide_env_values = true,
        value_parser = database_value
    )]
    db: String,
    /// JSON seed document (users, friends, posts, likers) loaded at start.
    #[arg(long, env = "LIKEKIT_SEED", value_name = "FILE")]
    seed: Option<PathBuf>,
    /// Turns on the admin API (/admin/*); requests must send it in X-Admin-Key.
    #[arg(long, env = "LIKEKIT_ADMIN_KEY", hide_env_values = true, value_parser = non_empty)]
    admin_key: Option<String>,
    /// HS256 secret for sign-in tokens; random for each start when absent.
    /// With `--jwks`, HS256 tokens are taken only when this is given.
    #[arg(long, env = "LIKEKIT_TOKEN_SECRET", hide_env_values = true, value_parser = non_empty)]
    token_secret: Option<String>,
    /// Verify tokens with an identity provider's public keys: a JWKS file,
    /// or an `https://` URL (`http://` only on loopback) fetched at start
    /// and read again in the background (RS256/384/512, PS256/384/512,
    /// ES256, ES384, EdDSA).
    #[arg(long, env = "LIKEKIT_JWKS", value_name = "FILE_OR_URL", value_parser = non_empty)]
    jwks: Option<String>,
    /// With `--jwks`: the `iss` tokens must carry.
    #[arg(long, env = "LIKEKIT_TOKEN_ISSUER", requires = "jwks", value_parser = non_empty)]
    token_issuer: Option<String>,
    /// With `--jwks`: the `aud` tokens must carry.
    #[arg(long, env = "LIKEKIT_TOKEN_AUDIENCE", requires = "jwks", value_parser = non_empty)]
    token_audience: Option<String>,
    /// With `--jwks`: how often the key set is read again (seconds; 10 to
    /// 86400, one day); an unknown `kid` asks for it sooner.
    #[arg(long, env = "LIKEKIT_JWKS_REFRESH_SECS", default_value_t = 300,
          value_parser = clap::value_parser!(u64).range(10..=DAY_SECS))]
    jwks_refresh_secs: u64,
    /// Browser origin allowed by CORS, `scheme://host[:port]` (repeatable;
    /// `*` for any). None by default.
    #[arg(
        env = "LIKEKIT_CORS_ORIGINS",
        value_delimiter = ',',
        long = "cors-origin",
        value_name = "ORIGIN",
        value_parser = likekit_server::cors_origin
    )]
    cors_origins: Vec<String>,
    /// Likes + unlikes per second allowed per user (0 turns the limit off).
    #[arg(long, env = "LIKEKIT_WRITE_RATE_LIMIT", default_value_t = 50)]
    write_rate_limit: u32,
    /// Writes a user may make at once before the rate limit applies (at
    /// least 1).
    #[arg(long, env = "LIKEKIT_WRITE_BURST", default_value_t = 200,
          value_parser = clap::value_parser!(u32).range(1..))]
    write_burst: u32,
    /// How long a post's count, version and likers are cached (milliseconds;
    /// at most 3600000, one hour).
    #[arg(long, env = "LIKEKIT_CACHE_TTL_MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(0..=HOUR_MS))]
    cache_ttl_ms: u64,
    /// How long a viewer's friend set is cached (milliseconds; at most
    /// 86400000, one day).
    #[arg(long, env = "LIKEKIT_FRIENDS_TTL_MS", default_value_t = 30_000,
          value_parser = clap::value_parser!(u64).range(0..=DAY_MS))]
    friends_ttl_ms: u64,
    /// The most posts whose count, version and likers are cached (1 to
    /// 10000000; each about 1.3 KB with 100 likers, 260 MB at the default).
    #[arg(long, env = "LIKEKIT_POST_CACHE_ENTRIES",
          default_value_t = likekit_server::DEFAULT_POST_CACHE_ENTRIES,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
              .range(1..=MAX_POST_CACHE_ENTRIES))]
    post_cache_entries: usize,
    /// The most memory the cached friend sets take together (MiB; 1 to
    /// 65536): a viewer's set that does not fit is read on each of their
    /// views until room frees up.
    #[arg(long, env = "LIKEKIT_FRIENDS_CACHE_MIB", default_value_t = DEFAULT_FRIENDS_CACHE_MIB,
          value_parser = clap::value_parser!(u64).range(1..=MAX_FRIENDS_CACHE_MIB))]
    friends_cache_mib: u64,
    /// Requests taking longer are answered 503 (seconds; 1 to 86400, one
    /// day).
    #[arg(long, env = "LIKEKIT_REQUEST_TIMEOUT_SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=DAY_SECS))]
    request_timeout_secs: u64,
    /// How many requests the request journal keeps (`GET /admin/requests`;
    /// only with an admin key; 0: off).
    #[arg(long, env = "LIKEKIT_JOURNAL_SIZE", default_value_t = likekit_server::DEFAULT_JOURNAL_SIZE)]
    journal_size: usize,
    /// Largest accepted request body (bytes; at least 1): a larger one is
    /// answered 413. There is no "no limit" value.
    #[arg(long, env = "LIKEKIT_MAX_BODY_BYTES", default_value_t = likekit_server::DEFAULT_MAX_BODY_BYTES,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_body_bytes: usize,
    /// How long shutdown waits for in-flight requests (seconds; at most
    /// 86400, one day).
    #[arg(long, env = "LIKEKIT_SHUTDOWN_GRACE_SECS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(0..=DAY_SECS))]
    shutdown_grace_secs: u64,
    /// How long a stopping server keeps serving, with `/readyz` answering
    /// 503, before it stops accepting (seconds; at most 3600, one hour):
    /// time for a load balancer to take it out of rotation.
    #[arg(long, env = "LIKEKIT_SHUTDOWN_DELAY_SECS", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=HOUR_SECS))]
    shutdown_delay_secs: u64,
    /// CA certificates (PEM) that sign PostgreSQL's certificate, for
    /// `sslmode=verify-ca`, `verify-full` or `require` (which then checks
    /// the chain, as `verify-ca`) in `--db`, in place of the URL's
    /// `sslrootcert`; refused without TLS.
    #[arg(long, env = "LIKEKIT_DB_CA_FILE", value_name = "FILE")]
    db_ca_file: Option<PathBuf>,
    /// With PostgreSQL: how long the start waits for a database that is not
    /// up yet (refused, timed out, host not known yet, starting up),
    /// trying again with a growing pause (seconds; at most 3600; 0: no
    /// waiting). Other failures stop the start at once.
    #[arg(long, env = "LIKEKIT_DB_WAIT_SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(0..=HOUR_SECS))]
    db_wait_secs: u64,
    /// Read-only SQLite connections (0: twice the CPUs, at least 4).
    #[arg(long, env = "LIKEKIT_READ_CONNECTIONS", default_value_t = 0)]
    read_connections: usize,
    /// PostgreSQL connections in the pool (0: four per CPU, at least 8).
    #[arg(long, env = "LIKEKIT_DB_CONNECTIONS", default_value_t = 0)]
    db_connections: usize,
    /// A post whose writes on this server pass this many a second is hot:
    /// its count spreads over shard rows (0: every post is hot).
    #[arg(long, env = "LIKEKIT_HOT_POST_THRESHOLD", default_value_t = HotPostOptions::default().threshold)]
    hot_post_threshold: u32,
    /// How many shard rows a hot post's count spreads over (0 or 1: none).
    #[arg(long, env = "LIKEKIT_HOT_POST_SHARDS", default_value_t = HotPostOptions::default().shards,
          value_parser = clap::value_parser!(u16).range(0..=i64::from(MAX_SHARDS)))]
    hot_post_shards: u16,
    /// On Citus, send likes, unlikes and views' one-post reads straight to
    /// the worker holding the post (`false`: all through the node `--db`
    /// names, for servers that cannot reach the workers' addresses).
    #[arg(long, env = "LIKEKIT_CITUS_DIRECT", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    citus_direct: bool,
    /// Serve the static files in this folder at `/` (the web demo); API
    /// routes take precedence.
    #[arg(long, env = "LIKEKIT_WEB_ROOT", value_name = "DIR")]
    web_root: Option<PathBuf>,
    /// Serve `/metrics`, `/openapi.json` and `/admin/*` on this address
    /// instead of the public one (the probes answer on both).
    #[arg(long, env = "LIKEKIT_OPS_LISTEN", value_name = "ADDR", value_parser = listen_addr)]
    ops_listen: Option<SocketAddr>,
    /// How long a client may take to send a request's head, and how long
    /// a kept-alive connection may sit idle, before it is closed (seconds;
    /// 1 to 86400, one day).
    #[arg(long, env = "LIKEKIT_HEADER_READ_TIMEOUT_SECS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=DAY_SECS))]
    header_read_timeout_secs: u64,
    /// The most connections open at once on each listener (the public one
    /// and `--ops-listen`'s); more wait to be accepted (1 to 1000000).
    #[arg(long, env = "LIKEKIT_MAX_CONNECTIONS", default_value_t = 10_000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
              .range(1..=MAX_CONNECTIONS as u64))]
    max_connections: usize,
    /// The most connections open at once from one client address, on each
    /// listener; more are closed as soon as they are accepted (0, the
    /// default: no cap per address, as behind a load balancer or proxy).
    #[arg(long, env = "LIKEKIT_MAX_CONNECTIONS_PER_IP", default_value_t = 0,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
              .range(0..=MAX_CONNECTIONS as u64))]
    max_connections_per_ip: usize,
}

#[derive(Debug, Args)]
struct TokenArgs {
    /// The user id (the token's `sub`): a whole number from 1 to
    /// 9223372036854775807.
    #[arg(long)]
    user: UserId,
    /// Lifetime in seconds: 1 to 31536000 (one year), as `POST
    /// /admin/tokens` takes.
    #[arg(long, default_value = "3600", value_parser = token_ttl)]
    ttl: Duration,
    /// When the token starts being valid, in seconds from now: -31536000
    /// to 31536000 (a year either way), as `POST /admin/tokens` takes
    /// `valid_from_secs`. Below zero it was issued then (`--valid-from
    /// -7200` with the default `--ttl` expired an hour ago); above zero it
    /// is refused until then (`nbf`).
    #[arg(long, default_value = "0", allow_negative_numbers = true, value_parser = token_valid_from)]
    valid_from: i64,
    /// The server's HS256 secret (not empty: as the server's own flag).
    #[arg(long, env = "LIKEKIT_TOKEN_SECRET", hide_env_values = true, value_parser = non_empty)]
    token_secret: String,
}

/// `--listen` and `--ops-listen`: an IP address and a port. A host name is
/// refused with what to write instead: it could name several addresses
/// (`localhost`: 127.0.0.1 and ::1) where the server binds one.
fn listen_addr(text: &str) -> Result<SocketAddr, String> {
    text.trim().parse().map_err(|_| {
        "not an IP address and port: write one such as 127.0.0.1:8080 (this machine \
         only), 0.0.0.0:8080 (every interface) or [::]:8080; host names such as \
         localhost are not looked up"
            .to_string()
    })
}

/// A key, secret, key set or claim given on the command line: never empty.
/// An empty one (`--admin-key "$KEY"` with `KEY` unset) would otherwise
/// quietly turn the admin API off or make a random token secret. (An
/// empty variable is no value at all: [`command`] takes it as unset.)
fn non_empty(text: &str) -> Result<String, String> {
    if text.is_empty() {
        Err("it is empty: give a value, or leave the flag out".into())
    } else {
        Ok(text.to_owned())
    }
}

/// `--db` and `LIKEKIT_DB`: never empty. An empty `LIKEKIT_DB` is the one
/// variable not taken as unset (see [`command`]): a database URL is a
/// secret, and one that failed to render must not start a server on a
/// local file that every other replica does not see.
fn database_value(text: &str) -> Result<String, String> {
    if text.is_empty() {
        Err("it is empty: give a SQLite file, `:memory:` or a \
             `postgres://user:password@host:port/database` URL (an empty LIKEKIT_DB \
             is refused rather than read as the default likekit.db: a database URL \
             that failed to render must not start a server on a file of its own; \
             unset the variable for the default)"
            .into())
    } else {
        Ok(text.to_owned())
    }
}

/// `--ttl`, held to the admin API's rule (`POST /admin/tokens`).
fn token_ttl(secs: &str) -> Result<Duration, String> {
    let secs: u64 = secs
        .parse()
        .map_err(|_| "must be a whole number of seconds".to_string())?;
    likekit_server::wire::admin::token_ttl(secs)
}

/// `--valid-from`, held to the admin API's rule (`POST /admin/tokens`).
fn token_valid_from(secs: &str) -> Result<i64, String> {
    let secs: i64 = secs
        .parse()
        .map_err(|_| "must be a whole number of seconds".to_string())?;
    likekit_server::wire::admin::token_valid_from(secs)
}

/// Refuses a setting `given` (on the command line or by a variable) that
/// the chosen store does not use: a default is not given.
fn only_for_the_other_store(given: &[String], database: &Database) -> Result<(), String> {
    let (unused, applies_to, chosen): (&[(&str, &str, &str)], _, _) = match database {
        Database::Postgres(_) => (
            &[(
                "read_connections",
                "--read-connections",
                "LIKEKIT_READ_CONNECTIONS",
            )],
            "SQLite",
            "PostgreSQL",
        ),
        _ => (
            &[
                ("db_ca_file", "--db-ca-file", "LIKEKIT_DB_CA_FILE"),
                (
                    "db_connections",
                    "--db-connections",
                    "LIKEKIT_DB_CONNECTIONS",
                ),
                ("citus_direct", "--citus-direct", "LIKEKIT_CITUS_DIRECT"),
                ("db_wait_secs", "--db-wait-secs", "LIKEKIT_DB_WAIT_SECS"),
            ],
            "PostgreSQL",
            "SQLite",
        ),
    };
    match unused
        .iter()
        .find(|(id, _, _)| given.iter().any(|g| g == id))
    {
        Some((_, flag, env)) => Err(format!(
            "{flag} ({env}) applies to {applies_to} only, and --db (LIKEKIT_DB) names a \
             {chosen} database: leave it out"
        )),
        None => Ok(()),
    }
}

fn config_from(args: ServeArgs, given: &[String]) -> Result<Config, String> {
    let seed = match &args.seed {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read seed {}: {e}", path.display()))?;
            Some(
                likekit_server::read_seed(text.as_bytes())
                    .map_err(|e| format!("bad seed {}: {}", path.display(), e.message()))?,
            )
        }
        None => None,
    };
    // The parser refuses a burst of 0.
    let write_rate_limit = NonZeroU32::new(args.write_rate_limit).map(|per_second| RateLimit {
        per_second,
        burst: NonZeroU32::new(args.write_burst).unwrap_or(NonZeroU32::MIN),
    });
    let database: Database = args
        .db
        .parse()
        .map_err(|e| format!("--db (LIKEKIT_DB): {e}"))?;
    only_for_the_other_store(given, &database)?;
    Ok(Config {
        listen: args.listen,
        database,
        seed,
        admin_key: args.admin_key,
        token_secret: args.token_secret,
        cors_origins: args.cors_origins,
        write_rate_limit,
        cache_ttl: Duration::from_millis(args.cache_ttl_ms),
        friends_ttl: Duration::from_millis(args.friends_ttl_ms),
        cache_capacity: args.post_cache_entries,
        // At most 64 GiB: past `usize` only on a 32-bit machine.
        friends_cache_bytes: usize::try_from(args.friends_cache_mib << 20).unwrap_or(usize::MAX),
        request_timeout: Duration::from_secs(args.request_timeout_secs),
        max_body_bytes: args.max_body_bytes,
        shutdown_grace: Duration::from_secs(args.shutdown_grace_secs),
        shutdown_delay: Duration::from_secs(args.shutdown_delay_secs),
        read_connections: args.read_connections,
        db_connections: args.db_connections,
        citus_direct: args.citus_direct,
        journal_size: args.journal_size,
        hot_posts: HotPostOptions {
            threshold: args.hot_post_threshold,
            shards: args.hot_post_shards,
            ..HotPostOptions::default()
        },
        web_root: args.web_root,
        ops_listen: args.ops_listen,
        db_ca_file: args.db_ca_file,
        db_start_wait: Duration::from_secs(args.db_wait_secs),
        token_policy: args.jwks.as_deref().map(|jwks| TokenPolicy {
            jwks: JwksSource::parse(jwks),
            issuer: args.token_issuer.clone(),
            audience: args.token_audience.clone(),
            refresh: Duration::from_secs(args.jwks_refresh_secs),
        }),
        connections: likekit_server::net::ConnectionLimits {
            header_read_timeout: Duration::from_secs(args.header_read_timeout_secs),
            max_connections: args.max_connections,
            max_connections_per_ip: args.max_connections_per_ip,
        },
        ..Config::default()
    })
}

/// The signals that stop the server: SIGINT, SIGTERM and SIGHUP, all three
/// a graceful stop (a closed terminal or a supervisor's hang-up must not
/// leave the store unclosed). The handlers are installed by
/// [`StopSignals::install`] (not when first waited on), so a signal that
/// arrives right after start-up is not lost.
#[cfg(unix)]
struct StopSignals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl StopSignals {
    fn install() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// The next stop signal's name.
    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.interrupt.recv() => "SIGINT",
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.hangup.recv() => "SIGHUP",
        }
    }
}

#[cfg(not(unix))]
struct StopSignals;

#[cfg(not(unix))]
impl StopSignals {
    fn install() -> std::io::Result<Self> {
        Ok(Self)
    }

    async fn next(&mut self) -> &'static str {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

async fn serve(args: ServeArgs, given: &[String]) -> Result<(), String> {
    let config = config_from(args, given)?;
    let (delay, grace) = (config.shutdown_delay, config.shutdown_grace);
    let mut signals =
        StopSignals::install().map_err(|e| format!("cannot listen for signals: {e}"))?;
    // A signal during the start (waiting for PostgreSQL, a SQLite file's
    // lock, a key set, loading the seed) gives it up: what it opened is
    // closed, and the server stops as a stop does, never having served.
    let started = likekit_server::spawn_until(config, async {
        let signal = signals.next().await;
        tracing::info!(
            signal,
            "{signal}: shutting down: the start is given up; nothing was served"
        );
        signal
    })
    .await
    .map_err(|e| e.to_string())?;
    let Ok(server) = started else {
        tracing::info!("server stopped");
        return Ok(());
    };
    // A machine-readable line for scripts and tests that start the binary.
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "listening on {}", server.base_url());
    if server.ops_addr().is_some() {
        let _ = writeln!(stdout, "operations on {}", server.ops_url());
    }
    let _ = stdout.flush();

    let signal = signals.next().await;
    let (delay_secs, grace_secs) = (delay.as_secs(), grace.as_secs());
    if delay.is_zero() {
        tracing::info!(
            signal,
            delay_secs,
            grace_secs,
            "{signal}: shutting down: no longer accepting; in-flight requests \
             have up to {grace_secs}s (shutdown grace)"
        );
    } else {
        tracing::info!(
            signal,
            delay_secs,
            grace_secs,
            "{signal}: shutting down: /readyz answers 503, serving goes on for \
             {delay_secs}s (shutdown delay; a second signal skips it), then \
             in-flight requests have up to {grace_secs}s (shutdown grace)"
        );
    }
    server.begin_shutdown();
    if !delay.is_zero() {
        let asked = tokio::time::Instant::now();
        tokio::select! {
            again = signals.next() => {
                let left = delay.saturating_sub(asked.elapsed()).as_secs();
                tracing::info!(
                    signal = again,
                    "{again} again: skipping the rest of the shutdown delay \
                     ({left}s); in-flight requests have up to {grace_secs}s"
                );
                server.skip_shutdown_delay();
            }
            () = tokio::time::sleep_until(asked + delay) => {}
        }
    }
    server.shutdown().await.map_err(|e| e.to_string())
}

/// The command line's parser, with every `LIKEKIT_*` variable set to the
/// empty string taken as unset: Compose files and Helm charts render an
/// optional value left out as `""`, which means "not given", never "the
/// empty value". But for `LIKEKIT_DB`: empty, it is refused
/// ([`database_value`]), since unset it would be the default SQLite file.
/// (The others fail safe or loudly when empty: no admin API, a random
/// token secret that every client's token fails against, no seed; an
/// empty `LIKEKIT_DB_CA_FILE` stops the start with `verify-ca` and
/// `verify-full`, which need a CA, and leaves `require` unchecked, as
/// `require` is without a CA file: a URL that asks for a check says
/// `verify-full`.)
///
/// The flags of the command line without a subcommand are `serve`'s
/// (`serve` is the default): with a subcommand named in `argv` they are
/// not used, and their variables are not read, so that `token` depends
/// on its own flags and variable only (a `LIKEKIT_MAX_CONNECTIONS=0` set
/// for the server is no concern of it).
fn command(argv: &[OsString]) -> clap::Command {
    fn unset_when_empty(arg: clap::Arg) -> clap::Arg {
        let empty = arg
            .get_env()
            .filter(|name| *name != "LIKEKIT_DB")
            .and_then(std::env::var_os)
            .is_some_and(|value| value.is_empty());
        if empty { arg.env(None) } else { arg }
    }
    let command = Cli::command()
        .mut_args(unset_when_empty)
        .mut_subcommands(|sub| sub.mut_args(unset_when_empty));
    // A subcommand comes first (`args_conflicts_with_subcommands`).
    let named = argv
        .get(1)
        .and_then(|word| word.to_str())
        .is_some_and(|word| command.get_subcommands().any(|sub| sub.get_name() == word));
    if named {
        command.mut_args(|arg| arg.env(None))
    } else {
        command
    }
}

/// Reports a command-line error and exits as clap does, naming the
/// variable too when the bad value came from one (clap names only the
/// flag).
fn usage_error(command: &clap::Command, argv: &[OsString], err: &clap::Error) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let code = ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        // Help and the version are for people, not an error.
        let _ = err.print();
        return code;
    }
    let from_env = match err.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(shown)) => {
            let long = shown.split([' ', '=']).next().unwrap_or_default();
            let given = argv.iter().any(|word| {
                word.to_str()
                    .is_some_and(|w| w == long || w.starts_with(&format!("{long}=")))
            });
            std::iter::once(command)
                .chain(command.get_subcommands())
                .flat_map(clap::Command::get_arguments)
                .filter(|arg| arg.get_long().is_some_and(|l| long == format!("--{l}")))
                .find_map(clap::Arg::get_env)
                .filter(|env| !given && std::env::var_os(env).is_some())
                .map(|env| (format!("'{shown}'"), env.to_string_lossy().into_owned()))
        }
        _ => None,
    };
    let text = match &from_env {
        Some((shown, env)) => {
            err.render()
                .to_string()
                .replacen(shown.as_str(), &format!("{shown} (from {env})"), 1)
        }
        None => err.render().to_string(),
    };
    if json_asked(argv) {
        // A log pipeline reads every line of standard error as JSON: the
        // parser's complaint is one line too, in the order of `fatal`'s.
        let message = text.trim_end();
        let message = message.strip_prefix("error: ").unwrap_or(message);
        let _ = writeln!(std::io::stderr(), "{}", json_error_line(message));
    } else if from_env.is_some() {
        eprint!("{text}");
    } else {
        let _ = err.print();
    }
    code
}

/// Whether the command line or `LIKEKIT_LOG_FORMAT` asks for JSON log
/// lines, read without the parser (for the parser's own errors).
fn json_asked(argv: &[OsString]) -> bool {
    let mut asked = None;
    // A word that is not UTF-8 stays in place (as no flag), so the word
    // after `--log-format` is its own value.
    let words: Vec<Option<&str>> = argv.iter().map(|word| word.to_str()).collect();
    for (i, word) in words.iter().enumerate() {
        match *word {
            Some("--") => break,
            Some("--log-format") => asked = words.get(i + 1).copied().flatten(),
            Some(word) => {
                if let Some(value) = word.strip_prefix("--log-format=") {
                    asked = Some(value);
                }
            }
            None => {}
        }
    }
    match asked {
        Some(value) => value == "json",
        None => std::env::var("LIKEKIT_LOG_FORMAT").is_ok_and(|value| value == "json"),
    }
}

fn main() -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let command = command(&argv);
    let (cli, matches) = match command
        .clone()
        .try_get_matches_from(&argv)
        .and_then(|matches| Ok((Cli::from_arg_matches(&matches)?, matches)))
    {
        Ok(parsed) => parsed,
        Err(err) => return usage_error(&command, &argv, &err),
    };
    if let Some(Command::Token(args)) = &cli.command {
        return match Tokens::new(args.token_secret.as_bytes()) {
            Ok(tokens) => {
                println!(
                    "{}",
                    tokens.mint_valid_from(args.user, args.valid_from, args.ttl)
                );
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("error: {err}");
                ExitCode::FAILURE
            }
        };
    }

    let args = match cli.command {
        Some(Command::Serve(args)) => *args,
        _ => cli.serve,
    };
    // The settings given on the command line or by a variable (not left
    // at their defaults).
    let matches = matches.subcommand_matches("serve").unwrap_or(&matches);
    let given: Vec<String> = matches
        .ids()
        .filter(|id| {
            matches!(
                matches.value_source(id.as_str()),
                Some(
                    clap::parser::ValueSource::CommandLine | clap::parser::ValueSource::EnvVariable
                )
            )
        })
        .map(|id| id.as_str().to_owned())
        .collect();
    let format = args.log_format;
    // What RUST_LOG asks for, less the per-request span: `logs::Lines`
    // writes each request's id from the request itself, and a filter that
    // refuses the span keeps it from being made at all.
    let filter = match log_filter() {
        Ok(filter) => filter.and(filter_fn(|metadata| !logs::is_request_span(metadata))),
        Err(err) => return fatal(format, &err),
    };
    let lines = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    match args.log_format {
        LogFormat::Text => tracing_subscriber::registry()
            .with(
                lines
                    .with_ansi(std::io::stderr().is_terminal())
                    .event_format(logs::Lines { json: false })
                    .with_filter(filter),
            )
            .init(),
        // One JSON object per line; a request's lines carry its id as its
        // span did (`"span":{"request_id":…,"name":"request"}`).
        LogFormat::Json => tracing_subscriber::registry()
            .with(
                lines
                    .with_ansi(false)
                    .fmt_fields(JsonFields::new())
                    .event_format(logs::Lines { json: true })
                    .with_filter(filter),
            )
            .init(),
    }
    // A panic's message goes to the log too, not to stderr beside it.
    logs::install_panic_hook();

    for (name, closest) in unknown_variables(&command) {
        match closest {
            Some(closest) => tracing::warn!(
                "{name} is set but is not a setting of likekit-server: it is ignored \
                 (did you mean {closest}?)"
            ),
            None => tracing::warn!(
                "{name} is set but is not a setting of likekit-server: it is ignored \
                 (--help lists each setting's variable)"
            ),
        }
    }

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => return fatal(format, &format!("cannot start the runtime: {err}")),
    };
    match runtime.block_on(serve(args, &given)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => fatal(format, &err),
    }
}

/// The `LIKEKIT_*` variables set (and not empty) that are no setting of the
/// server — a typo such as `LIKEKIT_LISTN`, or `LIKEKIT_CORS_ORIGIN` for
/// `LIKEKIT_CORS_ORIGINS` — each with the setting's variable it is
/// closest to, if one is close. They are warned of rather than refused:
/// the prefix is shared with the project's other tools, and Kubernetes
/// makes variables for a Service named `likekit…` in the same namespace
/// (`LIKEKIT_PORT`, `LIKEKIT_SERVICE_HOST`), which are left out.
fn unknown_variables(command: &clap::Command) -> Vec<(String, Option<String>)> {
    let known: Vec<String> = std::iter::once(command)
        .chain(command.get_subcommands())
        .flat_map(clap::Command::get_arguments)
        .filter_map(clap::Arg::get_env)
        .map(|env| env.to_string_lossy().into_owned())
        .collect();
    let mut unknown: Vec<(String, Option<String>)> = std::env::vars_os()
        .filter(|(_, value)| !value.is_empty())
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value)))
        .filter(|(name, _)| name.starts_with("LIKEKIT_") && !known.contains(name))
        .filter(|(name, value)| !kubernetes_service_variable(name, &value.to_string_lossy()))
        .map(|(name, _)| {
            let closest = known
                .iter()
                .map(|known| (strsim::levenshtein(&name, known), known))
                .filter(|(distance, _)| *distance <= 2)
                .min()
                .map(|(_, known)| known.clone());
            (name, closest)
        })
        .collect();
    unknown.sort();
    unknown
}

/// Whether `name` (set to `value`) has the shape of a variable Kubernetes
/// sets for a Service (`<NAME>_SERVICE_HOST`,
/// `<NAME>_SERVICE_PORT[_<PORT NAME>]`, `<NAME>_PORT=tcp://…`,
/// `<NAME>_PORT_<n>_<TCP|UDP|SCTP>[_PROTO|_PORT|_ADDR]`). A `…_PORT` set to
/// anything else is a setting someone guessed at, and is warned of.
fn kubernetes_service_variable(name: &str, value: &str) -> bool {
    if name.ends_with("_SERVICE_HOST")
        || name.ends_with("_SERVICE_PORT")
        || name.contains("_SERVICE_PORT_")
    {
        return true;
    }
    if name.ends_with("_PORT") {
        return ["tcp://", "udp://", "sctp://"]
            .iter()
            .any(|scheme| value.starts_with(scheme));
    }
    name.rsplit_once("_PORT_").is_some_and(|(_, rest)| {
        let mut parts = rest.split('_');
        let number = parts.next().unwrap_or_default();
        let protocol = parts.next().unwrap_or_default();
        let field = parts.next();
        !number.is_empty()
            && number.bytes().all(|b| b.is_ascii_digit())
            && ["TCP", "UDP", "SCTP"].contains(&protocol)
            && field.is_none_or(|field| ["PROTO", "PORT", "ADDR"].contains(&field))
            && parts.next().is_none()
    })
}

/// The log filter `RUST_LOG` asks for (`info` when it is unset or empty).
/// A filter that does not parse stops the start: quietly logging at
/// another level than asked hides what was asked for.
fn log_filter() -> Result<EnvFilter, String> {
    match std::env::var("RUST_LOG") {
        Err(std::env::VarError::NotPresent) => Ok(EnvFilter::new("info")),
        Ok(text) if text.trim().is_empty() => Ok(EnvFilter::new("info")),
        Err(std::env::VarError::NotUnicode(_)) => Err("RUST_LOG is not valid UTF-8".into()),
        Ok(text) => EnvFilter::builder().parse(&text).map_err(|err| {
            format!(
                "RUST_LOG={text:?} is not a log filter: {err} \
                 (for example RUST_LOG=info or RUST_LOG=warn,likekit_server=debug)"
            )
        }),
    }
}

/// Reports why the server cannot start, once, on standard error, and
/// returns the failure exit code: `error: …` in the text format, one JSON
/// line in the json format (so that the stream stays JSON). Not through
/// the log filter: a fatal error is shown whatever `RUST_LOG` says.
fn fatal(format: LogFormat, message: &str) -> ExitCode {
    let line = match format {
        LogFormat::Text => format!("error: {message}"),
        LogFormat::Json => json_error_line(message),
    };
    let _ = writeln!(std::io::stderr(), "{line}");
    ExitCode::FAILURE
}

/// `message` as one JSON log line at level `ERROR`, in the order of
/// `logs::Lines`' JSON lines.
fn json_error_line(message: &str) -> String {
    use tracing_subscriber::fmt::{format::Writer, time::FormatTime as _};
    let mut timestamp = String::new();
    let _ = tracing_subscriber::fmt::time::SystemTime.format_time(&mut Writer::new(&mut timestamp));
    format!(
        "{{\"timestamp\":{},\"level\":\"ERROR\",\"fields\":{{\"message\":{}}},\"target\":\"likekit_server\"}}",
        serde_json::Value::from(timestamp),
        serde_json::Value::from(message),
    )
}
