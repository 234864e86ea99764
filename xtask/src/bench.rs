//! `cargo xtask bench`: runs the benchmark suites, gathers their figures and
//! writes `bench/REPORT.md`.
//!
//! Figures are named numbers. A suite adds them to [`Figures`]: criterion
//! medians (in ns) under their benchmark id, such as `machine/tap_to_changed`,
//! and every `likekit-metric name=value` line a bench prints under its name.
//! The report is one row per entry in [`ROWS`]. To add a bench, add a suite
//! to [`SUITES`] if a new command must run, and a row naming its figure.
//! Benchmarks are not tests: a figure that misses its target is reported as
//! `short`; only a suite that fails to run or a figure that is missing makes
//! the command fail.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::SystemTime;

use crate::figures::{Figures, group_thousands, parse_metrics};
use crate::{Ctx, install, proc};
use Target::{AtLeast, AtMost, Baseline};
use Unit::{Bytes, Millis, Nanos, PerSecond, Plain, Ratio, YesNo};

/// A command that produces figures.
#[derive(Debug)]
pub struct Suite {
    pub name: &'static str,
    pub about: &'static str,
    pub run: fn(&Ctx, &mut Figures) -> Result<(), String>,
}

/// Every benchmark suite, in the order they run.
pub const SUITES: &[Suite] = &[
    Suite {
        name: "machine",
        about: "criterion: cargo bench -p likekit-core --bench machine",
        run: |ctx, figures| {
            cargo_bench(ctx, &["-p", "likekit-core", "--bench", "machine"], figures)
        },
    },
    Suite {
        name: "client",
        about: "criterion: cargo bench -p likekit-core --bench client",
        run: |ctx, figures| cargo_bench(ctx, &["-p", "likekit-core", "--bench", "client"], figures),
    },
    Suite {
        name: "kotlin",
        about: "a Kotlin program on the release library: tap to observer callback",
        run: crate::uniffi::bench_kotlin,
    },
    Suite {
        name: "wasm",
        about: "the web package's .wasm and JS glue, raw and gzipped, beside their sizes before the diet",
        run: crate::web::bench_size,
    },
    Suite {
        name: "server",
        about: "likekit-bench run (wrk on loopback: views, likes and a hot post against the bare route and the naive baseline, on SQLite and PostgreSQL), then the view path in process",
        run: server,
    },
    Suite {
        name: "citus",
        about: "likekit-bench run on the Citus coordinator LIKEKIT_BENCH_CITUS_URL names, beside plain PostgreSQL; skipped without it",
        run: citus,
    },
    Suite {
        name: "web",
        about: "the like button in headless Chromium on likekit-react and on TanStack Query (bench/web): bytes shipped, init(), click → DOM change, calls per burst of taps",
        run: crate::bench_web::run,
    },
];

/// The variable that names a Citus coordinator for the `citus` suite.
const CITUS_URL: &str = "LIKEKIT_BENCH_CITUS_URL";

/// The suite names, for `--only`.
pub fn names() -> clap::builder::PossibleValuesParser {
    SUITES.iter().map(|s| s.name).collect::<Vec<_>>().into()
}

/// The `server` suite: builds the release server and `likekit-bench`,
/// runs `likekit-bench run` (its `likekit-metric` lines are the figures;
/// `LIKEKIT_BENCH_QUICK=1` shortens every load), then the in-process view
/// path (criterion).
fn server(ctx: &Ctx, figures: &mut Figures) -> Result<(), String> {
    let loads = bench_run(ctx, &["sqlite", "postgres"], |_| true, figures);
    let view_path = cargo_bench(
        ctx,
        &["-p", "likekit-bench", "--bench", "view_path"],
        figures,
    );
    derive_view_path(figures);
    figures.extend(
        VIEW_PATH_BEFORE
            .iter()
            .map(|(name, value)| ((*name).to_owned(), *value)),
    );
    loads.and(view_path)
}

/// Under the table when the server suite ran: where the view's breakdown
/// is read.
const VIEW_COST_NOTE: &str = "\nThe view's cost, part by part: the `view_path` ladder rows above \
     (each rung adds one part of a view to the one before: the middleware, the token check, \
     the own-row read, then the caches and the JSON body), beside the same rungs before \
     issue 19's cuts. Where each µs goes within them (a perf profile, and how to take it), \
     and why the loopback ratios move slowly: `server-mock/README.md`, \"The view's cost\".\n";

/// The view's cost before issue 19's cuts, measured on this machine at
/// 2e172c9: the in-process ladder (`cargo bench -p likekit-bench --bench
/// view_path`, the ladder's code on that commit's server, 2026-12-04 17:27
/// UTC) and the loopback ratios of the full bench run of 2026-12-04 16:01
/// UTC. The report shows today's figures beside them.
const VIEW_PATH_BEFORE: [(&str, f64); 8] = [
    ("view_path/bare_before", 1_003.0),
    ("view_path/middleware_before", 2_523.0),
    ("view_path/signed_in_before", 2_849.0),
    ("view_path/own_row_before", 4_290.0),
    ("view_path/cached_before", 7_173.0),
    ("view_path_cached_vs_bare_before", 7.15),
    ("sqlite_views_vs_bare_before", 0.33),
    ("sqlite_likes_vs_bare_before", 0.23),
];

