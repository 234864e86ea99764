//! Speed and memory of the like machine (`cargo xtask bench`).
//!
//! * `machine/tap_to_changed`: one tap on an idle post until its `Changed`
//!   effect is in hand (the call it asks for is emitted too).
//! * `machine/hashmap_insert`: a bare `HashMap` insert of the same key, the
//!   yardstick the tap is compared with.
//! * `likekit-metric memory_per_post_bytes`: heap bytes per tracked post
//!   (no friends), measured with a counting allocator over 100,000 posts.

#![allow(unsafe_code)] // the counting allocator below

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicIsize, Ordering};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use likekit_core::wire::PostLikes;
use likekit_core::{Effect, Machine, MachineConfig, PostId};

const POST: PostId = PostId::checked(42).unwrap();

/// Post `n` (1-based).
fn post(n: u64) -> PostId {
    PostId::checked(n).expect("a post id")
}

struct Counting;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator and only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn read(count: u64) -> PostLikes {
    PostLikes {
        count,
        liked_by_me: false,
        friends: Vec::new(),
        version: 1,
    }
}

fn memory() {
    const POSTS: u64 = 100_000;
    let config = MachineConfig {
        max_posts: POSTS as usize,
        ..MachineConfig::default()
    };
    let before = LIVE_BYTES.load(Ordering::Relaxed);
    let mut m = Machine::new(config);
    for n in 1..=POSTS {
        m.snapshot(post(n), read(n));
        m.drain_effects().for_each(drop);
    }
    let per_post = (LIVE_BYTES.load(Ordering::Relaxed) - before) as f64 / POSTS as f64;
    // On standard error: standard output is the bench's test list when a
    // runner asks for one (`--list`), and `cargo xtask bench` reads both.
    eprintln!("likekit-metric memory_per_post_bytes={per_post:.0}");
    drop(m);

    let mut bounded = Machine::new(MachineConfig::default());
    for n in 1..=POSTS {
        bounded.snapshot(post(n), read(n));
        bounded.drain_effects().for_each(drop);
    }
    eprintln!(
        "likekit-metric tracked_posts_after_100k_reads={} (max_posts {})",
        bounded.len(),
        bounded.config().max_posts
    );
}

fn bench(c: &mut Criterion) {
    memory();
    let mut group = c.benchmark_group("machine");
    group.bench_function("tap_to_changed", |b| {
        b.iter_batched(
            || {
                let mut m = Machine::new(MachineConfig::default());
                m.snapshot(POST, read(1203));
                m.drain_effects().for_each(drop);
                m
            },
            |mut m| {
                m.tap(black_box(POST), true);
                let changed = m.drain_effects().find(|e| matches!(e, Effect::Changed(_)));
                black_box(changed);
                m
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("hashmap_insert", |b| {
        b.iter_batched(
            || {
                let mut map: HashMap<u64, (u64, bool)> = HashMap::new();
                map.insert(42, (1203, false));
                map
            },
            |mut map| {
                black_box(map.insert(black_box(42), (1204, true)));
                map
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
