//! `/readyz` logs when readiness changes, not on every probe: one warning
//! with the reason when the store stops answering, one line when it is
//! back, nothing for the probes in between.

#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

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

/// The log lines written on this thread, as text.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

async fn probe(app: &App) -> StatusCode {
    let request = Request::get("/readyz").body(Body::empty()).unwrap();
    app.router().oneshot(request).await.unwrap().status()
}

// One thread: the handler runs where the test's subscriber is the default.
#[tokio::test(flavor = "current_thread")]
async fn readyz_logs_when_readiness_changes_not_on_every_probe() {
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
