//! Many clients like and unlike the same few posts at random, every request
//! delivered twice at once; afterwards each count equals its rows and an
//! independent tally, and the answers never contradict each other.

#![allow(clippy::unwrap_used)]

mod common;

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use common::{TestServer, eventually, ok_json};
use likekit_server::wire::{LikeState, PostLikes};

const POSTS: u64 = 3;
const TASKS: u64 = 16;
const USERS_PER_TASK: u64 = 4;
const OPS_PER_TASK: usize = 40;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn random_likes_with_duplicate_deliveries_stay_exact() {
    let t = Arc::new(TestServer::start().await);
    t.setup(&[], &(1..=POSTS).collect::<Vec<_>>()).await;

    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let t = t.clone();
        tasks.push(tokio::spawn(async move {
            // Each user belongs to one task, so the task knows each user's
            // final state; the server sees all users at once.
            let mut rng = fastrand::Rng::with_seed(task + 100);
            let mut wants: BTreeMap<(u64, u64), bool> = BTreeMap::new();
            for _ in 0..OPS_PER_TASK {
                let user = 1 + task * USERS_PER_TASK + rng.u64(0..USERS_PER_TASK);
                let post = rng.u64(1..=POSTS);
                let like = rng.bool();
                let send = || async {
                    let response = if like {
                        t.like(user, post).await
                    } else {
                        t.unlike(user, post).await
                    };
                    ok_json::<LikeState>(response).await
                };
                let (a, b) = tokio::join!(send(), send());
                assert_eq!((a.liked_by_me, b.liked_by_me), (like, like));
                wants.insert((user, post), like);
            }
            wants
        }));
    }
    let mut tally: BTreeMap<u64, u64> = BTreeMap::new();
    for task in tasks {
        for ((_, post), liked) in task.await.unwrap() {
            *tally.entry(post).or_default() += u64::from(liked);
        }
    }

    let audit = t.server.store().audit().await.unwrap();
    assert_eq!(audit.len() as u64, POSTS);
    for post in &audit {
        assert_eq!(post.count, post.rows, "post {}: count == rows", post.post);
        assert_eq!(
            post.count,
            tally.get(&post.post.get()).copied().unwrap_or(0),
            "post {}: count == tally",
            post.post
        );
    }
    // And the API agrees (the cache catches up within its TTL).
    for post in &audit {
        eventually(
            Duration::from_secs(5),
            "views to show the final count",
            || async {
                let view: PostLikes = ok_json(t.view(999, post.post.get()).await).await;
                (view.count == post.count && view.version == post.version).then_some(())
            },
        )
        .await;
    }
    Arc::into_inner(t).unwrap().stop().await;
}
