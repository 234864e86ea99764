//! The embedded SQLite backend.
//!
//! * **One writer, group commit.** A dedicated thread owns the only write
//!   connection. It takes every like/unlike waiting in its queue (up to
//!   [`SqliteOptions::max_group_commit`]), applies them one after another in a
//!   single `BEGIN IMMEDIATE` transaction — each with its own exact semantics
//!   and its own answer — commits once (WAL, `synchronous=FULL`: the commit
//!   is fsynced), and only then answers each waiter. Under load one fsync
//!   covers hundreds of writes; alone, a write costs one fsync as before.
//! * **Pooled readers.** Reads run on a pool of read-only connections (WAL
//!   lets them run beside the writer) with cached prepared statements. Each
//!   thread prefers "its" connection, so readers almost never wait for each
//!   other and there is no global lock on the read path.
//! * **Rows beside counts.** `likes(post_id, user_id)` is keyed by post first,
//!   and each `posts` row carries `count`, `version` and its recent likers (a
//!   BLOB of little-endian user ids, newest first), all changed in the like's
//!   transaction.

use std::{
    cell::Cell,
    collections::{HashMap, HashSet, hash_map::Entry},
    fmt,
    path::PathBuf,
    sync::{
        Arc, Mutex, PoisonError, TryLockError,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use async_trait::async_trait;
use likekit_core::wire::{LikeState, PostId, UserId, admin::Seed};
use rusqlite::{CachedStatement, Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use tokio::sync::{mpsc, oneshot, watch};

use super::{
    MAX_FRIENDS, PostAudit, PostSnapshot, RECENT_LIKERS, Store, StoreError, Upsert, WriteOutcome,
    check_id,
};
use crate::config::Database;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS users (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS friends (
    user_id   INTEGER NOT NULL REFERENCES users (id),
    friend_id INTEGER NOT NULL REFERENCES users (id),
    PRIMARY KEY (user_id, friend_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS posts (
    id      INTEGER PRIMARY KEY,
    count   INTEGER NOT NULL DEFAULT 0 CHECK (count >= 0),
    version INTEGER NOT NULL DEFAULT 0,
    likers  BLOB NOT NULL DEFAULT x''
);
CREATE TABLE IF NOT EXISTS likes (
    post_id INTEGER NOT NULL REFERENCES posts (id),
    user_id INTEGER NOT NULL,
    PRIMARY KEY (post_id, user_id)
) WITHOUT ROWID;
";

const SELECT_POST: &str = "SELECT count, version, likers FROM posts WHERE id = ?1";
const UPDATE_POST: &str = "UPDATE posts SET count = ?2, version = ?3, likers = ?4 WHERE id = ?1";
const INSERT_LIKE: &str =
    "INSERT INTO likes (post_id, user_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING";
const DELETE_LIKE: &str = "DELETE FROM likes WHERE post_id = ?1 AND user_id = ?2";
const SELECT_LIKED: &str = "SELECT 1 FROM likes WHERE post_id = ?1 AND user_id = ?2";
const SELECT_FRIENDS: &str = "SELECT f.friend_id, u.name FROM friends f \
     JOIN users u ON u.id = f.friend_id WHERE f.user_id = ?1";
const USER_EXISTS: &str = "SELECT 1 FROM users WHERE id = ?1";

/// How to open a [`SqliteStore`].
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// The database file, or a private temporary one.
    pub database: Database,
    /// Read-only connections in the pool; 0 picks `max(4, 2 × CPUs)`.
    pub read_connections: usize,
    /// The most writes committed in one transaction.
    pub max_group_commit: usize,
    /// Receives the number of writes in each group commit.
    pub group_commit_sizes: Option<metrics::Histogram>,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            database: Database::Memory,
            read_connections: 0,
            max_group_commit: 1024,
            group_commit_sizes: None,
        }
    }
}

/// The SQLite [`Store`]. See the module docs for how it works.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use likekit_server::store::{SqliteOptions, SqliteStore, Store};
/// let store = SqliteStore::open(SqliteOptions::default()).unwrap();
/// store.put_post(42).await.unwrap();
/// let outcome = store.like(7, 42).await.unwrap();
/// assert_eq!((outcome.state.count, outcome.state.version), (1, 1));
/// assert!(store.like(7, 42).await.unwrap().state.count == 1); // idempotent
/// store.close().await.unwrap();
/// # });
/// ```
pub struct SqliteStore {
    queue: mpsc::Sender<Command>,
    writer_done: watch::Receiver<bool>,
    readers: ReadPool,
    database: Database,
    _temp_dir: Option<Arc<tempfile::TempDir>>,
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore")
            .field("database", &self.database)
            .field("read_connections", &self.readers.connections.len())
            .finish_non_exhaustive()
    }
}

type Task = Box<dyn FnOnce(&mut Connection) + Send>;

enum Command {
    Write(WriteOp),
    Task(Task),
    Close,
}

struct WriteOp {
    user: UserId,
    post: PostId,
    like: bool,
    reply: oneshot::Sender<Result<WriteOutcome, StoreError>>,
}

fn to_sql_id(id: u64) -> i64 {
    // Ids are checked to be in 1..=i64::MAX before they reach SQL.
    i64::try_from(id).unwrap_or(i64::MAX)
}

fn from_sql_count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

impl SqliteStore {
    /// Opens (creating when missing) the database, starts the writer thread
    /// and the reader pool. Blocks briefly; call it from a blocking context or
    /// at startup.
    pub fn open(options: SqliteOptions) -> Result<Self, StoreError> {
        let (path, temp_dir, durable) = match &options.database {
            Database::File(path) => (path.clone(), None, true),
            Database::Memory => {
                let dir = tempfile::Builder::new()
                    .prefix("likekit-memory-")
                    .tempdir()
                    .map_err(|e| StoreError::Backend(format!("temporary directory: {e}")))?;
                (dir.path().join("likekit.db"), Some(Arc::new(dir)), false)
            }
        };
        let writer = open_writer(&path, durable)?;

        let read_connections = if options.read_connections == 0 {
            std::thread::available_parallelism()
                .map(|n| n.get() * 2)
                .unwrap_or(4)
                .max(4)
        } else {
            options.read_connections
        };
        let connections = (0..read_connections)
            .map(|_| open_reader(&path).map(Mutex::new))
            .collect::<Result<Vec<_>, _>>()?;

        let (queue, receiver) = mpsc::channel(16 * 1024);
        let (done_tx, writer_done) = watch::channel(false);
        let max_batch = options.max_group_commit.max(1);
        let sizes = options.group_commit_sizes.clone();
        // The temporary directory of an in-memory store lives until both the
        // writer and the readers are gone.
        let writer_temp_dir = temp_dir.clone();
        std::thread::Builder::new()
            .name("likekit-writer".into())
            .spawn(move || {
                run_writer(writer, receiver, max_batch, sizes);
                drop(writer_temp_dir);
                let _ = done_tx.send(true);
            })
            .map_err(|e| StoreError::Backend(format!("cannot start the writer thread: {e}")))?;

        Ok(Self {
            queue,
            writer_done,
            readers: ReadPool {
                connections: connections.into_boxed_slice(),
            },
            database: options.database,
            _temp_dir: temp_dir,
        })
    }

    async fn write(
        &self,
        user: UserId,
        post: PostId,
        like: bool,
    ) -> Result<WriteOutcome, StoreError> {
        check_id("user", user)?;
        check_id("post", post)?;
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(Command::Write(WriteOp {
                user,
                post,
                like,
                reply,
            }))
            .await
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }

    /// Runs `task` on the writer thread, between group commits.
    async fn on_writer<T, F>(&self, task: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let task: Task = Box::new(move |conn| {
            let _ = reply.send(task(conn));
        });
        self.queue
            .send(Command::Task(task))
            .await
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }
}

fn open_writer(path: &PathBuf, durable: bool) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Backend(format!(
            "cannot switch {} to WAL mode (got {mode})",
            path.display()
        )));
    }
    conn.pragma_update(None, "synchronous", if durable { "FULL" } else { "OFF" })?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.set_prepared_statement_cache_capacity(64);
    conn.execute_batch(SCHEMA)?;
    Ok(conn)
}

