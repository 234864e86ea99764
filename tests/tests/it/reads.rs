//! Reads: read-your-writes against a stale count cache, two devices of one
//! user converging, and a feed page in one read.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use likekit_core::runtime::BoxFuture;
use likekit_core::wire::{BatchLikes, LikeState, PostLikes};
use likekit_core::{Action, HttpTransport, LikeError, PostId, Transport};
use likekit_tests::{Config, ServerHandle, UserId, World, post, settle, test_config, user};

const ANA: UserId = UserId::checked(1).unwrap();
const BEN: UserId = UserId::checked(2).unwrap();
const POST: PostId = PostId::checked(42).unwrap();

/// Two servers behind a load balancer that sends writes to one and reads
/// to the other: the reading server's count cache lags the writes.
struct Balancer {
    writes: HttpTransport,
    reads: HttpTransport,
}

impl Transport for Balancer {
    fn send(&self, post: PostId, action: Action) -> BoxFuture<'_, Result<LikeState, LikeError>> {
        self.writes.send(post, action)
    }

    fn read(&self, post: PostId) -> BoxFuture<'_, Result<PostLikes, LikeError>> {
        self.reads.read(post)
    }

    fn read_many<'a>(
        &'a self,
        posts: &'a [PostId],
    ) -> BoxFuture<'a, Result<BatchLikes, LikeError>> {
        self.reads.read_many(posts)
    }
}

#[tokio::test]
async fn after_a_confirmed_like_a_stale_read_keeps_the_heart_and_the_count() {
    let config = Config {
        token_secret: Some("shared-secret".into()),
        // the reading server keeps counts for a minute
        cache_ttl: Duration::from_secs(60),
        ..test_config()
    };
    let writer = World::with(config.clone()).await;
    writer
        .setup(&[(ANA, "Ana"), (BEN, "Ben"), (user(3), "Cy")], &[POST])
        .await;
    let reader: ServerHandle = likekit_server::spawn_with_store(
        Config {
            admin_key: Some(likekit_tests::ADMIN_KEY.into()),
            ..config
        },
        writer.server.store(),
    )
    .await
    .unwrap();
    for user in [BEN, user(3)] {
        likekit_core::Transport::send(&writer.transport(user), POST, Action::Like)
            .await
            .unwrap();
    }
    let token = writer.token(ANA);
    let transport = |base: String| {
        HttpTransport::new(&base)
            .unwrap()
            .with_token_provider(likekit_core::StaticToken::new(token.clone()))
    };
    let ana = likekit_core::LikeClient::builder()
        .transport(Balancer {
            writes: transport(writer.base_url()),
            reads: transport(reader.base_url()),
        })
        .retry_policy(likekit_tests::fast_retries())
        .build()
        .unwrap();

    // the reading server caches the post now: 2 likes
    let view = ana.refresh(POST).await.unwrap();
    assert_eq!((view.liked, view.count), (false, 2));

    ana.set_liked(POST, true);
    settle(&ana).await;
    assert_eq!(writer.count(POST).await, 3);

    // the reading server still says 2 (its cache is stale) but knows Ana's
    // own row; the client keeps the count it confirmed
    let raw = likekit_core::Transport::read(&transport(reader.base_url()), POST)
        .await
        .unwrap();
    assert_eq!(
        (raw.liked_by_me, raw.count),
        (true, 2),
        "the reader's cache is stale"
    );
    let view = ana.refresh(POST).await.unwrap();
    assert!(view.liked, "the heart stays filled");
    assert_eq!(view.count, 3, "the count includes Ana's like");
    assert_eq!(view.line.to_string(), "Liked by you and 2 others");
    let views = ana.refresh_many(&[POST]).await.unwrap();
    assert_eq!((views[0].liked, views[0].count), (true, 3));

    reader.shutdown().await.unwrap();
    writer.stop().await;
}

#[tokio::test]
async fn after_a_confirmed_like_refresh_shows_it_with_a_long_cache() {
    let world = World::with(Config {
        cache_ttl: Duration::from_secs(60),
        ..test_config()
    })
    .await;
    world.setup(&[(ANA, "Ana"), (BEN, "Ben")], &[POST]).await;
    let ben = world.client(BEN);
    ben.refresh(POST).await.unwrap(); // the server caches the post
    let ana = world.client(ANA);
    ana.refresh(POST).await.unwrap();
    ana.set_liked(POST, true);
    settle(&ana).await;
    let view = ana.refresh(POST).await.unwrap();
    assert_eq!((view.liked, view.count, view.pending), (true, 1, false));
    // and a second device of Ana, which never tapped, reads her own row
    let laptop = world.client(ANA);
    assert!(laptop.refresh(POST).await.unwrap().liked);
    world.stop().await;
}

#[tokio::test]
async fn two_devices_of_one_user_converge_after_a_refresh() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    let phone = world.client(ANA);
    let laptop = world.client(ANA);
    phone.refresh(POST).await.unwrap();
    laptop.refresh(POST).await.unwrap();

    phone.set_liked(POST, true);
    settle(&phone).await;
    // the laptop still shows what it read
    assert!(!laptop.view(POST).unwrap().liked);
    let view = laptop.refresh(POST).await.unwrap();
    assert_eq!((view.liked, view.count), (true, 1));

    // unliked on the laptop: the phone catches up on its next read
    laptop.set_liked(POST, false);
    settle(&laptop).await;
    tokio::time::sleep(Duration::from_millis(60)).await; // past the cache
    let phone_view = phone.refresh(POST).await.unwrap();
    let laptop_view = laptop.view(POST).unwrap();
    assert_eq!((phone_view.liked, phone_view.count), (false, 0));
    assert_eq!(
        (phone_view.liked, phone_view.count),
        (laptop_view.liked, laptop_view.count)
    );
    assert_eq!(world.count(POST).await, 0);

    // both tap like at once: one row, count 1, both agree after a read
    phone.set_liked(POST, true);
    laptop.set_liked(POST, true);
    settle(&phone).await;
    settle(&laptop).await;
    assert_eq!(world.count(POST).await, 1);
    tokio::time::sleep(Duration::from_millis(60)).await;
    for device in [&phone, &laptop] {
        let view = device.refresh(POST).await.unwrap();
        assert_eq!((view.liked, view.count), (true, 1));
    }
    world.stop().await;
}

#[tokio::test]
async fn a_feed_page_is_one_read_per_hundred_posts() {
    let world = World::start().await;
    let posts: Vec<PostId> = (1..=150).map(post).collect();
    world.setup(&[(ANA, "Ana"), (BEN, "Ben")], &posts).await;
    world.server.set_friends(ANA, &[BEN]).await.unwrap();
    for liked in [3, 7, 120].map(post) {
        likekit_core::Transport::send(&world.transport(BEN), liked, Action::Like)
            .await
            .unwrap();
    }
    let ana = world.client(ANA);
    let mut feed = posts.clone();
    feed.push(post(9_999)); // not a post: left out
    let views = ana.refresh_many(&feed).await.unwrap();
    assert_eq!(views.len(), 150);
    assert_eq!(world.requests("batch").await, 2);
    assert_eq!(world.requests("likes").await, 0);
    for view in &views {
        let liked_by_ben = [3, 7, 120].map(post).contains(&view.post_id);
        assert_eq!(view.count, u64::from(liked_by_ben), "post {}", view.post_id);
        if liked_by_ben {
            assert_eq!(view.line.to_string(), "Liked by Ben");
        }
    }
    assert!(ana.view(post(9_999)).is_none());
    world.stop().await;
}
