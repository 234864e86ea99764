//! The reference server as the foreign-language test runners use it: built
//! once, started on a free loopback port with an in-memory database and a
//! random admin key, and stopped when dropped.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::{Ctx, proc};

/// The server's binary (and package) name.
pub const SERVER_BIN: &str = "likekit-server";

/// How long a debug build of the server may take to start listening.
const STARTUP: Duration = Duration::from_secs(60);

/// Random hex from the OS's random source, for admin keys and secrets.
pub fn random_hex(bytes: usize) -> Result<String, String> {
    const SOURCE: &str = "/dev/urandom";
    let mut buf = vec![0u8; bytes];
    fs::File::open(SOURCE)
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| proc::io_error("read random bytes from", Path::new(SOURCE), e))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Keeps the shell's `LIKEKIT_*` settings (`LIKEKIT_JWKS`, `LIKEKIT_SEED`…)
/// away from a server xtask starts, which gets only what xtask gives it:
/// removes from `cmd`'s environment every variable of `inherited` (the
/// names of xtask's own environment) that starts with `LIKEKIT_`, except
/// those `cmd` already sets.
pub fn without_likekit_settings(
    cmd: &mut Command,
    inherited: impl IntoIterator<Item = OsString>,
) -> &mut Command {
    let set: Vec<OsString> = cmd
        .get_envs()
        .filter(|(_, value)| value.is_some())
        .map(|(name, _)| name.to_owned())
        .collect();
    for name in inherited {
        let ours = name.as_encoded_bytes().starts_with(b"LIKEKIT_");
        if ours && !set.contains(&name) {
            cmd.env_remove(&name);
        }
    }
    cmd
}

/// The names of xtask's environment variables.
pub fn inherited_names() -> impl Iterator<Item = OsString> {
    std::env::vars_os().map(|(name, _)| name)
}

/// The server's debug binary, from the workspace build every runner shares
/// ([`crate::build::workspace`]).
pub fn build(ctx: &Ctx) -> Result<PathBuf, String> {
    crate::build::debug_program(ctx, SERVER_BIN)
}

/// Builds the server with the release profile, as the benches measure it,
/// and returns its binary.
pub fn build_release(ctx: &Ctx) -> Result<PathBuf, String> {
    let mut build = proc::cargo();
    build.current_dir(&ctx.root).args([
        "build",
        "--release",
        "--package",
        SERVER_BIN,
        "--bin",
        SERVER_BIN,
    ]);
    proc::say(&format!("building the server ({})", proc::display(&build)));
    proc::run(&mut build)?;
    Ok(ctx.target_dir.join("release").join(SERVER_BIN))
}

/// `likekit-server` running for one runner; stopped when dropped.
#[derive(Debug)]
pub struct TestServer {
    child: Child,
    /// `http://127.0.0.1:<port>`, no trailing slash.
    pub url: String,
    /// The admin key it was started with.
    pub admin_key: String,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads the server's "listening on URL" line from its piped stdout (and
/// keeps draining it, so the server never blocks on a full pipe); waits at
/// most [`STARTUP`]. `what` names the server in errors, `log` says where
/// its log is.
pub fn wait_for_url(child: &mut Child, what: &str, log: &str) -> Result<String, String> {
    let stdout = child.stdout.take();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let Some(stdout) = stdout else { return };
        let mut lines = BufReader::new(stdout).lines();
        let url = lines.by_ref().map_while(Result::ok).find_map(|line| {
            line.strip_prefix("listening on ")
                .map(|url| url.trim().trim_end_matches('/').to_owned())
        });
        let _ = tx.send(url);
        for _ in lines {}
    });
    match rx.recv_timeout(STARTUP) {
        Ok(Some(url)) => Ok(url),
        Ok(None) => Err(format!("{what} server exited without listening; see {log}")),
        Err(_) => Err(format!(
            "{what} server did not start within {} s; see {log}",
            STARTUP.as_secs()
        )),
    }
}

impl TestServer {
    /// Builds and starts the server with `args` added to an in-memory
    /// database (unless `args` has a `--db` of its own), a free loopback
    /// port and a random admin key; its log goes to
    /// `<logs>/<name>-server.log`.
    pub fn start(ctx: &Ctx, name: &str, logs: &Path, args: &[&OsStr]) -> Result<Self, String> {
        Self::start_binary(ctx, &build(ctx)?, name, logs, args)
    }

    /// [`TestServer::start`] with a server binary already built (the
    /// release one, for a bench).
    pub fn start_binary(
        ctx: &Ctx,
        binary: &Path,
        name: &str,
        logs: &Path,
        args: &[&OsStr],
    ) -> Result<Self, String> {
        proc::mkdir(logs)?;
        let log_path = logs.join(format!("{name}-server.log"));
        let log = fs::File::create(&log_path)
            .map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
        let admin_key = random_hex(16)?;
        let mut cmd = Command::new(binary);
        cmd.current_dir(&ctx.root)
            .args(["--listen", "127.0.0.1:0", "--admin-key", &admin_key]);
        if !args.iter().any(|arg| *arg == "--db") {
            cmd.args(["--db", ":memory:"]);
        }
        cmd.args(args);
        // The test's own settings only, whatever the shell has.
        without_likekit_settings(&mut cmd, inherited_names())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log);
        let child = cmd.spawn().map_err(|e| proc::spawn_error(&cmd, &e))?;
        let mut server = TestServer {
            child,
            url: String::new(),
            admin_key,
        };
        let log = log_path.display().to_string();
        server.url = wait_for_url(&mut server.child, &format!("the {name}"), &log)?;
        proc::say(&format!(
            "server for the {name} tests at {} (log: {})",
            server.url,
            log_path.display()
        ));
        Ok(server)
    }

    /// Passes the server to a test program: `LIKEKIT_URL`, `LIKEKIT_ADMIN_KEY`.
    pub fn env(&self, cmd: &mut Command) {
        cmd.env("LIKEKIT_URL", &self.url)
            .env("LIKEKIT_ADMIN_KEY", &self.admin_key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_keys_are_random_hex() {
        let (a, b) = (
            random_hex(16).expect("random bytes"),
            random_hex(16).expect("random bytes"),
        );
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn servers_get_no_likekit_settings_from_the_shell() {
        let mut cmd = Command::new(SERVER_BIN);
        cmd.env("LIKEKIT_SEED", "ours.json");
        let inherited = [
            "LIKEKIT_JWKS",
            "LIKEKIT_SEED",
            "LIKEKIT_TOKEN_SECRET",
            "PATH",
            "RUST_LOG",
        ]
        .map(OsString::from);
        without_likekit_settings(&mut cmd, inherited);
        let mut envs: Vec<(String, Option<String>)> = cmd
            .get_envs()
            .map(|(k, v)| {
                let text = |s: &OsStr| s.to_string_lossy().into_owned();
                (text(k), v.map(text))
            })
            .collect();
        envs.sort();
        assert_eq!(
            envs,
            [
                ("LIKEKIT_JWKS".to_owned(), None),
                ("LIKEKIT_SEED".to_owned(), Some("ours.json".to_owned())),
                ("LIKEKIT_TOKEN_SECRET".to_owned(), None),
            ]
        );
    }
}
