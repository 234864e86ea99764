//! The `likekit-server` binary: flags, the token subcommand, seeding, and a
//! graceful shutdown that finishes in-flight writes.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::common::{self, ServerProcess, client};
use likekit_server::{
    TokenError, Tokens,
    wire::{LikeState, PostLikes},
};
use likekit_testing::suite::u;
use reqwest::StatusCode;
use serde_json::json;

#[test]
fn token_subcommand_mints_a_token_the_server_accepts() {
    let output = common::server_command()
        .args([
            "token",
            "--user",
            "7",
            "--ttl",
            "60",
            "--token-secret",
            "s3cret",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let token = String::from_utf8(output.stdout).unwrap();
    let tokens = Tokens::new(b"s3cret").unwrap();
    assert_eq!(tokens.verify(token.trim()), Ok(u(7)));

    // The secret may come from the environment.
    let output = common::server_command()
        .args(["token", "--user", "8"])
        .env("LIKEKIT_TOKEN_SECRET", "s3cret")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        tokens.verify(String::from_utf8(output.stdout).unwrap().trim()),
        Ok(u(8))
    );

    for bad in [
        vec!["token", "--user", "7"],
        vec!["token", "--user", "0", "--token-secret", "s"],
        vec!["token", "--user", "x", "--token-secret", "s"],
        vec!["token", "--user", "7", "--token-secret", ""],
    ] {
        let output = common::server_command().args(&bad).output().unwrap();
        assert!(!output.status.success(), "{bad:?} should fail");
        // A usage error (2), as the server's own flags give, naming the flag.
        assert_eq!(output.status.code(), Some(2), "{bad:?}: {output:?}");
        assert!(output.stdout.is_empty(), "{bad:?}: {output:?}");
    }
    let output = common::server_command()
        .args(["token", "--user", "7", "--token-secret", ""])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--token-secret") && stderr.contains("it is empty"),
        "{stderr}"
    );
    // The lifetime is held to the admin API's rule (1 s to a year), with
    // the rule in the error, and no token printed.
    for ttl in ["0", "31536001", "99999999999", "1.5"] {
        let output = common::server_command()
            .args(["token", "--user", "7", "--token-secret", "s", "--ttl", ttl])
            .output()
            .unwrap();
        assert!(!output.status.success(), "--ttl {ttl} should fail");
        assert!(output.stdout.is_empty(), "--ttl {ttl}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--ttl"), "{stderr}");
        assert!(
            stderr.contains("must be from 1 to 31536000 seconds")
                || stderr.contains("must be a whole number"),
            "{stderr}"
        );
    }
    for ttl in ["1", "31536000"] {
        let output = common::server_command()
            .args(["token", "--user", "7", "--token-secret", "s", "--ttl", ttl])
            .output()
            .unwrap();
        assert!(output.status.success(), "--ttl {ttl}: {output:?}");
    }
}

#[test]
fn token_subcommand_mints_expired_and_not_yet_valid_tokens() {
    let tokens = Tokens::new(b"s3cret").unwrap();
    let mint = |valid_from: &str| {
        common::server_command()
            .args(["token", "--user", "7", "--token-secret", "s3cret"])
            .args(["--valid-from", valid_from])
            .output()
            .unwrap()
    };
    let verify = |output: &std::process::Output| {
        assert!(output.status.success(), "{output:?}");
        tokens.verify(String::from_utf8_lossy(&output.stdout).trim())
    };
    // Two hours back with the default hour's lifetime: expired an hour ago.
    assert_eq!(verify(&mint("-7200")), Err(TokenError::Expired));
    // Ten minutes back: still valid for fifty.
    assert_eq!(verify(&mint("-600")), Ok(u(7)));
    // A minute ahead: not valid yet.
    assert!(matches!(verify(&mint("60")), Err(TokenError::Invalid(why)) if why.contains("nbf")));

    for bad in ["-31536001", "31536001", "1.5", "soon"] {
        let output = mint(bad);
        assert!(!output.status.success(), "--valid-from {bad} should fail");
        assert!(output.stdout.is_empty(), "--valid-from {bad}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("--valid-from")
                && (stderr.contains("must be from -31536000 to 31536000 seconds")
                    || stderr.contains("must be a whole number")),
            "{stderr}"
        );
    }
}

#[test]
fn help_lists_the_flags() {
    let output = common::server_command().arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for flag in [
        "--listen",
        "--db",
        "--seed",
        "--admin-key",
        "--token-secret",
        "--cors-origin",
        "--write-rate-limit",
        "--cache-ttl-ms",
        "--post-cache-entries",
        "--friends-cache-mib",
        "token",
    ] {
        assert!(help.contains(flag), "{flag} missing from\n{help}");
    }

    // Help shows the values of the variables set, but never a secret:
    // the database URL may hold a password.
    let output = common::server_command()
        .arg("--help")
        .env("LIKEKIT_DB", "postgres://likekit:s3cret@db.internal/likes")
        .env("LIKEKIT_ADMIN_KEY", "admin-s3cret")
        .env("LIKEKIT_TOKEN_SECRET", "token-s3cret")
        .env("LIKEKIT_LISTEN", "127.0.0.1:9999")
        .output()
        .unwrap();
    let help = String::from_utf8(output.stdout).unwrap();
    assert!(help.contains("[env: LIKEKIT_DB]"), "{help}");
    assert!(
        help.contains("[env: LIKEKIT_LISTEN=127.0.0.1:9999]"),
        "{help}"
    );
    assert!(!help.contains("s3cret"), "{help}");
}

/// Every flag of `serve` can come from a `LIKEKIT_*` variable instead, as a
/// container sets them.
#[test]
fn every_serve_flag_has_an_environment_variable() {
    let output = common::server_command()
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    let mut flags = 0;
    let lines: Vec<&str> = help.lines().collect();
    for (at, line) in lines.iter().enumerate() {
        let Some(flag) = line.trim_start().strip_prefix("--") else {
            continue;
        };
        let flag = flag.split_whitespace().next().unwrap();
        if flag == "help" {
            continue;
        }
        flags += 1;
        // The flag's description: the lines up to the next flag.
        let described: String = lines[at + 1..]
            .iter()
            .take_while(|l| !(l.starts_with("  -") || l.starts_with("      --")))
            .copied()
            .collect();
        let want = format!("[env: LIKEKIT_{}", flag.replace('-', "_").to_uppercase());
        let want = want.replace("LIKEKIT_CORS_ORIGIN", "LIKEKIT_CORS_ORIGINS");
        assert!(
            described.contains(&want),
            "--{flag}: no {want}] in {described:?}"
        );
    }
    assert!(flags >= 20, "only {flags} flags found in\n{help}");
}

