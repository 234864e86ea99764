//! The view caches against writes and admin changes that race them: a
//! request dropped while its write commits, a cache emptied while a read
//! that began before it is still out, and a feed page's reads sent at once.
//!
//! A store wrapper holds chosen calls at a gate after the real store has
//! answered, so each race runs in one exact order.

#![allow(clippy::unwrap_used)]

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use async_trait::async_trait;
use axum::{
    Router,
    body::Body,
    http::{Method, Request, StatusCode},
};
use likekit_server::{
    App, Config,
    store::{SqliteOptions, SqliteStore, Store, StoreError},
    wire::{BatchLikes, PostId, PostLikes},
};
use likekit_testing::{
    intercept::{Call, Hooks, Intercepted},
    suite::{p, u},
};
use tokio::sync::{Barrier, Notify, Semaphore};
use tower::ServiceExt;

/// Holds the first call after it is armed until the test releases it.
#[derive(Debug)]
struct Gate {
    armed: AtomicBool,
    entered: Notify,
    release: Semaphore,
}

impl Default for Gate {
    fn default() -> Self {
        Self {
            armed: AtomicBool::new(false),
            entered: Notify::new(),
            release: Semaphore::new(0),
        }
    }
}

impl Gate {
    fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }

    async fn pass(&self) {
        if self.armed.swap(false, Ordering::SeqCst) {
            self.entered.notify_one();
            self.release.acquire().await.unwrap().forget();
        }
    }

    async fn entered(&self) {
        tokio::time::timeout(Duration::from_secs(10), self.entered.notified())
            .await
            .expect("the call reached the gate");
    }

    fn open(&self) {
        self.release.add_permits(1);
    }
}

/// Chosen calls wait at a gate once the real store has answered (the
/// write committed, the read done).
#[derive(Debug, Default)]
struct Gated {
    like: Gate,
    friends: Gate,
    post_seen_by: Gate,
    /// When set, every `post` read waits for the others at this barrier.
    posts_together: std::sync::Mutex<Option<Arc<Barrier>>>,
}

#[async_trait]
impl Hooks for Gated {
    async fn before(&self, call: Call) -> Result<(), StoreError> {
        if let Call::Post { .. } = call {
            let barrier = self.posts_together.lock().unwrap().clone();
            if let Some(barrier) = barrier {
                barrier.wait().await;
            }
        }
        Ok(())
    }

    async fn after(&self, call: Call, _ok: bool) -> Result<(), StoreError> {
        match call {
            Call::Like { .. } => self.like.pass().await,
            Call::Friends { .. } => self.friends.pass().await,
            Call::PostSeenBy { .. } => self.post_seen_by.pass().await,
            _ => {}
        }
        Ok(())
    }
}

/// An app on a gated store, with caches kept far longer than any test.
async fn app() -> (App, Arc<Intercepted<SqliteStore, Gated>>) {
    let store = Arc::new(Intercepted::new(
        SqliteStore::open(SqliteOptions::default()).unwrap(),
        Gated::default(),
    ));
    let config = Config {
        token_secret: Some("cache-races".into()),
        write_rate_limit: None,
        cache_ttl: Duration::from_secs(600),
        friends_ttl: Duration::from_secs(600),
        ..Config::default()
    };
    let app = App::new(&config, store.clone()).unwrap();
    for (id, name) in [(7, "Viewer"), (8, "Ana"), (9, "Ben")] {
        app.create_user(u(id), name).await.unwrap();
    }
    for post in 1..=3 {
        app.create_post(p(post)).await.unwrap();
    }
    (app, store)
}

fn request(app: &App, method: Method, user: u64, path: &str) -> Request<Body> {
    let token = app.tokens().mint(u(user), Duration::from_secs(600));
    Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {token}"))
        .body(Body::empty())
        .unwrap()
}

