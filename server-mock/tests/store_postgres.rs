//! The shared store suite against the PostgreSQL backend, on a throwaway
//! cluster this binary starts itself (see `postgres_cluster`), plus what only
//! PostgreSQL has: migrations, connection errors, large seeds, the HTTP seed
//! table and concurrency run against a PostgreSQL-backed server, and the
//! benchmark's naive view and `bench seed`/`bench audit` on PostgreSQL.
//!
//! Without PostgreSQL's server programs these tests fail, saying how to
//! install them (`cargo xtask doctor --install postgresql`).

#![allow(clippy::unwrap_used)]

mod common;
mod postgres_cluster;

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use likekit_server::{
    Config, Database,
    store::{POSTGRES_MIGRATIONS, PostgresOptions, PostgresStore, Store, StoreError, suite},
    wire::{
        LikeState, PostLikes,
        admin::{Seed, SeedPost, SeedUser},
    },
};
use postgres_cluster::{Cluster, find_bin_in, fresh_database, fresh_store};

mod suite_cases {
    use super::*;

    likekit_server::store_suite!(async { fresh_store().await });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_run_once_even_when_servers_start_together() {
    let url = fresh_database().await;
    // Two servers migrating the same empty database at the same time.
    let (a, b) = tokio::join!(
        postgres_cluster::connect(&url),
        postgres_cluster::connect(&url)
    );
    let latest = POSTGRES_MIGRATIONS.last().unwrap().0;
    assert_eq!(a.schema_version().await.unwrap(), latest);
    a.put_post(1).await.unwrap();
    b.like(7, 1).await.unwrap();
    a.close().await.unwrap();
    b.close().await.unwrap();
    drop((a, b));

    // A restart keeps the data and applies nothing again.
    let again = postgres_cluster::connect(&url).await;
    assert_eq!(again.schema_version().await.unwrap(), latest);
    assert_eq!(again.liked(7, &[1]).await.unwrap(), [true]);
    let audit = suite::assert_exact(&again).await;
    assert_eq!((audit.len(), audit[0].count), (1, 1));
}

#[tokio::test]
async fn an_unreachable_server_is_a_clear_error_without_the_password() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("postgres://ana:s3cret@127.0.0.1:{port}/likes");
    let err = PostgresStore::connect(PostgresOptions::new(url))
        .await
        .unwrap_err();
    let StoreError::Backend(message) = err else {
        panic!("expected a backend error, got {err:?}");
    };
    assert!(message.contains("127.0.0.1"), "{message}");
    assert!(!message.contains("s3cret"), "{message}");
    assert!(
        PostgresStore::connect(PostgresOptions::new("postgres://[bad"))
            .await
            .is_err()
    );
}

