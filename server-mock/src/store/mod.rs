//! Storage behind the server: the [`Store`] trait, its SQLite and PostgreSQL
//! backends, hot-post sharding shared by both, and a test suite every backend
//! must pass.
//!
//! A backend keeps, per post, its exact `count`, a `version` that grows by one
//! with every real change, and its last [`RECENT_LIKERS`] likers (newest
//! first), beside the like rows themselves; a like or unlike changes the row
//! and the post in one transaction.
//!
//! A hot post's count and version may be spread over shard rows and summed on
//! read; see [`hot`] for the rules that keep them exact.
//!
//! The server reaches storage only through `Arc<dyn Store>`. Each backend
//! sits behind a cargo feature (`sqlite`, `postgres`; both on by default)
//! and proves itself with the shared store suite of the `likekit-testing`
//! crate. The rules every backend applies to its input (names, friend
//! lists) live in [`rules`].
//!
//! Ids reach a store already valid: [`PostId`] and [`UserId`] can only hold
//! `1..=i64::MAX` (their constructor in `likekit_proto` is the one home of
//! that rule), so a backend stores them with [`PostId::as_i64`] as they are.

use std::{fmt, path::PathBuf, str::FromStr, sync::Arc};

use async_trait::async_trait;
pub use likekit_proto::RECENT_LIKERS;
use likekit_proto::{LikeState, PostId, UserId, admin::Seed};

pub mod hot;
#[cfg(feature = "postgres")]
mod postgres;
pub(crate) mod postgres_url;
pub mod rules;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use hot::{HotPostOptions, HotPosts, MAX_SHARDS};
#[cfg(feature = "postgres")]
pub(crate) use postgres::target as postgres_target;
#[cfg(feature = "postgres")]
pub use postgres::{
    CITUS_LAYOUT, CITUS_STATEMENTS, Layout, MIGRATIONS as POSTGRES_MIGRATIONS, PgTls,
    PostgresOptions, PostgresStore, SslMode, hashint8,
};
pub(crate) use postgres_url::redact_url;
pub use rules::{MAX_FRIENDS, MAX_NAME_CHARS};
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteOptions, SqliteStore};

/// Where the server keeps its data.
///
/// A `--db` value starting with `postgres://` or `postgresql://` (the
/// scheme in any case) is a PostgreSQL database; `:memory:` a throwaway
/// SQLite one; anything else a SQLite file — except a value with another
/// URL scheme (`mysql://…`) or one that reads as a libpq `key=value`
/// connection string (`host=db dbname=likes`), which are refused
/// ([`BadDatabase`]) rather than taken as a file name. A file whose name
/// starts with a libpq keyword and `=` is written with a folder in front
/// (`./dbname=likes.db`); `=` further on (`/data/run=3/likes.db`) is fine.
///
/// ```
/// use likekit_server::Database;
/// assert_eq!(":memory:".parse::<Database>().unwrap(), Database::Memory);
/// assert_eq!(
///     "likes.db".parse::<Database>().unwrap(),
///     Database::File("likes.db".into())
/// );
/// assert_eq!(
///     "postgres://likekit@db/likes".parse::<Database>().unwrap(),
///     Database::Postgres("postgres://likekit@db/likes".into())
/// );
/// // Shown without its password.
/// let db: Database = "postgresql://ana:s3cret@db/likes".parse().unwrap();
/// assert_eq!(db.to_string(), "postgresql://ana:***@db/likes");
/// assert!("Postgres://db/likes".parse::<Database>().is_ok());
/// assert!("mysql://db/likes".parse::<Database>().is_err());
/// assert!("host=db dbname=likes".parse::<Database>().is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Default)]
pub enum Database {
    /// A throwaway database that lives as long as the server. It is kept in a
    /// private temporary directory (deleted at shutdown) so that readers and
    /// the writer still work side by side in WAL mode; it is not fsynced.
    #[default]
    Memory,
    /// A SQLite file, created when missing. Commits are written to the WAL
    /// with `synchronous=NORMAL` and fsynced by a thread of their own before
    /// any write is acknowledged (pipelined group commit: as durable as
    /// `synchronous=FULL`). After a failed fsync the store takes no more
    /// writes until the server restarts.
    File(PathBuf),
    /// A PostgreSQL database, by URL (`postgres://user:password@host:port/db`).
    /// The schema is created or migrated at start; every commit is durable
    /// (`synchronous_commit = on`) before a write is acknowledged.
    Postgres(String),
}

/// Why a `--db` value names no database this server can open (see
/// [`Database`]). The message never shows a password.
///
/// ```
/// let err = "mysql://db/likes".parse::<likekit_server::Database>().unwrap_err();
/// assert!(err.to_string().contains("postgres://"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadDatabase(String);

