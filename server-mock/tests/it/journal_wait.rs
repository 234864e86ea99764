//! `GET /admin/requests?wait_for=N`: a journal read that waits until N
//! matching requests are there and answered, for a test that cannot wait
//! for the client itself (a UI test in another process).

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use crate::common::{TestServer, expect_error, ok_json, test_config};
use likekit_server::{
    Config,
    wire::{LikeState, admin::Journal},
};
use reqwest::{Method, StatusCode};
use serde_json::json;

async fn read(t: &TestServer, query: &str) -> Journal {
    ok_json(
        t.admin(Method::GET, &format!("/admin/requests?{query}"), None)
            .await,
    )
    .await
}

/// The wait answers once the second like is answered, not while it is in
/// flight (its rule's latency holds it), and says it did not time out.
#[tokio::test]
async fn a_wait_answers_when_the_requests_are_there_and_answered() {
    let t = TestServer::start().await;
    t.setup(&[(7, "Ana")], &[42]).await;
    let r = t
        .admin(
            Method::PUT,
            "/admin/faults",
            Some(json!({"rules": [{"route": "like", "nth": 2, "latency_ms": 600}]})),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);

    let started = Instant::now();
    let wait = read(&t, "user=7&post=42&wait_for=2&timeout_ms=10000");
    let mut wait = Box::pin(wait);
    // Nothing yet: the wait holds.
    tokio::select! {
        page = &mut wait => panic!("answered with no request sent: {page:?}"),
        () = tokio::time::sleep(Duration::from_millis(200)) => {}
    }
    ok_json::<LikeState>(t.like(7, 42).await).await;
    let second = Box::pin(t.like(7, 42));
    // The second like is in flight (its latency): the wait still holds.
    tokio::select! {
        page = &mut wait => panic!("answered while a request was in flight: {page:?}"),
        () = tokio::time::sleep(Duration::from_millis(300)) => {}
    }
    let state: LikeState = ok_json(second.await).await;
    assert_eq!((state.count, state.liked_by_me), (1, true));
    let page = wait.await;
    assert_eq!(page.met, Some(true));
    assert_eq!(page.entries.len(), 2, "{page:?}");
    assert!(
        page.entries
            .iter()
            .all(|e| !e.in_flight && e.status == Some(200))
    );
    assert!(started.elapsed() >= Duration::from_millis(600));
    // A read that does not wait carries no `met`.
    let r = t
        .admin(Method::GET, "/admin/requests?user=7", None)
        .await
        .text()
        .await
        .unwrap();
    assert!(!r.contains("\"met\""), "{r}");
    t.stop().await;
}

/// A wait that runs out answers the entries there are, not met; one
/// already met answers met; one for more than the journal holds answers at
/// once, not met.
#[tokio::test]
async fn a_wait_that_runs_out_says_so() {
    let t = TestServer::start().await;
    t.setup(&[(7, "Ana")], &[42]).await;
    ok_json::<LikeState>(t.like(7, 42).await).await;

    let started = Instant::now();
    let page = read(&t, "user=7&wait_for=2&timeout_ms=300").await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(page.met, Some(false));
    assert_eq!(page.entries.len(), 1);

    // `since` the last entry seen: a wait for what comes next.
    let seq = page.entries[0].seq;
    let next = read(&t, &format!("user=7&since={seq}&wait_for=1&timeout_ms=300")).await;
    assert_eq!((next.met, next.entries.len()), (Some(false), 0));

    // Already there: met (a wait that ran out would say not met).
    let page = read(&t, "user=7&wait_for=1").await;
    assert_eq!((page.met, page.entries.len()), (Some(true), 1));
    // More than the journal holds (10,000 by default) can never be met: not
    // met, without waiting out the 29 s the request timeout leaves it.
    let started = Instant::now();
    let page = read(&t, "wait_for=10001&timeout_ms=60000").await;
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!((page.met, page.capacity), (Some(false), 10_000));
    t.stop().await;
}

