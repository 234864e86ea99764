//! A throwaway PostgreSQL cluster: `initdb` into a folder, `pg_ctl start`
//! on a free loopback port, and everything stopped and deleted at the end —
//! the one cluster helper of the project, for the server's PostgreSQL tests
//! and for the server bench.
//!
//! ```no_run
//! use likekit_testing::postgres::{Cluster, ClusterOptions};
//!
//! let cluster = Cluster::start(ClusterOptions::default().setting("shared_buffers", "256MB"))?;
//! let database = cluster.database()?; // postgres://likekit@127.0.0.1:<port>/test_0
//! // … connect a store or a server to `database.url()` …
//! drop(database); // DROP DATABASE
//! cluster.stop()?; // or just drop it
//! # Ok::<(), likekit_testing::postgres::ClusterError>(())
//! ```
//!
//! * **Where**: a new temporary folder, or a folder you name
//!   ([`ClusterOptions::dir`], replacing whatever is there). It holds the
//!   data, the server's log and its Unix socket. TCP listens on 127.0.0.1
//!   only, on a free port; the superuser [`SUPERUSER`] signs in without a
//!   password (trust authentication, loopback only).
//! * **As whom**: PostgreSQL refuses to run as root. When we run as root the
//!   folder is given to the `postgres` system user (or `nobody`) and every
//!   server program runs as that user through `setpriv`. When that user
//!   cannot reach a folder you named (a project under `/root`), the cluster
//!   goes to a temporary folder instead.
//! * **Durable**: [`BASE_SETTINGS`] keep `fsync`, `synchronous_commit` and
//!   `full_page_writes` on, as in production, so a test or a benchmark sees
//!   the cost of a real commit. Extra settings ([`ClusterOptions::setting`],
//!   such as `shared_buffers`) come after them and win.
//! * **Always cleaned up**: a guard process starts before `initdb`, in its
//!   own process group (Ctrl-C in a terminal does not reach it). It waits
//!   for its standard input to close, then stops the server and deletes the
//!   folder. Dropping the [`Cluster`] closes that pipe and waits for the
//!   guard; when the parent ends any other way (a panic that aborts, a
//!   signal, `kill -9`) the kernel closes the pipe and the guard cleans up
//!   all the same. (`pg_ctl` starts the server in a session of its own, so
//!   nothing else would stop it.)
//! * **Missing PostgreSQL**: [`Cluster::start`] fails with
//!   [`ClusterError::NotInstalled`], whose message says how to install it.
//!   [`find_bin`] looks in `$LIKEKIT_PG_BIN`, on `PATH`, then in Debian's
//!   `/usr/lib/postgresql/<version>/bin`, newest first.

use std::{
    fmt, fs,
    io::Write as _,
    net::TcpListener,
    os::unix::{fs::PermissionsExt as _, process::CommandExt as _},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, Command, Stdio},
    sync::atomic::{AtomicU32, Ordering},
};

/// The superuser every cluster is made with.
pub const SUPERUSER: &str = "likekit";

/// What to do when PostgreSQL is missing.
pub const INSTALL_HINT: &str = "install it with `cargo xtask doctor --install postgresql` \
     (or `apt-get install postgresql`), or point LIKEKIT_PG_BIN at the folder holding \
     initdb and pg_ctl";

/// The settings every cluster gets, before [`ClusterOptions::setting`]s:
/// name, value, why.
pub const BASE_SETTINGS: &[(&str, &str, &str)] = &[
    ("listen_addresses", "'127.0.0.1'", "loopback only"),
    (
        "max_connections",
        "200",
        "several stores' pools and servers side by side",
    ),
    ("shared_buffers", "32MB", "small: test data sets are small"),
    ("fsync", "on", "a commit is on disk, as in production"),
    (
        "synchronous_commit",
        "on",
        "before the write is answered (the store sets it per connection too)",
    ),
    ("full_page_writes", "on", "as in production: no torn pages"),
    (
        "max_wal_size",
        "64MB",
        "little disk: a checkpoint at most every 64 MB of WAL (each new database is written to the WAL whole)",
    ),
    (
        "min_wal_size",
        "32MB",
        "little disk: old WAL segments are removed",
    ),
    ("logging_collector", "off", "pg_ctl writes the log"),
];

