//! The one debug build every runner shares.
//!
//! Cargo settles each crate's features by the packages and targets a
//! command selects, and a crate built with other features, or needed by
//! other targets, is compiled again under another name. `cargo build -p
//! likekit-server`, `-p likekit-ffi` and the Rust runner's `--workspace
//! --all-targets` each compiled tokio, axum, rustls and aws-lc-rs on their
//! own: a run from scratch compiled the server four times and wrote twice
//! the disk it needs. So every debug program xtask runs (the server, the
//! FFI library, uniffi-bindgen, the TLS front) comes from one `cargo build
//! --workspace --all-targets`, the build cargo-nextest makes for the Rust
//! runner; the libtest parts of that runner select `--workspace` too.

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::{Ctx, proc};

/// The workspace build's outcome, once per xtask run: the runners that
/// need it each ask, and cargo is asked once.
static BUILT: OnceLock<Result<(), String>> = OnceLock::new();

/// Builds every target of the workspace (debug profile), once per xtask
/// run.
pub fn workspace(ctx: &Ctx) -> Result<(), String> {
    BUILT
        .get_or_init(|| {
            let mut build = proc::cargo();
            build
                .current_dir(&ctx.root)
                .args(["build", "--workspace", "--all-targets"]);
            proc::say(&format!(
                "building the workspace ({}; every runner shares it)",
                proc::display(&build)
            ));
            proc::run(&mut build)
        })
        .clone()
}

/// A program of the workspace build, building the workspace first.
pub fn debug_program(ctx: &Ctx, name: &str) -> Result<PathBuf, String> {
    workspace(ctx)?;
    let program = ctx.target_dir.join("debug").join(name);
    if program.is_file() {
        Ok(program)
    } else {
        Err(format!("the workspace build left no {}", program.display()))
    }
}
