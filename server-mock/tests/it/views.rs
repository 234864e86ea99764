//! The view path: read-your-writes for `liked_by_me`, the count cache, and
//! friends lines per viewer.

#![allow(clippy::unwrap_used)]

use std::{sync::Arc, time::Duration};

use crate::common::{TestServer, eventually, ok_json, test_config};
use likekit_server::{
    Config,
    store::{SqliteOptions, SqliteStore, Store},
    wire::{BatchLikes, LikeState, PostLikes},
};
use likekit_testing::suite::{p, u};
use reqwest::Method;
use serde_json::json;

/// A server sharing its store with the test, so the test can write "behind
/// the server's back" (as another server instance would).
async fn with_shared_store(cache_ttl: Duration) -> (TestServer, Arc<dyn Store>) {
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(SqliteOptions::default()).unwrap());
    let server = likekit_server::spawn_with_store(
        Config {
            cache_ttl,
            ..test_config()
        },
        store.clone(),
    )
    .await
    .unwrap();
    let t = TestServer::from_handle(server);
    (t, store)
}

#[tokio::test]
async fn own_like_shows_at_once_and_counts_follow_within_the_cache_ttl() {
    let (t, store) = with_shared_store(Duration::from_millis(300)).await;
    t.setup(&[], &[1]).await;
    // Through this server: visible at once, count included.
    ok_json::<LikeState>(t.like(7, 1).await).await;
    let view: PostLikes = ok_json(t.view(7, 1).await).await;
    assert!(view.liked_by_me);
    assert_eq!(view.count, 1);

    // Written elsewhere: liked_by_me at once, the count within about a second.
    store.like(u(8), p(1)).await.unwrap();
    let view: PostLikes = ok_json(t.view(8, 1).await).await;
    assert!(
        view.liked_by_me,
        "liked_by_me is read from the viewer's row"
    );
    eventually(Duration::from_secs(5), "the count to catch up", || async {
        let view: PostLikes = ok_json(t.view(9, 1).await).await;
        (view.count == 2 && view.version == 2).then_some(())
    })
    .await;
    t.stop().await;
}

#[tokio::test]
async fn counts_come_from_the_cache_but_liked_by_me_never_does() {
    // A long TTL makes the cache's effect visible without timing.
    let (t, store) = with_shared_store(Duration::from_secs(300)).await;
    t.setup(&[], &[1]).await;
    let first: PostLikes = ok_json(t.view(5, 1).await).await;
    assert_eq!((first.count, first.version), (0, 0));

    store.like(u(5), p(1)).await.unwrap();
    let view: PostLikes = ok_json(t.view(5, 1).await).await;
    assert_eq!((view.count, view.version), (0, 0), "served from the cache");
    assert!(view.liked_by_me, "but the viewer's own like is read fresh");

    let batch: BatchLikes = ok_json(
        t.as_user(5, Method::GET, "/likes?posts=1")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(batch.posts[&p(1)].liked_by_me);

    // A write through the server refreshes the cache with its own snapshot.
    ok_json::<LikeState>(t.like(6, 1).await).await;
    let view: PostLikes = ok_json(t.view(5, 1).await).await;
    assert_eq!((view.count, view.version), (2, 2));

    // Reset empties the cache.
    t.admin(Method::POST, "/admin/reset", None).await;
    let view: PostLikes = ok_json(t.view(5, 1).await).await;
    assert_eq!((view.count, view.liked_by_me), (0, false));
    t.stop().await;
}

#[tokio::test]
async fn friends_lines_differ_per_viewer_newest_first() {
    let t = TestServer::start().await;
    t.setup(
        &[
            (1, "Ana"),
            (2, "Ben"),
            (3, "Cy"),
            (4, "Di"),
            (10, "Viewer A"),
            (11, "Viewer B"),
        ],
        &[42, 43],
    )
    .await;
    let friends = |user: u64, list: serde_json::Value| {
        let t = &t;
        async move {
            let r = t
                .admin(
                    Method::PUT,
                    &format!("/admin/users/{user}/friends"),
                    Some(json!({ "friends": list })),
                )
                .await;
            assert!(r.status().is_success());
        }
    };
    friends(10, json!([1, 2, 3])).await;
    friends(11, json!([3, 4])).await;
    for liker in [1, 3, 2, 4] {
        ok_json::<LikeState>(t.like(liker, 42).await).await;
    }
    ok_json::<LikeState>(t.like(4, 43).await).await;

    let line = |viewer: u64| {
        let t = &t;
        async move {
            let view: PostLikes = ok_json(t.view(viewer, 42).await).await;
            view.friends
        }
    };
    assert_eq!(line(10).await, ["Ben", "Cy", "Ana"]);
    assert_eq!(line(11).await, ["Di", "Cy"]);
    assert!(line(1).await.is_empty(), "Ana has no friends listed");

    let batch: BatchLikes = ok_json(
        t.as_user(11, Method::GET, "/likes?posts=42,43")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(batch.posts[&p(42)].friends, ["Di", "Cy"]);
    assert_eq!(batch.posts[&p(43)].friends, ["Di"]);

    // An unlike removes the friend; a new like puts them first.
    ok_json::<LikeState>(t.unlike(2, 42).await).await;
    ok_json::<LikeState>(t.like(1, 42).await).await; // already liked: no change
    ok_json::<LikeState>(t.unlike(3, 42).await).await;
    ok_json::<LikeState>(t.like(3, 42).await).await;
    eventually(
        Duration::from_secs(5),
        "the friends line to update",
        || async { (line(10).await == ["Cy", "Ana"]).then_some(()) },
    )
    .await;

    // Friend list and name changes apply at once.
    friends(10, json!([4])).await;
    assert_eq!(line(10).await, ["Di"]);
    t.setup(&[(4, "Diana")], &[]).await;
    assert_eq!(line(10).await, ["Diana"]);
    assert_eq!(line(11).await, ["Cy", "Diana"]);
    t.stop().await;
}
