//! Errors on the way: a rate limit waited out, a sign-in renewed after a
//! 401, a post that does not exist.

#![allow(clippy::unwrap_used)]

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use likekit_core::{LikeError, StaticToken};
use likekit_proto::admin::{FaultRoute, FaultRule};
use likekit_tests::{
    Config, PostId, RateLimit, Recorder, UserId, World, post, settle, test_config,
};

const ANA: UserId = UserId::checked(1).unwrap();
const POST: PostId = PostId::checked(42).unwrap();

#[tokio::test]
async fn the_server_rate_limit_is_waited_out_and_the_like_sticks() {
    let world = World::with(Config {
        write_rate_limit: Some(RateLimit {
            per_second: NonZeroU32::new(1).unwrap(),
            burst: NonZeroU32::new(1).unwrap(),
        }),
        ..test_config()
    })
    .await;
    world.setup(&[(ANA, "Ana")], &[POST, post(43)]).await;
    let ana = world.client(ANA);
    let (events, _sub) = Recorder::on(&ana, post(43));

    ana.set_liked(POST, true); // uses the one write allowed now
    settle(&ana).await;
    let started = Instant::now();
    ana.set_liked(post(43), true); // refused with 429 + Retry-After
    settle(&ana).await;

    assert!(world.liked(ANA, post(43)).await, "the like stuck");
    assert!(ana.view(post(43)).unwrap().liked);
    assert!(events.failures().is_empty());
    let stats = ana.stats();
    assert!(stats.retries >= 1, "{stats:?}");
    assert_eq!(stats.rollbacks, 0);
    // the fast retry policy alone would have given up within a second;
    // the client waited as long as the server asked
    assert!(started.elapsed() >= Duration::from_millis(900));
    world.stop().await;
}

#[tokio::test]
async fn an_injected_429_with_retry_after_is_waited_out() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    let ana = world.client(ANA);
    let (events, _sub) = Recorder::on(&ana, POST);
    world
        .faults(vec![FaultRule {
            fail_next: 1,
            status: 429,
            ..FaultRule::new(FaultRoute::Like)
        }])
        .await;
    let started = Instant::now();
    ana.set_liked(POST, true);
    settle(&ana).await;
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert!(world.liked(ANA, POST).await);
    assert!(events.failures().is_empty());
    assert_eq!(ana.stats().retries, 1);
    world.stop().await;
}

#[tokio::test]
async fn a_401_is_recovered_with_a_fresh_token() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    let fresh = world.token(ANA);
    // an expired session: the first token is refused, the provider then
    // hands out the renewed one
    let current = Arc::new(Mutex::new("expired-or-forged".to_string()));
    let refreshes = Arc::new(AtomicU32::new(0));
    let provider = {
        let current = Arc::clone(&current);
        let refreshes = Arc::clone(&refreshes);
        move |refresh: bool| {
            let mut token = current.lock().unwrap();
            if refresh {
                refreshes.fetch_add(1, Ordering::SeqCst);
                token.clone_from(&fresh);
            }
            Some(token.clone())
        }
    };
    let ana = likekit_core::LikeClient::builder()
        .base_url(world.base_url())
        .token_provider(provider)
        .retry_policy(likekit_tests::fast_retries())
        .build()
        .unwrap();
    let (events, _sub) = Recorder::on(&ana, POST);
    ana.set_liked(POST, true);
    settle(&ana).await;
    assert!(world.liked(ANA, POST).await);
    assert!(events.failures().is_empty());
    assert_eq!(refreshes.load(Ordering::SeqCst), 1);
    assert_eq!(
        ana.stats().calls_sent,
        1,
        "the transport renewed, not the machine"
    );
    // the renewed token is used from now on
    ana.set_liked(POST, false);
    settle(&ana).await;
    assert_eq!(refreshes.load(Ordering::SeqCst), 1);
    assert!(!world.liked(ANA, POST).await);
    world.stop().await;
}

#[tokio::test]
async fn a_token_that_cannot_be_renewed_rolls_back_without_retries() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    let ana = world
        .builder(ANA)
        .token_provider(StaticToken::new("not-a-token"))
        .build()
        .unwrap();
    let (events, _sub) = Recorder::on(&ana, POST);
    ana.set_liked(POST, true);
    settle(&ana).await;
    let failures = events.failures();
    assert_eq!(failures.len(), 1);
    assert!(matches!(failures[0].error, LikeError::Unauthorized { .. }));
    assert!(!ana.view(POST).unwrap().liked);
    assert_eq!(ana.stats().retries, 0);
    assert_eq!(world.requests("like").await, 1);
    assert_eq!(ana.refresh(POST).await.unwrap_err().code(), "unauthorized");
    world.stop().await;
}

#[tokio::test]
async fn a_post_that_does_not_exist_rolls_back_without_retries() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    let ana = world.client(ANA);
    const GONE: PostId = PostId::checked(404_404).unwrap();
    let (events, _sub) = Recorder::on(&ana, GONE);
    let view = ana.set_liked(GONE, true);
    assert!(view.liked, "the heart fills at once all the same");
    settle(&ana).await;

    let view = ana.view(GONE).unwrap();
    assert_eq!((view.liked, view.count, view.pending), (false, 0, false));
    let failures = events.failures();
    assert_eq!(failures.len(), 1);
    assert_eq!(
        failures[0].error.code(),
        "post_not_found",
        "{:?}",
        failures[0].error
    );
    let stats = ana.stats();
    assert_eq!(
        (stats.calls_sent, stats.retries, stats.rollbacks),
        (1, 0, 1)
    );
    assert_eq!(world.requests("like").await, 1);
    assert!(matches!(
        ana.refresh(GONE).await,
        Err(LikeError::NotFound { .. })
    ));
    world.stop().await;
}
