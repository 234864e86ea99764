//! `cargo xtask doctor [--install]`: which tools the build uses are present,
//! which are missing, and (with `--install`) install the missing ones.

use std::process::{Command, ExitCode};

use crate::install::{self, CargoTool};
use crate::{Ctx, proc};

/// What a probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Found {
    /// Present; the detail is a version or a path.
    Yes(String),
    /// Absent; the detail says what would be installed.
    No(String),
    /// Nothing to do here (not needed yet, or cannot be installed here).
    Note(String),
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

fn version_of(program: &str, args: &[&str]) -> Option<String> {
    let out = proc::capture_any(Command::new(program).args(args))?;
    Some(
        install::version_in(&out)
            .map_or_else(|| out.lines().next().unwrap_or("").to_owned(), str::to_owned),
    )
}

fn program(program: &'static str, args: &[&str], hint: &str) -> Found {
    match version_of(program, args) {
        Some(v) => Found::Yes(v),
        None => Found::No(hint.to_owned()),
    }
}

fn wasm_bindgen_tool(ctx: &Ctx) -> Option<(String, Option<std::path::PathBuf>)> {
    let version = install::pinned_wasm_bindgen(ctx)?;
    let found = install::find_cargo_tool(
        ctx,
        CargoTool { krate: "wasm-bindgen-cli", bin: "wasm-bindgen", version: &version },
    );
    Some((version, found))
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
        probe: |ctx| match wasm_bindgen_tool(ctx) {
            None => Found::Note("not needed yet (no wasm-bindgen in Cargo.lock)".to_owned()),
            Some((version, Some(path))) => Found::Yes(format!("{version} at {}", path.display())),
            Some((version, None)) => Found::No(format!(
                "cargo install wasm-bindgen-cli --version ={version} (into .tools/cargo)"
            )),
        },
        install: Some(|ctx| match install::pinned_wasm_bindgen(ctx) {
            None => Ok(()),
            Some(version) => install::cargo_tool(
                ctx,
                CargoTool { krate: "wasm-bindgen-cli", bin: "wasm-bindgen", version: &version },
            )
            .map(drop),
        }),
    },
    Tool {
        name: "node",
        used_for: "web tests",
        probe: |_| program("node", &["--version"], "install Node.js 20 or newer"),
        install: None,
    },
    Tool {
        name: "npm",
        used_for: "web tests, kotlinc download",
        probe: |_| program("npm", &["--version"], "comes with Node.js"),
        install: None,
    },
    Tool {
        name: "playwright-core",
        used_for: "browser tests",
        probe: |ctx| match install::npm_installed_version(ctx, install::PLAYWRIGHT_CORE.name) {
            Some(v) if v == install::PLAYWRIGHT_CORE.version => {
                Found::Yes(format!("{v} in .tools/node"))
            }
            _ => Found::No(format!(
                "npm install {}@{} into .tools/node",
                install::PLAYWRIGHT_CORE.name,
                install::PLAYWRIGHT_CORE.version
            )),
        },
        install: Some(|ctx| install::npm(ctx, &[install::PLAYWRIGHT_CORE]).map(drop)),
    },
    Tool {
        name: "chromium",
        used_for: "browser tests",
        probe: |_| program("chromium", &["--version"], "apt-get install chromium"),
        install: Some(|_| install::chromium().map(drop)),
    },
    Tool {
        name: "java",
        used_for: "Kotlin tests",
        probe: |_| program("java", &["-version"], "apt-get install default-jre-headless"),
        install: Some(|_| install::apt(&["default-jre-headless"])),
    },
    Tool {
        name: "kotlinc",
        used_for: "Kotlin tests",
        probe: |ctx| {
            let home = install::kotlin_home(ctx, install::KOTLIN_COMPILER_VERSION);
            if proc::is_executable(&home.join("bin").join("kotlinc")) {
                Found::Yes(format!("{} in {}", install::KOTLIN_COMPILER_VERSION, home.display()))
            } else {
                Found::No(format!(
                    "npm pack kotlin-compiler@{}, unpacked into .tools",
                    install::KOTLIN_COMPILER_VERSION
                ))
            }
        },
        install: Some(|ctx| install::kotlinc(ctx, install::KOTLIN_COMPILER_VERSION).map(drop)),
    },
    Tool {
        name: "jna",
        used_for: "Kotlin tests",
        probe: |_| {
            if std::path::Path::new(install::JNA_JAR).is_file() {
                Found::Yes(install::JNA_JAR.to_owned())
            } else {
                Found::No("apt-get install libjna-java".to_owned())
            }
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
        probe: |ctx| match install::pip_installed_version(ctx, install::PYTEST.name) {
            Some(v) if v == install::PYTEST.version => Found::Yes(format!("{v} in .tools/python")),
            _ => Found::No(format!(
                "pip install {}=={} into .tools/python",
                install::PYTEST.name,
                install::PYTEST.version
            )),
        },
        install: Some(|ctx| install::pip(ctx, &[install::PYTEST]).map(drop)),
    },
    Tool {
        name: "swift",
        used_for: "compiling the Swift bindings",
        probe: |_| match version_of("swift", &["--version"]) {
            Some(v) => Found::Yes(v),
            None => Found::Note(
                "not available; Swift sources are generated but not compiled here".to_owned(),
            ),
        },
        install: None,
    },
    Tool {
        name: "postgresql",
        used_for: "PostgreSQL store tests and benches",
        probe: |_| match install::find_postgres_bin() {
            Some(dir) => Found::Yes(dir.display().to_string()),
            None => Found::No("apt-get install postgresql".to_owned()),
        },
        install: Some(|_| install::postgres_bin().map(drop)),
    },
    Tool {
        name: "cargo-nextest",
        used_for: "Rust tests",
        probe: |ctx| match install::find_cargo_tool(ctx, install::NEXTEST) {
            Some(path) => Found::Yes(path.display().to_string()),
            None => Found::No(format!(
                "cargo install cargo-nextest --version ={}",
                install::NEXTEST.version
            )),
        },
        install: Some(|ctx| install::nextest(ctx).map(drop)),
    },
    Tool {
        name: "wrk",
        used_for: "server benches",
        probe: |_| match proc::which("wrk") {
            Some(path) => Found::Yes(path.display().to_string()),
            None => Found::No("apt-get install wrk".to_owned()),
        },
        install: Some(|_| install::wrk().map(drop)),
    },
];

fn table(rows: &[(&Tool, Found)]) -> String {
    let name_width = rows.iter().map(|(t, _)| t.name.len()).max().unwrap_or(4);
    let use_width = rows.iter().map(|(t, _)| t.used_for.len()).max().unwrap_or(8);
    let mut out =
        format!("{:<name_width$}  {:<7}  {:<use_width$}  detail\n", "tool", "status", "used for");
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

/// `cargo xtask doctor [--install [TOOL…]]`.
pub fn main(ctx: &Ctx, install: Option<&[String]>) -> Result<ExitCode, String> {
    let (install, only) = (install.is_some(), install.unwrap_or_default());
    if let Some(unknown) = only.iter().find(|n| !TOOLS.iter().any(|t| t.name == n.as_str())) {
        let known: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
        return Err(format!("no tool named `{unknown}`; known: {}", known.join(", ")));
    }
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
        match tool.install {
            None => failed
                .push(format!("{}: xtask cannot install this; see the detail above", tool.name)),
            Some(install) => {
                if let Err(e) = install(ctx) {
                    failed.push(format!("{}: {e}", tool.name));
                }
            }
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
            (&TOOLS[1], Found::No("rustup target add wasm32-unknown-unknown".into())),
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
