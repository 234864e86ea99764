//! `cargo xtask fuzz [TARGET] [--seconds N]`: one fuzz target of `fuzz/`
//! (a cargo-fuzz project, a workspace of its own) run under libFuzzer for
//! N seconds.
//!
//! A stable toolchain is enough: the `-Z` flags cargo-fuzz passes are let
//! through with `RUSTC_BOOTSTRAP=1`, for this build alone, which goes to a
//! target folder of its own (`target/fuzz`). The targets are built with
//! debug assertions and overflow checks and without a sanitizer: LikeKit's
//! crates deny `unsafe`, so AddressSanitizer (which works here too) would
//! add little to what a panic already shows, at a seventh of the speed
//! (about 70,000 executions a second against 480,000 on 2 cores).
//!
//! libFuzzer starts from the seeds in `fuzz/corpus/<target>/` and writes
//! the inputs it finds into `target/fuzz/corpus/<target>/` (kept from run
//! to run), so a run changes nothing in the checkout but a crashing input,
//! saved in `fuzz/artifacts/<target>/` (gitignored); then the command
//! says where and exits non-zero.
//!
//! The `fuzz` runner of `cargo xtask test` ([`run_seeds`]) builds every
//! target the same way and runs each once on each of its committed seeds:
//! the seeds are the targets' regression tests (a crash found becomes one),
//! and the run keeps the targets building as the crates they call change.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use crate::proc::say;
use crate::tally::Tally;
use crate::{Ctx, install, proc};

/// The target run when none is named.
pub const DEFAULT_TARGET: &str = "journal_decode";
/// How long a run lasts when not told.
pub const DEFAULT_SECONDS: u64 = 60;
/// libFuzzer's limit for one input: a decoder that takes this long on a
/// few kilobytes hangs, and the input is saved as a `timeout-…` artifact.
const INPUT_TIMEOUT_SECONDS: u64 = 10;

/// The fuzz targets: the files of `fuzz/fuzz_targets/`, without `.rs`.
fn targets(fuzz_dir: &Path) -> Result<Vec<String>, String> {
    let dir = fuzz_dir.join("fuzz_targets");
    let entries = std::fs::read_dir(&dir).map_err(|e| proc::io_error("read", &dir, e))?;
    let mut names: Vec<String> = entries
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let is_rust = path.extension()? == "rs";
            is_rust.then(|| path.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    names.sort();
    Ok(names)
}

/// `cargo fuzz ACTION` as every build of the targets runs it: stable Rust
/// with `RUSTC_BOOTSTRAP=1`, no sanitizer, debug assertions, into
/// `target/fuzz`.
fn fuzz_command(ctx: &Ctx, cargo_fuzz: &Path, action: &str) -> Command {
    let mut cmd = Command::new(cargo_fuzz);
    cmd.current_dir(&ctx.root)
        .env("RUSTC_BOOTSTRAP", "1")
        .args(["fuzz", action, "--fuzz-dir", "fuzz"])
        .args(["--sanitizer", "none", "--debug-assertions"])
        .arg("--target-dir")
        .arg(ctx.target_dir.join("fuzz"));
    cmd
}

/// The triple cargo-fuzz builds for when not told: this machine's, as
/// `rustc -vV` names it.
fn host_triple() -> Result<String, String> {
    let mut cmd = Command::new("rustc");
    cmd.arg("-vV");
    let said = proc::capture(&mut cmd).ok_or("`rustc -vV` failed")?;
    said.lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| format!("`rustc -vV` names no host: {said}"))
}

/// The committed seeds of `target`, sorted.
fn seeds(fuzz_dir: &Path, target: &str) -> Result<Vec<PathBuf>, String> {
    let dir = fuzz_dir.join("corpus").join(target);
    let entries = std::fs::read_dir(&dir).map_err(|e| proc::io_error("read", &dir, e))?;
    let mut seeds: Vec<PathBuf> = entries
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.is_file())
        .collect();
    seeds.sort();
    Ok(seeds)
}