#[tokio::test]
async fn settings_come_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_with_env(
        &[],
        &[
            ("LIKEKIT_DB", ":memory:"),
            ("LIKEKIT_ADMIN_KEY", "from-env"),
            ("LIKEKIT_MAX_BODY_BYTES", "64"),
            (
                "LIKEKIT_CORS_ORIGINS",
                "https://a.example,https://b.example",
            ),
        ],
        &dir.path().join("server.log"),
    );
    let http = client();
    // The admin key came from the environment...
    let r = http
        .post(server.url("/admin/users"))
        .header("x-admin-key", "from-env")
        .json(&json!({"id": 1, "name": "Ana"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED, "{}", server.log());
    // ...so did the body limit...
    let r = http
        .post(server.url("/admin/users"))
        .header("x-admin-key", "from-env")
        .json(&json!({"id": 2, "name": "B".repeat(100)}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    // ...and both CORS origins, from one comma-separated variable.
    for origin in ["https://a.example", "https://b.example"] {
        let r = http
            .request(reqwest::Method::OPTIONS, server.url("/posts/1/like"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "authorization")
            .send()
            .await
            .unwrap();
        assert_eq!(r.headers()["access-control-allow-origin"], origin);
    }
    assert!(server.terminate().success());
}

/// A `LIKEKIT_*` variable set to the empty string counts as unset, as
/// Compose and Helm render an optional value left out: the server starts
/// with every variable empty (but `LIKEKIT_DB`, refused when empty:
/// `an_empty_likekit_db_stops_the_start`), on the default database file.
#[test]
fn empty_environment_variables_count_as_unset() {
    let help = common::server_command()
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let names: Vec<&str> = help
        .split("[env: ")
        .skip(1)
        .map(|rest| rest.split(['=', ']']).next().unwrap())
        .collect();
    assert!(names.len() >= 20, "{names:?}");
    let dir = tempfile::tempdir().unwrap();
    let mut command = common::server_command();
    command
        .current_dir(dir.path())
        .args(["--listen", "127.0.0.1:0"])
        .env("RUST_LOG", "info");
    for name in &names {
        if !["LIKEKIT_LISTEN", "LIKEKIT_DB"].contains(name) {
            command.env(name, "");
        }
    }
    let server = ServerProcess::start_command(command, &dir.path().join("server.log"));
    assert!(
        dir.path().join("likekit.db").exists(),
        "the default file:\n{}",
        server.log()
    );
    assert!(server.terminate().success());

    // The token subcommand reads its secret the same way.
    let output = common::server_command()
        .args(["token", "--user", "7"])
        .env("LIKEKIT_TOKEN_SECRET", "")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("--token-secret"));
}

/// An empty `LIKEKIT_DB` (a database URL from a secret that failed to
/// render) stops the start naming the variable, rather than starting on the
/// default file `likekit.db`, which no other replica sees: no file is made.
/// `--db` on the command line wins over it, as over any variable.
#[test]
fn an_empty_likekit_db_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let output = common::server_command()
        .current_dir(dir.path())
        .args(["--listen", "127.0.0.1:0"])
        .env("LIKEKIT_DB", "")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("'--db <DB>' (from LIKEKIT_DB)"), "{stderr}");
    assert!(stderr.contains("it is empty"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(output.stdout.is_empty(), "it never listened: {output:?}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no likekit.db made"
    );

    // Given on the command line, `--db` wins over the empty variable.
    let server = ServerProcess::start_with_env(
        &["--db", ":memory:"],
        &[("LIKEKIT_DB", "")],
        &dir.path().join("server.log"),
    );
    assert!(
        server.log().contains("store: SQLite in memory"),
        "{}",
        server.log()
    );
    assert!(server.terminate().success());
}

/// A bad value from a variable is reported under the flag and the
/// variable; a negative number reaches the flag's check (not "unexpected
/// argument").
#[test]
fn a_bad_value_names_the_variable_it_came_from() {
    let (status, stderr) = failed_start(&[], &[("LIKEKIT_REQUEST_TIMEOUT_SECS", "-1")]);
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "'--request-timeout-secs <REQUEST_TIMEOUT_SECS>' (from LIKEKIT_REQUEST_TIMEOUT_SECS)"
        ),
        "{stderr}"
    );
    let (_, stderr) = failed_start(&["--request-timeout-secs", "-1"], &[]);
    assert!(stderr.contains("invalid value '-1'"), "{stderr}");
    assert!(!stderr.contains("LIKEKIT_"), "given as a flag: {stderr}");
    // Counts that must be at least 1 are bounds too: a usage error, exit 2.
    for (flag, var) in [
        ("--max-connections", "LIKEKIT_MAX_CONNECTIONS"),
        ("--write-burst", "LIKEKIT_WRITE_BURST"),
        // Not "no limit" (as 0 is for the rate limit and the journal):
        // 0 would refuse every request with a body.
        ("--max-body-bytes", "LIKEKIT_MAX_BODY_BYTES"),
        ("--post-cache-entries", "LIKEKIT_POST_CACHE_ENTRIES"),
        ("--friends-cache-mib", "LIKEKIT_FRIENDS_CACHE_MIB"),
    ] {
        let (status, stderr) = failed_start(&[], &[(var, "0")]);
        assert_eq!(status.code(), Some(2), "{var}=0: {stderr}");
        assert!(stderr.contains(&format!("(from {var})")), "{stderr}");
        assert!(stderr.contains("is not in 1.."), "{stderr}");
        let (status, stderr) = failed_start(&[flag, "0"], &[]);
        assert_eq!(status.code(), Some(2), "{flag} 0: {stderr}");
        assert!(stderr.contains(flag), "{stderr}");
    }
}

/// An empty key, secret or key set on the command line (`--admin-key
/// "$KEY"` with `KEY` unset) stops the start rather than quietly turning
/// the admin API off or making a random secret. (An empty variable is
/// unset: `empty_environment_variables_count_as_unset`.)
#[test]
fn empty_values_on_the_command_line_are_refused() {
    for flag in ["--admin-key", "--token-secret", "--jwks"] {
        let (status, stderr) = failed_start(&[flag, ""], &[]);
        assert_eq!(status.code(), Some(2), "{flag} '': {stderr}");
        assert!(stderr.contains(flag), "{stderr}");
        assert!(stderr.contains("it is empty"), "{stderr}");
    }
    let (status, stderr) = failed_start(
        &["--jwks", "/nonexistent/jwks.json", "--token-issuer", ""],
        &[],
    );
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--token-issuer"), "{stderr}");
}

/// A `LIKEKIT_*` variable that is no setting (a typo) is warned of, with
/// the setting it is closest to; the variables Kubernetes makes for a
/// Service named `likekit…` are not.
#[test]
fn unknown_likekit_variables_are_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = common::server_command();
    command
        .args(["--listen", "127.0.0.1:0", "--db", ":memory:"])
        .env("RUST_LOG", "info")
        .envs([
            ("LIKEKIT_LISTN", "0.0.0.0:8080"),
            ("LIKEKIT_CORS_ORIGIN", "https://app.example"),
            ("LIKEKIT_COLOUR", "blue"),
            ("LIKEKIT_EMPTY", ""),
            ("LIKEKIT_PORT", "tcp://10.0.0.7:8080"),
            ("LIKEKIT_SERVICE_HOST", "10.0.0.7"),
            ("LIKEKIT_SERVICE_PORT_HTTP", "8080"),
            ("LIKEKIT_PORT_8080_TCP_ADDR", "10.0.0.7"),
            ("LIKEKIT_DB_PORT_5432_TCP", "tcp://10.0.0.8:5432"),
            // A port given the way a setting would be: no Kubernetes name.
            ("LIKEKIT_OPS_PORT", "9090"),
        ]);
    let server = ServerProcess::start_command(command, &dir.path().join("server.log"));
    assert!(server.terminate().success());
    let log = std::fs::read_to_string(dir.path().join("server.log")).unwrap();
    let warned: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("is not a setting of likekit-server"))
        .collect();
    assert_eq!(warned.len(), 4, "{log}");
    assert!(
        warned[0].contains("LIKEKIT_COLOUR is set")
            && warned[0].contains("--help lists each setting's variable"),
        "{log}"
    );
    assert!(
        warned[1].contains("LIKEKIT_CORS_ORIGIN is set")
            && warned[1].contains("did you mean LIKEKIT_CORS_ORIGINS?"),
        "{log}"
    );
    assert!(
        warned[2].contains("LIKEKIT_LISTN is set")
            && warned[2].contains("did you mean LIKEKIT_LISTEN?"),
        "{log}"
    );
    assert!(warned[3].contains("LIKEKIT_OPS_PORT is set"), "{log}");
    assert!(warned.iter().all(|line| line.contains("WARN")), "{log}");
}

