//! The `react` runner: likekit-react (`bindings/react`) in a React 19 app
//! built with Vite (`bindings/react/tests/app`), in Debian's headless
//! Chromium driven by playwright-core, against likekit-server on loopback,
//! and the app's screens rendered by react-dom/server in Node; then both
//! packages in a Next.js app (`bindings/react/tests/next`), built with
//! `next build` and run with `next start` by its test. Then the same Vite
//! app and server rendering again with React 18, the oldest React of the
//! package's peer range (`react >=18`), against a server of its own (Next.js
//! 16 needs React 19).
//!
//! likekit-react itself has no build step: it is a plain ES module with a
//! hand-written `.d.ts`. Only its test apps are built. The Vite app twice:
//! for the browser (served by the server's `--web-root`, so the page and
//! the API share an origin) and for Node (`--ssr`), both into
//! `target/react-test/`. The Next.js app twice as well, into its own
//! `.next/` (Next.js keeps its build inside the app): once as way 1 of the
//! likekit-wasm README's "Next.js and server rendering" needs it (no
//! setting), once with way 2's `serverExternalPackages`. React 18 lives in
//! `.tools/node-react18`, beside `.tools/node` (whose React is 19), and its
//! builds of the Vite app go to `target/react-test/react18/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::install::{self, PLAYWRIGHT_CORE, Package};
use crate::proc::{io_error, mkdir, remove, say};
use crate::server::TestServer;
use crate::tally::{self, Tally};
use crate::{Ctx, proc, web};

/// React and its DOM renderer, for the test app: the version the package is
/// tested against (its peer range is `>=18`).
pub const REACT: Package = Package {
    name: "react",
    version: "19.3.1",
};
pub const REACT_DOM: Package = Package {
    name: "react-dom",
    version: "19.3.1",
};
/// React 18 and its DOM renderer: the Vite app's tests run on them too
/// (the latest 18.x), from `.tools/node-react18`.
pub const REACT_18: Package = Package {
    name: "react",
    version: "18.3.1",
};
pub const REACT_DOM_18: Package = Package {
    name: "react-dom",
    version: "18.3.1",
};
/// Builds the test app. Its own transform compiles JSX, so no plugin.
pub const VITE: Package = Package {
    name: "vite",
    version: "8.4.0",
};

/// The Next.js app's framework (App Router, Turbopack's production build).
pub const NEXT: Package = Package {
    name: "next",
    version: "16.5.0",
};

/// Every npm package the runner installs into `.tools/node`.
pub const NPM_PACKAGES: &[Package] = &[PLAYWRIGHT_CORE, REACT, REACT_DOM, VITE, NEXT];

/// `bindings/react`, the package.
pub fn package_dir(ctx: &Ctx) -> PathBuf {
    ctx.root.join("bindings").join("react")
}

/// `bindings/react/tests/app`, the test app.
fn app_dir(ctx: &Ctx) -> PathBuf {
    package_dir(ctx).join("tests").join("app")
}

/// `bindings/react/tests/next`, the Next.js test app.
fn next_app_dir(ctx: &Ctx) -> PathBuf {
    package_dir(ctx).join("tests").join("next")
}

/// Where React 18 is installed: `.tools/node-react18`.
fn react_18_dir(ctx: &Ctx) -> PathBuf {
    ctx.tools().join("node-react18")
}

/// For `cargo xtask doctor`: whether React 18 ([`REACT_18`],
/// [`REACT_DOM_18`]) is in `.tools/node-react18` at its pinned version.
pub fn react_18_found(ctx: &Ctx) -> crate::doctor::Found {
    let node_modules = react_18_dir(ctx).join("node_modules");
    let wanted = [REACT_18, REACT_DOM_18];
    if wanted
        .iter()
        .all(|p| install::npm_version_in(&node_modules, p.name).as_deref() == Some(p.version))
    {
        crate::doctor::Found::Yes(format!("{} in .tools/node-react18", REACT_18.version))
    } else {
        crate::doctor::Found::No(format!(
            "npm install react@{} react-dom@{} into .tools/node-react18",
            REACT_18.version, REACT_DOM_18.version
        ))
    }
}

/// Installs React 18 ([`REACT_18`], [`REACT_DOM_18`]) into
/// `.tools/node-react18` when missing or at another version, as
/// `install::npm` installs into `.tools/node`, and returns its
/// `node_modules`. A folder of its own, so that both Reacts stay
/// installed.
pub fn install_react_18(ctx: &Ctx) -> Result<PathBuf, String> {
    install::npm_into(&react_18_dir(ctx), &[REACT_18, REACT_DOM_18])
}

