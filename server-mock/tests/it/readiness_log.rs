//! `/readyz` logs when readiness changes, not on every probe: one warning
//! with the reason when the store stops answering, one line when it is
//! back, nothing for the probes in between.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use axum::{
    body::Body,
    http::{Request, StatusCode},
};
use likekit_server::{
    App, Config,
    store::{SqliteOptions, SqliteStore, StoreError},
};
use likekit_testing::intercept::{Call, Hooks, Intercepted};

use crate::common::Captured;
use tower::ServiceExt;

/// The store's readiness check fails while `down` is set.
#[derive(Debug, Default)]
struct Switchable {
    down: AtomicBool,
}

#[async_trait]
impl Hooks for Switchable {
    async fn before(&self, call: Call) -> Result<(), StoreError> {
        if call == Call::Ready && self.down.load(Ordering::Relaxed) {
            return Err(StoreError::Backend("the database went away".into()));
        }
        Ok(())
    }
}

/// What each test starts from: the log captured (while `_default` lives),
/// a store that can be switched off, and the server over it.
struct Setup {
    captured: Captured,
    _default: tracing::subscriber::DefaultGuard,
    store: Arc<Intercepted<SqliteStore, Switchable>>,
    app: App,
}

fn setup() -> Setup {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    let _default = tracing::subscriber::set_default(subscriber);
    let store = Arc::new(Intercepted::new(
        SqliteStore::open(SqliteOptions::default()).unwrap(),
        Switchable::default(),
    ));
    let config = Config {
        token_secret: Some("readiness".into()),
        ..Config::default()
    };
    let app = App::new(&config, store.clone()).unwrap();
    Setup {
        captured,
        _default,
        store,
        app,
    }
}

async fn probe(app: &App) -> StatusCode {
    let request = Request::get("/readyz").body(Body::empty()).unwrap();
    app.router().oneshot(request).await.unwrap().status()
}

// One thread: the handler runs where the test's subscriber is the default.
#[tokio::test(flavor = "current_thread")]
async fn readyz_logs_when_readiness_changes_not_on_every_probe() {
    let Setup {
        captured,
        _default,
        store,
        app,
    } = setup();
    let readiness = |lines: Vec<String>| -> Vec<String> {
        lines
            .into_iter()
            .filter(|line| line.contains("ready"))
            .collect()
    };

    assert_eq!(probe(&app).await, StatusCode::OK);
    assert_eq!(readiness(captured.lines()), Vec::<String>::new());

    store.hooks.down.store(true, Ordering::Relaxed);
    for _ in 0..3 {
        assert_eq!(probe(&app).await, StatusCode::SERVICE_UNAVAILABLE);
    }
    let lines = readiness(captured.lines());
    assert_eq!(
        lines.len(),
        1,
        "one line for three failed probes: {lines:?}"
    );
    assert!(
        lines[0].contains("WARN") && lines[0].contains("the database went away"),
        "{lines:?}"
    );

    store.hooks.down.store(false, Ordering::Relaxed);
    for _ in 0..2 {
        assert_eq!(probe(&app).await, StatusCode::OK);
    }
    let lines = readiness(captured.lines());
    assert_eq!(lines.len(), 2, "one more when it is back: {lines:?}");
    assert!(
        lines[1].contains("INFO") && lines[1].contains("ready again"),
        "{lines:?}"
    );
}

/// The probe answers on the public port, so the store's own words (a
/// database host, a user name, a file's path) are logged, never answered:
/// the 503 says only that the store failed.
#[tokio::test(flavor = "current_thread")]
async fn readyz_answers_no_detail_of_the_store_failure() {
    let Setup {
        captured,
        _default,
        store,
        app,
    } = setup();
    store.hooks.down.store(true, Ordering::Relaxed);
    let request = Request::get("/readyz").body(Body::empty()).unwrap();
    let answer = app.router().oneshot(request).await.unwrap();
    assert_eq!(answer.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body = axum::body::to_bytes(answer.into_body(), 4096)
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["error"]["code"], "not_ready", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("the store failed"), "{message}");
    assert!(!message.contains("went away"), "{message}");
    assert!(
        captured
            .lines()
            .iter()
            .any(|line| line.contains("the database went away")),
        "the log says why"
    );
}
