//! The embedded SQLite backend.
//!
//! * **One writer, group commit.** A dedicated thread owns the only write
//!   connection. It takes every like/unlike waiting in its queue (up to
//!   [`SqliteOptions::max_group_commit`]), applies them one after another in a
//!   single `BEGIN IMMEDIATE` transaction — each with its own exact semantics
//!   and its own answer — commits once, and answers each waiter only once the
//!   commit is fsynced (at once for a `:memory:` store, which is never
//!   fsynced). Under load one fsync covers hundreds of writes;
//!   alone, a write costs one fsync as before.
//! * **Pipelined, off-writer durability** (see [`wal`]): the writer commits
//!   without waiting for the disk and goes on to the next group, while an
//!   fsync thread makes each commit durable before it is answered; a
//!   checkpoint thread copies the WAL back into the file beside the writer.
//!   The writer keeps a large page cache and reads through `mmap`, so the
//!   pages a like touches are rarely read with a system call.
//! * **Failures.** A failed commit fails its batch's writes. A failed fsync
//!   marks the store failed: every later write is refused and
//!   [`Store::ready`] fails until the process restarts (see [`wal`]). A
//!   panic while applying a batch or an admin task fails those writes only
//!   (rolled back when the transaction was still open) and the writer goes
//!   on; if the connection cannot be brought back out of its transaction,
//!   the store is marked failed, and if the writer thread is gone,
//!   `ready()` says so.
//! * **Pooled readers.** Reads run on a pool of read-only connections (WAL
//!   lets them run beside the writer) with cached prepared statements. Each
//!   thread prefers "its" connection, so readers almost never wait for each
//!   other and there is no global lock on the read path.
//! * **Rows beside counts.** `likes(post_id, user_id)` is keyed by post first,
//!   and each `posts` row carries `count`, `version` and its recent likers (a
//!   BLOB of little-endian user ids, newest first, and one of the times they
//!   liked), all changed in the like's transaction.
//! * **Hot posts** (see [`hot`](super::hot)): a hot post's writes go to
//!   random `post_count_shards` rows, exactly as in PostgreSQL, so both
//!   backends behave the same. The single writer already serialises every
//!   write, so here sharding saves nothing and costs a little; answers stay
//!   exact write by write (1, 2, 3, …) even for a hot post, and the writer's
//!   first write to a post after it cools folds the shard rows back into the
//!   post's row (safe here, with one writer).
//! * **Migrations**: `PRAGMA user_version` counts the [`MIGRATIONS`] applied;
//!   older database files are brought up to date when opened.

use std::{
    cell::Cell,
    collections::{BTreeMap, HashMap, HashSet, hash_map::Entry},
    fmt,
    panic::{AssertUnwindSafe, catch_unwind},
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex, PoisonError, TryLockError,
        atomic::{AtomicBool, AtomicUsize, Ordering},
        mpsc as std_mpsc,
    },
    time::Duration,
};

use async_trait::async_trait;
use likekit_proto::{LikeState, PostId, UserId, admin::Seed};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, config::DbConfig};
use tokio::sync::{mpsc, oneshot, watch};
use tracing::Level;

use super::{
    Database, HotPostOptions, HotPosts, PostAudit, PostSnapshot, RECENT_LIKERS, Store, StoreError,
    Upsert, WriteOutcome,
    hot::{liked_at, merge_likers, merge_timed},
    rules::{check_friends, check_name, check_seed, unique},
};
use crate::log_limit::limited;

mod wal;

/// The schema, one migration per entry, applied in order when a database is
/// opened (`PRAGMA user_version` records how many are applied). The first
/// uses `IF NOT EXISTS` because files made before migrations were counted
/// already have its tables.
pub const MIGRATIONS: &[&str] = &[
    "
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
",
    // Times of the recent likers (little-endian i64 microseconds, one per
    // liker) and hot posts' count shards. A post's count and version are its
    // row's plus its shard rows'; a shard row may go below zero.
    "
ALTER TABLE posts ADD COLUMN likers_at BLOB NOT NULL DEFAULT x'';
CREATE TABLE post_count_shards (
    post_id   INTEGER NOT NULL REFERENCES posts (id),
    shard     INTEGER NOT NULL,
    count     INTEGER NOT NULL DEFAULT 0,
    version   INTEGER NOT NULL DEFAULT 0,
    likers    BLOB NOT NULL DEFAULT x'',
    likers_at BLOB NOT NULL DEFAULT x'',
    PRIMARY KEY (post_id, shard)
) WITHOUT ROWID;
",
];

const SELECT_POST: &str = "SELECT count, version, likers, likers_at FROM posts WHERE id = ?1";
/// A post's row for a reader, whether it has shard rows and whether user
/// ?2 likes it: one statement, so one read snapshot without `BEGIN` and
/// `COMMIT`.
const SELECT_POST_UNSHARDED: &str = "SELECT count, version, likers, \
     EXISTS (SELECT 1 FROM post_count_shards WHERE post_id = ?1), \
     EXISTS (SELECT 1 FROM likes WHERE post_id = ?1 AND user_id = ?2) \
     FROM posts WHERE id = ?1";
const SELECT_SHARDS: &str = "SELECT shard, count, version, likers, likers_at \
     FROM post_count_shards WHERE post_id = ?1 ORDER BY shard";
const UPDATE_POST: &str =
    "UPDATE posts SET count = ?2, version = ?3, likers = ?4, likers_at = ?5 WHERE id = ?1";
const UPSERT_SHARD: &str = "INSERT INTO post_count_shards \
     (post_id, shard, count, version, likers, likers_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
     ON CONFLICT (post_id, shard) DO UPDATE SET count = excluded.count, \
     version = excluded.version, likers = excluded.likers, likers_at = excluded.likers_at";
const DELETE_SHARDS: &str = "DELETE FROM post_count_shards WHERE post_id = ?1";
const INSERT_LIKE: &str =
    "INSERT INTO likes (post_id, user_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING";
const DELETE_LIKE: &str = "DELETE FROM likes WHERE post_id = ?1 AND user_id = ?2";
const SELECT_LIKED: &str = "SELECT 1 FROM likes WHERE post_id = ?1 AND user_id = ?2";
const SELECT_FRIENDS: &str = "SELECT f.friend_id, u.name FROM friends f \
     JOIN users u ON u.id = f.friend_id WHERE f.user_id = ?1";
const USER_EXISTS: &str = "SELECT 1 FROM users WHERE id = ?1";
const USER_NAME: &str = "SELECT name FROM users WHERE id = ?1";

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
    /// When a post counts as hot and how far its count spreads then.
    pub hot_posts: HotPostOptions,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            database: Database::Memory,
            read_connections: 0,
            max_group_commit: 1024,
            group_commit_sizes: None,
            hot_posts: HotPostOptions::default(),
        }
    }
}

