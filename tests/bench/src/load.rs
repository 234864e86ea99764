//! The server bench run (`likekit-bench run`): the reference server under
//! `wrk` on loopback.
//!
//! One run, in order:
//!
//! 1. the data set ([`crate::data`]), cached under the work folder and
//!    rebuilt only when its parameters or generator change, and one token
//!    per user for the run's random secret;
//! 2. the **bare route** (`likekit-bench bare`), running throughout: the
//!    ceiling. Each of the real server's view and like loads runs right
//!    after the bare route's same load, so the two see the machine in the
//!    same state; the views in three such rounds, of which the median
//!    ratio is reported (with the lowest and highest beside it), on a
//!    server that keeps the friend sets its warm-up read for the whole
//!    view part (`--friends-ttl-ms`), so that no round meets their expiry;
//! 3. per backend in [`BACKENDS`] (SQLite, PostgreSQL, then Citus when a
//!    coordinator is given), on a fresh copy of the data: the **naive
//!    baseline** (`likekit-bench naive`; not on Citus), then the real
//!    server: **views** (after a warm-up that reads every viewer's friend
//!    set once, as on a server in service; on SQLite also with the request
//!    journal on), durable **likes** spread over all posts, and one **hot
//!    post**; after each write load the server stops gracefully and the
//!    audit checks every count against its rows (`exact`).
//!
//! Every load uses the same wrk settings ([`Settings`]) and `bench/load.lua`.
//! Every figure is printed as a `likekit-metric name=value` line at the
//! end; `cargo xtask bench` turns them into report rows with their targets.
//!
//! PostgreSQL runs in a throwaway cluster (`likekit_testing::postgres`)
//! tuned for a durable server ([`POSTGRES_SETTINGS`]), seeded with the same
//! generator through the store's own seed path, vacuumed and analyzed, and
//! stopped and deleted when its part ends, also on failure.
//!
//! Citus is a cluster someone else runs (`--citus URL`, the coordinator):
//! the data set goes into a schema of its own there (`likekit_bench_…`),
//! laid out with the server's `CITUS_LAYOUT` before it is seeded through
//! the same seed path, and the schema is dropped when the part ends. The
//! `citus_*_vs_postgres` figures divide its rates by plain PostgreSQL's from
//! the same run. `citus` is the server as it starts by default, its likes
//! and one-post reads sent straight to the worker holding the post;
//! `citus_coordinator` is the same with `--citus-direct false`, every
//! statement through the coordinator.

use std::{
    collections::BTreeMap,
    fs,
    io::{BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpStream},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use likekit_server::store::CITUS_LAYOUT;
use likekit_testing::{
    citus::Schema,
    postgres::{Cluster, ClusterOptions},
};

use crate::data::{self, SeedParams};

/// Named figures of one run.
pub type Figures = BTreeMap<String, f64>;

/// The PostgreSQL server's connection pool (`--db-connections`). Writes
/// wait on WAL flushes, and every commit waiting when one starts shares it:
/// with wrk's 64 connections a pool of 32 lets about twice as many likes
/// share each flush as the default pool (8 on 2 cores). The view reads use
/// at most half of it.
pub const POSTGRES_POOL: u32 = 32;

/// `postgresql.conf` for the bench's cluster, after the helper's durable
/// base settings (fsync, synchronous_commit and full_page_writes stay on):
/// name, value, why.
pub const POSTGRES_SETTINGS: &[(&str, &str, &str)] = &[
    (
        "max_connections",
        "100",
        "the server's pool (32), the naive baseline's (8), seed, audit and psql",
    ),
    (
        "shared_buffers",
        "1GB",
        "the whole data set (about 350 MB with indexes) stays in PostgreSQL's own cache",
    ),
    (
        "effective_cache_size",
        "16GB",
        "a planner hint: most of the machine's memory caches files",
    ),
    (
        "work_mem",
        "32MB",
        "the seed's bulk statements and the audit's aggregates sort in memory",
    ),
    (
        "maintenance_work_mem",
        "512MB",
        "adding the friends table's keys back and VACUUM after the seed",
    ),
    (
        "max_wal_size",
        "8GB",
        "no checkpoint forced by WAL volume during the seed or the loads",
    ),
    (
        "min_wal_size",
        "1GB",
        "WAL segments are recycled, not created",
    ),
    (
        "checkpoint_timeout",
        "30min",
        "no timed checkpoint inside a run",
    ),
    (
        "random_page_cost",
        "1.1",
        "SSD: an index read costs about a sequential one",
    ),
    (
        "jit",
        "off",
        "short statements; JIT would only add compile time to the seed and the audit",
    ),
];

/// wrk settings shared by every load.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub threads: u32,
    pub connections: u32,
    /// Each view measurement.
    pub views: Duration,
    /// Unmeasured load before a view measurement: long enough for every
    /// viewer's friend set to be read once (10,000 of them; from PostgreSQL
    /// that takes several seconds on 2 cores).
    pub warmup: Duration,
    /// The spread-out like load.
    pub likes: Duration,
    /// The hot-post load.
    pub hot: Duration,
    /// Rounds of the bare route's view load and the server's, one after
    /// the other: the ratio reported is the median round's.
    pub view_rounds: usize,
}

