//! The SQLite writer's two helpers: the thread that makes commits durable
//! before they are answered, and the one that checkpoints.
//!
//! **Pipelined group commit.** The writer commits each group with
//! `synchronous=NORMAL`: the WAL frames are written but not fsynced, so the
//! writer goes straight on to the next group. It hands the group's answers
//! to the [`Syncer`], which fsyncs the WAL file once for every group waiting
//! (one `fdatasync` covers all frames written before it started) and only
//! then answers them. A like is therefore on disk before its answer, as with
//! `synchronous=FULL`, but the writer applies group N+1 while group N's
//! fsync runs, instead of waiting for it.
//!
//! What readers see: a group's changes are visible to views from its commit,
//! up to one fsync (about a millisecond) before the likes are answered. A
//! power cut in that window loses likes nobody was told were saved, and the
//! counts other viewers glimpsed with them; counts stay exact in what the
//! file holds (SQLite's WAL checksums end the log at the last whole commit).
//!
//! **A failed fsync stops the writes.** After a failed `fsync` the kernel
//! may have dropped the dirty pages it could not write and marked them
//! clean, so a later `fsync` can succeed without the failed group's frames
//! ever reaching the disk; answering later groups would then acknowledge
//! likes that recovery cannot see (it stops at the missing frames). So the
//! first failed fsync marks the store failed ([`Health`]): that group and
//! every group after it are answered with an error, the writer refuses new
//! writes, and `/readyz` answers 503 until the process restarts (and SQLite
//! recovers the WAL from what is really on disk).
//!
//! **Checkpoints off the writer.** SQLite's automatic checkpoint runs inside
//! a commit, on the writer. Here a separate thread with its own connection
//! runs a `PASSIVE` checkpoint (which never blocks the writer or a reader)
//! after commits, at most every [`CHECKPOINT_EVERY`]; the automatic one stays
//! on as a backstop at [`BACKSTOP_CHECKPOINT_PAGES`].

use std::{
    fs::File,
    path::{Path, PathBuf},
    sync::{Arc, OnceLock, mpsc},
    thread::JoinHandle,
    time::Duration,
};

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::super::{StoreError, WriteOutcome};

/// The checkpoint thread runs at most this often while writes come in.
pub const CHECKPOINT_EVERY: Duration = Duration::from_millis(50);

/// SQLite's automatic checkpoint (run by the writer inside a commit) only
/// past this many WAL pages: normally the checkpoint thread keeps the WAL far
/// below it.
pub const BACKSTOP_CHECKPOINT_PAGES: i64 = 8 * 1024;

/// Where one write's answer goes.
pub(super) type Reply = oneshot::Sender<Result<WriteOutcome, StoreError>>;

/// A writer task's answer, given whether its commit reached the disk.
pub(super) type TaskReply = Box<dyn FnOnce(Result<(), StoreError>) + Send>;

/// Answers held until the WAL holding their commit is on disk.
pub(super) enum Pending {
    /// One group commit's answers, in the order the writes came.
    Writes(Vec<(Reply, Result<WriteOutcome, StoreError>)>),
    /// A writer task's answer.
    Task(TaskReply),
}

impl Pending {
    /// Sends the answers; a failed fsync turns every success into that
    /// error (the write may or may not survive a crash: the client is told
    /// it was not saved, and re-sends its state).
    pub(super) fn deliver(self, synced: &Result<(), StoreError>) {
        match self {
            Pending::Writes(answers) => {
                for (reply, outcome) in answers {
                    let outcome = match (synced, outcome) {
                        (Err(err), Ok(_)) => Err(err.clone()),
                        (_, outcome) => outcome,
                    };
                    let _ = reply.send(outcome);
                }
            }
            Pending::Task(reply) => reply(synced.clone()),
        }
    }
}

/// Whether the store still takes writes: shared by the writer, the fsync
/// thread and the store's `ready()`.
#[derive(Debug, Default)]
pub(super) struct Health {
    /// Why the store takes no more writes, once it does not.
    failed: OnceLock<String>,
    /// Tests: the next fsync fails as if the disk had.
    #[cfg(test)]
    pub(super) fail_next_fsync: std::sync::atomic::AtomicBool,
    /// Tests: the writer panics in the middle of its next group commit.
    #[cfg(test)]
    pub(super) panic_next_batch: std::sync::atomic::AtomicBool,
}

