//! A failing database fails every request that reaches it, and the log
//! says so at most once a second per kind of failure: the first failure
//! at once, then one line a second that carries `suppressed`, the
//! failures left out since the line before, and the id of a request
//! that really failed.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use axum::{
    body::Body,
    http::{Method, Request, StatusCode},
};
use likekit_server::{
    App, Config,
    store::{SqliteOptions, SqliteStore, StoreError},
};
use likekit_testing::{
    intercept::{Call, Hooks, Intercepted},
    suite::u,
};
use serde_json::Value;
use tower::ServiceExt;

use crate::common::Captured;

/// Every like fails as a database that broke does (500 `storage_error`),
/// every unlike as one that cannot take it now (503 `unavailable`).
#[derive(Debug)]
struct DatabaseDown;

#[async_trait]
impl Hooks for DatabaseDown {
    async fn before(&self, call: Call) -> Result<(), StoreError> {
        match call {
            Call::Like { .. } => Err(StoreError::Backend("disk I/O error".into())),
            Call::Unlike { .. } => Err(StoreError::Unavailable(
                "a lock was not granted within lock_timeout".into(),
            )),
            _ => Ok(()),
        }
    }
}

/// The lines of `captured` whose message is `message`, as JSON.
fn json_lines(captured: &Captured, message: &str) -> Vec<Value> {
    captured
        .lines()
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["fields"]["message"] == message)
        .collect()
}

/// One kind of failure: the request that meets it and the line it logs.
struct Kind {
    method: Method,
    status: StatusCode,
    route: &'static str,
    message: &'static str,
    reason: &'static str,
    /// The ids of the requests that failed so, in order.
    failed: Vec<String>,
}

impl Kind {
    /// Where the request `line` names stands among the failures.
    fn index_of(&self, line: &Value) -> usize {
        let id = line["span"]["request_id"].as_str().unwrap_or_default();
        self.failed
            .iter()
            .position(|failed| failed == id)
            .unwrap_or_else(|| panic!("not a request that failed so: {line}"))
    }

    fn suppressed(line: &Value) -> u64 {
        line["fields"]["suppressed"].as_u64().unwrap_or(0)
    }
}

// One thread: the handlers run where the test's subscriber is the default.
#[tokio::test(flavor = "current_thread")]
async fn a_failing_database_is_logged_once_a_second_with_what_was_left_out() {
    let (captured, _default) = Captured::json_lines();
    let store = Arc::new(Intercepted::new(
        SqliteStore::open(SqliteOptions::default()).unwrap(),
        DatabaseDown,
    ));
    let config = Config {
        token_secret: Some("log-flood".into()),
        write_rate_limit: None,
        ..Config::default()
    };
    let app = App::new(&config, store).unwrap();
    let bearer = format!(
        "Bearer {}",
        app.tokens().mint(u(7), Duration::from_secs(600))
    );
    let mut kinds = [
        Kind {
            method: Method::POST,
            status: StatusCode::INTERNAL_SERVER_ERROR,
            route: "like",
            message: "storage failure",
            reason: "disk I/O error",
            failed: Vec::new(),
        },
        Kind {
            method: Method::DELETE,
            status: StatusCode::SERVICE_UNAVAILABLE,
            route: "unlike",
            message: "the database cannot take the request now",
            reason: "a lock was not granted within lock_timeout",
            failed: Vec::new(),
        },
    ];

    // Fail until each kind has written a line after holding others back
    // (a second or so); the deadline only keeps a broken limit from
    // hanging the test.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut sent = 0u64;
    loop {
        for kind in &mut kinds {
            let id = format!("flood-{sent}");
            sent += 1;
            let request = Request::builder()
                .method(kind.method.clone())
                .uri("/posts/1/like")
                .header("authorization", &bearer)
                .header("x-request-id", &id)
                .body(Body::empty())
                .unwrap();
            let answer = app.router().oneshot(request).await.unwrap();
            assert_eq!(answer.status(), kind.status, "{id}");
            kind.failed.push(id);
        }
        if sent % 64 != 0 {
            continue;
        }
        let mut done = true;
        for kind in &kinds {
            let lines = json_lines(&captured, kind.message);
            let failures = kind.failed.len();
            // Far fewer lines than failures, all along.
            assert!(
                lines.len() <= 1 + failures / 10,
                "{} lines for {failures} failures: {lines:?}",
                lines.len()
            );
            done &= lines.iter().any(|line| Kind::suppressed(line) > 0);
        }
        if done {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no line said what was left out after {sent} failures"
        );
    }

    for kind in &kinds {
        let lines = json_lines(&captured, kind.message);
        assert!(lines.len() >= 2, "{lines:?}");
        for line in &lines {
            // Each line is one of the failures, with its request's id,
            // route and the store's reason.
            kind.index_of(line);
            assert_eq!(line["span"]["route"], kind.route, "{line}");
            assert_eq!(line["fields"]["reason"], kind.reason, "{line}");
        }
        // The first failure is written at once, with nothing left out.
        assert_eq!(kind.index_of(&lines[0]), 0, "{}", lines[0]);
        assert!(
            lines[0]["fields"].get("suppressed").is_none(),
            "{}",
            lines[0]
        );
        // Each later line counts exactly the failures between it and the
        // line before.
        for pair in lines.windows(2) {
            let between = kind.index_of(&pair[1]) - kind.index_of(&pair[0]) - 1;
            assert_eq!(Kind::suppressed(&pair[1]), between as u64, "{pair:?}");
        }
    }
}