impl Settings {
    /// The full run (about two and a half minutes of load), or a short one
    /// for trying the bench itself.
    pub fn new(quick: bool) -> Settings {
        let secs = |full: u64, short: u64| Duration::from_secs(if quick { short } else { full });
        Settings {
            threads: 2,
            connections: 64,
            views: secs(10, 3),
            warmup: secs(8, 2),
            likes: secs(20, 3),
            hot: secs(15, 3),
            view_rounds: if quick { 1 } else { 3 },
        }
    }
}

/// What a run needs from outside.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The release `likekit-server` binary.
    pub server: PathBuf,
    pub wrk: PathBuf,
    /// `bench/load.lua`.
    pub script: PathBuf,
    /// The work folder: the cached data set and this run's copies, tokens
    /// and logs.
    pub dir: PathBuf,
    pub params: SeedParams,
    pub settings: Settings,
    /// A Citus coordinator to measure too (a libpq URL).
    pub citus: Option<String>,
    /// Measure only these backends (by name); empty: every backend there is.
    pub only: Vec<String>,
}

/// A storage backend the server is measured on.
#[derive(Debug)]
pub struct Backend {
    /// The prefix of its figures (`sqlite_views_per_s`).
    pub name: &'static str,
    /// Gets a freshly seeded database ready for one run.
    pub prepare: fn(&Bench) -> Result<Prepared, String>,
    /// Whether the naive baseline runs on it too.
    pub naive: bool,
    /// Whether this run can measure it.
    pub available: fn(&RunOptions) -> bool,
}

/// A seeded database ready for the server.
#[derive(Debug)]
pub struct Prepared {
    /// The server's `--db` value (also what the audit checks).
    pub db: String,
    /// More server flags for this backend.
    pub server_args: Vec<String>,
    /// The database server, for backends that run one: dropping it stops
    /// the server and deletes it.
    pub cluster: Option<Cluster>,
    /// The schema on someone else's cluster: dropping it drops the data.
    pub schema: Option<Schema>,
}

pub const BACKENDS: &[Backend] = &[
    Backend {
        name: "sqlite",
        prepare: prepare_sqlite,
        naive: true,
        available: |_| true,
    },
    Backend {
        name: "postgres",
        prepare: prepare_postgres,
        naive: true,
        available: |_| true,
    },
    Backend {
        name: "citus",
        prepare: |bench| prepare_citus(bench, true),
        naive: false,
        available: |options| options.citus.is_some(),
    },
    Backend {
        name: "citus_coordinator",
        prepare: |bench| prepare_citus(bench, false),
        naive: false,
        available: |options| options.citus.is_some(),
    },
];

/// What every part of one run shares.
#[derive(Debug)]
pub struct Bench {
    pub options: RunOptions,
    /// This binary, for the bare route and the naive baseline.
    pub bench_bin: PathBuf,
    /// `<dir>/run`: this run's copies, tokens and logs.
    pub run_dir: PathBuf,
    pub tokens: PathBuf,
    pub token_secret: String,
    /// The seeded SQLite data set and its view mix.
    pub seed_dir: PathBuf,
    pub views: PathBuf,
    pub runtime: tokio::runtime::Runtime,
}

