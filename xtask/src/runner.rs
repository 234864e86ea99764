//! `cargo xtask test`: every test suite the project has, one runner each,
//! summed into one final line `N passed, N failed[, N skipped]`.
//!
//! To add a suite (Kotlin, Python, Node, browser…), write a function
//! `fn(&Ctx) -> Result<Tally, String>` that installs what it needs (see
//! `install`), runs the suite and counts its results, then add one entry to
//! [`RUNNERS`]. Return `Err` only when the suite could not run at all; that
//! counts as one failure with the message shown. For a suite that is one
//! command, implement [`Counter`] for its output (pytest's
//! `N passed, N failed` line, node's `# pass N` lines…) and call
//! [`run_counted`]: it streams the output and turns a failed exit that
//! reported no failing test into a counted failure.

use std::process::{Command, ExitCode};

use crate::{Ctx, cargo_test, proc, select, uniffi, web};

/// A test suite that `cargo xtask test` runs.
#[derive(Debug)]
pub struct Runner {
    /// Short name for `--only` and the summary table.
    pub name: &'static str,
    /// What it runs, for the usage text.
    pub about: &'static str,
    /// Runs the suite and counts its results.
    pub run: fn(&Ctx) -> Result<Tally, String>,
}

/// Every runner, in the order they run.
pub const RUNNERS: &[Runner] = &[
    Runner {
        name: "rust",
        about: "cargo test --workspace --all-targets --no-fail-fast, then the doc tests",
        run: cargo_test::run,
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
        about: "the demo page in headless Chromium (playwright-core)",
        run: web::run_browser,
    },
];

/// Results of one runner (or of all of them, summed).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tally {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    /// What failed or was skipped and why, one line each, for the summary.
    pub notes: Vec<String>,
}

impl Tally {
    /// Adds another tally's counts and notes to this one.
    pub fn add(&mut self, other: &Tally) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.skipped += other.skipped;
        self.notes.extend(other.notes.iter().cloned());
    }

    /// A failure that produced no test results, such as a suite that did not
    /// build or a tool that is missing.
    pub fn broken(note: String) -> Tally {
        Tally {
            failed: 1,
            notes: vec![note],
            ..Tally::default()
        }
    }
}

/// Counts results from a test command's output, one line at a time (colour
/// codes already removed).
pub trait Counter {
    fn line(&mut self, line: &str);
    /// The counts once the command has exited.
    fn tally(self) -> Tally;
}

/// Runs one test command with its output streamed to the terminal and
/// counted by `counter`. A command that fails without reporting a failure
/// (it crashed, or did not build) counts as one failure.
pub fn run_counted(cmd: Command, mut counter: impl Counter) -> Result<Tally, String> {
    let shown = proc::display(&cmd);
    println!("xtask: {shown}");
    let status = proc::stream(cmd, |line| counter.line(line))?;
    Ok(settle(
        counter.tally(),
        status.success(),
        &status.to_string(),
        &shown,
    ))
}

/// Makes sure a failed exit is never a silent pass.
pub fn settle(mut tally: Tally, success: bool, status: &str, command: &str) -> Tally {
    if !success && tally.failed == 0 {
        tally.failed += 1;
        tally.notes.push(format!(
            "`{command}` failed ({status}) without reporting a failing test; see its output above"
        ));
    }
    tally
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
        .chain(["runner".len()])
        .max()
        .unwrap_or(6);
    let mut out = format!(
        "{:<width$}  {:>7}  {:>7}  {:>7}  result\n",
        "runner", "passed", "failed", "skipped"
    );
    for (name, tally) in results {
        let result = if tally.failed > 0 { "FAILED" } else { "ok" };
        out.push_str(&format!(
            "{name:<width$}  {:>7}  {:>7}  {:>7}  {result}\n",
            tally.passed, tally.failed, tally.skipped
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
pub fn main(ctx: &Ctx, args: &[String]) -> Result<ExitCode, String> {
    let names: Vec<&str> = RUNNERS.iter().map(|r| r.name).collect();
    let chosen = select::parse_only(args, &names, "test")?;

    let mut results = Vec::new();
    for runner in RUNNERS.iter().filter(|r| chosen.contains(&r.name)) {
        println!(
            "xtask: running the {} tests ({})",
            runner.name, runner.about
        );
        let tally = (runner.run)(ctx)
            .unwrap_or_else(|reason| Tally::broken(format!("could not run: {reason}")));
        results.push((runner.name, tally));
    }

    let mut total = Tally::default();
    for (_, tally) in &results {
        total.add(tally);
    }
    println!();
    print!("{}", summary_table(&results));
    println!("{}", final_line(&total));
    Ok(if total.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(passed: u64, failed: u64, skipped: u64) -> Tally {
        Tally {
            passed,
            failed,
            skipped,
            notes: Vec::new(),
        }
    }

    #[test]
    fn final_line_shows_skipped_only_when_some_were() {
        assert_eq!(final_line(&tally(12, 0, 0)), "12 passed, 0 failed");
        assert_eq!(
            final_line(&tally(12, 1, 3)),
            "12 passed, 1 failed, 3 skipped"
        );
        assert_eq!(final_line(&Tally::default()), "0 passed, 0 failed");
    }

    #[test]
    fn totals_sum_every_runner() {
        let mut total = Tally::default();
        total.add(&tally(10, 0, 2));
        total.add(&Tally::broken("kotlin: kotlinc is missing".into()));
        total.add(&tally(5, 2, 0));
        assert_eq!((total.passed, total.failed, total.skipped), (15, 3, 2));
        assert_eq!(total.notes, ["kotlin: kotlinc is missing"]);
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
    fn a_failed_exit_is_never_a_pass() {
        let settled = settle(
            tally(3, 0, 0),
            false,
            "exit status: 2",
            "pytest tests/python",
        );
        assert_eq!((settled.passed, settled.failed), (3, 1));
        assert_eq!(
            settled.notes,
            [
                "`pytest tests/python` failed (exit status: 2) without reporting a failing test; see its output above"
            ]
        );
        assert_eq!(
            settle(tally(3, 1, 0), false, "exit status: 1", "x").failed,
            1
        );
        assert_eq!(
            settle(tally(3, 0, 0), true, "exit status: 0", "x").failed,
            0
        );
    }

    #[test]
    fn runner_names_are_unique() {
        let mut names: Vec<&str> = RUNNERS.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RUNNERS.len());
    }
}