/// A second server on the SQLite file of a running one stops its start
/// with an error that names the file and the reason, not SQLite's bare
/// "database is locked".
#[test]
fn a_second_server_on_the_same_file_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("likes.db");
    let db = db.to_str().unwrap();
    let first = ServerProcess::start(&["--db", db], &dir.path().join("first.log"));
    let output = common::server_command()
        .args(["--listen", "127.0.0.1:0", "--db", db])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("{db}: database is locked")),
        "{stderr}"
    );
    assert!(stderr.contains("another process has it open"), "{stderr}");
    assert!(first.terminate().success());
}

/// `--db` takes a SQLite file, `:memory:` or a `postgres://` URL (the
/// scheme in any case); another scheme or a libpq `key=value` string
/// stops the start rather than becoming a file of that name. The log
/// says once which store is in use.
#[test]
fn db_values_that_are_not_a_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (db, want) in [
        ("host=127.0.0.1 user=x dbname=y", "libpq key=value"),
        ("mysql://x", "mysql:// is not a database this server opens"),
    ] {
        let output = common::server_command()
            .current_dir(dir.path())
            .args(["--listen", "127.0.0.1:0", "--db", db])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{db}: {stderr}");
        assert!(stderr.contains("--db (LIKEKIT_DB)"), "{db}: {stderr}");
        assert!(stderr.contains(want), "{db}: {stderr}");
        assert!(stderr.contains("postgres://"), "{db}: {stderr}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no file made"
    );

    // An upper-case scheme is PostgreSQL (here: nobody listening).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let output = common::server_command()
        .current_dir(dir.path())
        .args(["--listen", "127.0.0.1:0", "--db-wait-secs", "0", "--db"])
        .arg(format!("Postgres://u:s3cret@127.0.0.1:{port}/x"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("Connection refused"), "{stderr}");
    assert!(!stderr.contains("s3cret"), "{stderr}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no file made"
    );
}

#[test]
fn the_log_names_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(&["--db", ":memory:"], &dir.path().join("memory.log"));
    assert!(server.terminate().success());
    let log = std::fs::read_to_string(dir.path().join("memory.log")).unwrap();
    assert_eq!(log.matches("store: SQLite in memory").count(), 1, "{log}");

    let db = dir.path().join("likes.db");
    let server = ServerProcess::start(
        &["--db", db.to_str().unwrap()],
        &dir.path().join("file.log"),
    );
    assert!(server.terminate().success());
    let log = std::fs::read_to_string(dir.path().join("file.log")).unwrap();
    let shown = format!(
        "store: SQLite file {}",
        db.canonicalize().unwrap().display()
    );
    assert_eq!(log.matches(&shown).count(), 1, "{log}");
}

/// `likekit-memory-*` folders left in `dir`.
fn memory_folders(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("likekit-memory-"))
        .collect()
}

/// A start that fails after the in-memory store was made removes its
/// temporary folder before the process exits (it raced the exit before).
#[test]
fn a_failed_start_leaves_no_memory_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let jwks = tmp.path().join("bad.jwks");
    std::fs::write(&jwks, "not json").unwrap();
    for _ in 0..10 {
        let (_, stderr) = failed_start(
            &["--jwks", jwks.to_str().unwrap()],
            &[("TMPDIR", tmp.path().to_str().unwrap())],
        );
        assert!(stderr.contains("key set"), "{stderr}");
    }
    assert_eq!(memory_folders(tmp.path()), Vec::<String>::new());
}

