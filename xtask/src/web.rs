//! The web: the wasm package (`cargo xtask bindings`), the demo site that
//! `cargo xtask demo` serves, the `wasm`, `node` and `browser` test runners
//! and the package-size bench.
//!
//! The package is built with the `wasm-release` profile (opt-level z, LTO,
//! one codegen unit, panic=abort), turned into an ES module by
//! wasm-bindgen-cli (exactly the `wasm-bindgen` version in Cargo.lock),
//! shrunk by `wasm-opt` ([`WASM_OPT_PASSES`]) and written to
//! `bindings/wasm/pkg/` with a `package.json`, so it can be imported from
//! a page, a bundler or Node.
//!
//! `wasm-opt` comes from the npm package `binaryen` (a current release, run
//! by Node), not from Debian 12, whose binaryen (108) rewrites wasm-bindgen
//! 0.2.130's externref table into one the engines reject at start-up.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::figures::{Figures, group_thousands};
use crate::install::{self, WASM_TARGET};
use crate::proc::{io_error, mkdir, remove, say, write};
use crate::server::TestServer;
use crate::tally::{self, Tally};
use crate::{Ctx, proc};

const CRATE: &str = "likekit-wasm";
/// The library's file stem, and so the stem of wasm-bindgen's files.
const LIB: &str = "likekit_wasm";
const PROFILE: &str = "wasm-release";

/// The `wasm-opt` passes run on wasm-bindgen's output, in this order: what
/// shrinks the module *gzipped*, which is what a page downloads. `-Oz`
/// shrinks the raw module most (215,921 to 190,533 bytes on 2026-12-03)
/// but grows it gzipped (82,471 to 83,229 bytes): its inlining and
/// reordering undo the repetition gzip feeds on. These passes merge
/// identical functions, drop what nothing uses and tidy locals and blocks
/// without moving code, over again until the module stops shrinking
/// (`--converge`, about 2 s more), then drop redundant stores and the
/// target-features section only tools read: 207,269 bytes, 80,122
/// gzipped (2026-12-07; 80,948 without those three).
const WASM_OPT_PASSES: &[&str] = &[
    "--converge",
    "--duplicate-function-elimination",
    "--remove-unused-module-elements",
    "--remove-unused-brs",
    "--remove-unused-names",
    "--merge-blocks",
    "--simplify-locals-nostructure",
    "--coalesce-locals",
    "--reorder-locals",
    "--vacuum",
    "--optimize-instructions",
    "--rse",
    "--strip-target-features",
];

/// The wasm features wasm-bindgen 0.2.130's output uses, which `wasm-opt`
/// must be told about.
const WASM_FEATURES: &[&str] = &[
    "--enable-reference-types",
    "--enable-bulk-memory",
    "--enable-nontrapping-float-to-int",
    "--enable-sign-ext",
    "--enable-mutable-globals",
];

/// The package's name on npm.
pub const NPM_NAME: &str = "likekit-wasm";
pub const DEMO_SEED: &str = "examples/demo-seed.json";

// ---------------------------------------------------------------- the package

/// The package folder, `bindings/wasm/pkg`.
pub fn package_dir(ctx: &Ctx) -> PathBuf {
    ctx.root.join("bindings").join("wasm").join("pkg")
}

/// The Node entry point: importing it reads nothing; the module is read
/// from disk by the first `init()`, or by the first client or scripted
/// server made without it, so the same code runs in browsers and Node and
/// a server bundle (Next.js) can import the package.
const NODE_ENTRY: &str = include_str!("../templates/node.js");

/// Appended to wasm-bindgen's glue (`likekit_wasm.js`): a second `free()`
/// and a `shutdown()` after `free()` do nothing instead of throwing.
const GLUE_TAIL: &str = include_str!("../templates/glue-tail.js");

/// Put before wasm-bindgen's declarations (`likekit_wasm.d.ts`): they name
/// `Symbol.dispose`, which TypeScript knows only with the `esnext.disposable`
/// library, absent from the `lib` of most app templates (a strict build
/// without `skipLibCheck` failed on it).
const DECLARATIONS_HEAD: &str = "/// <reference lib=\"esnext.disposable\" />\n";

/// The mock server's admin client, shipped as `likekit-wasm/testing` for an
/// app's own tests.
const ADMIN_CLIENT: &str = include_str!("../../server-mock/clients/js/admin.js");
const ADMIN_CLIENT_TYPES: &str = include_str!("../../server-mock/clients/js/admin.d.ts");

