//! Speed of the client through its driver (`cargo xtask bench`), with the
//! in-memory transport so that no network is measured.
//!
//! * `client/tap_to_callback`: one tap until the observer hears the
//!   server's confirmation — the tap, the optimistic callback, the call
//!   spawned on the runtime, the transport's answer fed back into the
//!   machine, and the confirming callback.
//! * `client/tap_to_optimistic_callback`: one tap until the observer hears
//!   the optimistic change (called on the tapping thread, before any I/O).
//! * `client/tap_to_callback_one_thread`: as `tap_to_callback`, on a
//!   single-threaded runtime driven by the tapping thread (as in a browser):
//!   the driver's own cost, without a wake-up of another thread.
//!
//! * `client/tap_to_optimistic_callback_journal`: as
//!   `tap_to_optimistic_callback`, with a file journal: the write happens
//!   off the tap's path, so this must stay where the one without is.
//! * `likekit-metric client_tap_to_durable_p50_us` / `_p99_us`: one tap
//!   until the file journal holding it is on disk (written to a temporary
//!   file, fsynced, renamed over the old one), over 1,000 taps, beside
//!   `client_tap_to_changed_p50_us` / `_p99_us` (the optimistic callback)
//!   with and without the journal, measured the same way in the same run.
//!
//! On a multi-threaded runtime most of `tap_to_callback` is the operating
//! system waking a runtime thread for the call, and handing the answer back.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use likekit_core::{
    FileJournal, Intent, JournalStore, LikeClient, LikeError, LikeEvent, MemoryTransport, PostId,
    ScriptedServer,
};

const POST: PostId = PostId::checked(42).unwrap();

/// A client on a two-thread runtime, and counters of the callbacks its
/// observer got: optimistic (pending) and confirmed ones.
fn setup(
    journal: Option<FileJournal>,
) -> (
    tokio::runtime::Runtime,
    LikeClient,
    Arc<AtomicU64>,
    Arc<AtomicU64>,
    likekit_core::Subscription,
) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut builder = LikeClient::builder()
        .transport(MemoryTransport::new().with_post(POST, 1203))
        .runtime(runtime.handle().clone());
    if let Some(journal) = journal {
        builder = builder.journal(journal);
    }
    let client = builder.build().expect("a client");
    let optimistic = Arc::new(AtomicU64::new(0));
    let confirmed = Arc::new(AtomicU64::new(0));
    let (o, c) = (Arc::clone(&optimistic), Arc::clone(&confirmed));
    let subscription = client.subscribe(POST, move |event: &LikeEvent| {
        if let LikeEvent::Changed(view) = event {
            if view.pending {
                o.fetch_add(1, Ordering::Release);
            } else {
                c.fetch_add(1, Ordering::Release);
            }
        }
    });
    (runtime, client, optimistic, confirmed, subscription)
}

/// Spins until `counter` passes `seen` (a cross-thread handoff measured
/// without the scheduler's wake-up delay).
fn wait_past(counter: &AtomicU64, seen: u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let now = counter.load(Ordering::Acquire);
        if now > seen {
            return now;
        }
        assert!(Instant::now() < deadline, "no callback");
        std::hint::spin_loop();
    }
}

/// A file journal that counts its finished saves.
struct CountedSaves {
    file: FileJournal,
    saves: Arc<AtomicU64>,
}

impl JournalStore for CountedSaves {
    fn load(&self) -> Result<Vec<Intent>, LikeError> {
        self.file.load()
    }

    fn save(&self, intents: &[Intent]) -> Result<(), LikeError> {
        let saved = self.file.save(intents);
        self.saves.fetch_add(1, Ordering::Release);
        saved
    }
}

/// A fresh directory for one bench's journal, removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("likekit-bench-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The `p`th percentile of `samples` (sorted in place), in microseconds.
fn percentile_us(samples: &mut [Duration], p: f64) -> f64 {
    samples.sort_unstable();
    let at = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[at].as_secs_f64() * 1e6
}