fn open_reader(path: &PathBuf) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "query_only", "ON")?;
    conn.pragma_update(None, "mmap_size", 256 * 1024 * 1024)?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

/// Read-only connections, each behind its own lock. A thread first tries the
/// connection its hint points at, then any free one, and only waits when all
/// are busy.
struct ReadPool {
    connections: Box<[Mutex<Connection>]>,
}

thread_local! {
    static READER_HINT: Cell<usize> = const { Cell::new(usize::MAX) };
}

static NEXT_HINT: AtomicUsize = AtomicUsize::new(0);

impl ReadPool {
    fn with<T>(
        &self,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let n = self.connections.len();
        let hint = READER_HINT.with(|hint| {
            if hint.get() == usize::MAX {
                hint.set(NEXT_HINT.fetch_add(1, Ordering::Relaxed));
            }
            hint.get()
        });
        for i in 0..n {
            match self.connections[(hint + i) % n].try_lock() {
                Ok(conn) => return read(&conn).map_err(StoreError::from),
                Err(TryLockError::Poisoned(poisoned)) => {
                    return read(&poisoned.into_inner()).map_err(StoreError::from);
                }
                Err(TryLockError::WouldBlock) => {}
            }
        }
        let conn = self.connections[hint % n]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        read(&conn).map_err(StoreError::from)
    }
}

