//! The `rust` runner: `cargo test` over the whole workspace, then the doc
//! tests, counted from libtest's `test result:` lines.

use std::io::IsTerminal;

use crate::runner::{self, Counter, Tally};
use crate::{Ctx, install, proc};

/// The two cargo invocations: every target (unit, integration, examples and
/// benches in test mode), then doc tests, which `--all-targets` leaves out and
/// which cargo will not mix with other target flags.
const INVOCATIONS: [&[&str]; 2] = [
    &["test", "--workspace", "--all-targets", "--no-fail-fast"],
    &["test", "--workspace", "--doc", "--no-fail-fast"],
];

/// At most this many failing test names are listed per invocation.
const MAX_NAMED_FAILURES: usize = 20;

pub fn run(ctx: &Ctx) -> Result<Tally, String> {
    // The PostgreSQL store tests start their own throwaway cluster and need
    // PostgreSQL's server programs; without them those tests fail and say so.
    let postgres = install::postgres_bin()
        .map_err(|e| {
            println!("xtask: PostgreSQL is not available, so its store tests will fail: {e}")
        })
        .ok();
    let mut total = Tally::default();
    for args in INVOCATIONS {
        let mut cmd = proc::cargo();
        cmd.current_dir(&ctx.root).args(args);
        if let Some(dir) = &postgres {
            cmd.env("LIKEKIT_PG_BIN", dir);
        }
        if std::io::stdout().is_terminal() {
            cmd.arg("--color=always");
        }
        total.add(&runner::run_counted(cmd, CargoLog::default())?);
    }
    Ok(total)
}

/// Counts from one `test result:` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
}