/// SIGHUP stops the server gracefully, as SIGTERM does: exit 0, the log
/// says so, and the in-memory store's folder is gone.
#[test]
fn sighup_is_a_graceful_stop() {
    let tmp = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_with_env(
        &["--db", ":memory:"],
        &[("TMPDIR", tmp.path().to_str().unwrap())],
        &tmp.path().join("server.log"),
    );
    assert_eq!(memory_folders(tmp.path()).len(), 1);
    let pid = nix::unistd::Pid::from_raw(i32::try_from(server.child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    let mut server = server;
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status:?}: {}", server.log());
    assert!(
        server.log().contains("SIGHUP: shutting down"),
        "{}",
        server.log()
    );
    assert!(server.log().contains("server stopped"), "{}", server.log());
    assert_eq!(memory_folders(tmp.path()), Vec::<String>::new());
}

/// A second stop signal during `--shutdown-delay-secs` skips the rest of
/// the delay (and the log says so); the first signal's line names the
/// delay and the grace.
#[tokio::test]
async fn a_second_signal_skips_the_shutdown_delay() {
    use nix::sys::signal::{Signal, kill};
    let dir = tempfile::tempdir().unwrap();
    let mut server = ServerProcess::start(
        &[
            "--db",
            ":memory:",
            "--shutdown-delay-secs",
            "60",
            "--shutdown-grace-secs",
            "7",
        ],
        &dir.path().join("server.log"),
    );
    let pid = nix::unistd::Pid::from_raw(i32::try_from(server.child.id()).unwrap());
    kill(pid, Signal::SIGTERM).unwrap();
    let http = client();
    common::eventually(Duration::from_secs(10), "/readyz to answer 503", || async {
        let r = http.get(server.url("/readyz")).send().await.ok()?;
        (r.status() == StatusCode::SERVICE_UNAVAILABLE).then_some(())
    })
    .await;
    kill(pid, Signal::SIGINT).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still running after the second signal:\n{}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let log = server.log();
    assert!(status.success(), "{status:?}: {log}");
    assert!(
        log.contains("SIGTERM: shutting down: /readyz answers 503, serving goes on for 60s"),
        "{log}"
    );
    assert!(log.contains("up to 7s (shutdown grace)"), "{log}");
    assert!(
        log.contains("SIGINT again: skipping the rest of the shutdown delay"),
        "{log}"
    );
    assert!(log.contains("server stopped"), "{log}");
}

/// RFC 8037's example Ed25519 public key, as a one-key set.
const ONE_KEY_SET: &str = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","use":"sig","alg":"EdDSA","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;

/// With `--jwks` and no token secret the log says which sign-in is in use
/// (the set, its keys, issuer and audience; HS256 refused) and does not
/// claim a random HS256 secret; with a secret alone, HS256. A refresh
/// period under 10 s stops the start.
#[test]
fn the_log_says_which_sign_in_is_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let jwks = dir.path().join("idp.jwks");
    std::fs::write(&jwks, ONE_KEY_SET).unwrap();
    let server = ServerProcess::start_with_env(
        &["--db", ":memory:"],
        &[
            ("LIKEKIT_JWKS", jwks.to_str().unwrap()),
            ("LIKEKIT_TOKEN_ISSUER", "https://idp"),
            ("LIKEKIT_TOKEN_AUDIENCE", "likes"),
        ],
        &dir.path().join("jwks.log"),
    );
    assert!(server.terminate().success());
    let log = std::fs::read_to_string(dir.path().join("jwks.log")).unwrap();
    assert!(!log.contains("random"), "{log}");
    let want = format!(
        "sign-in: tokens signed by the key set {} (1 key, read again every 300s), \
         issuer https://idp, audience likes; HS256 tokens are refused (no token secret)",
        jwks.display()
    );
    assert_eq!(log.matches(&want).count(), 1, "{log}");
    assert!(!log.contains("WARN"), "{log}");

    // Without an audience, a warning says any application's tokens sign in.
    let server = ServerProcess::start_with_env(
        &["--db", ":memory:"],
        &[("LIKEKIT_JWKS", jwks.to_str().unwrap())],
        &dir.path().join("any-audience.log"),
    );
    assert!(server.terminate().success());
    let log = std::fs::read_to_string(dir.path().join("any-audience.log")).unwrap();
    assert_eq!(
        log.matches("tokens are taken whatever their audience")
            .count(),
        1,
        "{log}"
    );

    let server = ServerProcess::start(
        &["--db", ":memory:", "--token-secret", "s"],
        &dir.path().join("hs256.log"),
    );
    assert!(server.terminate().success());
    let log = std::fs::read_to_string(dir.path().join("hs256.log")).unwrap();
    assert_eq!(
        log.matches("sign-in: HS256 tokens signed with the token secret")
            .count(),
        1,
        "{log}"
    );
    // A one-byte secret is warned of; 32 bytes are not.
    assert_eq!(
        log.matches("the token secret is 1 byte;").count(),
        1,
        "{log}"
    );
    let server = ServerProcess::start(
        &["--db", ":memory:", "--token-secret", &"k".repeat(32)],
        &dir.path().join("hs256-long.log"),
    );
    assert!(server.terminate().success());
    let log = std::fs::read_to_string(dir.path().join("hs256-long.log")).unwrap();
    assert!(!log.contains("the token secret is"), "{log}");

    for refresh in ["0", "9"] {
        let (status, stderr) = failed_start(
            &[
                "--jwks",
                jwks.to_str().unwrap(),
                "--jwks-refresh-secs",
                refresh,
            ],
            &[],
        );
        assert_eq!(status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("--jwks-refresh-secs"), "{stderr}");
        assert!(stderr.contains("is not in 10..=86400"), "{stderr}");
    }
}