/// The SQLite [`Store`]. See the module docs for how it works.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use likekit_server::{store::{SqliteOptions, SqliteStore, Store}, wire::{PostId, UserId}};
/// let (ana, post) = (UserId::new(7).unwrap(), PostId::new(42).unwrap());
/// let store = SqliteStore::open(SqliteOptions::default()).unwrap();
/// store.put_post(post).await.unwrap();
/// let outcome = store.like(ana, post).await.unwrap();
/// assert_eq!((outcome.state.count, outcome.state.version), (1, 1));
/// assert!(store.like(ana, post).await.unwrap().state.count == 1); // idempotent
/// store.close().await.unwrap();
/// # });
/// ```
pub struct SqliteStore {
    queue: mpsc::Sender<Command>,
    writer_done: watch::Receiver<bool>,
    readers: ReadPool,
    database: Database,
    hot: HotPosts,
    /// Whether the store still takes writes (see [`wal::Health`]).
    health: Arc<wal::Health>,
    /// Set by [`Store::close`]: a refused write is then
    /// [`StoreError::Closed`], not a failure.
    closing: AtomicBool,
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

/// Work for the writer thread; what it returns answers the caller once the
/// work's commit is durable. It is given the store's failure instead of
/// the connection once the store takes no more writes.
type Task = Box<dyn FnOnce(Result<&mut Connection, StoreError>) -> wal::TaskReply + Send>;

enum Command {
    Write(WriteOp),
    Task(Task),
    Close,
}

struct WriteOp {
    user: UserId,
    post: PostId,
    like: bool,
    /// The shard row for a hot post's write; `None`: the post's own row.
    shard: Option<u16>,
    reply: oneshot::Sender<Result<WriteOutcome, StoreError>>,
}

/// An id read back from SQL (only valid ids are ever stored).
/// How the temporary folder of an in-memory store begins; the process id
/// and a random part follow.
const MEMORY_DIR_PREFIX: &str = "likekit-memory-";

/// A temporary folder for an in-memory store, named after this process
/// (`likekit-memory-<pid>-…`). The store removes it when it is closed and
/// dropped, but a store that never is (a test that dropped its server
/// without a shutdown, a process killed) leaves it behind: the folders of
/// processes that have ended are removed here, as the next in-memory store
/// starts.
fn memory_dir() -> Result<tempfile::TempDir, StoreError> {
    remove_memory_dirs_of_ended_processes(&std::env::temp_dir());
    tempfile::Builder::new()
        .prefix(&format!("{MEMORY_DIR_PREFIX}{}-", std::process::id()))
        .tempdir()
        .map_err(|e| StoreError::Backend(format!("temporary directory: {e}")))
}

/// Removes the in-memory stores' folders in `dir` whose process has ended
/// (Linux: no `/proc/<pid>`; elsewhere nothing is removed).
fn remove_memory_dirs_of_ended_processes(dir: &Path) {
    if !cfg!(target_os = "linux") {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|name| name.strip_prefix(MEMORY_DIR_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok());
        if let Some(pid) = pid
            && !Path::new("/proc").join(pid.to_string()).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn id_from_sql<T: TryFrom<i64>>(column: usize, value: i64) -> rusqlite::Result<T> {
    T::try_from(value).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(column, value))
}

fn from_sql_count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// Sums of counters that may be negative one by one.
fn to_total(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

impl SqliteStore {
    /// Opens (creating when missing) the database, starts the writer thread
    /// and the reader pool. Blocks briefly; call it from a blocking context or
    /// at startup.
    pub fn open(options: SqliteOptions) -> Result<Self, StoreError> {
        let (path, temp_dir, durable) = match &options.database {
            Database::File(path) => (path.clone(), None, true),
            Database::Postgres(_) => {
                return Err(StoreError::Invalid(
                    "a PostgreSQL URL is not a SQLite database; use PostgresStore".into(),
                ));
            }
            Database::Memory => {
                let dir = memory_dir()?;
                (dir.path().join("likekit.db"), Some(Arc::new(dir)), false)
            }
        };
        let writer_conn = open_writer(&path, durable)?;
        // Like times go on from the newest stored one, even if the clock
        // was set back since it was written.
        if let Some(newest) = newest_like_time(&writer_conn)? {
            crate::store::hot::liked_after(newest);
        }

        let read_connections = if options.read_connections == 0 {
            std::thread::available_parallelism()
                .map(|n| n.get() * 2)
                .unwrap_or(4)
                .max(4)
        } else {
            options.read_connections
        };
        let connections = (0..read_connections)
            .map(|i| {
                open_reader(&path).map(Mutex::new).map_err(|e| {
                    let e = match e {
                        StoreError::Backend(e) => e,
                        e => e.to_string(),
                    };
                    // The writer has opened the file: what runs out is
                    // this process's open files (`ulimit -n`).
                    StoreError::Backend(format!(
                        "cannot open read-only connection {} of {read_connections} to {}: \
                         {e} (each connection is an open file; ask for fewer, or raise \
                         the open-file limit)",
                        i + 1,
                        path.display()
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;

        let (queue, receiver) = mpsc::channel(16 * 1024);
        let (done_tx, writer_done) = watch::channel(false);
        let max_batch = options.max_group_commit.max(1);
        let sizes = options.group_commit_sizes.clone();
        // The temporary directory of an in-memory store lives until both the
        // writer and the readers are gone.
        let writer_temp_dir = temp_dir.clone();
        let health = Arc::new(wal::Health::default());
        let syncer = wal::Syncer::start(&path, durable, health.clone())?;
        let writer_health = health.clone();
        let (commits, commit_signals) = std_mpsc::sync_channel(1);
        let checkpointer = open_checkpointer(&path, durable)?;
        let checkpoint_thread = std::thread::Builder::new()
            .name("likekit-checkpoint".into())
            .spawn(move || wal::run_checkpointer(&checkpointer, &commit_signals))
            .map_err(|e| StoreError::Backend(format!("cannot start the checkpoint thread: {e}")))?;
        std::thread::Builder::new()
            .name("likekit-writer".into())
            .spawn(move || {
                let writer = Writer {
                    syncer,
                    commits,
                    max_batch,
                    sizes,
                    health: writer_health,
                };
                writer.run(writer_conn, receiver);
                // The checkpoint thread ends (after a last checkpoint) once
                // the writer is gone, before the store reports closed.
                let _ = checkpoint_thread.join();
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
            hot: HotPosts::new(options.hot_posts),
            health,
            closing: AtomicBool::new(false),
            _temp_dir: temp_dir,
        })
    }

    /// Why a write found the writer's queue closed or lost its answer:
    /// [`StoreError::Closed`] after [`Store::close`], else the writer
    /// thread stopped on its own (a bug), which is a failure.
    fn writer_gone(&self) -> StoreError {
        if self.closing.load(Ordering::Relaxed) {
            StoreError::Closed
        } else {
            self.health
                .check()
                .err()
                .unwrap_or_else(|| StoreError::Backend("the writer thread has stopped".into()))
        }
    }

    async fn write(
        &self,
        user: UserId,
        post: PostId,
        like: bool,
    ) -> Result<WriteOutcome, StoreError> {
        let shard = self.hot.on_write(post);
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(Command::Write(WriteOp {
                user,
                post,
                like,
                shard,
                reply,
            }))
            .await
            .map_err(|_| self.writer_gone())?;
        answer.await.map_err(|_| self.writer_gone())?
    }

    /// Runs `task` on the writer thread, between group commits.
    async fn on_writer<T, F>(&self, task: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let task: Task = Box::new(move |conn| {
            let result = conn.and_then(|conn| {
                catch_unwind(AssertUnwindSafe(|| task(conn))).unwrap_or_else(|_| {
                    Err(StoreError::Backend(
                        "an admin write panicked; it was not saved".into(),
                    ))
                })
            });
            Box::new(move |synced: Result<(), StoreError>| {
                let _ = reply.send(synced.and(result));
            })
        });
        self.queue
            .send(Command::Task(task))
            .await
            .map_err(|_| self.writer_gone())?;
        answer.await.map_err(|_| self.writer_gone())?
    }
}

/// The server owns its database file: the first connection takes an
/// exclusive lock on it for the whole process (SQLite's `unix-excl` VFS).
/// Connections within the process still coordinate as usual, but WAL read
/// transactions no longer take and drop a lock on the `-shm` file with a
/// system call each (two `fcntl`s per read, under a mutex every reader
/// shares, were most of a cached view's database time); the WAL index lives
/// in the process's memory. Other processes cannot open the file while the
/// server runs.
#[cfg(unix)]
const VFS: &str = "unix-excl";

fn open_connection(path: &PathBuf, flags: OpenFlags) -> rusqlite::Result<Connection> {
    #[cfg(unix)]
    return Connection::open_with_flags_and_vfs(path, flags, VFS);
    #[cfg(not(unix))]
    return Connection::open_with_flags(path, flags);
}

/// The writer's page cache (SQLite's `cache_size`, in KiB when negative).
const WRITER_CACHE_KIB: i64 = 64 * 1024;

/// How much of the file connections read through `mmap`.
const MMAP_BYTES: i64 = 256 * 1024 * 1024;

/// Why the file at `path` cannot be opened, as far as the file system
/// tells (SQLite's own "unable to open database file" does not say): a
/// missing folder, a folder in its place, no permission.
fn why_not_open(path: &Path) -> Option<String> {
    if path.is_dir() {
        return Some(format!("{} is a folder", path.display()));
    }
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        return Some(format!(
            "the folder {} does not exist (it is not created)",
            folder.display()
        ));
    }
    let tried = if path.exists() {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
    } else {
        // A file SQLite would create: try making it, and leave nothing.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .inspect(|_| {
                let _ = std::fs::remove_file(path);
            })
    };
    tried.err().map(|e| format!("{}: {e}", path.display()))
}

/// Why the file at `path` cannot be used, from SQLite's error `e`: the
/// file named, and what an operator can do about it where SQLite's words
/// alone do not say ("database is locked", "attempt to write a readonly
/// database", "file is not a database").
fn cannot_use(path: &Path, e: &rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode;
    let file = path.display();
    StoreError::Backend(match e.sqlite_error_code() {
        Some(ErrorCode::CannotOpen) => match why_not_open(path) {
            Some(why) => format!("{e}: {why}"),
            None => format!("{e}: {file}"),
        },
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => format!(
            "{file}: {e}: another process has it open (another likekit-server?); a \
             SQLite file is served by one server at a time"
        ),
        Some(ErrorCode::ReadOnly) => format!(
            "{file}: {e}: this user cannot write the file, or the folder it is in \
             (where SQLite keeps its -wal and -shm files)"
        ),
        Some(ErrorCode::NotADatabase) => {
            format!("{file}: {e}: give a likekit SQLite file, or a new file name")
        }
        _ => format!("{file}: {e}"),
    })
}

fn open_writer(path: &PathBuf, durable: bool) -> Result<Connection, StoreError> {
    let mut conn = open_connection(path, OpenFlags::default()).map_err(|e| cannot_use(path, &e))?;
    conn.busy_timeout(Duration::from_secs(5))?;
    // The first statement that reads the file: a file that is no database
    // fails here. Another program's database is refused before anything
    // is written to it, WAL mode included.
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(|e| cannot_use(path, &e))?;
    if version == 0 {
        not_someone_elses(&conn, path)?;
    }
    // A file another process holds fails here.
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
        .map_err(|e| cannot_use(path, &e))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Backend(format!(
            "cannot switch {} to WAL mode (got {mode})",
            path.display()
        )));
    }
    // Durable commits are fsynced by the fsync thread before they are
    // answered (see `wal`), not inside the commit.
    conn.pragma_update(None, "synchronous", if durable { "NORMAL" } else { "OFF" })?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "cache_size", -WRITER_CACHE_KIB)?;
    conn.pragma_update(None, "mmap_size", MMAP_BYTES)?;
    conn.pragma_update(None, "wal_autocheckpoint", wal::BACKSTOP_CHECKPOINT_PAGES)?;
    conn.set_prepared_statement_cache_capacity(64);
    stable_plans(&conn)?;
    migrate(&mut conn, path)?;
    Ok(conn)
}

/// The checkpoint thread's connection: read-write, no automatic checkpoint
/// of its own (it never writes), `synchronous` as the writer's, so the
/// database file is fsynced after each checkpoint when durable.
fn open_checkpointer(path: &PathBuf, durable: bool) -> Result<Connection, StoreError> {
    let conn = open_connection(path, OpenFlags::default())?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "synchronous", if durable { "FULL" } else { "OFF" })?;
    conn.pragma_update(None, "mmap_size", MMAP_BYTES)?;
    Ok(conn)
}

/// Applies the [`MIGRATIONS`] the file at `path` lacks, in one
/// transaction.
fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| cannot_use(path, &e))?;
    let applied: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    let applied = usize::try_from(applied).unwrap_or(usize::MAX);
    if applied > MIGRATIONS.len() {
        return Err(StoreError::Backend(format!(
            "{}: the database schema is at version {applied}, newer than this server \
             knows ({}): it was written by a newer likekit-server; run that one (or \
             newer) on it",
            path.display(),
            MIGRATIONS.len()
        )));
    }
    for sql in &MIGRATIONS[applied..] {
        tx.execute_batch(sql).map_err(|e| cannot_use(path, &e))?;
    }
    tx.pragma_update(None, "user_version", MIGRATIONS.len() as i64)
        .map_err(|e| cannot_use(path, &e))?;
    tx.commit().map_err(|e| cannot_use(path, &e))?;
    Ok(())
}

