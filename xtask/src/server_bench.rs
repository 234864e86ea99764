//! The `server` bench suite: the reference server under `wrk` on loopback.
//!
//! One run, in order:
//!
//! 1. builds `likekit-server` (release) and the data set — 100,000 posts,
//!    1,000,000 like rows, 10,000 users with 300 friends each — with
//!    `likekit-server bench seed` (cached under `target/bench/`, rebuilt only
//!    when its parameters or generator change), and mints one token per user;
//! 2. the **bare route** (`likekit-server bench bare`: the same HTTP stack
//!    answering a fixed JSON body), running throughout: the ceiling. Each of
//!    the real server's view and like loads runs right after the bare
//!    route's same load, so the two see the machine in the same state;
//! 3. per backend in [`BACKENDS`] (SQLite, then PostgreSQL), on a fresh copy
//!    of the data: the **naive baseline** (`--naive-views`: `COUNT(*)` and a
//!    friends join on every view), then the real server: **views**, durable
//!    **likes** spread over all posts, and one **hot post**; after each write
//!    load the server is stopped gracefully and the store's audit checks
//!    every count against its rows (`exact`).
//!
//! Last, `cargo bench -p likekit-server --bench view_path` times one view
//! through the whole router in process (no network), beside the bare route.
//!
//! Every load uses the same wrk settings ([`Settings`]) and `bench/load.lua`.
//! The view load draws posts in proportion to their popularity (see the
//! server's `bench` module); a uniform draw is measured too, for reference.
//! Figures are printed as `likekit-metric` lines and become report rows;
//! `bench/server.svg` charts them against their targets.
//!
//! A backend is one [`Backend`] entry plus its report rows (`bench::ROWS`,
//! checked by a test here). PostgreSQL's `prepare` starts a throwaway
//! cluster under the run folder ([`pg_cluster`](crate::pg_cluster): tuned
//! for a durable server, stopped and deleted when the backend's part ends,
//! also on failure), creates an empty database, runs `likekit-server bench
//! seed --dir <run dir>/pg-seed --db <url>` (the same generator and
//! parameters, through the store's own seed path; about 20 s), vacuums and
//! analyzes it, and returns the URL with the server's pool size
//! ([`POSTGRES_POOL`]) and the cluster. `bench audit --db <url>` checks it
//! after each write load like the SQLite file. The cluster is made anew
//! every run, so it is never stale. The naive baseline runs on it too (the
//! same two statements per view as on SQLite).

use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::bench::{self, Figures};
use crate::pg_cluster::Cluster;
use crate::{Ctx, install, proc};

const SERVER: &str = "likekit-server";

/// The data set, as `likekit-server bench seed` flags.
const POSTS: u64 = 100_000;
const LIKES: u64 = 1_000_000;
const USERS: u64 = 10_000;
const FRIENDS: u64 = 300;

/// The PostgreSQL server's connection pool (`--db-connections`); see
/// `prepare_postgres`. The cluster's `max_connections` leaves room for it.
const POSTGRES_POOL: u32 = 32;

/// wrk settings shared by every load.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub threads: u32,
    pub connections: u32,
    /// Each view measurement.
    pub views: Duration,
    /// Unmeasured load before a view measurement: long enough for every
    /// viewer's friend set to be read once (10,000 of them; from PostgreSQL
    /// that takes several seconds on 2 cores), as on a server in service.
    pub warmup: Duration,
    /// The spread-out like load.
    pub likes: Duration,
    /// The hot-post load.
    pub hot: Duration,
}

impl Settings {
    /// The full run (about two and a half minutes of load), or a short one
    /// with `LIKEKIT_BENCH_QUICK=1` for trying the bench itself.
    fn from_env() -> Settings {
        let quick = std::env::var_os("LIKEKIT_BENCH_QUICK").is_some_and(|v| v != "0");
        let secs = |full: u64, short: u64| Duration::from_secs(if quick { short } else { full });
        Settings {
            threads: 2,
            connections: 64,
            views: secs(10, 3),
            warmup: secs(8, 2),
            likes: secs(20, 3),
            hot: secs(15, 3),
        }
    }
}

