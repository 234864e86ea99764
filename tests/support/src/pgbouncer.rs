//! A throwaway PgBouncer in front of a throwaway [`Cluster`]: the
//! connection pooler most deployments put between their servers and
//! PostgreSQL, so the store is tested the way it is run behind one.
//!
//! ```no_run
//! use likekit_testing::pgbouncer::{PgBouncer, PoolMode};
//! use likekit_testing::postgres::{Cluster, ClusterOptions};
//! let cluster = Cluster::start(ClusterOptions::default())?;
//! let database = cluster.database()?;
//! let bouncer = PgBouncer::start(&cluster, PoolMode::Session)?;
//! let url = bouncer.url(database.name()); // postgres://likekit@127.0.0.1:PORT/test_0
//! # Ok::<(), likekit_testing::postgres::ClusterError>(())
//! ```
//!
//! * **As deployed**: PgBouncer's defaults but the pool mode, the loopback
//!   address and `trust` for the cluster's superuser. Every database of the
//!   cluster is reachable through it by name (`* = …`).
//! * **Always cleaned up**: it runs under a small shell guard that stops it
//!   and deletes its folder when this process lets go of it, however this
//!   process ends (the guard reads its stdin until the pipe closes).
//! * **As the cluster's user** when running as root (PgBouncer refuses to
//!   run as root).
//! * **Installed by the project**: `cargo xtask doctor --install pgbouncer`
//!   installs Debian's `pgbouncer`, and `cargo xtask test` installs it when
//!   missing.

use std::fs;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::postgres::{Cluster, ClusterError, Guard, SUPERUSER, free_port, is_executable};

/// What to say when PgBouncer is missing.
pub const INSTALL_HINT: &str = "install it with `cargo xtask doctor --install pgbouncer` \
     (Debian: apt-get install pgbouncer), or name the program in LIKEKIT_PGBOUNCER_BIN";

/// How PgBouncer hands its server connections to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolMode {
    /// A client keeps one server connection for as long as it is
    /// connected (what the store needs: see the server's README).
    Session,
    /// A client gets a server connection for one transaction at a time.
    Transaction,
}

impl PoolMode {
    fn as_str(self) -> &'static str {
        match self {
            Self::Session => "session",
            Self::Transaction => "transaction",
        }
    }
}

/// The guard: starts PgBouncer, waits for its stdin to close (this process
/// let go of it, or ended), then stops it and deletes its folder.
const GUARD_SCRIPT: &str = r#"
trap '' INT TERM HUP
"$@" >/dev/null 2>&1 &
pid=$!
cat >/dev/null
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
rm -rf "$LIKEKIT_PGBOUNCER_DIR"
"#;

/// A running PgBouncer; dropping it stops it and deletes its folder.
#[derive(Debug)]
pub struct PgBouncer {
    /// The loopback TCP port it listens on.
    pub port: u16,
    /// Its folder: the configuration and the log.
    pub dir: PathBuf,
    /// Dropped with it: PgBouncer stops and its folder goes.
    _guard: Guard,
}