/// A post row held by the writer during one transaction.
#[derive(Debug, Clone)]
struct PostRow {
    count: u64,
    version: u64,
    likers: Vec<UserId>,
    dirty: bool,
}

impl PostRow {
    fn load(stmt: &mut CachedStatement<'_>, post: PostId) -> rusqlite::Result<Option<Self>> {
        stmt.query_row([to_sql_id(post)], |row| {
            Ok(Self {
                count: from_sql_count(row.get(0)?),
                version: from_sql_count(row.get(1)?),
                likers: decode_likers(row.get_ref(2)?.as_blob().unwrap_or_default()),
                dirty: false,
            })
        })
        .optional()
    }

    fn store(&self, stmt: &mut CachedStatement<'_>, post: PostId) -> rusqlite::Result<()> {
        stmt.execute(rusqlite::params![
            to_sql_id(post),
            to_sql_id(self.count),
            to_sql_id(self.version),
            encode_likers(&self.likers),
        ])?;
        Ok(())
    }

    fn liked_by(&mut self, user: UserId) {
        self.count += 1;
        self.version += 1;
        self.likers.retain(|&u| u != user);
        self.likers.insert(0, user);
        self.likers.truncate(RECENT_LIKERS);
        self.dirty = true;
    }

    fn unliked_by(&mut self, user: UserId) {
        self.count = self.count.saturating_sub(1);
        self.version += 1;
        self.likers.retain(|&u| u != user);
        self.dirty = true;
    }

    fn snapshot(&self) -> PostSnapshot {
        PostSnapshot {
            count: self.count,
            version: self.version,
            recent_likers: self.likers.clone(),
        }
    }
}

fn encode_likers(likers: &[UserId]) -> Vec<u8> {
    likers.iter().flat_map(|id| id.to_le_bytes()).collect()
}

fn decode_likers(blob: &[u8]) -> Vec<UserId> {
    blob.chunks_exact(8)
        .map(|chunk| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(chunk);
            u64::from_le_bytes(bytes)
        })
        .collect()
}

