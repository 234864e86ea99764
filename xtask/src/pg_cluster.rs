//! A throwaway PostgreSQL cluster for the server bench.
//!
//! [`Cluster::start`] runs `initdb` into a folder (the bench uses
//! `target/bench/run/pg`) and `pg_ctl start` on a free loopback port:
//! TCP on 127.0.0.1 only, the Unix socket in the same folder, trust
//! authentication for the superuser `likekit`.
//!
//! Clean-up is a guard process started before `initdb`, in its own process
//! group (Ctrl-C does not reach it): it waits for its standard input to
//! close, then stops the server, keeps its log beside the folder (`pg.log`)
//! and deletes the folder. Dropping the [`Cluster`] closes that pipe and
//! waits for the guard, so a failed step cleans up too; when xtask ends any
//! other way (Ctrl-C, a panic, SIGKILL) the kernel closes the pipe and the
//! guard cleans up all the same. (`pg_ctl` starts the server in a session of
//! its own, so nothing else would stop it.) A folder left behind anyway is
//! stopped and deleted by the next start.
//!
//! PostgreSQL refuses to run as root. When xtask runs as root the folder is
//! given to the `postgres` system user (or `nobody`) and every PostgreSQL
//! server program runs as that user through `setpriv`; if that user cannot
//! reach the folder (the project under `/root`), the cluster goes to a
//! temporary folder instead. `psql` connects over TCP and runs as whoever we
//! are.
//!
//! # Settings
//!
//! Written into the cluster's `postgresql.conf` from [`SETTINGS`], each
//! with its reason there. In short, for a durable server on a 2-core,
//! 24 GiB machine shared with the server under test and the load
//! generator:
//!
//! * **Durability as in production**: `fsync`, `synchronous_commit` and
//!   `full_page_writes` stay on (a like is on disk before it is answered;
//!   the store also asks for `synchronous_commit = on` per connection).
//! * **Memory**: `shared_buffers = 1GB` holds the whole data set (about
//!   350 MB with indexes) with room to spare; `effective_cache_size = 16GB`
//!   tells the planner the rest of RAM caches files; `work_mem` and
//!   `maintenance_work_mem` sized for the seed's bulk statements and the
//!   audit.
//! * **No checkpoint mid-load**: `max_wal_size = 8GB` and
//!   `checkpoint_timeout = 30min`, so the loads (and their fsyncs) are not
//!   measured against a checkpoint's write burst that a 10-second run would
//!   catch or miss by chance.
//! * **Connections**: `max_connections = 100` covers the server's pool (the
//!   bench sets 32, so more commits share each WAL flush), the naive
//!   baseline's, `bench seed`/`bench audit` and `psql`.
//! * **Plans**: `random_page_cost = 1.1` (SSD), `jit = off` (the statements
//!   are short; JIT would only add compile time to the seed and the audit).

use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use crate::{install, proc};

/// The superuser the cluster is made with (trust authentication, loopback
/// only).
pub const SUPERUSER: &str = "likekit";

/// `postgresql.conf` settings: name, value, why.
pub const SETTINGS: &[(&str, &str, &str)] = &[
    ("listen_addresses", "'127.0.0.1'", "loopback only"),
    (
        "max_connections",
        "100",
        "the server's pool (32 in the bench), the naive baseline's (8), seed, audit and psql",
    ),
    (
        "shared_buffers",
        "1GB",
        "the whole data set (about 350 MB with indexes) stays in PostgreSQL's own cache",
    ),
    (
        "effective_cache_size",
        "16GB",
        "a planner hint: most of the 24 GiB caches files",
    ),
    (
        "work_mem",
        "32MB",
        "the seed's bulk statements and the audit's aggregates sort in memory",
    ),
    (
        "maintenance_work_mem",
        "512MB",
        "adding the friends table's keys back and VACUUM after the seed",
    ),
    ("fsync", "on", "likes are durable: a commit is on disk"),
    (
        "synchronous_commit",
        "on",
        "before the like is answered (the store sets it per connection too)",
    ),
    ("full_page_writes", "on", "as in production: no torn pages"),
    (
        "max_wal_size",
        "8GB",
        "no checkpoint forced by WAL volume during the seed or the loads",
    ),
    (
        "min_wal_size",
        "1GB",
        "WAL segments are recycled, not created",
    ),
    (
        "checkpoint_timeout",
        "30min",
        "no timed checkpoint inside a run",
    ),
    (
        "random_page_cost",
        "1.1",
        "SSD: an index read costs about a sequential one",
    ),
    (
        "jit",
        "off",
        "short statements; JIT would only add compile time to the seed and the audit",
    ),
    ("logging_collector", "off", "pg_ctl writes the log"),
];