/// The program: `LIKEKIT_PGBOUNCER_BIN`, else `pgbouncer` on `PATH` or in
/// `/usr/sbin` (where Debian puts it, off a user's `PATH`).
fn find_program() -> Result<PathBuf, ClusterError> {
    if let Some(given) = std::env::var_os("LIKEKIT_PGBOUNCER_BIN") {
        let given = PathBuf::from(given);
        return if is_executable(&given) {
            Ok(given)
        } else {
            Err(ClusterError::NotInstalled(format!(
                "LIKEKIT_PGBOUNCER_BIN names {}, which is not a program",
                given.display()
            )))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|dir| dir.join("pgbouncer"))
        .find(|program| is_executable(program))
        .ok_or_else(|| {
            ClusterError::NotInstalled(format!(
                "PgBouncer (`pgbouncer`) was not found on PATH or in /usr/sbin; {INSTALL_HINT}"
            ))
        })
}

/// PgBouncer's configuration: every database of the cluster on
/// `cluster_port` by its own name, listening on `port` of loopback only.
fn ini_text(dir: &Path, port: u16, cluster_port: u16, mode: PoolMode) -> String {
    format!(
        "[databases]\n\
         * = host=127.0.0.1 port={cluster_port}\n\
         \n\
         [pgbouncer]\n\
         listen_addr = 127.0.0.1\n\
         listen_port = {port}\n\
         unix_socket_dir =\n\
         auth_type = trust\n\
         auth_file = {users}\n\
         pool_mode = {mode}\n\
         max_client_conn = 2000\n\
         default_pool_size = 40\n\
         logfile = {log}\n",
        users = dir.join("users.txt").display(),
        log = dir.join("pgbouncer.log").display(),
        mode = mode.as_str(),
    )
}

impl PgBouncer {
    /// Starts PgBouncer in front of `cluster`, in `mode`, on a free loopback
    /// port, and waits until it accepts connections (a second or less).
    ///
    /// # Errors
    ///
    /// [`ClusterError::NotInstalled`] without PgBouncer;
    /// [`ClusterError::Failed`] with its log otherwise. Whatever was made
    /// is cleaned up.
    pub fn start(cluster: &Cluster, mode: PoolMode) -> Result<PgBouncer, ClusterError> {
        let program = find_program()?;
        let mut last_error = String::new();
        // A port found free may be taken before PgBouncer binds it: try
        // again on another.
        for _ in 0..3 {
            let mut bouncer = Self::spawn(cluster, &program, mode)?;
            match bouncer.wait_until_listening(Duration::from_secs(10)) {
                Ok(()) => return Ok(bouncer),
                Err(e) => last_error = e,
            }
        }
        Err(ClusterError::Failed(last_error))
    }

    /// Writes the configuration into a new folder and starts PgBouncer
    /// under its guard.
    fn spawn(cluster: &Cluster, program: &Path, mode: PoolMode) -> Result<Self, ClusterError> {
        let dir = tempfile::Builder::new()
            .prefix("likekit-pgbouncer-")
            .tempdir()
            .map_err(|e| ClusterError::Failed(format!("temporary folder: {e}")))?
            .keep();
        let port = free_port()?;
        let ini = dir.join("pgbouncer.ini");
        let written = (|| {
            fs::write(dir.join("users.txt"), format!("\"{SUPERUSER}\" \"\"\n"))?;
            fs::write(&ini, ini_text(&dir, port, cluster.port, mode))?;
            if let Some((uid, gid)) = cluster.run_as_ids() {
                for path in [dir.clone(), dir.join("users.txt"), ini.clone()] {
                    std::os::unix::fs::chown(&path, Some(uid), Some(gid))?;
                }
            }
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))
        })();
        if let Err(e) = written {
            let _ = fs::remove_dir_all(&dir);
            return Err(ClusterError::Failed(format!(
                "could not write PgBouncer's files in {}: {e}",
                dir.display()
            )));
        }
        let run = cluster.command_as_user(program);
        let guard = Guard::start(GUARD_SCRIPT, "likekit-pgbouncer-guard", &dir, |guard| {
            guard
                .arg(run.get_program())
                .args(run.get_args())
                .arg(&ini)
                .env("LIKEKIT_PGBOUNCER_DIR", &dir);
        })?;
        Ok(PgBouncer {
            port,
            dir,
            _guard: guard,
        })
    }

    /// Its URL for `database` of the cluster, as the cluster's superuser.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{database}", self.port)
    }

    /// Its log so far.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }

    /// Polls the port until PgBouncer answers a TCP connection, or `limit`
    /// passes, or its log says it will not (a refused configuration or
    /// port).
    fn wait_until_listening(&mut self, limit: Duration) -> Result<(), String> {
        let address = SocketAddr::from(([127, 0, 0, 1], self.port));
        let start = Instant::now();
        loop {
            if TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            let log = self.log();
            if log.contains("FATAL") || start.elapsed() > limit {
                return Err(format!(
                    "PgBouncer did not start listening on 127.0.0.1:{} within {} s; its log:\n{log}",
                    self.port,
                    limit.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_listens_on_loopback_and_reaches_every_database() {
        let text = ini_text(Path::new("/tmp/b"), 6432, 5432, PoolMode::Session);
        for line in [
            "* = host=127.0.0.1 port=5432",
            "listen_addr = 127.0.0.1",
            "listen_port = 6432",
            "pool_mode = session",
            "auth_file = /tmp/b/users.txt",
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
        assert!(
            ini_text(Path::new("/tmp/b"), 1, 2, PoolMode::Transaction)
                .contains("pool_mode = transaction")
        );
    }
}
