//! Shutdown: taps stop, calls in flight finish within the deadline.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use likekit_core::LikeError;
use likekit_proto::admin::{FaultRoute, FaultRule};
use likekit_tests::{PostId, Recorder, UserId, World};

const ANA: UserId = UserId::checked(1).unwrap();
const ONE: PostId = PostId::checked(1).unwrap();
const TWO: PostId = PostId::checked(2).unwrap();

#[tokio::test]
async fn calls_in_flight_finish_within_the_deadline() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[ONE, TWO]).await;
    let ana = world.client(ANA);
    world
        .faults(vec![FaultRule {
            latency_ms: 300,
            ..FaultRule::new(FaultRoute::All)
        }])
        .await;
    ana.set_liked(ONE, true);
    ana.set_liked(TWO, true);
    ana.set_liked(TWO, false); // queued behind the like: sent too
    assert!(ana.shutdown(Duration::from_secs(10)).await);
    assert!(world.liked(ANA, ONE).await);
    assert!(!world.liked(ANA, TWO).await);
    assert_eq!(ana.stats().calls_sent, 3);

    let late = ana.set_liked(ONE, false);
    assert!(late.liked, "no new taps after shutdown");
    assert_eq!(late.error, Some(LikeError::Shutdown));
    assert_eq!(ana.refresh(ONE).await, Err(LikeError::Shutdown));
    assert_eq!(ana.stats().calls_sent, 3);
    world.stop().await;
}

#[tokio::test]
async fn calls_past_the_deadline_are_abandoned_and_reported() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[ONE]).await;
    let ana = world.client(ANA);
    let (events, _sub) = Recorder::on(&ana, ONE);
    world
        .faults(vec![FaultRule {
            latency_ms: 5_000,
            ..FaultRule::new(FaultRoute::All)
        }])
        .await;
    ana.set_liked(ONE, true);
    assert!(!ana.shutdown(Duration::from_millis(100)).await);
    let failures = events.failures();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].error, LikeError::Shutdown);
    let view = ana.view(ONE).unwrap();
    assert_eq!((view.liked, view.pending), (false, false));
    assert!(!ana.has_pending_calls());
    world.clear_faults().await;
    world.stop().await;
}