/// The licences the package is under (`MIT OR Apache-2.0`, as its
/// `license` says), shipped in it.
const LICENSE_MIT: &str = include_str!("../../LICENSE-MIT");
const LICENSE_APACHE: &str = include_str!("../../LICENSE-APACHE");

/// The package's README on npm.
const PACKAGE_README: &str = include_str!("../templates/wasm-README.md");

/// The web guide, `bindings/wasm/README.md`, shipped in the package as
/// `GUIDE.md` (see [`package_guide`]).
const WEB_GUIDE: &str = include_str!("../../bindings/wasm/README.md");

/// The web guide as the package ships it: a link to a file of the
/// repository (`[src/types.rs](src/types.rs)`, `[README](../../README.md#web)`),
/// which the package does not hold, is left as its text; web links and
/// links within the guide (`#…`) stay.
fn package_guide(guide: &str) -> String {
    let mut out = String::with_capacity(guide.len());
    let mut rest = guide;
    while let Some(start) = rest.find('[') {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        // `[text](target)`: text without brackets, a target without spaces.
        let link = after.find("](").and_then(|middle| {
            let text = &after[1..middle];
            let target_len = after[middle + 2..].find(')')?;
            let target = &after[middle + 2..middle + 2 + target_len];
            let is_link = !(target.is_empty()
                || text.contains(['[', ']'])
                || target.contains(char::is_whitespace));
            is_link.then_some((text, target, middle + 2 + target_len + 1))
        });
        match link {
            Some((text, target, end))
                if !["http://", "https://", "#"]
                    .iter()
                    .any(|kept| target.starts_with(kept)) =>
            {
                out.push_str(text);
                rest = &after[end..];
            }
            _ => {
                out.push('[');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn package_json(version: &str) -> String {
    format!(
        r#"{{
  "name": "{NPM_NAME}",
  "version": "{version}",
  "description": "LikeKit for the web: an instant, exact like button (Rust core compiled to WebAssembly)",
  "license": "MIT OR Apache-2.0",
  "type": "module",
  "main": "./{LIB}.js",
  "module": "./{LIB}.js",
  "types": "./{LIB}.d.ts",
  "exports": {{
    ".": {{
      "types": "./{LIB}.d.ts",
      "node": "./node.js",
      "default": "./{LIB}.js"
    }},
    "./testing": {{
      "types": "./testing.d.ts",
      "default": "./testing.js"
    }},
    "./{LIB}_bg.wasm": "./{LIB}_bg.wasm",
    "./package.json": "./package.json"
  }},
  "files": [
    "{LIB}.js",
    "{LIB}.d.ts",
    "{LIB}_bg.wasm",
    "{LIB}_bg.wasm.d.ts",
    "node.js",
    "testing.js",
    "testing.d.ts",
    "README.md",
    "GUIDE.md",
    "LICENSE-MIT",
    "LICENSE-APACHE"
  ],
  "sideEffects": false,
  "engines": {{
    "node": ">=18"
  }},
  "keywords": ["like", "button", "optimistic", "wasm"]
}}
"#
    )
}

/// The sizes of the package's two downloads, in bytes.
#[derive(Debug, Clone, Copy)]
pub struct PackageSizes {
    /// `likekit_wasm_bg.wasm`.
    pub wasm: u64,
    pub wasm_gzip: u64,
    /// `likekit_wasm.js`, the glue wasm-bindgen writes.
    pub js: u64,
    pub js_gzip: u64,
}

/// The bytes of `file` gzipped at level 9 (by `gzip`), or `None` without
/// gzip.
pub fn gzip_size(file: &Path) -> Option<u64> {
    let out = Command::new("gzip")
        .args(["-9", "-c"])
        .arg(file)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout.len() as u64)
}

/// What the package is made from, so an unchanged build is not redone.
fn stamp(wasm: &Path, bindgen: &Path, wasm_opt: &Path) -> Option<String> {
    let meta = fs::metadata(wasm).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    let mut hasher = DefaultHasher::new();
    (
        NODE_ENTRY,
        PACKAGE_README,
        WEB_GUIDE,
        package_json(""),
        ADMIN_CLIENT,
        ADMIN_CLIENT_TYPES,
        GLUE_TAIL,
        DECLARATIONS_HEAD,
        LICENSE_MIT,
        LICENSE_APACHE,
    )
        .hash(&mut hasher);
    bindgen.hash(&mut hasher);
    (wasm_opt, install::BINARYEN.version, WASM_OPT_PASSES).hash(&mut hasher);
    Some(format!(
        "{} {} {:x}",
        meta.len(),
        modified.as_nanos(),
        hasher.finish()
    ))
}

/// `RUSTFLAGS` (any already set, and more) that shorten the paths a
/// panic's location names: a dependency's file is named from its crate
/// folder (`js-sys-0.3.107/src/lib.rs`), not from cargo's registry
/// (`/root/.cargo/registry/src/index.crates.io-…/js-sys-…`). The module
/// carries each such path as text: shortened, it is about 150 bytes
/// smaller gzipped, and its size no longer depends on where cargo keeps
/// its registry on the machine that builds it. (The standard library's
/// paths are compiled in already and stay as they are.)
fn rustflags_without_registry_paths() -> String {
    let mut flags = std::env::var("RUSTFLAGS").unwrap_or_default();
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")));
    let sources = home.map(|home| home.join("registry").join("src"));
    for index in sources
        .and_then(|dir| fs::read_dir(dir).ok())
        .into_iter()
        .flatten()
    {
        let Ok(index) = index else { continue };
        // A path with a space cannot be one of RUSTFLAGS' words: left as it is.
        let Some(path) = index
            .path()
            .to_str()
            .filter(|p| !p.contains(' '))
            .map(str::to_owned)
        else {
            continue;
        };
        flags.push_str(&format!(" --remap-path-prefix={path}/="));
    }
    flags.trim().to_owned()
}

/// Builds `bindings/wasm/pkg/`: installs the wasm32 target,
/// wasm-bindgen-cli and binaryen when missing, builds the crate with the
/// `wasm-release` profile, generates the ES module and its `.d.ts`, runs
/// `wasm-opt` on the module, adds `node.js`, `package.json` and a README,
/// and prints and returns the sizes of the `.wasm` and the JS glue.
pub fn build_package(ctx: &Ctx) -> Result<PackageSizes, String> {
    install::rustup_target(WASM_TARGET)?;
    let bindgen = install::wasm_bindgen_cli(ctx)?;
    let wasm_opt = install::npm(ctx, &[install::BINARYEN])?
        .join(install::BINARYEN.name)
        .join("bin")
        .join("wasm-opt");

    let mut build = proc::cargo();
    build.current_dir(&ctx.root).args([
        "build",
        "--package",
        CRATE,
        "--lib",
        "--target",
        WASM_TARGET,
        "--profile",
        PROFILE,
    ]);
    build.env("RUSTFLAGS", rustflags_without_registry_paths());
    say(&format!(
        "building the web package ({})",
        proc::display(&build)
    ));
    proc::run(&mut build)?;
    let wasm = ctx
        .target_dir
        .join(WASM_TARGET)
        .join(PROFILE)
        .join(format!("{LIB}.wasm"));

    let dir = package_dir(ctx);
    let stamp_file = ctx.target_dir.join("wasm-pkg.stamp");
    let stamp = stamp(&wasm, &bindgen, &wasm_opt);
    let module = dir.join(format!("{LIB}_bg.wasm"));
    let unchanged = stamp.is_some()
        && fs::read_to_string(&stamp_file).ok() == stamp
        && module.is_file()
        && dir.join("package.json").is_file();

    if unchanged {
        say(&format!("{} is up to date", dir.display()));
    } else {
        let staging = ctx.root.join("bindings").join("wasm").join(".pkg.partial");
        remove(&staging)?;
        let mut generate = Command::new(&bindgen);
        generate
            .args([
                "--target",
                "web",
                "--remove-name-section",
                "--remove-producers-section",
                "--out-name",
                LIB,
                "--out-dir",
            ])
            .arg(&staging)
            .arg(&wasm);
        say(&format!(
            "generating the ES module ({})",
            proc::display(&generate)
        ));
        proc::run(&mut generate)?;
        let module = staging.join(format!("{LIB}_bg.wasm"));
        let mut optimize = Command::new("node");
        optimize
            .arg(&wasm_opt)
            .args(WASM_OPT_PASSES)
            .args(WASM_FEATURES)
            .arg(&module)
            .arg("-o")
            .arg(&module);
        say(&format!(
            "shrinking the module ({})",
            proc::display(&optimize)
        ));
        proc::run(&mut optimize)?;
        let glue = staging.join(format!("{LIB}.js"));
        let text = fs::read_to_string(&glue).map_err(|e| io_error("read", &glue, e))?;
        write(&glue, &format!("{text}{GLUE_TAIL}"))?;
        let declarations = staging.join(format!("{LIB}.d.ts"));
        let text =
            fs::read_to_string(&declarations).map_err(|e| io_error("read", &declarations, e))?;
        write(&declarations, &format!("{DECLARATIONS_HEAD}{text}"))?;
        write(&staging.join("node.js"), NODE_ENTRY)?;
        write(&staging.join("README.md"), PACKAGE_README)?;
        write(&staging.join("LICENSE-MIT"), LICENSE_MIT)?;
        write(&staging.join("LICENSE-APACHE"), LICENSE_APACHE)?;
        write(&staging.join("GUIDE.md"), &package_guide(WEB_GUIDE))?;
        write(&staging.join("testing.js"), ADMIN_CLIENT)?;
        write(&staging.join("testing.d.ts"), ADMIN_CLIENT_TYPES)?;
        write(
            &staging.join("package.json"),
            // xtask shares the workspace version.
            &package_json(env!("CARGO_PKG_VERSION")),
        )?;
        remove(&dir)?;
        fs::rename(&staging, &dir).map_err(|e| io_error("move", &staging, e))?;
        if let Some(stamp) = &stamp {
            write(&stamp_file, stamp)?;
        }
    }

    let sizes = |file: &Path| -> Result<(u64, u64), String> {
        let bytes = fs::metadata(file)
            .map_err(|e| io_error("read", file, e))?
            .len();
        let gzipped =
            gzip_size(file).ok_or_else(|| format!("could not gzip {}", file.display()))?;
        Ok((bytes, gzipped))
    };
    let (wasm, wasm_gzip) = sizes(&module)?;
    let (js, js_gzip) = sizes(&dir.join(format!("{LIB}.js")))?;
    let shown = |n: u64| group_thousands(n as f64);
    say(&format!(
        "web package {}: {LIB}_bg.wasm is {} bytes, {} gzipped (-9); {LIB}.js is {} bytes, {} gzipped",
        dir.display(),
        shown(wasm),
        shown(wasm_gzip),
        shown(js),
        shown(js_gzip),
    ));
    Ok(PackageSizes {
        wasm,
        wasm_gzip,
        js,
        js_gzip,
    })
}

// ---------------------------------------------------------------- the demo site

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    mkdir(to)?;
    for entry in fs::read_dir(from).map_err(|e| io_error("read", from, e))? {
        let path = entry.map_err(|e| io_error("read", from, e))?.path();
        let target = to.join(path.file_name().unwrap_or_default());
        if path.is_dir() {
            copy_dir(&path, &target)?;
        } else {
            proc::copy(&path, &target)?;
        }
    }
    Ok(())
}