fn say(what: &str) {
    println!("likekit-bench: {what}");
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> String {
    format!("could not {what} {}: {e}", path.display())
}

/// Random hex from the OS's random source, for the run's token secret.
fn random_hex(bytes: usize) -> Result<String, String> {
    let mut buf = vec![0u8; bytes];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// The whole run. Prints every figure as a `likekit-metric` line at the
/// end, also when a part failed (the error then names what failed).
pub fn run(options: RunOptions) -> Result<(), String> {
    let load_start = load_average();
    let run_dir = options.dir.join("run");
    fs::create_dir_all(&run_dir).map_err(|e| io_error("create", &run_dir, e))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;

    let p = options.params;
    let seed_dir = options.dir.join(format!(
        "seed-{}-{}-{}-{}",
        p.posts, p.likes, p.users, p.friends
    ));
    runtime.block_on(data::seed(&seed_dir, &p))?;
    let token_secret = random_hex(32)?;
    let tokens = run_dir.join("tokens.txt");
    data::write_tokens(&token_secret, p.users, Duration::from_secs(3600), &tokens)?;

    let bench = Bench {
        bench_bin: std::env::current_exe().map_err(|e| format!("where am I? {e}"))?,
        views: seed_dir.join("views.txt"),
        seed_dir,
        run_dir,
        tokens,
        token_secret,
        runtime,
        options,
    };
    let s = bench.options.settings;
    say(&format!(
        "wrk -t{} -c{}: views {} s (after {} s warm-up), likes {} s, hot post {} s; load average {load_start}",
        s.threads,
        s.connections,
        s.views.as_secs(),
        s.warmup.as_secs(),
        s.likes.as_secs(),
        s.hot.as_secs()
    ));

    let mut found = Figures::new();
    let mut problems = Vec::new();
    say("the bare route");
    let bare = Server::start(&bench, "bare", &bench.bench_bin, &["bare"])?;
    wrk(&bench, &bare.url, Load::Views, s.warmup)?;
    let wanted = |backend: &Backend| {
        (backend.available)(&bench.options)
            && (bench.options.only.is_empty()
                || bench.options.only.iter().any(|name| name == backend.name))
    };
    for backend in BACKENDS.iter().filter(|backend| wanted(backend)) {
        if let Err(e) = measure_backend(&bench, backend, &bare.url, &mut found) {
            problems.push(format!("{}: {e}", backend.name));
        }
    }
    if let Err(e) = bare.stop() {
        problems.push(format!("bare route: {e}"));
    }
    derive_ratios(&mut found);
    let load_end = load_average();
    for (name, load) in [("start", &load_start), ("end", &load_end)] {
        if let Some(load) = load.split_whitespace().next().and_then(|l| l.parse().ok()) {
            found.insert(format!("server_bench_load_1m_{name}"), load);
        }
    }
    // A short run shows in the report.
    found.insert(
        "server_bench_seconds_per_load".into(),
        s.views.as_secs_f64(),
    );
    say(&format!("load average at the end: {load_end}"));
    for (name, value) in &found {
        println!("likekit-metric {name}={value}");
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// `/proc/loadavg`'s first three fields, or `?`.
fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| "?".to_owned())
}

/// A fresh copy of the seeded SQLite file for one run (writes change it).
fn prepare_sqlite(bench: &Bench) -> Result<Prepared, String> {
    let source = bench.seed_dir.join("likekit.db");
    let copy = bench.run_dir.join("sqlite.db");
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let file = PathBuf::from(format!("{}{suffix}", copy.display()));
        if file.exists() {
            fs::remove_file(&file).map_err(|e| io_error("remove", &file, e))?;
        }
    }
    fs::copy(&source, &copy).map_err(|e| io_error("copy", &source, e))?;
    Ok(Prepared {
        db: copy.display().to_string(),
        server_args: Vec::new(),
        cluster: None,
        schema: None,
    })
}

/// A throwaway PostgreSQL cluster with the data set seeded into a new
/// database. Made anew every run (seeding takes about 20 s), so it never
/// lags behind the generator, the schema or the store's seed path.
fn prepare_postgres(bench: &Bench) -> Result<Prepared, String> {
    let started = Instant::now();
    let mut options = ClusterOptions {
        dir: Some(bench.run_dir.join("pg")),
        keep_log: true,
        ..ClusterOptions::default()
    };
    for (name, value, _why) in POSTGRES_SETTINGS {
        options = options.setting(*name, *value);
    }
    let cluster = Cluster::start(options).map_err(|e| e.to_string())?;
    say(&format!(
        "postgres: a throwaway cluster on 127.0.0.1:{} in {} (log: {}) in {:.1} s",
        cluster.port,
        cluster.dir.display(),
        cluster.log().display(),
        started.elapsed().as_secs_f64()
    ));
    cluster
        .psql("postgres", &["CREATE DATABASE likekit"])
        .map_err(|e| e.to_string())?;
    let url = cluster.url("likekit");
    let seed_dir = bench.run_dir.join("pg-seed");
    let params = &bench.options.params;
    bench
        .runtime
        .block_on(data::seed_database(&url, &seed_dir, params))?;
    // Statistics for the planner and a visibility map for index-only
    // scans, as a database that has been running a while has.
    say("postgres: VACUUM (ANALYZE)");
    cluster
        .psql("likekit", &["VACUUM (ANALYZE)"])
        .map_err(|e| e.to_string())?;
    say(&format!(
        "postgres: ready in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(Prepared {
        db: url,
        server_args: vec!["--db-connections".into(), POSTGRES_POOL.to_string()],
        cluster: Some(cluster),
        schema: None,
    })
}

/// A schema of its own on the Citus coordinator (`--citus`): the store
/// makes its tables there, [`CITUS_LAYOUT`] distributes them (Citus's
/// default shard count, `citus.shard_count`), then the data set is seeded
/// through the store's own seed path and the tables are vacuumed and
/// analyzed. The server gets the same pool as on plain PostgreSQL, on the
/// coordinator, sending likes and one-post reads straight to the workers
/// (`direct`, the server's default) or not (`--citus-direct false`).
fn prepare_citus(bench: &Bench, direct: bool) -> Result<Prepared, String> {
    let started = Instant::now();
    let coordinator = bench
        .options
        .citus
        .as_deref()
        .ok_or("no Citus coordinator given (--citus)")?;
    let schema =
        Schema::create_prefixed(coordinator, "likekit_bench_").map_err(|e| e.to_string())?;
    say(&format!(
        "citus: schema {} on the coordinator",
        schema.name()
    ));
    let url = schema.url().to_owned();
    bench.runtime.block_on(async {
        let store = data::open_store(&url).await?;
        store.close().await.map_err(|e| e.to_string())
    })?;
    let shards = schema
        .psql(&["SHOW citus.shard_count"])
        .map_err(|e| e.to_string())?;
    let shards: u32 = shards
        .trim()
        .parse()
        .map_err(|e| format!("citus.shard_count {shards:?}: {e}"))?;
    schema
        .distribute(CITUS_LAYOUT, shards)
        .map_err(|e| e.to_string())?;
    say(&format!("citus: distributed ({shards} shards per table)"));
    let seed_dir = bench.run_dir.join("citus-seed");
    bench
        .runtime
        .block_on(data::seed_database(&url, &seed_dir, &bench.options.params))?;
    say("citus: VACUUM (ANALYZE)");
    schema
        .psql(&["VACUUM (ANALYZE) users, friends, posts, likes, post_count_shards"])
        .map_err(|e| e.to_string())?;
    say(&format!(
        "citus: ready in {:.1} s; the server on the coordinator, {}",
        started.elapsed().as_secs_f64(),
        if direct {
            "likes and one-post reads straight to the workers"
        } else {
            "every statement through it (--citus-direct false)"
        }
    ));
    let mut server_args = vec!["--db-connections".into(), POSTGRES_POOL.to_string()];
    if !direct {
        server_args.extend(["--citus-direct".into(), "false".into()]);
    }
    Ok(Prepared {
        db: url,
        server_args,
        cluster: None,
        schema: Some(schema),
    })
}

// ---------------------------------------------------------------- the loads

/// One wrk load.
#[derive(Debug, Clone, Copy)]
enum Load {
    /// Views of posts drawn from the popularity-weighted mix.
    Views,
    /// Views of posts drawn uniformly from all posts.
    ViewsUniform,
    Likes,
    Hot(u64),
}

/// What `bench/load.lua` reports.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WrkResult {
    pub requests: f64,
    pub seconds: f64,
    pub errors: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

impl WrkResult {
    pub fn per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.requests / self.seconds
        } else {
            0.0
        }
    }
}

