//! `cargo xtask test`: every test suite the project has, one runner each,
//! summed into one final line `N passed, N failed[, N skipped]`.
//!
//! A runner installs what its suite needs (see `install`), runs it and
//! counts its results. Suites whose runner can write JUnit XML do
//! (cargo-nextest through the `xtask` profile in `.config/nextest.toml`,
//! pytest's `--junitxml`, node's junit reporter, `swift test
//! --xunit-output`) and [`run_junit`] reads the file; the doc tests
//! and the wasm tests end with libtest's `test result:` line
//! ([`run_libtest`]); the
//! Kotlin program prints its own `PASS`/`FAIL` lines. Whatever the source,
//! a failed exit that reported no failing test counts as one failure.

use std::path::Path;
use std::process::{Command, ExitCode};

use crate::tally::{Tally, run_junit, run_libtest};
use crate::{Ctx, install, proc, react, typescript, uniffi, web};

/// A test suite that `cargo xtask test` runs.
#[derive(Debug)]
pub struct Runner {
    /// Short name for `--only` and the summary table.
    pub name: &'static str,
    /// What it runs.
    pub about: &'static str,
    /// Runs the suite and counts its results.
    pub run: fn(&Ctx) -> Result<Tally, String>,
}

/// Every runner, in the order they run.
pub const RUNNERS: &[Runner] = &[
    Runner {
        name: "rust",
        about: "cargo nextest run --workspace --all-targets, the PostgreSQL store tests and the doc tests under cargo test",
        run: run_rust,
    },
    Runner {
        name: "fuzz",
        about: "every fuzz target of fuzz/, built as cargo xtask fuzz builds it, run once on each of its committed seeds",
        run: crate::fuzz::run_seeds,
    },
    Runner {
        name: "kotlin",
        about: "the generated Kotlin on the JVM (kotlinc + JNA) against the real server",
        run: uniffi::run_kotlin,
    },
    Runner {
        name: "python",
        about: "pytest over the generated Python module against the real server",
        run: uniffi::run_python,
    },
    Runner {
        name: "swift",
        about: "the generated Swift package's tests; skipped without a Swift toolchain",
        run: uniffi::run_swift,
    },
    Runner {
        name: "wasm",
        about: "the web binding's own tests in Node (wasm-bindgen-test)",
        run: web::run_wasm,
    },
    Runner {
        name: "node",
        about: "node --test: the built web package against the real server",
        run: web::run_node,
    },
    Runner {
        name: "browser",
        about: "the demo page, and two tabs of one viewer, in headless Chromium (playwright-core)",
        run: web::run_browser,
    },
    Runner {
        name: "typescript",
        about: "tsc --noEmit --strict on a file using every member of the built web package, and a misspelled copy that must fail",
        run: typescript::run,
    },
    Runner {
        name: "openapi",
        about: "Schemathesis against the reference server's /openapi.json: every operation's examples, limits and random requests, each answer checked against the document, with the server on SQLite and on a throwaway PostgreSQL cluster",
        run: crate::openapi::run,
    },
    Runner {
        name: "react",
        about: "likekit-react in a React 19 app built with Vite, in headless Chromium, and server-rendered in Node; a Next.js app built and started",
        run: react::run,
    },
];

/// The runner names, for `--only`.
pub fn names() -> clap::builder::PossibleValuesParser {
    RUNNERS.iter().map(|r| r.name).collect::<Vec<_>>().into()
}

/// The test binary (package, test target) that runs under libtest instead
/// of nextest: its tests share one throwaway PostgreSQL cluster that the
/// binary starts on first use, and nextest's process per test would start
/// one cluster per test, which made the whole Rust run markedly slower
/// (see the README).
const SHARED_CLUSTER: (&str, &str) = ("likekit-server", "store_postgres");

/// The test binary (package, test target) of the Citus suites: they run
/// against the coordinator [`CITUS_URL`] names, and without it xtask does
/// not run them but counts them as skipped and says why ([`citus_skipped`]).
const CITUS_SUITES: (&str, &str) = ("likekit-server", "store_citus");

/// The variable that points the Citus suites at a coordinator.
const CITUS_URL: &str = "LIKEKIT_TEST_CITUS_URL";

