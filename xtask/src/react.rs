//! The `react` runner: likekit-react (`bindings/react`) in a React 19 app
//! built with Vite (`bindings/react/tests/app`), in Debian's headless
//! Chromium driven by playwright-core, against likekit-server on loopback,
//! and the app's screens rendered by react-dom/server in Node.
//!
//! likekit-react itself has no build step: it is a plain ES module with a
//! hand-written `.d.ts`. Only its test app is built, twice: for the browser
//! (served by the server's `--web-root`, so the page and the API share an
//! origin) and for Node (`--ssr`), both into `target/react-test/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::install::{self, PLAYWRIGHT_CORE, Package};
use crate::proc::{io_error, mkdir, remove, say};
use crate::runner::{self, Tally};
use crate::server::TestServer;
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
/// Builds the test app. Its own transform compiles JSX, so no plugin.
pub const VITE: Package = Package {
    name: "vite",
    version: "8.4.0",
};

/// Every npm package the runner installs into `.tools/node`.
pub const NPM_PACKAGES: &[Package] = &[PLAYWRIGHT_CORE, REACT, REACT_DOM, VITE];

/// `bindings/react`, the package.
pub fn package_dir(ctx: &Ctx) -> PathBuf {
    ctx.root.join("bindings").join("react")
}

/// `bindings/react/tests/app`, the test app.
fn app_dir(ctx: &Ctx) -> PathBuf {
    package_dir(ctx).join("tests").join("app")
}

/// Makes the app's imports resolve as in an app that installed the
/// packages: `tests/app/node_modules` (gitignored) links `react` and
/// `react-dom` to `.tools/node`, `likekit-react` to `bindings/react` and
/// `likekit-wasm` to the built package.
fn link_packages(ctx: &Ctx, node_modules: &Path) -> Result<(), String> {
    link_modules(
        &app_dir(ctx).join("node_modules"),
        &[
            (REACT.name, node_modules.join(REACT.name)),
            (REACT_DOM.name, node_modules.join(REACT_DOM.name)),
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

/// The `react` runner.
pub fn run(ctx: &Ctx) -> Result<Tally, String> {
    if proc::which("node").is_none() {
        return Err("`node` (Node.js 20.19 or newer) is not on PATH".into());
    }
    let chromium = install::program("chromium", "chromium")?;
    let node_modules = install::npm(ctx, NPM_PACKAGES)?;
    web::build_package(ctx)?;
    link_packages(ctx, &node_modules)?;

    let out = ctx.target_dir.join("react-test");
    mkdir(&out)?;
    let site = out.join("site");
    let ssr = out.join("ssr");
    // The production build goes inside the development one, which is
    // emptied first.
    vite_build(ctx, &node_modules, &site, Build::Development)?;
    vite_build(
        ctx,
        &node_modules,
        &site.join("production"),
        Build::Production,
    )?;
    vite_build(ctx, &node_modules, &ssr, Build::Server)?;

    let server = TestServer::start(
        ctx,
        "react",
        &out,
        &[
            "--web-root".as_ref(),
            site.as_os_str(),
            "--write-rate-limit".as_ref(),
            "0".as_ref(),
            "--cache-ttl-ms".as_ref(),
            "0".as_ref(),
        ],
    )?;
    let report = out.join("react.xml");
    let mut cmd = Command::new("node");
    cmd.current_dir(&ctx.root)
        .args([
            "--test",
            "--test-reporter=spec",
            "--test-reporter-destination=stdout",
            "--test-reporter=junit",
        ])
        .arg(format!("--test-reporter-destination={}", report.display()))
        .arg(package_dir(ctx).join("tests").join("react.test.mjs"))
        .env("LIKEKIT_PKG", web::package_dir(ctx))
        .env("LIKEKIT_REACT_SSR", ssr.join("server.mjs"))
        .env("LIKEKIT_NODE_MODULES", &node_modules)
        .env("LIKEKIT_CHROMIUM", &chromium)
        .env("LIKEKIT_TEST_OUT", &out)
        // Plain text in failure messages: the JUnit report cannot carry
        // the terminal's colour codes.
        .env("NO_COLOR", "1")
        .env("FORCE_COLOR", "0");
    server.env(&mut cmd);
    let tally = runner::run_junit(&cmd, &report);
    drop(server);
    tally
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
}
