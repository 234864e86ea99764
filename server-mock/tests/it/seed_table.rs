//! The seed table against the real server, over HTTP: retries and stray
//! unlikes never move the count.

#![allow(clippy::unwrap_used)]

use crate::common::{self, TestServer, ok_json, test_config};
use likekit_server::{
    Config,
    wire::{
        LikeState, PostLikes,
        admin::{Seed, SeedPost, SeedUser},
    },
};
use likekit_testing::suite::{p, u};

#[tokio::test]
async fn the_seed_table() {
    let t = TestServer::start().await;
    common::http_seed_table(&t).await;
    t.stop().await;
}

fn state(count: u64, liked_by_me: bool, version: u64) -> LikeState {
    LikeState {
        count,
        liked_by_me,
        version,
    }
}

#[tokio::test]
async fn a_seed_document_is_loaded_at_start() {
    let seed = Seed {
        users: vec![
            SeedUser {
                id: u(1),
                name: "Ana".into(),
                friends: vec![u(2)],
            },
            SeedUser {
                id: u(2),
                name: "Ben".into(),
                friends: vec![u(1)],
            },
        ],
        posts: vec![SeedPost {
            id: p(42),
            likers: vec![u(1), u(2)],
        }],
    };
    let t = TestServer::with(Config {
        seed: Some(seed),
        ..test_config()
    })
    .await;
    let view: PostLikes = ok_json(t.view(1, 42).await).await;
    assert_eq!(
        (view.count, view.liked_by_me, view.friends, view.version),
        (2, true, vec!["Ben".to_string()], 2)
    );
    // Seeded likes follow the same rules as any other.
    assert_eq!(
        ok_json::<LikeState>(t.like(2, 42).await).await,
        state(2, true, 2)
    );
    assert_eq!(
        ok_json::<LikeState>(t.unlike(2, 42).await).await,
        state(1, false, 3)
    );
    t.stop().await;
}