/// Makes the app's imports resolve as in an app that installed the
/// packages: `tests/app/node_modules` (gitignored) links `react` and
/// `react-dom` to `react` (`.tools/node`'s, or React 18's), `likekit-react`
/// to `bindings/react` and `likekit-wasm` to the built package.
fn link_packages(ctx: &Ctx, react: &Path) -> Result<(), String> {
    link_modules(
        &app_dir(ctx).join("node_modules"),
        &[
            (REACT.name, react.join(REACT.name)),
            (REACT_DOM.name, react.join(REACT_DOM.name)),
            ("likekit-react", package_dir(ctx)),
            (web::NPM_NAME, web::package_dir(ctx)),
        ],
    )
}

/// Makes `dir` (a `node_modules` folder) anew with a symbolic link per
/// package name (scoped names too) to the package's folder.
pub fn link_modules(dir: &Path, links: &[(&str, PathBuf)]) -> Result<(), String> {
    remove(dir)?;
    mkdir(dir)?;
    for (name, target) in links {
        let link = dir.join(name);
        mkdir(link.parent().unwrap_or(dir))?;
        std::os::unix::fs::symlink(target, &link).map_err(|e| io_error("link", &link, e))?;
    }
    Ok(())
}

/// The Next.js app's `node_modules` (gitignored), as `npm install` from
/// the registry makes it: `next`, `react` and `react-dom` linked to
/// `.tools/node`, and likekit-react and likekit-wasm copied (the files
/// they publish). Not linked: Turbopack compiles a package linked from
/// outside `node_modules` as the app's own source, and then bundles it
/// even when `serverExternalPackages` names it. (The app's own
/// `package.json` keeps `likekit-react` from resolving to the package
/// folder around it, through the package's self-reference.)
fn install_next_app_packages(ctx: &Ctx, node_modules: &Path) -> Result<(), String> {
    let dir = next_app_dir(ctx).join("node_modules");
    link_modules(
        &dir,
        &[
            (NEXT.name, node_modules.join(NEXT.name)),
            (REACT.name, node_modules.join(REACT.name)),
            (REACT_DOM.name, node_modules.join(REACT_DOM.name)),
        ],
    )?;
    copy_package(&package_dir(ctx), &dir.join("likekit-react"))?;
    copy_package(&web::package_dir(ctx), &dir.join(web::NPM_NAME))
}

/// Copies the npm package in `from` to `to` as npm installs it: its
/// `package.json` and the files its `files` list names.
fn copy_package(from: &Path, to: &Path) -> Result<(), String> {
    let manifest = from.join("package.json");
    let text = std::fs::read_to_string(&manifest).map_err(|e| io_error("read", &manifest, e))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not valid JSON: {e}", manifest.display()))?;
    let files = json["files"]
        .as_array()
        .ok_or_else(|| format!("{} has no `files` list", manifest.display()))?;
    remove(to)?;
    mkdir(to)?;
    proc::copy(&manifest, &to.join("package.json"))?;
    for file in files {
        let file = file
            .as_str()
            .ok_or_else(|| format!("{}: `files` holds a non-string", manifest.display()))?;
        proc::copy(&from.join(file), &to.join(file))?;
    }
    Ok(())
}

/// `node_modules/next/dist/bin/next` of the Next.js app.
fn next_program(ctx: &Ctx) -> PathBuf {
    next_app_dir(ctx)
        .join("node_modules")
        .join(NEXT.name)
        .join("dist")
        .join("bin")
        .join("next")
}

/// `next build` of the Next.js app into `.next/external` (way 2:
/// `serverExternalPackages: ["likekit-wasm"]`) or `.next/bundled` (way 1:
/// no setting). Next.js's telemetry is off.
fn next_build(ctx: &Ctx, external: bool) -> Result<(), String> {
    let setting = if external { "1" } else { "0" };
    let mut build = Command::new("node");
    build
        .current_dir(next_app_dir(ctx))
        .arg(next_program(ctx))
        .arg("build")
        .env("NEXT_TELEMETRY_DISABLED", "1")
        .env("LIKEKIT_NEXT_EXTERNAL", setting);
    say(&format!(
        "building the likekit-react Next.js test app: LIKEKIT_NEXT_EXTERNAL={setting} {}",
        proc::display(&build)
    ));
    proc::run(&mut build)
}