/// The in-process view as a multiple of the bare route, from the same run.
fn derive_view_path(figures: &mut Figures) {
    if let (Some(cached), Some(bare)) = (
        figures.get("view_path/cached"),
        figures.get("view_path/bare"),
    ) && *bare > 0.0
    {
        let ratio = (cached / bare * 100.0).round() / 100.0;
        figures.insert("view_path_cached_vs_bare".into(), ratio);
    }
}

/// The `citus` suite: `likekit-bench run` on plain PostgreSQL and on the
/// coordinator [`CITUS_URL`] names (the server as it starts, and with
/// `--citus-direct false`); its figures are the `citus_*` ones (plain
/// PostgreSQL's own rows come from the `server` suite).
fn citus(ctx: &Ctx, figures: &mut Figures) -> Result<(), String> {
    std::env::var(CITUS_URL)
        .ok()
        .filter(|url| !url.trim().is_empty())
        .ok_or_else(|| {
            format!("{CITUS_URL} is not set: it names the Citus coordinator to measure")
        })?;
    let backends = ["postgres", "citus", "citus_coordinator"];
    bench_run(ctx, &backends, |name| name.starts_with("citus_"), figures)
}

/// Builds the release server and `likekit-bench` and runs `likekit-bench
/// run` on `backends`, keeping the figures whose names `keep` takes
/// (`LIKEKIT_BENCH_QUICK=1` shortens every load; likekit-bench reads
/// [`CITUS_URL`] itself).
fn bench_run(
    ctx: &Ctx,
    backends: &[&str],
    keep: impl Fn(&str) -> bool,
    figures: &mut Figures,
) -> Result<(), String> {
    // likekit-bench runs `wrk` from PATH.
    install::program("wrk", "wrk")?;
    let postgres = install::postgres_bin()?;
    let mut build = proc::cargo();
    build
        .current_dir(&ctx.root)
        .args(["build", "--release", "--bins"]);
    build.args(["-p", "likekit-server", "-p", "likekit-bench"]);
    println!("xtask: {}", proc::display(&build));
    proc::run(&mut build)?;
    let release = ctx.target_dir.join("release");
    let mut run = Command::new(release.join("likekit-bench"));
    run.current_dir(&ctx.root)
        .arg("run")
        .arg("--server")
        .arg(release.join("likekit-server"))
        .arg("--script")
        .arg(ctx.root.join("bench").join("load.lua"))
        .arg("--dir")
        .arg(ctx.target_dir.join("bench"))
        .env("LIKEKIT_PG_BIN", postgres);
    for backend in backends {
        run.args(["--backend", backend]);
    }
    println!("xtask: {}", proc::display(&run));
    let status = proc::stream(&run, |line| {
        figures.extend(
            parse_metrics(line)
                .into_iter()
                .filter(|(name, _)| keep(name)),
        );
    })?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("`likekit-bench run` failed ({status})"))
}

/// The unit a row's figure and target are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Nanos,
    Bytes,
    PerSecond,
    Millis,
    Plain,
    /// A multiple of another figure: `0.82×`.
    Ratio,
    /// 1 is yes, anything else no.
    YesNo,
}

/// What a figure should reach.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    AtMost(f64),
    AtLeast(f64),
    /// A reference point for ratios, with no target of its own.
    Baseline,
}

/// One line of the report.
#[derive(Debug)]
pub struct Row {
    /// The suite that produces the figure; the row is left out when that
    /// suite is not selected with `--only`.
    pub suite: &'static str,
    pub what: &'static str,
    /// The figure's name in [`Figures`].
    pub figure: &'static str,
    pub unit: Unit,
    pub target: Target,
    /// Show the figure as a multiple of another figure: (name, label).
    pub ratio_to: Option<(&'static str, &'static str)>,
}