/// Parses `test result: ok. 3 passed; 1 failed; 2 ignored; 0 measured; …`.
pub fn parse_result_line(line: &str) -> Option<Counts> {
    let rest = line.trim().strip_prefix("test result: ")?;
    let (_status, rest) = rest.split_once(". ")?;
    let mut counts = Counts::default();
    let mut seen = 0;
    for part in rest.split(';') {
        let mut words = part.split_whitespace();
        let (Some(number), Some(word)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(number) = number.parse::<u64>() else {
            continue;
        };
        match word {
            "passed" => counts.passed = number,
            "failed" => counts.failed = number,
            "ignored" => counts.ignored = number,
            _ => continue,
        }
        seen += 1;
    }
    (seen == 3).then_some(counts)
}

/// Reads cargo's merged output line by line and keeps the score.
#[derive(Debug, Default)]
pub struct CargoLog {
    tally: Tally,
    /// The test binary now running, for messages.
    current: Option<String>,
    /// Whether the current binary printed its `test result:` line.
    current_summarised: bool,
    named_failures: usize,
}

impl Counter for CargoLog {
    fn line(&mut self, line: &str) {
        let line = line.trim();
        if let Some(label) = running_label(line) {
            self.current = Some(label);
            self.current_summarised = false;
        } else if let Some(krate) = line.strip_prefix("Doc-tests ") {
            self.current = Some(format!("{krate} (doc tests)"));
            self.current_summarised = false;
        } else if let Some(counts) = parse_result_line(line) {
            self.tally.passed += counts.passed;
            self.tally.failed += counts.failed;
            self.tally.skipped += counts.ignored;
            self.current_summarised = true;
        } else if let Some(name) = failed_test_name(line) {
            self.named_failures += 1;
            if self.named_failures <= MAX_NAMED_FAILURES {
                let place = self.current.as_deref().unwrap_or("a test binary");
                self.tally.notes.push(format!("{place}: {name} failed"));
            }
        } else if let Some(rerun) = rerun_hint(line) {
            // The binary failed. If it never printed its summary it crashed
            // (abort, signal, a harness that exits early): one failure.
            if !self.current_summarised {
                let place = self.current.as_deref().unwrap_or("a test binary");
                self.tally.failed += 1;
                self.tally.notes.push(format!(
                    "{place} exited without a test summary (crashed?); rerun with `cargo test {rerun}`"
                ));
                self.current_summarised = true;
            }
        } else if let Some(what) = line.strip_prefix("error: could not compile ") {
            let what = what.split(" due to ").next().unwrap_or(what);
            self.tally.failed += 1;
            self.tally
                .notes
                .push(format!("build failed: could not compile {what}"));
        }
    }

    fn tally(mut self) -> Tally {
        if self.named_failures > MAX_NAMED_FAILURES {
            self.tally.notes.push(format!(
                "… and {} more failing tests",
                self.named_failures - MAX_NAMED_FAILURES
            ));
        }
        self.tally
    }
}

/// `Running unittests src/lib.rs (target/debug/deps/likekit_core-0f3a…)`
/// becomes `likekit_core (unittests src/lib.rs)`.
fn running_label(line: &str) -> Option<String> {
    let rest = line.strip_prefix("Running ")?;
    let (what, path) = rest.strip_suffix(')')?.rsplit_once(" (")?;
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let binary = match file.rsplit_once('-') {
        Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name,
        _ => file,
    };
    Some(format!("{binary} ({what})"))
}

/// `test tests::bad ... FAILED` gives `tests::bad`.
fn failed_test_name(line: &str) -> Option<&str> {
    line.strip_prefix("test ")?.strip_suffix(" ... FAILED")
}

/// `error: test failed, to rerun pass `-p a --lib`` gives `-p a --lib`.
fn rerun_hint(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix("error: test failed, to rerun pass ")
        .or_else(|| line.strip_prefix("error: doctest failed, to rerun pass "))
        .or_else(|| line.strip_prefix("error: bench failed, to rerun pass "))?;
    Some(rest.trim_matches('`'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finish(log: CargoLog, success: bool) -> Tally {
        runner::settle(
            log.tally(),
            success,
            "exit status: 101",
            "cargo test --workspace",
        )
    }

    fn feed(lines: &str) -> CargoLog {
        let mut log = CargoLog::default();
        for line in lines.lines() {
            log.line(line);
        }
        log
    }

    #[test]
    fn parses_result_lines() {
        assert_eq!(
            parse_result_line(
                "test result: ok. 12 passed; 0 failed; 3 ignored; 0 measured; 0 filtered out; finished in 0.01s"
            ),
            Some(Counts {
                passed: 12,
                failed: 0,
                ignored: 3
            })
        );
        assert_eq!(
            parse_result_line(
                "test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 5 filtered out; finished in 1.10s"
            ),
            Some(Counts {
                passed: 1,
                failed: 2,
                ignored: 0
            })
        );
        assert_eq!(parse_result_line("test tests::ok ... ok"), None);
        assert_eq!(parse_result_line("test result: ok."), None);
        assert_eq!(parse_result_line("running 3 tests"), None);
    }

    #[test]
    fn sums_every_binary_and_names_failures() {
        let log = feed(
            "   Compiling a v0.1.0 (/ws/a)
     Running unittests src/lib.rs (target/debug/deps/a-3110576fc3c3c96d)

running 3 tests
test tests::ign ... ignored
test tests::ok ... ok
test tests::bad ... FAILED

failures:
    tests::bad

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.11s

error: test failed, to rerun pass `-p a --lib`
     Running unittests src/lib.rs (target/debug/deps/b-d297d743c1d6421f)

running 1 test
test fine ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
",
        );
        let tally = finish(log, false);
        assert_eq!((tally.passed, tally.failed, tally.skipped), (2, 1, 1));
        assert_eq!(tally.notes, ["a (unittests src/lib.rs): tests::bad failed"]);
    }

    #[test]
    fn a_crashed_binary_counts_as_a_failure() {
        let log = feed(
            "     Running tests/crash.rs (target/debug/deps/crash-8d3f5b302eaad4a8)

running 1 test
error: test failed, to rerun pass `-p b --test crash`

Caused by:
  process didn't exit successfully: `/ws/target/debug/deps/crash-8d3f5b302eaad4a8` (signal: 6, SIGABRT: process abort signal)
error: 1 target failed:
    `-p b --test crash`
",
        );
        let tally = finish(log, false);
        assert_eq!((tally.passed, tally.failed), (0, 1));
        assert_eq!(
            tally.notes,
            [
                "crash (tests/crash.rs) exited without a test summary (crashed?); rerun with `cargo test -p b --test crash`"
            ]
        );
    }

    #[test]
    fn a_build_failure_counts_as_a_failure() {
        let log = feed(
            "error[E0308]: mismatched types
error: could not compile `b` (test \"crash\") due to 1 previous error
warning: build failed, waiting for other jobs to finish...
",
        );
        let tally = finish(log, false);
        assert_eq!(tally.failed, 1);
        assert_eq!(
            tally.notes,
            ["build failed: could not compile `b` (test \"crash\")"]
        );
    }

    #[test]
    fn doc_test_failures_are_counted_once() {
        let log = feed(
            "   Doc-tests a

running 1 test
test a/src/lib.rs - f (line 1) ... FAILED

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s

error: doctest failed, to rerun pass `-p a --doc`
",
        );
        let tally = finish(log, false);
        assert_eq!((tally.passed, tally.failed), (0, 1));
        assert_eq!(
            tally.notes,
            ["a (doc tests): a/src/lib.rs - f (line 1) failed"]
        );
    }

    #[test]
    fn an_unexplained_failed_exit_is_a_failure() {
        let tally = finish(feed("error: failed to load manifest\n"), false);
        assert_eq!(tally.failed, 1);
        assert!(tally.notes[0].contains("`cargo test --workspace` failed (exit status: 101)"));
    }

    #[test]
    fn a_clean_run_has_no_notes() {
        let log = feed(
            "test result: ok. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
        );
        let tally = finish(log, true);
        assert_eq!((tally.passed, tally.failed, tally.skipped), (4, 0, 0));
        assert!(tally.notes.is_empty());
    }

    #[test]
    fn labels_test_binaries() {
        assert_eq!(
            running_label("Running unittests src/lib.rs (target/debug/deps/likekit_core-0f3a9b)"),
            Some("likekit_core (unittests src/lib.rs)".to_owned())
        );
        assert_eq!(
            running_label("Running benches/machine.rs (target/debug/deps/machine-12ab)"),
            Some("machine (benches/machine.rs)".to_owned())
        );
        assert_eq!(running_label("Running `target/debug/xtask`"), None);
    }
}
