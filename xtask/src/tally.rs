//! What a test runner counts: passed, failed and skipped tests, read from
//! a JUnit XML report ([`run_junit`]) or from libtest's summary lines
//! ([`run_libtest`]). Every runner module returns a [`Tally`]; the runner
//! table (`runner.rs`) sums them into the final line.

use std::path::Path;
use std::process::Command;

use crate::proc;

/// Results of one runner (or of all of them, summed).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tally {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    /// What failed or was skipped and why, one line each, for the summary.
    pub notes: Vec<String>,
}

/// At most this many failing tests are named per suite.
const MAX_NAMED: usize = 20;

impl Tally {
    /// Adds another tally's counts and notes to this one.
    pub fn add(&mut self, other: &Tally) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.skipped += other.skipped;
        self.notes.extend(other.notes.iter().cloned());
    }

    /// A failure that produced no test results.
    pub fn broken(note: String) -> Tally {
        Tally {
            failed: 1,
            notes: vec![note],
            ..Tally::default()
        }
    }

    /// Names a failing test (the first [`MAX_NAMED`] of them).
    fn name_failure(&mut self, name: String) {
        if self.notes.len() < MAX_NAMED {
            self.notes.push(format!("{name} failed"));
        }
    }

    /// Makes sure a failed exit is never a silent pass.
    pub fn settle(mut self, success: bool, command: &str) -> Tally {
        if !success && self.failed == 0 {
            self.failed += 1;
            self.notes.push(format!(
                "`{command}` failed without reporting a failing test; see its output above"
            ));
        }
        self
    }

    /// Counts libtest's `test result: ok. 3 passed; 1 failed; 2 ignored; …`
    /// and `test NAME ... FAILED` lines (the doc tests, the wasm tests).
    pub fn libtest_line(&mut self, line: &str) {
        let line = line.trim();
        if let Some(name) = line
            .strip_prefix("test ")
            .and_then(|l| l.strip_suffix(" ... FAILED"))
        {
            self.name_failure(name.to_owned());
        }
        let Some((_, counts)) = line
            .strip_prefix("test result: ")
            .and_then(|r| r.split_once(". "))
        else {
            return;
        };
        for part in counts.split(';') {
            let (n, word) = part.trim().split_once(' ').unwrap_or_default();
            let n = n.parse::<u64>().unwrap_or(0);
            match word {
                "passed" => self.passed += n,
                "failed" => self.failed += n,
                "ignored" => self.skipped += n,
                _ => {}
            }
        }
    }
}

/// Counts the test cases of a JUnit XML report: a case with a `failure` or
/// `error` child failed, one with `skipped` was skipped, the rest passed.
pub fn junit_tally(xml: &str) -> Result<Tally, String> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| format!("not JUnit XML: {e}"))?;
    let mut tally = Tally::default();
    for case in doc.descendants().filter(|n| n.has_tag_name("testcase")) {
        let has = |tag: &str| case.children().any(|c| c.has_tag_name(tag));
        if has("failure") || has("error") {
            tally.failed += 1;
            let class = case.attribute("classname").unwrap_or_default();
            let name = case.attribute("name").unwrap_or_default();
            tally.name_failure(format!("{class} {name}").trim().to_owned());
        } else if has("skipped") {
            tally.skipped += 1;
        } else {
            tally.passed += 1;
        }
    }
    Ok(tally)
}

/// Runs a test command that writes a JUnit report to `report`, with its
/// output streamed, and counts the report.
pub fn run_junit(cmd: &Command, report: &Path) -> Result<Tally, String> {
    let _ = std::fs::remove_file(report);
    let shown = proc::display(cmd);
    proc::say(&shown);
    let status = proc::stream(cmd, |_| {})?;
    let tally = match std::fs::read_to_string(report) {
        Ok(xml) => junit_tally(&xml).unwrap_or_else(|e| {
            Tally::broken(format!(
                "`{shown}` wrote a report that cannot be counted ({}: {e}); see its output above",
                report.display()
            ))
        }),
        Err(_) => Tally::broken(format!(
            "`{shown}` wrote no report ({}); see its output above",
            report.display()
        )),
    };
    Ok(tally.settle(status.success(), &shown))
}

/// Runs a command whose test binaries print libtest's summary lines.
pub fn run_libtest(cmd: &Command) -> Result<Tally, String> {
    let shown = proc::display(cmd);
    proc::say(&shown);
    let mut tally = Tally::default();
    let status = proc::stream(cmd, |line| tally.libtest_line(line))?;
    Ok(tally.settle(status.success(), &shown))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A tally of these counts, with no notes.
    pub(crate) fn tally(passed: u64, failed: u64, skipped: u64) -> Tally {
        Tally {
            passed,
            failed,
            skipped,
            notes: Vec::new(),
        }
    }

    #[test]
    fn a_failed_exit_is_never_a_pass() {
        let settled = tally(3, 0, 0).settle(false, "pytest tests/python");
        assert_eq!((settled.passed, settled.failed), (3, 1));
        assert_eq!(tally(3, 1, 0).settle(false, "x").failed, 1);
        assert_eq!(tally(3, 0, 0).settle(true, "x").failed, 0);
    }

    #[test]
    fn counts_junit_reports() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="xtask" tests="4" failures="1" errors="1">
  <testsuite name="likekit-core::machine" tests="4">
    <testcase name="tap_is_instant" classname="likekit-core::machine" time="0.01"/>
    <testcase name="rollback" classname="likekit-core::machine"><failure type="test failure">boom</failure></testcase>
    <testcase name="crash" classname="likekit-server::crash"><error message="SIGABRT"/></testcase>
    <testcase name="later" classname="likekit-core::machine"><skipped/></testcase>
  </testsuite>
</testsuites>"#;
        let t = junit_tally(xml).expect("parses");
        assert_eq!((t.passed, t.failed, t.skipped), (1, 2, 1));
        assert_eq!(
            t.notes,
            [
                "likekit-core::machine rollback failed",
                "likekit-server::crash crash failed"
            ]
        );
        assert!(junit_tally("not xml").is_err());
    }

    #[test]
    fn counts_libtest_summaries() {
        let mut log = Tally::default();
        for line in [
            "test a/src/lib.rs - f (line 1) ... FAILED",
            "test result: FAILED. 1 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out; finished in 0.10s",
            "test result: ok. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
            "running 3 tests",
        ] {
            log.libtest_line(line);
        }
        assert_eq!((log.passed, log.failed, log.skipped), (5, 1, 2));
        assert_eq!(log.notes, ["a/src/lib.rs - f (line 1) failed"]);
    }

    #[test]
    fn an_unreadable_report_is_a_counted_failure() {
        let dir = std::env::temp_dir().join(format!("xtask-junit-{}", std::process::id()));
        proc::mkdir(&dir).expect("temp dir");
        let report = dir.join("junit.xml");
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("echo 'not xml' > '{}'", report.display()));
        let tally = run_junit(&cmd, &report).expect("sh runs");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!((tally.passed, tally.failed), (0, 1));
        assert!(
            tally.notes[0].contains("cannot be counted"),
            "{:?}",
            tally.notes
        );
    }
}
