//! Prometheus metrics, one registry per server.
//!
//! Handles are registered once at start on the server's own
//! Prometheus recorder (no process-global recorder, so several servers can
//! run in one test process), and the hot path only bumps atomics. On Linux
//! the process's own series (`process_cpu_seconds_total`,
//! `process_resident_memory_bytes`, `process_open_fds`, `process_max_fds`,
//! …, as every Prometheus client names them) are read from `/proc` when
//! the metrics are rendered.
//!
//! The store's connection pools (`likekit_db_pool_*`) are written at each
//! render from [`Store::pools`](crate::store::Store::pools), beside the
//! recorder's output rather than registered on it: the recorder never
//! forgets a series, so a Citus worker's pool, gone from the placement map,
//! would stay at its last values; written per render, only the pools the
//! store holds then are reported.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use metrics::{Counter, Histogram, Key, Label, Metadata, Recorder, Unit};
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
    formatting::{sanitize_label_value, write_help_line, write_type_line},
};

use crate::{store::PoolStatus, views::CacheStats};

/// The routes metrics are kept for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    Like,
    Unlike,
    Likes,
    Batch,
    Healthz,
    Livez,
    Readyz,
    OpenApi,
    Metrics,
    Admin,
    Other,
}

impl Route {
    const ALL: [Route; 11] = [
        Route::Like,
        Route::Unlike,
        Route::Likes,
        Route::Batch,
        Route::Healthz,
        Route::Livez,
        Route::Readyz,
        Route::OpenApi,
        Route::Metrics,
        Route::Admin,
        Route::Other,
    ];

    /// Its `route` label in the metrics, also used in the request log line.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Route::Like => "like",
            Route::Unlike => "unlike",
            Route::Likes => "likes",
            Route::Batch => "batch",
            Route::Healthz => "healthz",
            Route::Livez => "livez",
            Route::Readyz => "readyz",
            Route::OpenApi => "openapi",
            Route::Metrics => "metrics",
            Route::Admin => "admin",
            Route::Other => "other",
        }
    }

    /// The route of a request, from the pattern axum matched and the
    /// method: a request to a like route with a method that route does not
    /// take (answered 405, or a `HEAD`) is `Other`, so that it is neither
    /// journaled nor seen by fault rules as a like, unlike or read.
    pub(crate) fn of(method: &Method, matched: Option<&str>) -> Self {
        match matched {
            Some("/posts/{post_id}/like") if method == Method::POST => Route::Like,
            Some("/posts/{post_id}/like") if method == Method::DELETE => Route::Unlike,
            Some("/posts/{post_id}/likes") if method == Method::GET => Route::Likes,
            Some("/likes") if method == Method::GET => Route::Batch,
            Some("/healthz") => Route::Healthz,
            Some("/livez") => Route::Livez,
            Some("/readyz") => Route::Readyz,
            Some("/openapi.json") => Route::OpenApi,
            Some("/metrics") => Route::Metrics,
            Some(path) if path.starts_with("/admin") => Route::Admin,
            _ => Route::Other,
        }
    }
}

/// One listener's connections.
#[derive(Clone)]
pub(crate) struct ConnectionMetrics {
    /// Connections taken from the accept queue.
    pub(crate) accepted: Counter,
    /// Connections open now.
    pub(crate) open: metrics::Gauge,
    /// Connections closed because a request head (the first byte, or the
    /// next request on a kept-alive one) did not come in time.
    pub(crate) timed_out: Counter,
    /// The cap on open connections (`--max-connections`).
    pub(crate) max: metrics::Gauge,
    /// Connections closed as soon as they were accepted: their client
    /// address had `--max-connections-per-ip` open already.
    pub(crate) refused_per_ip: Counter,
}

const STATUS_CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

struct RouteMetrics {
    /// By status class, index = status / 100 - 1.
    requests: [Counter; 5],
    latency: Histogram,
}