/// The report's rows, in order. The targets come from the issues that set
/// them: never drop or lower one here.
#[rustfmt::skip]
pub const ROWS: &[Row] = &[
    row("machine", "Tap through the machine to its Changed effect", "machine/tap_to_changed", Nanos, AtMost(1_000.0)).vs("machine/hashmap_insert", "HashMap insert"),
    row("machine", "Bare HashMap insert of the same key", "machine/hashmap_insert", Nanos, Baseline),
    row("machine", "Memory per tracked post, no friends", "memory_per_post_bytes", Bytes, AtMost(256.0)),
    row("client", "Tap through the driver until the server-confirmed observer callback (in-memory transport)", "client/tap_to_callback", Nanos, AtMost(20_000.0)),
    row("client", "Tap through the driver to its optimistic observer callback", "client/tap_to_optimistic_callback", Nanos, Baseline),
    row("client", "The same with a file journal (the write is off the tap's path)", "client/tap_to_optimistic_callback_journal", Nanos, Baseline).vs("client/tap_to_optimistic_callback", "without a journal"),
    row("client", "Tap to its optimistic callback with a file journal, median, in µs (1,000 taps)", "client_tap_to_changed_journal_p50_us", Plain, AtMost(50.0)),
    row("client", "The same, p99, in µs", "client_tap_to_changed_journal_p99_us", Plain, Baseline),
    row("client", "Tap to its optimistic callback without a journal, median, in µs (the same run)", "client_tap_to_changed_p50_us", Plain, Baseline),
    row("client", "Tap until the file journal holding it is on disk (fsynced), median, in µs", "client_tap_to_durable_p50_us", Plain, Baseline),
    row("client", "Tap until durable, p99, in µs", "client_tap_to_durable_p99_us", Plain, Baseline),
    row("kotlin", "Tap from Kotlin to its observer callback, median, in µs", "kotlin_tap_to_callback_us", Plain, AtMost(100.0)),
    row("kotlin", "Tap from Kotlin to its observer callback, p99, in µs", "kotlin_tap_to_callback_p99_us", Plain, Baseline),
    // A sixteenth of a 60 Hz frame.
    row("kotlin", "Tap from Kotlin to a views() Flow collector on its own thread, median, in µs", "kotlin_tap_to_flow_us", Plain, AtMost(1_000.0)),
    row("kotlin", "Tap from Kotlin to a views() Flow collector on its own thread, p99, in µs", "kotlin_tap_to_flow_p99_us", Plain, Baseline),
    // 80 KiB: issue 17 (it was 256 KiB before the package's diet).
    row("wasm", "Web package (.wasm), gzipped", "wasm_pkg_gzip_bytes", Bytes, AtMost(81_920.0)).vs("wasm_pkg_gzip_before_diet_bytes", "before the diet"),
    row("wasm", "Web package (.wasm), gzipped, before the diet (35c29f1: reqwest, no wasm-opt)", "wasm_pkg_gzip_before_diet_bytes", Bytes, Baseline),
    row("wasm", "Web package (.wasm), raw", "wasm_pkg_bytes", Bytes, Baseline).vs("wasm_pkg_before_diet_bytes", "before the diet"),
    row("wasm", "Web package JS glue (likekit_wasm.js), gzipped", "wasm_js_gzip_bytes", Bytes, Baseline).vs("wasm_js_gzip_before_diet_bytes", "before the diet"),
    row("wasm", "Web package JS glue, gzipped, before the diet", "wasm_js_gzip_before_diet_bytes", Bytes, Baseline),
    row("server", "Post views, GET /posts/{id}/likes, SQLite, 100,000 posts / 1,000,000 likes / 300 friends", "sqlite_views_per_s", PerSecond, AtLeast(60_000.0)).vs("bare_views_per_s", "bare route"),
    row("server", "Views as a share of the bare route (this or 60,000/s meets the target)", "sqlite_views_vs_bare", Ratio, AtLeast(0.8)),
    row("server", "The same share before issue 19's cuts (2e172c9; issue 19 asks for ≥ 0.60×)", "sqlite_views_vs_bare_before", Ratio, Baseline),
    row("server", "The lowest share of the three rounds of bare route then views (the share above is the median round's)", "sqlite_views_vs_bare_low", Ratio, Baseline),
    row("server", "The highest share of the three rounds", "sqlite_views_vs_bare_high", Ratio, Baseline),
    row("server", "Views, p99 latency", "sqlite_views_p99_ms", Millis, AtMost(10.0)),
    row("server", "Views with the request journal on (the mock's GET /admin/requests), as a share of views with it off (the default without an admin key)", "sqlite_views_journal_vs_views", Ratio, Baseline),
    row("server", "Views, p50 latency", "sqlite_views_p50_ms", Millis, Baseline),
    row("server", "Views as a multiple of the naive baseline", "sqlite_views_vs_naive", Ratio, AtLeast(20.0)),
    row("server", "The ceiling for that multiple: the bare route over the naive baseline (a view cannot beat the bare route)", "sqlite_bare_vs_naive", Ratio, Baseline),
    row("server", "Naive baseline: COUNT(*) over the like rows + friends join, no cache, SQLite", "sqlite_naive_views_per_s", PerSecond, Baseline),
    row("server", "Bare axum route, fixed JSON body, under the view load", "bare_views_per_s", PerSecond, Baseline),
    row("server", "Bare route, p99 latency", "bare_views_p99_ms", Millis, Baseline),
    row("server", "Durable likes + unlikes over many posts (fsynced before the answer), SQLite", "sqlite_likes_per_s", PerSecond, AtLeast(3_000.0)).vs("bare_likes_per_s", "bare route"),
    row("server", "Likes as a share of the bare route", "sqlite_likes_vs_bare", Ratio, AtLeast(0.5)),
    row("server", "The same share before issue 19's cuts (2e172c9; issue 19 asks for ≥ 0.40×)", "sqlite_likes_vs_bare_before", Ratio, Baseline),
    row("server", "Bare route under the like load", "bare_likes_per_s", PerSecond, Baseline),
    row("server", "Exact after the like load (every post's count == its rows)", "sqlite_likes_exact", YesNo, AtLeast(1.0)),
    row("server", "One hot post: durable likes + unlikes by many users, SQLite", "sqlite_hot_likes_per_s", PerSecond, AtLeast(2_500.0)),
    row("server", "One view in process through the whole router, post and friends cached (CPU per view, no network)", "view_path/cached", Nanos, Baseline).vs("view_path/bare", "bare route"),
    // Issue 19: a cached view at most 2.5 times the bare route's CPU.
    row("server", "That view as a multiple of the bare route in process", "view_path_cached_vs_bare", Ratio, AtMost(2.5)),
    row("server", "The same multiple before issue 19's cuts (2e172c9)", "view_path_cached_vs_bare_before", Ratio, Baseline),
    row("server", "The cached view before the cuts (2e172c9, same machine)", "view_path/cached_before", Nanos, Baseline).vs("view_path/bare_before", "bare route"),
    row("server", "The same, post not cached (read from the store)", "view_path/post_not_cached", Nanos, Baseline).vs("view_path/bare", "bare route"),
    row("server", "The bare route in process", "view_path/bare", Nanos, Baseline),
    row("server", "The view's ladder, rung 1: the bare route's body behind the server's middleware (request id, metrics, timeout, body limit, panic catcher)", "view_path/middleware", Nanos, Baseline).vs("view_path/middleware_before", "before the cuts"),
    row("server", "Rung 2: and the token check and the path's post id", "view_path/signed_in", Nanos, Baseline).vs("view_path/signed_in_before", "before the cuts"),
    row("server", "Rung 3: and the viewer's own row, read from SQLite (the rest of a cached view is the caches and the JSON body)", "view_path/own_row", Nanos, Baseline).vs("view_path/own_row_before", "before the cuts"),
    row("server", "Exact after the hot-post load", "sqlite_hot_exact", YesNo, AtLeast(1.0)),
    row("server", "Post views, PostgreSQL on the same machine (loopback), the same data set", "postgres_views_per_s", PerSecond, AtLeast(60_000.0)).vs("postgres_bare_views_per_s", "bare route"),
    row("server", "PostgreSQL views as a share of the bare route (a round trip per view for the viewer's own row; this or 60,000/s meets the target)", "postgres_views_vs_bare", Ratio, AtLeast(0.5)),
    row("server", "The lowest PostgreSQL share of the three rounds", "postgres_views_vs_bare_low", Ratio, Baseline),
    row("server", "The highest PostgreSQL share of the three rounds", "postgres_views_vs_bare_high", Ratio, Baseline),
    row("server", "PostgreSQL views, p99 latency", "postgres_views_p99_ms", Millis, AtMost(10.0)),
    row("server", "PostgreSQL views, p50 latency", "postgres_views_p50_ms", Millis, Baseline),
    row("server", "PostgreSQL views as a multiple of the naive baseline", "postgres_views_vs_naive", Ratio, AtLeast(20.0)),
    row("server", "The ceiling for that multiple: the bare route over the PostgreSQL naive baseline", "postgres_bare_vs_naive", Ratio, Baseline),
    row("server", "Naive baseline: COUNT(*) over the like rows + friends join, no cache, PostgreSQL", "postgres_naive_views_per_s", PerSecond, Baseline),
    row("server", "Durable likes + unlikes over many posts (committed with synchronous_commit = on before the answer), PostgreSQL", "postgres_likes_per_s", PerSecond, AtLeast(3_000.0)).vs("postgres_bare_likes_per_s", "bare route"),
    row("server", "PostgreSQL likes as a share of the bare route", "postgres_likes_vs_bare", Ratio, Baseline),
    row("server", "Exact after the PostgreSQL like load", "postgres_likes_exact", YesNo, AtLeast(1.0)),
    row("server", "One hot post: durable likes + unlikes by many users, PostgreSQL (count spread over shard rows)", "postgres_hot_likes_per_s", PerSecond, AtLeast(2_500.0)),
    row("server", "Exact after the PostgreSQL hot-post load", "postgres_hot_exact", YesNo, AtLeast(1.0)),
    row("citus", "Durable likes + unlikes over many posts, Citus (a coordinator and its workers on the same machine), straight to the worker holding the post", "citus_likes_per_s", PerSecond, Baseline),
    row("citus", "Citus likes as a multiple of plain PostgreSQL's in the same run", "citus_likes_vs_postgres", Ratio, AtLeast(0.5)),
    row("citus", "Exact after the Citus like load", "citus_likes_exact", YesNo, AtLeast(1.0)),
    row("citus", "Citus likes with every statement through the coordinator (--citus-direct false), as a multiple of plain PostgreSQL's", "citus_coordinator_likes_vs_postgres", Ratio, Baseline),
    row("citus", "One hot post on Citus, as a multiple of plain PostgreSQL's", "citus_hot_likes_vs_postgres", Ratio, Baseline),
    row("citus", "Exact after the Citus hot-post load", "citus_hot_exact", YesNo, AtLeast(1.0)),
    row("citus", "Post views, Citus", "citus_views_per_s", PerSecond, Baseline),
    row("citus", "Citus views as a multiple of plain PostgreSQL's", "citus_views_vs_postgres", Ratio, Baseline),
    row("citus", "Citus views through the coordinator alone, as a multiple of plain PostgreSQL's", "citus_coordinator_views_vs_postgres", Ratio, Baseline),
    row("web", "LikeKit's like button, production build: bytes shipped gzipped (JS + .wasm)", "web_likekit_shipped_gzip_bytes", Bytes, Baseline).vs("web_tanstack_shipped_gzip_bytes", "TanStack Query"),
    row("web", "Its JS, gzipped", "web_likekit_js_gzip_bytes", Bytes, Baseline),
    row("web", "Its .wasm, gzipped", "web_likekit_wasm_gzip_bytes", Bytes, Baseline),
    row("web", "The same button on TanStack Query v5, production build: bytes shipped gzipped (JS)", "web_tanstack_shipped_gzip_bytes", Bytes, Baseline),
    row("web", "What LikeKit adds to React alone with the same button, gzipped", "web_likekit_beyond_react_gzip_bytes", Bytes, Baseline).vs("web_tanstack_beyond_react_gzip_bytes", "TanStack Query"),
    row("web", "What TanStack Query adds to React alone, gzipped", "web_tanstack_beyond_react_gzip_bytes", Bytes, Baseline),
    row("web", "React alone with the same button (no network), gzipped", "web_react_floor_gzip_bytes", Bytes, Baseline),
    row("web", "LikeKit init() in Chromium (fetch, compile, instantiate the .wasm), median of first visits", "web_likekit_init_ms", Millis, Baseline),
    row("web", "LikeKit init() in Chromium, median of reloads (HTTP and code caches warm)", "web_likekit_init_warm_ms", Millis, Baseline),
    row("web", "Click → DOM change in Chromium, LikeKit, median of 200 clicks", "web_likekit_click_ms", Millis, Baseline).vs("web_tanstack_click_ms", "TanStack Query"),
    row("web", "Click → DOM change, LikeKit, p99", "web_likekit_click_p99_ms", Millis, Baseline).vs("web_tanstack_click_p99_ms", "TanStack Query"),
    row("web", "Click → DOM change, TanStack Query, median of 200 clicks", "web_tanstack_click_ms", Millis, Baseline),
    row("web", "Click → DOM change, TanStack Query, p99", "web_tanstack_click_p99_ms", Millis, Baseline),
    row("web", "Click → DOM change, React alone with a local state (the floor), median", "web_react_floor_click_ms", Millis, Baseline),
    row("web", "Click → DOM change, React alone, p99", "web_react_floor_click_p99_ms", Millis, Baseline),
    row("web", "Share of clicks changed before the next animation frame, LikeKit", "web_likekit_click_next_frame", Plain, Baseline),
    row("web", "The same, TanStack Query", "web_tanstack_click_next_frame", Plain, Baseline),
    row("web", "The same, React alone", "web_react_floor_click_next_frame", Plain, Baseline),
    row("web", "Calls sent for 5 taps in 50 ms on one post, LikeKit, loopback (median of bursts)", "web_likekit_burst_calls", Plain, Baseline).vs("web_tanstack_burst_calls", "TanStack Query"),
    row("web", "The same with every answer 100 ms late, LikeKit", "web_likekit_burst_calls_slow", Plain, Baseline).vs("web_tanstack_burst_calls_slow", "TanStack Query"),
    row("web", "Calls sent for 5 taps in 50 ms, TanStack Query, loopback", "web_tanstack_burst_calls", Plain, Baseline),
    row("web", "The same with every answer 100 ms late, TanStack Query", "web_tanstack_burst_calls_slow", Plain, Baseline),
    row("web", "Share of those bursts (both delays) after which the server and the page agree with the taps, LikeKit", "web_likekit_burst_exact", Plain, Baseline),
    row("web", "The same, TanStack Query", "web_tanstack_burst_exact", Plain, Baseline),
];

