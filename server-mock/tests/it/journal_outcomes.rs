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

/// A request dropped before its answer was ready (its client gave up
/// during a rule's latency) is finished in the journal, not left in
/// flight for good: no status (no answer reached the client); after an
/// `after` latency the like had committed (`applied`), before a `before`
/// latency's end it never ran (unknown).
#[tokio::test]
async fn a_request_its_client_gave_up_on_is_finished_in_the_journal() {
    use likekit_server::wire::admin::{
        FaultPhase, FaultRoute, FaultRule, JournalFault, RequestFilter,
    };

    let config = Config {
        token_secret: Some("journal-outcomes".into()),
        admin_key: Some(ADMIN_KEY.into()),
        write_rate_limit: None,
        ..Config::default()
    };
    let store = std::sync::Arc::new(SqliteStore::open(SqliteOptions::default()).unwrap());
    let app = App::new(&config, store.clone()).unwrap();
    app.create_user(u(7), "Viewer").await.unwrap();
    for (post, phase, count, write) in [
        (1, FaultPhase::After, 1, Some(WriteResult::Applied)),
        (2, FaultPhase::Before, 0, None),
    ] {
        app.create_post(p(post)).await.unwrap();
        app.add_faults(vec![FaultRule {
            post: Some(p(post)),
            phase,
            latency_ms: 5_000,
            ..FaultRule::new(FaultRoute::Like)
        }])
        .unwrap();
        let path = format!("/posts/{post}/like");
        let like = send(&app, Method::POST, &path, Some(7));
        // The client gives up well within the latency: the request's
        // future is dropped, as hyper drops it when the connection closes.
        assert!(
            tokio::time::timeout(Duration::from_millis(300), like)
                .await
                .is_err(),
            "answered within the rule's latency"
        );
        let filter = RequestFilter {
            post: Some(p(post)),
            ..RequestFilter::default()
        };
        let journal = app.requests(&filter);
        let entry = &journal.entries[..];
        assert_eq!(entry.len(), 1, "{entry:?}");
        let entry = &entry[0];
        assert!(!entry.in_flight, "{entry:?}");
        assert_eq!(entry.status, None, "{entry:?}");
        assert_eq!(entry.write, write, "{entry:?}");
        assert_eq!(entry.fault, Some(JournalFault::Latency), "{entry:?}");
        assert_eq!(entry.fault_phase, Some(phase), "{entry:?}");
        let liked = store.liked(u(7), &[p(post)]).await.unwrap();
        assert_eq!(liked, [count == 1], "post {post}");
    }
}