/// The `fuzz` runner: every target built as `cargo xtask fuzz` builds it,
/// then run once on each seed of `fuzz/corpus/<target>/` (libFuzzer runs
/// the inputs it is given as files once each, and fuzzes nothing). One
/// test per seed, one process per seed: it passes when the target exits
/// cleanly, and a failure (a panic, or an input that takes longer than
/// [`INPUT_TIMEOUT_SECONDS`]) names the target and the seed.
pub fn run_seeds(ctx: &Ctx) -> Result<Tally, String> {
    let fuzz_dir = ctx.root.join("fuzz");
    let cargo_fuzz = install::cargo_tool(ctx, install::CARGO_FUZZ)?;
    say("building the fuzz targets (cargo fuzz build, into target/fuzz)…");
    proc::run(&mut fuzz_command(ctx, &cargo_fuzz, "build"))?;
    let bin_dir = ctx
        .target_dir
        .join("fuzz")
        .join(host_triple()?)
        .join("release");
    let artifacts = ctx.target_dir.join("fuzz").join("seed-artifacts");
    proc::mkdir(&artifacts)?;
    let mut tally = Tally::default();
    for target in targets(&fuzz_dir)? {
        let bin = bin_dir.join(&target);
        let seeds = seeds(&fuzz_dir, &target)?;
        if seeds.is_empty() {
            tally.failed += 1;
            tally
                .notes
                .push(format!("{target} has no seed in fuzz/corpus/{target}/"));
            continue;
        }
        for seed in &seeds {
            // A crash's copy of the input goes under target/, not into the
            // checkout (the seed itself is already there).
            let mut cmd = Command::new(&bin);
            cmd.arg(format!("-artifact_prefix={}/", artifacts.display()))
                .arg(format!("-timeout={INPUT_TIMEOUT_SECONDS}"))
                .arg(seed);
            let out = cmd.output().map_err(|e| proc::spawn_error(&cmd, &e))?;
            if out.status.success() {
                tally.passed += 1;
            } else {
                tally.failed += 1;
                let said = String::from_utf8_lossy(&out.stderr);
                eprintln!("{said}");
                tally.notes.push(format!(
                    "{target} failed on its seed {}: {}",
                    shown(ctx, &seed.display().to_string()),
                    panic_message(&said).unwrap_or_else(|| out.status.to_string())
                ));
            }
        }
        say(&format!("fuzz: {target}: {} seeds run", seeds.len()));
    }
    Ok(tally)
}

/// The message of the first panic in a target's output: the line after
/// `thread '…' panicked at FILE:LINE:COLUMN:`.
fn panic_message(said: &str) -> Option<String> {
    let mut lines = said.lines();
    lines.find(|line| line.contains(" panicked at "))?;
    lines.next().map(|line| line.trim().to_owned())
}

/// `cargo fuzz run` for `target`, with libFuzzer's `options`, reading
/// `inputs` (corpus folders, or one input to run once).
fn cargo_fuzz_run(
    ctx: &Ctx,
    cargo_fuzz: &Path,
    target: &str,
    inputs: &[PathBuf],
    options: &[String],
) -> Command {
    let mut cmd = fuzz_command(ctx, cargo_fuzz, "run");
    cmd.arg(target).args(inputs);
    if !options.is_empty() {
        cmd.arg("--").args(options);
    }
    cmd
}

/// What libFuzzer said about a run.
#[derive(Debug, Default, PartialEq, Eq)]
struct Run {
    /// The last status line's `cov: … ft: … corp: …`, as printed.
    status: Option<String>,
    /// `Done N runs in S second(s)`.
    done: Option<String>,
    /// Where a crashing (or hanging) input was written.
    artifact: Option<String>,
}

impl Run {
    fn read(&mut self, line: &str) {
        if let Some(at) = line.find("cov: ") {
            let status = &line[at..];
            let end = status.find(" exec/s").unwrap_or(status.len());
            self.status = Some(status[..end].trim_end().to_owned());
        } else if line.starts_with("Done ") && line.contains(" runs in ") {
            self.done = Some(line["Done ".len()..].to_owned());
        } else if let Some((_, path)) = line.split_once("Test unit written to ") {
            self.artifact = Some(path.trim().to_owned());
        }
    }
}