/// libpq's connection keywords: a value starting with one of them and `=`
/// is a `key=value` connection string, not a file name.
const LIBPQ_KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "target_session_attrs",
    "service",
    "channel_binding",
    "gssencmode",
];

/// The URL scheme of `s` (`mysql` in `mysql://…`), if it has one. A
/// single letter is a Windows drive, not a scheme.
fn url_scheme(s: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = s.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (scheme.len() > 1
        && first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some((scheme, rest))
}

impl FromStr for Database {
    type Err = BadDatabase;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const USE: &str = "give a SQLite file path, `:memory:`, or a \
                           `postgres://user:password@host:port/database` URL";
        if s == ":memory:" {
            return Ok(Self::Memory);
        }
        if s.trim().is_empty() {
            return Err(BadDatabase(format!("the database is empty: {USE}")));
        }
        if let Some((scheme, rest)) = url_scheme(s) {
            let lower = scheme.to_ascii_lowercase();
            if lower == "postgres" || lower == "postgresql" {
                return Ok(Self::Postgres(format!("{lower}://{rest}")));
            }
            return Err(BadDatabase(format!(
                "{scheme}:// is not a database this server opens: {USE}"
            )));
        }
        let first = s.split_whitespace().next().unwrap_or_default();
        if first
            .split_once('=')
            .is_some_and(|(key, _)| LIBPQ_KEYWORDS.contains(&key))
        {
            return Err(BadDatabase(format!(
                "{:?} reads as a libpq key=value connection string, which is not \
                 taken: use a `postgres://user:password@host:port/database` URL \
                 (for a SQLite file of that name, write ./ in front)",
                redact_url(s)
            )));
        }
        Ok(Self::File(PathBuf::from(s)))
    }
}

/// Like `Display`: a PostgreSQL URL is shown without its password.
impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Memory => f.write_str("Memory"),
            Self::File(path) => f.debug_tuple("File").field(path).finish(),
            Self::Postgres(url) => f.debug_tuple("Postgres").field(&redact_url(url)).finish(),
        }
    }
}

impl fmt::Display for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Memory => f.write_str(":memory:"),
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Postgres(url) => f.write_str(&redact_url(url)),
        }
    }
}

/// A post as the view path needs it: exact as of the moment it was read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PostSnapshot {
    /// How many users like the post.
    pub count: u64,
    /// Grows by one with every real change of the post's likes.
    pub version: u64,
    /// Up to [`RECENT_LIKERS`] users who like the post, newest first. An
    /// unlike removes its user; the list refills with later likes.
    pub recent_likers: Vec<UserId>,
}

/// The result of one like or unlike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    /// The post's count and version read in the write's own transaction, and
    /// the caller's state after it.
    pub state: LikeState,
    /// Whether a row was really inserted (like) or deleted (unlike).
    pub changed: bool,
    /// The post as of this write, when the backend has it at hand; the server
    /// refreshes its view cache with it. A backend may leave it out (for
    /// example when a hot post's count is spread over shard rows).
    pub snapshot: Option<Arc<PostSnapshot>>,
}

/// One post's books, for checking that counts are exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostAudit {
    /// The post.
    pub post: PostId,
    /// The stored count (the post's row plus its shard rows).
    pub count: u64,
    /// The number of like rows for the post.
    pub rows: u64,
    /// The stored version (the post's row plus its shard rows).
    pub version: u64,
    /// How many shard rows the post's count is spread over (0 unless the
    /// post has been hot).
    pub shard_rows: u64,
}

/// Whether an admin "create" made something new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upsert {
    /// It did not exist and was created.
    Created,
    /// It existed (and was updated, for a user's name).
    Updated,
}

/// One connection pool of a store as it is now, for `/metrics` (the
/// `likekit_db_pool_*` series; see [`Store::pools`]).
///
/// ```
/// use likekit_server::store::PoolStatus;
///
/// let pool = PoolStatus {
///     name: "main".into(),
///     max: 8,
///     size: 3,
///     idle: 1,
///     waiting: 0,
/// };
/// assert_eq!(pool.in_use(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolStatus {
    /// The `pool` label: `main` for the store's own pool, `worker:HOST:PORT`
    /// for a Citus worker's (direct routing).
    pub name: String,
    /// The most connections the pool opens.
    pub max: usize,
    /// Connections open now, idle or in use.
    pub size: usize,
    /// Open connections no one holds now.
    pub idle: usize,
    /// Tasks waiting for a connection now.
    pub waiting: usize,
}

