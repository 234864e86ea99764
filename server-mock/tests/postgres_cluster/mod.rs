//! A throwaway PostgreSQL cluster for tests: `initdb` into a temporary
//! folder, `pg_ctl start` on a free loopback port (Unix sockets in the same
//! folder), one database per test, and everything stopped and deleted at the
//! end.
//!
//! PostgreSQL refuses to run as root, so when the tests run as root the
//! cluster belongs to the `postgres` system user (or `nobody`), and every
//! PostgreSQL program runs as that user through `setpriv`.
//!
//! Clean-up is a guard process started before `initdb`: it waits for its
//! standard input to close, then stops the server and deletes the folder.
//! Dropping a [`Cluster`] closes that pipe and waits for the guard; when the
//! test process ends any other way (a panic that aborts, a signal, SIGKILL)
//! the kernel closes the pipe and the guard cleans up all the same. The
//! shared cluster lives in a static, which Rust never drops, so for it the
//! guard is what runs at the end.

#![allow(dead_code, clippy::unwrap_used)]

use std::{
    net::TcpListener,
    os::unix::{fs::PermissionsExt as _, process::CommandExt as _},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, Command, Output, Stdio},
    sync::{
        OnceLock,
        atomic::{AtomicU32, Ordering},
    },
};

use likekit_server::store::{HotPostOptions, PostgresOptions, PostgresStore};

/// What to do when PostgreSQL is missing.
pub const INSTALL_HINT: &str = "install it with `cargo xtask doctor --install postgresql` \
     (or `apt-get install postgresql`), or point LIKEKIT_PG_BIN at the folder holding \
     initdb and pg_ctl";

/// The superuser the clusters are made with (trust authentication, loopback
/// only).
pub const SUPERUSER: &str = "likekit";

fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first of `dirs` that holds both `initdb` and `pg_ctl`.
pub fn find_bin_in(dirs: &[PathBuf]) -> Result<PathBuf, String> {
    dirs.iter()
        .find(|dir| is_executable(&dir.join("initdb")) && is_executable(&dir.join("pg_ctl")))
        .cloned()
        .ok_or_else(|| {
            let looked: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
            format!(
                "PostgreSQL's initdb and pg_ctl were not found (looked in: {}); {INSTALL_HINT}",
                if looked.is_empty() {
                    "nowhere".to_owned()
                } else {
                    looked.join(", ")
                }
            )
        })
}

/// Where PostgreSQL's server programs are: `$LIKEKIT_PG_BIN`, then `PATH`,
/// then Debian's `/usr/lib/postgresql/<version>/bin`, newest first.
pub fn find_bin() -> Result<PathBuf, String> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os("LIKEKIT_PG_BIN") {
        dirs.push(PathBuf::from(dir));
    }
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    let mut debian: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .collect();
    debian.sort_by_key(|(version, _)| std::cmp::Reverse(*version));
    dirs.extend(debian.into_iter().map(|(_, dir)| dir));
    find_bin_in(&dirs)
}

