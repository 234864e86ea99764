//! The seed table against the real server, over HTTP: retries and stray
//! unlikes never move the count.

#![allow(clippy::unwrap_used)]

mod common;

use common::{TestServer, ok_json, test_config};
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
    t.setup(&[(7, "Ana"), (8, "Ben")], &[42]).await;

    // (step, user, like?, expected answer)
    let table: [(&str, u64, bool, LikeState); 6] = [
        ("first like", 7, true, state(1, true, 1)),
        ("same like retried", 7, true, state(1, true, 1)),
        ("unlike", 7, false, state(0, false, 2)),
        ("unlike retried", 7, false, state(0, false, 2)),
        (
            "unlike by someone who never liked",
            8,
            false,
            state(0, false, 2),
        ),
        ("like again later", 7, true, state(1, true, 3)),
    ];
    for (step, user, like, expected) in table {
        let response = if like {
            t.like(user, 42).await
        } else {
            t.unlike(user, 42).await
        };
        let got: LikeState = ok_json(response).await;
        assert_eq!(got, expected, "{step}");
        let audit = t.server.store().audit().await.unwrap();
        assert_eq!(audit[0].count, audit[0].rows, "{step}: count == rows");
        assert_eq!(audit[0].count, expected.count, "{step}: stored count");
    }
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
