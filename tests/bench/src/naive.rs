//! The naive baseline: `GET /posts/{id}/likes` computed from the like rows
//! on every request, with no cache at all, served by a small axum server of
//! its own (`likekit-bench naive`) reading the same database as the server
//! under test —
//!
//! * `count` is `SELECT COUNT(*)` over the post's like rows,
//! * `liked_by_me` is the viewer's row,
//! * `friends` joins the post's like rows against the viewer's friend list
//!   (at most 100 names, the bound of the real recent-likers list).
//!
//! On SQLite it runs on its own read-only connections to the file, with the
//! store's connection settings; on PostgreSQL on its own pool of
//! connections, one statement per read as above. It checks the same bearer
//! tokens (the server's [`Tokens`]) and answers errors with the same JSON
//! body, on the same HTTP stack as the bare route ([`crate::serve`]), so the
//! difference measured is the view's design.

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
    Json, Router,
    extract::{Path as UrlPath, State, rejection::PathRejection},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use likekit_server::{
    Database, Tokens,
    wire::{PostId, PostLikes, UserId},
};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use tokio_postgres::NoTls;

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
pub enum NaiveViews {
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
    pub fn open(database: &Database, connections: usize) -> Result<Self, String> {
        match database {
            Database::File(path) => {
                let connections = (0..connections.max(1))
                    .map(|_| open_reader(path).map(Mutex::new))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
                Ok(Self::Sqlite {
                    connections: connections.into_boxed_slice(),
                    next: AtomicUsize::new(0),
                })
            }
            Database::Postgres(url) => {
                let mut config = tokio_postgres::Config::from_str(url)
                    .map_err(|e| format!("bad PostgreSQL URL: {e}"))?;
                config.application_name("likekit-bench-naive");
                config.connect_timeout(Duration::from_secs(10));
                let manager = Manager::from_config(
                    config,
                    NoTls,
                    ManagerConfig {
                        recycling_method: RecyclingMethod::Fast,
                    },
                );
                let pool = Pool::builder(manager)
                    .max_size(connections.max(8))
                    .build()
                    .map_err(|e| format!("PostgreSQL connection pool: {e}"))?;
                Ok(Self::Postgres(pool))
            }
            Database::Memory => {
                Err("the naive baseline needs a SQLite database file or a PostgreSQL URL".into())
            }
        }
    }

    /// The view computed from the rows; `None` when the post does not exist.
    pub async fn view(&self, viewer: UserId, post: PostId) -> Result<Option<PostLikes>, String> {
        let (post, viewer) = (
            i64::try_from(post.get()).unwrap_or(i64::MAX),
            i64::try_from(viewer.get()).unwrap_or(i64::MAX),
        );
        match self {
            Self::Sqlite { connections, next } => {
                sqlite_view(connections, next, viewer, post).map_err(|e| e.to_string())
            }
            Self::Postgres(pool) => postgres_view(pool, viewer, post)
                .await
                .map_err(|e| e.to_string()),
        }
    }
}

async fn postgres_view(
    pool: &Pool,
    viewer: i64,
    post: i64,
) -> Result<Option<PostLikes>, Box<dyn std::error::Error>> {
    let client = pool.get().await?;
    let statement = client.prepare_cached(PG_POST).await?;
    let Some(row) = client.query_opt(&statement, &[&post, &viewer]).await? else {
        return Ok(None);
    };
    let (version, count, liked_by_me): (i64, i64, bool) = (row.get(0), row.get(1), row.get(2));
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

/// What the naive server shares between requests.
#[derive(Debug)]
struct Naive {
    views: NaiveViews,
    tokens: Tokens,
}

/// The naive server's routes: `GET /posts/{post_id}/likes` and `/healthz`.
pub fn router(views: NaiveViews, tokens: Tokens) -> Router {
    Router::new()
        .route("/posts/{post_id}/likes", get(post_likes))
        .route(
            "/healthz",
            get(|| async { crate::serve::fixed_json(r#"{"status":"ok"}"#) }),
        )
        .with_state(Arc::new(Naive { views, tokens }))
}

/// The server's error body: `{"error":{"code":…,"message":…}}`.
fn error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = format!(
        r#"{{"error":{{"code":"{code}","message":"{}"}}}}"#,
        message.replace('\\', "\\\\").replace('"', "\\\"")
    );
    let mut response = (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, "Bearer".parse().expect("static"));
    }
    response
}

/// The signed-in viewer, or the 401's code and message.
fn viewer(tokens: &Tokens, headers: &HeaderMap) -> Result<UserId, (&'static str, String)> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .ok_or((
            "missing_token",
            "send Authorization: Bearer <token>".to_owned(),
        ))?;
    tokens
        .verify(token)
        .map_err(|e| ("invalid_token", e.to_string()))
}

/// `GET /posts/{post_id}/likes`, the naive way.
async fn post_likes(
    State(naive): State<Arc<Naive>>,
    headers: HeaderMap,
    post: Result<UrlPath<PostId>, PathRejection>,
) -> Response {
    let user = match viewer(&naive.tokens, &headers) {
        Ok(user) => user,
        Err((code, message)) => return error(StatusCode::UNAUTHORIZED, code, &message),
    };
    let Ok(UrlPath(post)) = post else {
        return error(StatusCode::BAD_REQUEST, "bad_post_id", "not a post id");
    };
    match naive.views.view(user, post).await {
        Ok(Some(view)) => Json(view).into_response(),
        Ok(None) => error(
            StatusCode::NOT_FOUND,
            "post_not_found",
            &format!("post {post} does not exist"),
        ),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal", &e),
    }
}