fn run_writer(
    mut conn: Connection,
    mut queue: mpsc::Receiver<Command>,
    max_batch: usize,
    sizes: Option<metrics::Histogram>,
) {
    let mut next: Option<Command> = None;
    loop {
        let command = match next.take() {
            Some(command) => command,
            None => match queue.blocking_recv() {
                Some(command) => command,
                // Closed and drained, or every sender is gone.
                None => break,
            },
        };
        match command {
            Command::Task(task) => task(&mut conn),
            // Refuse new commands; those already queued are still received.
            Command::Close => queue.close(),
            Command::Write(op) => {
                let mut batch = vec![op];
                while batch.len() < max_batch {
                    match queue.try_recv() {
                        Ok(Command::Write(op)) => batch.push(op),
                        Ok(other) => {
                            next = Some(other);
                            break;
                        }
                        Err(_) => break,
                    }
                }
                if let Some(sizes) = &sizes {
                    sizes.record(batch.len() as f64);
                }
                group_commit(&mut conn, batch);
            }
        }
    }
}

/// Applies `batch` in one transaction, commits, then answers each write.
fn group_commit(conn: &mut Connection, batch: Vec<WriteOp>) {
    match apply_batch(conn, &batch) {
        Ok(outcomes) => {
            for (op, outcome) in batch.into_iter().zip(outcomes) {
                let _ = op.reply.send(outcome);
            }
        }
        Err(err) => {
            tracing::error!(error = %err, writes = batch.len(), "group commit failed");
            let err = StoreError::from(err);
            for op in batch {
                let _ = op.reply.send(Err(err.clone()));
            }
        }
    }
}

fn apply_batch(
    conn: &mut Connection,
    batch: &[WriteOp],
) -> rusqlite::Result<Vec<Result<WriteOutcome, StoreError>>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut outcomes = Vec::with_capacity(batch.len());
    let mut rows: HashMap<PostId, Option<PostRow>> = HashMap::new();
    // The last write of each post in this batch carries the post's snapshot.
    let mut last_write: HashMap<PostId, usize> = HashMap::new();
    {
        let mut select = tx.prepare_cached(SELECT_POST)?;
        let mut insert = tx.prepare_cached(INSERT_LIKE)?;
        let mut delete = tx.prepare_cached(DELETE_LIKE)?;
        for (index, op) in batch.iter().enumerate() {
            let row = match rows.entry(op.post) {
                Entry::Occupied(entry) => entry.into_mut(),
                Entry::Vacant(entry) => entry.insert(PostRow::load(&mut select, op.post)?),
            };
            let Some(row) = row else {
                outcomes.push(Err(StoreError::PostNotFound(op.post)));
                continue;
            };
            let params = [to_sql_id(op.post), to_sql_id(op.user)];
            let changed = if op.like {
                insert.execute(params)? == 1
            } else {
                delete.execute(params)? == 1
            };
            if changed {
                if op.like {
                    row.liked_by(op.user);
                } else {
                    row.unliked_by(op.user);
                }
            }
            last_write.insert(op.post, index);
            outcomes.push(Ok(WriteOutcome {
                state: LikeState {
                    count: row.count,
                    liked_by_me: op.like,
                    version: row.version,
                },
                changed,
                snapshot: None,
            }));
        }
        let mut update = tx.prepare_cached(UPDATE_POST)?;
        for (post, row) in &rows {
            if let Some(row) = row.as_ref().filter(|row| row.dirty) {
                row.store(&mut update, *post)?;
            }
        }
    }
    tx.commit()?;
    for (post, index) in last_write {
        if let (Some(Some(row)), Some(Ok(outcome))) = (rows.get(&post), outcomes.get_mut(index)) {
            outcome.snapshot = Some(Arc::new(row.snapshot()));
        }
    }
    Ok(outcomes)
}