/// Why a cluster could not start or stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterError {
    /// PostgreSQL's server programs were not found; the message says where
    /// we looked and how to install them.
    NotInstalled(String),
    /// Anything else: a program failed (its output is in the message), a
    /// folder could not be made, no free port.
    Failed(String),
}

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotInstalled(message) | Self::Failed(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for ClusterError {}

impl From<String> for ClusterError {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

/// How to start a [`Cluster`].
///
/// ```
/// use likekit_testing::postgres::ClusterOptions;
/// let options = ClusterOptions::default()
///     .setting("shared_buffers", "1GB")
///     .setting("max_wal_size", "8GB");
/// assert_eq!(options.settings.len(), 2);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ClusterOptions {
    /// The folder for the cluster, replaced if it exists; `None` (the
    /// default) makes a new temporary folder.
    pub dir: Option<PathBuf>,
    /// The folder of `initdb`, `pg_ctl` and `psql`; `None` looks for it
    /// with [`find_bin`].
    pub bin: Option<PathBuf>,
    /// Extra `postgresql.conf` settings (name, value as PostgreSQL writes
    /// it, quotes included for strings), after [`BASE_SETTINGS`].
    pub settings: Vec<(String, String)>,
    /// Keep the server's log beside the folder (`<dir>.log`) when the
    /// cluster is deleted.
    pub keep_log: bool,
    /// TLS: the server's certificate and private key (PEM); the cluster
    /// then runs with `ssl = on` (plain connections are still accepted).
    pub tls: Option<(String, String)>,
}

impl ClusterOptions {
    /// TLS with this certificate and key (PEM).
    pub fn tls(mut self, certificate: impl Into<String>, key: impl Into<String>) -> Self {
        self.tls = Some((certificate.into(), key.into()));
        self
    }

    /// Adds one `postgresql.conf` setting.
    pub fn setting(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((name.into(), value.into()));
        self
    }
}

pub(crate) fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first of `dirs` that holds both `initdb` and `pg_ctl`.
///
/// # Errors
///
/// [`ClusterError::NotInstalled`], naming the folders looked in.
pub fn find_bin_in(dirs: &[PathBuf]) -> Result<PathBuf, ClusterError> {
    dirs.iter()
        .find(|dir| is_executable(&dir.join("initdb")) && is_executable(&dir.join("pg_ctl")))
        .cloned()
        .ok_or_else(|| {
            let looked: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
            ClusterError::NotInstalled(format!(
                "PostgreSQL's initdb and pg_ctl were not found (looked in: {}); {INSTALL_HINT}",
                if looked.is_empty() {
                    "nowhere".to_owned()
                } else {
                    looked.join(", ")
                }
            ))
        })
}

/// Where PostgreSQL's server programs are: `$LIKEKIT_PG_BIN`, then `PATH`,
/// then Debian's `/usr/lib/postgresql/<version>/bin`, newest first. The
/// answer is the real folder of `initdb` (`PATH` may hold links to a few of
/// the programs), where `psql` is too.
///
/// # Errors
///
/// [`ClusterError::NotInstalled`] when no folder holds `initdb` and `pg_ctl`.
pub fn find_bin() -> Result<PathBuf, ClusterError> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os("LIKEKIT_PG_BIN") {
        dirs.push(PathBuf::from(dir));
    }
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    let mut debian: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
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
    let bin = find_bin_in(&dirs)?;
    Ok(fs::canonicalize(bin.join("initdb"))
        .ok()
        .and_then(|initdb| initdb.parent().map(Path::to_path_buf))
        .unwrap_or(bin))
}

