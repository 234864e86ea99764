//! How a server is set up: [`Config`] and its parts.

use std::{
    fmt,
    net::{Ipv4Addr, SocketAddr},
    num::NonZeroU32,
    path::PathBuf,
    time::Duration,
};

use likekit_proto::admin::Seed;

use crate::store::{Database, HotPostOptions};

/// The largest request body a server takes by default: 128 KiB, so that
/// the longest friend list the schema allows fits (5,000 ids of 19
/// digits, written with `", "` between them: 105,013 bytes). Two bodies
/// may be larger: a seed document, which has no bound, and a fault rule
/// set near its 256 rules with every field written out (256 such rules
/// without a `body` come to about 137 KB). They go in with a larger
/// `--max-body-bytes`, several requests, or (a seed) `--seed FILE`.
pub const DEFAULT_MAX_BODY_BYTES: usize = 128 * 1024;

/// The most posts the view cache holds by default: 200,000, about 260 MB
/// with 100 recent likers each.
pub const DEFAULT_POST_CACHE_ENTRIES: usize = 200_000;

/// The friend-set cache's byte budget by default: 256 MiB, about 23,000
/// viewers with 300 friends each, or 1,500 with 5,000 (names of 10
/// characters).
pub const DEFAULT_FRIENDS_CACHE_BYTES: usize = 256 << 20;

/// A per-user limit on likes and unlikes (a token bucket).
///
/// Writes beyond it are answered `429` with a `Retry-After` header.
///
/// ```
/// use std::num::NonZeroU32;
/// let limit = likekit_server::RateLimit {
///     per_second: NonZeroU32::new(5).unwrap(),
///     burst: NonZeroU32::new(10).unwrap(),
/// };
/// assert_eq!(limit.burst.get(), 10);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Sustained writes per second per user.
    pub per_second: NonZeroU32,
    /// How many writes a user may make at once before the rate applies.
    pub burst: NonZeroU32,
}

impl Default for RateLimit {
    /// 50 writes per second per user with bursts of 200: far beyond any
    /// human, low enough to stop a runaway client.
    fn default() -> Self {
        Self {
            per_second: NonZeroU32::new(50).expect("50 is not zero"),
            burst: NonZeroU32::new(200).expect("200 is not zero"),
        }
    }
}