/// Builds the package and stages the demo site that `cargo xtask demo`
/// serves, `target/web-demo`: `examples/web/*`, the demo seed (the page
/// reads its users and posts) and the package under `pkg/`. Returns its
/// folder.
pub fn stage_site(ctx: &Ctx) -> Result<PathBuf, String> {
    build_package(ctx)?;
    let site = ctx.target_dir.join("web-demo");
    remove(&site)?;
    copy_dir(&ctx.root.join("examples").join("web"), &site)?;
    // The page's own tests are not served.
    let _ = fs::remove_dir_all(site.join("tests"));
    proc::copy(&ctx.root.join(DEMO_SEED), &site.join("demo-seed.json"))?;
    copy_dir(&package_dir(ctx), &site.join("pkg"))?;
    say(&format!("demo site staged in {}", site.display()));
    Ok(site)
}

// ---------------------------------------------------------------- the server

/// `target/web-test`: server logs, screenshots.
fn test_output(ctx: &Ctx) -> Result<PathBuf, String> {
    let out = ctx.target_dir.join("web-test");
    mkdir(&out)?;
    Ok(out)
}

// ---------------------------------------------------------------- runners

/// The `wasm` runner: the binding's own tests (`bindings/wasm/tests/surface.rs`)
/// compiled to wasm32 and run in Node by wasm-bindgen-test-runner.
pub fn run_wasm(ctx: &Ctx) -> Result<Tally, String> {
    install::rustup_target(WASM_TARGET)?;
    let bindgen = install::wasm_bindgen_cli(ctx)?;
    let test_runner = bindgen.with_file_name("wasm-bindgen-test-runner");
    if !proc::is_executable(&test_runner) {
        return Err(format!(
            "{} is missing (it comes with wasm-bindgen-cli)",
            test_runner.display()
        ));
    }
    let mut cmd = proc::cargo();
    cmd.current_dir(&ctx.root)
        .args(["test", "--package", CRATE, "--target", WASM_TARGET])
        .args(["--test", "surface", "--test", "drift", "--no-fail-fast"])
        .env("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER", &test_runner);
    tally::run_libtest(&cmd)
}

