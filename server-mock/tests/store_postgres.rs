//! The shared store suite (`likekit_testing::suite`) against the PostgreSQL
//! backend, on a throwaway cluster this binary starts itself
//! (`likekit_testing::postgres`), plus what only PostgreSQL has:
//! migrations, connection errors, large seeds, batched view reads, and the
//! HTTP seed table and concurrency run against a PostgreSQL-backed server.
//!
//! Without PostgreSQL's server programs these tests fail, saying how to
//! install them (`cargo xtask doctor --install postgresql`).

#![allow(clippy::unwrap_used)]

mod common;

use std::{
    collections::BTreeMap,
    sync::{Arc, OnceLock},
};

use likekit_server::{
    Config, Database,
    store::{
        HotPostOptions, POSTGRES_MIGRATIONS, PostgresOptions, PostgresStore, Store, StoreError,
    },
    wire::{
        LikeState, PostId, UserId,
        admin::{Seed, SeedPost, SeedUser},
    },
};
use likekit_testing::{
    postgres::{Cluster, ClusterOptions},
    suite::{self, p, posts, u},
};

/// The cluster every test of this binary shares, started on first use (its
/// guard stops and deletes it when the binary ends, however it ends).
/// Panics, failing the test, with what to do when PostgreSQL is missing.
fn shared() -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    CLUSTER.get_or_init(|| {
        Cluster::start(ClusterOptions::default())
            .unwrap_or_else(|e| panic!("cannot start a PostgreSQL test cluster: {e}"))
    })
}

/// A fresh, empty database on the shared cluster.
async fn fresh_database() -> String {
    tokio::task::spawn_blocking(|| shared().create_database())
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
        .unwrap_or_else(|e| panic!("create a test database: {e}"))
}

/// A store on `url` with a small pool and the default hot-post settings.
async fn connect(url: &str) -> PostgresStore {
    PostgresStore::connect(PostgresOptions {
        url: url.to_owned(),
        connections: 8,
        hot_posts: HotPostOptions::default(),
    })
    .await
    .unwrap_or_else(|e| panic!("connect a store to {url}: {e}"))
}

/// A store on a fresh database of the shared cluster.
async fn fresh_store() -> PostgresStore {
    connect(&fresh_database().await).await
}

mod suite_cases {
    use super::*;

    likekit_testing::store_suite!(async { fresh_store().await });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_run_once_even_when_servers_start_together() {
    let url = fresh_database().await;
    // Two servers migrating the same empty database at the same time.
    let (a, b) = tokio::join!(connect(&url), connect(&url));
    let latest = POSTGRES_MIGRATIONS.last().unwrap().0;
    assert_eq!(a.schema_version().await.unwrap(), latest);
    a.put_post(p(1)).await.unwrap();
    b.like(u(7), p(1)).await.unwrap();
    a.close().await.unwrap();
    b.close().await.unwrap();
    drop((a, b));

    // A restart keeps the data and applies nothing again.
    let again = connect(&url).await;
    assert_eq!(again.schema_version().await.unwrap(), latest);
    assert_eq!(again.liked(u(7), &posts([1])).await.unwrap(), [true]);
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
            tally.get(&post.post.get()).copied().unwrap_or(0),
            "post {}: count == tally",
            post.post
        );
    }
    Arc::into_inner(t).unwrap().stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_seed_keeps_the_friends_keys() {
    // 260 users × 200 friends: past the size where the seed adds the
    // foreign keys back after the insert instead of checking every row.
    const USERS: u64 = 260;
    const FRIENDS: u64 = 200;
    let url = fresh_database().await;
    let store = connect(&url).await;
    let users: Vec<SeedUser> = (1..=USERS)
        .map(|id| SeedUser {
            id: u(id),
            name: format!("User {id}"),
            friends: (1..=FRIENDS).map(|k| u((id + k - 1) % USERS + 1)).collect(),
        })
        .collect();
    let mut broken = Seed {
        users: users.clone(),
        posts: vec![SeedPost {
            id: p(1),
            likers: vec![u(1), u(2)],
        }],
    };
    broken.users[100].friends[7] = u(999);
    assert_eq!(
        store.seed(&broken).await,
        Err(StoreError::UserNotFound(u(999)))
    );
    assert!(
        store.friends(u(1)).await.unwrap().is_empty(),
        "nothing kept"
    );

    let seed = Seed {
        users,
        posts: broken.posts.clone(),
    };
    store.seed(&seed).await.unwrap();
    store.seed(&seed).await.unwrap();
    assert_eq!(store.friends(u(5)).await.unwrap().len() as u64, FRIENDS);
    assert_eq!(
        store.set_friends(u(5), &[u(6), u(1000)]).await,
        Err(StoreError::UserNotFound(u(1000)))
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
        store.put_post(p(post)).await.unwrap();
    }
    for user in 1..=30 {
        for post in 1..=20 {
            if likes(user, post) {
                store.like(u(user), p(post)).await.unwrap();
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
                (
                    user,
                    post,
                    store.liked(u(user), &posts([post])).await.unwrap(),
                )
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
                (round, post, store.post(p(post)).await.unwrap())
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
        let likers: Vec<UserId> = (1..=30u64)
            .rev()
            .filter(|&user| likes(user, post))
            .map(u)
            .collect();
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
                store.like(u(user), p(post)).await.unwrap();
                assert_eq!(store.liked(u(user), &posts([post])).await.unwrap(), [true]);
                store.unlike(u(user), p(post)).await.unwrap();
                assert_eq!(store.liked(u(user), &posts([post])).await.unwrap(), [false]);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(store.liked(u(3), &[PostId::MAX]).await.unwrap(), [false]);
    assert_eq!(
        store.liked(UserId::MAX, &posts([3])).await.unwrap(),
        [false]
    );
    suite::assert_exact(store.as_ref()).await;
}
