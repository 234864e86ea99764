//! The shared store suite against the PostgreSQL backend, on a throwaway
//! cluster this binary starts itself (see `postgres_cluster`), plus what only
//! PostgreSQL has: migrations, connection errors, and the HTTP seed table and
//! concurrency run against a PostgreSQL-backed server.
//!
//! Without PostgreSQL's server programs these tests fail, saying how to
//! install them (`cargo xtask doctor --install postgresql`).

#![allow(clippy::unwrap_used)]

mod common;
mod postgres_cluster;

use std::{collections::BTreeMap, sync::Arc};

use likekit_server::{
    Config, Database,
    store::{POSTGRES_MIGRATIONS, PostgresOptions, PostgresStore, Store, StoreError, suite},
    wire::LikeState,
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
