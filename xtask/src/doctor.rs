//! `cargo xtask doctor [--install]`: which tools the build uses are present,
//! which are missing, and (with `--install`) install the missing ones.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use crate::install::{self, Package};
use crate::{Ctx, proc, react};

/// What a probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// Present; the detail is a version or a path.
    Yes(String),
    /// Absent; the detail says what would be installed.
    No(String),
    /// Nothing to do here (not needed yet, or cannot be installed here).
    Note(String),
}

/// Present with `detail`, else missing with `hint`.
fn found(detail: Option<String>, hint: impl Into<String>) -> Found {
    detail.map_or_else(|| Found::No(hint.into()), Found::Yes)
}

/// Installs a tool.
type Installer = fn(&Ctx) -> Result<(), String>;

/// One tool the build relies on.
#[derive(Debug)]
struct Tool {
    name: &'static str,
    used_for: &'static str,
    probe: fn(&Ctx) -> Found,
    /// How to install it, when xtask can.
    install: Option<Installer>,
}

/// The version `program args` reports, or the first line of its answer.
fn version_of(program: &str, args: &[&str]) -> Option<String> {
    let out = proc::capture(Command::new(program).args(args))?;
    Some(install::version_in(&out).map_or_else(
        || out.lines().next().unwrap_or("").to_owned(),
        str::to_owned,
    ))
}

/// A program found by asking it for its version.
fn program(name: &str, args: &[&str], hint: &str) -> Found {
    found(version_of(name, args), hint)
}

fn shown(path: PathBuf) -> String {
    path.display().to_string()
}

/// An npm package at its pinned version in `.tools/node`.
/// A PyPI package at its pinned version in `.tools/python`.
fn pip_package(ctx: &Ctx, package: Package) -> Found {
    found(
        install::pip_installed_version(ctx, package.name)
            .filter(|v| v == package.version)
            .map(|v| format!("{v} in .tools/python")),
        format!(
            "pip install {}=={} into .tools/python",
            package.name, package.version
        ),
    )
}

fn npm_package(ctx: &Ctx, package: Package) -> Found {
    let installed = install::npm_installed_version(ctx, package.name);
    found(
        installed
            .filter(|v| v == package.version)
            .map(|v| format!("{v} in .tools/node")),
        format!(
            "npm install {}@{} into .tools/node",
            package.name, package.version
        ),
    )
}