/// Tap → optimistic callback, and (with a journal) tap → the journal with
/// the tap on disk, over `taps` taps of one post whose call is never
/// answered (a `ScriptedServer`), so every tap changes the journal.
fn tap_to_durable(taps: usize, journal: bool) -> (Vec<Duration>, Vec<Duration>) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = TempDir::new(if journal { "journal" } else { "none" });
    let saves = Arc::new(AtomicU64::new(0));
    let mut builder = LikeClient::builder()
        .transport(ScriptedServer::new())
        .runtime(runtime.handle().clone());
    if journal {
        builder = builder.journal(CountedSaves {
            file: FileJournal::open(&dir.0, "ana").expect("a journal"),
            saves: Arc::clone(&saves),
        });
    }
    let client = builder.build().expect("a client");
    let heard = Arc::new(std::sync::Mutex::new(None::<Instant>));
    let h = Arc::clone(&heard);
    let _sub = client.subscribe(POST, move |event: &LikeEvent| {
        if matches!(event, LikeEvent::Changed(view) if view.pending) {
            *h.lock().expect("not poisoned") = Some(Instant::now());
        }
    });
    let (mut changed, mut durable) = (Vec::new(), Vec::new());
    let mut seen = 0;
    for _ in 0..taps {
        let start = Instant::now();
        black_box(client.toggle(POST));
        changed.push(heard_at(&heard) - start);
        if journal {
            seen = wait_past(&saves, seen);
            durable.push(start.elapsed());
        }
    }
    (changed, durable)
}

/// Prints the tap → durable figures (see the module's docs).
fn durable_figures() {
    const TAPS: usize = 1_000;
    let (mut plain, _) = tap_to_durable(TAPS, false);
    let (mut changed, mut durable) = tap_to_durable(TAPS, true);
    for (name, samples) in [
        ("client_tap_to_changed", &mut plain),
        ("client_tap_to_changed_journal", &mut changed),
        ("client_tap_to_durable", &mut durable),
    ] {
        let p50 = percentile_us(samples, 0.5);
        let p99 = percentile_us(samples, 0.99);
        eprintln!("likekit-metric {name}_p50_us={p50:.1}");
        eprintln!("likekit-metric {name}_p99_us={p99:.1}");
    }
}

/// Spins until the observer noted when it heard of the tap (usually on
/// the tapping thread before `toggle` returns; on the runtime's thread when
/// that one was delivering events).
fn heard_at(heard: &std::sync::Mutex<Option<Instant>>) -> Instant {
    loop {
        if let Some(at) = heard.lock().expect("not poisoned").take() {
            return at;
        }
        std::hint::spin_loop();
    }
}

/// One tap until its optimistic callback, each call let finish before the
/// next tap (not timed); with `journal`, the client keeps one.
fn optimistic(b: &mut criterion::Bencher<'_>, journal: Option<FileJournal>) {
    let (_runtime, client, _optimistic, confirmed, _sub) = setup(journal);
    let heard = Arc::new(std::sync::Mutex::new(None::<Instant>));
    let h = Arc::clone(&heard);
    let _timing = client.subscribe(POST, move |event: &LikeEvent| {
        if matches!(event, LikeEvent::Changed(view) if view.pending) {
            *h.lock().expect("not poisoned") = Some(Instant::now());
        }
    });
    let mut done = 0;
    b.iter_custom(|iters| {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            let start = Instant::now();
            black_box(client.toggle(POST));
            total += heard_at(&heard) - start;
            done = wait_past(&confirmed, done);
        }
        total
    });
}

fn bench(c: &mut Criterion) {
    durable_figures();

    let mut group = c.benchmark_group("client");

    group.bench_function("tap_to_callback", |b| {
        let (_runtime, client, _optimistic, confirmed, _sub) = setup(None);
        let mut seen = 0;
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                black_box(client.toggle(POST));
                seen = wait_past(&confirmed, seen);
                total += start.elapsed();
            }
            total
        });
    });

    group.bench_function("tap_to_optimistic_callback", |b| optimistic(b, None));
    group.bench_function("tap_to_optimistic_callback_journal", |b| {
        let dir = TempDir::new("criterion");
        optimistic(
            b,
            Some(FileJournal::open(&dir.0, "ana").expect("a journal")),
        );
    });

    group.bench_function("tap_to_callback_one_thread", |b| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let client = LikeClient::builder()
            .transport(MemoryTransport::new().with_post(POST, 1203))
            .runtime(runtime.handle().clone())
            .build()
            .expect("a client");
        let confirmed = Arc::new(AtomicU64::new(0));
        let c = Arc::clone(&confirmed);
        let _sub = client.subscribe(POST, move |event: &LikeEvent| {
            if let LikeEvent::Changed(view) = event {
                if !view.pending {
                    c.fetch_add(1, Ordering::Release);
                }
            }
        });
        let mut seen = 0;
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    black_box(client.toggle(POST));
                    while confirmed.load(Ordering::Acquire) == seen {
                        tokio::task::yield_now().await;
                    }
                    seen = confirmed.load(Ordering::Acquire);
                    total += start.elapsed();
                }
                total
            })
        });
    });

    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
