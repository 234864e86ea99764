//! Rapid taps and ordering on a slow network: one call at a time per post,
//! coalesced to the latest intent, and a like never lands after a later
//! unlike.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use likekit_proto::admin::{FaultRoute, FaultRule};
use likekit_tests::{PostId, UserId, World, post, settle};

const ANA: UserId = UserId::checked(1).unwrap();

fn latency(ms: u64, jitter_ms: u64) -> Vec<FaultRule> {
    vec![FaultRule {
        latency_ms: ms,
        jitter_ms,
        ..FaultRule::new(FaultRoute::All)
    }]
}

/// Taps the heart `taps` times, 10 ms apart (5 taps in about 50 ms).
async fn tap_quickly(client: &likekit_core::LikeClient, post: PostId, taps: usize) -> bool {
    let mut shown = false;
    for _ in 0..taps {
        shown = client.toggle(post).liked;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    shown
}

#[tokio::test]
async fn five_taps_in_50ms_on_a_500ms_network_send_at_most_two_calls() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[post(1), post(2)]).await;
    let ana = world.client(ANA);
    world.faults(latency(500, 0)).await;

    // five taps from empty: like, unlike, like, unlike, like
    let last = tap_quickly(&ana, post(1), 5).await;
    assert!(last);
    settle(&ana).await;
    let stats = ana.stats();
    assert!(stats.calls_sent <= 2, "{stats:?}");
    assert_eq!(stats.taps, 5);
    assert_eq!(stats.taps, stats.intents_sent + stats.coalesced);
    let sent = world.requests("like").await + world.requests("unlike").await;
    assert!(sent <= 2, "the server saw {sent} calls");
    assert!(
        world.liked(ANA, post(1)).await,
        "the server ends as the last tap"
    );
    assert_eq!(world.count(post(1)).await, 1);
    assert!(ana.view(post(1)).unwrap().liked);

    // four taps on another post end unliked
    let before = ana.stats().calls_sent;
    let last = tap_quickly(&ana, post(2), 4).await;
    assert!(!last);
    settle(&ana).await;
    assert!(ana.stats().calls_sent - before <= 2);
    assert!(!world.liked(ANA, post(2)).await);
    assert_eq!(world.count(post(2)).await, 0);
    let view = ana.view(post(2)).unwrap();
    assert_eq!((view.liked, view.count, view.pending), (false, 0, false));
    world.stop().await;
}

#[tokio::test]
async fn a_like_then_an_unlike_at_once_never_leaves_the_server_liked() {
    let world = World::start().await;
    let posts: Vec<PostId> = (1..=40).map(post).collect();
    world.setup(&[(ANA, "Ana")], &posts).await;
    let ana = world.client(ANA);
    let mut next = posts.iter().copied();
    for (ms, jitter) in [(0, 0), (0, 30), (50, 0), (20, 200), (300, 0)] {
        world.faults(latency(ms, jitter)).await;
        for _ in 0..8 {
            let p = next.next().unwrap();
            assert!(ana.set_liked(p, true).liked);
            assert!(!ana.set_liked(p, false).liked);
        }
    }
    settle(&ana).await;
    for p in posts {
        assert!(!world.liked(ANA, p).await, "post {p} ended liked");
        assert_eq!(world.count(p).await, 0);
        let view = ana.view(p).unwrap();
        assert_eq!((view.liked, view.count, view.pending), (false, 0, false));
    }
    world.stop().await;
}

#[tokio::test]
async fn an_unlike_is_never_overtaken_even_when_unlikes_are_faster() {
    let world = World::start().await;
    let posts: Vec<PostId> = (1..=10).map(post).collect();
    world.setup(&[(ANA, "Ana")], &posts).await;
    let ana = world.client(ANA);
    // likes are slow, unlikes instant: sent side by side, the unlike
    // would land first and the like would win
    world
        .faults(vec![FaultRule {
            latency_ms: 200,
            jitter_ms: 100,
            ..FaultRule::new(FaultRoute::Like)
        }])
        .await;
    for &p in &posts {
        ana.set_liked(p, true);
        ana.set_liked(p, false);
    }
    settle(&ana).await;
    for &p in &posts {
        assert!(!world.liked(ANA, p).await, "post {p} ended liked");
    }
    assert_eq!(
        ana.stats().calls_sent,
        20,
        "a like and then an unlike per post"
    );
    world.stop().await;
}
