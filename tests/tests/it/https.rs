//! HTTPS end to end: the real server behind a TLS front whose certificate a
//! throwaway CA signed (made at test time, on loopback). Given the CA as an
//! extra root, the SDK taps and reads over HTTPS and the server ends in the
//! exact state asked; without it, the certificate is refused as a typed,
//! transient `Network` error, the tap rolls back, nothing reaches the
//! server, and nothing panics.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use likekit_core::{LikeClient, LikeError, StaticToken};
use likekit_testing::tls::{TestCa, TlsFront};
use likekit_tests::{PostId, Recorder, UserId, World, fast_retries, settle};

const ANA: UserId = UserId::checked(1).unwrap();
const BEN: UserId = UserId::checked(2).unwrap();
const POST: PostId = PostId::checked(42).unwrap();
const OTHER: PostId = PostId::checked(43).unwrap();

/// The server with Ana, Ben and two posts, and an HTTPS front before it.
async fn world_over_https() -> (World, TlsFront) {
    let world = World::start().await;
    world
        .setup(&[(ANA, "Ana"), (BEN, "Ben")], &[POST, OTHER])
        .await;
    let front = TlsFront::start(world.server.addr()).await.unwrap();
    (world, front)
}

/// A client for `user` that goes through the front, trusting the extra
/// roots in `pem` if any.
fn https_client(world: &World, front: &TlsFront, user: UserId, pem: Option<&str>) -> LikeClient {
    let builder = LikeClient::builder()
        .base_url(front.url())
        .token_provider(StaticToken::new(world.token(user)))
        .retry_policy(fast_retries())
        .request_timeout(Duration::from_secs(15));
    match pem {
        Some(pem) => builder.extra_root_certificates_pem(pem),
        None => builder,
    }
    .build()
    .unwrap()
}

#[tokio::test]
async fn taps_and_reads_go_over_https_with_the_ca_as_an_extra_root() {
    let (world, front) = world_over_https().await;
    // Ben likes the post over plain HTTP first: someone else's like to read.
    let ben = world.client(BEN);
    ben.set_liked(POST, true);
    settle(&ben).await;

    let ana = https_client(&world, &front, ANA, Some(front.ca_pem()));
    let (events, _sub) = Recorder::on(&ana, POST);

    let read = ana.refresh(POST).await.unwrap();
    assert_eq!((read.count, read.liked), (1, false));
    assert_eq!(read.line.to_string(), "1 like");

    assert!(ana.set_liked(POST, true).pending);
    settle(&ana).await;
    assert!(world.liked(ANA, POST).await);
    assert_eq!(world.count(POST).await, 2);
    let view = ana.view(POST).unwrap();
    assert_eq!(
        (view.liked, view.count, view.pending, view.error),
        (true, 2, false, None)
    );

    assert!(!ana.set_liked(POST, false).liked);
    settle(&ana).await;
    assert!(!world.liked(ANA, POST).await);
    assert!(world.liked(BEN, POST).await);
    assert_eq!(world.count(POST).await, 1);

    // a feed page, one read
    let page = ana.refresh_many(&[POST, OTHER]).await.unwrap();
    let counts: Vec<(u64, bool)> = page.iter().map(|v| (v.count, v.liked)).collect();
    assert_eq!(counts, [(1, false), (0, false)]);
    assert_eq!(world.count(OTHER).await, 0);

    // Every call went through the front, once each, and none failed.
    assert!(events.failures().is_empty());
    let stats = ana.stats();
    assert_eq!(
        (stats.calls_sent, stats.retries, stats.rollbacks),
        (2, 0, 0)
    );
    assert_eq!(world.requests("like").await, 2, "Ben's and Ana's");
    assert_eq!(world.requests("unlike").await, 1);
    assert_eq!(world.requests("likes").await, 1);
    assert_eq!(world.requests("batch").await, 1);
    assert!(front.handshakes() >= 1, "{front:?}");
    assert_eq!(front.refused_handshakes(), 0);
    world.stop().await;
}

#[tokio::test]
async fn without_the_ca_the_certificate_is_refused_as_a_transient_network_error() {
    let (world, front) = world_over_https().await;
    let ana = https_client(&world, &front, ANA, None);

    let err = ana.refresh(POST).await.unwrap_err();
    let LikeError::Network { message } = &err else {
        panic!("{err:?}")
    };
    assert!(message.contains("certificate"), "{message}");
    assert!(err.is_transient(), "retried like any failure to connect");
    assert_eq!(err.code(), "network");

    // A tap shows at once, is retried, then rolls back with one failure.
    let (events, _sub) = Recorder::on(&ana, POST);
    let shown = ana.set_liked(POST, true);
    assert!(shown.liked && shown.pending);
    settle(&ana).await;
    let view = ana.view(POST).unwrap();
    assert_eq!((view.liked, view.count, view.pending), (false, 0, false));
    assert!(
        matches!(view.error, Some(LikeError::Network { .. })),
        "{view:?}"
    );
    let failures = events.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].wanted);
    assert!(matches!(failures[0].error, LikeError::Network { .. }));
    let stats = ana.stats();
    assert_eq!(
        (stats.retries, stats.rollbacks),
        (fast_retries().max_retries as u64, 1)
    );

    // Nothing got past the front.
    assert!(!world.liked(ANA, POST).await);
    assert_eq!(world.count(POST).await, 0);
    assert_eq!(world.requests("like").await, 0);
    assert_eq!(world.requests("likes").await, 0);
    assert_eq!(front.handshakes(), 0, "{front:?}");
    world.stop().await;
}

#[tokio::test]
async fn another_ca_does_not_help() {
    let (world, front) = world_over_https().await;
    let stranger = TestCa::new().unwrap();
    let ana = https_client(&world, &front, ANA, Some(stranger.pem()));
    let err = ana.refresh(POST).await.unwrap_err();
    assert!(matches!(err, LikeError::Network { .. }), "{err:?}");
    // Two extra roots, the right one among them, do.
    let bundle = format!("{}{}", stranger.pem(), front.ca_pem());
    let ana = https_client(&world, &front, ANA, Some(&bundle));
    assert_eq!(ana.refresh(POST).await.unwrap().count, 0);
    world.stop().await;
}

#[test]
fn pem_without_a_usable_certificate_is_a_config_error_at_build() {
    let garbage = "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n";
    for (pem, says) in [
        ("", "no certificate in the PEM"),
        ("/etc/ssl/certs/my-ca.pem", "no certificate in the PEM"),
        (
            "-----BEGIN CERTIFICATE-----\n%%%\n-----END CERTIFICATE-----\n",
            "unreadable PEM: bad base64",
        ),
        (
            "-----BEGIN CERTIFICATE-----\nMIIB\n",
            "unreadable PEM: a certificate has no -----END line",
        ),
        (
            garbage,
            "certificate 1 of 1 is not a usable X.509 certificate",
        ),
    ] {
        let built = LikeClient::builder()
            .base_url("https://127.0.0.1:9")
            .extra_root_certificates_pem(pem)
            .build();
        let Err(LikeError::Config { message }) = &built else {
            panic!("{pem:?}: {built:?}")
        };
        assert!(
            message.starts_with(&format!("extra root certificates: {says}")),
            "{pem:?}: {message}"
        );
    }
}