/// A storage backend the server is measured on.
#[derive(Debug)]
pub struct Backend {
    /// The prefix of its figures (`sqlite_views_per_s`).
    pub name: &'static str,
    /// Its name in the chart.
    pub label: &'static str,
    /// Its bars' colours: views and spread likes, the hot post.
    pub colours: (&'static str, &'static str),
    /// Gets a freshly seeded database ready for one run.
    pub prepare: fn(&Bench) -> Result<Prepared, String>,
}

/// A seeded database ready for the server.
#[derive(Debug)]
pub struct Prepared {
    /// The server's `--db` value (also what `bench audit --db` checks).
    pub db: String,
    /// Whether `--naive-views` works on it.
    pub naive: bool,
    /// More server flags for this backend.
    pub server_args: Vec<String>,
    /// The database server, for backends that run one: kept while the
    /// backend is measured; dropping it stops the server and deletes it.
    pub cluster: Option<Cluster>,
}

pub const BACKENDS: &[Backend] = &[
    Backend {
        name: "sqlite",
        label: "SQLite",
        colours: (BLUE, LIGHT_BLUE),
        prepare: prepare_sqlite,
    },
    Backend {
        name: "postgres",
        label: "PostgreSQL",
        colours: (PURPLE, LIGHT_PURPLE),
        prepare: prepare_postgres,
    },
];

/// What every part of one run shares.
#[derive(Debug)]
pub struct Bench {
    pub server: PathBuf,
    pub wrk: PathBuf,
    pub script: PathBuf,
    /// `target/bench/run`: this run's copies, tokens and logs.
    pub run_dir: PathBuf,
    pub tokens: PathBuf,
    pub token_secret: String,
    /// The seeded SQLite data set and its view mix.
    pub seed_dir: PathBuf,
    pub views: PathBuf,
    pub hot_post: u64,
    pub settings: Settings,
}

fn say(what: &str) {
    println!("xtask: {what}");
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> String {
    format!("could not {what} {}: {e}", path.display())
}

/// The suite's entry in `bench::SUITES`.
pub fn run(ctx: &Ctx, figures: &mut Figures) -> Result<(), String> {
    let load_start = load_average();
    let wrk_path = install::wrk()?;
    let server = build_server(ctx)?;
    let dir = ctx.target_dir.join("bench");
    let run_dir = dir.join("run");
    fs::create_dir_all(&run_dir).map_err(|e| io_error("create", &run_dir, e))?;

    let seed_dir = dir.join(format!("seed-{POSTS}-{LIKES}-{USERS}-{FRIENDS}"));
    let mut seed = seed_command(&server, &seed_dir);
    say(&proc::display(&seed));
    proc::run(&mut seed)?;
    let marker = seed_dir.join("seed.txt");
    let marker_text = fs::read_to_string(&marker).map_err(|e| io_error("read", &marker, e))?;
    let hot_post = marker_text
        .lines()
        .find_map(|l| l.strip_prefix("hot_post="))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("{} names no hot post", marker.display()))?;

    let token_secret = crate::server::random_hex(32);
    let tokens = run_dir.join("tokens.txt");
    let mut mint = Command::new(&server);
    mint.args(["bench", "tokens", "--users", &USERS.to_string(), "--out"])
        .arg(&tokens)
        .env("LIKEKIT_TOKEN_SECRET", &token_secret);
    proc::run(&mut mint)?;

    let bench = Bench {
        server,
        wrk: wrk_path,
        script: ctx.root.join("bench").join("load.lua"),
        views: seed_dir.join("views.txt"),
        seed_dir,
        run_dir,
        tokens,
        token_secret,
        hot_post,
        settings: Settings::from_env(),
    };
    let s = bench.settings;
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
    let bare = Server::start(
        &bench,
        "bare",
        &["bench", "bare", "--listen", "127.0.0.1:0"],
    )?;
    wrk(&bench, &bare.url, Load::Views, bench.settings.warmup)?;
    for backend in BACKENDS {
        if let Err(e) = measure_backend(&bench, backend, &bare.url, &mut found) {
            problems.push(format!("{}: {e}", backend.name));
        }
    }
    if let Err(e) = bare.stop() {
        problems.push(format!("bare route: {e}"));
    }
    // The view path in process (criterion): CPU per view without the
    // kernel and the load generator.
    if let Err(e) = bench::cargo_bench(
        ctx,
        &["-p", "likekit-server", "--bench", "view_path"],
        &mut found,
    ) {
        problems.push(format!("view_path: {e}"));
    }
    derive_ratios(&mut found);
    if let Some(load) = load_start
        .split_whitespace()
        .next()
        .and_then(|l| l.parse().ok())
    {
        found.insert("server_bench_load_1m_start".into(), load);
    }
    // A short run (LIKEKIT_BENCH_QUICK) shows in the report.
    found.insert(
        "server_bench_seconds_per_load".into(),
        bench.settings.views.as_secs_f64(),
    );
    let load_end = load_average();
    if let Some(load) = load_end
        .split_whitespace()
        .next()
        .and_then(|l| l.parse().ok())
    {
        found.insert("server_bench_load_1m_end".into(), load);
    }
    say(&format!("load average at the end: {load_end}"));

    for (name, value) in &found {
        println!("likekit-metric {name}={value}");
    }
    let chart = ctx.root.join("bench").join("server.svg");
    fs::write(&chart, chart_svg(&found, &bench.settings))
        .map_err(|e| io_error("write", &chart, e))?;
    say(&format!("wrote {}", chart.display()));
    figures.extend(found);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// `likekit-server bench seed --dir <dir>` with the data set's parameters.
fn seed_command(server: &Path, dir: &Path) -> Command {
    let mut seed = Command::new(server);
    seed.args(["bench", "seed", "--dir"])
        .arg(dir)
        .args(["--posts", &POSTS.to_string(), "--likes", &LIKES.to_string()])
        .args([
            "--users",
            &USERS.to_string(),
            "--friends",
            &FRIENDS.to_string(),
        ]);
    seed
}

fn build_server(ctx: &Ctx) -> Result<PathBuf, String> {
    let mut build = proc::cargo();
    build
        .current_dir(&ctx.root)
        .args(["build", "--release", "--package", SERVER, "--bin", SERVER]);
    say(&format!("building the server ({})", proc::display(&build)));
    proc::run(&mut build)?;
    Ok(ctx.target_dir.join("release").join(SERVER))
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
        naive: true,
        server_args: Vec::new(),
        cluster: None,
    })
}