fn user_exists(conn: &Connection, user: UserId) -> rusqlite::Result<bool> {
    conn.prepare_cached(USER_EXISTS)?
        .query_row([to_sql_id(user)], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
}

fn check_name(name: &str) -> Result<(), StoreError> {
    if name.trim().is_empty() || name.chars().count() > 200 {
        return Err(StoreError::Invalid(
            "a name must have 1 to 200 characters and not be blank".into(),
        ));
    }
    Ok(())
}

fn check_friends(friends: &[UserId]) -> Result<(), StoreError> {
    if friends.len() > MAX_FRIENDS {
        return Err(StoreError::Invalid(format!(
            "at most {MAX_FRIENDS} friends per user"
        )));
    }
    friends.iter().try_for_each(|&f| check_id("friend", f))
}

fn replace_friends(conn: &Connection, user: UserId, friends: &[UserId]) -> Result<(), StoreError> {
    if !user_exists(conn, user)? {
        return Err(StoreError::UserNotFound(user));
    }
    for &friend in friends {
        if !user_exists(conn, friend)? {
            return Err(StoreError::UserNotFound(friend));
        }
    }
    conn.prepare_cached("DELETE FROM friends WHERE user_id = ?1")?
        .execute([to_sql_id(user)])?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO friends (user_id, friend_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
    )?;
    for &friend in friends {
        insert.execute([to_sql_id(user), to_sql_id(friend)])?;
    }
    Ok(())
}

fn apply_seed(conn: &mut Connection, seed: &Seed) -> Result<(), StoreError> {
    for user in &seed.users {
        check_id("user", user.id)?;
        check_name(&user.name)?;
        check_friends(&user.friends)?;
    }
    for post in &seed.posts {
        check_id("post", post.id)?;
        post.likers.iter().try_for_each(|&u| check_id("user", u))?;
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        let mut upsert = tx.prepare_cached(
            "INSERT INTO users (id, name) VALUES (?1, ?2) \
             ON CONFLICT (id) DO UPDATE SET name = excluded.name",
        )?;
        for user in &seed.users {
            upsert.execute(rusqlite::params![to_sql_id(user.id), user.name])?;
        }
        for user in &seed.users {
            replace_friends(&tx, user.id, &user.friends)?;
        }
        let mut insert_post =
            tx.prepare_cached("INSERT INTO posts (id) VALUES (?1) ON CONFLICT DO NOTHING")?;
        let mut select = tx.prepare_cached(SELECT_POST)?;
        let mut insert_like = tx.prepare_cached(INSERT_LIKE)?;
        let mut update = tx.prepare_cached(UPDATE_POST)?;
        for post in &seed.posts {
            insert_post.execute([to_sql_id(post.id)])?;
            let mut row =
                PostRow::load(&mut select, post.id)?.ok_or(StoreError::PostNotFound(post.id))?;
            for &user in &post.likers {
                if insert_like.execute([to_sql_id(post.id), to_sql_id(user)])? == 1 {
                    row.liked_by(user);
                }
            }
            if row.dirty {
                row.store(&mut update, post.id)?;
            }
        }
    }
    tx.commit()?;
    Ok(())
}

#[async_trait]
impl Store for SqliteStore {
    async fn like(&self, user: UserId, post: PostId) -> Result<WriteOutcome, StoreError> {
        self.write(user, post, true).await
    }

    async fn unlike(&self, user: UserId, post: PostId) -> Result<WriteOutcome, StoreError> {
        self.write(user, post, false).await
    }

    async fn post(&self, post: PostId) -> Result<Option<PostSnapshot>, StoreError> {
        if check_id("post", post).is_err() {
            return Ok(None);
        }
        self.readers.with(|conn| {
            let mut select = conn.prepare_cached(SELECT_POST)?;
            Ok(PostRow::load(&mut select, post)?.map(|row| PostSnapshot {
                count: row.count,
                version: row.version,
                recent_likers: row.likers,
            }))
        })
    }

    async fn liked(&self, user: UserId, posts: &[PostId]) -> Result<Vec<bool>, StoreError> {
        if check_id("user", user).is_err() {
            return Ok(vec![false; posts.len()]);
        }
        self.readers.with(|conn| {
            let mut select = conn.prepare_cached(SELECT_LIKED)?;
            posts
                .iter()
                .map(|&post| {
                    if check_id("post", post).is_err() {
                        return Ok(false);
                    }
                    select.exists([to_sql_id(post), to_sql_id(user)])
                })
                .collect()
        })
    }

    async fn friends(&self, user: UserId) -> Result<Vec<(UserId, String)>, StoreError> {
        if check_id("user", user).is_err() {
            return Ok(Vec::new());
        }
        self.readers.with(|conn| {
            let mut select = conn.prepare_cached(SELECT_FRIENDS)?;
            let rows = select.query_map([to_sql_id(user)], |row| {
                Ok((from_sql_count(row.get(0)?), row.get::<_, String>(1)?))
            })?;
            rows.collect()
        })
    }

    async fn put_user(&self, user: UserId, name: &str) -> Result<Upsert, StoreError> {
        check_id("user", user)?;
        check_name(name)?;
        let name = name.to_owned();
        self.on_writer(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let existed = user_exists(&tx, user)?;
            tx.prepare_cached(
                "INSERT INTO users (id, name) VALUES (?1, ?2) \
                 ON CONFLICT (id) DO UPDATE SET name = excluded.name",
            )?
            .execute(rusqlite::params![to_sql_id(user), name])?;
            tx.commit()?;
            Ok(if existed {
                Upsert::Updated
            } else {
                Upsert::Created
            })
        })
        .await
    }

    async fn put_post(&self, post: PostId) -> Result<Upsert, StoreError> {
        check_id("post", post)?;
        self.on_writer(move |conn| {
            let inserted = conn
                .prepare_cached("INSERT INTO posts (id) VALUES (?1) ON CONFLICT DO NOTHING")?
                .execute([to_sql_id(post)])?;
            Ok(if inserted == 1 {
                Upsert::Created
            } else {
                Upsert::Updated
            })
        })
        .await
    }

    async fn set_friends(&self, user: UserId, friends: &[UserId]) -> Result<(), StoreError> {
        check_id("user", user)?;
        check_friends(friends)?;
        let mut unique = HashSet::with_capacity(friends.len());
        let friends: Vec<UserId> = friends
            .iter()
            .copied()
            .filter(|f| unique.insert(*f))
            .collect();
        self.on_writer(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            replace_friends(&tx, user, &friends)?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn seed(&self, seed: &Seed) -> Result<(), StoreError> {
        let seed = seed.clone();
        self.on_writer(move |conn| apply_seed(conn, &seed)).await
    }

    async fn reset(&self) -> Result<(), StoreError> {
        self.on_writer(|conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute_batch(
                "DELETE FROM likes; UPDATE posts SET count = 0, version = 0, likers = x'';",
            )?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn audit(&self) -> Result<Vec<PostAudit>, StoreError> {
        self.readers.with(|conn| {
            let mut select = conn.prepare(
                "SELECT p.id, p.count, p.version, \
                 (SELECT COUNT(*) FROM likes l WHERE l.post_id = p.id) \
                 FROM posts p ORDER BY p.id",
            )?;
            let rows = select.query_map([], |row| {
                Ok(PostAudit {
                    post: from_sql_count(row.get(0)?),
                    count: from_sql_count(row.get(1)?),
                    version: from_sql_count(row.get(2)?),
                    rows: from_sql_count(row.get(3)?),
                })
            })?;
            rows.collect()
        })
    }

    async fn close(&self) -> Result<(), StoreError> {
        // Fails only when already closed, which is fine.
        let _ = self.queue.send(Command::Close).await;
        let mut done = self.writer_done.clone();
        done.wait_for(|finished| *finished)
            .await
            .map(|_| ())
            .map_err(|_| StoreError::Backend("the writer thread stopped unexpectedly".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn likers_blob_round_trips() {
        let likers = vec![1, 42, u64::from(u32::MAX) + 5, i64::MAX as u64];
        assert_eq!(decode_likers(&encode_likers(&likers)), likers);
        assert!(decode_likers(&[]).is_empty());
    }

    #[test]
    fn recent_likers_are_newest_first_and_bounded() {
        let mut row = PostRow {
            count: 0,
            version: 0,
            likers: Vec::new(),
            dirty: false,
        };
        for user in 1..=150 {
            row.liked_by(user);
        }
        assert_eq!(row.likers.len(), RECENT_LIKERS);
        assert_eq!(row.likers[0], 150);
        assert_eq!(row.likers[99], 51);
        row.unliked_by(150);
        assert_eq!(row.likers[0], 149);
        assert_eq!((row.count, row.version), (149, 151));
    }
}
