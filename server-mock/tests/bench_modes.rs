//! The benchmark support: `bench seed`, `bench tokens` and `bench audit`
//! through the binary, the naive view agreeing with the real one, and the
//! bare routes.

#![allow(clippy::unwrap_used)]

mod common;

use std::{collections::BTreeSet, process::Command, time::Duration};

use common::{TestServer, ok_json, test_config};
use likekit_server::{Config, Database, Tokens, wire::PostLikes};
use reqwest::StatusCode;

const BIN: &str = env!("CARGO_BIN_EXE_likekit-server");

fn bench(args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("bench")
        .args(args)
        .env_remove("LIKEKIT_TOKEN_SECRET")
        .output()
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
    let config = |naive_views| Config {
        database: Database::File(db.clone()),
        naive_views,
        ..test_config()
    };
    let real = TestServer::with(config(false)).await;
    let naive = TestServer::with(config(true)).await;
    for viewer in [1, 7, 40] {
        for post in [1, 2, 15, 30] {
            let a: PostLikes = ok_json(real.view(viewer, post).await).await;
            let b: PostLikes = ok_json(naive.view(viewer, post).await).await;
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
    // A like shows in the naive view at once (nothing is cached).
    let before: PostLikes = ok_json(naive.view(3, 30).await).await;
    let liked = if before.liked_by_me {
        naive.unlike(3, 30).await
    } else {
        naive.like(3, 30).await
    };
    assert_eq!(liked.status(), StatusCode::OK);
    let after: PostLikes = ok_json(naive.view(3, 30).await).await;
    assert_eq!(after.liked_by_me, !before.liked_by_me);
    assert_eq!(after.version, before.version + 1);
    assert_eq!(
        naive.view(3, 31).await.status(),
        StatusCode::NOT_FOUND,
        "unknown posts are 404 as usual"
    );
    real.stop().await;
    naive.stop().await;

    let out = bench(&["audit", "--db", db.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("exact: yes (30 posts"));
}

#[tokio::test]
async fn naive_views_need_a_database_file_or_a_postgres_url() {
    // The test configuration's database is `:memory:`: the naive baseline
    // opens its own connections, so it refuses it with a clear error.
    let error = likekit_server::spawn(Config {
        naive_views: true,
        ..test_config()
    })
    .await
    .expect_err("refused on :memory:");
    assert!(
        error
            .to_string()
            .contains("needs a SQLite database file or a PostgreSQL URL"),
        "{error}"
    );
}

#[test]
fn tokens_are_minted_in_bulk() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("tokens.txt");
    let out = Command::new(BIN)
        .args(["bench", "tokens", "--users", "5", "--out"])
        .arg(&out_file)
        .env("LIKEKIT_TOKEN_SECRET", "s3cret")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let tokens = Tokens::new(b"s3cret").unwrap();
    let text = std::fs::read_to_string(out_file).unwrap();
    let users: Vec<_> = text.lines().map(|t| tokens.verify(t).unwrap()).collect();
    assert_eq!(users, [1, 2, 3, 4, 5]);
}

#[test]
fn bad_seed_sizes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_str().unwrap();
    for args in [
        [
            "--posts",
            "2",
            "--likes",
            "7",
            "--users",
            "3",
            "--friends",
            "1",
        ],
        [
            "--posts",
            "2",
            "--likes",
            "1",
            "--users",
            "3",
            "--friends",
            "3",
        ],
    ] {
        let mut all = vec!["seed", "--dir", dir];
        all.extend(args);
        assert!(!bench(&all).status.success(), "{args:?}");
    }
    let out = bench(&["audit", "--db", "/no/such/file.db"]);
    assert!(!out.status.success());
}

#[tokio::test]
async fn the_bare_routes_answer_a_fixed_body() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, likekit_server::bench::bare_router())
            .await
            .unwrap();
    });
    let http = common::client();
    let view: PostLikes = ok_json(
        http.get(format!("http://{addr}/posts/42/likes"))
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(view.count, 1204);
    for method in [reqwest::Method::POST, reqwest::Method::DELETE] {
        let response = http
            .request(method, format!("http://{addr}/posts/7/like"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
}