const TOOLS: &[Tool] = &[
    Tool {
        name: "cargo",
        used_for: "everything",
        probe: |_| program("cargo", &["--version"], "install Rust with rustup"),
        install: None,
    },
    Tool {
        name: "wasm32 target",
        used_for: "web package",
        probe: |_| match install::has_rustup_target(install::WASM_TARGET) {
            Ok(true) => Found::Yes(install::WASM_TARGET.to_owned()),
            Ok(false) => Found::No(format!("rustup target add {}", install::WASM_TARGET)),
            Err(e) => Found::Note(e),
        },
        install: Some(|_| install::rustup_target(install::WASM_TARGET)),
    },
    Tool {
        name: "wasm-bindgen-cli",
        used_for: "web package",
        probe: |ctx| match install::pinned_wasm_bindgen(ctx) {
            None => Found::Note("not needed yet (no wasm-bindgen in Cargo.lock)".to_owned()),
            Some(v) => found(
                install::find_cargo_tool(ctx, install::wasm_bindgen(&v))
                    .map(|path| format!("{v} at {}", path.display())),
                format!("cargo install wasm-bindgen-cli --version ={v} (into .tools/cargo)"),
            ),
        },
        install: Some(|ctx| install::wasm_bindgen_cli(ctx).map(drop)),
    },
    Tool {
        name: "node",
        used_for: "web package (wasm-opt), web tests",
        probe: |_| program("node", &["--version"], "install Node.js 20.19 or newer"),
        install: None,
    },
    Tool {
        name: "npm",
        used_for: "binaryen, web tests, kotlinc download",
        probe: |_| program("npm", &["--version"], "comes with Node.js"),
        install: None,
    },
    Tool {
        name: "binaryen (wasm-opt)",
        used_for: "web package",
        probe: |ctx| npm_package(ctx, install::BINARYEN),
        install: Some(|ctx| install::npm(ctx, &[install::BINARYEN]).map(drop)),
    },
    Tool {
        name: "playwright-core",
        used_for: "browser tests",
        probe: |ctx| npm_package(ctx, install::PLAYWRIGHT_CORE),
        install: Some(|ctx| install::npm(ctx, &[install::PLAYWRIGHT_CORE]).map(drop)),
    },
    Tool {
        name: "vite",
        used_for: "React tests (with react, react-dom)",
        probe: |ctx| npm_package(ctx, react::VITE),
        install: Some(|ctx| install::npm(ctx, react::NPM_PACKAGES).map(drop)),
    },
    Tool {
        name: "react 18",
        used_for: "React tests on React 18 (with react-dom 18)",
        probe: |ctx| react::react_18_found(ctx),
        install: Some(|ctx| react::install_react_18(ctx).map(drop)),
    },
    Tool {
        name: "chromium",
        used_for: "browser tests",
        probe: |_| program("chromium", &["--version"], "apt-get install chromium"),
        install: Some(|_| install::program("chromium", "chromium").map(drop)),
    },
    Tool {
        name: "typescript",
        used_for: "TypeScript check of the web package",
        probe: |ctx| npm_package(ctx, install::TYPESCRIPT),
        install: Some(|ctx| install::npm(ctx, &[install::TYPESCRIPT]).map(drop)),
    },
    Tool {
        name: "java",
        used_for: "Kotlin tests",
        probe: |_| {
            program(
                "java",
                &["-version"],
                "apt-get install default-jre-headless",
            )
        },
        install: Some(|_| install::apt(&["default-jre-headless"])),
    },
    Tool {
        name: "kotlinc",
        used_for: "Kotlin tests",
        probe: |ctx| npm_package(ctx, install::KOTLIN_COMPILER),
        install: Some(|ctx| install::kotlinc(ctx).map(drop)),
    },
    Tool {
        name: "jna",
        used_for: "Kotlin tests",
        probe: |_| {
            let jar = Path::new(install::JNA_JAR).is_file();
            found(
                jar.then(|| install::JNA_JAR.to_owned()),
                "apt-get install libjna-java",
            )
        },
        install: Some(|_| install::jna_jar().map(drop)),
    },
    Tool {
        name: "python3",
        used_for: "Python tests",
        probe: |_| program("python3", &["--version"], "install Python 3.9 or newer"),
        install: None,
    },
    Tool {
        name: "pytest",
        used_for: "Python tests",
        probe: |ctx| pip_package(ctx, install::PYTEST),
        install: Some(|ctx| install::pip(ctx, &[install::PYTEST]).map(drop)),
    },
    Tool {
        name: "mypy",
        used_for: "Python tests (the admin client's types)",
        probe: |ctx| pip_package(ctx, install::MYPY),
        install: Some(|ctx| install::pip(ctx, &[install::PYTEST, install::MYPY]).map(drop)),
    },
    Tool {
        name: "schemathesis",
        used_for: "the OpenAPI document's tests",
        probe: |ctx| pip_package(ctx, crate::openapi::SCHEMATHESIS),
        install: Some(|ctx| {
            install::pip(ctx, &[install::PYTEST, crate::openapi::SCHEMATHESIS]).map(drop)
        }),
    },
    Tool {
        name: "swift",
        used_for: "compiling the Swift bindings",
        probe: |_| {
            version_of("swift", &["--version"]).map_or_else(
                || {
                    Found::Note(
                        "not available; Swift sources are generated but not compiled here"
                            .to_owned(),
                    )
                },
                Found::Yes,
            )
        },
        install: None,
    },
    Tool {
        name: "postgresql",
        used_for: "PostgreSQL store tests and benches",
        probe: |_| {
            found(
                install::find_postgres_bin().map(shown),
                "apt-get install postgresql",
            )
        },
        install: Some(|_| install::postgres_bin().map(drop)),
    },
    Tool {
        name: "pgbouncer",
        used_for: "PostgreSQL store tests through a connection pooler",
        probe: |_| {
            found(
                install::find_pgbouncer().map(shown),
                "apt-get install pgbouncer",
            )
        },
        install: Some(|_| install::pgbouncer().map(drop)),
    },
    Tool {
        name: "cargo-nextest",
        used_for: "Rust tests",
        // The same rule as `cargo xtask test`: any version on PATH will do.
        probe: |ctx| {
            found(
                install::find_nextest(ctx).map(|(path, version)| {
                    let pinned = install::NEXTEST.version;
                    let other = if version == pinned {
                        String::new()
                    } else {
                        format!(" (not the pinned {pinned}; used as it is)")
                    };
                    format!("{version} at {}{other}", path.display())
                }),
                format!(
                    "cargo install cargo-nextest --version ={} (into .tools/cargo)",
                    install::NEXTEST.version
                ),
            )
        },
        install: Some(|ctx| install::nextest(ctx).map(drop)),
    },
    Tool {
        name: "cargo-fuzz",
        used_for: "fuzzing (cargo xtask fuzz)",
        probe: |ctx| {
            found(
                install::find_cargo_tool(ctx, install::CARGO_FUZZ).map(shown),
                format!(
                    "cargo install cargo-fuzz --version ={} --locked",
                    install::CARGO_FUZZ.version
                ),
            )
        },
        install: Some(|ctx| install::cargo_tool(ctx, install::CARGO_FUZZ).map(drop)),
    },
    Tool {
        name: "wrk",
        used_for: "server benches",
        probe: |_| found(proc::which("wrk").map(shown), "apt-get install wrk"),
        install: Some(|_| install::program("wrk", "wrk").map(drop)),
    },
];

