//! What the request journal says a write did when the database failed
//! after the write may have committed: not `refused` (a test would read
//! "nothing changed"), but unknown (`write: null`), as for a write the
//! request timeout cut short.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use async_trait::async_trait;
use axum::{
    body::Body,
    http::{Method, Request, StatusCode},
};
use likekit_server::{
    App, Config,
    store::{SqliteOptions, SqliteStore, Store, StoreError},
    wire::admin::{Journal, WriteResult},
};
use likekit_testing::{
    intercept::{Call, Hooks, Intercepted},
    suite::{p, u},
};
use tower::ServiceExt;

const ADMIN_KEY: &str = "journal-outcomes";

/// Likes that commit, then fail, as a PostgreSQL connection lost while
/// the commit's answer was on its way does (a like the store refused keeps
/// its own error).
#[derive(Debug)]
struct CommitsThenFails;

#[async_trait]
impl Hooks for CommitsThenFails {
    async fn after(&self, call: Call, ok: bool) -> Result<(), StoreError> {
        match call {
            Call::Like { .. } if ok => Err(StoreError::Backend(
                "connection closed while the commit's answer was on its way".into(),
            )),
            _ => Ok(()),
        }
    }
}

async fn send(app: &App, method: Method, path: &str, user: Option<u64>) -> (StatusCode, Vec<u8>) {
    let mut request = Request::builder().method(method).uri(path);
    request = match user {
        Some(user) => {
            let token = app.tokens().mint(u(user), Duration::from_secs(600));
            request.header("authorization", format!("Bearer {token}"))
        }
        None => request.header("x-admin-key", ADMIN_KEY),
    };
    let response = app
        .router()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, body.to_vec())
}

#[tokio::test]
async fn a_write_answered_500_is_unknown_in_the_journal_not_refused() {
    let store = std::sync::Arc::new(Intercepted::new(
        SqliteStore::open(SqliteOptions::default()).unwrap(),
        CommitsThenFails,
    ));
    let config = Config {
        token_secret: Some("journal-outcomes".into()),
        admin_key: Some(ADMIN_KEY.into()),
        write_rate_limit: None,
        ..Config::default()
    };
    let app = App::new(&config, store.clone()).unwrap();
    app.create_user(u(7), "Viewer").await.unwrap();
    app.create_post(p(1)).await.unwrap();

    let (status, body) = send(&app, Method::POST, "/posts/1/like", Some(7)).await;
    assert_eq!(
        status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{}",
        String::from_utf8_lossy(&body)
    );
    // It did commit.
    assert_eq!(store.store.liked(u(7), &[p(1)]).await.unwrap(), [true]);
    // A refusal the store makes before any write is still `refused`.
    let (status, _) = send(&app, Method::POST, "/posts/99/like", Some(7)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = send(&app, Method::DELETE, "/posts/1/like", Some(7)).await;
    assert_eq!(status, StatusCode::OK);

    let (status, body) = send(&app, Method::GET, "/admin/requests", None).await;
    assert_eq!(status, StatusCode::OK);
    let journal: Journal = serde_json::from_slice(&body).unwrap();
    let outcomes: Vec<(Option<u16>, Option<WriteResult>)> = journal
        .entries
        .iter()
        .map(|entry| (entry.status, entry.write))
        .collect();
    assert_eq!(
        outcomes,
        [
            (Some(500), None),
            (Some(404), Some(WriteResult::Refused)),
            (Some(200), Some(WriteResult::Applied)),
        ]
    );
}
