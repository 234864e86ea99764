//! The `openapi` runner: Schemathesis, a property-based tester of OpenAPI
//! documents, against the reference server's own `/openapi.json`. For
//! every operation it sends the document's examples, its limits and what
//! lies just past them, random valid and invalid requests, and sequences
//! of them, and checks each answer: never a 5xx, a status and a body the
//! document lists, what the schema allows taken and what it forbids
//! refused, 401 without the token. A QA team pointing its own contract
//! tests at the mock relies on exactly that.
//!
//! Two runs, each with a fixed seed so that a run is repeatable: the public
//! and admin routes, then the fault rules with the reset and the seed. The
//! fault rules run apart because a rule set answers the public routes with
//! whatever a test asks for (a 200 with any body is the point of the mock),
//! which the public routes' schemas do not describe. The count is the
//! JUnit reports' test cases: one per operation Schemathesis tests (it
//! reports none for `GET /openapi.json` itself), and one for the first
//! run's stateful phase.
//!
//! Both runs are made twice: against the server on SQLite (in memory), and
//! against the server on a throwaway PostgreSQL cluster, since the two
//! stores refuse bad input in their own ways (a NUL in a name was stored by
//! SQLite and a 500 from PostgreSQL before the rule that refuses it).

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use likekit_testing::postgres::{Cluster, ClusterOptions};

use crate::Ctx;
use crate::install::{self, Package};
use crate::proc::{self, say};
use crate::server::{self, TestServer};
use crate::tally::{self, Tally};

/// The tester, installed into `.tools/python` beside pytest.
pub const SCHEMATHESIS: Package = Package {
    name: "schemathesis",
    version: "4.32.5",
};

/// Examples per operation and phase: enough to reach every limit's edge
/// (the coverage phase tries those whatever this says) in about a minute.
const MAX_EXAMPLES: &str = "100";

/// The checks left out, each a false alarm for this API:
/// - `use_after_free` expects `GET /posts/{id}/likes` to answer 404 after
///   `DELETE /posts/{id}/like`; the unlike removes the viewer's like, not
///   the post, whose likes stay readable.
/// - `ensure_resource_availability` reads a 404 after `POST /admin/users` as
///   the new user missing; the 404 `user_not_found` of
///   `PUT /admin/users/{id}/friends` is about a friend in the list that
///   does not exist (documented).
const EXCLUDED_CHECKS: &str = "use_after_free,ensure_resource_availability";

/// The operations of the second run.
const FAULT_PATHS: [&str; 3] = ["/admin/faults", "/admin/reset", "/admin/seed"];

pub fn run(ctx: &Ctx) -> Result<Tally, String> {
    let python = install::pip(ctx, &[install::PYTEST, SCHEMATHESIS])?;
    let schemathesis = python.with_file_name("schemathesis");
    let binary = server::build(ctx)?;
    let logs = ctx.target_dir.join("openapi-tests");
    let secret = server::random_hex(32)?;
    let token = token(&binary, &secret)?;
    let mut tally = Tally::default();
    let mut stores = vec![Store {
        name: "sqlite",
        db: ":memory:".to_owned(),
    }];
    // Without PostgreSQL the SQLite runs still count; its part is one
    // failure that says why, as with the Rust runner's store tests.
    let cluster = install::postgres_bin().and_then(|bin| {
        let options = ClusterOptions {
            bin: Some(bin),
            ..ClusterOptions::default()
        };
        Cluster::start(options).map_err(|e| e.to_string())
    });
    let database = match &cluster {
        Ok(cluster) => Some(cluster.database().map_err(|e| e.to_string())?),
        Err(e) => {
            tally.add(&Tally::broken(format!(
                "the openapi tests on PostgreSQL could not run: {e}"
            )));
            None
        }
    };
    if let Some(database) = &database {
        proc::say(&format!(
            "a throwaway PostgreSQL cluster for the openapi tests at {}",
            database.url()
        ));
        stores.push(Store {
            name: "postgres",
            db: database.url().to_owned(),
        });
    }
    for store in &stores {
        tally.add(&test_server(
            ctx,
            &schemathesis,
            &binary,
            &logs,
            &secret,
            &token,
            store,
        )?);
    }
    Ok(tally)
}

/// The store a server under test runs on: its name in the reports' file
/// names and the logs, and its `--db`.
struct Store {
    name: &'static str,
    db: String,
}

/// Both runs, each against a server of its own on `store`, seeded with the demo
/// data.
fn test_server(
    ctx: &Ctx,
    schemathesis: &Path,
    binary: &Path,
    logs: &Path,
    secret: &str,
    token: &str,
    store: &Store,
) -> Result<Tally, String> {
    let args: [&OsStr; 6] = [
        "--db".as_ref(),
        store.db.as_ref(),
        "--token-secret".as_ref(),
        secret.as_ref(),
        "--seed".as_ref(),
        "examples/demo-seed.json".as_ref(),
    ];
    let mut tally = Tally::default();
    for (run, include) in [("routes", false), ("faults", true)] {
        // The routes' run has a server with a 2 s request timeout, so that
        // a journal read that waits (`wait_for`, which the fuzzer sends
        // with any `timeout_ms` up to 60 s) waits 1 s at most; the fault
        // rules' run keeps the default, against which their latencies are
        // checked.
        let mut args: Vec<&OsStr> = args.to_vec();
        if !include {
            args.extend([OsStr::new("--request-timeout-secs"), OsStr::new("2")]);
        }
        let name = format!("openapi-{}-{run}", store.name);
        let server = TestServer::start_binary(ctx, binary, &name, logs, &args)?;
        let report = logs.join(format!("{}-{run}.xml", store.name));
        let mut cmd = Command::new(schemathesis);
        cmd.current_dir(logs)
            .args(["--no-color", "run"])
            .arg(format!("{}/openapi.json", server.url))
            .args(["--header", &format!("Authorization: Bearer {token}")])
            .args(["--header", &format!("X-Admin-Key: {}", server.admin_key)])
            .args(["--exclude-checks", EXCLUDED_CHECKS])
            .args(["--max-examples", MAX_EXAMPLES, "--seed", "1"])
            // No store of earlier finds: each run starts from its seed.
            .args(["--generation-database", "none"])
            // How fast examples are made depends on the machine, not on
            // the server.
            .args(["--suppress-health-check", "too_slow"])
            .args(["--workers", "1"])
            .args(["--report", "junit", "--report-junit-path"])
            .arg(&report);
        let flag = if include {
            "--include-path"
        } else {
            "--exclude-path"
        };
        for path in FAULT_PATHS {
            cmd.args([flag, path]);
        }
        tally.add(&tally::run_junit(&cmd, &report)?);
        drop(server);
    }
    Ok(tally)
}

/// A sign-in token for user 1 (Ana in the demo data), from the server's
/// own `token` command.
fn token(binary: &Path, secret: &str) -> Result<String, String> {
    let mut cmd = Command::new(binary);
    cmd.args([
        "token",
        "--user",
        "1",
        "--ttl",
        "3600",
        "--token-secret",
        secret,
    ]);
    let out = proc::capture(&mut cmd).ok_or_else(|| format!("`{}` failed", proc::display(&cmd)))?;
    let token = out.trim().to_owned();
    say(&format!(
        "a token for user 1 from `{} token`",
        binary.display()
    ));
    Ok(token)
}