const fn row(
    suite: &'static str,
    what: &'static str,
    figure: &'static str,
    unit: Unit,
    target: Target,
) -> Row {
    Row {
        suite,
        what,
        figure,
        unit,
        target,
        ratio_to: None,
    }
}

impl Row {
    /// Shows the figure as a multiple of `base` too.
    const fn vs(self, base: &'static str, label: &'static str) -> Row {
        Row {
            ratio_to: Some((base, label)),
            ..self
        }
    }
}

/// The verdict on one row: `pass`, `short` (a finding, not an error),
/// `baseline` (no target of its own) or `missing`.
pub fn verdict(value: Option<f64>, target: Target) -> &'static str {
    match (value, target) {
        (None, _) => "missing",
        (Some(_), Target::Baseline) => "baseline",
        (Some(v), Target::AtMost(t)) if v <= t => "pass",
        (Some(v), Target::AtLeast(t)) if v >= t => "pass",
        (Some(_), _) => "short",
    }
}

/// A value in its unit, for people: `412 ns`, `1.23 µs`, `184 B`.
pub fn format_value(value: f64, unit: Unit) -> String {
    match unit {
        Unit::Nanos if value >= 1e9 => format!("{:.2} s", value / 1e9),
        Unit::Nanos if value >= 1e6 => format!("{:.2} ms", value / 1e6),
        Unit::Nanos if value >= 1e3 => format!("{:.2} µs", value / 1e3),
        Unit::Nanos if value >= 100.0 => format!("{value:.0} ns"),
        Unit::Nanos => format!("{value:.1} ns"),
        Unit::Bytes => format!("{} B", group_thousands(value)),
        Unit::PerSecond => format!("{}/s", group_thousands(value)),
        Unit::Millis => format!("{value:.2} ms"),
        Unit::Plain if value.fract() == 0.0 => group_thousands(value),
        Unit::Plain => format!("{value:.3}"),
        Unit::Ratio => format!("{value:.2}×"),
        Unit::YesNo if value == 1.0 => "yes".to_owned(),
        Unit::YesNo => "no".to_owned(),
    }
}