/// CORS origins: the spaces around each comma-separated one are dropped,
/// and one that is not `scheme://host[:port]` (a trailing slash or a path
/// never matches) stops the start, naming the variable it came from.
#[tokio::test]
async fn cors_origins_are_trimmed_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_with_env(
        &["--db", ":memory:"],
        &[(
            "LIKEKIT_CORS_ORIGINS",
            " https://a.example , https://B.example:443 ",
        )],
        &dir.path().join("server.log"),
    );
    let http = client();
    for origin in ["https://a.example", "https://b.example"] {
        let r = http
            .request(reqwest::Method::OPTIONS, server.url("/posts/1/like"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .send()
            .await
            .unwrap();
        assert_eq!(
            r.headers()
                .get("access-control-allow-origin")
                .map(|v| v.to_str().unwrap()),
            Some(origin),
            "{}",
            server.log()
        );
    }
    assert!(
        server
            .log()
            .contains("CORS: browser origins allowed: https://a.example, https://b.example"),
        "{}",
        server.log()
    );
    assert!(server.terminate().success());

    for (bad, why) in [
        ("https://a.example/", "never matches"),
        ("not a url", "no scheme"),
    ] {
        let (status, stderr) = failed_start(&["--cors-origin", bad], &[]);
        assert_eq!(status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("--cors-origin"), "{stderr}");
        assert!(stderr.contains(why), "{stderr}");
        let (_, stderr) = failed_start(
            &[],
            &[("LIKEKIT_CORS_ORIGINS", &format!("https://ok.example,{bad}"))],
        );
        assert!(stderr.contains("(from LIKEKIT_CORS_ORIGINS)"), "{stderr}");
        assert!(stderr.contains(why), "{stderr}");
    }
}

/// A store option given for the other store stops the start (by flag or
/// by variable); left at its default it is not "given".
#[test]
fn options_of_the_other_store_stop_the_start() {
    for (flag, env, value) in [
        ("--db-ca-file", "LIKEKIT_DB_CA_FILE", "/nonexistent"),
        ("--db-connections", "LIKEKIT_DB_CONNECTIONS", "5"),
        ("--citus-direct", "LIKEKIT_CITUS_DIRECT", "false"),
        ("--db-wait-secs", "LIKEKIT_DB_WAIT_SECS", "5"),
    ] {
        for by_env in [false, true] {
            let (args, vars) = if by_env {
                (vec![], vec![(env, value)])
            } else {
                (vec![flag, value], vec![])
            };
            let (status, stderr) = failed_start(&args, &vars);
            assert_eq!(status.code(), Some(1), "{stderr}");
            assert!(
                stderr.contains(&format!(
                    "{flag} ({env}) applies to PostgreSQL only, and --db (LIKEKIT_DB) names a SQLite database"
                )),
                "{stderr}"
            );
        }
    }
    // --read-connections with a PostgreSQL URL: refused before connecting.
    let output = common::server_command()
        .args([
            "--listen",
            "127.0.0.1:0",
            "--db",
            "postgres://u@127.0.0.1:1/x",
        ])
        .env("LIKEKIT_READ_CONNECTIONS", "3")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--read-connections (LIKEKIT_READ_CONNECTIONS) applies to SQLite only"),
        "{stderr}"
    );
    // SQLite's own option is fine with SQLite.
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &["--db", ":memory:", "--read-connections", "2"],
        &dir.path().join("server.log"),
    );
    assert!(server.terminate().success());
}

