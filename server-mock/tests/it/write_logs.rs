//! A like or unlike writes in a task of its own (it commits even if the
//! request is dropped), and what the store logs meanwhile names the
//! request as the request's own lines do: its id (the client's
//! `X-Request-Id`) and its route.

#![allow(clippy::unwrap_used)]

use std::{sync::Arc, time::Duration};

use async_trait::async_trait;
use axum::{
    body::Body,
    http::{Method, Request, StatusCode},
};
use likekit_server::{
    App, Config,
    store::{SqliteOptions, SqliteStore, Store, StoreError},
};
use likekit_testing::{
    intercept::{Call, Hooks, Intercepted},
    suite::{p, u},
};
use serde_json::Value;
use tower::ServiceExt;

use crate::common::Captured;

/// Every write logs a line from inside the store, as PostgreSQL's does
/// when it meets a read-only database, and then goes through.
#[derive(Debug)]
struct SaysSomething;

#[async_trait]
impl Hooks for SaysSomething {
    async fn before(&self, call: Call) -> Result<(), StoreError> {
        if let Call::Like { post, .. } | Call::Unlike { post, .. } = call {
            tracing::warn!(post = post.get(), "the store took its time");
        }
        Ok(())
    }
}

// One thread: the handler and its write's task run where the test's
// subscriber is the default.
#[tokio::test(flavor = "current_thread")]
async fn lines_logged_during_a_write_carry_its_request_id() {
    let (captured, _default) = Captured::json_lines();
    let store = Arc::new(Intercepted::new(
        SqliteStore::open(SqliteOptions::default()).unwrap(),
        SaysSomething,
    ));
    store.put_post(p(42)).await.unwrap();
    let config = Config {
        token_secret: Some("write-logs".into()),
        ..Config::default()
    };
    let app = App::new(&config, store).unwrap();
    let bearer = format!(
        "Bearer {}",
        app.tokens().mint(u(7), Duration::from_secs(600))
    );

    let sent = [("checkout-like-1", "like"), ("checkout-unlike-1", "unlike")];
    for ((id, _), method) in sent.iter().zip([Method::POST, Method::DELETE]) {
        let request = Request::builder()
            .method(method)
            .uri("/posts/42/like")
            .header("authorization", &bearer)
            .header("x-request-id", *id)
            .body(Body::empty())
            .unwrap();
        let answer = app.router().oneshot(request).await.unwrap();
        assert_eq!(answer.status(), StatusCode::OK, "{id}");
        assert_eq!(answer.headers()["x-request-id"], *id);
    }

    let lines: Vec<Value> = captured
        .lines()
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["fields"]["message"] == "the store took its time")
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    for (line, (id, route)) in lines.iter().zip(sent) {
        assert_eq!(line["fields"]["post"], 42, "{line}");
        assert_eq!(line["span"]["request_id"], id, "{line}");
        assert_eq!(line["span"]["route"], route, "{line}");
    }
}