/// A throwaway PostgreSQL cluster with the data set seeded into a new
/// database. Made anew every run (seeding takes about 20 s), so it never
/// lags behind the generator, the schema or the store's seed path.
fn prepare_postgres(bench: &Bench) -> Result<Prepared, String> {
    let dir = bench.run_dir.join("pg");
    let started = Instant::now();
    let cluster = Cluster::start(&dir)?;
    say(&format!(
        "postgres: a throwaway cluster on 127.0.0.1:{} in {} (log: {}) in {:.1} s",
        cluster.port,
        cluster.dir.display(),
        cluster.log().display(),
        started.elapsed().as_secs_f64()
    ));
    cluster.psql("postgres", &["CREATE DATABASE likekit"])?;
    let url = cluster.url("likekit");
    let seed_dir = bench.run_dir.join("pg-seed");
    let mut seed = seed_command(&bench.server, &seed_dir);
    seed.args(["--db", &url]);
    say(&proc::display(&seed));
    proc::run(&mut seed)?;
    // The same data as the SQLite file: the same generator and parameters.
    let marker = |dir: &Path| {
        let path = dir.join("seed.txt");
        fs::read_to_string(&path).map_err(|e| io_error("read", &path, e))
    };
    if marker(&seed_dir)? != marker(&bench.seed_dir)? {
        return Err(format!(
            "{} and {} describe different data sets",
            seed_dir.join("seed.txt").display(),
            bench.seed_dir.join("seed.txt").display()
        ));
    }
    // Statistics for the planner and a visibility map for index-only
    // scans, as a database that has been running a while has.
    say("postgres: VACUUM (ANALYZE)");
    cluster.psql("likekit", &["VACUUM (ANALYZE)"])?;
    say(&format!(
        "postgres: ready in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(Prepared {
        db: url,
        naive: true,
        // Writes wait on WAL flushes, and every commit waiting when one
        // starts shares it: with wrk's 64 connections a pool of 32 lets
        // about twice as many likes share each flush as the default pool
        // (8 on 2 cores), on this machine about twice the durable likes a
        // second. (The view reads use at most half of it.)
        server_args: vec!["--db-connections".into(), POSTGRES_POOL.to_string()],
        cluster: Some(cluster),
    })
}