/// Start errors say why: the OS reason a SQLite file cannot be opened,
/// what `--listen` wants instead of a host name, and which listener could
/// not bind.
#[test]
fn start_errors_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/folder/likes.db");
    let output = common::server_command()
        .args(["--listen", "127.0.0.1:0", "--db", missing.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("unable to open database file"), "{stderr}");
    assert!(
        stderr.contains("/no/such/folder does not exist"),
        "{stderr}"
    );
    let output = common::server_command()
        .args([
            "--listen",
            "127.0.0.1:0",
            "--db",
            dir.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is a folder"), "{stderr}");

    for flag in ["--listen", "--ops-listen"] {
        let output = common::server_command()
            .args(["--db", ":memory:", flag, "localhost:8080"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(flag), "{stderr}");
        assert!(stderr.contains("not an IP address and port"), "{stderr}");
        assert!(stderr.contains("127.0.0.1:8080"), "{stderr}");
    }

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    let (_, stderr) = failed_start(&["--ops-listen", &taken], &[]);
    assert!(
        stderr.contains(&format!(
            "cannot listen on {taken} (the operations listener)"
        )),
        "{stderr}"
    );
}

/// PostgreSQL not up yet at start: with `--db-wait-secs` the server tries
/// again (a log line per try) until it answers — here something that is
/// not PostgreSQL opens the port after a while, and that failure stops
/// the start at once; with 0 a refused connection stops it at once; and
/// the wait runs out with an error saying so.
#[test]
fn the_start_waits_for_postgresql_to_come_up() {
    use std::io::{Read as _, Write as _};
    let free_port = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let run = |port: u16, wait: &str| {
        common::server_command()
            .args(["--listen", "127.0.0.1:0", "--db-wait-secs", wait, "--db"])
            .arg(format!("postgres://u:s3cret@127.0.0.1:{port}/x"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let stderr_of = |mut child: std::process::Child| {
        let status = child.wait().unwrap();
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        (status, stderr)
    };

    let port = free_port();
    let child = run(port, "60");
    std::thread::sleep(Duration::from_millis(1500));
    // Not PostgreSQL: answers every connection with a byte and closes it.
    let impostor = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let serving = std::thread::spawn(move || {
        if let Ok((mut socket, _)) = impostor.accept() {
            let mut buf = [0u8; 64];
            let _ = socket.read(&mut buf);
            let _ = socket.write_all(b"X");
        }
    });
    let (status, stderr) = stderr_of(child);
    serving.join().unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    // It stopped at the impostor's answer, not when the 60 s ran out.
    assert!(!stderr.contains("was not up after waiting"), "{stderr}");
    assert!(stderr.contains("PostgreSQL is not up yet"), "{stderr}");
    assert!(stderr.contains("waiting up to 60s in all"), "{stderr}");
    let last = stderr.lines().last().unwrap();
    assert!(last.starts_with("error: "), "{stderr}");
    assert!(!last.contains("Connection refused"), "{stderr}");
    assert!(!stderr.contains("s3cret"), "{stderr}");

    // No waiting: a refused connection stops the start at once.
    let (status, stderr) = stderr_of(run(free_port(), "0"));
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Connection refused"), "{stderr}");
    assert!(!stderr.contains("not up yet"), "{stderr}");

    // The wait runs out.
    let (status, stderr) = stderr_of(run(free_port(), "1"));
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("PostgreSQL was not up after waiting 1s"),
        "{stderr}"
    );
}

/// `--log-format json`: one JSON object per line, and a request's lines
/// carry its id — the client's `X-Request-Id`, or one the server made —
/// which the answer echoes, and its route.
#[tokio::test]
async fn json_logs_carry_the_request_id() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_with_env(
        &["--db", ":memory:", "--log-format", "json"],
        &[("RUST_LOG", "likekit_server=debug")],
        &dir.path().join("server.log"),
    );
    let http = client();
    let r = http
        .get(server.url("/posts/42/likes"))
        .header("x-request-id", "checkout-7f3a")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(r.headers()["x-request-id"], "checkout-7f3a");
    // Without one (or with one that is not visible ASCII), the server makes one.
    let made = http.get(server.url("/livez")).send().await.unwrap();
    let made = made.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert_eq!(made.len(), 16, "{made}");
    let bad = http
        .get(server.url("/livez"))
        .header("x-request-id", "a b")
        .send()
        .await
        .unwrap();
    assert_ne!(bad.headers()["x-request-id"], "a b");
    let other = bad.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert_ne!(other, made, "ids are not reused");

    let log = server.log();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    // Each line of a request names its route too (the metrics' label).
    let of = |id: &str, route: &str| {
        let mine: Vec<_> = lines
            .iter()
            .filter(|line| line["span"]["request_id"] == id)
            .collect();
        assert!(
            mine.iter().all(|line| line["span"]["route"] == route),
            "{id}'s lines name another route than {route}:\n{log}"
        );
        mine.len()
    };
    assert!(
        of("checkout-7f3a", "likes") >= 1,
        "no line of the request:\n{log}"
    );
    assert!(of(&made, "livez") >= 1, "no line with the made id:\n{log}");
    assert!(server.terminate().success());
}

/// A fatal start error is printed once: `error: …` in text, one JSON line
/// (and nothing else) in json.
#[test]
fn a_bad_seed_file_stops_the_start_with_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let seed = dir.path().join("seed.json");
    std::fs::write(&seed, r#"{"users": [{"id": 1}]}"#).unwrap();
    let seed = seed.to_str().unwrap();
    let (status, stderr) = failed_start(&["--seed", seed], &[]);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches("bad seed").count(), 1, "{stderr}");
    assert!(stderr.contains("error: bad seed"), "{stderr}");

    let (_, stderr) = failed_start(&["--seed", seed, "--log-format", "json"], &[]);
    let lines: Vec<serde_json::Value> = stderr
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let errors: Vec<_> = lines.iter().filter(|l| l["level"] == "ERROR").collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    let message = errors[0]["fields"]["message"].as_str().unwrap();
    assert!(message.starts_with("bad seed"), "{stderr}");
}

/// The command line parser's own refusals (exit 2) are one JSON line too
/// when JSON log lines are asked for, by the flag or by
/// `LIKEKIT_LOG_FORMAT`; the flag wins over the variable, and help stays
/// text.
#[test]
fn parser_errors_are_one_json_line_under_json_logs() {
    let one_error = |stderr: &str| -> String {
        let lines: Vec<serde_json::Value> = stderr
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
            .collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert_eq!(lines[0]["level"], "ERROR", "{stderr}");
        lines[0]["fields"]["message"].as_str().unwrap().to_owned()
    };
    let (status, stderr) = failed_start(&["--log-format", "json", "--bogus"], &[]);
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        one_error(&stderr).starts_with("unexpected argument '--bogus'"),
        "{stderr}"
    );
    let (status, stderr) = failed_start(
        &["--write-rate-limit=abc"],
        &[("LIKEKIT_LOG_FORMAT", "json")],
    );
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(one_error(&stderr).contains("'abc'"), "{stderr}");
    let (status, stderr) = failed_start(
        &[],
        &[
            ("LIKEKIT_LOG_FORMAT", "json"),
            ("LIKEKIT_WRITE_RATE_LIMIT", "abc"),
        ],
    );
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        one_error(&stderr).contains("(from LIKEKIT_WRITE_RATE_LIMIT)"),
        "{stderr}"
    );
    // The flag over the variable; text as before.
    let (status, stderr) = failed_start(
        &["--log-format=text", "--bogus"],
        &[("LIKEKIT_LOG_FORMAT", "json")],
    );
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: unexpected argument '--bogus'"),
        "{stderr}"
    );
    let output = common::server_command()
        .args(["--log-format", "json", "--help"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("Usage: likekit-server"),
        "{output:?}"
    );
}

/// A `RUST_LOG` that is not a filter stops the start (exit 1) with the
/// variable and the parse problem, rather than quietly logging at `info`;
/// an empty one is `info`.
#[test]
fn an_invalid_rust_log_stops_the_start() {
    for bad in ["warn,likekit_server=bogus", "[[["] {
        let (status, stderr) = failed_start(&[], &[("RUST_LOG", bad)]);
        assert_eq!(status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("error: RUST_LOG={bad:?} is not a log filter: ")),
            "{stderr}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_with_env(
        &["--db", ":memory:"],
        &[("RUST_LOG", "")],
        &dir.path().join("server.log"),
    );
    assert!(server.log().contains("INFO"), "{}", server.log());
    assert!(server.terminate().success());
}

/// Runs the binary with `args` and `env` (plus an in-memory database on a
/// free port), expecting it to stop before it listens: its exit status and
/// standard error.
fn failed_start(args: &[&str], env: &[(&str, &str)]) -> (std::process::ExitStatus, String) {
    let mut command = common::server_command();
    command
        .args(["--listen", "127.0.0.1:0", "--db", ":memory:"])
        .args(args)
        .envs(env.iter().copied());
    failed(command, &format!("{args:?} {env:?}"))
}

/// Runs `command` (the binary, told `what` in messages), expecting it to
/// stop before it listens: its exit status and standard error.
fn failed(mut command: std::process::Command, what: &str) -> (std::process::ExitStatus, String) {
    use std::io::Read as _;
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{what}: the server started");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!status.success(), "{what}: {stderr}");
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    (status, stderr)
}

/// `--max-connections` has an upper bound, 1000000, that the parser
/// enforces like every other: past it (also past what a semaphore can
/// count, 2^61 - 1) the start stops with a usage error, exit 2, never an
/// accept loop that panicked; the bound itself is taken.
#[test]
fn max_connections_has_an_upper_bound() {
    for bad in ["1000001", "2305843009213693952", "18446744073709551615"] {
        let (status, stderr) = failed_start(&["--max-connections", bad], &[]);
        assert_eq!(status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("--max-connections"), "{bad}: {stderr}");
        assert!(stderr.contains("is not in 1..=1000000"), "{bad}: {stderr}");
        let (status, stderr) = failed_start(&[], &[("LIKEKIT_MAX_CONNECTIONS", bad)]);
        assert_eq!(status.code(), Some(2), "{bad}: {stderr}");
        assert!(
            stderr.contains("(from LIKEKIT_MAX_CONNECTIONS)"),
            "{bad}: {stderr}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &["--db", ":memory:", "--max-connections", "1000000"],
        &dir.path().join("server.log"),
    );
    let log = server.log();
    assert!(server.terminate().success(), "{log}");
}

/// The caches' sizes have upper bounds too (ten million posts, 64 GiB of
/// friend sets): past them the start stops with a usage error naming the
/// flag, and the variable when it came from one (exit 2); the bounds
/// themselves are taken.
#[test]
fn cache_sizes_have_bounds() {
    for (flag, var, bad, bounds) in [
        (
            "--post-cache-entries",
            "LIKEKIT_POST_CACHE_ENTRIES",
            "10000001",
            "1..=10000000",
        ),
        (
            "--friends-cache-mib",
            "LIKEKIT_FRIENDS_CACHE_MIB",
            "65537",
            "1..=65536",
        ),
        (
            "--friends-cache-mib",
            "LIKEKIT_FRIENDS_CACHE_MIB",
            "18446744073709551615",
            "1..=65536",
        ),
    ] {
        let (status, stderr) = failed_start(&[flag, bad], &[]);
        assert_eq!(status.code(), Some(2), "{flag} {bad}: {stderr}");
        assert!(stderr.contains(flag), "{flag} {bad}: {stderr}");
        assert!(stderr.contains(&format!("is not in {bounds}")), "{stderr}");
        let (status, stderr) = failed_start(&[], &[(var, bad)]);
        assert_eq!(status.code(), Some(2), "{var}={bad}: {stderr}");
        assert!(stderr.contains(&format!("(from {var})")), "{stderr}");
    }
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &[
            "--db",
            ":memory:",
            "--post-cache-entries",
            "10000000",
            "--friends-cache-mib",
            "65536",
        ],
        &dir.path().join("server.log"),
    );
    let log = server.log();
    assert!(server.terminate().success(), "{log}");
}

/// `token` reads its own flags and `LIKEKIT_TOKEN_SECRET`, nothing else:
/// the server's settings in the environment, bad ones too, are no concern
/// of it. Serving, with `serve` or without, still refuses each of them,
/// naming the variable.
#[test]
fn token_reads_none_of_the_servers_settings() {
    let settings = [
        ("LIKEKIT_MAX_CONNECTIONS", "0"),
        ("LIKEKIT_DB", ""),
        ("LIKEKIT_LISTEN", "localhost:8080"),
        ("LIKEKIT_REQUEST_TIMEOUT_SECS", "-1"),
        ("LIKEKIT_LOG_FORMAT", "yaml"),
    ];
    let tokens = Tokens::new(b"s3cret").unwrap();
    let minted = |output: std::process::Output| {
        assert!(output.status.success(), "{output:?}");
        tokens.verify(String::from_utf8(output.stdout).unwrap().trim())
    };
    for (name, value) in settings {
        let output = common::server_command()
            .args(["token", "--user", "7", "--token-secret", "s3cret"])
            .env(name, value)
            .output()
            .unwrap();
        assert_eq!(minted(output), Ok(u(7)), "{name}={value:?}");
    }
    // All of them at once, the secret from its variable.
    let output = common::server_command()
        .args(["token", "--user", "8"])
        .envs(settings)
        .env("LIKEKIT_TOKEN_SECRET", "s3cret")
        .output()
        .unwrap();
    assert_eq!(minted(output), Ok(u(8)));

    // Run in a folder of its own: a server that started anyway would make
    // its default likekit.db there.
    let dir = tempfile::tempdir().unwrap();
    for (name, value) in settings {
        for serve in [&[][..], &["serve"][..]] {
            let mut command = common::server_command();
            command.args(serve).current_dir(dir.path()).env(name, value);
            let (status, stderr) = failed(command, &format!("{serve:?} {name}={value:?}"));
            assert_eq!(
                status.code(),
                Some(2),
                "{serve:?} {name}={value:?}: {stderr}"
            );
            assert!(
                stderr.contains(&format!("(from {name})")),
                "{serve:?} {name}={value:?}: {stderr}"
            );
        }
    }
}

/// Waits until `ready` holds, or fails after `patience` with the log.
fn until(patience: Duration, what: &str, log: &dyn Fn() -> String, ready: &dyn Fn() -> bool) {
    let deadline = std::time::Instant::now() + patience;
    while !ready() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}:\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends `signal` to `child` and waits at most `patience` for it to exit:
/// its status, or a failure with the log (the process killed).
fn stopped_within(
    child: &mut std::process::Child,
    signal: nix::sys::signal::Signal,
    patience: Duration,
    log: &dyn Fn() -> String,
) -> std::process::ExitStatus {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, signal).unwrap();
    let deadline = std::time::Instant::now() + patience;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("still running {patience:?} after {signal}:\n{}", log());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stops `child`, still starting, with `signal` within `patience`, and
/// checks that it stopped as a stop does: exit 0, the log naming the
/// signal, and nothing ever listened (stdout). Returns the log.
fn stopped_before_listening(
    child: &mut std::process::Child,
    signal: nix::sys::signal::Signal,
    patience: Duration,
    log: &dyn Fn() -> String,
) -> String {
    use std::io::Read as _;
    let status = stopped_within(child, signal, patience, log);
    let log = log();
    assert!(status.success(), "{status:?}: {log}");
    assert!(log.contains(&format!("{signal}: shutting down")), "{log}");
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(!stdout.contains("listening on"), "{stdout}");
    log
}

/// A stop signal while the start waits for PostgreSQL (nothing listens on
/// its port, and `--db-wait-secs` is 30) stops the server at once, as a
/// stop does: exit 0, the log names the signal, and it never listened.
#[test]
fn a_stop_signal_during_the_start_stops_it_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("server.log");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = common::server_command()
        .args(["--listen", "127.0.0.1:0", "--db-wait-secs", "30", "--db"])
        .arg(format!("postgres://likekit@127.0.0.1:{port}/likes"))
        .env("RUST_LOG", "info")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();
    let log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    until(
        Duration::from_secs(20),
        "the wait for PostgreSQL",
        &log,
        &|| log().contains("PostgreSQL is not up yet"),
    );
    let log = stopped_before_listening(
        &mut child,
        nix::sys::signal::Signal::SIGTERM,
        Duration::from_secs(10),
        &log,
    );
    assert!(!log.contains("was not up after waiting"), "{log}");
}