/// The tables a file with no schema version may hold, with their columns
/// as the first of the [`MIGRATIONS`] makes them: a file from before
/// versions were counted has them.
const FIRST_TABLES: [(&str, &[&str]); 4] = [
    ("users", &["id", "name"]),
    ("friends", &["user_id", "friend_id"]),
    ("posts", &["id", "count", "version", "likers"]),
    ("likes", &["post_id", "user_id"]),
];

/// A file with no schema version is new, or from before versions were
/// counted (with likekit's four first tables, as they were made); one with
/// other tables, or tables of those names with other columns, is another
/// program's database, which the server must not write into. Checked
/// before anything is written, WAL mode included.
fn not_someone_elses(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let not_ours = |what: String| {
        StoreError::Backend(format!(
            "{}: not a likekit database (no likekit schema version, and {what}): give a \
             likekit SQLite file, or a new file name",
            path.display()
        ))
    };
    let mut tables = conn.prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' \
         ESCAPE '\\' ORDER BY name",
    )?;
    let tables = tables
        .query_map([], |row| row.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let others: Vec<&str> = tables
        .iter()
        .map(String::as_str)
        .filter(|name| !FIRST_TABLES.iter().any(|(ours, _)| ours == name))
        .collect();
    if !others.is_empty() {
        return Err(not_ours(format!(
            "tables of something else: {}",
            others.join(", ")
        )));
    }
    for (table, columns) in FIRST_TABLES {
        if !tables.iter().any(|name| name == table) {
            continue;
        }
        let mut info = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?;
        let found = info
            .query_map([], |row| row.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        if found != columns {
            return Err(not_ours(format!(
                "a table {table} with the columns {} where likekit's has {}",
                found.join(", "),
                columns.join(", ")
            )));
        }
    }
    Ok(())
}

/// Bound values never change a cached statement's plan (SQLite's query
/// planner stability guarantee). Without it this build of SQLite (with
/// STAT4) recompiles some statements — the shard read among them — on every
/// new binding, which costs more than the read itself.
fn stable_plans(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map(|_| ())
}

fn open_reader(path: &PathBuf) -> Result<Connection, StoreError> {
    let conn = open_connection(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "query_only", "ON")?;
    conn.pragma_update(None, "mmap_size", MMAP_BYTES)?;
    stable_plans(&conn)?;
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

/// One counter row — the post's own or one of its shard rows — as the
/// writer holds it during one transaction.
#[derive(Debug, Clone, Default)]
struct Counter {
    count: i64,
    version: i64,
    /// Newest first, each with the time it was liked (same length).
    likers: Vec<UserId>,
    likers_at: Vec<i64>,
    dirty: bool,
}

impl Counter {
    fn from_columns(count: i64, version: i64, likers: &[u8], likers_at: &[u8]) -> Self {
        let likers = decode_likers(likers);
        let mut likers_at = decode_times(likers_at);
        // Rows from before times were kept: their likers are older than any.
        likers_at.resize(likers.len(), i64::MIN);
        Self {
            count,
            version,
            likers,
            likers_at,
            dirty: false,
        }
    }

    fn lists(&self, user: UserId) -> bool {
        self.likers.contains(&user)
    }

    fn liked_by(&mut self, user: UserId, at: i64) {
        self.count += 1;
        self.version += 1;
        self.unlist(user);
        self.likers.insert(0, user);
        self.likers_at.insert(0, at);
        self.likers.truncate(RECENT_LIKERS);
        self.likers_at.truncate(RECENT_LIKERS);
        self.dirty = true;
    }

    fn unliked_by(&mut self, user: UserId) {
        self.count -= 1;
        self.version += 1;
        self.unlist(user);
        self.dirty = true;
    }

    fn unlist(&mut self, user: UserId) {
        if let Some(at) = self.likers.iter().position(|&u| u == user) {
            self.likers.remove(at);
            self.likers_at.remove(at);
        }
    }
}

/// A post held by the writer during one transaction: its own row and its
/// shard rows (only a post that has been hot has any).
#[derive(Debug, Clone, Default)]
struct PostRow {
    base: Counter,
    shards: BTreeMap<u16, Counter>,
    /// The shard rows were folded into the post's row: delete them.
    folded: bool,
}

impl PostRow {
    fn load(conn: &Connection, post: PostId) -> rusqlite::Result<Option<Self>> {
        Self::load_with(conn, post, true)
    }

    /// The post's row, and its shard rows when `may_have_shards` (the
    /// writer knows which posts have any, and skips the read for the rest).
    fn load_with(
        conn: &Connection,
        post: PostId,
        may_have_shards: bool,
    ) -> rusqlite::Result<Option<Self>> {
        let base = conn
            .prepare_cached(SELECT_POST)?
            .query_row([post.as_i64()], |row| {
                Ok(Counter::from_columns(
                    row.get(0)?,
                    row.get(1)?,
                    row.get_ref(2)?.as_blob().unwrap_or_default(),
                    row.get_ref(3)?.as_blob().unwrap_or_default(),
                ))
            })
            .optional()?;
        let Some(base) = base else {
            return Ok(None);
        };
        if !may_have_shards {
            return Ok(Some(Self {
                base,
                ..Self::default()
            }));
        }
        let mut select = conn.prepare_cached(SELECT_SHARDS)?;
        let shards = select
            .query_map([post.as_i64()], |row| {
                Ok((
                    u16::try_from(row.get::<_, i64>(0)?).unwrap_or(u16::MAX),
                    Counter::from_columns(
                        row.get(1)?,
                        row.get(2)?,
                        row.get_ref(3)?.as_blob().unwrap_or_default(),
                        row.get_ref(4)?.as_blob().unwrap_or_default(),
                    ),
                ))
            })?
            .collect::<rusqlite::Result<BTreeMap<_, _>>>()?;
        Ok(Some(Self {
            base,
            shards,
            folded: false,
        }))
    }

    /// Whether the post has shard rows once [`store`](Self::store)d.
    fn has_shards(&self) -> bool {
        !self.shards.is_empty()
    }

    fn store(&self, conn: &Connection, post: PostId) -> rusqlite::Result<()> {
        if self.folded {
            conn.prepare_cached(DELETE_SHARDS)?
                .execute([post.as_i64()])?;
        }
        if self.base.dirty {
            conn.prepare_cached(UPDATE_POST)?
                .execute(rusqlite::params![
                    post.as_i64(),
                    self.base.count,
                    self.base.version,
                    encode_likers(&self.base.likers),
                    encode_times(&self.base.likers_at),
                ])?;
        }
        let mut upsert = conn.prepare_cached(UPSERT_SHARD)?;
        for (shard, counter) in self.shards.iter().filter(|(_, c)| c.dirty) {
            upsert.execute(rusqlite::params![
                post.as_i64(),
                shard,
                counter.count,
                counter.version,
                encode_likers(&counter.likers),
                encode_times(&counter.likers_at),
            ])?;
        }
        Ok(())
    }

    fn rows(&self) -> impl Iterator<Item = &Counter> {
        std::iter::once(&self.base).chain(self.shards.values())
    }

    /// The post's count and version: its row plus its shard rows.
    fn totals(&self) -> (u64, u64) {
        let (count, version) = self
            .rows()
            .fold((0i64, 0i64), |(c, v), row| (c + row.count, v + row.version));
        (to_total(count), to_total(version))
    }

    /// Moves every shard row's count, version and likers into the post's
    /// own row (the writer's first write after the post cooled).
    fn fold(&mut self) {
        if self.shards.is_empty() {
            return;
        }
        let merged = merge_timed(
            self.rows()
                .map(|row| (row.likers.as_slice(), row.likers_at.as_slice())),
        );
        for shard in std::mem::take(&mut self.shards).into_values() {
            self.base.count += shard.count;
            self.base.version += shard.version;
        }
        (self.base.likers, self.base.likers_at) = merged.into_iter().unzip();
        self.base.dirty = true;
        self.folded = true;
    }

    /// Counts a like or unlike whose like row really changed. A hot write
    /// (`shard`) goes to that shard row; an unlike goes to the row that lists
    /// its user, if any, so the user leaves every list.
    fn apply(&mut self, user: UserId, like: bool, shard: Option<u16>) {
        if like {
            let at = liked_at();
            match shard {
                Some(shard) => self.shards.entry(shard).or_default().liked_by(user, at),
                None => self.base.liked_by(user, at),
            }
            return;
        }
        if self.base.lists(user) {
            self.base.unliked_by(user);
        } else if let Some(row) = self.shards.values_mut().find(|row| row.lists(user)) {
            row.unliked_by(user);
        } else {
            match shard {
                Some(shard) => self.shards.entry(shard).or_default().unliked_by(user),
                None => self.base.unliked_by(user),
            }
        }
    }

    fn snapshot(&self) -> PostSnapshot {
        let (count, version) = self.totals();
        let recent_likers = if self.shards.is_empty() {
            self.base.likers.clone()
        } else {
            merge_likers(
                self.rows()
                    .map(|row| (row.likers.as_slice(), row.likers_at.as_slice())),
            )
        };
        PostSnapshot {
            count,
            version,
            recent_likers,
        }
    }
}

/// A post's snapshot and, when `viewer` is given, whether the viewer likes
/// it (`false` without a viewer); `None` if the post does not exist.
///
/// Most posts have no shard rows: then one statement reads the row, asks
/// whether shards exist and reads the viewer's own row, and the row alone
/// is the snapshot (a view's cache miss spent as much on `BEGIN` and
/// `COMMIT` and a second statement as on the row itself); the liked-at
/// times, which only merging shard rows needs, are left unread. A post with
/// shards is read in one read transaction, so its row and its shard rows
/// come from the same snapshot (a fold or a shard write committing between
/// the reads would skew the sum), with one WAL read lock.
fn read_post(
    conn: &Connection,
    post: PostId,
    viewer: Option<UserId>,
) -> rusqlite::Result<Option<(PostSnapshot, bool)>> {
    // No user has id 0, so without a viewer the own-row test is `false`.
    let user = viewer.map_or(0, UserId::as_i64);
    let unsharded = conn
        .prepare_cached(SELECT_POST_UNSHARDED)?
        .query_row([post.as_i64(), user], |row| {
            if row.get::<_, bool>(3)? {
                return Ok(None);
            }
            let snapshot = PostSnapshot {
                count: to_total(row.get(0)?),
                version: to_total(row.get(1)?),
                recent_likers: decode_likers(row.get_ref(2)?.as_blob().unwrap_or_default()),
            };
            Ok(Some((snapshot, row.get::<_, bool>(4)?)))
        })
        .optional()?;
    match unsharded {
        None => return Ok(None),
        Some(Some(read)) => return Ok(Some(read)),
        Some(None) => {}
    }
    conn.prepare_cached("BEGIN")?.execute([])?;
    // However the read ends — an error, a failed COMMIT, a panic — the
    // connection goes back to the pool outside any transaction (an open one
    // would pin its snapshot: stale reads, and a WAL that cannot restart).
    let _end = EndRead(conn);
    let read = (|| {
        #[cfg(test)]
        if tests::PANIC_IN_READ.with(|panic| panic.take()) {
            panic!("a read panicked (injected by a test)");
        }
        let Some(row) = PostRow::load(conn, post)? else {
            return Ok(None);
        };
        let liked = match viewer {
            Some(user) => conn
                .prepare_cached(SELECT_LIKED)?
                .exists([post.as_i64(), user.as_i64()])?,
            None => false,
        };
        Ok(Some((row.snapshot(), liked)))
    })();
    conn.prepare_cached("COMMIT")?.execute([])?;
    read
}

/// Rolls a reader's transaction back when it is still open on drop.
struct EndRead<'a>(&'a Connection);

impl Drop for EndRead<'_> {
    fn drop(&mut self) {
        if !self.0.is_autocommit()
            && let Err(err) = self.0.execute_batch("ROLLBACK")
        {
            // Once per read: a failing disk fails them all.
            limited!(Level::WARN, error = %err, "a reader could not end its transaction");
        }
    }
}

