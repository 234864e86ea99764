//! Durability: kill -9 the real server in the middle of a write load,
//! restart it on the same file, and find every acknowledged like.

#![allow(clippy::unwrap_used)]

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use crate::common::{ServerProcess, client, eventually};
use likekit_server::{
    Database, Tokens,
    store::{SqliteOptions, SqliteStore, Store},
    wire::{LikeState, PostLikes},
};
use likekit_testing::suite::{self, u};
use serde_json::json;

const SECRET: &str = "crash-test-secret";
const ADMIN: &str = "crash-test-admin";
const POSTS: u64 = 4;
const WORKERS: u64 = 8;

fn args(db: &str) -> Vec<String> {
    [
        "--db",
        db,
        "--admin-key",
        ADMIN,
        "--token-secret",
        SECRET,
        "--write-rate-limit",
        "0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn start(db: &str, log: &std::path::Path) -> ServerProcess {
    let args = args(db);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ServerProcess::start(&args, log)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acknowledged_likes_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("likes.db");
    let db_arg = db.to_str().unwrap().to_string();
    let http = client();
    let tokens = Tokens::new(SECRET.as_bytes()).unwrap();

    let server = start(&db_arg, &dir.path().join("first.log"));
    for post in 1..=POSTS {
        let r = http
            .post(server.url("/admin/posts"))
            .header("X-Admin-Key", ADMIN)
            .json(&json!({ "id": post }))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
    }

    // Writers like distinct (user, post) pairs until the server dies.
    let acknowledged: Arc<Mutex<Vec<(u64, u64, u64)>>> = Arc::default();
    let mut workers = Vec::new();
    for worker in 0..WORKERS {
        let (http, tokens, acknowledged) = (http.clone(), tokens.clone(), acknowledged.clone());
        let url = server.base_url.clone();
        workers.push(tokio::spawn(async move {
            for i in 0.. {
                let user = worker * 1_000_000 + i + 1;
                let post = i % POSTS + 1;
                let sent = http
                    .post(format!("{url}/posts/{post}/like"))
                    .bearer_auth(tokens.mint(u(user), Duration::from_secs(600)))
                    .send()
                    .await;
                let Ok(response) = sent else { break };
                let Ok(state) = response.json::<LikeState>().await else {
                    break;
                };
                acknowledged.lock().unwrap().push((user, post, state.count));
            }
        }));
    }
    eventually(
        Duration::from_secs(120),
        "a few hundred acknowledged likes",
        || {
            let n = acknowledged.lock().unwrap().len();
            async move { (n >= 300).then_some(()) }
        },
    )
    .await;
    server.kill(); // SIGKILL, mid-load
    for worker in workers {
        worker.await.unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();

    // Restart on the same file: every acknowledged like is there.
    let server = start(&db_arg, &dir.path().join("second.log"));
    for (user, post, _) in &acknowledged {
        let r = http
            .get(server.url(&format!("/posts/{post}/likes")))
            .bearer_auth(tokens.mint(u(*user), Duration::from_secs(600)))
            .send()
            .await
            .unwrap();
        let view: PostLikes = r.json().await.unwrap();
        assert!(
            view.liked_by_me,
            "user {user}'s acknowledged like of post {post} was lost"
        );
    }
    let status = server.terminate();
    assert!(status.success(), "graceful exit: {status:?}");

    // And the books balance: count == rows, and no count is lower than an
    // answer the server gave before the crash.
    let store = SqliteStore::open(SqliteOptions {
        database: Database::File(db),
        ..SqliteOptions::default()
    })
    .unwrap();
    let audit = suite::assert_exact(&store).await;
    let mut highest: BTreeMap<u64, u64> = BTreeMap::new();
    for (_, post, count) in &acknowledged {
        let entry = highest.entry(*post).or_default();
        *entry = (*entry).max(*count);
    }
    for post in audit {
        assert!(
            post.count >= highest.get(&post.post.get()).copied().unwrap_or(0),
            "post {}: count {} is below an acknowledged count",
            post.post,
            post.count
        );
    }
    store.close().await.unwrap();
}
