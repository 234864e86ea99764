//! Many clients like and unlike the same few posts at random, every request
//! delivered twice at once; afterwards each count equals its rows and an
//! independent tally, and the answers never contradict each other (the run
//! itself is `common::http_random_likes_with_duplicates`, shared with the
//! PostgreSQL and Citus tests).

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use crate::common::{self, RandomLikes, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn random_likes_with_duplicate_deliveries_stay_exact() {
    let t = Arc::new(TestServer::start().await);
    common::http_random_likes_with_duplicates(
        t.clone(),
        RandomLikes {
            posts: 3,
            tasks: 16,
            users_per_task: 4,
            ops_per_task: 40,
            rng_base: 100,
        },
    )
    .await;
    Arc::into_inner(t).unwrap().stop().await;
}
