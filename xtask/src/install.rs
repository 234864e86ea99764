//! Tools the build needs: each helper checks first, installs only what is
//! missing, and says what it is doing. Project-local tools go under `.tools/`
//! (gitignored), so nothing here changes the rest of the machine except
//! rustup targets and Debian packages.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::proc::say;
use crate::{Ctx, proc};

/// The target the web package builds for.
pub const WASM_TARGET: &str = "wasm32-unknown-unknown";
/// The Kotlin compiler: the npm package carries `bin/kotlinc` and the jars
/// a Kotlin/JVM program runs with.
pub const KOTLIN_COMPILER: Package = Package {
    name: "kotlin-compiler",
    version: "2.4.20",
};
/// A current binaryen's `wasm-opt` for the web package (Debian 12's is too
/// old for wasm-bindgen's output); the npm build runs on Node.
pub const BINARYEN: Package = Package {
    name: "binaryen",
    version: "132.0.0",
};
/// The flags every browser test and bench starts Chromium with (passed
/// to them as `LIKEKIT_CHROMIUM_ARGS`, a JSON array, beside
/// `LIKEKIT_CHROMIUM`): no sandbox (the runs may be root's), no GPU, and
/// none of the background connections Chromium makes at start, which a
/// machine whose network ends at loopback refuses, many at a time
/// (playwright adds `--headless`).
pub const CHROMIUM_ARGS: &[&str] = &[
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// [`CHROMIUM_ARGS`] as the JSON array the tests read.
pub fn chromium_args_json() -> String {
    let quoted: Vec<String> = CHROMIUM_ARGS.iter().map(|a| format!("\"{a}\"")).collect();
    format!("[{}]", quoted.join(","))
}

/// Drives Debian's chromium for the browser tests.
pub const PLAYWRIGHT_CORE: Package = Package {
    name: "playwright-core",
    version: "1.65.1",
};
/// `tsc`, for the type check of the web package's declarations.
pub const TYPESCRIPT: Package = Package {
    name: "typescript",
    version: "7.0.2",
};

/// The peer the `web` bench measures LikeKit against: the library a React
/// team would otherwise write the like button with (bench code only).
pub const TANSTACK_QUERY: Package = Package {
    name: "@tanstack/react-query",
    version: "5.108.4",
};

// ---------------------------------------------------------------- versions

/// The first word of a `--version` answer that looks like a version number:
/// `wasm-bindgen 0.2.130` gives `0.2.130`, `v20.11.1` gives `20.11.1`.
pub fn version_in(text: &str) -> Option<&str> {
    text.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',' || c == '"')
        .map(|word| word.strip_prefix('v').unwrap_or(word))
        .map(|word| word.trim_end_matches(['.', ';', ':']))
        .find(|word| {
            word.contains('.')
                && word.starts_with(|c: char| c.is_ascii_digit())
                && word
                    .split(['.', '-', '+'])
                    .next()
                    .is_some_and(|major| major.chars().all(|c| c.is_ascii_digit()))
        })
}

/// The `wasm-bindgen` version the workspace is locked to (`cargo pkgid`);
/// wasm-bindgen-cli must be exactly this version. `None` until the web
/// crate depends on it, or when more than one version is locked.
pub fn pinned_wasm_bindgen(ctx: &Ctx) -> Option<String> {
    let mut pkgid = proc::cargo();
    pkgid.current_dir(&ctx.root).args(["pkgid", "wasm-bindgen"]);
    let id = proc::capture(&mut pkgid)?;
    Some(id.rsplit_once('@')?.1.to_owned())
}

// ---------------------------------------------------------------- rustup

/// Whether a rustup target is installed for the active toolchain.
pub fn has_rustup_target(target: &str) -> Result<bool, String> {
    let mut cmd = Command::new("rustup");
    cmd.args(["target", "list", "--installed"]);
    let installed = proc::capture(&mut cmd).ok_or_else(|| {
        format!(
            "could not ask rustup which targets are installed (`{}`); is rustup on PATH?",
            proc::display(&cmd)
        )
    })?;
    Ok(installed.lines().any(|line| line.trim() == target))
}

/// Installs a rustup target when missing.
pub fn rustup_target(target: &str) -> Result<(), String> {
    if has_rustup_target(target)? {
        return Ok(());
    }
    say(&format!("installing {target} target via rustup…"));
    proc::run(Command::new("rustup").args(["target", "add", target]))
}

// ---------------------------------------------------------------- cargo install