/// The `rust` runner: every target of the workspace under cargo-nextest
/// (the JUnit report comes from the `xtask` profile in
/// `.config/nextest.toml`) but [`SHARED_CLUSTER`], which runs under libtest
/// next, and [`CITUS_SUITES`] when no coordinator is given; then the doc
/// tests, which nextest does not run.
fn run_rust(ctx: &Ctx) -> Result<Tally, String> {
    // Without cargo-nextest the libtest parts still run.
    let nextest = install::nextest(ctx);
    // The PostgreSQL store tests start their own throwaway cluster and need
    // PostgreSQL's server programs; without them those tests fail and say so.
    let postgres = install::postgres_bin();
    if let Err(e) = &postgres {
        proc::say(&format!(
            "PostgreSQL is not available, so its store tests will fail: {e}"
        ));
    }
    // So are the ones that run through PgBouncer in front of it.
    if let Err(e) = install::pgbouncer() {
        proc::say(&format!(
            "PgBouncer is not available, so the store tests through it will fail: {e}"
        ));
    }
    let (package, test) = SHARED_CLUSTER;
    let mut filter = format!("not binary_id({package}::{test})");
    let citus = std::env::var(CITUS_URL).is_ok_and(|url| !url.trim().is_empty());
    if citus {
        proc::say(&format!(
            "{CITUS_URL} is set, so the Citus suites run against that coordinator"
        ));
    } else {
        let (package, test) = CITUS_SUITES;
        filter.push_str(&format!(" & not binary_id({package}::{test})"));
    }
    let mut run = Command::new(
        nextest
            .as_deref()
            .unwrap_or(Path::new(install::NEXTEST.bin)),
    );
    run.args(["nextest", "run", "--workspace", "--all-targets"])
        .args(["--no-fail-fast", "--profile", "xtask", "-E", &filter]);
    let mut shared = proc::cargo();
    // `--workspace`, as nextest builds: with `-p` cargo would settle the
    // features anew and compile the server and its dependencies again.
    shared.args(["test", "--workspace", "--test", test, "--no-fail-fast"]);
    let mut doc = proc::cargo();
    doc.args(["test", "--workspace", "--doc", "--no-fail-fast"]);
    for cmd in [&mut run, &mut shared, &mut doc] {
        cmd.current_dir(&ctx.root);
        if let Ok(dir) = &postgres {
            cmd.env("LIKEKIT_PG_BIN", dir);
        }
    }
    // nextest keeps its store under the workspace's `target/`, whatever
    // CARGO_TARGET_DIR says (`[store] dir` in its config).
    let report = ctx.root.join("target/nextest/xtask/junit.xml");
    // Each part counts on its own: one that cannot run is one counted
    // failure with its reason, and the others still run.
    let mut total = match nextest {
        Ok(_) => counted(run_junit(&run, &report)),
        Err(e) => Tally::broken(format!(
            "cargo-nextest is not available, so nothing ran under it: {e}"
        )),
    };
    if !citus {
        total.add(&citus_skipped(ctx));
    }
    total.add(&counted(run_libtest(&shared)));
    total.add(&counted(run_libtest(&doc)));
    Ok(total)
}

/// A part of a runner's results: what it counted, or one failure with the
/// reason it could not run.
fn counted(part: Result<Tally, String>) -> Tally {
    part.unwrap_or_else(Tally::broken)
}

/// The Citus suites, not run: every test of [`CITUS_SUITES`] counted as
/// skipped (listed by the test binary itself), with one line saying why.
fn citus_skipped(ctx: &Ctx) -> Tally {
    let (_, test) = CITUS_SUITES;
    let mut list = proc::cargo();
    list.current_dir(&ctx.root)
        .args(["test", "-q", "--workspace", "--test", test, "--"])
        .args(["--list", "--format", "terse"]);
    let shown = proc::display(&list);
    let listed = proc::capture(&mut list).ok_or(shown);
    let tally = citus_tally(listed);
    if let Some(note) = tally.notes.first() {
        proc::say(note);
    }
    tally
}

/// The Citus tally from the listing of [`CITUS_SUITES`]' tests, or from
/// the listing command that failed: then one counted failure, as the
/// skipped tests cannot be counted.
fn citus_tally(listed: Result<String, String>) -> Tally {
    let (package, test) = CITUS_SUITES;
    match listed {
        Ok(listed) => {
            let skipped = count_listed(&listed);
            Tally {
                skipped,
                notes: vec![format!(
                    "Citus: the {skipped} tests of {package}'s {test} were skipped: {CITUS_URL} is not set \
                     (to run them, see \"Testing against Citus\" in server-mock/README.md)"
                )],
                ..Tally::default()
            }
        }
        Err(shown) => Tally::broken(format!(
            "Citus: {CITUS_URL} is not set, so the tests of {package}'s {test} were to be \
             counted as skipped, but listing them failed (`{shown}`; run it to see why)"
        )),
    }
}