/// A server that begins stopping answers its waiting reads at once
/// instead of holding the stop for their whole wait.
#[tokio::test]
async fn stopping_ends_a_wait() {
    let t = TestServer::with(Config {
        shutdown_delay: Duration::from_secs(5),
        ..test_config()
    })
    .await;
    let mut wait = Box::pin(read(&t, "wait_for=1&timeout_ms=20000"));
    tokio::select! {
        page = &mut wait => panic!("answered with no request sent: {page:?}"),
        () = tokio::time::sleep(Duration::from_millis(200)) => {}
    }
    let started = Instant::now();
    t.server.begin_shutdown();
    let page = wait.await;
    // Well before the 20 s asked.
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!((page.met, page.entries.len()), (Some(false), 0));
    t.server.skip_shutdown_delay();
    t.stop().await;
}

/// The wait's parameters are checked: 400 `bad_query` naming the one at
/// fault, and `DELETE` (which waits for nothing) does not take them. A
/// `timeout_ms` past the request timeout ends a second before it.
#[tokio::test]
async fn the_wait_s_parameters_are_checked() {
    let t = TestServer::with(Config {
        journal_size: 50,
        request_timeout: Duration::from_secs(2),
        ..test_config()
    })
    .await;
    for (method, query, names) in [
        (Method::GET, "wait_for=0", "wait_for"),
        (Method::GET, "wait_for=-1", "wait_for"),
        (Method::GET, "wait_for=two", "wait_for"),
        (Method::GET, "wait_for=1&timeout_ms=60001", "timeout_ms"),
        (Method::GET, "timeout_ms=60001", "timeout_ms"),
        (Method::GET, "wait_for=1&wait_for=2", "wait_for"),
        (Method::GET, "wait_for=1&nope=1", "nope"),
        (Method::DELETE, "wait_for=1", "wait_for"),
    ] {
        let r = t
            .admin(method.clone(), &format!("/admin/requests?{query}"), None)
            .await;
        let body = expect_error(r, StatusCode::BAD_REQUEST, "bad_query").await;
        assert!(
            body.error.message.contains(names),
            "{query}: {}",
            body.error.message
        );
    }
    // 60 s asked, the request timeout is 2 s: the wait ends after 1 s,
    // with the journal's answer (past 2 s it would be the timeout's 503).
    let started = Instant::now();
    let page = read(&t, "wait_for=50&timeout_ms=60000&since=0&route=like").await;
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!((page.met, page.capacity), (Some(false), 50));
    // `timeout_ms` alone waits for nothing.
    let page = read(&t, "timeout_ms=100").await;
    assert_eq!(page.met, None);
    t.stop().await;
}

/// A server keeping no journal refuses a wait as it refuses a read.
#[tokio::test]
async fn a_wait_on_a_server_without_a_journal_is_409() {
    let t = TestServer::with(Config {
        journal_size: 0,
        ..test_config()
    })
    .await;
    let r = t
        .admin(Method::GET, "/admin/requests?wait_for=1", None)
        .await;
    expect_error(r, StatusCode::CONFLICT, "journal_off").await;
    t.stop().await;
}

/// `last_seq` is the last request's `seq` whatever the filters match: a
/// test reads it once to mark where it starts, then waits for what comes
/// after (`since=`), without reading the whole journal.
#[tokio::test]
async fn last_seq_marks_where_a_test_starts() {
    let t = TestServer::start().await;
    t.setup(&[(7, "Ana"), (8, "Ben")], &[42]).await;
    let page = read(&t, "user=7").await;
    assert_eq!((page.last_seq, page.entries.len()), (0, 0));
    ok_json::<LikeState>(t.like(8, 42).await).await;
    ok_json::<LikeState>(t.like(8, 42).await).await;
    let mark = read(&t, "user=7").await;
    assert_eq!((mark.last_seq, mark.entries.len()), (2, 0));

    ok_json::<LikeState>(t.like(7, 42).await).await;
    let page = read(
        &t,
        &format!("since={}&wait_for=1&timeout_ms=2000", mark.last_seq),
    )
    .await;
    assert_eq!(page.met, Some(true));
    assert_eq!(page.entries.len(), 1);
    assert_eq!(page.entries[0].seq, 3);
    assert_eq!(page.entries[0].user.map(|u| u.get()), Some(7));
    assert_eq!(page.last_seq, 3);
    // Clearing the journal does not count `seq` again.
    let r = t.admin(Method::DELETE, "/admin/requests", None).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(read(&t, "").await.last_seq, 3);
    t.stop().await;
}
