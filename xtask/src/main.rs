//! `cargo xtask`: LikeKit's one build entry point. See `cargo xtask help`.

mod bench;
mod bench_web;
mod build;
mod demo;
mod doc_names;
mod doctor;
mod figures;
mod fuzz;
mod install;
mod openapi;
mod proc;
mod react;
mod runner;
mod server;
mod tally;
mod typescript;
mod uniffi;
mod web;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

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

    /// The conformance scenarios every binding's runner replays; passed to
    /// the test programs as `LIKEKIT_CONFORMANCE`.
    pub fn conformance_scenarios(&self) -> PathBuf {
        self.root
            .join("sdk-core")
            .join("conformance")
            .join("scenarios.json")
    }

    /// Project-local tools (gitignored).
    pub fn tools(&self) -> PathBuf {
        self.root.join(".tools")
    }
}

/// cargo xtask — build, test, bench and demo LikeKit.
///
/// Commands install what they need (rustup targets, pinned cargo tools,
/// Debian packages, npm and PyPI packages under .tools/) and say what they
/// install.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run every test suite and end with one line `N passed, N failed[, N
    /// skipped]`; exits non-zero on any failure.
    Test {
        /// Only these runners: rust, fuzz, kotlin, python, swift, wasm, node,
        /// browser, typescript, openapi, react.
        #[arg(long, value_delimiter = ',', value_parser = runner::names())]
        only: Vec<String>,
    },
    /// Run the benchmarks and write bench/REPORT.md (what, figure, ratio,
    /// target, pass/short).
    Bench {
        /// Only these suites: machine, client, kotlin, wasm, server, citus, web.
        #[arg(long, value_delimiter = ',', value_parser = bench::names())]
        only: Vec<String>,
    },
    /// Build the web package, start the reference server with the demo data
    /// and the demo page, and print the page's URL.
    Demo {
        /// Where the server listens (default 127.0.0.1:8787 when free, else
        /// any free port).
        #[arg(long, value_name = "HOST:PORT")]
        listen: Option<String>,
    },
    /// Build the library and generate the Kotlin, Swift and Python bindings
    /// into bindings/uniffi/generated, and the web package into
    /// bindings/wasm/pkg.
    Bindings {
        /// Build the library with the release profile (for shipping).
        #[arg(long)]
        release: bool,
        /// Only these: uniffi (the library and its Kotlin, Swift and Python
        /// bindings), web (the web package). Both when not given.
        #[arg(long, value_delimiter = ',', value_parser = BINDINGS)]
        only: Vec<String>,
    },
    /// Run a fuzz target of fuzz/ under libFuzzer for a while; exits
    /// non-zero on a crash and says where the input was saved.
    Fuzz {
        /// The target: a file of fuzz/fuzz_targets/, without `.rs`.
        #[arg(default_value = fuzz::DEFAULT_TARGET)]
        target: String,
        /// How long to fuzz, in seconds.
        #[arg(long, default_value_t = fuzz::DEFAULT_SECONDS, value_parser = clap::value_parser!(u64).range(1..))]
        seconds: u64,
    },
    /// Show which tools are installed and which are missing; --install
    /// installs the missing ones (or only the named ones).
    Doctor {
        #[arg(long, num_args = 0.., value_name = "TOOL", value_parser = doctor::names())]
        install: Option<Vec<String>>,
    },
}

/// What `cargo xtask bindings --only` can name.
const BINDINGS: [&str; 2] = ["uniffi", "web"];

/// Whether `cargo xtask bindings` builds `name` (one of [`BINDINGS`]):
/// every one when `--only` names none.
fn builds(only: &[String], name: &str) -> bool {
    only.is_empty() || only.iter().any(|o| o == name)
}

/// `cargo xtask bindings [--release] [--only uniffi,web]`.
fn bindings(ctx: &Ctx, release: bool, only: &[String]) -> Result<ExitCode, String> {
    if builds(only, "uniffi") {
        uniffi::bindings(ctx, release)?;
    }
    if builds(only, "web") {
        web::build_package(ctx)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let ctx = Ctx::new();
    let result = match Cli::parse().command {
        Command::Test { only } => runner::main(&ctx, &only),
        Command::Bench { only } => bench::main(&ctx, &only),
        Command::Demo { listen } => demo::main(&ctx, listen.as_deref()),
        Command::Bindings { release, only } => bindings(&ctx, release, &only),
        Command::Fuzz { target, seconds } => fuzz::main(&ctx, &target, seconds),
        Command::Doctor { install } => doctor::main(&ctx, install.as_deref()),
    };
    result.unwrap_or_else(|message| {
        eprintln!("error: {message}");
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// The help of `--only` names every runner and every bench suite.
    #[test]
    fn only_help_names_every_runner_and_suite() {
        let cli = Cli::command();
        let help = |command: &str| {
            let sub = cli.find_subcommand(command).expect("subcommand");
            let only = sub.get_arguments().find(|a| a.get_id() == "only");
            only.and_then(|a| a.get_help())
                .expect("--only has help")
                .to_string()
        };
        let (test, bench) = (help("test"), help("bench"));
        for runner in runner::RUNNERS {
            assert!(test.contains(runner.name), "{} in {test}", runner.name);
        }
        for suite in bench::SUITES {
            assert!(bench.contains(suite.name), "{} in {bench}", suite.name);
        }
    }

    /// `bindings` builds both halves unless `--only` names one; `--only`
    /// takes a list, and refuses a name that is neither.
    #[test]
    fn bindings_only_picks_the_halves() {
        let only = |args: &[&str]| match Cli::try_parse_from(
            ["cargo xtask", "bindings"].iter().chain(args),
        ) {
            Ok(Cli {
                command: Command::Bindings { only, .. },
            }) => Ok(BINDINGS.map(|name| builds(&only, name))),
            Ok(other) => panic!("parsed as {other:?}"),
            Err(e) => Err(e.kind()),
        };
        assert_eq!(only(&[]), Ok([true, true]));
        assert_eq!(only(&["--release"]), Ok([true, true]));
        assert_eq!(only(&["--only", "uniffi", "--release"]), Ok([true, false]));
        assert_eq!(only(&["--only", "web"]), Ok([false, true]));
        assert_eq!(only(&["--only", "uniffi,web"]), Ok([true, true]));
        assert_eq!(
            only(&["--only", "uniffi", "--only", "web"]),
            Ok([true, true])
        );
        assert_eq!(
            only(&["--only", "kotlin"]),
            Err(clap::error::ErrorKind::InvalidValue)
        );
    }

    /// The package description names every command.
    #[test]
    fn description_names_every_command() {
        let description = env!("CARGO_PKG_DESCRIPTION");
        for sub in Cli::command().get_subcommands() {
            assert!(
                description.contains(sub.get_name()),
                "{} in {description}",
                sub.get_name()
            );
        }
    }
}