fn format_target(target: Target, unit: Unit) -> String {
    match target {
        _ if unit == Unit::YesNo => "yes".to_owned(),
        Target::AtMost(t) => format!("≤ {}", format_value(t, unit)),
        Target::AtLeast(t) => format!("≥ {}", format_value(t, unit)),
        Target::Baseline => "—".to_owned(),
    }
}

/// The unit of a figure that no row describes, guessed from its name.
pub fn unit_from_name(name: &str) -> Unit {
    if name.ends_with("_bytes") {
        Unit::Bytes
    } else if name.ends_with("_ns") || name.contains('/') {
        Unit::Nanos
    } else if name.ends_with("_ms") {
        Unit::Millis
    } else if name.ends_with("_per_s") {
        Unit::PerSecond
    } else {
        Unit::Plain
    }
}

/// The report's table, rows in order; figures that no row names are listed
/// after it so nothing a bench printed is lost.
pub fn report_table(rows: &[&Row], figures: &Figures) -> String {
    let mut out =
        String::from("| what | figure | ratio | target | result |\n|---|---|---|---|---|\n");
    for row in rows {
        let value = figures.get(row.figure).copied();
        let figure = value.map_or_else(|| "—".to_owned(), |v| format_value(v, row.unit));
        let ratio = match (value, row.ratio_to) {
            (Some(v), Some((base, label))) => match figures.get(base) {
                Some(b) if *b > 0.0 => format!("{:.1}× {label}", v / b),
                _ => format!("— ({label} missing)"),
            },
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "| {} (`{}`) | {figure} | {ratio} | {} | {} |",
            row.what,
            row.figure,
            format_target(row.target, row.unit),
            verdict(value, row.target)
        );
    }
    let others: Vec<(&String, &f64)> = figures
        .iter()
        .filter(|(name, _)| !ROWS.iter().any(|r| r.figure == name.as_str()))
        .collect();
    if !others.is_empty() {
        out.push_str("\nOther figures the benches reported (no target yet):\n\n| figure | value |\n|---|---|\n");
        for (name, value) in others {
            let _ = writeln!(
                out,
                "| `{name}` | {} |",
                format_value(*value, unit_from_name(name))
            );
        }
    }
    out
}