/// A stop signal while the start waits for a SQLite file another server
/// holds stops it too, once SQLite's wait for the file (5 s) ends: exit
/// 0, the log names the signal, and it never listened.
#[test]
fn a_stop_signal_while_the_start_waits_for_a_sqlite_file_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("likes.db");
    let db = db.to_str().unwrap();
    let first = ServerProcess::start(&["--db", db], &dir.path().join("first.log"));
    let log_path = dir.path().join("second.log");
    let mut child = common::server_command()
        .args(["--listen", "127.0.0.1:0", "--db", db])
        .env("RUST_LOG", "info")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();
    let log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    // Well inside the wait for the file.
    std::thread::sleep(Duration::from_secs(1));
    let log = stopped_before_listening(
        &mut child,
        nix::sys::signal::Signal::SIGTERM,
        Duration::from_secs(10),
        &log,
    );
    assert!(!log.contains("database is locked"), "{log}");
    assert!(first.terminate().success());
}

/// A stop signal after the start opened the store, while it waits for a
/// key set that never comes, stops it at once too, and the store is
/// closed: the in-memory store's folder is gone.
#[test]
fn a_stop_signal_during_the_start_closes_the_store_it_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let log_path = tmp.path().join("server.log");
    // Takes connections (the kernel does) and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let jwks = format!("http://{}/jwks.json", silent.local_addr().unwrap());
    let mut child = common::server_command()
        .args([
            "--listen",
            "127.0.0.1:0",
            "--db",
            ":memory:",
            "--jwks",
            &jwks,
        ])
        .env("RUST_LOG", "info")
        .env("TMPDIR", tmp.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();
    let log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    until(Duration::from_secs(20), "the store to open", &log, &|| {
        log().contains("store: SQLite in memory") && memory_folders(tmp.path()).len() == 1
    });
    // The key set's fetch gives up after 10 s: stopped well before.
    let log = stopped_before_listening(
        &mut child,
        nix::sys::signal::Signal::SIGINT,
        Duration::from_secs(7),
        &log,
    );
    assert_eq!(memory_folders(tmp.path()), Vec::<String>::new(), "{log}");
    drop(silent);
}