fn table(rows: &[(&Tool, Found)]) -> String {
    let name_width = rows.iter().map(|(t, _)| t.name.len()).max().unwrap_or(4);
    let use_width = rows
        .iter()
        .map(|(t, _)| t.used_for.len())
        .max()
        .unwrap_or(8);
    let mut out = format!(
        "{:<name_width$}  {:<7}  {:<use_width$}  detail\n",
        "tool", "status", "used for"
    );
    for (tool, found) in rows {
        let (status, detail) = match found {
            Found::Yes(d) => ("ok", d),
            Found::No(d) => ("missing", d),
            Found::Note(d) => ("-", d),
        };
        out.push_str(&format!(
            "{:<name_width$}  {status:<7}  {:<use_width$}  {detail}\n",
            tool.name, tool.used_for
        ));
    }
    out
}

/// The tool names, for `--install`.
pub fn names() -> clap::builder::PossibleValuesParser {
    TOOLS.iter().map(|t| t.name).collect::<Vec<_>>().into()
}

/// `cargo xtask doctor [--install [TOOL…]]`.
pub fn main(ctx: &Ctx, install: Option<&[String]>) -> Result<ExitCode, String> {
    let (install, only) = (install.is_some(), install.unwrap_or_default());
    let rows: Vec<(&Tool, Found)> = TOOLS
        .iter()
        .filter(|t| only.is_empty() || only.iter().any(|n| n == t.name))
        .map(|t| (t, (t.probe)(ctx)))
        .collect();
    print!("{}", table(&rows));

    let missing: Vec<&Tool> = rows
        .iter()
        .filter(|(_, found)| matches!(found, Found::No(_)))
        .map(|(tool, _)| *tool)
        .collect();
    if missing.is_empty() {
        println!("\nnothing is missing");
        return Ok(ExitCode::SUCCESS);
    }
    if !install {
        println!(
            "\n{} missing; `cargo xtask doctor --install [TOOL…]` installs them",
            missing.len()
        );
        return Ok(ExitCode::SUCCESS);
    }

    let mut failed = Vec::new();
    for tool in missing {
        let cannot = || Err("xtask cannot install this; see the detail above".to_owned());
        if let Err(e) = tool.install.map_or_else(cannot, |install| install(ctx)) {
            failed.push(format!("{}: {e}", tool.name));
        }
    }
    if failed.is_empty() {
        println!("\nall missing tools installed");
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("\nnot installed:");
        for line in &failed {
            eprintln!("  {line}");
        }
        Ok(ExitCode::FAILURE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_shows_status_and_detail() {
        let rows = [
            (&TOOLS[0], Found::Yes("1.95.0".into())),
            (
                &TOOLS[1],
                Found::No("rustup target add wasm32-unknown-unknown".into()),
            ),
        ];
        let text = table(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].starts_with("cargo ")
                && lines[1].contains(" ok ")
                && lines[1].ends_with("1.95.0")
        );
        assert!(
            lines[2].contains(" missing ")
                && lines[2].ends_with("rustup target add wasm32-unknown-unknown")
        );
    }

    #[test]
    fn tool_names_are_unique() {
        let mut names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TOOLS.len());
    }
}