/// The time of the newest like stored (each row's list is newest first, so
/// its first time is its newest).
fn newest_like_time(conn: &Connection) -> Result<Option<i64>, StoreError> {
    let mut select = conn.prepare(
        "SELECT substr(likers_at, 1, 8) FROM posts WHERE length(likers_at) >= 8 \
         UNION ALL \
         SELECT substr(likers_at, 1, 8) FROM post_count_shards WHERE length(likers_at) >= 8",
    )?;
    let times = select.query_map([], |row| {
        Ok(decode_times(row.get_ref(0)?.as_blob().unwrap_or_default())
            .first()
            .copied())
    })?;
    let mut newest = None;
    for at in times {
        newest = newest.max(at?);
    }
    Ok(newest)
}

fn encode_likers(likers: &[UserId]) -> Vec<u8> {
    likers
        .iter()
        .flat_map(|id| id.get().to_le_bytes())
        .collect()
}

/// Only valid ids are ever written; anything else is skipped.
fn decode_likers(blob: &[u8]) -> Vec<UserId> {
    blob.chunks_exact(8)
        .filter_map(|chunk| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(chunk);
            UserId::new(u64::from_le_bytes(bytes)).ok()
        })
        .collect()
}

fn encode_times(times: &[i64]) -> Vec<u8> {
    times.iter().flat_map(|at| at.to_le_bytes()).collect()
}