/// How many tests libtest's `--list --format terse` names (`NAME: test`).
fn count_listed(listed: &str) -> u64 {
    listed.lines().filter(|l| l.ends_with(": test")).count() as u64
}

/// The last line of `cargo xtask test`.
pub fn final_line(total: &Tally) -> String {
    let mut line = format!("{} passed, {} failed", total.passed, total.failed);
    if total.skipped > 0 {
        line.push_str(&format!(", {} skipped", total.skipped));
    }
    line
}

/// The per-runner table printed before the final line.
pub fn summary_table(results: &[(&str, Tally)]) -> String {
    let width = results
        .iter()
        .map(|(name, _)| name.len())
        .chain([6])
        .max()
        .unwrap_or(6);
    let mut out = format!(
        "{:<width$}  {:>7}  {:>7}  {:>7}  result\n",
        "runner", "passed", "failed", "skipped"
    );
    for (name, t) in results {
        let result = if t.failed > 0 { "FAILED" } else { "ok" };
        out.push_str(&format!(
            "{name:<width$}  {:>7}  {:>7}  {:>7}  {result}\n",
            t.passed, t.failed, t.skipped
        ));
    }
    for (name, tally) in results {
        for note in &tally.notes {
            out.push_str(&format!("  {name}: {note}\n"));
        }
    }
    out
}

/// `cargo xtask test [--only NAME[,NAME…]]`.
pub fn main(ctx: &Ctx, only: &[String]) -> Result<ExitCode, String> {
    crate::build::check_disk(ctx);
    let mut results = Vec::new();
    for runner in RUNNERS
        .iter()
        .filter(|r| only.is_empty() || only.iter().any(|o| o == r.name))
    {
        proc::say(&format!(
            "running the {} tests ({})",
            runner.name, runner.about
        ));
        let tally = (runner.run)(ctx)
            .unwrap_or_else(|reason| Tally::broken(format!("could not run: {reason}")));
        results.push((runner.name, tally));
    }
    let mut total = Tally::default();
    for (_, tally) in &results {
        total.add(tally);
    }
    proc::out(&format!(
        "\n{}{}\n",
        summary_table(&results),
        final_line(&total)
    ));
    Ok(if total.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tally::tests::tally;

    #[test]
    fn counts_the_tests_a_binary_lists() {
        let listed = "store_citus: skipped, LIKEKIT_TEST_CITUS_URL is not set\n\
                      a_large_seed_on_citus: test\n\
                      citus_store::counts_are_exact: test\n\
                      some_bench: benchmark\n";
        assert_eq!(count_listed(listed), 2);
        assert_eq!(count_listed(""), 0);
    }

    #[test]
    fn final_line_shows_skipped_only_when_some_were() {
        assert_eq!(final_line(&tally(12, 0, 0)), "12 passed, 0 failed");
        assert_eq!(
            final_line(&tally(12, 1, 3)),
            "12 passed, 1 failed, 3 skipped"
        );
    }

    #[test]
    fn table_lists_each_runner_and_its_notes() {
        let mut python = tally(3, 1, 0);
        python.notes.push("test_rollback failed".into());
        let table = summary_table(&[("rust", tally(120, 0, 2)), ("python", python)]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "runner   passed   failed  skipped  result");
        assert_eq!(lines[1], "rust        120        0        2  ok");
        assert_eq!(lines[2], "python        3        1        0  FAILED");
        assert_eq!(lines[3], "  python: test_rollback failed");
    }

    #[test]
    fn a_part_that_cannot_run_is_one_failure_and_the_rest_count() {
        let mut total = counted(Ok(tally(5, 0, 0)));
        total.add(&counted(Err("`cargo test --doc` could not start".into())));
        total.add(&counted(Ok(tally(2, 0, 1))));
        assert_eq!((total.passed, total.failed, total.skipped), (7, 1, 1));
        assert_eq!(total.notes, ["`cargo test --doc` could not start"]);
    }

    #[test]
    fn citus_tests_are_skipped_or_their_listing_fails() {
        let listed = citus_tally(Ok("a: test\nb: test\n".into()));
        assert_eq!((listed.failed, listed.skipped), (0, 2));
        assert!(listed.notes[0].starts_with("Citus: the 2 tests"));
        let failed = citus_tally(Err("cargo test -p likekit-server".into()));
        assert_eq!((failed.failed, failed.skipped), (1, 0));
        assert!(failed.notes[0].contains("listing them failed"));
    }

    #[test]
    fn runner_names_are_unique() {
        let mut names: Vec<&str> = RUNNERS.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RUNNERS.len());
    }
}