/// Everything [`spawn`](crate::spawn) needs to start a server.
///
/// `Config::default()` is what in-process tests want: a private in-memory
/// database, a random free port on `127.0.0.1`, a random token secret, the
/// admin API off. Fill in the fields you need:
///
/// ```
/// use std::time::Duration;
/// let config = likekit_server::Config {
///     admin_key: Some("secret-admin-key".into()),
///     cache_ttl: Duration::from_millis(100),
///     ..Default::default()
/// };
/// assert_eq!(config.listen.port(), 0);
/// ```
#[derive(Clone)]
pub struct Config {
    /// The address to listen on; port 0 picks a free port (see
    /// [`ServerHandle::addr`](crate::ServerHandle::addr)).
    pub listen: SocketAddr,
    /// The database: SQLite (a file or a throwaway one) or PostgreSQL.
    pub database: Database,
    /// Users, friendships, posts and likes to load at start (idempotent:
    /// loading the same seed twice changes nothing).
    pub seed: Option<Seed>,
    /// Turns the admin API on; requests must carry it in `X-Admin-Key`.
    pub admin_key: Option<String>,
    /// The HS256 secret for sign-in tokens; random for each start when `None`.
    pub token_secret: Option<String>,
    /// Browser origins allowed by CORS (none by default), such as
    /// `http://localhost:5173`; `*` allows any origin. Each is read by
    /// [`cors_origin`]: one that is not `scheme://host[:port]` stops the
    /// start.
    pub cors_origins: Vec<String>,
    /// The per-user write limit; `None` turns it off.
    pub write_rate_limit: Option<RateLimit>,
    /// How long a post's count, version and recent likers are served from
    /// the cache before they are read again.
    pub cache_ttl: Duration,
    /// How long a viewer's friend set is cached. Admin changes to friends and
    /// names take effect at once on this server regardless.
    pub friends_ttl: Duration,
    /// The most posts the view cache holds (each a count, a version and up
    /// to 100 recent likers: about 1.3 KB with all 100).
    pub cache_capacity: usize,
    /// The most bytes the cached friend sets take together (a set weighs
    /// about 1 KiB plus 12 bytes and its name twice per friend); a set
    /// that does not fit is read again on each view until a sweep makes
    /// room. By default [`DEFAULT_FRIENDS_CACHE_BYTES`].
    pub friends_cache_bytes: usize,
    /// Requests taking longer (injected latency included) are answered `503`.
    pub request_timeout: Duration,
    /// The largest request body accepted; larger ones get `413`. By
    /// default [`DEFAULT_MAX_BODY_BYTES`].
    pub max_body_bytes: usize,
    /// How long shutdown waits for in-flight requests before closing their
    /// connections. Writes already handed to the store are committed anyway.
    pub shutdown_grace: Duration,
    /// How long a stopping server keeps serving, with `/readyz` answering
    /// `503`, before it stops accepting connections: time for a load
    /// balancer to see it is going and send new requests elsewhere. Default
    /// 0: stop accepting at once.
    pub shutdown_delay: Duration,
    /// Read-only SQLite connections in the pool; 0 picks one from the number
    /// of CPUs.
    pub read_connections: usize,
    /// The most likes/unlikes committed in one group-commit transaction.
    pub max_group_commit: usize,
    /// PostgreSQL connections in the pool; 0 picks one from the number of
    /// CPUs. Not used with SQLite.
    pub db_connections: usize,
    /// How many requests the request journal (`GET /admin/requests`) keeps;
    /// it is on only with an admin key, and 0 turns it off.
    pub journal_size: usize,
    /// On Citus, send likes, unlikes and views' one-post reads straight to
    /// the worker holding the post rather than through the node the
    /// database URL names (default `true`). Not used with SQLite.
    pub citus_direct: bool,
    /// When a post counts as hot and how many shard rows its count spreads
    /// over then (both backends).
    pub hot_posts: HotPostOptions,
    /// A folder of static files (the web demo page) served at `/` for every
    /// path no API route matches; missing files get the JSON 404. `None`
    /// (the default) serves no files.
    pub web_root: Option<PathBuf>,
    /// A second address for the operations routes — `/metrics`,
    /// `/openapi.json` and `/admin/*` — which then leave the public one
    /// (the probes answer on both). `None` (the default): everything on
    /// `listen`.
    pub ops_listen: Option<SocketAddr>,
    /// The header-read (and idle keep-alive) timeout and the cap on open
    /// connections, on each listener.
    pub connections: crate::net::ConnectionLimits,
    /// Tokens signed by an identity provider (its JWKS, `iss`, `aud`).
    /// With it, HS256 tokens are taken only when `token_secret` is given.
    /// `None` (the default): HS256 tokens with `token_secret`. A key set
    /// at a URL must be `https://` (`http://` only on loopback) and is
    /// fetched before the server listens: a set that cannot be fetched or
    /// read then stops the start with [`Error::Config`](crate::Error::Config).
    pub token_policy: Option<crate::jwks::TokenPolicy>,
    /// CA certificates (PEM) that sign PostgreSQL's certificate, for
    /// `sslmode=verify-ca` / `verify-full` in the database URL (in place of
    /// its `sslrootcert`), or `require`, which then checks the chain as
    /// `verify-ca` does (libpq's rule). With `sslmode=disable` or none, the
    /// start is refused: there is no TLS for the file to check.
    pub db_ca_file: Option<PathBuf>,
    /// How long the start waits for a PostgreSQL server that is not up
    /// yet: a refused connection, a timeout, a host name not known yet or
    /// a database still starting up is tried again (with a growing pause,
    /// and a log line per try) until this has passed. Any other failure
    /// (a password, TLS, a missing database) stops the start at once.
    /// Default 0: no waiting (the binary's `--db-wait-secs` is 30).
    pub db_start_wait: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            database: Database::Memory,
            seed: None,
            admin_key: None,
            token_secret: None,
            cors_origins: Vec::new(),
            write_rate_limit: Some(RateLimit::default()),
            cache_ttl: Duration::from_secs(1),
            friends_ttl: Duration::from_secs(30),
            cache_capacity: DEFAULT_POST_CACHE_ENTRIES,
            friends_cache_bytes: DEFAULT_FRIENDS_CACHE_BYTES,
            request_timeout: Duration::from_secs(30),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            shutdown_grace: Duration::from_secs(10),
            shutdown_delay: Duration::ZERO,
            read_connections: 0,
            max_group_commit: 1024,
            db_connections: 0,
            citus_direct: true,
            journal_size: crate::journal::DEFAULT_JOURNAL_SIZE,
            hot_posts: HotPostOptions::default(),
            web_root: None,
            ops_listen: None,
            connections: crate::net::ConnectionLimits::default(),
            token_policy: None,
            db_ca_file: None,
            db_start_wait: Duration::ZERO,
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn redact(secret: &Option<String>) -> &'static str {
            if secret.is_some() { "<set>" } else { "<none>" }
        }
        f.debug_struct("Config")
            .field("listen", &self.listen)
            .field("database", &self.database)
            .field("seed", &self.seed.as_ref().map(|_| "<seed>"))
            .field("admin_key", &redact(&self.admin_key))
            .field("token_secret", &redact(&self.token_secret))
            .field("cors_origins", &self.cors_origins)
            .field("write_rate_limit", &self.write_rate_limit)
            .field("cache_ttl", &self.cache_ttl)
            .field("friends_ttl", &self.friends_ttl)
            .field("cache_capacity", &self.cache_capacity)
            .field("friends_cache_bytes", &self.friends_cache_bytes)
            .field("request_timeout", &self.request_timeout)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("shutdown_delay", &self.shutdown_delay)
            .field("read_connections", &self.read_connections)
            .field("max_group_commit", &self.max_group_commit)
            .field("db_connections", &self.db_connections)
            .field("citus_direct", &self.citus_direct)
            .field("journal_size", &self.journal_size)
            .field("hot_posts", &self.hot_posts)
            .field("web_root", &self.web_root)
            .field("db_start_wait", &self.db_start_wait)
            .finish()
    }
}