/// The user PostgreSQL runs as when we run as root.
#[derive(Debug, Clone)]
struct RunAs {
    name: String,
    uid: u32,
    gid: u32,
}

fn run_as() -> Result<Option<RunAs>, String> {
    let me = proc::capture(Command::new("id").arg("-u")).ok_or("`id -u` failed")?;
    if me != "0" {
        return Ok(None);
    }
    for name in ["postgres", "nobody"] {
        let uid = proc::capture(Command::new("id").args(["-u", name]));
        let gid = proc::capture(Command::new("id").args(["-g", name]));
        if let (Some(Ok(uid)), Some(Ok(gid))) = (uid.map(|u| u.parse()), gid.map(|g| g.parse())) {
            return Ok(Some(RunAs {
                name: name.to_owned(),
                uid,
                gid,
            }));
        }
    }
    Err(
        "running as root and neither a `postgres` nor a `nobody` user exists \
         to run PostgreSQL as (it refuses to run as root)"
            .to_owned(),
    )
}

/// Whether `user` can reach `dir`'s parent (the folder's own mode is set
/// later): every folder above it searchable.
fn reachable(user: &RunAs, dir: &Path) -> bool {
    let Some(parent) = dir.parent() else {
        return false;
    };
    if fs::create_dir_all(parent).is_err() {
        return false;
    }
    command(Some(user), Path::new("/bin/sh"))
        .args(["-c", r#"test -x "$1""#, "likekit-pg-probe"])
        .arg(parent)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// `program` as a command that runs as `user` (when set).
fn command(user: Option<&RunAs>, program: &Path) -> Command {
    match user {
        Some(user) => {
            let mut cmd = Command::new("setpriv");
            cmd.arg(format!("--reuid={}", user.uid))
                .arg(format!("--regid={}", user.gid))
                .arg("--clear-groups")
                .arg("--")
                .arg(program);
            cmd
        }
        None => Command::new(program),
    }
}

/// Runs a command to the end with its output captured; the output in the
/// error when it fails.
fn run(cmd: &mut Command) -> Result<String, String> {
    let shown = proc::display(cmd);
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| proc::spawn_error(cmd, &e))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(stdout)
    } else {
        Err(format!(
            "`{shown}` failed ({}):\n{stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn free_port() -> Result<u16, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free loopback port: {e}"))?;
    listener
        .local_addr()
        .map(|addr| addr.port())
        .map_err(|e| e.to_string())
}

/// The settings as `postgresql.conf` lines.
pub fn conf_text(port: u16, socket_dir: &Path) -> String {
    let mut text = String::from("\n# cargo xtask bench (see xtask/src/pg_cluster.rs)\n");
    for (name, value, why) in SETTINGS {
        text.push_str(&format!("{name} = {value}\t\t# {why}\n"));
    }
    text.push_str(&format!("port = {port}\n"));
    // A Unix socket's path has room for about 107 bytes: a deeper folder
    // gets TCP only.
    let dir = socket_dir.display().to_string();
    let dir = if dir.len() + "/.s.PGSQL.65535.lock".len() < 100 {
        dir.replace('\'', "''")
    } else {
        String::new()
    };
    text.push_str(&format!("unix_socket_directories = '{dir}'\n"));
    text
}

/// Waits for standard input to close, then runs its arguments (the
/// server's stop command), keeps the log and deletes the folder
/// (`$LIKEKIT_PG_DIR`). Immune to the terminal's signals.
const GUARD_SCRIPT: &str = r#"
trap '' INT TERM HUP
cat >/dev/null
"$@" >/dev/null 2>&1
cp "$LIKEKIT_PG_DIR/postgres.log" "$LIKEKIT_PG_DIR.log" 2>/dev/null
rm -rf "$LIKEKIT_PG_DIR"
"#;

/// A running throwaway cluster; dropping it stops the server and deletes
/// its folder.
#[derive(Debug)]
pub struct Cluster {
    /// The loopback TCP port it listens on.
    pub port: u16,
    /// The folder with the data, the log and the socket.
    pub dir: PathBuf,
    bin: PathBuf,
    user: Option<RunAs>,
    guard: Option<Child>,
    guard_pipe: Option<ChildStdin>,
}

impl Cluster {
    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The server's log.
    pub fn log(&self) -> PathBuf {
        self.dir.join("postgres.log")
    }

    /// `initdb` and `pg_ctl start` a new cluster in `dir` (replacing
    /// whatever is there). Installs PostgreSQL when it is missing.
    pub fn start(dir: &Path) -> Result<Cluster, String> {
        // The real folder of the server programs (PATH may hold links to
        // a few of them), where psql is too.
        let bin = install::postgres_bin()?;
        let bin = fs::canonicalize(bin.join("initdb"))
            .ok()
            .and_then(|initdb| initdb.parent().map(Path::to_path_buf))
            .unwrap_or(bin);
        let user = run_as()?;
        // The user PostgreSQL runs as must reach the folder; when a parent
        // is closed to it (a project under /root), use a temporary folder.
        let mut dir = dir.to_path_buf();
        if let Some(user) = &user
            && !reachable(user, &dir)
        {
            dir = std::env::temp_dir().join(format!("likekit-bench-pg-{}", std::process::id()));
        }
        let dir = dir.as_path();
        let mut cluster = Cluster {
            port: 0,
            dir: dir.to_path_buf(),
            bin,
            user,
            guard: None,
            guard_pipe: None,
        };
        cluster.clean_up();
        fs::create_dir_all(dir).map_err(|e| format!("could not create {}: {e}", dir.display()))?;
        // The guard next, so that whatever happens from here is cleaned up.
        let stop = cluster.stop_command("immediate");
        let mut guard = Command::new("/bin/sh");
        guard
            .args(["-c", GUARD_SCRIPT, "likekit-pg-guard"])
            .arg(stop.get_program())
            .args(stop.get_args())
            .env("LIKEKIT_PG_DIR", dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let mut child = guard.spawn().map_err(|e| {
            let _ = fs::remove_dir_all(dir);
            format!("could not start the clean-up guard: {e}")
        })?;
        cluster.guard_pipe = child.stdin.take();
        cluster.guard = Some(child);
        if let Some(user) = &cluster.user {
            std::os::unix::fs::chown(dir, Some(user.uid), Some(user.gid))
                .map_err(|e| format!("could not give {} to {}: {e}", dir.display(), user.name))?;
        }
        // The socket folder must be reachable by its owner; 0700 keeps the
        // rest of the machine out.
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("could not restrict {}: {e}", dir.display()))?;

        run(command(cluster.user.as_ref(), &cluster.bin.join("initdb"))
            .arg("-D")
            .arg(cluster.data())
            .args(["-U", SUPERUSER, "-A", "trust", "-E", "UTF8"])
            // The cluster is thrown away after the run: initdb's own files
            // need no fsync. The server's commits are fsynced as usual.
            .args(["--locale=C", "--no-sync"]))?;

        let conf = cluster.data().join("postgresql.conf");
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = free_port()?;
            let mut file = OpenOptions::new()
                .append(true)
                .open(&conf)
                .map_err(|e| format!("could not open {}: {e}", conf.display()))?;
            file.write_all(conf_text(port, dir).as_bytes())
                .map_err(|e| format!("could not write {}: {e}", conf.display()))?;
            drop(file);
            let started = run(command(cluster.user.as_ref(), &cluster.bin.join("pg_ctl"))
                .arg("-D")
                .arg(cluster.data())
                .arg("-l")
                .arg(cluster.log())
                .args(["-w", "-t", "60", "start"]));
            match started {
                Ok(_) => {
                    cluster.port = port;
                    return Ok(cluster);
                }
                Err(e) => {
                    // Most likely the port was taken in the meantime: retry
                    // (a later `port` line overrides an earlier one).
                    let log = fs::read_to_string(cluster.log()).unwrap_or_default();
                    last_error = format!("{e}\nserver log:\n{log}");
                }
            }
        }
        Err(last_error)
    }

    /// The URL of `database` as the superuser.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{database}", self.port)
    }

    /// Runs SQL statements with `psql` (each `-c` in its own transaction;
    /// stops at the first error).
    pub fn psql(&self, database: &str, statements: &[&str]) -> Result<String, String> {
        let beside = self.bin.join("psql");
        let mut cmd = if proc::is_executable(&beside) {
            Command::new(beside)
        } else {
            Command::new("psql")
        };
        cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .arg("-d")
            .arg(self.url(database));
        for sql in statements {
            cmd.arg("-c").arg(sql);
        }
        run(&mut cmd)
    }

    /// `pg_ctl stop` in `mode` (`fast`: finish a checkpoint; `immediate`:
    /// just stop), as the cluster's owner.
    fn stop_command(&self, mode: &str) -> Command {
        let mut cmd = command(self.user.as_ref(), &self.bin.join("pg_ctl"));
        cmd.arg("-D")
            .arg(self.data())
            .args(["-m", mode, "-w", "-t", "60", "stop"]);
        cmd
    }

    /// Stops the server (finishing a checkpoint) and deletes the folder; an
    /// error if the server does not stop.
    pub fn stop(self) -> Result<(), String> {
        let stopped = run(&mut self.stop_command("fast"));
        drop(self);
        stopped.map(drop)
    }

    /// Stops a server left running in the folder (if any) and deletes it.
    fn clean_up(&self) {
        if self.data().join("postmaster.pid").exists() {
            let _ = self
                .stop_command("immediate")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        if self.dir.exists() {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Closing the pipe tells the guard to stop the server, keep its log
        // and delete the folder; wait until it has.
        drop(self.guard_pipe.take());
        if let Some(mut guard) = self.guard.take() {
            let _ = guard.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_keep_commits_durable() {
        let text = conf_text(54321, Path::new("/tmp/it's"));
        for line in [
            "fsync = on",
            "synchronous_commit = on",
            "full_page_writes = on",
            "listen_addresses = '127.0.0.1'",
            "port = 54321",
            "unix_socket_directories = '/tmp/it''s'",
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
        for (name, _, why) in SETTINGS {
            assert!(!why.is_empty(), "{name} has no reason");
        }
    }

    /// Starts a real cluster (installing PostgreSQL when missing), so it
    /// runs only when asked: `cargo test -p xtask -- --ignored`.
    #[test]
    #[ignore = "starts PostgreSQL"]
    fn a_cluster_runs_sql_and_is_cleaned_up() {
        let base = std::env::temp_dir().join(format!("likekit-xtask-pg-{}", std::process::id()));
        fs::create_dir_all(&base).expect("temp folder");
        let dir = base.join("pg");
        let cluster = Cluster::start(&dir).expect("started");
        let port = cluster.port;
        assert_eq!(
            cluster
                .psql("postgres", &["SHOW synchronous_commit"])
                .expect("psql")
                .trim(),
            "on"
        );
        assert_eq!(
            cluster
                .psql("postgres", &["SHOW shared_buffers"])
                .expect("psql")
                .trim(),
            "1GB"
        );
        cluster.stop().expect("stopped");
        assert!(!dir.exists(), "{} is left behind", dir.display());
        assert!(base.join("pg.log").is_file(), "the log is kept");
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());

        // Dropped without stopping (a failed step): cleaned up all the same.
        let cluster = Cluster::start(&dir).expect("started again");
        let port = cluster.port;
        drop(cluster);
        assert!(!dir.exists(), "{} is left behind", dir.display());
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());

        // A folder the server's user cannot reach (only when we are root
        // and it is another user): a temporary folder instead.
        let closed = base.join("closed");
        fs::create_dir_all(&closed).expect("folder");
        fs::set_permissions(&closed, fs::Permissions::from_mode(0o700)).expect("chmod");
        let cluster = Cluster::start(&closed.join("pg")).expect("started in a closed folder");
        if run_as().expect("user").is_some() {
            assert!(
                !cluster.dir.starts_with(&closed),
                "{}",
                cluster.dir.display()
            );
        }
        assert_eq!(
            cluster
                .psql("postgres", &["SELECT 1"])
                .expect("psql")
                .trim(),
            "1"
        );
        let moved = cluster.dir.clone();
        cluster.stop().expect("stopped");
        assert!(!moved.exists(), "{} is left behind", moved.display());
        let _ = fs::remove_file(moved.with_extension("log"));
        fs::remove_dir_all(&base).expect("clean up");
    }
}