pub(crate) struct Metrics {
    handle: PrometheusHandle,
    /// Kept for the process series, recorded at each render, and for
    /// [`group_commit_sizes`](Self::group_commit_sizes).
    #[cfg_attr(not(any(target_os = "linux", feature = "sqlite")), allow(dead_code))]
    recorder: PrometheusRecorder,
    routes: Vec<RouteMetrics>,
    pub(crate) likes_written: Counter,
    pub(crate) unlikes_written: Counter,
    // The view path keeps its own cache tallies; these are set from them when
    // the metrics are rendered, so a view bumps no shared counter for them.
    cache_post_hit: Counter,
    cache_post_miss: Counter,
    cache_friends_hit: Counter,
    cache_friends_miss: Counter,
    pub(crate) rate_limited: Counter,
    pub(crate) faults_injected: Counter,
    cache_post_ratio: metrics::Gauge,
    cache_friends_ratio: metrics::Gauge,
    /// The public listener's connections.
    pub(crate) public_connections: ConnectionMetrics,
    /// The operations listener's (`--ops-listen`).
    pub(crate) ops_connections: ConnectionMetrics,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

const METADATA: Metadata<'static> =
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

/// From 100 µs up to the default request timeout (30 s), so that answers
/// slowed to the timeout stay apart from those of a few seconds.
const LATENCY_BUCKETS: [f64; 17] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0,
];
const BATCH_BUCKETS: [f64; 10] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 1024.0];

fn labels(pairs: &[(&'static str, &'static str)]) -> Vec<Label> {
    pairs.iter().map(|(k, v)| Label::new(*k, *v)).collect()
}