impl PoolStatus {
    /// Open connections held now: [`size`](Self::size) less
    /// [`idle`](Self::idle), never below zero.
    pub fn in_use(&self) -> usize {
        self.size.saturating_sub(self.idle)
    }
}

/// A storage failure or a refused operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The post does not exist.
    #[error("there is no post {0}")]
    PostNotFound(PostId),
    /// The user does not exist.
    #[error("there is no user {0}")]
    UserNotFound(UserId),
    /// The input breaks a rule of [`rules`] (a blank name, too many
    /// friends).
    #[error("{0}")]
    Invalid(String),
    /// The store is shutting down and takes no more writes.
    #[error("the store is closed")]
    Closed,
    /// The database cannot take the request now, for a reason that passes:
    /// it is busy (a statement or a lock waited past its timeout, every
    /// connection is taken), read-only (a standby, or a primary set
    /// read-only), out of disk, or restarting. Trying again later is safe:
    /// a write that failed so changed nothing, or is idempotent. The
    /// server answers 503 `unavailable` with `Retry-After`.
    #[error("the database cannot take the request now: {0}")]
    Unavailable(String),
    /// The database failed.
    #[error("database error: {0}")]
    Backend(String),
}

#[cfg(feature = "sqlite")]
impl From<rusqlite::Error> for StoreError {
    fn from(err: rusqlite::Error) -> Self {
        Self::Backend(err.to_string())
    }
}

/// A post's stored `count` or `version` (`what`) as the audit reports it:
/// a sum below zero is drift the audit must show, not round to 0 (which
/// would match a post with no like rows), so it is an error naming the
/// post, the value and its like rows.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn audited(post: PostId, what: &str, value: i64, rows: u64) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| {
        StoreError::Backend(format!(
            "audit: post {post} has a stored {what} of {value} (below zero) and {rows} like rows"
        ))
    })
}