fn capture(cmd: &mut Command) -> Option<String> {
    let out = cmd.stderr(Stdio::null()).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The user PostgreSQL runs as when the tests run as root.
#[derive(Debug, Clone)]
struct RunAs {
    name: String,
    uid: u32,
    gid: u32,
}

fn run_as() -> Result<Option<RunAs>, String> {
    let me = capture(Command::new("id").arg("-u")).ok_or("`id -u` failed")?;
    if me != "0" {
        return Ok(None);
    }
    for name in ["postgres", "nobody"] {
        let uid = capture(Command::new("id").args(["-u", name]));
        let gid = capture(Command::new("id").args(["-g", name]));
        if let (Some(uid), Some(gid)) = (uid, gid) {
            let (Ok(uid), Ok(gid)) = (uid.parse(), gid.parse()) else {
                continue;
            };
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

fn run(cmd: &mut Command, what: &str) -> Result<Output, String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("could not run {what}: {e}"))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
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

/// A running throwaway cluster. Dropping it stops the server and deletes its
/// folder.
#[derive(Debug)]
pub struct Cluster {
    /// The loopback TCP port it listens on.
    pub port: u16,
    /// The folder holding the data, the log and the sockets.
    pub dir: PathBuf,
    guard: Option<Child>,
    guard_pipe: Option<ChildStdin>,
    next_database: AtomicU32,
}

/// Stops the server (if it runs) and deletes the folder once its standard
/// input closes; immune to the terminal's interrupt.
const GUARD_SCRIPT: &str = r#"
trap '' INT TERM HUP
cat >/dev/null
"$2" -D "$1/data" -m immediate -w stop >/dev/null 2>&1
rm -rf "$1"
"#;

impl Cluster {
    /// `initdb` and `pg_ctl start` a new cluster. Takes a second or two.
    pub fn start() -> Result<Cluster, String> {
        let bin = find_bin()?;
        let user = run_as()?;
        let dir = tempfile::Builder::new()
            .prefix("likekit-pg-")
            .tempdir()
            .map_err(|e| format!("temporary folder: {e}"))?
            .keep();
        if let Some(user) = &user {
            std::os::unix::fs::chown(&dir, Some(user.uid), Some(user.gid))
                .map_err(|e| format!("could not give {} to {}: {e}", dir.display(), user.name))?;
        }

        // The guard first, so that whatever happens next gets cleaned up.
        let mut guard = command(user.as_ref(), Path::new("/bin/sh"));
        guard
            .args(["-c", GUARD_SCRIPT, "likekit-pg-guard"])
            .arg(&dir)
            .arg(bin.join("pg_ctl"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own process group: Ctrl-C in the terminal does not reach it.
            .process_group(0);
        let mut child = match guard.spawn() {
            Ok(child) => child,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(format!("could not start the clean-up guard: {e}"));
            }
        };
        let pipe = child.stdin.take();
        let mut cluster = Cluster {
            port: 0,
            dir: dir.clone(),
            guard: Some(child),
            guard_pipe: pipe,
            next_database: AtomicU32::new(0),
        };

        let data = dir.join("data");
        run(
            command(user.as_ref(), &bin.join("initdb"))
                .arg("-D")
                .arg(&data)
                .args(["-U", SUPERUSER, "-A", "trust", "-E", "UTF8"])
                .args(["--locale=C", "--no-sync"]),
            "initdb",
        )?;

        let log = dir.join("postgres.log");
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = free_port()?;
            let options = format!(
                "-c listen_addresses=127.0.0.1 -p {port} -k {} \
                 -c max_connections=200 -c shared_buffers=32MB",
                dir.display()
            );
            let started = run(
                command(user.as_ref(), &bin.join("pg_ctl"))
                    .arg("-D")
                    .arg(&data)
                    .arg("-l")
                    .arg(&log)
                    .args(["-w", "-t", "60", "-o", &options, "start"]),
                "pg_ctl start",
            );
            match started {
                Ok(_) => {
                    cluster.port = port;
                    return Ok(cluster);
                }
                Err(e) => {
                    // Most likely the port was taken in the meantime: retry.
                    let log = std::fs::read_to_string(&log).unwrap_or_default();
                    last_error = format!("{e}\nserver log:\n{log}");
                }
            }
        }
        Err(last_error)
    }

    /// A URL for `database` as the superuser.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{database}", self.port)
    }

    /// Creates a new, empty database and returns its URL.
    pub async fn create_database(&self) -> String {
        let name = format!(
            "test_{}",
            self.next_database.fetch_add(1, Ordering::Relaxed)
        );
        let (client, connection) =
            tokio_postgres::connect(&self.url("postgres"), tokio_postgres::NoTls)
                .await
                .unwrap_or_else(|e| panic!("connect to the test cluster: {e}"));
        let connection = tokio::spawn(connection);
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap_or_else(|e| panic!("create database {name}: {e}"));
        drop(client);
        let _ = connection.await;
        self.url(&name)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Closing the pipe tells the guard to stop the server and delete the
        // folder; wait until it has.
        drop(self.guard_pipe.take());
        if let Some(mut guard) = self.guard.take() {
            let _ = guard.wait();
        }
    }
}

/// The cluster every test of this binary shares, started on first use.
/// Panics (failing the test) with what to do when PostgreSQL is missing.
pub fn shared() -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    CLUSTER.get_or_init(|| {
        Cluster::start().unwrap_or_else(|e| panic!("cannot start a PostgreSQL test cluster: {e}"))
    })
}

/// A fresh, empty database on the shared cluster.
pub async fn fresh_database() -> String {
    let cluster = tokio::task::spawn_blocking(|| {
        shared();
    });
    cluster
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    shared().create_database().await
}

/// A store on a fresh database of the shared cluster.
pub async fn fresh_store() -> PostgresStore {
    connect(&fresh_database().await).await
}

/// A store on `url` with a small pool and the default hot-post settings.
pub async fn connect(url: &str) -> PostgresStore {
    PostgresStore::connect(PostgresOptions {
        url: url.to_owned(),
        connections: 8,
        hot_posts: HotPostOptions::default(),
    })
    .await
    .unwrap_or_else(|e| panic!("connect a store to {url}: {e}"))
}