impl Health {
    /// Marks the store failed (the first reason given is kept) and logs it.
    pub(super) fn fail(&self, why: String) {
        if self.failed.set(why).is_ok() {
            tracing::error!(
                reason = self.failed.get().map_or("", String::as_str),
                "the SQLite store takes no more writes until the server restarts"
            );
        }
    }

    /// Panics when a test asked for it; nothing outside tests.
    #[inline]
    pub(super) fn injected_panic(&self) {
        #[cfg(test)]
        if self
            .panic_next_batch
            .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            panic!("a group commit panicked (injected by a test)");
        }
    }

    /// The error every write gets once the store has failed.
    pub(super) fn check(&self) -> Result<(), StoreError> {
        match self.failed.get() {
            None => Ok(()),
            Some(why) => Err(StoreError::Backend(format!(
                "the store takes no more writes until the server restarts: {why}"
            ))),
        }
    }
}

/// Answers commits once they are durable; see the module docs.
pub(super) struct Syncer {
    /// `None` when the store is not durable: answers go out at once.
    pending: Option<mpsc::Sender<Pending>>,
    thread: Option<JoinHandle<()>>,
    health: Arc<Health>,
}

impl Syncer {
    /// A syncer for the database at `path` (its WAL is `<path>-wal`); when
    /// not `durable` it answers at once and starts no thread. A failed
    /// fsync marks `health` failed.
    pub(super) fn start(
        path: &Path,
        durable: bool,
        health: Arc<Health>,
    ) -> Result<Self, StoreError> {
        if !durable {
            return Ok(Self {
                pending: None,
                thread: None,
                health,
            });
        }
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let wal = PathBuf::from(wal);
        let (pending, receiver) = mpsc::channel();
        let syncer_health = health.clone();
        let thread = std::thread::Builder::new()
            .name("likekit-fsync".into())
            .spawn(move || run_syncer(&wal, &receiver, &syncer_health))
            .map_err(|e| StoreError::Backend(format!("cannot start the fsync thread: {e}")))?;
        Ok(Self {
            pending: Some(pending),
            thread: Some(thread),
            health,
        })
    }

    /// Answers `answers` once everything committed so far is on disk.
    pub(super) fn after_sync(&self, answers: Pending) {
        match &self.pending {
            Some(pending) => {
                if let Err(mpsc::SendError(answers)) = pending.send(answers) {
                    // The thread is gone (it only ends when this is dropped,
                    // or when it panicked): nothing is made durable any more.
                    self.health.fail("the fsync thread stopped".into());
                    answers.deliver(&self.health.check());
                }
            }
            None => answers.deliver(&Ok(())),
        }
    }

    /// Delivers everything pending, then stops the thread.
    pub(super) fn finish(mut self) {
        self.pending = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run_syncer(wal: &Path, pending: &mpsc::Receiver<Pending>, health: &Health) {
    // Opened at the first commit (the writer has made the file by then) and
    // kept: SQLite reuses the same WAL file while the database is open.
    let mut file: Option<File> = None;
    let mut ready = Vec::new();
    while let Ok(first) = pending.recv() {
        ready.push(first);
        ready.extend(pending.try_iter());
        // Once an fsync has failed, a later one proves nothing (see the
        // module docs): everything still pending fails without trying.
        let synced = health.check().and_then(|()| sync(wal, &mut file, health));
        if let Err(err) = &synced {
            health.fail(err.to_string());
        }
        for answers in ready.drain(..) {
            answers.deliver(&synced);
        }
    }
}

fn sync(wal: &Path, file: &mut Option<File>, health: &Health) -> Result<(), StoreError> {
    let failed = |e: std::io::Error| StoreError::Backend(format!("fsync {}: {e}", wal.display()));
    #[cfg(test)]
    if health
        .fail_next_fsync
        .swap(false, std::sync::atomic::Ordering::Relaxed)
    {
        return Err(failed(std::io::Error::other("injected by a test")));
    }
    #[cfg(not(test))]
    let _ = health;
    if file.is_none() {
        *file = Some(File::open(wal).map_err(failed)?);
    }
    match file {
        Some(file) => file.sync_data().map_err(failed),
        None => Ok(()),
    }
}

/// Copies committed WAL frames into the database file, beside the writer.
///
/// The writer pokes `commits` after each commit; the thread then runs one
/// `PASSIVE` checkpoint and waits [`CHECKPOINT_EVERY`] before the next, so a
/// stream of commits costs one checkpoint per interval. It ends when the
/// writer does, after a last checkpoint.
pub(super) fn run_checkpointer(conn: &Connection, commits: &mpsc::Receiver<()>) {
    let checkpoint = || {
        if let Err(err) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            // Up to one every CHECKPOINT_EVERY while writes come in.
            crate::log_limit::limited!(
                tracing::Level::WARN,
                error = %err,
                "background checkpoint failed"
            );
        }
    };
    while commits.recv().is_ok() {
        checkpoint();
        std::thread::sleep(CHECKPOINT_EVERY);
    }
    checkpoint();
}

#[cfg(test)]
mod tests {
    use super::*;
    use likekit_proto::{LikeState, PostId};