impl Metrics {
    pub(crate) fn new() -> Arc<Self> {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full("likekit_http_request_duration_seconds".into()),
                &LATENCY_BUCKETS,
            )
            .and_then(|b| {
                b.set_buckets_for_metric(
                    Matcher::Full("likekit_group_commit_writes".into()),
                    &BATCH_BUCKETS,
                )
            })
            .expect("bucket lists are non-empty")
            .build_recorder();
        let counter = |name: &'static str, pairs: &[(&'static str, &'static str)]| {
            recorder.register_counter(&Key::from_parts(name, labels(pairs)), &METADATA)
        };
        let histogram = |name: &'static str, pairs: &[(&'static str, &'static str)]| {
            recorder.register_histogram(&Key::from_parts(name, labels(pairs)), &METADATA)
        };
        let gauge = |name: &'static str, pairs: &[(&'static str, &'static str)]| {
            recorder.register_gauge(&Key::from_parts(name, labels(pairs)), &METADATA)
        };

        recorder.describe_counter(
            "likekit_http_requests_total".into(),
            None,
            "HTTP requests by route and status class".into(),
        );
        recorder.describe_histogram(
            "likekit_http_request_duration_seconds".into(),
            Some(Unit::Seconds),
            "HTTP request latency by route".into(),
        );
        recorder.describe_counter(
            "likekit_likes_written_total".into(),
            None,
            "Like rows really inserted (op=like) or deleted (op=unlike)".into(),
        );
        recorder.describe_counter(
            "likekit_cache_requests_total".into(),
            None,
            "View cache lookups by cache and result".into(),
        );
        recorder.describe_gauge(
            "likekit_cache_hit_ratio".into(),
            None,
            "View cache hits / lookups since start".into(),
        );
        recorder.describe_histogram(
            "likekit_group_commit_writes".into(),
            None,
            "Likes and unlikes committed per transaction".into(),
        );
        recorder.describe_counter(
            "likekit_rate_limited_total".into(),
            None,
            "Writes refused by the per-user rate limit".into(),
        );
        recorder.describe_counter(
            "likekit_faults_injected_total".into(),
            None,
            "Requests failed or dropped by admin fault rules".into(),
        );

        recorder.describe_counter(
            "likekit_connections_accepted_total".into(),
            None,
            "Connections accepted, by listener".into(),
        );
        recorder.describe_gauge(
            "likekit_connections_open".into(),
            None,
            "Connections open now, by listener".into(),
        );
        recorder.describe_counter(
            "likekit_connections_timed_out_total".into(),
            None,
            "Connections closed because a request head (or the next one on a kept-alive \
             connection) did not come within the header-read timeout, by listener"
                .into(),
        );
        recorder.describe_gauge(
            "likekit_connections_max".into(),
            None,
            "The cap on open connections, by listener".into(),
        );
        recorder.describe_counter(
            "likekit_connections_refused_per_ip_total".into(),
            None,
            "Connections closed as soon as they were accepted because their client address \
             had --max-connections-per-ip open already, by listener"
                .into(),
        );
        let connections = |listener: &'static str| ConnectionMetrics {
            accepted: counter(
                "likekit_connections_accepted_total",
                &[("listener", listener)],
            ),
            open: gauge("likekit_connections_open", &[("listener", listener)]),
            timed_out: counter(
                "likekit_connections_timed_out_total",
                &[("listener", listener)],
            ),
            max: gauge("likekit_connections_max", &[("listener", listener)]),
            refused_per_ip: counter(
                "likekit_connections_refused_per_ip_total",
                &[("listener", listener)],
            ),
        };

        let routes = Route::ALL
            .iter()
            .map(|route| RouteMetrics {
                requests: STATUS_CLASSES.map(|class| {
                    counter(
                        "likekit_http_requests_total",
                        &[("route", route.label()), ("status", class)],
                    )
                }),
                latency: histogram(
                    "likekit_http_request_duration_seconds",
                    &[("route", route.label())],
                ),
            })
            .collect();

        // The process series' descriptions (`record_process` records them).
        #[cfg(target_os = "linux")]
        metrics::with_local_recorder(&recorder, || {
            metrics_process::Collector::default().describe()
        });

        let handle = recorder.handle();
        Arc::new(Self {
            routes,
            likes_written: counter("likekit_likes_written_total", &[("op", "like")]),
            unlikes_written: counter("likekit_likes_written_total", &[("op", "unlike")]),
            cache_post_hit: counter(
                "likekit_cache_requests_total",
                &[("cache", "post"), ("result", "hit")],
            ),
            cache_post_miss: counter(
                "likekit_cache_requests_total",
                &[("cache", "post"), ("result", "miss")],
            ),
            cache_friends_hit: counter(
                "likekit_cache_requests_total",
                &[("cache", "friends"), ("result", "hit")],
            ),
            cache_friends_miss: counter(
                "likekit_cache_requests_total",
                &[("cache", "friends"), ("result", "miss")],
            ),
            rate_limited: counter("likekit_rate_limited_total", &[]),
            faults_injected: counter("likekit_faults_injected_total", &[]),
            cache_post_ratio: gauge("likekit_cache_hit_ratio", &[("cache", "post")]),
            cache_friends_ratio: gauge("likekit_cache_hit_ratio", &[("cache", "friends")]),
            public_connections: connections("public"),
            ops_connections: connections("ops"),
            handle,
            recorder,
        })
    }

    /// `likekit_group_commit_writes`, the likes and unlikes committed per
    /// transaction, registered when first asked for: only a store that
    /// commits in groups (SQLite's) asks, so that on PostgreSQL `/metrics`
    /// has no histogram that stays empty.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) fn group_commit_sizes(&self) -> Histogram {
        self.recorder
            .register_histogram(&Key::from_name("likekit_group_commit_writes"), &METADATA)
    }

    pub(crate) fn observe(&self, route: Route, status: StatusCode, seconds: f64) {
        // `Route::ALL` lists the variants in declaration order.
        let route = &self.routes[route as usize];
        let class = usize::from(status.as_u16() / 100).clamp(1, 5) - 1;
        route.requests[class].increment(1);
        route.latency.record(seconds);
    }

    /// The Prometheus text exposition, with the view caches' tallies and
    /// the store's connection pools as they are now.
    pub(crate) fn render(
        &self,
        posts: &CacheStats,
        friends: &CacheStats,
        pools: &[PoolStatus],
    ) -> String {
        self.cache_post_hit.absolute(posts.hits.sum());
        self.cache_post_miss.absolute(posts.misses.sum());
        self.cache_friends_hit.absolute(friends.hits.sum());
        self.cache_friends_miss.absolute(friends.misses.sum());
        if let Some(ratio) = posts.hit_ratio() {
            self.cache_post_ratio.set(ratio);
        }
        if let Some(ratio) = friends.hit_ratio() {
            self.cache_friends_ratio.set(ratio);
        }
        #[cfg(target_os = "linux")]
        let cpu_seconds = self.record_process();
        let mut text = self.handle.render();
        write_pools(&mut text, pools);
        #[cfg(target_os = "linux")]
        if let Some(seconds) = cpu_seconds {
            write_cpu_seconds(&mut text, seconds);
        }
        text
    }

    /// Reads the process's own series from `/proc` (`metrics_process`'s
    /// `collect`) and records them, but for the CPU time, which it returns:
    /// `metrics_process::Collector` records that through a whole-number
    /// counter, so a rate over a minute moved in steps of 1/60 of a core;
    /// [`write_cpu_seconds`] writes it as Prometheus clients do, in
    /// fractions of a second.
    #[cfg(target_os = "linux")]
    fn record_process(&self) -> Option<f64> {
        let read = metrics_process::collector::collect();
        metrics::with_local_recorder(&self.recorder, || {
            for (name, value) in [
                ("process_open_fds", read.open_fds),
                ("process_max_fds", read.max_fds),
                ("process_virtual_memory_bytes", read.virtual_memory_bytes),
                (
                    "process_virtual_memory_max_bytes",
                    read.virtual_memory_max_bytes,
                ),
                ("process_resident_memory_bytes", read.resident_memory_bytes),
                ("process_start_time_seconds", read.start_time_seconds),
                ("process_threads", read.threads),
            ] {
                if let Some(value) = value {
                    metrics::gauge!(name).set(value as f64);
                }
            }
        });
        read.cpu_seconds_total
    }

    /// Drains histogram samples; call every few seconds.
    pub(crate) fn upkeep(&self) {
        self.handle.run_upkeep();
    }
}

