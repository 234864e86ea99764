//! The bench's parts through its binary and in process: `seed`, `tokens`
//! and `audit`, the naive baseline agreeing with the real server's view on
//! the same database, and the bare routes.

#![allow(clippy::unwrap_used)]

use std::{collections::BTreeSet, process::Command, time::Duration};

use likekit_bench::{naive, serve};
use likekit_server::{
    Config, Database, Tokens,
    wire::{PostLikes, UserId},
};
use reqwest::StatusCode;

const BIN: &str = env!("CARGO_BIN_EXE_likekit-bench");
const SECRET: &str = "bench-test-secret";

fn bench(args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .env_remove("LIKEKIT_TOKEN_SECRET")
        .output()
        .unwrap()
}

/// Serves `router` on a free loopback port in this test's runtime; abort
/// the task to stop it.
async fn serve_here(router: axum::Router) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (format!("http://{addr}"), task)
}

async fn view(http: &reqwest::Client, base: &str, token: &str, post: u64) -> reqwest::Response {
    http.get(format!("{base}/posts/{post}/likes"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_naive_view_agrees_with_the_cached_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = bench(&[
        "seed",
        "--dir",
        dir.path().to_str().unwrap(),
        "--posts",
        "30",
        "--likes",
        "400",
        "--users",
        "40",
        "--friends",
        "12",
    ]);
    assert!(out.status.success(), "{out:?}");
    let seed_txt = std::fs::read_to_string(dir.path().join("seed.txt")).unwrap();
    assert!(seed_txt.contains("posts=30 likes=400 users=40 friends=12"));
    let views = std::fs::read_to_string(dir.path().join("views.txt")).unwrap();
    assert_eq!(views.lines().count(), 1 << 16);

    let db = dir.path().join("likekit.db");
    let database = Database::File(db.clone());
    let real = likekit_server::spawn(Config {
        database: database.clone(),
        token_secret: Some(SECRET.into()),
        write_rate_limit: None,
        cache_ttl: Duration::from_millis(200),
        ..Config::default()
    })
    .await
    .unwrap();
    let tokens = Tokens::new(SECRET.as_bytes()).unwrap();
    let views = naive::NaiveViews::open(&database, 2).unwrap();
    let (naive_url, naive_task) = serve_here(naive::router(views, tokens.clone())).await;
    let token = |user: u64| tokens.mint(UserId::new(user).unwrap(), Duration::from_secs(600));
    let http = reqwest::Client::builder().no_proxy().build().unwrap();

    for viewer in [1, 7, 40] {
        for post in [1, 2, 15, 30] {
            let a: PostLikes = view(&http, &real.base_url(), &token(viewer), post)
                .await
                .json()
                .await
                .unwrap();
            let b: PostLikes = view(&http, &naive_url, &token(viewer), post)
                .await
                .json()
                .await
                .unwrap();
            assert_eq!(
                (a.count, a.liked_by_me, a.version),
                (b.count, b.liked_by_me, b.version),
                "viewer {viewer}, post {post}"
            );
            // Every post has fewer than 100 likers here, so both list every
            // friend who liked it (the naive view in no particular order).
            let a: BTreeSet<_> = a.friends.into_iter().collect();
            let b: BTreeSet<_> = b.friends.into_iter().collect();
            assert_eq!(a, b, "viewer {viewer}, post {post}");
        }
    }
    // A like through the real server shows in the naive view at once
    // (nothing is cached there).
    let before: PostLikes = view(&http, &naive_url, &token(3), 30)
        .await
        .json()
        .await
        .unwrap();
    let method = if before.liked_by_me {
        reqwest::Method::DELETE
    } else {
        reqwest::Method::POST
    };
    let liked = http
        .request(method, format!("{}/posts/30/like", real.base_url()))
        .bearer_auth(token(3))
        .send()
        .await
        .unwrap();
    assert_eq!(liked.status(), StatusCode::OK);
    let after: PostLikes = view(&http, &naive_url, &token(3), 30)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(after.liked_by_me, !before.liked_by_me);
    assert_eq!(after.version, before.version + 1);
    assert_eq!(
        view(&http, &naive_url, &token(3), 31).await.status(),
        StatusCode::NOT_FOUND
    );
    let anonymous = http
        .get(format!("{naive_url}/posts/30/likes"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    real.shutdown().await.unwrap();
    // The store's audit opens the file for itself: close the naive readers.
    naive_task.abort();
    assert!(naive_task.await.unwrap_err().is_cancelled());

    let out = bench(&["audit", "--db", db.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("exact: yes (30 posts"));
}

#[test]
fn the_naive_baseline_needs_a_database_file_or_a_postgres_url() {
    let error = naive::NaiveViews::open(&Database::Memory, 2).expect_err("refused on :memory:");
    assert!(
        error.contains("needs a SQLite database file or a PostgreSQL URL"),
        "{error}"
    );
}

#[test]
fn tokens_are_minted_in_bulk() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("tokens.txt");
    let out = Command::new(BIN)
        .args(["tokens", "--users", "5", "--out"])
        .arg(&out_file)
        .env("LIKEKIT_TOKEN_SECRET", "s3cret")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let tokens = Tokens::new(b"s3cret").unwrap();
    let text = std::fs::read_to_string(out_file).unwrap();
    let users: Vec<u64> = text
        .lines()
        .map(|t| tokens.verify(t).unwrap().get())
        .collect();
    assert_eq!(users, [1, 2, 3, 4, 5]);
}

#[test]
fn bad_seed_sizes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_str().unwrap();
    for sizes in [["2", "7", "3", "1"], ["2", "1", "3", "3"]] {
        let [posts, likes, users, friends] = sizes;
        let args = [
            "seed",
            "--dir",
            dir,
            "--posts",
            posts,
            "--likes",
            likes,
            "--users",
            users,
            "--friends",
            friends,
        ];
        assert!(!bench(&args).status.success(), "{sizes:?}");
    }
    assert!(
        !bench(&["audit", "--db", "/no/such/file.db"])
            .status
            .success()
    );
}

#[tokio::test]
async fn the_bare_routes_answer_a_fixed_body() {
    let (base, _task) = serve_here(serve::bare_router()).await;
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let view: PostLikes = http
        .get(format!("{base}/posts/42/likes"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(view.count, 1204);
    for method in [reqwest::Method::POST, reqwest::Method::DELETE] {
        let response = http
            .request(method, format!("{base}/posts/7/like"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
}