fn js_test(ctx: &Ctx, file: &str) -> PathBuf {
    ctx.root
        .join("bindings")
        .join("wasm")
        .join("tests")
        .join("js")
        .join(file)
}

/// Makes `import … from "likekit-wasm"` in the JavaScript tests resolve to
/// the built package, through its `package.json` as an app would:
/// `bindings/wasm/tests/js/node_modules/likekit-wasm` links to `pkg/`.
fn link_package(ctx: &Ctx) -> Result<(), String> {
    let modules = js_test(ctx, "node_modules");
    mkdir(&modules)?;
    let link = modules.join(NPM_NAME);
    remove(&link)?;
    std::os::unix::fs::symlink(package_dir(ctx), &link).map_err(|e| io_error("link", &link, e))
}

/// `node --test` with `options` on a file (the caller may add more): the spec reporter on the
/// terminal and a JUnit report, which the runner counts.
fn node_test(ctx: &Ctx, options: &[&str], file: &Path, report: &Path) -> Result<Command, String> {
    if proc::which("node").is_none() {
        return Err("`node` (Node.js 20 or newer) is not on PATH".into());
    }
    link_package(ctx)?;
    let mut cmd = Command::new("node");
    cmd.current_dir(&ctx.root)
        .args([
            "--test",
            "--test-reporter=spec",
            "--test-reporter-destination=stdout",
        ])
        .arg("--test-reporter=junit")
        .arg(format!("--test-reporter-destination={}", report.display()))
        .args(options)
        .arg(file)
        .env("LIKEKIT_PKG", package_dir(ctx))
        .env("LIKEKIT_TEST_OUT", test_output(ctx)?);
    Ok(cmd)
}

