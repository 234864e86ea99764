//! Shutdown: taps stop, calls in flight finish within the deadline.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use likekit_core::LikeError;
use likekit_core::wire::admin::{FaultRoute, FaultRule};
use likekit_tests::{Recorder, World};

const ANA: u64 = 1;

#[tokio::test]
async fn calls_in_flight_finish_within_the_deadline() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[1, 2]).await;
    let ana = world.client(ANA);
    world
        .faults(vec![FaultRule {
            latency_ms: 300,
            ..FaultRule::new(FaultRoute::All)
        }])
        .await;
    ana.set_liked(1, true);
    ana.set_liked(2, true);
    ana.set_liked(2, false); // queued behind the like: sent too
    assert!(ana.shutdown(Duration::from_secs(10)).await);
    assert!(world.liked(ANA, 1).await);
    assert!(!world.liked(ANA, 2).await);
    assert_eq!(ana.stats().calls_sent, 3);

    let late = ana.set_liked(1, false);
    assert!(late.liked, "no new taps after shutdown");
    assert_eq!(late.error, Some(LikeError::Shutdown));
    assert_eq!(ana.refresh(1).await, Err(LikeError::Shutdown));
    assert_eq!(ana.stats().calls_sent, 3);
    world.stop().await;
}

#[tokio::test]
async fn calls_past_the_deadline_are_abandoned_and_reported() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[1]).await;
    let ana = world.client(ANA);
    let (events, _sub) = Recorder::on(&ana, 1);
    world
        .faults(vec![FaultRule {
            latency_ms: 5_000,
            ..FaultRule::new(FaultRoute::All)
        }])
        .await;
    ana.set_liked(1, true);
    assert!(!ana.shutdown(Duration::from_millis(100)).await);
    let failures = events.failures();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].error, LikeError::Shutdown);
    let view = ana.view(1).unwrap();
    assert_eq!((view.liked, view.pending), (false, false));
    assert!(!ana.has_pending_calls());
    world.clear_faults().await;
    world.stop().await;
}