#[test]
fn missing_postgresql_says_how_to_install_it() {
    let empty = tempfile::tempdir().unwrap();
    let err = find_bin_in(&[empty.path().to_path_buf()]).unwrap_err();
    assert!(
        err.contains("cargo xtask doctor --install postgresql"),
        "{err}"
    );
    assert!(err.contains(&empty.path().display().to_string()), "{err}");
    // A folder with both programs is found.
    assert!(postgres_cluster::find_bin().is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_cluster_is_stopped_and_deleted() {
    let cluster = tokio::task::spawn_blocking(|| Cluster::start().unwrap())
        .await
        .unwrap();
    let (dir, port) = (cluster.dir.clone(), cluster.port);
    let url = cluster.create_database().await;
    let store = postgres_cluster::connect(&url).await;
    store.put_post(1).await.unwrap();
    drop(store);
    assert!(dir.join("data").is_dir());

    tokio::task::spawn_blocking(move || drop(cluster))
        .await
        .unwrap();
    assert!(!dir.exists(), "{} is left behind", dir.display());
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the server still listens on {port}"
    );
}

/// A server on a fresh PostgreSQL database, with the usual test settings.
async fn http_server() -> common::TestServer {
    common::TestServer::with(Config {
        database: Database::Postgres(fresh_database().await),
        db_connections: 8,
        ..common::test_config()
    })
    .await
}

fn state(count: u64, liked_by_me: bool, version: u64) -> LikeState {
    LikeState {
        count,
        liked_by_me,
        version,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_seed_table_on_postgres() {
    let t = http_server().await;
    t.setup(&[(7, "Ana"), (8, "Ben")], &[42]).await;
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
        let got: LikeState = common::ok_json(response).await;
        assert_eq!(got, expected, "{step}");
        let audit = t.server.store().audit().await.unwrap();
        assert_eq!(audit[0].count, audit[0].rows, "{step}: count == rows");
        assert_eq!(audit[0].count, expected.count, "{step}: stored count");
    }
    let view: likekit_server::wire::PostLikes = common::ok_json(t.view(8, 42).await).await;
    assert_eq!((view.count, view.liked_by_me, view.version), (1, false, 3));
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn http_random_likes_with_duplicates_stay_exact_on_postgres() {
    const POSTS: u64 = 3;
    const TASKS: u64 = 12;
    const USERS_PER_TASK: u64 = 4;
    const OPS_PER_TASK: usize = 30;
    let t = Arc::new(http_server().await);
    t.setup(&[], &(1..=POSTS).collect::<Vec<_>>()).await;
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let t = t.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = fastrand::Rng::with_seed(task + 500);
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
                    common::ok_json::<LikeState>(response).await
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
            tally.get(&post.post).copied().unwrap_or(0),
            "post {}: count == tally",
            post.post
        );
    }
    Arc::into_inner(t).unwrap().stop().await;
}

/// `likekit-server bench …` as a child process.
fn bench_command(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_likekit-server"))
        .arg("bench")
        .args(args)
        .env_remove("LIKEKIT_TOKEN_SECRET")
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_naive_view_agrees_with_the_cached_one_on_postgres() {
    let url = fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let out = bench_command(&[
        "seed",
        "--dir",
        dir.path().to_str().unwrap(),
        "--db",
        &url,
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
    assert!(dir.path().join("views.txt").is_file());

    let config = |naive_views| Config {
        database: Database::Postgres(url.clone()),
        db_connections: 4,
        naive_views,
        ..common::test_config()
    };
    let real = common::TestServer::with(config(false)).await;
    let naive = common::TestServer::with(config(true)).await;
    for viewer in [1, 7, 40] {
        for post in [1, 2, 15, 30] {
            let a: PostLikes = common::ok_json(real.view(viewer, post).await).await;
            let b: PostLikes = common::ok_json(naive.view(viewer, post).await).await;
            assert_eq!(
                (a.count, a.liked_by_me, a.version),
                (b.count, b.liked_by_me, b.version),
                "viewer {viewer}, post {post}"
            );
            // Fewer than 100 likers per post: both list every friend who
            // liked it (the naive view in no particular order).
            let a: BTreeSet<_> = a.friends.into_iter().collect();
            let b: BTreeSet<_> = b.friends.into_iter().collect();
            assert_eq!(a, b, "viewer {viewer}, post {post}");
        }
    }
    // A like shows in the naive view at once (nothing is cached).
    let before: PostLikes = common::ok_json(naive.view(3, 30).await).await;
    let response = if before.liked_by_me {
        naive.unlike(3, 30).await
    } else {
        naive.like(3, 30).await
    };
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    let after: PostLikes = common::ok_json(naive.view(3, 30).await).await;
    assert_eq!(after.liked_by_me, !before.liked_by_me);
    assert_eq!(after.version, before.version + 1);
    assert_eq!(
        naive.view(3, 31).await.status(),
        reqwest::StatusCode::NOT_FOUND
    );
    real.stop().await;
    naive.stop().await;

    let out = bench_command(&["audit", "--db", &url]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("exact: yes (30 posts"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_seed_keeps_the_friends_keys() {
    // 260 users × 200 friends: past the size where the seed adds the
    // foreign keys back after the insert instead of checking every row.
    const USERS: u64 = 260;
    const FRIENDS: u64 = 200;
    let url = fresh_database().await;
    let store = postgres_cluster::connect(&url).await;
    let users: Vec<SeedUser> = (1..=USERS)
        .map(|id| SeedUser {
            id,
            name: format!("User {id}"),
            friends: (1..=FRIENDS).map(|k| (id + k - 1) % USERS + 1).collect(),
        })
        .collect();
    let mut broken = Seed {
        users: users.clone(),
        posts: vec![SeedPost {
            id: 1,
            likers: vec![1, 2],
        }],
    };
    broken.users[100].friends[7] = 999;
    assert_eq!(
        store.seed(&broken).await,
        Err(StoreError::UserNotFound(999))
    );
    assert!(store.friends(1).await.unwrap().is_empty(), "nothing kept");

    let seed = Seed {
        users,
        posts: broken.posts.clone(),
    };
    store.seed(&seed).await.unwrap();
    store.seed(&seed).await.unwrap();
    assert_eq!(store.friends(5).await.unwrap().len() as u64, FRIENDS);
    assert_eq!(
        store.set_friends(5, &[6, 1000]).await,
        Err(StoreError::UserNotFound(1000))
    );
    suite::assert_exact(&store).await;

    // Both foreign keys are back and enforced.
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let connection = tokio::spawn(connection);
    let keys: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_constraint \
             WHERE conrelid = 'friends'::regclass AND contype = 'f'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(keys, 2);
    let refused = client
        .execute("INSERT INTO friends VALUES (1, 5000)", &[])
        .await
        .unwrap_err();
    assert_eq!(
        refused.code(),
        Some(&tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION)
    );
    drop(client);
    let _ = connection.await;
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_view_reads_are_batched_and_exact() {
    let store = Arc::new(fresh_store().await);
    let likes = |user: u64, post: u64| (user + post) % 3 == 0;
    for post in 1..=20 {
        store.put_post(post).await.unwrap();
    }
    for user in 1..=30 {
        for post in 1..=20 {
            if likes(user, post) {
                store.like(user, post).await.unwrap();
            }
        }
    }
    // Many one-post lookups at once: they go out in shared statements and
    // each gets its own answer.
    let mut tasks = Vec::new();
    for user in 1..=30 {
        for post in 1..=21 {
            let store = store.clone();
            tasks.push(tokio::spawn(async move {
                (user, post, store.liked(user, &[post]).await.unwrap())
            }));
        }
    }
    for task in tasks {
        let (user, post, liked) = task.await.unwrap();
        assert_eq!(liked, [post <= 20 && likes(user, post)], "{user} {post}");
    }
    // Post reads too, the same post many times in one batch among others.
    let mut tasks = Vec::new();
    for round in 0..10 {
        for post in 1..=21 {
            let store = store.clone();
            tasks.push(tokio::spawn(async move {
                (round, post, store.post(post).await.unwrap())
            }));
        }
    }
    for task in tasks {
        let (round, post, snapshot) = task.await.unwrap();
        if post > 20 {
            assert_eq!(snapshot, None, "round {round}");
            continue;
        }
        let snapshot = snapshot.unwrap();
        let likers: Vec<u64> = (1..=30).rev().filter(|&u| likes(u, post)).collect();
        assert_eq!(
            (snapshot.count, snapshot.version),
            (likers.len() as u64, likers.len() as u64),
            "round {round}, post {post}"
        );
        assert_eq!(snapshot.recent_likers, likers, "newest first");
    }
    // Read-your-writes under the same concurrency.
    let mut tasks = Vec::new();
    for user in 31..=50 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            for post in 1..=4 {
                store.like(user, post).await.unwrap();
                assert_eq!(store.liked(user, &[post]).await.unwrap(), [true]);
                store.unlike(user, post).await.unwrap();
                assert_eq!(store.liked(user, &[post]).await.unwrap(), [false]);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(store.liked(3, &[u64::MAX]).await.unwrap(), [false]);
    assert_eq!(store.liked(u64::MAX, &[3]).await.unwrap(), [false]);
    suite::assert_exact(store.as_ref()).await;
}