/// A binary installed with `cargo install` at an exact version.
#[derive(Debug, Clone, Copy)]
pub struct CargoTool<'a> {
    pub krate: &'a str,
    pub bin: &'a str,
    pub version: &'a str,
    /// Installed with `--locked` (the dependency versions the tool was
    /// released with), for tools whose every locked version is served.
    pub locked: bool,
}

/// The installed version of a program, from `program --version`.
pub fn tool_version(program: &Path) -> Option<String> {
    let out = proc::capture(Command::new(program).arg("--version"))?;
    version_in(&out).map(str::to_owned)
}

/// Where a cargo tool is, if the pinned version is installed: first the
/// project's `.tools/cargo/bin`, then PATH.
pub fn find_cargo_tool(ctx: &Ctx, tool: CargoTool<'_>) -> Option<PathBuf> {
    let local = ctx.tools().join("cargo").join("bin").join(tool.bin);
    [Some(local), proc::which(tool.bin)]
        .into_iter()
        .flatten()
        .find(|path| tool_version(path).as_deref() == Some(tool.version))
}

/// Installs a cargo tool at its pinned version into `.tools/cargo` when it is
/// not already installed, and returns the binary's path. `--locked` only for
/// tools marked so: one locked dependency version of wasm-bindgen-cli is not
/// served here.
pub fn cargo_tool(ctx: &Ctx, tool: CargoTool<'_>) -> Result<PathBuf, String> {
    if let Some(path) = find_cargo_tool(ctx, tool) {
        return Ok(path);
    }
    let root = ctx.tools().join("cargo");
    say(&format!(
        "installing {} {} via cargo install into {} (this compiles it; minutes on 2 cores)…",
        tool.krate,
        tool.version,
        root.display()
    ));
    let mut cmd = proc::cargo();
    cmd.args(["install", tool.krate, "--version"])
        .arg(format!("={}", tool.version))
        .arg("--root")
        .arg(&root);
    if tool.locked {
        cmd.arg("--locked");
    }
    proc::run(&mut cmd)?;
    Ok(root.join("bin").join(tool.bin))
}

/// cargo-nextest, the Rust test runner `cargo xtask test` uses: on PATH at
/// this version, or installed into `.tools/cargo`.
pub const NEXTEST: CargoTool<'static> = CargoTool {
    krate: "cargo-nextest",
    bin: "cargo-nextest",
    version: "0.9.143",
    locked: false,
};

/// The cargo-nextest `cargo xtask test` would use, without installing
/// anything, and its version: the pinned version in `.tools/cargo` or on
/// PATH, else whatever version is on PATH (rather than compiling another).
pub fn find_nextest(ctx: &Ctx) -> Option<(PathBuf, String)> {
    if let Some(path) = find_cargo_tool(ctx, NEXTEST) {
        return Some((path, NEXTEST.version.to_owned()));
    }
    let path = proc::which(NEXTEST.bin)?;
    let version = tool_version(&path)?;
    Some((path, version))
}

/// The `cargo-nextest` binary (run as `cargo-nextest nextest run …`), as
/// [`find_nextest`] finds it (a version other than the pinned one with a
/// note), else installed at the pinned version into `.tools/cargo`.
pub fn nextest(ctx: &Ctx) -> Result<PathBuf, String> {
    match find_nextest(ctx) {
        Some((path, version)) => {
            if version != NEXTEST.version {
                say(&format!(
                    "using {} {version} (not the pinned {})",
                    path.display(),
                    NEXTEST.version
                ));
            }
            Ok(path)
        }
        None => cargo_tool(ctx, NEXTEST),
    }
}

/// cargo-fuzz, which builds the fuzz targets in `fuzz/` with libFuzzer
/// (`cargo xtask fuzz`): on PATH at this version, or installed into
/// `.tools/cargo`.
pub const CARGO_FUZZ: CargoTool<'static> = CargoTool {
    krate: "cargo-fuzz",
    bin: "cargo-fuzz",
    version: "0.13.2",
    locked: true,
};

/// wasm-bindgen-cli at `version`.
pub fn wasm_bindgen(version: &str) -> CargoTool<'_> {
    CargoTool {
        krate: "wasm-bindgen-cli",
        bin: "wasm-bindgen",
        version,
        locked: false,
    }
}

