//! The naive view, for the benchmark's baseline only (`--naive-views`,
//! hidden, never on by default): `GET /posts/{id}/likes` computed from the
//! like rows on every request, with no cache at all —
//!
//! * `count` is `SELECT COUNT(*)` over the post's like rows,
//! * `liked_by_me` is the viewer's row,
//! * `friends` joins the post's like rows against the viewer's friend list
//!   (at most 100 names, the bound of the real recent-likers list).
//!
//! It runs on its own read-only connections to the same SQLite file, with
//! the same connection settings and the same authentication and middleware
//! as the real route, so the difference measured is the view's design.

use std::{
    path::Path,
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

/// Read-only connections for the naive view.
pub(crate) struct NaiveViews {
    connections: Box<[Mutex<Connection>]>,
    next: AtomicUsize,
}

impl std::fmt::Debug for NaiveViews {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NaiveViews")
            .field("connections", &self.connections.len())
            .finish_non_exhaustive()
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
    /// Opens `connections` readers on the database file.
    pub(crate) fn open(database: &Database, connections: usize) -> Result<Self, Error> {
        let Database::File(path) = database else {
            return Err(Error::Config(
                "--naive-views needs a SQLite database file".into(),
            ));
        };
        let connections = (0..connections.max(1))
            .map(|_| open_reader(path).map(Mutex::new))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Error::Store(StoreError::from(e)))?;
        Ok(Self {
            connections: connections.into_boxed_slice(),
            next: AtomicUsize::new(0),
        })
    }

    fn with<T>(
        &self,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let n = self.connections.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        for i in 0..n {
            if let Ok(conn) = self.connections[(start + i) % n].try_lock() {
                return read(&conn);
            }
        }
        let conn = self.connections[start % n]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        read(&conn)
    }

    /// The view computed from the rows; `None` when the post does not exist.
    pub(crate) fn view(&self, viewer: UserId, post: PostId) -> rusqlite::Result<Option<PostLikes>> {
        let (post, viewer) = (post as i64, viewer as i64);
        self.with(|conn| {
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
}

/// `GET /posts/{post_id}/likes`, the naive way.
pub(crate) async fn post_likes(
    naive: Arc<NaiveViews>,
    State(_app): State<Arc<App>>,
    Viewer(user): Viewer,
    post: Result<UrlPath<String>, PathRejection>,
) -> Result<Json<PostLikes>, ApiError> {
    let post = parse_post_id(post)?;
    match naive.view(user, post).map_err(StoreError::from)? {
        Some(view) => Ok(Json(view)),
        None => Err(ApiError::post_not_found(post)),
    }
}