/// `path` relative to the checkout when it is inside it.
fn shown(ctx: &Ctx, path: &str) -> String {
    let path = Path::new(path);
    path.strip_prefix(&ctx.root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// `cargo xtask fuzz [TARGET] [--seconds N]`.
pub fn main(ctx: &Ctx, target: &str, seconds: u64) -> Result<ExitCode, String> {
    let fuzz_dir = ctx.root.join("fuzz");
    let known = targets(&fuzz_dir)?;
    if !known.iter().any(|name| name == target) {
        return Err(format!(
            "no fuzz target `{target}`; fuzz/fuzz_targets/ has: {}",
            known.join(", ")
        ));
    }
    let cargo_fuzz = install::cargo_tool(ctx, install::CARGO_FUZZ)?;
    let found = ctx.target_dir.join("fuzz").join("corpus").join(target);
    proc::mkdir(&found)?;
    let seeds = fuzz_dir.join("corpus").join(target);
    let options = [
        format!("-max_total_time={seconds}"),
        format!("-timeout={INPUT_TIMEOUT_SECONDS}"),
        "-print_final_stats=1".to_owned(),
    ];
    let cmd = cargo_fuzz_run(ctx, &cargo_fuzz, target, &[found.clone(), seeds], &options);
    say(&format!(
        "fuzzing {target} for {seconds} s (builds it first; new inputs go to {})…",
        shown(ctx, &found.display().to_string())
    ));
    let mut run = Run::default();
    let status = proc::stream(&cmd, |line| run.read(line))?;

    if status.success() {
        say(&format!(
            "{target}: no crash; {}; {}",
            run.done.as_deref().unwrap_or("runs not reported"),
            run.status.as_deref().unwrap_or("no coverage reported"),
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let Some(artifact) = run.artifact else {
        return Err(format!("`{}` failed ({status})", proc::display(&cmd)));
    };
    let again = cargo_fuzz_run(ctx, &cargo_fuzz, target, &[PathBuf::from(&artifact)], &[]);
    eprintln!(
        "\nxtask: {target} failed on an input, saved as {}\nxtask: run it again with: RUSTC_BOOTSTRAP=1 {}",
        shown(ctx, &artifact),
        proc::display(&again)
    );
    Ok(ExitCode::FAILURE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_libfuzzer_figures_and_artifacts() {
        let mut run = Run::default();
        for line in [
            "INFO: seed corpus: files: 9 min: 41b max: 226b total: 950b rss: 26Mb",
            "#10\tINITED cov: 327 ft: 567 corp: 9/950b exec/s: 0 rss: 27Mb",
            "#2097152\tpulse  cov: 402 ft: 1210 corp: 160/9Kb lim: 4096 exec/s: 69905 rss: 410Mb",
            "#2100000\tDONE   cov: 402 ft: 1211 corp: 161/9Kb lim: 4096 exec/s: 70000 rss: 410Mb",
            "Done 2100000 runs in 31 second(s)",
        ] {
            run.read(line);
        }
        assert_eq!(
            run,
            Run {
                status: Some("cov: 402 ft: 1211 corp: 161/9Kb lim: 4096".to_owned()),
                done: Some("2100000 runs in 31 second(s)".to_owned()),
                artifact: None,
            }
        );
        run.read("artifact_prefix='/x/fuzz/artifacts/journal_decode/'; Test unit written to /x/fuzz/artifacts/journal_decode/crash-da39a3ee");
        assert_eq!(
            run.artifact.as_deref(),
            Some("/x/fuzz/artifacts/journal_decode/crash-da39a3ee")
        );
    }

    #[test]
    fn every_target_has_seeds() {
        let fuzz_dir = Ctx::new().root.join("fuzz");
        let known = targets(&fuzz_dir).expect("fuzz/fuzz_targets is there");
        assert!(known.len() > 1, "{known:?}");
        for target in known {
            let seeds = seeds(&fuzz_dir, &target).expect("a corpus folder per target");
            assert!(!seeds.is_empty(), "{target} has no seed");
            assert!(seeds.is_sorted(), "{target}: {seeds:?}");
        }
    }

    #[test]
    fn names_the_panic() {
        let said = "INFO: Running with entropic power schedule\n\
                    Running: fuzz/corpus/t/a.seed\n\
                    \n\
                    thread '<unnamed>' (42) panicked at fuzz_targets/t.rs:4:26:\n\
                    a token that is not the valid one signs in\n\
                    stack backtrace:\n";
        assert_eq!(
            panic_message(said).as_deref(),
            Some("a token that is not the valid one signs in")
        );
        assert_eq!(panic_message("Executed a.seed in 0 ms\n"), None);
    }

    #[test]
    fn the_default_target_exists() {
        let ctx = Ctx::new();
        let known = targets(&ctx.root.join("fuzz")).expect("fuzz/fuzz_targets is there");
        assert!(known.iter().any(|name| name == DEFAULT_TARGET), "{known:?}");
    }
}