/// `cargo bench <args>`, streamed; `likekit-metric` lines and the criterion
/// results written during this run become figures.
pub fn cargo_bench(ctx: &Ctx, args: &[&str], figures: &mut Figures) -> Result<(), String> {
    let started = SystemTime::now();
    let mut cmd = proc::cargo();
    cmd.current_dir(&ctx.root).arg("bench").args(args);
    let shown = proc::display(&cmd);
    println!("xtask: {shown}");
    let status = proc::stream(&cmd, |line| figures.extend(parse_metrics(line)))?;
    if !status.success() {
        return Err(format!("`{shown}` failed ({status})"));
    }
    figures.extend(criterion_medians(
        &ctx.target_dir.join("criterion"),
        started,
    ));
    Ok(())
}

/// Median estimates (ns) of every criterion benchmark written since `since`,
/// by full id, from `<dir>/**/new/{benchmark,estimates}.json`.
pub fn criterion_medians(dir: &Path, since: SystemTime) -> Figures {
    let mut figures = Figures::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            if path.file_name().is_some_and(|n| n == "new") {
                if let Some((id, median)) = read_criterion_result(&path, since) {
                    figures.insert(id, median);
                }
            } else if path
                .file_name()
                .is_some_and(|n| n != "report" && n != "base")
            {
                stack.push(path);
            }
        }
    }
    figures
}