/// The `node` runner: `node --test` loads the built package, plays the
/// train against the real server on loopback, holds the web transport to
/// the native one's rules against canned answers from a raw TCP server on
/// loopback, replays the conformance scenarios over a `ScriptedServer`,
/// plays the journal's reloads and tabs, and checks that the Node entry
/// imports without reading the `.wasm`.
pub fn run_node(ctx: &Ctx) -> Result<Tally, String> {
    build_package(ctx)?;
    let server = TestServer::start(
        ctx,
        "node",
        &test_output(ctx)?,
        &[
            "--write-rate-limit".as_ref(),
            "0".as_ref(),
            "--cache-ttl-ms".as_ref(),
            "0".as_ref(),
        ],
    )?;
    let report = test_output(ctx)?.join("node.xml");
    let mut cmd = node_test(ctx, &[], &js_test(ctx, "client.test.mjs"), &report)?;
    cmd.arg(js_test(ctx, "transport.test.mjs"))
        .arg(js_test(ctx, "conformance.test.mjs"))
        .arg(js_test(ctx, "journal.test.mjs"))
        .arg(js_test(ctx, "node-entry.test.mjs"))
        .env("LIKEKIT_CONFORMANCE", ctx.conformance_scenarios());
    server.env(&mut cmd);
    let tally = tally::run_junit(&cmd, &report);
    drop(server);
    tally
}