async fn call<T: serde::de::DeserializeOwned>(router: Router, request: Request<Body>) -> T {
    let response = router.oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    serde_json::from_slice(&body).unwrap()
}

async fn view(app: &App, user: u64, post: u64) -> PostLikes {
    let path = format!("/posts/{post}/likes");
    call(app.router(), request(app, Method::GET, user, &path)).await
}

#[tokio::test]
async fn a_dropped_like_request_still_refreshes_the_view_cache() {
    let (app, store) = app().await;
    assert_eq!(view(&app, 7, 1).await.count, 0, "cached at count 0");
    store.hooks.like.arm();
    let router = app.router();
    let like = request(&app, Method::POST, 8, "/posts/1/like");
    let dropped = tokio::spawn(async move { router.oneshot(like).await });
    // The like has committed; its request goes away (a timeout, a lost
    // connection) before its answer comes back.
    store.hooks.like.entered().await;
    dropped.abort();
    assert!(dropped.await.unwrap_err().is_cancelled());
    store.hooks.like.open();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let seen = view(&app, 7, 1).await;
        if (seen.count, seen.version) == (1, 1) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cache kept the count from before the like: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    store.close().await.unwrap();
}

#[tokio::test]
async fn a_friend_list_read_before_a_change_is_not_cached_after_it() {
    let (app, store) = app().await;
    store.like(u(8), p(1)).await.unwrap();
    store.like(u(9), p(1)).await.unwrap();
    app.set_friends(u(7), &[u(8)]).await.unwrap();
    // A view reads the viewer's friends (Ana) …
    store.hooks.friends.arm();
    let racing = {
        let app = app.clone();
        tokio::spawn(async move { view(&app, 7, 1).await })
    };
    store.hooks.friends.entered().await;
    // … while an admin makes Ben the viewer's only friend.
    app.set_friends(u(7), &[u(9)]).await.unwrap();
    store.hooks.friends.open();
    assert_eq!(
        racing.await.unwrap().friends,
        ["Ana"],
        "read before the change"
    );
    assert_eq!(
        view(&app, 7, 1).await.friends,
        ["Ben"],
        "the old friend list was cached after the change"
    );
    store.close().await.unwrap();
}

#[tokio::test]
async fn a_post_read_before_a_reset_is_not_cached_after_it() {
    let (app, store) = app().await;
    store.like(u(8), p(1)).await.unwrap();
    store.hooks.post_seen_by.arm();
    let racing = {
        let app = app.clone();
        tokio::spawn(async move { view(&app, 7, 1).await })
    };
    store.hooks.post_seen_by.entered().await;
    app.reset().await.unwrap();
    store.hooks.post_seen_by.open();
    assert_eq!(racing.await.unwrap().count, 1, "read before the reset");
    let seen = view(&app, 7, 1).await;
    assert_eq!(
        (seen.count, seen.version),
        (0, 0),
        "the count from before the reset was cached after it"
    );
    store.close().await.unwrap();
}

#[tokio::test]
async fn a_feed_page_reads_its_posts_at_once_in_order() {
    let (app, store) = app().await;
    store.like(u(8), p(2)).await.unwrap();
    // Each of the three reads waits until all three are out: read one
    // after another, the first would wait for ever.
    *store.hooks.posts_together.lock().unwrap() = Some(Arc::new(Barrier::new(3)));
    let page = call::<BatchLikes>(
        app.router(),
        request(&app, Method::GET, 7, "/likes?posts=3,2,1"),
    );
    let page = tokio::time::timeout(Duration::from_secs(5), page)
        .await
        .expect("the feed's posts were read one at a time");
    let counts: Vec<(PostId, u64)> = page.posts.iter().map(|(id, v)| (*id, v.count)).collect();
    assert_eq!(counts, [(p(1), 0), (p(2), 1), (p(3), 0)]);
    *store.hooks.posts_together.lock().unwrap() = None;
    store.close().await.unwrap();
}
