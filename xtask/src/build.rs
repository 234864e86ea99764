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

/// About what a `cargo xtask test` from scratch writes into `target/` and
/// `.tools/`, in GB (measured: xtask/README.md, "One build").
const FROM_SCRATCH_GB: f64 = 5.0;

/// Says how much disk is free where the target directory is, and warns
/// when that is less than a run from scratch writes: a full disk shows up
/// later as a compiler's "No space left on device" in one runner, then as
/// every later runner failing. Only a warning, as a warm target needs far
/// less; nothing is said when `df` cannot tell.
pub fn check_disk(ctx: &Ctx) {
    let dir = if ctx.target_dir.is_dir() {
        &ctx.target_dir
    } else {
        &ctx.root
    };
    let mut df = std::process::Command::new("df");
    df.arg("-Pk").arg(dir);
    let Some(free) = proc::capture(&mut df).as_deref().and_then(free_gb) else {
        return;
    };
    if free < FROM_SCRATCH_GB {
        proc::say(&format!(
            "warning: {free:.1} GB free on the disk of {}; a run from scratch writes about \
             {FROM_SCRATCH_GB:.0} GB into target/ and .tools/, so a cold build may stop with \
             \"No space left on device\"",
            dir.display()
        ));
    } else {
        proc::say(&format!(
            "{free:.1} GB free on the disk of {}",
            dir.display()
        ));
    }
}

/// The space available, in GB, from `df -Pk`'s output (a header, then one
/// line per file system: its fourth column is the free 1024-byte blocks).
fn free_gb(df: &str) -> Option<f64> {
    let blocks: u64 = df.lines().nth(1)?.split_whitespace().nth(3)?.parse().ok()?;
    Some(blocks as f64 * 1024.0 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::free_gb;

    #[test]
    fn reads_the_free_space_from_df() {
        let df = "Filesystem     1024-blocks      Used Available Capacity Mounted on\n\
                  /dev/vda         264212480  26746880  68533248      29% /\n";
        let free = free_gb(df).expect("parses");
        assert!((free - 70.178).abs() < 0.001, "{free}");
        assert_eq!(free_gb("Filesystem 1024-blocks Used Available\n"), None);
        assert_eq!(free_gb("header\n/dev/vda 1 2 lots 3% /\n"), None);
    }
}