/// The `browser` runner: the demo page in Debian's headless Chromium,
/// driven by playwright-core, against a server set up as `cargo xtask demo`
/// sets it up; then two tabs of one viewer on that server's origin, the
/// README's multi-tab race and its Web Locks recipe (`tabs.test.mjs`). The
/// files run one after the other: the demo page's tests replace the
/// server's fault rules and empty its request journal.
pub fn run_browser(ctx: &Ctx) -> Result<Tally, String> {
    let chromium = install::program("chromium", "chromium")?;
    let node_modules = install::npm(ctx, &[install::PLAYWRIGHT_CORE])?;
    let site = stage_site(ctx)?;
    let server = TestServer::start(
        ctx,
        "browser",
        &test_output(ctx)?,
        &[
            "--seed".as_ref(),
            ctx.root.join(DEMO_SEED).as_os_str(),
            "--web-root".as_ref(),
            site.as_os_str(),
        ],
    )?;
    let report = test_output(ctx)?.join("browser.xml");
    let mut cmd = node_test(
        ctx,
        &["--test-concurrency=1"],
        &js_test(ctx, "demo-page.test.mjs"),
        &report,
    )?;
    cmd.arg(js_test(ctx, "tabs.test.mjs"))
        .env("LIKEKIT_DEMO_URL", format!("{}/", server.url))
        .env("LIKEKIT_ADMIN_KEY", &server.admin_key)
        .env("LIKEKIT_NODE_MODULES", &node_modules)
        .env("LIKEKIT_CHROMIUM", &chromium)
        .env("LIKEKIT_CHROMIUM_ARGS", install::chromium_args_json());
    let tally = tally::run_junit(&cmd, &report);
    drop(server);
    tally
}

// ---------------------------------------------------------------- bench

/// The package's sizes before the diet of issue 17, at commit 35c29f1
/// (HTTP through reqwest, no wasm-opt), measured as [`build_package`]
/// measures: the reference the bench shows the sizes beside. (The report
/// of 2026-12-02 had 537,746 and 206,350 bytes for the `.wasm`; the
/// scripted server and Promise tokens came after it.)
const BEFORE_THE_DIET: PackageSizes = PackageSizes {
    wasm: 592_119,
    wasm_gzip: 223_040,
    js: 40_089,
    js_gzip: 9_052,
};

/// The `wasm` bench suite: the sizes of the package's `.wasm` and JS glue,
/// raw and gzipped, and the same before the diet beside them.
pub fn bench_size(ctx: &Ctx, figures: &mut Figures) -> Result<(), String> {
    let now = build_package(ctx)?;
    for (when, sizes) in [("", now), ("_before_diet", BEFORE_THE_DIET)] {
        for (what, bytes) in [
            ("wasm_pkg", sizes.wasm),
            ("wasm_pkg_gzip", sizes.wasm_gzip),
            ("wasm_js", sizes.js),
            ("wasm_js_gzip", sizes.js_gzip),
        ] {
            figures.insert(format!("{what}{when}_bytes"), bytes as f64);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_package_json_is_valid_and_points_at_real_files() {
        let text = package_json("1.2.3");
        let json: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(json["name"], NPM_NAME);
        assert_eq!(json["version"], "1.2.3");
        assert_eq!(json["exports"]["."]["node"], "./node.js");
        assert_eq!(json["exports"]["."]["default"], "./likekit_wasm.js");
        assert!(NODE_ENTRY.contains("initSync"));
        // Importing the package runs nothing a bundler must keep.
        assert_eq!(json["sideEffects"], false);
        let files = json["files"].as_array().expect("a file list");
        assert!(files.iter().any(|f| f == "GUIDE.md"), "the web guide ships");
        assert!(
            PACKAGE_README.contains("`GUIDE.md`"),
            "and the README says where it is"
        );
        // The licences its `license` names ship with it.
        assert_eq!(json["license"], "MIT OR Apache-2.0");
        for licence in ["LICENSE-MIT", "LICENSE-APACHE"] {
            assert!(files.iter().any(|f| f == licence), "{licence} ships");
        }
        assert!(LICENSE_APACHE.contains("Apache License\n                        Version 2.0"));
        assert!(LICENSE_MIT.starts_with("Copyright (c) 2026 The LikeKit developers"));
    }

    #[test]
    fn the_shipped_guide_keeps_web_links_and_drops_links_into_the_repository() {
        let guide = "See the [README](../../README.md#web), [src/types.rs](src/types.rs), \
                     [tsify](https://docs.rs/tsify), [below](#size), a `[T]`, \
                     `[Symbol.dispose]()` and [x] alone.";
        assert_eq!(
            package_guide(guide),
            "See the README, src/types.rs, [tsify](https://docs.rs/tsify), [below](#size), \
             a `[T]`, `[Symbol.dispose]()` and [x] alone."
        );
        let shipped = package_guide(WEB_GUIDE);
        for relative in ["](../", "](src/", "](tests/"] {
            assert!(!shipped.contains(relative), "{relative} left in GUIDE.md");
        }
        assert!(shipped.contains("`[Symbol.dispose]()`"));
        assert!(shipped.contains("## Taps that survive a reload"));
    }
}
