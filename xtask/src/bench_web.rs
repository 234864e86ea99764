//! The `web` bench suite: LikeKit's like button in a browser, beside the
//! same button written with TanStack Query, the library a React team would
//! otherwise pick.
//!
//! Three small React apps live in `bench/web` and share the button's markup
//! (`card.jsx`): `likekit/` (likekit-react over likekit-wasm), `tanstack/`
//! (`useQuery` + `useMutation` with the optimistic update of TanStack's
//! guide) and `floor/` (React alone, no network: only its size is used).
//! xtask builds each with Vite in production mode into
//! `target/bench-web/site/<app>/`, gzips what each ships, serves the site
//! with the release server (`--web-root`, so the apps and the API share an
//! origin) and runs `bench/web/bench.mjs` in Node, which drives Debian's
//! headless Chromium with playwright-core and prints the timings and call
//! counts as `likekit-metric` lines. `bench/web/README.md` says how each
//! figure is taken.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::figures::{Figures, parse_metrics};
use crate::install::{self, PLAYWRIGHT_CORE, Package, TANSTACK_QUERY};
use crate::proc::{self, io_error, say};
use crate::react::{self, REACT, REACT_DOM, VITE};
use crate::server::{self, TestServer};
use crate::{Ctx, web};

/// The npm packages the suite installs into `.tools/node`.
const NPM_PACKAGES: &[Package] = &[PLAYWRIGHT_CORE, REACT, REACT_DOM, VITE, TANSTACK_QUERY];

/// What one built app ships, each file gzipped on its own at level 9 as a
/// server would send it: its JavaScript and its WebAssembly.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Shipped {
    js: u64,
    wasm: u64,
}

impl Shipped {
    fn total(self) -> u64 {
        self.js + self.wasm
    }
}

/// Sums the gzipped sizes of the `.js` and `.wasm` files under `dir`.
fn shipped(dir: &Path) -> Result<Shipped, String> {
    let mut sizes = Shipped::default();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).map_err(|e| io_error("read", &dir, e))? {
            let path = entry.map_err(|e| io_error("read", &dir, e))?.path();
            let slot = match path.extension().and_then(|e| e.to_str()) {
                _ if path.is_dir() => {
                    stack.push(path);
                    continue;
                }
                Some("js" | "mjs") => &mut sizes.js,
                Some("wasm") => &mut sizes.wasm,
                _ => continue,
            };
            *slot += web::gzip_size(&path)
                .ok_or_else(|| format!("could not gzip {}", path.display()))?;
        }
    }
    Ok(sizes)
}

/// The size figures: what each app ships, and what each library adds to
/// the floor (React alone with the same button).
fn size_figures(likekit: Shipped, tanstack: Shipped, floor: Shipped) -> Figures {
    let beyond = |app: Shipped| app.total().saturating_sub(floor.total());
    [
        ("web_likekit_shipped_gzip_bytes", likekit.total()),
        ("web_likekit_js_gzip_bytes", likekit.js),
        ("web_likekit_wasm_gzip_bytes", likekit.wasm),
        ("web_tanstack_shipped_gzip_bytes", tanstack.total()),
        ("web_react_floor_gzip_bytes", floor.total()),
        ("web_likekit_beyond_react_gzip_bytes", beyond(likekit)),
        ("web_tanstack_beyond_react_gzip_bytes", beyond(tanstack)),
    ]
    .into_iter()
    .map(|(name, bytes)| (name.to_owned(), bytes as f64))
    .collect()
}

/// `vite build bench/web/<app>` in production mode into `out`, served
/// under `/<app>/`.
fn vite_build(ctx: &Ctx, node_modules: &Path, app: &str, out: &Path) -> Result<(), String> {
    let dir = ctx.root.join("bench").join("web");
    let mut build = Command::new("node");
    build
        .current_dir(&dir)
        .arg(node_modules.join(VITE.name).join("bin").join("vite.js"))
        .args(["build", app, "--config", "vite.config.mjs", "--emptyOutDir"])
        .arg("--base")
        .arg(format!("/{app}/"))
        .arg("--outDir")
        .arg(out)
        .env("NODE_ENV", "production");
    say(&format!(
        "building the {app} bench app: {}",
        proc::display(&build)
    ));
    proc::run(&mut build)
}

/// The `web` bench suite.
pub fn run(ctx: &Ctx, figures: &mut Figures) -> Result<(), String> {
    if proc::which("node").is_none() {
        return Err("`node` (Node.js 20.19 or newer) is not on PATH".into());
    }
    let chromium = install::program("chromium", "chromium")?;
    let node_modules = install::npm(ctx, NPM_PACKAGES)?;
    web::build_package(ctx)?;
    let dir = ctx.root.join("bench").join("web");
    let module = |package: Package| (package.name, node_modules.join(package.name));
    react::link_modules(
        &dir.join("node_modules"),
        &[
            module(REACT),
            module(REACT_DOM),
            module(TANSTACK_QUERY),
            ("likekit-react", react::package_dir(ctx)),
            (web::NPM_NAME, web::package_dir(ctx)),
        ],
    )?;

    let out = ctx.target_dir.join("bench-web");
    let site = out.join("site");
    proc::remove(&site)?;
    // Each app is a folder of bench/web, served under /<app>/.
    let build = |app: &str| {
        let built = site.join(app);
        vite_build(ctx, &node_modules, app, &built)?;
        shipped(&built)
    };
    let likekit = build("likekit")?;
    let tanstack = build("tanstack")?;
    let floor = build("floor")?;
    figures.extend(size_figures(likekit, tanstack, floor));

    let binary = server::build_release(ctx)?;
    // One viewer clicks a few hundred times in a row: no write rate limit.
    let server = TestServer::start_binary(
        ctx,
        &binary,
        "web",
        &out,
        &[
            "--web-root".as_ref(),
            site.as_os_str(),
            "--write-rate-limit".as_ref(),
            "0".as_ref(),
        ],
    )?;
    let mut cmd = Command::new("node");
    cmd.current_dir(&ctx.root)
        .arg(dir.join("bench.mjs"))
        .env("LIKEKIT_PKG", web::package_dir(ctx))
        .env("LIKEKIT_NODE_MODULES", &node_modules)
        .env("LIKEKIT_CHROMIUM", &chromium)
        .env("LIKEKIT_CHROMIUM_ARGS", install::chromium_args_json());
    server.env(&mut cmd);
    println!("xtask: {}", proc::display(&cmd));
    let status = proc::stream(&cmd, |line| figures.extend(parse_metrics(line)))?;
    drop(server);
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("`node bench/web/bench.mjs` failed ({status})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_figures_add_up() {
        let likekit = Shipped {
            js: 70_000,
            wasm: 200_000,
        };
        let tanstack = Shipped {
            js: 75_000,
            wasm: 0,
        };
        let floor = Shipped {
            js: 60_000,
            wasm: 0,
        };
        let figures = size_figures(likekit, tanstack, floor);
        let get = |name: &str| figures.get(name).copied();
        assert_eq!(get("web_likekit_shipped_gzip_bytes"), Some(270_000.0));
        assert_eq!(get("web_likekit_wasm_gzip_bytes"), Some(200_000.0));
        assert_eq!(get("web_tanstack_shipped_gzip_bytes"), Some(75_000.0));
        assert_eq!(get("web_react_floor_gzip_bytes"), Some(60_000.0));
        assert_eq!(get("web_likekit_beyond_react_gzip_bytes"), Some(210_000.0));
        assert_eq!(get("web_tanstack_beyond_react_gzip_bytes"), Some(15_000.0));
    }
}