// ---------------------------------------------------------------- the loads

/// One wrk load.
#[derive(Debug, Clone, Copy)]
enum Load {
    /// Views of posts drawn from the popularity-weighted mix.
    Views,
    /// Views of posts drawn uniformly from 1..=POSTS.
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
    for pair in rest.split_whitespace() {
        let Some((name, value)) = pair.split_once('=') else {
            continue;
        };
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

fn wrk(bench: &Bench, url: &str, load: Load, length: Duration) -> Result<WrkResult, String> {
    let s = bench.settings;
    let mut cmd = Command::new(&bench.wrk);
    cmd.arg(format!("-t{}", s.threads))
        .arg(format!("-c{}", s.connections))
        .arg(format!("-d{}s", length.as_secs().max(1)))
        .args(["--timeout", "10s", "-s"])
        .arg(&bench.script)
        .arg(url)
        .arg("--");
    match load {
        Load::Views => cmd.arg("views").arg(&bench.tokens).arg(&bench.views),
        Load::ViewsUniform => cmd
            .arg("views")
            .arg(&bench.tokens)
            .arg(format!("uniform:{POSTS}")),
        Load::Likes => cmd
            .arg("likes")
            .arg(&bench.tokens)
            .arg(POSTS.to_string())
            .arg(s.threads.to_string()),
        Load::Hot(post) => cmd
            .arg("hot")
            .arg(&bench.tokens)
            .arg(post.to_string())
            .arg(s.threads.to_string()),
    };
    let shown = proc::display(&cmd);
    say(&shown);
    cmd.current_dir(&bench.run_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| proc::spawn_error(&cmd, &e))?;
    let (tx, rx) = mpsc::channel();
    for pipe in [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    drop(tx);
    // wrk stops itself after `length`; never let it run much longer.
    let deadline = Instant::now() + length + Duration::from_secs(30);
    let mut result = None;
    let mut output = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                if let Some(found) = parse_wrk_line(&line) {
                    result = Some(found);
                } else {
                    println!("    {line}");
                    output.push(line);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("`{shown}` ran past its time and was stopped"));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for `{shown}` failed: {e}"))?;
    if !status.success() {
        return Err(format!("`{shown}` failed ({status})"));
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

fn serve_args<'a>(bench: &'a Bench, prepared: &'a Prepared) -> Vec<&'a str> {
    let mut args = vec![
        "--listen",
        "127.0.0.1:0",
        "--db",
        &prepared.db,
        "--token-secret",
        &bench.token_secret,
    ];
    args.extend(prepared.server_args.iter().map(String::as_str));
    args
}

/// The bare route under `load`, measured right before the real server's
/// same load, so both see the machine in the same state. The first
/// backend's figures are the report's `bare_*`; each backend's ratio uses
/// its own neighbour (`<backend>_bare_*`).
fn bare_beside(
    bench: &Bench,
    bare_url: &str,
    load: Load,
    length: Duration,
    found: &mut Figures,
    name: &str,
) -> Result<(), String> {
    let result = wrk(bench, bare_url, load, length)?;
    let what = if matches!(load, Load::Likes) {
        "likes"
    } else {
        "views"
    };
    if !found.contains_key(&format!("bare_{what}_per_s")) {
        if what == "views" {
            record_views(found, "bare_views", result);
        } else {
            found.insert("bare_likes_per_s".into(), result.per_second());
        }
    }
    found.insert(format!("{name}_bare_{what}_per_s"), result.per_second());
    Ok(())
}

fn measure_backend(
    bench: &Bench,
    backend: &Backend,
    bare_url: &str,
    found: &mut Figures,
) -> Result<(), String> {
    let name = backend.name;
    say(&format!("{name}: preparing the data set"));
    let prepared = (backend.prepare)(bench)?;
    let s = bench.settings;

    if prepared.naive {
        say(&format!("{name}: the naive baseline"));
        let mut args = serve_args(bench, &prepared);
        args.push("--naive-views");
        let server = Server::start(bench, &format!("{name}-naive"), &args)?;
        wrk(bench, &server.url, Load::Views, s.warmup)?;
        record_views(
            found,
            &format!("{name}_naive_views"),
            wrk(bench, &server.url, Load::Views, s.views)?,
        );
        record_views(
            found,
            &format!("{name}_naive_views_uniform"),
            wrk(bench, &server.url, Load::ViewsUniform, s.views)?,
        );
        server.stop()?;
    }

    say(&format!(
        "{name}: LikeKit, each load right after the bare route's"
    ));
    let server = Server::start(bench, name, &serve_args(bench, &prepared))?;
    bare_beside(bench, bare_url, Load::Views, s.views, found, name)?;
    wrk(bench, &server.url, Load::Views, s.warmup)?;
    record_views(
        found,
        &format!("{name}_views"),
        wrk(bench, &server.url, Load::Views, s.views)?,
    );
    record_views(
        found,
        &format!("{name}_views_uniform"),
        wrk(bench, &server.url, Load::ViewsUniform, s.views)?,
    );

    bare_beside(bench, bare_url, Load::Likes, s.views, found, name)?;
    let before = written(&server.url);
    let likes = wrk(bench, &server.url, Load::Likes, s.likes)?;
    found.insert(format!("{name}_likes_per_s"), likes.per_second());
    found.insert(format!("{name}_likes_p99_ms"), likes.p99_ms);
    if let (Some(before), Some(after)) = (before, written(&server.url)) {
        found.insert(
            format!("{name}_likes_changed_per_s"),
            (after - before) / likes.seconds,
        );
    }
    // The server owns its database while it runs: check the books after a
    // graceful stop (which also commits every accepted write).
    server.stop()?;
    found.insert(format!("{name}_likes_exact"), audit(bench, &prepared.db)?);

    let server = Server::start(bench, &format!("{name}-hot"), &serve_args(bench, &prepared))?;
    let before = written(&server.url);
    let hot = wrk(bench, &server.url, Load::Hot(bench.hot_post), s.hot)?;
    found.insert(format!("{name}_hot_likes_per_s"), hot.per_second());
    found.insert(format!("{name}_hot_p99_ms"), hot.p99_ms);
    if let (Some(before), Some(after)) = (before, written(&server.url)) {
        found.insert(
            format!("{name}_hot_changed_per_s"),
            (after - before) / hot.seconds,
        );
    }
    server.stop()?;
    found.insert(format!("{name}_hot_exact"), audit(bench, &prepared.db)?);
    if let Some(cluster) = prepared.cluster {
        cluster.stop()?;
    }
    Ok(())
}

/// Ratios between figures of the same run.
fn derive_ratios(found: &mut Figures) {
    let mut derived = Vec::new();
    for backend in BACKENDS {
        let b = backend.name;
        let pairs = [
            (
                format!("{b}_views_vs_bare"),
                format!("{b}_views_per_s"),
                format!("{b}_bare_views_per_s"),
            ),
            (
                format!("{b}_views_vs_naive"),
                format!("{b}_views_per_s"),
                format!("{b}_naive_views_per_s"),
            ),
            // The most any view could reach over the naive baseline here:
            // the bare route does no work at all.
            (
                format!("{b}_bare_vs_naive"),
                format!("{b}_bare_views_per_s"),
                format!("{b}_naive_views_per_s"),
            ),
            (
                format!("{b}_views_uniform_vs_naive"),
                format!("{b}_views_uniform_per_s"),
                format!("{b}_naive_views_uniform_per_s"),
            ),
            (
                format!("{b}_likes_vs_bare"),
                format!("{b}_likes_per_s"),
                format!("{b}_bare_likes_per_s"),
            ),
        ];
        for (name, numerator, denominator) in pairs {
            if let (Some(n), Some(d)) = (found.get(&numerator), found.get(&denominator))
                && *d > 0.0
            {
                derived.push((name, (n / d * 1000.0).round() / 1000.0));
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
    let mut total = None;
    for line in text.lines() {
        if line.starts_with("likekit_likes_written_total{")
            && let Some(value) = line.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok())
        {
            *total.get_or_insert(0.0) += value;
        }
    }
    total
}

/// `likekit-server bench audit`: 1 when every count equals its rows.
fn audit(bench: &Bench, db: &str) -> Result<f64, String> {
    let mut cmd = Command::new(&bench.server);
    cmd.args(["bench", "audit", "--db", db]);
    let shown = proc::display(&cmd);
    say(&shown);
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| proc::spawn_error(&cmd, &e))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!(
        "{}",
        stdout
            .lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    );
    if stdout.contains("exact: yes") && out.status.success() {
        Ok(1.0)
    } else if stdout.contains("exact: no") {
        Ok(0.0)
    } else {
        Err(format!(
            "`{shown}` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

// ---------------------------------------------------------------- servers

/// A server process for one part of the run; killed if dropped unstopped.
struct Server {
    child: Option<Child>,
    url: String,
    name: String,
}

impl Server {
    fn start(bench: &Bench, name: &str, args: &[&str]) -> Result<Server, String> {
        let log_path = bench.run_dir.join(format!("{name}.log"));
        let log = fs::File::create(&log_path).map_err(|e| io_error("create", &log_path, e))?;
        let mut cmd = Command::new(&bench.server);
        cmd.args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log);
        let shown = proc::display(&cmd).replace(&bench.token_secret, "…");
        say(&shown);
        let mut child = cmd.spawn().map_err(|e| proc::spawn_error(&cmd, &e))?;
        let mut server = Server {
            child: None,
            url: String::new(),
            name: name.to_owned(),
        };
        server.url = crate::server::wait_for_url(&mut child, &format!("the {name}"), &log_path)
            .inspect_err(|_| {
                let _ = child.kill();
                let _ = child.wait();
            })?;
        server.child = Some(child);
        Ok(server)
    }

    /// SIGTERM, then waits for the graceful shutdown (which commits every
    /// accepted write); an error if it fails or takes too long.
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

// ---------------------------------------------------------------- the chart

struct Bar {
    label: String,
    value: f64,
    colour: &'static str,
}

struct Mark {
    label: String,
    value: f64,
    colour: &'static str,
}

struct Panel {
    title: &'static str,
    bars: Vec<Bar>,
    marks: Vec<Mark>,
}

const GREY: &str = "#9aa0a6";
const BLUE: &str = "#1a73e8";
const LIGHT_BLUE: &str = "#7baaf7";
const ORANGE: &str = "#e8710a";
const GREEN: &str = "#188038";
const RED: &str = "#d93025";
const PURPLE: &str = "#9334e6";
const LIGHT_PURPLE: &str = "#c58af9";

/// `bench/server.svg`: views/s and likes/s beside their targets and the
/// bare-route ceiling, one panel each.
pub fn chart_svg(found: &Figures, settings: &Settings) -> String {
    let get = |name: &str| found.get(name).copied();
    let mut views = Panel {
        title: "Post views per second (GET /posts/{id}/likes)",
        bars: Vec::new(),
        marks: Vec::new(),
    };
    let mut likes = Panel {
        title: "Durable likes and unlikes per second",
        bars: Vec::new(),
        marks: Vec::new(),
    };
    if let Some(v) = get("bare_views_per_s") {
        views.bars.push(Bar {
            label: "bare route (ceiling)".into(),
            value: v,
            colour: GREY,
        });
        views.marks.push(Mark {
            label: "0.8 × bare".into(),
            value: 0.8 * v,
            colour: GREEN,
        });
        if get("postgres_views_per_s").is_some() {
            views.marks.push(Mark {
                label: "0.5 × bare".into(),
                value: 0.5 * v,
                colour: GREEN,
            });
        }
    }
    if let Some(v) = get("bare_likes_per_s") {
        likes.bars.push(Bar {
            label: "bare route (ceiling)".into(),
            value: v,
            colour: GREY,
        });
        likes.marks.push(Mark {
            label: "0.5 × bare".into(),
            value: 0.5 * v,
            colour: GREEN,
        });
    }
    views.marks.push(Mark {
        label: "60,000/s".into(),
        value: 60_000.0,
        colour: RED,
    });
    likes.marks.push(Mark {
        label: "3,000/s floor".into(),
        value: 3_000.0,
        colour: RED,
    });
    likes.marks.push(Mark {
        label: "hot 2,500/s".into(),
        value: 2_500.0,
        colour: ORANGE,
    });
    for backend in BACKENDS {
        let (b, label) = (backend.name, backend.label);
        let (colour, light) = backend.colours;
        if let Some(v) = get(&format!("{b}_views_per_s")) {
            views.bars.push(Bar {
                label: format!("LikeKit, {label}"),
                value: v,
                colour,
            });
        }
        if let Some(v) = get(&format!("{b}_naive_views_per_s")) {
            views.bars.push(Bar {
                label: format!("naive COUNT(*) + join, {label}"),
                value: v,
                colour: ORANGE,
            });
        }
        if let Some(v) = get(&format!("{b}_likes_per_s")) {
            likes.bars.push(Bar {
                label: format!("LikeKit, {label}, many posts"),
                value: v,
                colour,
            });
        }
        if let Some(v) = get(&format!("{b}_hot_likes_per_s")) {
            likes.bars.push(Bar {
                label: format!("LikeKit, {label}, one hot post"),
                value: v,
                colour: light,
            });
        }
    }

    let (width, label_w, right_pad) = (860.0, 250.0, 30.0);
    let (bar_h, gap, panel_head, panel_foot) = (26.0, 10.0, 34.0, 40.0);
    let panels = [views, likes];
    let mut height = 56.0;
    for panel in &panels {
        height += panel_head + panel.bars.len().max(1) as f64 * (bar_h + gap) + panel_foot;
    }
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="13">"##
    );
    let _ = writeln!(
        svg,
        r##"<rect width="100%" height="100%" fill="#ffffff"/>
<text x="16" y="26" font-size="16" font-weight="bold">LikeKit server on loopback (wrk -t{} -c{}, {} s per load{})</text>"##,
        settings.threads,
        settings.connections,
        settings.views.as_secs(),
        get("server_bench_load_1m_start")
            .map(|load| format!(", load average {load:.1} at the start"))
            .unwrap_or_default()
    );
    let mut y = 56.0;
    for panel in &panels {
        let max = panel
            .bars
            .iter()
            .map(|b| b.value)
            .chain(panel.marks.iter().map(|m| m.value))
            .fold(1.0, f64::max)
            * 1.08;
        let plot_w = width - label_w - right_pad;
        let x_of = |v: f64| label_w + v / max * plot_w;
        let _ = writeln!(
            svg,
            r##"<text x="16" y="{}" font-size="14" font-weight="bold">{}</text>"##,
            y + 18.0,
            xml(panel.title)
        );
        let top = y + panel_head;
        let mut by = top;
        for bar in &panel.bars {
            let _ = writeln!(
                svg,
                r##"<text x="{}" y="{}" text-anchor="end">{}</text>
<rect x="{label_w}" y="{by}" width="{:.1}" height="{bar_h}" fill="{}"/>
<text x="{:.1}" y="{}" fill="#202124">{}</text>"##,
                label_w - 8.0,
                by + bar_h * 0.68,
                xml(&bar.label),
                (x_of(bar.value) - label_w).max(1.0),
                bar.colour,
                x_of(bar.value) + 6.0,
                by + bar_h * 0.68,
                bench::format_value(bar.value, bench::Unit::PerSecond)
            );
            by += bar_h + gap;
        }
        let bottom = by.max(top + bar_h);
        for (i, mark) in panel.marks.iter().enumerate() {
            let x = x_of(mark.value);
            let _ = writeln!(
                svg,
                r##"<line x1="{x:.1}" y1="{}" x2="{x:.1}" y2="{bottom}" stroke="{}" stroke-width="2" stroke-dasharray="6 4"/>
<text x="{x:.1}" y="{}" fill="{}" font-size="11" text-anchor="middle">{}</text>"##,
                top - 4.0,
                mark.colour,
                bottom + 14.0 + 12.0 * (i % 2) as f64,
                mark.colour,
                xml(&mark.label)
            );
        }
        y = bottom + panel_foot;
    }
    svg.push_str("</svg>\n");
    svg
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(found["sqlite_likes_vs_bare"], 0.625);
        assert!(!found.contains_key("sqlite_views_uniform_vs_naive"));
        // Each backend against its own neighbouring bare-route load.
        assert_eq!(found["postgres_views_vs_bare"], 0.5);
        assert_eq!(found["postgres_views_vs_naive"], 15.0);
        assert_eq!(found["postgres_likes_vs_bare"], 0.2);
    }

    #[test]
    fn every_backend_has_report_rows() {
        let names: Vec<&str> = BACKENDS.iter().map(|b| b.name).collect();
        assert_eq!(names, ["sqlite", "postgres"]);
        for backend in BACKENDS {
            for figure in [
                "views_per_s",
                "views_vs_bare",
                "views_p99_ms",
                "views_p50_ms",
                "views_vs_naive",
                "naive_views_per_s",
                "likes_per_s",
                "likes_vs_bare",
                "likes_exact",
                "hot_likes_per_s",
                "hot_exact",
            ] {
                let name = format!("{}_{figure}", backend.name);
                let row = bench::ROWS.iter().find(|r| r.figure == name);
                let row = row.unwrap_or_else(|| panic!("no report row for {name}"));
                assert_eq!(row.suite, "server", "{name}");
                if figure.ends_with("_exact") {
                    assert_eq!(row.target, bench::Target::AtLeast(1.0), "{name}");
                }
            }
            // A backend's ratio column uses its own neighbouring bare-route
            // load (the first backend's is also the report's `bare_*`).
            let views = format!("{}_views_per_s", backend.name);
            let row = bench::ROWS.iter().find(|r| r.figure == views);
            let base = row.and_then(|r| r.ratio_to).map(|(base, _)| base);
            assert!(
                base == Some("bare_views_per_s")
                    || base == Some(&format!("{}_bare_views_per_s", backend.name)),
                "{views}: {base:?}"
            );
        }
    }

    #[test]
    fn the_postgres_targets_are_the_agreed_ones() {
        let target = |name: &str| {
            bench::ROWS
                .iter()
                .find(|r| r.figure == name)
                .map(|r| r.target)
        };
        assert_eq!(
            target("postgres_views_vs_bare"),
            Some(bench::Target::AtLeast(0.5))
        );
        assert_eq!(
            target("postgres_likes_per_s"),
            Some(bench::Target::AtLeast(3_000.0))
        );
        assert_eq!(
            target("postgres_hot_likes_per_s"),
            Some(bench::Target::AtLeast(2_500.0))
        );
    }

    #[test]
    fn the_chart_is_svg_with_every_bar() {
        let found: Figures = [
            ("bare_views_per_s", 100_000.0),
            ("sqlite_views_per_s", 85_000.0),
            ("sqlite_naive_views_per_s", 2_000.0),
            ("bare_likes_per_s", 40_000.0),
            ("sqlite_likes_per_s", 25_000.0),
            ("sqlite_hot_likes_per_s", 30_000.0),
            ("postgres_views_per_s", 45_000.0),
            ("postgres_naive_views_per_s", 3_000.0),
            ("postgres_likes_per_s", 8_000.0),
            ("postgres_hot_likes_per_s", 7_000.0),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let svg = chart_svg(&found, &Settings::from_env());
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        for text in [
            "100,000/s",
            "85,000/s",
            "2,000/s",
            "40,000/s",
            "25,000/s",
            "30,000/s",
            "60,000/s",
            "0.8 × bare",
            "0.5 × bare",
            "3,000/s floor",
            "LikeKit, SQLite",
            "LikeKit, PostgreSQL",
            "naive COUNT(*) + join, PostgreSQL",
            "LikeKit, PostgreSQL, one hot post",
            "45,000/s",
            "3,000/s",
            "8,000/s",
            "7,000/s",
            PURPLE,
            LIGHT_PURPLE,
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        // The background, five view bars (the bare route, each backend's
        // real and naive) and five like bars (the bare route, each
        // backend's spread and hot loads).
        assert_eq!(svg.matches("<rect").count(), 1 + 5 + 5);
        // Balanced tags: every element is self-closed or closed.
        assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
    }

    #[test]
    fn the_script_exists_with_every_mode() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("bench")
            .join("load.lua");
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
}