/// One build of the test app.
#[derive(Debug, Clone, Copy)]
enum Build {
    /// For the browser with React's development build, where StrictMode
    /// mounts twice and React reports what it checks: what the tests run on.
    Development,
    /// For the browser with React's production build, under `/production/`:
    /// what ships, for the click → DOM figure.
    Production,
    /// For Node: the server-rendering entry `src/server.jsx`.
    Server,
}

/// `vite build` of the app into `out`.
fn vite_build(ctx: &Ctx, node_modules: &Path, out: &Path, what: Build) -> Result<(), String> {
    let mut build = Command::new("node");
    build
        .current_dir(app_dir(ctx))
        .arg(node_modules.join(VITE.name).join("bin").join("vite.js"))
        .args(["build", ".", "--emptyOutDir", "--outDir"])
        .arg(out);
    // Vite builds React's production code unless NODE_ENV says otherwise.
    let node_env = match what {
        Build::Development => "development",
        Build::Production => {
            build.args(["--base", "/production/"]);
            "production"
        }
        Build::Server => {
            build.args(["--ssr", "src/server.jsx"]);
            "production"
        }
    };
    build.env("NODE_ENV", node_env);
    say(&format!(
        "building the likekit-react test app ({what:?}): NODE_ENV={node_env} {}",
        proc::display(&build)
    ));
    proc::run(&mut build)
}

/// The builds of the Vite app with one React, and where they went.
struct AppBuilds {
    /// The browser builds: the development one, and the production one
    /// under `production/`; served as the server's `--web-root`.
    site: PathBuf,
    /// The server-rendering entry, `ssr/server.mjs`.
    ssr: PathBuf,
}

/// Builds the Vite app three times (development, production, server) with
/// the React in `react` (a `node_modules` folder) into `out`.
fn build_app(
    ctx: &Ctx,
    node_modules: &Path,
    react: &Path,
    out: &Path,
) -> Result<AppBuilds, String> {
    link_packages(ctx, react)?;
    let site = out.join("site");
    let ssr = out.join("ssr");
    // The production build goes inside the development one, which is
    // emptied first.
    vite_build(ctx, node_modules, &site, Build::Development)?;
    vite_build(
        ctx,
        node_modules,
        &site.join("production"),
        Build::Production,
    )?;
    vite_build(ctx, node_modules, &ssr, Build::Server)?;
    Ok(AppBuilds {
        site,
        ssr: ssr.join("server.mjs"),
    })
}

/// Starts a likekit-server for the tests, serving `site`; its log is
/// `<out>/<name>-server.log`.
fn start_server(ctx: &Ctx, name: &str, out: &Path, site: &Path) -> Result<TestServer, String> {
    TestServer::start(
        ctx,
        name,
        out,
        &[
            "--web-root".as_ref(),
            site.as_os_str(),
            "--write-rate-limit".as_ref(),
            "0".as_ref(),
            "--cache-ttl-ms".as_ref(),
            "0".as_ref(),
            // The Next.js app's pages call it from their own origin, on a
            // port `next start` picks.
            "--cors-origin".as_ref(),
            "*".as_ref(),
        ],
    )
}

/// One `node --test` run of the test files.
struct TestRun<'a> {
    files: &'a [PathBuf],
    /// The app's server bundle.
    ssr: &'a Path,
    /// The React the app was built with, which the tests check.
    react_version: &'a str,
    /// Where screenshots and logs go, and the JUnit report (`report`).
    out: &'a Path,
    report: &'a str,
}

/// Runs `run` against `server`, with playwright-core from `node_modules`
/// and Chromium at `chromium`.
fn node_tests(
    ctx: &Ctx,
    server: &TestServer,
    node_modules: &Path,
    chromium: &Path,
    run: &TestRun<'_>,
) -> Result<Tally, String> {
    let report = run.out.join(run.report);
    let mut cmd = Command::new("node");
    cmd.current_dir(&ctx.root)
        .args([
            "--test",
            // One file at a time: they share the server and the machine.
            "--test-concurrency=1",
            "--test-reporter=spec",
            "--test-reporter-destination=stdout",
            "--test-reporter=junit",
        ])
        .arg(format!("--test-reporter-destination={}", report.display()))
        .args(run.files)
        .env("LIKEKIT_PKG", web::package_dir(ctx))
        .env("LIKEKIT_REACT_SSR", run.ssr)
        .env("LIKEKIT_REACT_VERSION", run.react_version)
        .env("LIKEKIT_NODE_MODULES", node_modules)
        .env("LIKEKIT_CHROMIUM", chromium)
        .env("LIKEKIT_CHROMIUM_ARGS", install::chromium_args_json())
        .env("LIKEKIT_TEST_OUT", run.out)
        .env("LIKEKIT_NEXT_APP", next_app_dir(ctx))
        .env("LIKEKIT_NEXT", next_program(ctx))
        // Plain text in failure messages: the JUnit report cannot carry
        // the terminal's colour codes.
        .env("NO_COLOR", "1")
        .env("FORCE_COLOR", "0");
    server.env(&mut cmd);
    tally::run_junit(&cmd, &report)
}