/// Appends the `likekit_db_pool_*` families for `pools` (nothing when there
/// are none).
fn write_pools(text: &mut String, pools: &[PoolStatus]) {
    if pools.is_empty() {
        return;
    }
    let names: Vec<String> = pools
        .iter()
        .map(|pool| sanitize_label_value(&pool.name))
        .collect();
    let by_pool = |value: fn(&PoolStatus) -> usize| {
        pools
            .iter()
            .zip(&names)
            .map(move |(pool, name)| (format!("pool=\"{name}\""), value(pool)))
    };
    write_gauge(
        text,
        "likekit_db_pool_connections",
        "Database connections by pool and state (idle, in_use)",
        pools.iter().zip(&names).flat_map(|(pool, name)| {
            [
                (format!("pool=\"{name}\",state=\"idle\""), pool.idle),
                (format!("pool=\"{name}\",state=\"in_use\""), pool.in_use()),
            ]
        }),
    );
    write_gauge(
        text,
        "likekit_db_pool_max_connections",
        "The most connections a database pool opens",
        by_pool(|pool| pool.max),
    );
    write_gauge(
        text,
        "likekit_db_pool_waiting",
        "Tasks waiting for a connection from a database pool",
        by_pool(|pool| pool.waiting),
    );
}

/// `process_cpu_seconds_total`, the process's user and system CPU time, as
/// a counter in seconds with their fractions.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn write_cpu_seconds(text: &mut String, seconds: f64) {
    write_family(
        text,
        "process_cpu_seconds_total",
        "Total user and system CPU time spent in seconds.",
        "counter",
        std::iter::once((String::new(), seconds)),
    );
}

/// One gauge family (see [`write_family`]).
fn write_gauge(
    text: &mut String,
    name: &str,
    help: &str,
    series: impl Iterator<Item = (String, usize)>,
) {
    write_family(text, name, help, "gauge", series);
}

