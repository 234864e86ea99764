//! On a train: calls that take 2 s, calls that fail. The heart answers at
//! once; a like that cannot be saved rolls back with one message; a like
//! that gets through on a retry simply sticks.

#![allow(clippy::unwrap_used)]

use likekit_core::Transport;
use likekit_proto::admin::{FaultRoute, FaultRule};
use likekit_tests::{PostId, Recorder, UserId, World, eventually, settle, user};

const ANA: UserId = UserId::checked(1).unwrap();
const POST: PostId = PostId::checked(42).unwrap();

#[tokio::test]
async fn with_two_second_calls_the_heart_fills_before_the_server_answers() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    let ana = world.client(ANA);
    ana.refresh(POST).await.unwrap();
    let (events, _sub) = Recorder::on(&ana, POST);

    world
        .faults(vec![FaultRule {
            latency_ms: 2000,
            ..FaultRule::new(FaultRoute::All)
        }])
        .await;

    let view = ana.set_liked(POST, true);
    // the view changed, and the observer heard of it, before the server
    // even looked at the call
    assert!(view.liked && view.pending);
    assert_eq!(view.count, 1);
    assert_eq!(view.line.to_string(), "Liked by you");
    assert_eq!(events.views().last(), Some(&view));
    assert!(
        !world.liked(ANA, POST).await,
        "the server has not answered yet"
    );
    assert_eq!(world.count(POST).await, 0);

    // then the server answers and the client confirms
    eventually("the like is confirmed", || async {
        !ana.view(POST).unwrap().pending
    })
    .await;
    assert!(world.liked(ANA, POST).await);
    assert_eq!(world.count(POST).await, 1);
    let view = ana.view(POST).unwrap();
    assert!(view.liked);
    assert_eq!(view.count, 1);
    assert!(events.failures().is_empty());
    assert_eq!(ana.stats().calls_sent, 1);
    world.stop().await;
}

#[tokio::test]
async fn failing_every_attempt_rolls_back_with_exactly_one_failure() {
    let world = World::start().await;
    world
        .setup(&[(ANA, "Ana"), (user(2), "Ben")], &[POST])
        .await;
    // someone else's like, so the confirmed state is not all zeros
    world
        .transport(user(2))
        .send(POST, likekit_core::Action::Like)
        .await
        .unwrap();
    let ana = world.client(ANA);
    let confirmed = ana.refresh(POST).await.unwrap();
    assert_eq!((confirmed.liked, confirmed.count), (false, 1));
    let (events, _sub) = Recorder::on(&ana, POST);

    world
        .faults(vec![FaultRule {
            error_rate: 1.0,
            status: 503,
            latency_ms: 20,
            ..FaultRule::new(FaultRoute::Like)
        }])
        .await;
    let view = ana.set_liked(POST, true);
    assert_eq!((view.liked, view.count), (true, 2));
    settle(&ana).await;

    // back to the confirmed state, with the reason
    let view = ana.view(POST).unwrap();
    assert_eq!((view.liked, view.count, view.pending), (false, 1, false));
    assert!(matches!(
        view.error,
        Some(likekit_core::LikeError::Server { status: 503, .. })
    ));
    let failures = events.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].wanted);
    assert_eq!(failures[0].post_id, POST);
    assert!(failures[0].to_string().starts_with("Your like didn't save"));
    assert_eq!(events.views().last(), Some(&view));

    // every attempt reached the server, and none was applied
    let stats = ana.stats();
    let attempts = 1 + likekit_tests::fast_retries().max_retries as u64;
    assert_eq!(
        (stats.calls_sent, stats.retries, stats.rollbacks),
        (attempts, attempts - 1, 1)
    );
    assert_eq!(world.requests("like").await, attempts + 1);
    assert!(!world.liked(ANA, POST).await);
    assert_eq!(world.count(POST).await, 1);

    // the next tap works again once the network does
    world.clear_faults().await;
    ana.set_liked(POST, true);
    settle(&ana).await;
    assert_eq!(world.count(POST).await, 2);
    assert_eq!(events.failures().len(), 1);
    world.stop().await;
}

#[tokio::test]
async fn one_failure_then_success_sticks_without_a_message() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    let ana = world.client(ANA);
    let (events, _sub) = Recorder::on(&ana, POST);

    world
        .faults(vec![FaultRule {
            fail_next: 1,
            status: 500,
            ..FaultRule::new(FaultRoute::Like)
        }])
        .await;
    assert!(ana.set_liked(POST, true).liked);
    settle(&ana).await;

    let view = ana.view(POST).unwrap();
    assert_eq!((view.liked, view.count, view.pending), (true, 1, false));
    assert_eq!(view.error, None);
    assert!(events.failures().is_empty());
    // the heart never emptied on the way
    assert!(events.views().iter().all(|v| v.liked));
    let stats = ana.stats();
    assert_eq!(
        (stats.calls_sent, stats.retries, stats.rollbacks),
        (2, 1, 0)
    );
    assert!(world.liked(ANA, POST).await);
    assert_eq!(world.count(POST).await, 1);
    world.stop().await;
}

#[tokio::test]
async fn dropped_connections_roll_back_as_network_errors() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    let ana = world.client(ANA);
    let (events, _sub) = Recorder::on(&ana, POST);
    // every like call's connection is closed without an answer
    world
        .faults(vec![FaultRule {
            drop_rate: 1.0,
            ..FaultRule::new(FaultRoute::Like)
        }])
        .await;
    ana.set_liked(POST, true);
    settle(&ana).await;
    let failures = events.failures();
    assert_eq!(failures.len(), 1);
    assert!(
        matches!(failures[0].error, likekit_core::LikeError::Network { .. }),
        "{:?}",
        failures[0].error
    );
    assert!(!ana.view(POST).unwrap().liked);
    assert!(!world.liked(ANA, POST).await);

    // the network is back: the next tap saves
    world.clear_faults().await;
    ana.set_liked(POST, true);
    settle(&ana).await;
    assert!(world.liked(ANA, POST).await);
    assert_eq!(ana.view(POST).unwrap().count, 1);
    world.stop().await;
}