/// One CORS origin as a browser sends it in `Origin`, from `text`:
/// whitespace around it dropped, scheme and host in lower case, the
/// scheme's default port (`:443`, `:80`) left out; `*` stays `*`.
///
/// # Errors
///
/// Why `text` is not `scheme://host[:port]`: empty, no scheme, a path or a
/// trailing slash (a browser's `Origin` has neither, so it would never
/// match), a user name, or a bad port.
///
/// ```
/// use likekit_server::cors_origin;
/// assert_eq!(cors_origin(" https://App.example ").unwrap(), "https://app.example");
/// assert_eq!(cors_origin("http://localhost:5173").unwrap(), "http://localhost:5173");
/// assert_eq!(cors_origin("https://a.example:443").unwrap(), "https://a.example");
/// assert!(cors_origin("https://a.example/").unwrap_err().contains("never matches"));
/// assert!(cors_origin("not a url").is_err());
/// ```
pub fn cors_origin(text: &str) -> Result<String, String> {
    const SHAPE: &str = "an origin is scheme://host[:port], such as https://app.example \
                         or http://localhost:5173";
    let origin = text.trim();
    if origin == "*" {
        return Ok(origin.to_owned());
    }
    if origin.is_empty() {
        return Err(format!("an empty origin (a comma too many?): {SHAPE}"));
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return Err(format!("{origin:?} has no scheme: {SHAPE}"));
    };
    let scheme_ok = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return Err(format!("{origin:?} has no scheme: {SHAPE}"));
    }
    if rest.contains(['/', '?', '#']) {
        return Err(format!(
            "{origin:?} has a path or a trailing slash, which never matches (a browser's \
             Origin has none): {SHAPE}"
        ));
    }
    if rest.contains('@') {
        return Err(format!("{origin:?} has a user name: {SHAPE}"));
    }
    let (host, port) = match rest.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((inside, after)) => (format!("[{inside}]"), after.strip_prefix(':')),
            None => return Err(format!("{origin:?} has an unclosed [: {SHAPE}")),
        },
        None => match rest.split_once(':') {
            Some((host, port)) => (host.to_owned(), Some(port)),
            None => (rest.to_owned(), None),
        },
    };
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '[' | ']' | ':'));
    if !host_ok {
        return Err(format!("{origin:?} has no valid host: {SHAPE}"));
    }
    let scheme = scheme.to_ascii_lowercase();
    let host = host.to_ascii_lowercase();
    let port = match port {
        None => None,
        Some(port) => match port.parse::<u16>() {
            Ok(443) if scheme == "https" => None,
            Ok(80) if scheme == "http" => None,
            Ok(port) => Some(port),
            Err(_) => return Err(format!("{origin:?} has a bad port: {SHAPE}")),
        },
    };
    Ok(match port {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn cors_origins_are_trimmed_and_checked() {
        for (given, want) in [
            ("  https://a.example ", "https://a.example"),
            ("HTTPS://A.Example:8443", "https://a.example:8443"),
            ("http://localhost:80", "http://localhost"),
            ("http://[::1]:5173", "http://[::1]:5173"),
            ("*", "*"),
            (" * ", "*"),
        ] {
            assert_eq!(cors_origin(given).as_deref(), Ok(want), "{given}");
        }
        for (bad, why) in [
            ("https://a.example/", "never matches"),
            ("https://a.example/app", "never matches"),
            ("not a url", "no scheme"),
            ("a.example", "no scheme"),
            ("", "empty"),
            ("https://", "no valid host"),
            ("https://a b", "no valid host"),
            ("https://a.example:99999", "bad port"),
            ("https://ana@a.example", "user name"),
        ] {
            let err = cors_origin(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
            assert!(err.contains("scheme://host[:port]"), "{bad}: {err}");
        }
    }

    #[test]
    fn debug_never_shows_secrets() {
        let config = Config {
            admin_key: Some("hunter2".into()),
            token_secret: Some("s3cret".into()),
            database: Database::Postgres("postgres://ana:pa55word@db/likes".into()),
            ..Config::default()
        };
        let shown = format!("{config:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(!shown.contains("pa55word"), "{shown}");
        assert!(shown.contains("postgres://ana:***@db/likes"), "{shown}");
        assert!(shown.contains("<set>"), "{shown}");
    }
}