/// Where likes, posts, users and friendships live.
///
/// Every method is safe to call concurrently. Writes (`like`, `unlike`) are
/// exact (count changes only when a row really changes) and idempotent, and
/// on a durable database (a SQLite file, PostgreSQL) they are on disk when
/// they return `Ok`; a throwaway [`Database::Memory`] store is never
/// fsynced.
#[async_trait]
pub trait Store: Send + Sync + fmt::Debug + 'static {
    /// `user` likes `post`. Inserts the (user, post) row if missing; only then
    /// the count and version go up by one and the user goes to the front of
    /// the recent likers. [`StoreError::PostNotFound`] for an unknown post.
    async fn like(&self, user: UserId, post: PostId) -> Result<WriteOutcome, StoreError>;

    /// `user` no longer likes `post`. Deletes the row if present; only then
    /// the count goes down and the version up by one, and the user leaves the
    /// recent likers. [`StoreError::PostNotFound`] for an unknown post.
    async fn unlike(&self, user: UserId, post: PostId) -> Result<WriteOutcome, StoreError>;

    /// A post's count, version and recent likers; `None` if it does not exist.
    async fn post(&self, post: PostId) -> Result<Option<PostSnapshot>, StoreError>;

    /// Whether `user` likes each of `posts` (unknown posts: `false`), read
    /// from the user's own rows, never from a cache.
    async fn liked(&self, user: UserId, posts: &[PostId]) -> Result<Vec<bool>, StoreError>;

    /// [`post`](Self::post) and whether `user` likes it (from the user's
    /// own row, as [`liked`](Self::liked)): a view's read when the post is
    /// not cached. `None` if the post does not exist. By default the two
    /// reads run at once; a backend may answer both with one query.
    async fn post_seen_by(
        &self,
        user: UserId,
        post: PostId,
    ) -> Result<Option<(PostSnapshot, bool)>, StoreError> {
        let posts = [post];
        let (snapshot, liked) = tokio::join!(self.post(post), self.liked(user, &posts));
        let Some(snapshot) = snapshot? else {
            return Ok(None);
        };
        Ok(Some((snapshot, liked?.first().copied().unwrap_or(false))))
    }

    /// `user`'s friends (their own, directed list) with display names.
    /// Empty for unknown users.
    async fn friends(&self, user: UserId) -> Result<Vec<(UserId, String)>, StoreError>;

    /// `user`'s display name; `None` for an unknown user.
    async fn user_name(&self, user: UserId) -> Result<Option<String>, StoreError>;

    /// Creates a user, or renames an existing one.
    async fn put_user(&self, user: UserId, name: &str) -> Result<Upsert, StoreError>;

    /// Creates a post with no likes; an existing post is left as it is.
    async fn put_post(&self, post: PostId) -> Result<Upsert, StoreError>;

    /// Replaces `user`'s friend list. Every id must be a user.
    async fn set_friends(&self, user: UserId, friends: &[UserId]) -> Result<(), StoreError>;

    /// Loads a seed document in one transaction: users (names), friend lists
    /// (replaced), posts, and likes in the order given (oldest first).
    /// Loading the same seed again changes nothing.
    async fn seed(&self, seed: &Seed) -> Result<(), StoreError>;

    /// Drops every like and sets every post back to count 0, version 0, no
    /// likers; users, friendships and posts stay.
    async fn reset(&self) -> Result<(), StoreError>;

    /// Every post's stored count beside its actual number of like rows.
    async fn audit(&self) -> Result<Vec<PostAudit>, StoreError>;

    /// Whether the store can serve requests now: `/readyz` asks it (within
    /// its own deadline). By default one post's row, read as a view reads
    /// it, past every cache; a backend with more than one part to fail
    /// checks each.
    async fn ready(&self) -> Result<(), StoreError> {
        self.post(PostId::MIN).await.map(drop)
    }

    /// Commits every write already accepted, then refuses new ones with
    /// [`StoreError::Closed`]. Reads keep working. Idempotent.
    async fn close(&self) -> Result<(), StoreError>;

    /// The hot-post tracker, for backends that spread hot posts' counts over
    /// shard rows (its threshold and shard count can be changed at run time).
    fn hot_posts(&self) -> Option<&HotPosts> {
        None
    }

    /// The store's connection pools as they are now, for `/metrics`
    /// (`likekit_db_pool_*`), asked at each scrape: it must be cheap and do
    /// no I/O. Only the pools the store holds at that moment: a pool it
    /// has let go of is not reported. None by default; the SQLite store
    /// keeps no such pool (one writer connection and a fixed set of
    /// readers opened at start) and reports none.
    fn pools(&self) -> Vec<PoolStatus> {
        Vec::new()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn database_values() {
        let parse = |s: &str| s.parse::<Database>();
        assert_eq!(parse(":memory:"), Ok(Database::Memory));
        for (given, url) in [
            ("postgres://db/likes", "postgres://db/likes"),
            ("Postgres://ana@db/likes", "postgres://ana@db/likes"),
            ("POSTGRESQL://db:5433/likes", "postgresql://db:5433/likes"),
        ] {
            assert_eq!(parse(given), Ok(Database::Postgres(url.into())), "{given}");
        }
        // Files, `=` after the start of the name included.
        for file in [
            "likes.db",
            "/data/run=3/likes.db",
            "./dbname=likes.db",
            "C://likes.db",
            "my host=x",
        ] {
            assert_eq!(parse(file), Ok(Database::File(file.into())), "{file}");
        }
        // Another scheme, a libpq string, nothing: refused, never a file.
        for bad in ["mysql://x", "file:///tmp/x.db", "sqlite://x.db"] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(err.contains("is not a database this server opens"), "{err}");
            assert!(err.contains("postgres://"), "{err}");
        }
        for bad in [
            "host=127.0.0.1 user=x dbname=y",
            "dbname=likes",
            "user=ana password=s3cret host=db",
        ] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(err.contains("libpq key=value"), "{err}");
            assert!(err.contains("postgres://"), "{err}");
            assert!(!err.contains("s3cret"), "{err}");
        }
        for empty in ["", "  "] {
            let err = parse(empty).unwrap_err().to_string();
            assert!(err.contains("empty"), "{err}");
        }
    }

    #[test]
    fn connections_in_use_are_never_below_zero() {
        let pool = |size, idle| PoolStatus {
            name: "main".into(),
            max: 8,
            size,
            idle,
            waiting: 0,
        };
        assert_eq!(pool(5, 2).in_use(), 3);
        assert_eq!(pool(5, 5).in_use(), 0);
        assert_eq!(pool(0, 0).in_use(), 0);
        // Read at a moment a connection was being handed back.
        assert_eq!(pool(2, 3).in_use(), 0);
    }

    /// The start-up log's PostgreSQL line: host, port, database and user,
    /// never the password.
    #[cfg(feature = "postgres")]
    #[test]
    fn postgres_targets_leave_the_password_out() {
        for (url, shown) in [
            (
                "postgres://ana:s3cret@db.internal:5433/likes?sslmode=require",
                "db.internal:5433/likes as ana",
            ),
            ("postgresql://ana@db/likes", "db:5432/likes as ana"),
            (
                "postgres://ana:s3cret@a,b:6432/likes",
                "a:5432,b:6432/likes as ana",
            ),
        ] {
            assert_eq!(postgres_target(url), shown, "{url}");
        }
        assert!(!postgres_target("postgres://ana:s3cret@[bad").contains("s3cret"));
    }
}
