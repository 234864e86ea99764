//! `cargo xtask`: LikeKit's one build entry point. See `cargo xtask help`.

mod bench;
mod cargo_test;
mod demo;
mod doctor;
mod install;
mod json;
mod pg_cluster;
mod proc;
mod runner;
mod select;
mod server;
mod server_bench;
mod uniffi;
mod web;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where things are.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The workspace root.
    pub root: PathBuf,
    /// Cargo's target directory.
    pub target_dir: PathBuf,
}

impl Ctx {
    fn new() -> Ctx {
        let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = manifest_dir.parent().unwrap_or(manifest_dir).to_path_buf();
        let target_dir = match std::env::var_os("CARGO_TARGET_DIR") {
            Some(dir) => root.join(dir),
            None => root.join("target"),
        };
        Ctx { root, target_dir }
    }

    /// Project-local tools (gitignored).
    pub fn tools(&self) -> PathBuf {
        self.root.join(".tools")
    }
}

fn usage() -> String {
    let runners: Vec<&str> = runner::RUNNERS.iter().map(|r| r.name).collect();
    let suites: Vec<&str> = bench::SUITES.iter().map(|s| s.name).collect();
    format!(
        "\
cargo xtask — build, test, bench and demo LikeKit

usage: cargo xtask <command> [options]

commands:
  test [--only NAME[,NAME…]]    run every test suite and end with one line
                                `N passed, N failed[, N skipped]`; exits non-zero
                                on any failure. Suites: {runners}
  bench [--only NAME[,NAME…]]   run the benchmarks and write bench/REPORT.md
                                (what, figure, ratio, target, pass/short).
                                Suites: {suites}
  demo [--listen HOST:PORT]     build the web package, start the reference server
                                with the demo data and the demo page, and print
                                the page's URL
  bindings [--release]          build the library and generate the Kotlin, Swift
                                and Python bindings into bindings/uniffi/generated,
                                and the web package into bindings/wasm/pkg
  doctor [--install [TOOL…]]    show which tools are installed and which are
                                missing; --install installs the missing ones
                                (or only the named ones)
  help                          show this text

Commands install what they need (rustup targets, pinned cargo tools, Debian
packages, npm and PyPI packages under .tools/) and say what they install.
",
        runners = runners.join(", "),
        suites = suites.join(", ")
    )
}

fn bindings(ctx: &Ctx, args: &[String]) -> Result<ExitCode, String> {
    let release = match args {
        [] => false,
        [flag] if flag == "--release" => true,
        _ => {
            return Err(format!(
                "`cargo xtask bindings` takes only `--release` (got `{}`)",
                args.join(" ")
            ));
        }
    };
    uniffi::bindings(ctx, release)?;
    web::bindings(ctx)?;
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ctx = Ctx::new();
    let (command, rest) = match args.split_first() {
        Some((command, rest)) => (command.as_str(), rest),
        None => ("help", &[][..]),
    };
    let wants_help = rest.iter().any(|a| a == "-h" || a == "--help");
    let result = match command {
        _ if wants_help => {
            print!("{}", usage());
            Ok(ExitCode::SUCCESS)
        }
        "test" => runner::main(&ctx, rest),
        "bench" => bench::main(&ctx, rest),
        "demo" => demo::main(&ctx, rest),
        "bindings" => bindings(&ctx, rest),
        "doctor" => doctor::main(&ctx, rest),
        "help" | "-h" | "--help" => {
            print!("{}", usage());
            Ok(ExitCode::SUCCESS)
        }
        other => Err(format!(
            "unknown command `{other}`\n\n{}",
            usage().trim_end()
        )),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