fn capture(cmd: &mut Command) -> Option<String> {
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The user PostgreSQL runs as when we run as root.
#[derive(Debug, Clone)]
struct RunAs {
    name: String,
    uid: u32,
    gid: u32,
}

fn run_as() -> Result<Option<RunAs>, ClusterError> {
    let me = capture(Command::new("id").arg("-u")).ok_or("`id -u` failed".to_owned())?;
    if me != "0" {
        return Ok(None);
    }
    for name in ["postgres", "nobody"] {
        let uid = capture(Command::new("id").args(["-u", name]));
        let gid = capture(Command::new("id").args(["-g", name]));
        if let (Some(Ok(uid)), Some(Ok(gid))) = (uid.map(|u| u.parse()), gid.map(|g| g.parse())) {
            return Ok(Some(RunAs {
                name: name.to_owned(),
                uid,
                gid,
            }));
        }
    }
    Err(ClusterError::Failed(
        "running as root and neither a `postgres` nor a `nobody` user exists \
         to run PostgreSQL as (it refuses to run as root)"
            .to_owned(),
    ))
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

/// Whether `user` can reach `dir`'s parent: every folder above it searchable.
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

/// Runs a command to the end with its output captured; the output is in
/// the error when it fails.
pub(crate) fn run(cmd: &mut Command) -> Result<String, ClusterError> {
    let shown = format!(
        "{} {}",
        cmd.get_program().to_string_lossy(),
        cmd.get_args()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| ClusterError::Failed(format!("could not run `{shown}`: {e}")))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(stdout)
    } else {
        Err(ClusterError::Failed(format!(
            "`{shown}` failed ({}):\n{stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )))
    }
}

pub(crate) fn free_port() -> Result<u16, ClusterError> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| ClusterError::Failed(format!("no free loopback port: {e}")))?;
    listener
        .local_addr()
        .map(|addr| addr.port())
        .map_err(|e| ClusterError::Failed(e.to_string()))
}

/// The `postgresql.conf` lines for a cluster on `port` with its socket in
/// `socket_dir`: [`BASE_SETTINGS`], then `extra` (a later line wins).
///
/// ```
/// use std::path::Path;
/// let text = likekit_testing::postgres::conf_text(
///     5433,
///     Path::new("/run/it's"),
///     &[("shared_buffers".into(), "1GB".into())],
/// );
/// assert!(text.contains("fsync = on"));
/// assert!(text.contains("port = 5433"));
/// assert!(text.contains("unix_socket_directories = '/run/it''s'"));
/// assert!(text.ends_with("shared_buffers = 1GB\n"));
/// ```
pub fn conf_text(port: u16, socket_dir: &Path, extra: &[(String, String)]) -> String {
    let mut text = String::from("\n# likekit-testing: a throwaway cluster\n");
    for (name, value, why) in BASE_SETTINGS {
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
    for (name, value) in extra {
        text.push_str(&format!("{name} = {value}\n"));
    }
    text
}

/// Waits for standard input to close, then runs its arguments (the
/// server's stop command), keeps the log when asked, and deletes the folder
/// (`$LIKEKIT_PG_DIR`). Immune to the terminal's signals.
const GUARD_SCRIPT: &str = r#"
trap '' INT TERM HUP
cat >/dev/null
"$@" >/dev/null 2>&1
if [ -n "$LIKEKIT_PG_KEEP_LOG" ]; then
  cp "$LIKEKIT_PG_DIR/postgres.log" "$LIKEKIT_PG_DIR.log" 2>/dev/null
fi
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
    guard: Option<Guard>,
    next_database: AtomicU32,
}

/// A database of a [`Cluster`], made by [`Cluster::database`] and dropped
/// (`DROP DATABASE … WITH (FORCE)`, closing whatever is still connected)
/// when this is.
#[derive(Debug)]
pub struct Database<'a> {
    cluster: &'a Cluster,
    name: String,
    url: String,
}

impl Database<'_> {
    /// Its URL, as the superuser over TCP.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Its name (`test_0`, …).
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Database<'_> {
    fn drop(&mut self) {
        let drop = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        if let Err(e) = self.cluster.psql("postgres", &[&drop]) {
            // Only disk is lost: the cluster is deleted at its end anyway.
            eprintln!("could not drop test database {}: {e}", self.name);
        }
    }
}