/// The `react` runner.
pub fn run(ctx: &Ctx) -> Result<Tally, String> {
    if proc::which("node").is_none() {
        return Err("`node` (Node.js 20.19 or newer) is not on PATH".into());
    }
    let chromium = install::program("chromium", "chromium")?;
    let node_modules = install::npm(ctx, NPM_PACKAGES)?;
    let react_18 = install_react_18(ctx)?;
    web::build_package(ctx)?;

    let out = ctx.target_dir.join("react-test");
    mkdir(&out)?;
    let out_18 = out.join("react18");
    // React 18's builds first, so that the app is left linked to React 19.
    let app_18 = build_app(ctx, &node_modules, &react_18, &out_18)?;
    let app = build_app(ctx, &node_modules, &node_modules, &out)?;
    install_next_app_packages(ctx, &node_modules)?;
    next_build(ctx, false)?;
    next_build(ctx, true)?;

    let tests = package_dir(ctx).join("tests");
    let react_test = tests.join("react.test.mjs");
    let server = start_server(ctx, "react", &out, &app.site)?;
    let mut tally = node_tests(
        ctx,
        &server,
        &node_modules,
        &chromium,
        &TestRun {
            files: &[react_test.clone(), tests.join("next.test.mjs")],
            ssr: &app.ssr,
            react_version: REACT.version,
            out: &out,
            report: "react.xml",
        },
    )?;
    drop(server);

    // React 18: a server of its own, so that its tests start from the
    // same data as React 19's did.
    let server = start_server(ctx, "react18", &out, &app_18.site)?;
    let mut tally_18 = node_tests(
        ctx,
        &server,
        &node_modules,
        &chromium,
        &TestRun {
            files: &[react_test],
            ssr: &app_18.ssr,
            react_version: REACT_18.version,
            out: &out_18,
            report: "react18.xml",
        },
    )?;
    drop(server);
    for note in &mut tally_18.notes {
        *note = format!("React {}: {note}", REACT_18.version);
    }
    tally.add(&tally_18);
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The npm package's version is the workspace's, and it asks for the
    /// likekit-wasm of the same release.
    #[test]
    fn the_package_json_follows_the_workspace_version() {
        let text = include_str!("../../bindings/react/package.json");
        let json: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
        let version = env!("CARGO_PKG_VERSION");
        assert_eq!(json["name"], "likekit-react");
        assert_eq!(json["version"], version);
        assert_eq!(
            json["peerDependencies"][web::NPM_NAME],
            format!("^{version}")
        );
        assert_eq!(json["peerDependencies"]["react"], ">=18");
        assert_eq!(json["exports"]["."]["default"], "./src/index.js");
        assert_eq!(json["exports"]["."]["types"], "./src/index.d.ts");
    }

    /// The package ships its license files (npm cannot take them from the
    /// repository's root), and they are the root's.
    #[test]
    fn the_package_ships_the_license_files() {
        let text = include_str!("../../bindings/react/package.json");
        let json: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
        let files: Vec<&str> = json["files"]
            .as_array()
            .expect("a files list")
            .iter()
            .filter_map(serde_json::Value::as_str)
            .collect();
        assert!(files.contains(&"LICENSE-MIT") && files.contains(&"LICENSE-APACHE"));
        assert_eq!(
            include_str!("../../bindings/react/LICENSE-MIT"),
            include_str!("../../LICENSE-MIT")
        );
        assert_eq!(
            include_str!("../../bindings/react/LICENSE-APACHE"),
            include_str!("../../LICENSE-APACHE")
        );
    }

    /// The oldest React of the peer range is the second one tested.
    #[test]
    fn react_18_is_the_oldest_of_the_peer_range() {
        assert!(REACT_18.version.starts_with("18.") && REACT_DOM_18.version == REACT_18.version);
        assert!(REACT.version.starts_with("19.") && REACT_DOM.version == REACT.version);
    }
}