/// Every duration flag has bounds the parser enforces: out of them the
/// start stops with a usage error naming the flag (exit 2), never a panic.
#[test]
fn duration_flags_out_of_bounds_stop_the_start() {
    for (flag, bad) in [
        ("--request-timeout-secs", "0"),
        ("--request-timeout-secs", "86401"),
        ("--request-timeout-secs", "18446744073709551615"),
        ("--header-read-timeout-secs", "0"),
        ("--header-read-timeout-secs", "18446744073709551615"),
        ("--shutdown-grace-secs", "86401"),
        ("--shutdown-delay-secs", "3601"),
        ("--cache-ttl-ms", "3600001"),
        ("--friends-ttl-ms", "86400001"),
    ] {
        let (status, stderr) = failed_start(&[flag, bad], &[]);
        assert_eq!(status.code(), Some(2), "{flag} {bad}: {stderr}");
        assert!(stderr.contains(flag), "{flag} {bad}: {stderr}");
        assert!(stderr.contains("is not in"), "{flag} {bad}: {stderr}");
    }
}

#[tokio::test]
async fn seeded_memory_server_with_a_random_secret_and_no_admin() {
    let dir = tempfile::tempdir().unwrap();
    let seed = dir.path().join("seed.json");
    std::fs::write(
        &seed,
        json!({
            "users": [{"id": 1, "name": "Ana", "friends": [2]}, {"id": 2, "name": "Ben"}],
            "posts": [{"id": 42, "likers": [2]}]
        })
        .to_string(),
    )
    .unwrap();
    let server = ServerProcess::start(
        &["--db", ":memory:", "--seed", seed.to_str().unwrap()],
        &dir.path().join("server.log"),
    );
    let http = client();
    // No admin API without a key.
    let r = http.post(server.url("/admin/reset")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    // The secret is random, so an outside token is refused...
    let token = Tokens::new(b"guess")
        .unwrap()
        .mint(u(1), Duration::from_secs(60));
    let r = http
        .get(server.url("/posts/42/likes"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    // ... and the log says the secret is random.
    assert!(server.log().contains("random"), "{}", server.log());
    assert!(server.terminate().success());
}

#[tokio::test]
async fn sigterm_finishes_in_flight_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("likes.db");
    let db = db.to_str().unwrap();
    let args = ["--db", db, "--admin-key", "k", "--token-secret", "s"];
    let server = ServerProcess::start(&args, &dir.path().join("first.log"));
    let http = client();
    let admin = |path: &str| {
        http.request(reqwest::Method::POST, server.url(path))
            .header("X-Admin-Key", "k")
    };
    assert!(
        admin("/admin/posts")
            .json(&json!({"id": 1}))
            .send()
            .await
            .unwrap()
            .status()
            .is_success()
    );
    let r = http
        .put(server.url("/admin/faults"))
        .header("X-Admin-Key", "k")
        .json(&json!({"rules": [{"route": "like", "latency_ms": 1500}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);

    let tokens = Tokens::new(b"s").unwrap();
    let like = tokio::spawn({
        let http = http.clone();
        let url = server.url("/posts/1/like");
        let token = tokens.mint(u(7), Duration::from_secs(60));
        async move { http.post(url).bearer_auth(token).send().await }
    });
    // Let the request reach the server, then ask it to stop.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let status = tokio::task::spawn_blocking(move || server.terminate())
        .await
        .unwrap();
    assert!(status.success(), "{status:?}");
    let response = like
        .await
        .unwrap()
        .expect("the in-flight like was answered");
    assert_eq!(response.status(), StatusCode::OK);
    let state: LikeState = response.json().await.unwrap();
    assert_eq!(state.count, 1);

    // The like was committed.
    let server = ServerProcess::start(&args, &dir.path().join("second.log"));
    let r = http
        .get(server.url("/posts/1/likes"))
        .bearer_auth(tokens.mint(u(7), Duration::from_secs(60)))
        .send()
        .await
        .unwrap();
    let view: PostLikes = r.json().await.unwrap();
    assert!(view.liked_by_me);
    assert_eq!(view.count, 1);
    assert!(server.terminate().success());
}