fn read_criterion_result(new_dir: &Path, since: SystemTime) -> Option<(String, f64)> {
    let estimates = new_dir.join("estimates.json");
    if fs::metadata(&estimates).and_then(|m| m.modified()).ok()? < since {
        return None;
    }
    let read = |path: &Path| -> Option<serde_json::Value> {
        serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
    };
    let benchmark = read(&new_dir.join("benchmark.json"))?;
    let median = read(&estimates)?["median"]["point_estimate"].as_f64()?;
    Some((benchmark["full_id"].as_str()?.to_owned(), median))
}

/// `cargo xtask bench [--only NAME[,NAME…]]`.
pub fn main(ctx: &Ctx, only: &[String]) -> Result<ExitCode, String> {
    // The `citus` suite runs when asked for by name, or with the others
    // when a coordinator is given.
    let citus = std::env::var(CITUS_URL).is_ok_and(|url| !url.trim().is_empty());
    let chosen: Vec<&str> = SUITES
        .iter()
        .map(|s| s.name)
        .filter(|name| {
            if only.is_empty() {
                *name != "citus" || citus
            } else {
                only.iter().any(|o| o == name)
            }
        })
        .collect();
    if !chosen.contains(&"citus") {
        println!("xtask: bench suite citus skipped: {CITUS_URL} is not set");
    }

    let mut figures = Figures::new();
    let mut failures = Vec::new();
    for suite in SUITES.iter().filter(|s| chosen.contains(&s.name)) {
        println!("xtask: bench suite {} ({})", suite.name, suite.about);
        if let Err(e) = (suite.run)(ctx, &mut figures) {
            failures.push(format!("{}: {e}", suite.name));
        }
    }

    let rows: Vec<&Row> = ROWS.iter().filter(|r| chosen.contains(&r.suite)).collect();
    let table = report_table(&rows, &figures);
    let mut report = format!(
        "# Benchmark report\n\nWritten by `cargo xtask bench` on {} ({} cores, {}).\n\
         Times are criterion medians; other figures come from `likekit-metric` lines the benches print.\n\
         Benchmarks are not tests: `short` means a target was missed on this machine.\n\n",
        proc::capture(Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"])).unwrap_or_default(),
        std::thread::available_parallelism().map_or(0, usize::from),
        proc::capture(Command::new("rustc").arg("--version")).unwrap_or_else(|| "rustc ?".into()),
    );
    report.push_str(&table);
    if chosen.contains(&"server") {
        report.push_str(VIEW_COST_NOTE);
    }
    if !failures.is_empty() {
        report.push_str("\nSuites that failed to run:\n\n");
        for f in &failures {
            let _ = writeln!(report, "- {f}");
        }
    }
    let path = ctx.root.join("bench").join("REPORT.md");
    proc::write(&path, &report)?;

    println!();
    print!("{table}");
    println!("\nxtask: wrote {}", path.display());

    let missing: Vec<&str> = rows
        .iter()
        .filter(|r| !figures.contains_key(r.figure))
        .map(|r| r.figure)
        .collect();
    for f in &failures {
        eprintln!("error: bench suite {f}");
    }
    if !missing.is_empty() {
        eprintln!("error: no figure for {}", missing.join(", "));
    }
    Ok(if failures.is_empty() && missing.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn verdicts() {
        let cases = [
            (Some(412.0), AtMost(1_000.0), "pass"),
            (Some(1_000.0), AtMost(1_000.0), "pass"),
            (Some(1_001.0), AtMost(1_000.0), "short"),
            (Some(59_000.0), AtLeast(60_000.0), "short"),
            (Some(61_000.0), AtLeast(60_000.0), "pass"),
            (Some(20.0), Baseline, "baseline"),
            (None, AtMost(1.0), "missing"),
            (None, Baseline, "missing"),
        ];
        for (value, target, expected) in cases {
            assert_eq!(verdict(value, target), expected, "{value:?} {target:?}");
        }
    }

    #[test]
    fn formats_values() {
        assert_eq!(format_value(412.4, Unit::Nanos), "412 ns");
        assert_eq!(format_value(18.25, Unit::Nanos), "18.2 ns");
        assert_eq!(format_value(1_234.0, Unit::Nanos), "1.23 µs");
        assert_eq!(format_value(2_500_000.0, Unit::Nanos), "2.50 ms");
        assert_eq!(format_value(184.0, Unit::Bytes), "184 B");
        assert_eq!(format_value(61_234.4, Unit::PerSecond), "61,234/s");
        assert_eq!(format_value(1_000_000.0, Unit::Plain), "1,000,000");
        assert_eq!(format_value(0.25, Unit::Plain), "0.250");
        assert_eq!(format_value(0.8149, Unit::Ratio), "0.81×");
        assert_eq!(format_value(1.0, Unit::YesNo), "yes");
        assert_eq!(format_value(0.0, Unit::YesNo), "no");
        assert_eq!(format_target(Target::AtLeast(1.0), Unit::YesNo), "yes");
        assert_eq!(
            format_target(Target::AtMost(1_000.0), Unit::Nanos),
            "≤ 1.00 µs"
        );
    }

    #[test]
    fn table_reports_pass_short_missing_and_ratio() {
        let figures: Figures = [
            ("machine/tap_to_changed".to_owned(), 412.0),
            ("machine/hashmap_insert".to_owned(), 20.6),
            ("extra_metric".to_owned(), 7.0),
        ]
        .into_iter()
        .collect();
        let rows: Vec<&Row> = ROWS.iter().collect();
        let table = report_table(&rows, &figures);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[2],
            "| Tap through the machine to its Changed effect (`machine/tap_to_changed`) | 412 ns | 20.0× HashMap insert | ≤ 1.00 µs | pass |"
        );
        assert_eq!(
            lines[3],
            "| Bare HashMap insert of the same key (`machine/hashmap_insert`) | 20.6 ns |  | — | baseline |"
        );
        assert_eq!(
            lines[4],
            "| Memory per tracked post, no friends (`memory_per_post_bytes`) | — |  | ≤ 256 B | missing |"
        );
        assert!(table.contains("| `extra_metric` | 7 |"));
    }

    #[test]
    fn a_missing_baseline_is_said_in_the_ratio() {
        let figures: Figures = [("machine/tap_to_changed".to_owned(), 1_500.0)]
            .into_iter()
            .collect();
        let table = report_table(&[&ROWS[0]], &figures);
        assert!(
            table.contains("| 1.50 µs | — (HashMap insert missing) | ≤ 1.00 µs | short |"),
            "{table}"
        );
    }

    #[test]
    fn every_row_belongs_to_a_suite() {
        for row in ROWS {
            assert!(SUITES.iter().any(|s| s.name == row.suite), "{}", row.figure);
        }
    }

    /// The server's targets, pinned: every backend has every row, in the
    /// `server` suite, and no target is dropped or lowered by accident.
    #[test]
    fn every_server_backend_has_its_rows_and_targets() {
        for (backend, views_vs_bare, likes_vs_bare) in [
            ("sqlite", AtLeast(0.8), AtLeast(0.5)),
            ("postgres", AtLeast(0.5), Baseline),
        ] {
            for (figure, target) in [
                ("views_per_s", AtLeast(60_000.0)),
                ("views_vs_bare", views_vs_bare),
                ("views_p99_ms", AtMost(10.0)),
                ("views_p50_ms", Baseline),
                ("views_vs_naive", AtLeast(20.0)),
                ("naive_views_per_s", Baseline),
                ("likes_per_s", AtLeast(3_000.0)),
                ("likes_vs_bare", likes_vs_bare),
                ("likes_exact", AtLeast(1.0)),
                ("hot_likes_per_s", AtLeast(2_500.0)),
                ("hot_exact", AtLeast(1.0)),
            ] {
                let name = format!("{backend}_{figure}");
                let row = ROWS.iter().find(|r| r.figure == name);
                let row = row.unwrap_or_else(|| panic!("no report row for {name}"));
                assert_eq!((row.suite, row.target), ("server", target), "{name}");
            }
        }
    }

    #[test]
    fn reads_fresh_criterion_results_only() {
        let dir = std::env::temp_dir().join(format!("xtask-criterion-{}", std::process::id()));
        let new = dir.join("machine").join("tap_to_changed").join("new");
        fs::create_dir_all(&new).expect("temp dir");
        fs::write(
            new.join("benchmark.json"),
            r#"{"group_id":"machine","function_id":"tap_to_changed","value_str":null,"throughput":null,"full_id":"machine/tap_to_changed","directory_name":"machine/tap_to_changed","title":"machine/tap_to_changed"}"#,
        )
        .expect("write");
        fs::write(
            new.join("estimates.json"),
            r#"{"mean":{"point_estimate":420.0},"median":{"confidence_interval":{"confidence_level":0.95,"lower_bound":400.0,"upper_bound":420.0},"point_estimate":411.5,"standard_error":2.0}}"#,
        )
        .expect("write");
        let before = SystemTime::now() - Duration::from_secs(60);
        let after = SystemTime::now() + Duration::from_secs(60);
        let fresh = criterion_medians(&dir, before);
        let stale = criterion_medians(&dir, after);
        let _ = fs::remove_dir_all(&dir);
        assert_eq!(fresh.get("machine/tap_to_changed"), Some(&411.5));
        assert!(stale.is_empty());
    }

    #[test]
    fn units_from_names() {
        assert_eq!(unit_from_name("memory_per_post_bytes"), Unit::Bytes);
        assert_eq!(unit_from_name("driver/tap_to_callback"), Unit::Nanos);
        assert_eq!(unit_from_name("views_per_s"), Unit::PerSecond);
        assert_eq!(unit_from_name("p99_ms"), Unit::Millis);
        assert_eq!(unit_from_name("wasm_gzip"), Unit::Plain);
    }
}
