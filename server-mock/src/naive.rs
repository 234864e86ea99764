//! The naive view, for the benchmark's baseline only (`--naive-views`,
//! hidden, never on by default): `GET /posts/{id}/likes` computed from the
//! like rows on every request, with no cache at all —
//!
//! * `count` is `SELECT COUNT(*)` over the post's like rows,
//! * `liked_by_me` is the viewer's row,
//! * `friends` joins the post's like rows against the viewer's friend list
//!   (at most 100 names, the bound of the real recent-likers list).
//!
//! On SQLite it runs on its own read-only connections to the same file, with
//! the same connection settings as the store; on PostgreSQL on its own pool
//! of connections to the same database, one statement per read as above.
//! Either way it has the same authentication and middleware as the real
//! route, so the difference measured is the view's design.

use std::{
    path::Path,
    str::FromStr,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use axum::{
    Json,
    extract::{Path as UrlPath, State, rejection::PathRejection},
};
use deadpool_postgres::Pool;
use likekit_core::wire::{PostId, PostLikes, UserId};
use rusqlite::{Connection, OpenFlags, OptionalExtension};

use crate::{
    api::{Viewer, parse_post_id},
    app::App,
    config::Database,
    error::{ApiError, Error},
    store::StoreError,
};

const POST: &str = "SELECT p.version, \
     (SELECT COUNT(*) FROM likes l WHERE l.post_id = p.id), \
     EXISTS (SELECT 1 FROM likes l WHERE l.post_id = p.id AND l.user_id = ?2) \
     FROM posts p WHERE p.id = ?1";
const FRIENDS: &str = "SELECT u.name FROM likes l \
     JOIN friends f ON f.friend_id = l.user_id \
     JOIN users u ON u.id = l.user_id \
     WHERE l.post_id = ?1 AND f.user_id = ?2 LIMIT 100";

/// The same reads on PostgreSQL (`$1` the post, `$2` the viewer).
const PG_POST: &str = "SELECT p.version, \
     (SELECT COUNT(*) FROM likes l WHERE l.post_id = p.id), \
     EXISTS (SELECT 1 FROM likes l WHERE l.post_id = p.id AND l.user_id = $2::bigint) \
     FROM posts p WHERE p.id = $1::bigint";
const PG_FRIENDS: &str = "SELECT u.name FROM likes l \
     JOIN friends f ON f.friend_id = l.user_id \
     JOIN users u ON u.id = l.user_id \
     WHERE l.post_id = $1::bigint AND f.user_id = $2::bigint LIMIT 100";

/// Connections for the naive view.
pub(crate) enum NaiveViews {
    /// Read-only connections to the SQLite file.
    Sqlite {
        connections: Box<[Mutex<Connection>]>,
        next: AtomicUsize,
    },
    /// A pool of connections to the PostgreSQL database.
    Postgres(Pool),
}

impl std::fmt::Debug for NaiveViews {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sqlite { connections, .. } => f
                .debug_struct("NaiveViews::Sqlite")
                .field("connections", &connections.len())
                .finish_non_exhaustive(),
            Self::Postgres(pool) => f
                .debug_struct("NaiveViews::Postgres")
                .field("pool", &pool.status())
                .finish_non_exhaustive(),
        }
    }
}

fn open_reader(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "query_only", "ON")?;
    conn.pragma_update(None, "mmap_size", 256 * 1024 * 1024)?;
    conn.set_prepared_statement_cache_capacity(16);
    Ok(conn)
}

impl NaiveViews {
    /// Opens `connections` readers on the database: a SQLite file's
    /// read-only connections, or a pool of that many PostgreSQL
    /// connections (at least eight, the store's own pool on a small
    /// machine), made on first use.
    pub(crate) fn open(database: &Database, connections: usize) -> Result<Self, Error> {
        match database {
            Database::File(path) => {
                let connections = (0..connections.max(1))
                    .map(|_| open_reader(path).map(Mutex::new))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| Error::Store(StoreError::from(e)))?;
                Ok(Self::Sqlite {
                    connections: connections.into_boxed_slice(),
                    next: AtomicUsize::new(0),
                })
            }
            Database::Postgres(url) => {
                let shown = crate::store::redact_url(url);
                let mut config = tokio_postgres::Config::from_str(url)
                    .map_err(|e| Error::Config(format!("bad PostgreSQL URL {shown}: {e}")))?;
                config.application_name("likekit-server-naive");
                config.connect_timeout(Duration::from_secs(10));
                let pool = crate::store::connection_pool(config, connections.max(8))
                    .map_err(Error::Config)?;
                Ok(Self::Postgres(pool))
            }
            Database::Memory => Err(Error::Config(
                "--naive-views needs a SQLite database file or a PostgreSQL URL".into(),
            )),
        }
    }

    /// The view computed from the rows; `None` when the post does not exist.
    pub(crate) async fn view(
        &self,
        viewer: UserId,
        post: PostId,
    ) -> Result<Option<PostLikes>, StoreError> {
        let (post, viewer) = (
            i64::try_from(post).unwrap_or(i64::MAX),
            i64::try_from(viewer).unwrap_or(i64::MAX),
        );
        match self {
            Self::Sqlite { connections, next } => Ok(sqlite_view(connections, next, viewer, post)?),
            Self::Postgres(pool) => {
                let client = pool.get().await?;
                let statement = client.prepare_cached(PG_POST).await?;
                let Some(row) = client.query_opt(&statement, &[&post, &viewer]).await? else {
                    return Ok(None);
                };
                let (version, count, liked_by_me): (i64, i64, bool) =
                    (row.get(0), row.get(1), row.get(2));
                let statement = client.prepare_cached(PG_FRIENDS).await?;
                let friends = client
                    .query(&statement, &[&post, &viewer])
                    .await?
                    .iter()
                    .map(|row| row.get(0))
                    .collect();
                Ok(Some(PostLikes {
                    count: count.max(0) as u64,
                    liked_by_me,
                    friends,
                    version: version.max(0) as u64,
                }))
            }
        }
    }
}

fn with_reader<T>(
    connections: &[Mutex<Connection>],
    next: &AtomicUsize,
    read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let n = connections.len();
    let start = next.fetch_add(1, Ordering::Relaxed);
    for i in 0..n {
        if let Ok(conn) = connections[(start + i) % n].try_lock() {
            return read(&conn);
        }
    }
    let conn = connections[start % n]
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    read(&conn)
}

fn sqlite_view(
    connections: &[Mutex<Connection>],
    next: &AtomicUsize,
    viewer: i64,
    post: i64,
) -> rusqlite::Result<Option<PostLikes>> {
    with_reader(connections, next, |conn| {
        let found = conn
            .prepare_cached(POST)?
            .query_row([post, viewer], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?, row.get(2)?))
            })
            .optional()?;
        let Some((version, count, liked_by_me)) = found else {
            return Ok(None);
        };
        let friends = conn
            .prepare_cached(FRIENDS)?
            .query_map([post, viewer], |row| row.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(Some(PostLikes {
            count: count.max(0) as u64,
            liked_by_me,
            friends,
            version: version.max(0) as u64,
        }))
    })
}

/// `GET /posts/{post_id}/likes`, the naive way.
pub(crate) async fn post_likes(
    naive: Arc<NaiveViews>,
    State(_app): State<Arc<App>>,
    Viewer(user): Viewer,
    post: Result<UrlPath<String>, PathRejection>,
) -> Result<Json<PostLikes>, ApiError> {
    let post = parse_post_id(post)?;
    match naive.view(user, post).await? {
        Some(view) => Ok(Json(view)),
        None => Err(ApiError::post_not_found(post)),
    }
}