impl Cluster {
    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The user and group ids the cluster's programs run as (`None`: as
    /// this process), for a program run beside it, such as PgBouncer.
    pub(crate) fn run_as_ids(&self) -> Option<(u32, u32)> {
        self.user.as_ref().map(|user| (user.uid, user.gid))
    }

    /// `program` as a command that runs as the cluster's user.
    pub(crate) fn command_as_user(&self, program: &Path) -> Command {
        command(self.user.as_ref(), program)
    }

    /// The server's log.
    pub fn log(&self) -> PathBuf {
        self.dir.join("postgres.log")
    }

    /// `initdb` and `pg_ctl start` a new cluster. Takes a second or two.
    ///
    /// # Errors
    ///
    /// [`ClusterError::NotInstalled`] without PostgreSQL's programs;
    /// [`ClusterError::Failed`] with the failing program's output (and the
    /// server's log) otherwise. Whatever was made is cleaned up.
    pub fn start(options: ClusterOptions) -> Result<Cluster, ClusterError> {
        let bin = match options.bin {
            Some(bin) => bin,
            None => find_bin()?,
        };
        let user = run_as()?;
        let dir = match options.dir {
            // The user PostgreSQL runs as must reach the folder; when a
            // parent is closed to it, use a temporary folder.
            Some(dir) if user.as_ref().is_none_or(|user| reachable(user, &dir)) => dir,
            _ => tempfile::Builder::new()
                .prefix("likekit-pg-")
                .tempdir()
                .map_err(|e| ClusterError::Failed(format!("temporary folder: {e}")))?
                .keep(),
        };
        let mut cluster = Cluster {
            port: 0,
            dir,
            bin,
            user,
            guard: None,
            next_database: AtomicU32::new(0),
        };
        cluster.clean_up();
        let dir = cluster.dir.clone();
        fs::create_dir_all(&dir).map_err(|e| {
            ClusterError::Failed(format!("could not create {}: {e}", dir.display()))
        })?;

        // The guard next, so that whatever happens from here is cleaned up.
        let stop = cluster.stop_command("immediate");
        cluster.guard = Some(Guard::start(
            GUARD_SCRIPT,
            "likekit-pg-guard",
            &dir,
            |guard| {
                guard
                    .arg(stop.get_program())
                    .args(stop.get_args())
                    .env("LIKEKIT_PG_DIR", &dir)
                    .env(
                        "LIKEKIT_PG_KEEP_LOG",
                        if options.keep_log { "1" } else { "" },
                    );
            },
        )?);

        if let Some(user) = &cluster.user {
            std::os::unix::fs::chown(&dir, Some(user.uid), Some(user.gid)).map_err(|e| {
                ClusterError::Failed(format!(
                    "could not give {} to {}: {e}",
                    dir.display(),
                    user.name
                ))
            })?;
        }
        // The socket folder must be reachable by its owner; 0700 keeps the
        // rest of the machine out.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).map_err(|e| {
            ClusterError::Failed(format!("could not restrict {}: {e}", dir.display()))
        })?;

        run(command(cluster.user.as_ref(), &cluster.bin.join("initdb"))
            .arg("-D")
            .arg(cluster.data())
            .args(["-U", SUPERUSER, "-A", "trust", "-E", "UTF8"])
            // The cluster is thrown away: initdb's own files need no fsync.
            // The server's commits are fsynced as usual.
            .args(["--locale=C", "--no-sync"]))?;

        let mut settings = options.settings.clone();
        if let Some((certificate, key)) = &options.tls {
            for (name, text) in [("server.crt", certificate), ("server.key", key)] {
                let path = cluster.data().join(name);
                fs::write(&path, text).map_err(|e| {
                    ClusterError::Failed(format!("could not write {}: {e}", path.display()))
                })?;
                // PostgreSQL wants its key readable by its own user alone.
                fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).map_err(|e| {
                    ClusterError::Failed(format!("could not restrict {}: {e}", path.display()))
                })?;
                if let Some(user) = &cluster.user {
                    std::os::unix::fs::chown(&path, Some(user.uid), Some(user.gid)).map_err(
                        |e| ClusterError::Failed(format!("could not give {}: {e}", path.display())),
                    )?;
                }
            }
            settings.push(("ssl".into(), "on".into()));
            settings.push(("ssl_cert_file".into(), "'server.crt'".into()));
            settings.push(("ssl_key_file".into(), "'server.key'".into()));
        }
        let conf = cluster.data().join("postgresql.conf");
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = free_port()?;
            let mut file = fs::OpenOptions::new()
                .append(true)
                .open(&conf)
                .map_err(|e| {
                    ClusterError::Failed(format!("could not open {}: {e}", conf.display()))
                })?;
            file.write_all(conf_text(port, &dir, &settings).as_bytes())
                .map_err(|e| {
                    ClusterError::Failed(format!("could not write {}: {e}", conf.display()))
                })?;
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
        Err(ClusterError::Failed(last_error))
    }

    /// The URL of `database` as the superuser, over TCP.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{database}", self.port)
    }

    /// Runs SQL statements with `psql` over TCP (each `-c` in its own
    /// transaction; stops at the first error) and returns what they print
    /// (unaligned, tuples only).
    ///
    /// # Errors
    ///
    /// [`ClusterError::Failed`] with `psql`'s output when a statement fails.
    pub fn psql(&self, database: &str, statements: &[&str]) -> Result<String, ClusterError> {
        let beside = self.bin.join("psql");
        let mut cmd = if is_executable(&beside) {
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

    /// Creates a new, empty database (`test_0`, `test_1`, …), dropped again
    /// when the returned [`Database`] is: a test run creates dozens, and a
    /// fresh one is a copy of `template1` (about 7.5 MB on disk).
    ///
    /// # Errors
    ///
    /// [`ClusterError::Failed`] when `CREATE DATABASE` fails.
    pub fn database(&self) -> Result<Database<'_>, ClusterError> {
        let name = format!(
            "test_{}",
            self.next_database.fetch_add(1, Ordering::Relaxed)
        );
        self.psql("postgres", &[&format!("CREATE DATABASE {name}")])?;
        Ok(Database {
            url: self.url(&name),
            name,
            cluster: self,
        })
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

    /// Stops the server and keeps its folder, for [`resume`](Self::resume)
    /// (a database going away under a running application).
    ///
    /// # Errors
    ///
    /// [`ClusterError::Failed`] when the server does not stop.
    pub fn pause(&self) -> Result<(), ClusterError> {
        run(&mut self.stop_command("fast")).map(drop)
    }

    /// Starts the server [`pause`](Self::pause) stopped, on the same port.
    ///
    /// # Errors
    ///
    /// [`ClusterError::Failed`] when it does not start.
    pub fn resume(&self) -> Result<(), ClusterError> {
        run(command(self.user.as_ref(), &self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.log())
            .args(["-w", "-t", "60", "start"]))
        .map(drop)
    }

    /// Stops the server (finishing a checkpoint) and deletes the folder.
    ///
    /// # Errors
    ///
    /// [`ClusterError::Failed`] when the server does not stop (the folder
    /// is deleted all the same).
    pub fn stop(self) -> Result<(), ClusterError> {
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

/// A clean-up guard: a shell started with its stdin piped from this
/// process, which waits until the pipe closes (this process let go of the
/// guard, or ended however it ended), then stops what it guards and
/// deletes its folder. Dropping it closes the pipe and waits until the
/// clean-up is done. A [`Cluster`]'s stops the server (keeping its log
/// when asked); a PgBouncer's stops PgBouncer.
#[derive(Debug)]
pub(crate) struct Guard {
    pipe: Option<ChildStdin>,
    child: Child,
}

impl Guard {
    /// Starts `/bin/sh -c script name …` as a guard, `configure` giving it
    /// its arguments and environment: its stdin piped from this process,
    /// its output dropped, in a process group of its own (Ctrl-C in the
    /// terminal does not reach it). When it cannot start, `dir` (made for
    /// what it was to guard) is deleted.
    pub(crate) fn start(
        script: &str,
        name: &str,
        dir: &Path,
        configure: impl FnOnce(&mut Command),
    ) -> Result<Self, ClusterError> {
        let mut guard = Command::new("/bin/sh");
        guard.args(["-c", script, name]);
        configure(&mut guard);
        guard
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let mut child = guard.spawn().map_err(|e| {
            let _ = fs::remove_dir_all(dir);
            ClusterError::Failed(format!("could not start the clean-up guard {name}: {e}"))
        })?;
        Ok(Self {
            pipe: child.stdin.take(),
            child,
        })
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        drop(self.pipe.take());
        let _ = self.child.wait();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_keep_commits_durable_and_extras_come_last() {
        let text = conf_text(
            54321,
            Path::new("/srv/it's"),
            &[("fsync".into(), "off".into())],
        );
        for line in [
            "fsync = on",
            "synchronous_commit = on",
            "full_page_writes = on",
            "listen_addresses = '127.0.0.1'",
            "port = 54321",
            "unix_socket_directories = '/srv/it''s'",
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
        assert!(text.ends_with("fsync = off\n"), "an extra wins: {text}");
        let deep = "/d".repeat(60);
        assert!(
            conf_text(1, Path::new(&deep), &[]).contains("unix_socket_directories = ''"),
            "no socket in a folder too deep for one"
        );
    }

    #[test]
    fn a_missing_installation_says_how_to_install() {
        let err = find_bin_in(&[PathBuf::from("/nonexistent")]).unwrap_err();
        assert!(matches!(err, ClusterError::NotInstalled(_)));
        assert!(err.to_string().contains("/nonexistent"), "{err}");
        assert!(err.to_string().contains("LIKEKIT_PG_BIN"), "{err}");
        assert!(
            find_bin_in(&[])
                .unwrap_err()
                .to_string()
                .contains("nowhere")
        );
    }

    /// Starts a real cluster; fails with the install hint without
    /// PostgreSQL.
    #[test]
    fn a_cluster_runs_sql_and_is_cleaned_up() {
        let cluster = Cluster::start(ClusterOptions::default().setting("work_mem", "'8MB'"))
            .unwrap_or_else(|e| panic!("cannot start a PostgreSQL cluster: {e}"));
        let (port, dir) = (cluster.port, cluster.dir.clone());
        assert_eq!(
            cluster
                .psql("postgres", &["SHOW synchronous_commit"])
                .unwrap()
                .trim(),
            "on"
        );
        assert_eq!(
            cluster.psql("postgres", &["SHOW work_mem"]).unwrap().trim(),
            "8MB"
        );
        let first = cluster.database().unwrap();
        assert!(first.url().ends_with("/test_0"), "{}", first.url());
        let second = cluster.database().unwrap();
        assert_eq!(second.name(), "test_1");
        assert!(cluster.psql("test_0", &["SELEC 1"]).is_err());
        drop(first);
        let names = cluster
            .psql("postgres", &["SELECT datname FROM pg_database ORDER BY 1"])
            .unwrap();
        assert!(!names.contains("test_0"), "dropped with its guard: {names}");
        assert!(names.contains("test_1"), "{names}");
        drop(second);
        cluster.stop().unwrap();
        assert!(!dir.exists(), "{} is left behind", dir.display());
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());

        // Dropped without stopping, in a folder we name, keeping the log.
        let base = tempfile::tempdir().unwrap();
        // Reachable by the user PostgreSQL runs as when we are root.
        fs::set_permissions(base.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let named = base.path().join("pg");
        let cluster = Cluster::start(ClusterOptions {
            dir: Some(named.clone()),
            keep_log: true,
            ..ClusterOptions::default()
        })
        .unwrap();
        let (port, dir) = (cluster.port, cluster.dir.clone());
        drop(cluster);
        assert!(!dir.exists(), "{} is left behind", dir.display());
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
        if dir == named {
            assert!(base.path().join("pg.log").is_file(), "the log is kept");
        }
    }
}