fn decode_times(blob: &[u8]) -> Vec<i64> {
    blob.chunks_exact(8)
        .map(|chunk| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(chunk);
            i64::from_le_bytes(bytes)
        })
        .collect()
}

/// The writer thread's state besides its connection.
struct Writer {
    syncer: wal::Syncer,
    /// Pokes the checkpoint thread (one pending signal is enough).
    commits: std_mpsc::SyncSender<()>,
    max_batch: usize,
    sizes: Option<metrics::Histogram>,
    health: Arc<wal::Health>,
}

impl Writer {
    /// Takes commands until the queue is closed and drained, then delivers
    /// every pending answer.
    fn run(self, mut conn: Connection, mut queue: mpsc::Receiver<Command>) {
        let mut next: Option<Command> = None;
        let mut sharded = sharded_posts(&conn);
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
                Command::Task(task) => {
                    // A panic inside the task is caught by the task itself.
                    let reply = match self.health.check() {
                        Ok(()) => task(Ok(&mut conn)),
                        Err(err) => task(Err(err)),
                    };
                    self.end_transaction(&conn);
                    // A task may add or remove shard rows (seed, reset).
                    sharded = sharded_posts(&conn);
                    self.syncer.after_sync(wal::Pending::Task(reply));
                    let _ = self.commits.try_send(());
                }
                // Refuse new commands; those already queued are still received.
                Command::Close => queue.close(),
                Command::Write(op) => {
                    let mut batch = vec![op];
                    while batch.len() < self.max_batch {
                        match queue.try_recv() {
                            Ok(Command::Write(op)) => batch.push(op),
                            Ok(other) => {
                                next = Some(other);
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    if let Some(sizes) = &self.sizes {
                        sizes.record(batch.len() as f64);
                    }
                    let answers = self.group_commit(&mut conn, batch, &mut sharded);
                    self.syncer.after_sync(wal::Pending::Writes(answers));
                    let _ = self.commits.try_send(());
                }
            }
        }
        self.syncer.finish();
    }

    /// Applies `batch` in one transaction and commits; returns each write's
    /// answer, to be sent once the commit is durable. A failed store
    /// refuses the batch; a panic fails the batch's writes and the writer
    /// goes on.
    fn group_commit(
        &self,
        conn: &mut Connection,
        batch: Vec<WriteOp>,
        sharded: &mut Option<HashSet<PostId>>,
    ) -> Vec<(wal::Reply, Result<WriteOutcome, StoreError>)> {
        let applied = self.health.check().and_then(|()| {
            catch_unwind(AssertUnwindSafe(|| {
                apply_batch(conn, &batch, sharded, &self.health).map_err(|err| {
                    // Once per group: a failing disk fails every one.
                    limited!(
                        Level::ERROR,
                        error = %err,
                        writes = batch.len(),
                        "group commit failed"
                    );
                    StoreError::from(err)
                })
            }))
            .unwrap_or_else(|_| {
                limited!(
                    Level::ERROR,
                    writes = batch.len(),
                    "a group commit panicked"
                );
                self.end_transaction(conn);
                // The panic may have left the list half updated.
                *sharded = sharded_posts(conn);
                Err(StoreError::Backend(
                    "the write failed unexpectedly; it may or may not have been saved".into(),
                ))
            })
        });
        match applied {
            Ok(outcomes) => batch
                .into_iter()
                .zip(outcomes)
                .map(|(op, outcome)| (op.reply, outcome))
                .collect(),
            Err(err) => batch
                .into_iter()
                .map(|op| (op.reply, Err(err.clone())))
                .collect(),
        }
    }

    /// Rolls back a transaction a panic left open; if that fails, the
    /// connection cannot be trusted and the store takes no more writes.
    fn end_transaction(&self, conn: &Connection) {
        if !conn.is_autocommit()
            && let Err(err) = conn.execute_batch("ROLLBACK")
        {
            self.health.fail(format!(
                "the writer could not roll back after a failure: {err}"
            ));
        }
    }
}

/// The posts that have shard rows, read when the writer starts and after
/// each writer task; kept by [`apply_batch`] as it commits. Only the writer
/// changes the file, so the set is exact, and a write to any other post
/// skips the shard read. `None` (the read failed): read every post's shards.
fn sharded_posts(conn: &Connection) -> Option<HashSet<PostId>> {
    let read = || -> rusqlite::Result<HashSet<PostId>> {
        let mut select = conn.prepare_cached("SELECT DISTINCT post_id FROM post_count_shards")?;
        let posts = select.query_map([], |row| id_from_sql(0, row.get(0)?))?;
        posts.collect()
    };
    read()
        .inspect_err(|err| tracing::warn!(error = %err, "cannot list the sharded posts"))
        .ok()
}

fn apply_batch(
    conn: &mut Connection,
    batch: &[WriteOp],
    sharded: &mut Option<HashSet<PostId>>,
    health: &wal::Health,
) -> rusqlite::Result<Vec<Result<WriteOutcome, StoreError>>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut outcomes = Vec::with_capacity(batch.len());
    let mut rows: HashMap<PostId, Option<PostRow>> = HashMap::new();
    // The last write of each post in this batch carries the post's snapshot.
    let mut last_write: HashMap<PostId, usize> = HashMap::new();
    {
        let mut insert = tx.prepare_cached(INSERT_LIKE)?;
        let mut delete = tx.prepare_cached(DELETE_LIKE)?;
        for (index, op) in batch.iter().enumerate() {
            let row = match rows.entry(op.post) {
                Entry::Occupied(entry) => entry.into_mut(),
                Entry::Vacant(entry) => entry.insert(PostRow::load_with(
                    &tx,
                    op.post,
                    sharded.as_ref().is_none_or(|set| set.contains(&op.post)),
                )?),
            };
            let Some(row) = row else {
                outcomes.push(Err(StoreError::PostNotFound(op.post)));
                continue;
            };
            if op.shard.is_none() {
                // Not (or no longer) hot: the post's own row takes it all.
                row.fold();
            }
            let params = [op.post.as_i64(), op.user.as_i64()];
            let changed = if op.like {
                insert.execute(params)? == 1
            } else {
                delete.execute(params)? == 1
            };
            if changed {
                row.apply(op.user, op.like, op.shard);
            }
            health.injected_panic();
            let (count, version) = row.totals();
            last_write.insert(op.post, index);
            outcomes.push(Ok(WriteOutcome {
                state: LikeState {
                    count,
                    liked_by_me: op.like,
                    version,
                },
                changed,
                snapshot: None,
            }));
        }
    }
    for (post, row) in &rows {
        if let Some(row) = row {
            row.store(&tx, *post)?;
        }
    }
    tx.commit()?;
    if let Some(set) = sharded {
        for (post, row) in &rows {
            match row {
                Some(row) if row.has_shards() => set.insert(*post),
                _ => set.remove(post),
            };
        }
    }
    for (post, index) in last_write {
        if let (Some(Some(row)), Some(Ok(outcome))) = (rows.get(&post), outcomes.get_mut(index)) {
            outcome.snapshot = Some(Arc::new(row.snapshot()));
        }
    }
    Ok(outcomes)
}