/// One family as the recorder writes its own: `# HELP` and `# TYPE`, a
/// line per (labels, value) (no braces for no labels), and a blank line.
fn write_family<V: std::fmt::Display>(
    text: &mut String,
    name: &str,
    help: &str,
    kind: &str,
    series: impl Iterator<Item = (String, V)>,
) {
    use std::fmt::Write;

    write_help_line(text, name, None, None, help);
    write_type_line(text, name, None, None, kind);
    for (labels, value) in series {
        // Writing to a String does not fail.
        let _ = if labels.is_empty() {
            writeln!(text, "{name} {value}")
        } else {
            writeln!(text, "{name}{{{labels}}} {value}")
        };
    }
    text.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_seconds_keep_their_fractions() {
        let mut text = String::new();
        write_cpu_seconds(&mut text, 1.25);
        assert_eq!(
            text,
            "# HELP process_cpu_seconds_total Total user and system CPU time spent in \
             seconds.\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total \
             1.25\n\n"
        );
    }

    fn pool(name: &str, max: usize, size: usize, idle: usize, waiting: usize) -> PoolStatus {
        PoolStatus {
            name: name.into(),
            max,
            size,
            idle,
            waiting,
        }
    }

    /// The lines of `text` that start with `prefix`.
    fn lines<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
        text.lines().filter(|l| l.starts_with(prefix)).collect()
    }

    /// The group-commit histogram is in `/metrics` only once a store that
    /// commits in groups asked for it (SQLite's; PostgreSQL's never does).
    #[test]
    fn the_group_commit_histogram_is_there_only_when_asked_for() {
        let metrics = Metrics::new();
        let stats = CacheStats::default();
        let text = metrics.render(&stats, &stats, &[]);
        assert!(!text.contains("likekit_group_commit_writes"), "{text}");

        metrics.group_commit_sizes().record(3.0);
        let text = metrics.render(&stats, &stats, &[]);
        assert_eq!(
            lines(&text, "# TYPE likekit_group_commit_writes"),
            ["# TYPE likekit_group_commit_writes histogram"]
        );
        assert_eq!(
            lines(&text, "likekit_group_commit_writes_bucket{le=\"4\"}"),
            ["likekit_group_commit_writes_bucket{le=\"4\"} 1"]
        );
    }

    #[test]
    fn pools_are_written_at_each_render_and_only_those_given() {
        let metrics = Metrics::new();
        let stats = CacheStats::default();
        let text = metrics.render(
            &stats,
            &stats,
            &[
                pool("main", 8, 5, 2, 0),
                // Read as a connection was handed back: more idle than open.
                pool("worker:w1:5432", 8, 1, 2, 3),
            ],
        );
        assert_eq!(
            lines(&text, "likekit_db_pool_"),
            [
                "likekit_db_pool_connections{pool=\"main\",state=\"idle\"} 2",
                "likekit_db_pool_connections{pool=\"main\",state=\"in_use\"} 3",
                "likekit_db_pool_connections{pool=\"worker:w1:5432\",state=\"idle\"} 2",
                "likekit_db_pool_connections{pool=\"worker:w1:5432\",state=\"in_use\"} 0",
                "likekit_db_pool_max_connections{pool=\"main\"} 8",
                "likekit_db_pool_max_connections{pool=\"worker:w1:5432\"} 8",
                "likekit_db_pool_waiting{pool=\"main\"} 0",
                "likekit_db_pool_waiting{pool=\"worker:w1:5432\"} 3",
            ]
        );
        for family in [
            "likekit_db_pool_connections",
            "likekit_db_pool_max_connections",
            "likekit_db_pool_waiting",
        ] {
            assert_eq!(
                lines(&text, &format!("# TYPE {family} ")),
                [format!("# TYPE {family} gauge")],
                "{text}"
            );
            assert_eq!(lines(&text, &format!("# HELP {family} ")).len(), 1);
        }

        // The worker left the map: its series go with it.
        let text = metrics.render(&stats, &stats, &[pool("main", 8, 5, 5, 0)]);
        assert!(!text.contains("worker:"), "{text}");
        assert_eq!(
            lines(&text, "likekit_db_pool_connections{")[1],
            "likekit_db_pool_connections{pool=\"main\",state=\"in_use\"} 0"
        );
        // No pools (SQLite): no pool family at all.
        let text = metrics.render(&stats, &stats, &[]);
        assert!(!text.contains("likekit_db_pool_"), "{text}");
    }

    #[test]
    fn a_pool_label_is_escaped() {
        let metrics = Metrics::new();
        let stats = CacheStats::default();
        let text = metrics.render(&stats, &stats, &[pool("worker:a\"b:1", 1, 0, 0, 0)]);
        assert!(
            text.contains("likekit_db_pool_waiting{pool=\"worker:a\\\"b:1\"} 0"),
            "{text}"
        );
    }
}