/// wasm-bindgen-cli at the version Cargo.lock pins, on PATH or installed
/// into `.tools/cargo`. Its folder also holds `wasm-bindgen-test-runner`.
pub fn wasm_bindgen_cli(ctx: &Ctx) -> Result<PathBuf, String> {
    let version = pinned_wasm_bindgen(ctx).ok_or_else(|| {
        "Cargo.lock does not pin exactly one wasm-bindgen version; run `cargo build -p likekit-wasm --target wasm32-unknown-unknown` first".to_owned()
    })?;
    cargo_tool(ctx, wasm_bindgen(&version))
}

// ---------------------------------------------------------------- apt

static APT_UPDATED: AtomicBool = AtomicBool::new(false);

/// Whether a Debian package is installed.
fn dpkg_installed(package: &str) -> Result<bool, String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .map_err(|_| {
            format!("`dpkg-query` is not available, so Debian package `{package}` cannot be checked; install it with your system's package manager")
        })?;
    Ok(out.status.success()
        && String::from_utf8_lossy(&out.stdout).trim() == "install ok installed")
}

/// How we may run apt-get.
fn apt_prefix() -> Option<Vec<&'static str>> {
    let uid = proc::capture(Command::new("id").arg("-u"));
    if uid.as_deref() == Some("0") {
        return Some(Vec::new());
    }
    let sudo_ok = Command::new("sudo")
        .args(["-n", "true"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    sudo_ok.then(|| vec!["sudo", "-n"])
}

fn apt_command(prefix: &[&str], args: &[&str]) -> Command {
    let mut words: Vec<&str> = prefix.to_vec();
    words.extend(["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]);
    words.extend(args);
    let mut cmd = Command::new(words[0]);
    cmd.args(&words[1..]);
    cmd
}

/// Installs the Debian packages that are missing, running `apt-get update`
/// once first. Needs root or password-less sudo; otherwise the error says
/// which command to run.
pub fn apt(packages: &[&str]) -> Result<(), String> {
    let mut missing = Vec::new();
    for &package in packages {
        if !dpkg_installed(package)? {
            missing.push(package);
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let list = missing.join(" ");
    let Some(prefix) = apt_prefix() else {
        return Err(format!(
            "missing Debian packages: {list}. Install them as root with:\n    sudo apt-get update && sudo apt-get install -y --no-install-recommends {list}"
        ));
    };
    if !APT_UPDATED.load(Ordering::Relaxed) {
        say("updating the apt package lists (apt-get update)…");
        proc::run(&mut apt_command(&prefix, &["update", "-q"]))?;
        APT_UPDATED.store(true, Ordering::Relaxed);
    }
    say(&format!("installing {list} via apt-get…"));
    let mut args = vec!["install", "-y", "-q", "--no-install-recommends"];
    args.extend(&missing);
    proc::run(&mut apt_command(&prefix, &args))
}

// ---------------------------------------------------------------- npm

/// An npm or PyPI package at an exact version.
#[derive(Debug, Clone, Copy)]
pub struct Package {
    pub name: &'static str,
    pub version: &'static str,
}

/// The version of an npm package installed in `.tools/node`, if any.
pub fn npm_installed_version(ctx: &Ctx, name: &str) -> Option<String> {
    npm_version_in(&ctx.tools().join("node").join("node_modules"), name)
}

/// The version of npm package `name` in the `node_modules` folder given,
/// if it is there.
pub fn npm_version_in(node_modules: &Path, name: &str) -> Option<String> {
    let text = fs::read_to_string(node_modules.join(name).join("package.json")).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    manifest["version"].as_str().map(str::to_owned)
}

/// Installs npm packages into `.tools/node` when missing or at another
/// version, and returns its `node_modules` folder (for `NODE_PATH`).
pub fn npm(ctx: &Ctx, packages: &[Package]) -> Result<PathBuf, String> {
    npm_into(&ctx.tools().join("node"), packages)
}

/// Installs npm packages into `dir` (a folder of `.tools`) when missing or
/// at another version, and returns its `node_modules` folder: `npm`'s own,
/// and a folder of its own for a second version of a package (React 18
/// beside `.tools/node`'s 19).
pub fn npm_into(dir: &Path, packages: &[Package]) -> Result<PathBuf, String> {
    let node_modules = dir.join("node_modules");
    let wanted: Vec<String> = packages
        .iter()
        .filter(|p| npm_version_in(&node_modules, p.name).as_deref() != Some(p.version))
        .map(|p| format!("{}@{}", p.name, p.version))
        .collect();
    if !wanted.is_empty() {
        proc::mkdir(dir)?;
        say(&format!(
            "installing {} via npm into {}…",
            wanted.join(" "),
            dir.display()
        ));
        let mut cmd = Command::new("npm");
        cmd.arg("install")
            .arg("--prefix")
            .arg(dir)
            .args(["--no-audit", "--no-fund", "--save-exact"])
            .args(&wanted);
        proc::run(&mut cmd)?;
    }
    Ok(node_modules)
}

// ---------------------------------------------------------------- Python

/// The Python test runner.
pub const PYTEST: Package = Package {
    name: "pytest",
    version: "9.2.0",
};
/// The type checker the Python tests run on the admin client.
pub const MYPY: Package = Package {
    name: "mypy",
    version: "2.4.1",
};

/// The interpreter of the project-local virtual environment `.tools/python`.
pub fn venv_python(ctx: &Ctx) -> PathBuf {
    ctx.tools().join("python").join("bin").join("python")
}

/// The version of a package installed in `.tools/python`, if any.
pub fn pip_installed_version(ctx: &Ctx, name: &str) -> Option<String> {
    let out = proc::capture(Command::new(venv_python(ctx)).args(["-m", "pip", "show", name]))?;
    out.lines()
        .find_map(|line| line.strip_prefix("Version:"))
        .map(|v| v.trim().to_owned())
}

/// Creates the virtual environment `.tools/python` when missing, installs
/// the PyPI packages that are missing or at another version, and returns its
/// interpreter.
pub fn pip(ctx: &Ctx, packages: &[Package]) -> Result<PathBuf, String> {
    let python = venv_python(ctx);
    if !proc::is_executable(&python) {
        let dir = ctx.tools().join("python");
        say(&format!(
            "creating a Python virtual environment in {}…",
            dir.display()
        ));
        let mut venv = Command::new("python3");
        venv.args(["-m", "venv"]).arg(&dir);
        proc::run(&mut venv).map_err(|e| {
            format!("{e}\n(on Debian the venv module comes with `apt-get install python3-venv`)")
        })?;
    }
    let wanted: Vec<String> = packages
        .iter()
        .filter(|p| pip_installed_version(ctx, p.name).as_deref() != Some(p.version))
        .map(|p| format!("{}=={}", p.name, p.version))
        .collect();
    if !wanted.is_empty() {
        say(&format!(
            "installing {} via pip into .tools/python…",
            wanted.join(" ")
        ));
        let mut cmd = Command::new(&python);
        cmd.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(&wanted);
        proc::run(&mut cmd)?;
    }
    Ok(python)
}

// ---------------------------------------------------------------- kotlinc

/// The Kotlin compiler and the jars a Kotlin/JVM program runs with.
#[derive(Debug, Clone)]
pub struct Kotlin {
    pub kotlinc: PathBuf,
    pub stdlib_jar: PathBuf,
    pub coroutines_jar: PathBuf,
}

/// The Kotlin compiler from the npm package `kotlin-compiler`, installed
/// into `.tools/node` when missing (it needs a JRE, installed from Debian
/// when missing).
pub fn kotlinc(ctx: &Ctx) -> Result<Kotlin, String> {
    if proc::capture(Command::new("java").arg("-version")).is_none() {
        apt(&["default-jre-headless"])?;
    }
    let home = npm(ctx, &[KOTLIN_COMPILER])?.join(KOTLIN_COMPILER.name);
    let kotlin = Kotlin {
        kotlinc: home.join("bin").join("kotlinc"),
        stdlib_jar: home.join("lib").join("kotlin-stdlib.jar"),
        coroutines_jar: home.join("lib").join("kotlinx-coroutines-core-jvm.jar"),
    };
    if proc::is_executable(&kotlin.kotlinc)
        && kotlin.stdlib_jar.is_file()
        && kotlin.coroutines_jar.is_file()
    {
        Ok(kotlin)
    } else {
        Err(format!(
            "the kotlin-compiler package did not contain bin/kotlinc, lib/kotlin-stdlib.jar and lib/kotlinx-coroutines-core-jvm.jar under {}",
            home.display()
        ))
    }
}

// ---------------------------------------------------------------- JVM, browser, database

/// JNA for Kotlin through uniffi: Debian's `libjna-java`.
pub const JNA_JAR: &str = "/usr/share/java/jna.jar";

/// Installs JNA from Debian when missing and returns the jar's path.
pub fn jna_jar() -> Result<PathBuf, String> {
    let jar = PathBuf::from(JNA_JAR);
    if !jar.is_file() {
        apt(&["libjna-java"])?;
    }
    if jar.is_file() {
        Ok(jar)
    } else {
        Err(format!("libjna-java is installed but {JNA_JAR} is missing"))
    }
}

/// A program from a Debian package (chromium for the browser tests, wrk
/// for the server bench), installed when missing.
pub fn program(name: &str, package: &str) -> Result<PathBuf, String> {
    if proc::which(name).is_none() {
        apt(&[package])?;
    }
    proc::which(name).ok_or_else(|| format!("{package} is installed but `{name}` is not on PATH"))
}

/// The folder with PostgreSQL's server programs (`initdb`, `pg_ctl`), which
/// Debian keeps off PATH under `/usr/lib/postgresql/<major>/bin`.
pub fn find_postgres_bin() -> Option<PathBuf> {
    if let Some(initdb) = proc::which("initdb") {
        return initdb.parent().map(Path::to_path_buf);
    }
    let mut dirs: Vec<PathBuf> = fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| entry.ok().map(|e| e.path().join("bin")))
        .filter(|bin| proc::is_executable(&bin.join("initdb")))
        .collect();
    dirs.sort_by_key(|dir| {
        dir.parent()
            .and_then(Path::file_name)
            .and_then(|major| major.to_str()?.parse::<u32>().ok())
            .unwrap_or(0)
    });
    dirs.pop()
}

/// PostgreSQL's server programs, installed from Debian when missing.
pub fn postgres_bin() -> Result<PathBuf, String> {
    if let Some(dir) = find_postgres_bin() {
        return Ok(dir);
    }
    apt(&["postgresql"])?;
    find_postgres_bin().ok_or_else(|| {
        "postgresql is installed but initdb was not found under /usr/lib/postgresql".to_owned()
    })
}

/// PgBouncer, for the store tests that run through it: on `PATH`, or where
/// Debian puts it (`/usr/sbin`, off a user's `PATH`).
pub fn find_pgbouncer() -> Option<PathBuf> {
    proc::which("pgbouncer").or_else(|| {
        ["/usr/sbin/pgbouncer", "/usr/local/sbin/pgbouncer"]
            .map(PathBuf::from)
            .into_iter()
            .find(|path| proc::is_executable(path))
    })
}

/// PgBouncer, installed from Debian when missing.
pub fn pgbouncer() -> Result<PathBuf, String> {
    if let Some(path) = find_pgbouncer() {
        return Ok(path);
    }
    apt(&["pgbouncer"])?;
    find_pgbouncer()
        .ok_or_else(|| "pgbouncer is installed but `pgbouncer` was not found".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chromium_args_reach_the_tests_as_a_json_array() {
        let parsed: Vec<String> = serde_json::from_str(&chromium_args_json()).expect("JSON");
        assert_eq!(parsed, CHROMIUM_ARGS);
    }

    #[test]
    fn finds_versions_in_tool_output() {
        assert_eq!(version_in("wasm-bindgen 0.2.130"), Some("0.2.130"));
        assert_eq!(version_in("v20.20.2"), Some("20.20.2"));
        assert_eq!(version_in("Version 1.65.1"), Some("1.65.1"));
        assert_eq!(
            version_in("openjdk version \"17.0.15\" 2025-04-15"),
            Some("17.0.15")
        );
        assert_eq!(
            version_in("cargo 1.95.0 (f2d3ce0bd 2026-03-21)"),
            Some("1.95.0")
        );
        assert_eq!(
            version_in("wrk 4.1.0 [epoll] Copyright (C) 2012 Will Glozer"),
            Some("4.1.0")
        );
        assert_eq!(version_in("pytest 8.3.4"), Some("8.3.4"));
        assert_eq!(
            version_in("info: kotlinc-jvm 2.4.20 (JRE 17.0.15+6)"),
            Some("2.4.20")
        );
        assert_eq!(version_in("no version here"), None);
        assert_eq!(version_in("x86_64 build"), None);
    }

    #[test]
    fn apt_commands_are_noninteractive() {
        let cmd = apt_command(&["sudo", "-n"], &["install", "-y", "wrk"]);
        assert_eq!(
            proc::display(&cmd),
            "sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y wrk"
        );
        let cmd = apt_command(&[], &["update"]);
        assert_eq!(
            proc::display(&cmd),
            "env DEBIAN_FRONTEND=noninteractive apt-get update"
        );
    }
}