/// Reads the script's `likekit-wrk name=value …` line.
pub fn parse_wrk_line(line: &str) -> Option<WrkResult> {
    let rest = line.trim().strip_prefix("likekit-wrk ")?;
    let mut result = WrkResult::default();
    let mut seen = 0;
    for (name, value) in rest
        .split_whitespace()
        .filter_map(|pair| pair.split_once('='))
    {
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        match name {
            "requests" => (result.requests, seen) = (value, seen + 1),
            "duration_us" => (result.seconds, seen) = (value / 1e6, seen + 1),
            "p50_us" => (result.p50_ms, seen) = (value / 1e3, seen + 1),
            "p99_us" => (result.p99_ms, seen) = (value / 1e3, seen + 1),
            n if n.starts_with("errors_") => result.errors += value,
            _ => {}
        }
    }
    (seen == 4).then_some(result)
}

fn shown(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// One wrk load against `url`; an error when wrk fails or more than 1 % of
/// the requests do.
fn wrk(bench: &Bench, url: &str, load: Load, length: Duration) -> Result<WrkResult, String> {
    let s = bench.options.settings;
    let tokens = &bench.tokens;
    let posts = bench.options.params.posts.to_string();
    let threads = s.threads.to_string();
    let mut cmd = Command::new(&bench.options.wrk);
    cmd.arg(format!("-t{}", s.threads))
        .arg(format!("-c{}", s.connections))
        .arg(format!("-d{}s", length.as_secs().max(1)))
        .args(["--timeout", "10s", "-s"])
        .arg(&bench.options.script)
        .arg(url)
        .arg("--");
    match load {
        Load::Views => cmd.arg("views").arg(tokens).arg(&bench.views),
        Load::ViewsUniform => cmd.arg("views").arg(tokens).arg(format!("uniform:{posts}")),
        Load::Likes => cmd.arg("likes").arg(tokens).arg(&posts).arg(&threads),
        Load::Hot(post) => cmd
            .arg("hot")
            .arg(tokens)
            .arg(post.to_string())
            .arg(&threads),
    };
    let shown = shown(&cmd);
    say(&shown);
    let out = cmd
        .current_dir(&bench.run_dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start `{shown}`: {e}"))?;
    let mut result = None;
    for line in String::from_utf8_lossy(&out.stdout)
        .lines()
        .chain(String::from_utf8_lossy(&out.stderr).lines())
    {
        match parse_wrk_line(line) {
            Some(found) => result = Some(found),
            None => println!("    {line}"),
        }
    }
    if !out.status.success() {
        return Err(format!("`{shown}` failed ({})", out.status));
    }
    let result = result.ok_or_else(|| format!("`{shown}` printed no likekit-wrk line"))?;
    println!(
        "    → {:.0} req/s, p50 {:.2} ms, p99 {:.2} ms, {} errors",
        result.per_second(),
        result.p50_ms,
        result.p99_ms,
        result.errors
    );
    if result.requests == 0.0 || result.errors > result.requests * 0.01 {
        return Err(format!(
            "`{shown}`: {} of {} requests failed",
            result.errors, result.requests
        ));
    }
    Ok(result)
}

/// Puts a view load's figures under `prefix`.
fn record_views(found: &mut Figures, prefix: &str, result: WrkResult) {
    found.insert(format!("{prefix}_per_s"), result.per_second());
    found.insert(format!("{prefix}_p50_ms"), result.p50_ms);
    found.insert(format!("{prefix}_p99_ms"), result.p99_ms);
}

/// The server's views against the bare route's, in [`Settings::view_rounds`]
/// rounds: in each, the bare route's view load, then the server's. On this
/// kind of machine (two cores shared with wrk) either rate moves by 10 to
/// 20 % from one load to the next, so one pair can land well above or
/// below the usual ratio; the round with the median ratio is recorded as
/// the backend's views and their bare route (`<backend>_views_*`,
/// `<backend>_bare_views_per_s`), and the lowest and highest ratio of the
/// rounds beside it (`<backend>_views_vs_bare_low`, `_high`).
fn view_rounds(
    bench: &Bench,
    bare_url: &str,
    server_url: &str,
    found: &mut Figures,
    name: &str,
) -> Result<(), String> {
    let length = bench.options.settings.views;
    let mut rounds = Vec::new();
    for _ in 0..bench.options.settings.view_rounds.max(1) {
        let bare = wrk(bench, bare_url, Load::Views, length)?;
        let views = wrk(bench, server_url, Load::Views, length)?;
        rounds.push((bare, views));
    }
    let Some(Median {
        bare,
        views,
        spread,
    }) = median_round(rounds)
    else {
        return Err("no view round ran".into());
    };
    if let Some((low, high)) = spread {
        found.insert(format!("{name}_views_vs_bare_low"), low);
        found.insert(format!("{name}_views_vs_bare_high"), high);
    }
    if !found.contains_key("bare_views_per_s") {
        record_views(found, "bare_views", bare);
    }
    found.insert(format!("{name}_bare_views_per_s"), bare.per_second());
    record_views(found, &format!("{name}_views"), views);
    Ok(())
}

/// The round of [`view_rounds`] with the median ratio of views to the bare
/// route, and (with more than one round) the lowest and highest ratio.
#[derive(Debug, PartialEq)]
struct Median {
    bare: WrkResult,
    views: WrkResult,
    spread: Option<(f64, f64)>,
}

/// Picks the median round of (bare route, views) pairs by their ratio; of
/// an even number, the higher of the two middle ones.
fn median_round(mut rounds: Vec<(WrkResult, WrkResult)>) -> Option<Median> {
    let ratio = |(bare, views): &(WrkResult, WrkResult)| {
        let bare = bare.per_second();
        if bare > 0.0 {
            views.per_second() / bare
        } else {
            0.0
        }
    };
    let round = |r: f64| (r * 1000.0).round() / 1000.0;
    rounds.sort_by(|a, b| ratio(a).total_cmp(&ratio(b)));
    let spread = match rounds.as_slice() {
        [] => return None,
        [_] => None,
        [low, .., high] => Some((round(ratio(low)), round(ratio(high)))),
    };
    let (bare, views) = rounds.swap_remove(rounds.len() / 2);
    Some(Median {
        bare,
        views,
        spread,
    })
}

/// The bare route under the like load, measured right before the real
/// server's, so both see the machine in the same state. The first
/// backend's figure is the report's `bare_likes_per_s`; each backend's
/// ratio uses its own neighbour (`<backend>_bare_likes_per_s`).
fn bare_likes_beside(
    bench: &Bench,
    bare_url: &str,
    found: &mut Figures,
    name: &str,
) -> Result<(), String> {
    let result = wrk(bench, bare_url, Load::Likes, bench.options.settings.views)?;
    found
        .entry("bare_likes_per_s".into())
        .or_insert(result.per_second());
    found.insert(format!("{name}_bare_likes_per_s"), result.per_second());
    Ok(())
}

/// A write load (`likes` or `hot`) on a server of its own, then a graceful
/// stop and the audit.
fn write_load(
    bench: &Bench,
    prepared: &Prepared,
    name: &str,
    what: &str,
    load: Load,
    length: Duration,
    found: &mut Figures,
) -> Result<(), String> {
    let server = Server::start(
        bench,
        &format!("{name}-{what}"),
        &bench.options.server,
        &server_args(bench, prepared),
    )?;
    let before = written(&server.url);
    let result = wrk(bench, &server.url, load, length)?;
    let rate = if what == "likes" {
        "likes"
    } else {
        "hot_likes"
    };
    found.insert(format!("{name}_{rate}_per_s"), result.per_second());
    found.insert(format!("{name}_{what}_p99_ms"), result.p99_ms);
    if let (Some(before), Some(after)) = (before, written(&server.url)) {
        found.insert(
            format!("{name}_{what}_changed_per_s"),
            (after - before) / result.seconds,
        );
    }
    // The server owns its database while it runs: check the books after a
    // graceful stop (which also commits every accepted write).
    server.stop()?;
    let exact = bench.runtime.block_on(data::audit(&prepared.db))?;
    found.insert(
        format!("{name}_{what}_exact"),
        if exact { 1.0 } else { 0.0 },
    );
    Ok(())
}

/// The view server's friend-set lifetime (10 minutes), longer than its
/// warm-up and view rounds together.
const VIEW_FRIENDS_TTL_MS: &str = "600000";

fn server_args<'a>(bench: &'a Bench, prepared: &'a Prepared) -> Vec<&'a str> {
    let mut args = vec!["--db", &prepared.db, "--token-secret", &bench.token_secret];
    args.extend(prepared.server_args.iter().map(String::as_str));
    args
}

fn measure_backend(
    bench: &Bench,
    backend: &Backend,
    bare_url: &str,
    found: &mut Figures,
) -> Result<(), String> {
    let name = backend.name;
    let s = bench.options.settings;
    say(&format!("{name}: preparing the data set"));
    let prepared = (backend.prepare)(bench)?;

    if backend.naive {
        say(&format!("{name}: the naive baseline"));
        let naive = Server::start(
            bench,
            &format!("{name}-naive"),
            &bench.bench_bin,
            &[
                "naive",
                "--db",
                &prepared.db,
                "--token-secret",
                &bench.token_secret,
            ],
        )?;
        wrk(bench, &naive.url, Load::Views, s.warmup)?;
        let views = wrk(bench, &naive.url, Load::Views, s.views)?;
        record_views(found, &format!("{name}_naive_views"), views);
        let uniform = wrk(bench, &naive.url, Load::ViewsUniform, s.views)?;
        record_views(found, &format!("{name}_naive_views_uniform"), uniform);
        naive.stop()?;
    }

    say(&format!(
        "{name}: LikeKit, each load right after the bare route's (views: {} rounds)",
        s.view_rounds.max(1)
    ));
    // Friend sets kept for the whole view part: the warm-up reads each
    // viewer's once, as a server in service has them, and no round meets
    // the default 30 s expiry, which would make that round re-read all
    // 10,000 at once (in service the re-reads spread over the 30 s).
    let mut args = server_args(bench, &prepared);
    args.extend(["--friends-ttl-ms", VIEW_FRIENDS_TTL_MS]);
    let server = Server::start(bench, name, &bench.options.server, &args)?;
    wrk(bench, &server.url, Load::Views, s.warmup)?;
    view_rounds(bench, bare_url, &server.url, found, name)?;
    let uniform = wrk(bench, &server.url, Load::ViewsUniform, s.views)?;
    record_views(found, &format!("{name}_views_uniform"), uniform);
    server.stop()?;

    if name == "sqlite" {
        // The same views with the request journal on (an admin key turns
        // it on): what recording every request costs.
        say(&format!("{name}: views with the request journal on"));
        let mut args = server_args(bench, &prepared);
        args.extend(["--admin-key", bench.token_secret.as_str()]);
        args.extend(["--friends-ttl-ms", VIEW_FRIENDS_TTL_MS]);
        let journaled = Server::start(
            bench,
            &format!("{name}-journal"),
            &bench.options.server,
            &args,
        )?;
        wrk(bench, &journaled.url, Load::Views, s.warmup)?;
        let views = wrk(bench, &journaled.url, Load::Views, s.views)?;
        record_views(found, &format!("{name}_views_journal"), views);
        journaled.stop()?;
    }

    bare_likes_beside(bench, bare_url, found, name)?;
    write_load(bench, &prepared, name, "likes", Load::Likes, s.likes, found)?;
    let hot = Load::Hot(data::hot_post(&bench.options.params));
    write_load(bench, &prepared, name, "hot", hot, s.hot, found)?;
    if let Some(cluster) = prepared.cluster {
        cluster.stop().map_err(|e| e.to_string())?;
    }
    drop(prepared.schema);
    Ok(())
}

/// Ratios between figures of the same run.
pub fn derive_ratios(found: &mut Figures) {
    let mut derived = Vec::new();
    for backend in BACKENDS {
        let b = backend.name;
        // (name, numerator, denominator); `bare_vs_naive` is the most any
        // view could reach over the naive baseline here.
        let pairs = [
            ("views_vs_bare", "views", "bare_views"),
            ("views_journal_vs_views", "views_journal", "views"),
            ("views_vs_naive", "views", "naive_views"),
            ("bare_vs_naive", "bare_views", "naive_views"),
            (
                "views_uniform_vs_naive",
                "views_uniform",
                "naive_views_uniform",
            ),
            ("likes_vs_bare", "likes", "bare_likes"),
        ];
        for (name, numerator, denominator) in pairs {
            let n = found.get(&format!("{b}_{numerator}_per_s"));
            let d = found.get(&format!("{b}_{denominator}_per_s"));
            if let (Some(n), Some(d)) = (n, d)
                && *d > 0.0
            {
                derived.push((format!("{b}_{name}"), (n / d * 1000.0).round() / 1000.0));
            }
        }
    }
    // Citus beside plain PostgreSQL on the same machine, in the same run.
    for citus in ["citus", "citus_coordinator"] {
        for rate in ["views", "views_uniform", "likes", "hot_likes"] {
            let c = found.get(&format!("{citus}_{rate}_per_s"));
            let p = found.get(&format!("postgres_{rate}_per_s"));
            if let (Some(c), Some(p)) = (c, p)
                && *p > 0.0
            {
                derived.push((
                    format!("{citus}_{rate}_vs_postgres"),
                    (c / p * 1000.0).round() / 1000.0,
                ));
            }
        }
    }
    found.extend(derived);
}

/// Likes and unlikes that really changed a row, from the server's metrics.
fn written(url: &str) -> Option<f64> {
    let addr: SocketAddr = url.strip_prefix("http://")?.parse().ok()?;
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let values = text
        .lines()
        .filter(|line| line.starts_with("likekit_likes_written_total{"))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok());
    values.reduce(|a, b| a + b)
}

// ---------------------------------------------------------------- servers

/// A server process for one part of the run; killed if dropped unstopped.
#[derive(Debug)]
struct Server {
    child: Option<Child>,
    url: String,
    name: String,
}

impl Server {
    /// Starts `program args… --listen 127.0.0.1:0` with its log in the run
    /// folder and waits for its `listening on URL` line.
    fn start(bench: &Bench, name: &str, program: &Path, args: &[&str]) -> Result<Server, String> {
        let log_path = bench.run_dir.join(format!("{name}.log"));
        let log = fs::File::create(&log_path).map_err(|e| io_error("create", &log_path, e))?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .args(["--listen", "127.0.0.1:0"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log);
        say(&shown(&cmd).replace(&bench.token_secret, "…"));
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        let stdout = child.stdout.take();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let Some(stdout) = stdout else { return };
            let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
            let url = lines.by_ref().find_map(|line| {
                line.strip_prefix("listening on ")
                    .map(|url| url.trim().trim_end_matches('/').to_owned())
            });
            let _ = tx.send(url);
            // Keep draining so the server never blocks on a full pipe.
            lines.for_each(drop);
        });
        let mut server = Server {
            child: Some(child),
            url: String::new(),
            name: name.to_owned(),
        };
        server.url = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(Some(url)) => url,
            Ok(None) => {
                return Err(format!(
                    "the {name} server exited; see {}",
                    log_path.display()
                ));
            }
            Err(_) => {
                return Err(format!(
                    "the {name} server did not start within 60 s; see {}",
                    log_path.display()
                ));
            }
        };
        Ok(server)
    }

    /// SIGTERM, then waits for the graceful shutdown (which commits every
    /// accepted write); an error if it fails or takes more than 30 s.
    fn stop(mut self) -> Result<(), String> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => {
                    return Err(format!("the {} server stopped with {status}", self.name));
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("the {} server did not stop within 30 s", self.name));
                }
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(per_second: f64) -> WrkResult {
        WrkResult {
            requests: per_second * 10.0,
            seconds: 10.0,
            ..WrkResult::default()
        }
    }

    #[test]
    fn the_median_round_of_views_against_the_bare_route_is_reported() {
        // Ratios 0.63, 0.45 and 0.5, in that order: the 0.5 round is the
        // median, neither the first, the middle nor the fastest load.
        let rounds = vec![
            (rate(90_000.0), rate(56_700.0)),
            (rate(120_000.0), rate(54_000.0)),
            (rate(100_000.0), rate(50_000.0)),
        ];
        let median = median_round(rounds).expect("three rounds");
        assert_eq!(median.bare, rate(100_000.0));
        assert_eq!(median.views, rate(50_000.0));
        assert_eq!(median.spread, Some((0.45, 0.63)));

        // One round: itself, and no spread.
        let one = median_round(vec![(rate(100_000.0), rate(61_000.0))]).expect("one round");
        assert_eq!((one.bare, one.views), (rate(100_000.0), rate(61_000.0)));
        assert_eq!(one.spread, None);
        assert_eq!(median_round(Vec::new()), None);
    }

    #[test]
    fn reads_the_wrk_line() {
        let line = "likekit-wrk requests=579141 duration_us=5095538 errors_status=2 errors_connect=0 \
                    errors_read=1 errors_write=0 errors_timeout=0 p50_us=273 p90_us=2569 p99_us=4837 \
                    max_us=24569 mean_us=837.7";
        let r = parse_wrk_line(line).expect("parsed");
        assert_eq!(r.requests, 579_141.0);
        assert!((r.seconds - 5.095_538).abs() < 1e-9);
        assert_eq!(r.errors, 3.0);
        assert!((r.p50_ms - 0.273).abs() < 1e-9);
        assert!((r.p99_ms - 4.837).abs() < 1e-9);
        assert!((r.per_second() - 579_141.0 / 5.095_538).abs() < 1e-6);
        assert_eq!(parse_wrk_line("Requests/sec: 113656.50"), None);
        assert_eq!(parse_wrk_line("likekit-wrk requests=5"), None, "incomplete");
    }

    #[test]
    fn ratios_come_from_the_same_run() {
        let mut found: Figures = [
            ("sqlite_bare_views_per_s", 100_000.0),
            ("sqlite_views_per_s", 85_000.0),
            ("sqlite_naive_views_per_s", 2_000.0),
            ("sqlite_bare_likes_per_s", 40_000.0),
            ("sqlite_likes_per_s", 25_000.0),
            ("postgres_bare_views_per_s", 90_000.0),
            ("postgres_views_per_s", 45_000.0),
            ("postgres_naive_views_per_s", 3_000.0),
            ("postgres_bare_likes_per_s", 40_000.0),
            ("postgres_likes_per_s", 8_000.0),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        derive_ratios(&mut found);
        assert_eq!(found["sqlite_views_vs_bare"], 0.85);
        assert_eq!(found["sqlite_views_vs_naive"], 42.5);
        assert_eq!(found["sqlite_bare_vs_naive"], 50.0);
        assert_eq!(found["sqlite_likes_vs_bare"], 0.625);
        assert!(!found.contains_key("sqlite_views_uniform_vs_naive"));
        // Each backend against its own neighbouring bare-route load.
        assert_eq!(found["postgres_views_vs_bare"], 0.5);
        assert_eq!(found["postgres_views_vs_naive"], 15.0);
        assert_eq!(found["postgres_likes_vs_bare"], 0.2);
    }

    #[test]
    fn the_script_has_every_mode() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/load.lua");
        let text = fs::read_to_string(script).expect("bench/load.lua");
        for mode in [
            "\"views\"",
            "\"likes\"",
            "\"hot\"",
            "likekit-wrk",
            "uniform:",
        ] {
            assert!(text.contains(mode), "{mode}");
        }
    }

    #[test]
    fn the_postgres_settings_keep_commits_durable() {
        for (name, _, why) in POSTGRES_SETTINGS {
            assert!(!["fsync", "synchronous_commit", "full_page_writes"].contains(name));
            assert!(!why.is_empty(), "{name}");
        }
        let pool: u32 = POSTGRES_POOL;
        let max: u32 = POSTGRES_SETTINGS
            .iter()
            .find(|(n, ..)| *n == "max_connections")
            .and_then(|(_, v, _)| v.parse().ok())
            .expect("max_connections");
        assert!(max > pool + 8 + 4, "pool, naive, seed/audit and psql fit");
    }
}