    fn outcome(count: u64) -> Result<WriteOutcome, StoreError> {
        Ok(WriteOutcome {
            state: LikeState {
                count,
                liked_by_me: true,
                version: count,
            },
            changed: true,
            snapshot: None,
        })
    }

    /// Hands one write's answer to `syncer` and waits for it.
    fn answered(syncer: &Syncer) -> Result<WriteOutcome, StoreError> {
        let (reply, answer) = oneshot::channel();
        syncer.after_sync(Pending::Writes(vec![(reply, outcome(1))]));
        answer.blocking_recv().expect("answered")
    }

    #[test]
    fn durable_answers_wait_for_the_wal_fsync() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("likekit.db");
        std::fs::write(dir.path().join("likekit.db-wal"), b"frames").expect("wal");
        let health = Arc::new(Health::default());
        let syncer = Syncer::start(&db, true, health.clone()).expect("start");
        // With the file there, the answer goes out as it was.
        assert_eq!(answered(&syncer).expect("synced").state.count, 1);
        // Errors from the commit itself pass through unchanged.
        let (reply, answer) = oneshot::channel();
        syncer.after_sync(Pending::Writes(vec![(
            reply,
            Err(StoreError::PostNotFound(PostId::MIN)),
        )]));
        assert!(matches!(
            answer.blocking_recv().expect("answered"),
            Err(StoreError::PostNotFound(PostId::MIN))
        ));
        // A task hears whether its commit reached the disk.
        let (told, heard) = std::sync::mpsc::channel();
        syncer.after_sync(Pending::Task(Box::new(move |synced| {
            let _ = told.send(synced.is_ok());
        })));
        assert!(heard.recv().expect("task answered"));
        assert!(health.check().is_ok());
        syncer.finish();
    }

    #[test]
    fn after_a_failed_fsync_nothing_is_acknowledged_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("likekit.db");
        let health = Arc::new(Health::default());
        let syncer = Syncer::start(&db, true, health.clone()).expect("start");
        // No WAL file yet: the fsync fails, so the write is not confirmed.
        let err = answered(&syncer).expect_err("no WAL to fsync");
        assert!(err.to_string().contains("fsync"), "{err}");
        // A later fsync would succeed (the file is there now), but it could
        // not prove the failed group's frames reached the disk: every later
        // write fails too, and the store says it has failed.
        std::fs::write(dir.path().join("likekit.db-wal"), b"frames").expect("wal");
        let err = answered(&syncer).expect_err("still failed");
        assert!(err.to_string().contains("restarts"), "{err}");
        assert!(health.check().is_err());
        syncer.finish();
    }

    #[test]
    fn finishing_delivers_everything_pending() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("likekit.db");
        std::fs::write(dir.path().join("likekit.db-wal"), b"").expect("wal");
        let syncer = Syncer::start(&db, true, Arc::default()).expect("start");
        let answers: Vec<_> = (0..100)
            .map(|n| {
                let (reply, answer) = oneshot::channel();
                syncer.after_sync(Pending::Writes(vec![(reply, outcome(n))]));
                answer
            })
            .collect();
        syncer.finish();
        for (n, answer) in (0..).zip(answers) {
            let state = answer
                .blocking_recv()
                .expect("delivered")
                .expect("ok")
                .state;
            assert_eq!(state.count, n, "in order");
        }
    }

    #[test]
    fn a_store_that_is_not_durable_answers_at_once() {
        let syncer = Syncer::start(Path::new("no/such/dir/likekit.db"), false, Arc::default())
            .expect("start");
        assert!(syncer.thread.is_none());
        assert_eq!(answered(&syncer).expect("at once").state.count, 1);
        syncer.finish();
    }
}