fn user_exists(conn: &Connection, user: UserId) -> rusqlite::Result<bool> {
    conn.prepare_cached(USER_EXISTS)?
        .query_row([user.as_i64()], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
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
        .execute([user.as_i64()])?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO friends (user_id, friend_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
    )?;
    for &friend in friends {
        insert.execute([user.as_i64(), friend.as_i64()])?;
    }
    Ok(())
}

fn apply_seed(conn: &mut Connection, seed: &Seed) -> Result<(), StoreError> {
    check_seed(seed)?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        let mut upsert = tx.prepare_cached(
            "INSERT INTO users (id, name) VALUES (?1, ?2) \
             ON CONFLICT (id) DO UPDATE SET name = excluded.name",
        )?;
        for user in &seed.users {
            upsert.execute(rusqlite::params![user.id.as_i64(), user.name])?;
        }
        for user in &seed.users {
            replace_friends(&tx, user.id, &user.friends)?;
        }
        let mut insert_post =
            tx.prepare_cached("INSERT INTO posts (id) VALUES (?1) ON CONFLICT DO NOTHING")?;
        let mut insert_like = tx.prepare_cached(INSERT_LIKE)?;
        for post in &seed.posts {
            insert_post.execute([post.id.as_i64()])?;
            let mut row = PostRow::load(&tx, post.id)?.ok_or(StoreError::PostNotFound(post.id))?;
            for &user in &post.likers {
                if insert_like.execute([post.id.as_i64(), user.as_i64()])? == 1 {
                    row.base.liked_by(user, liked_at());
                }
            }
            row.store(&tx, post.id)?;
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
        Ok(self
            .readers
            .with(|conn| read_post(conn, post, None))?
            .map(|(snapshot, _)| snapshot))
    }

    async fn post_seen_by(
        &self,
        user: UserId,
        post: PostId,
    ) -> Result<Option<(PostSnapshot, bool)>, StoreError> {
        self.readers.with(|conn| read_post(conn, post, Some(user)))
    }

    async fn liked(&self, user: UserId, posts: &[PostId]) -> Result<Vec<bool>, StoreError> {
        self.readers.with(|conn| {
            let mut select = conn.prepare_cached(SELECT_LIKED)?;
            posts
                .iter()
                .map(|&post| select.exists([post.as_i64(), user.as_i64()]))
                .collect()
        })
    }

    async fn friends(&self, user: UserId) -> Result<Vec<(UserId, String)>, StoreError> {
        self.readers.with(|conn| {
            let mut select = conn.prepare_cached(SELECT_FRIENDS)?;
            let rows = select.query_map([user.as_i64()], |row| {
                Ok((id_from_sql(0, row.get(0)?)?, row.get::<_, String>(1)?))
            })?;
            rows.collect()
        })
    }

    async fn user_name(&self, user: UserId) -> Result<Option<String>, StoreError> {
        self.readers.with(|conn| {
            conn.prepare_cached(USER_NAME)?
                .query_row([user.as_i64()], |row| row.get(0))
                .optional()
        })
    }

    async fn put_user(&self, user: UserId, name: &str) -> Result<Upsert, StoreError> {
        check_name(name)?;
        let name = name.to_owned();
        self.on_writer(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let existed = user_exists(&tx, user)?;
            tx.prepare_cached(
                "INSERT INTO users (id, name) VALUES (?1, ?2) \
                 ON CONFLICT (id) DO UPDATE SET name = excluded.name",
            )?
            .execute(rusqlite::params![user.as_i64(), name])?;
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
        self.on_writer(move |conn| {
            let inserted = conn
                .prepare_cached("INSERT INTO posts (id) VALUES (?1) ON CONFLICT DO NOTHING")?
                .execute([post.as_i64()])?;
            Ok(if inserted == 1 {
                Upsert::Created
            } else {
                Upsert::Updated
            })
        })
        .await
    }

    async fn set_friends(&self, user: UserId, friends: &[UserId]) -> Result<(), StoreError> {
        check_friends(friends)?;
        let friends = unique(friends);
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
                "DELETE FROM likes; DELETE FROM post_count_shards; \
                 UPDATE posts SET count = 0, version = 0, likers = x'', likers_at = x'';",
            )?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn audit(&self) -> Result<Vec<PostAudit>, StoreError> {
        self.readers
            .with(|conn| {
                let mut select = conn.prepare(
                "SELECT p.id, p.count + coalesce(s.count, 0), p.version + coalesce(s.version, 0), \
                 (SELECT COUNT(*) FROM likes l WHERE l.post_id = p.id), coalesce(s.rows, 0) \
                 FROM posts p LEFT JOIN ( \
                     SELECT post_id, sum(count) AS count, sum(version) AS version, \
                            count(*) AS rows \
                     FROM post_count_shards GROUP BY post_id \
                 ) s ON s.post_id = p.id \
                 ORDER BY p.id",
            )?;
                let rows = select.query_map([], |row| {
                    Ok((
                        id_from_sql::<PostId>(0, row.get(0)?)?,
                        row.get::<_, i64>(1)?,
                        row.get::<_, i64>(2)?,
                        from_sql_count(row.get(3)?),
                        from_sql_count(row.get(4)?),
                    ))
                })?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
            })?
            .into_iter()
            .map(|(post, count, version, rows, shard_rows)| {
                Ok(PostAudit {
                    post,
                    count: super::audited(post, "count", count, rows)?,
                    version: super::audited(post, "version", version, rows)?,
                    rows,
                    shard_rows,
                })
            })
            .collect()
    }

    /// Fails once the store takes no more writes (a failed fsync: the
    /// module docs of `sqlite/wal.rs` say why) or its writer thread is
    /// gone; else one post's row, read as a view reads it.
    async fn ready(&self) -> Result<(), StoreError> {
        self.health.check()?;
        if self.queue.is_closed() {
            return Err(self.writer_gone());
        }
        self.post(PostId::MIN).await.map(drop)
    }

    async fn close(&self) -> Result<(), StoreError> {
        self.closing.store(true, Ordering::Relaxed);
        // Fails only when already closed, which is fine.
        let _ = self.queue.send(Command::Close).await;
        let mut done = self.writer_done.clone();
        done.wait_for(|finished| *finished)
            .await
            .map(|_| ())
            .map_err(|_| StoreError::Backend("the writer thread stopped unexpectedly".into()))
    }

    fn hot_posts(&self) -> Option<&HotPosts> {
        Some(&self.hot)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    thread_local! {
        /// The next sharded read on this thread panics inside its transaction.
        pub(super) static PANIC_IN_READ: Cell<bool> = const { Cell::new(false) };
    }

    fn u(id: u64) -> UserId {
        UserId::new(id).unwrap()
    }

    fn p(id: u64) -> PostId {
        PostId::new(id).unwrap()
    }

    fn users<const N: usize>(ids: [u64; N]) -> Vec<UserId> {
        ids.map(u).to_vec()
    }

    #[test]
    fn likers_blob_round_trips() {
        let likers = users([1, 42, u64::from(u32::MAX) + 5, i64::MAX as u64]);
        assert_eq!(decode_likers(&encode_likers(&likers)), likers);
        assert!(decode_likers(&[]).is_empty());
    }

    #[test]
    fn recent_likers_are_newest_first_and_bounded() {
        let mut row = PostRow::default();
        for user in 1..=150 {
            row.apply(u(user), true, None);
        }
        assert_eq!(row.base.likers.len(), RECENT_LIKERS);
        assert_eq!(row.base.likers_at.len(), RECENT_LIKERS);
        assert_eq!(row.base.likers[0], u(150));
        assert_eq!(row.base.likers[99], u(51));
        row.apply(u(150), false, None);
        assert_eq!(row.base.likers[0], u(149));
        assert_eq!(row.totals(), (149, 151));
    }

    #[test]
    fn hot_writes_spread_and_fold_back_exactly() {
        let mut row = PostRow::default();
        for user in 1..=10 {
            row.apply(u(user), true, None);
        }
        for user in 11..=40 {
            row.apply(u(user), true, Some(u16::try_from(user % 4).unwrap_or(0)));
        }
        assert_eq!(row.shards.len(), 4);
        assert_eq!(row.totals(), (40, 40));
        // An unlike counts on the row that lists its user.
        row.apply(u(5), false, Some(3));
        row.apply(u(13), false, Some(0));
        assert_eq!(row.base.count, 9);
        assert_eq!(row.shards[&1].count, 6, "13 was listed on shard 1");
        assert_eq!(row.totals(), (38, 42));
        let snapshot = row.snapshot();
        assert_eq!(snapshot.recent_likers[..3], users([40, 39, 38]));
        assert!(!snapshot.recent_likers.contains(&u(13)));
        row.fold();
        assert!(row.shards.is_empty() && row.folded);
        assert_eq!((row.base.count, row.base.version), (38, 42));
        assert_eq!(row.snapshot(), snapshot);
    }

    #[test]
    fn rows_from_before_times_were_kept_still_decode() {
        let counter = Counter::from_columns(2, 2, &encode_likers(&users([8, 9])), &[]);
        assert_eq!(counter.likers_at, [i64::MIN, i64::MIN]);
        let times = [5, -7, i64::MAX];
        assert_eq!(decode_times(&encode_times(&times)), times);
    }

    /// Another program's SQLite file (no schema version, and tables of its
    /// own, or a table of likekit's names in another shape) is refused and
    /// left as it was: nothing added, nothing altered, not even its
    /// journal mode.
    #[test]
    fn another_programs_database_is_left_alone() {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, schema, want) in [
            (
                "shop.db",
                "CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL); \
                 CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT);",
                "tables of something else: orders",
            ),
            (
                "blog.db",
                "CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT);",
                "a table posts with the columns id, title where likekit's has id, count, \
                 version, likers",
            ),
            (
                "accounts.db",
                "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT NOT NULL);",
                "a table users with the columns id, email where likekit's has id, name",
            ),
        ] {
            let path = dir.path().join(name);
            let schema_of = |path: &Path| -> Vec<String> {
                let conn = Connection::open(path).expect("open");
                let mut rows = conn
                    .prepare("SELECT sql FROM sqlite_schema ORDER BY name")
                    .expect("prepare");
                rows.query_map([], |row| row.get(0))
                    .expect("query")
                    .collect::<rusqlite::Result<_>>()
                    .expect("rows")
            };
            Connection::open(&path)
                .expect("open")
                .execute_batch(schema)
                .expect("schema");
            let before = schema_of(&path);
            let err = open_writer(&path, false).expect_err(name).to_string();
            assert!(err.contains(&path.display().to_string()), "{err}");
            assert!(err.contains(want), "{err}");
            assert_eq!(schema_of(&path), before, "{name} changed");
            // Refused before anything was written: not even WAL mode.
            let mode: String = Connection::open(&path)
                .expect("open")
                .query_row("PRAGMA journal_mode", [], |row| row.get(0))
                .expect("journal mode");
            assert_eq!(mode, "delete", "{name}'s journal mode changed");
        }
    }

    #[test]
    fn an_old_database_file_is_migrated() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("old.db");
        {
            let conn = Connection::open(&path).expect("open");
            conn.execute_batch(MIGRATIONS[0]).expect("old schema");
            conn.execute_batch(
                "INSERT INTO posts (id, count, version, likers) VALUES (1, 1, 1, x'0700000000000000'); \
                 INSERT INTO likes (post_id, user_id) VALUES (1, 7);",
            )
            .expect("old data");
        }
        let conn = open_writer(&path, false).expect("migrate");
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .expect("version");
        assert_eq!(version, MIGRATIONS.len() as i64);
        let row = PostRow::load(&conn, p(1)).expect("load").expect("post");
        assert_eq!(row.snapshot().recent_likers, users([7]));
        drop(conn);
        // Opening again changes nothing.
        open_writer(&path, false).expect("reopen");
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime")
    }

    /// The likes in the database file itself, leaving its WAL aside: a copy
    /// of the file alone, opened on its own (0 before even the schema is
    /// there).
    fn likes_in_the_main_file(db: &std::path::Path) -> i64 {
        let copy = db.with_extension("copy");
        std::fs::copy(db, &copy).expect("copy the file");
        let conn = Connection::open(&copy).expect("open the copy");
        let rows = conn
            .query_row("SELECT COUNT(*) FROM likes", [], |row| row.get(0))
            .unwrap_or(0);
        drop(conn);
        std::fs::remove_file(&copy).expect("remove the copy");
        rows
    }

    #[test]
    fn the_checkpoint_thread_moves_commits_into_the_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("likekit.db");
        let rt = runtime();
        rt.block_on(async {
            let store = SqliteStore::open(SqliteOptions {
                database: Database::File(db.clone()),
                ..SqliteOptions::default()
            })
            .expect("open");
            let posts = (1..=200)
                .map(|id| likekit_proto::admin::SeedPost {
                    id: p(id),
                    likers: Vec::new(),
                })
                .collect();
            store
                .seed(&Seed {
                    users: Vec::new(),
                    posts,
                })
                .await
                .expect("seed");
            for post in 1..=200 {
                store.like(u(7), p(post)).await.expect("like");
            }
            // Far below SQLite's own automatic checkpoint: only the thread
            // can have copied the likes into the file.
            let wal_pages = std::fs::metadata(dir.path().join("likekit.db-wal"))
                .expect("the WAL")
                .len()
                / 4096;
            assert!(wal_pages < wal::BACKSTOP_CHECKPOINT_PAGES as u64 / 4);
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while likes_in_the_main_file(&db) < 200 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the likes never reached the database file"
                );
                tokio::time::sleep(wal::CHECKPOINT_EVERY).await;
            }
            store.close().await.expect("close");
        });
    }

    fn shard_rows(db: &std::path::Path) -> i64 {
        let conn = Connection::open(db).expect("open");
        conn.query_row("SELECT COUNT(*) FROM post_count_shards", [], |row| {
            row.get(0)
        })
        .expect("count")
    }

    #[test]
    fn shard_rows_left_by_an_earlier_run_are_folded_after_a_restart() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("likekit.db");
        let rt = runtime();
        let open = |hot_posts| {
            SqliteStore::open(SqliteOptions {
                database: Database::File(db.clone()),
                hot_posts,
                ..SqliteOptions::default()
            })
            .expect("open")
        };
        rt.block_on(async {
            // Every write hot: the likes go to shard rows.
            let store = open(HotPostOptions {
                threshold: 0,
                shards: 4,
                cool_down: Duration::from_secs(60),
            });
            store.put_post(p(1)).await.expect("post");
            store.put_post(p(2)).await.expect("post");
            for user in 1..=20 {
                store.like(u(user), p(1)).await.expect("like");
            }
            store.like(u(1), p(2)).await.expect("like");
            store.close().await.expect("close");
        });
        drop(rt);
        assert!(shard_rows(&db) > 0, "the hot likes went to shard rows");

        let rt = runtime();
        rt.block_on(async {
            // Nothing is hot now: the first write to post 1 must find its
            // shard rows (the writer lists them when it starts) and fold them.
            let store = open(HotPostOptions::default());
            let outcome = store.like(u(21), p(1)).await.expect("like");
            assert_eq!((outcome.state.count, outcome.state.version), (21, 21));
            let outcome = store.unlike(u(3), p(1)).await.expect("unlike");
            assert_eq!(outcome.state.count, 20);
            let outcome = store.like(u(2), p(2)).await.expect("like");
            assert_eq!(outcome.state.count, 2);
            store.close().await.expect("close");
        });
        assert_eq!(shard_rows(&db), 0, "every shard row folded back");
    }

    /// A database file in `dir` holding post 1 and nothing else, closed,
    /// and a runtime to open it again with.
    fn file_with_post_1(dir: &std::path::Path) -> (tokio::runtime::Runtime, std::path::PathBuf) {
        let db = dir.join("likekit.db");
        let rt = runtime();
        rt.block_on(async {
            let store = file_store(&db);
            store.put_post(p(1)).await.expect("post");
            store.close().await.expect("close");
        });
        (rt, db)
    }

    fn file_store(db: &std::path::Path) -> SqliteStore {
        SqliteStore::open(SqliteOptions {
            database: Database::File(db.to_path_buf()),
            ..SqliteOptions::default()
        })
        .expect("open")
    }

    #[test]
    fn a_failed_fsync_stops_every_later_write_and_readiness() {
        let dir = tempfile::tempdir().expect("temp dir");
        let rt = runtime();
        rt.block_on(async {
            let store = file_store(&dir.path().join("likekit.db"));
            store.put_post(p(1)).await.expect("post");
            store.like(u(1), p(1)).await.expect("like");
            store.ready().await.expect("ready");
            store.health.fail_next_fsync.store(true, Ordering::Relaxed);
            let err = store.like(u(2), p(1)).await.expect_err("fsync failed");
            assert!(matches!(err, StoreError::Backend(_)), "{err:?}");
            // The disk would take the next fsync, but that proves nothing
            // about the failed group: no write is acknowledged any more.
            for user in 3..6 {
                let err = store.like(u(user), p(1)).await.expect_err("failed store");
                assert!(err.to_string().contains("restarts"), "{err}");
            }
            let err = store.put_post(p(2)).await.expect_err("admin writes too");
            assert!(err.to_string().contains("restarts"), "{err}");
            let err = store.ready().await.expect_err("not ready");
            assert!(err.to_string().contains("fsync"), "{err}");
            // Reads go on.
            assert!(store.post(p(1)).await.expect("read").is_some());
            store.close().await.expect("close");
        });
    }

    #[test]
    fn a_panic_in_a_group_commit_fails_its_writes_and_the_writer_goes_on() {
        let rt = runtime();
        rt.block_on(async {
            let store = SqliteStore::open(SqliteOptions::default()).expect("open");
            store.put_post(p(1)).await.expect("post");
            store.like(u(1), p(1)).await.expect("like");
            store.health.panic_next_batch.store(true, Ordering::Relaxed);
            let err = store.like(u(2), p(1)).await.expect_err("panicked");
            assert!(matches!(err, StoreError::Backend(_)), "{err:?}");
            // Rolled back, and the writer still works.
            let outcome = store.like(u(3), p(1)).await.expect("like after the panic");
            assert_eq!((outcome.state.count, outcome.state.version), (2, 2));
            let err = store
                .on_writer(|_| -> Result<(), StoreError> { panic!("an admin task panicked") })
                .await
                .expect_err("panicked");
            assert!(matches!(err, StoreError::Backend(_)), "{err:?}");
            store
                .unlike(u(1), p(1))
                .await
                .expect("unlike after the panic");
            store.ready().await.expect("still ready");
            let audit = store.audit().await.expect("audit");
            assert_eq!((audit[0].count, audit[0].rows), (1, 1));
            store.close().await.expect("close");
            // Without a writer the store is not ready.
            assert!(store.ready().await.is_err());
        });
    }

    #[test]
    fn a_reader_never_goes_back_to_the_pool_inside_a_transaction() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("likekit.db");
        let rt = runtime();
        rt.block_on(async {
            let store = SqliteStore::open(SqliteOptions {
                database: Database::File(db.clone()),
                hot_posts: HotPostOptions {
                    threshold: 0,
                    shards: 4,
                    cool_down: Duration::from_secs(60),
                },
                ..SqliteOptions::default()
            })
            .expect("open");
            store.put_post(p(1)).await.expect("post");
            store.like(u(1), p(1)).await.expect("like");
            store.close().await.expect("close");
        });
        assert!(shard_rows(&db) > 0, "a sharded post: read in a transaction");
        let reader = open_reader(&db).expect("reader");
        PANIC_IN_READ.with(|panic| panic.set(true));
        let panicked =
            std::panic::catch_unwind(AssertUnwindSafe(|| read_post(&reader, p(1), None)));
        assert!(panicked.is_err(), "the injected panic");
        assert!(reader.is_autocommit(), "the read transaction was left open");
        let (snapshot, _) = read_post(&reader, p(1), None).expect("read").expect("post");
        assert_eq!(snapshot.count, 1);
    }

    #[test]
    fn likes_after_a_restart_sort_after_the_stored_ones_whatever_the_clock() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (rt, db) = file_with_post_1(dir.path());
        // A like stored by a run whose clock was a day ahead.
        let ahead = liked_at() + 7 * 86_400_000_000;
        {
            let conn = Connection::open(&db).expect("open");
            conn.execute(
                "UPDATE posts SET count = 1, version = 1, likers = ?1, likers_at = ?2 WHERE id = 1",
                rusqlite::params![encode_likers(&users([9])), encode_times(&[ahead])],
            )
            .expect("row");
            conn.execute("INSERT INTO likes (post_id, user_id) VALUES (1, 9)", [])
                .expect("like row");
        }
        rt.block_on(async {
            let store = file_store(&db);
            store.like(u(7), p(1)).await.expect("like");
            store.close().await.expect("close");
        });
        let conn = Connection::open(&db).expect("open");
        let at: Vec<u8> = conn
            .query_row("SELECT likers_at FROM posts WHERE id = 1", [], |row| {
                row.get(0)
            })
            .expect("times");
        let at = decode_times(&at);
        assert!(at[0] > ahead, "the new like is the newest: {at:?}");
    }

    /// The folder of an in-memory store whose process has ended is removed
    /// as the next one starts; a live process's stays.
    #[test]
    fn memory_folders_of_ended_processes_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        // Above Linux's largest pid (2^22): no such process.
        let ended = tmp.path().join("likekit-memory-4294000000-AbC123");
        let ours = tmp
            .path()
            .join(format!("likekit-memory-{}-XyZ789", std::process::id()));
        let other = tmp.path().join("likekit-memory-AbC123");
        for dir in [&ended, &ours, &other] {
            std::fs::create_dir(dir).unwrap();
            std::fs::write(dir.join("likekit.db"), b"").unwrap();
        }
        remove_memory_dirs_of_ended_processes(tmp.path());
        assert_eq!(!ended.exists(), cfg!(target_os = "linux"));
        assert!(ours.exists() && other.exists());
    }

    #[test]
    fn the_audit_shows_a_count_below_zero() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (rt, db) = file_with_post_1(dir.path());
        // Drift: a shard row at -1 and no like rows.
        Connection::open(&db)
            .expect("open")
            .execute(
                "INSERT INTO post_count_shards (post_id, shard, count, version) VALUES (1, 0, -1, 1)",
                [],
            )
            .expect("shard row");
        rt.block_on(async {
            let store = file_store(&db);
            let err = store.audit().await.expect_err("a count of -1 is not 0");
            assert!(err.to_string().contains("-1"), "{err}");
            store.close().await.expect("close");
        });
    }
}
