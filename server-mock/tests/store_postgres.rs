//! The shared store suite (`likekit_testing::suite`) against the PostgreSQL
//! backend, on a throwaway cluster this binary starts itself
//! (`likekit_testing::postgres`) — once as plain PostgreSQL and once with
//! the one-post reads Citus gets (one statement per post) — plus what only
//! PostgreSQL has:
//! migrations, connection errors, large seeds, batched view reads, the
//! HTTP seed table and concurrency run against a PostgreSQL-backed server,
//! its connection pool on `/metrics`, and what the store does when the
//! database is busy or read-only: statement and lock timeouts answered
//! 503 with `Retry-After`, likes leaving a share of the pool to reads, a
//! read-only database not ready (and its log line naming the like that
//! met it), migrations that give way to a held lock,
//! and a close that does not wait for ever.
//!
//! Without PostgreSQL's server programs these tests fail, saying how to
//! install them (`cargo xtask doctor --install postgresql`).

#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, OnceLock};

use likekit_server::{
    Config, Database,
    store::{
        HotPostOptions, Layout, POSTGRES_MIGRATIONS, PostgresOptions, PostgresStore, Store,
        StoreError, hashint8,
    },
    wire::{
        PostId, UserId,
        admin::{Seed, SeedPost, SeedUser},
    },
};
use likekit_testing::{
    pgbouncer::{PgBouncer, PoolMode},
    postgres::{Cluster, ClusterOptions, Database as TestDatabase},
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

/// A fresh, empty database on the shared cluster, dropped with the guard.
async fn fresh_database() -> TestDatabase<'static> {
    tokio::task::spawn_blocking(|| shared().database())
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
        .unwrap_or_else(|e| panic!("create a test database: {e}"))
}

/// A store on `url` with a small pool, the default hot-post settings and
/// the given layout.
async fn connect_with(url: &str, layout: Layout) -> PostgresStore {
    PostgresStore::connect(PostgresOptions {
        url: url.to_owned(),
        connections: 8,
        hot_posts: HotPostOptions::default(),
        layout,
        direct_to_workers: true,
        ca_file: None,
    })
    .await
    .unwrap_or_else(|e| panic!("connect a store to {url}: {e}"))
}

/// A store on `url` as the server makes it (the layout found in the
/// database: plain).
async fn connect(url: &str) -> PostgresStore {
    connect_with(url, Layout::Auto).await
}

/// A store on a fresh database of the shared cluster, and the database's
/// guard (to drop after the store is closed).
async fn fresh_store(layout: Layout) -> (PostgresStore, TestDatabase<'static>) {
    let database = fresh_database().await;
    (connect_with(database.url(), layout).await, database)
}

/// Plain PostgreSQL, as the server finds it.
mod suite_cases {
    use super::*;

    likekit_testing::store_suite!(guarded async { fresh_store(Layout::Auto).await });
}

/// PgBouncer in session mode in front of the shared cluster, started on
/// first use (its guard stops it when the binary ends).
fn bouncer() -> &'static PgBouncer {
    static BOUNCER: OnceLock<PgBouncer> = OnceLock::new();
    BOUNCER.get_or_init(|| {
        PgBouncer::start(shared(), PoolMode::Session)
            .unwrap_or_else(|e| panic!("cannot start PgBouncer in front of the test cluster: {e}"))
    })
}

/// A fresh database of the shared cluster and its URL through PgBouncer.
async fn bouncer_database() -> (String, TestDatabase<'static>) {
    let database = fresh_database().await;
    let name = database.name().to_owned();
    let url = tokio::task::spawn_blocking(move || bouncer().url(&name))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    (url, database)
}

/// A store that reaches a fresh database through PgBouncer.
async fn bouncer_store() -> (PostgresStore, TestDatabase<'static>) {
    let (url, database) = bouncer_database().await;
    (connect(&url).await, database)
}

/// The store suite through PgBouncer in session mode, as a deployment
/// with a connection pooler runs it: PgBouncer refuses a startup packet's
/// `options`, so the session settings go as `SET` statements.
mod pgbouncer_suite_cases {
    use super::*;

    likekit_testing::store_suite!(guarded async { bouncer_store().await });
}

/// Through PgBouncer the serving connections still get their lock timeout
/// (2 s): a like behind a row lock held elsewhere is `Unavailable` (55P03),
/// having counted nothing, instead of waiting for as long as the lock is
/// held; once the lock is gone the like counts once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_pgbouncer_a_like_behind_a_lock_still_times_out() {
    let (url, database) = bouncer_database().await;
    let message = like_behind_a_row_lock(connect(&url).await, &database).await;
    assert!(message.contains("55P03"), "{message}");
}

/// Through PgBouncer the URL's `options` still set the timeouts (PgBouncer
/// refuses them in the startup packet; the store sets them once
/// connected): here a statement timeout of 1 s and no lock timeout, so a
/// like behind a held row lock ends as a canceled statement (57014).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_pgbouncer_the_url_options_set_the_timeouts() {
    let (url, database) = bouncer_database().await;
    let store = connect(&with_timeouts(&url, "1s", "0")).await;
    let message = like_behind_a_row_lock(store, &database).await;
    assert!(message.contains("57014"), "{message}");
}

/// PgBouncer in transaction mode hands a server connection to another
/// client between transactions, and with it the statements the store
/// prepared on it: the store does not support that mode, and its errors
/// say what to change (they are logged with each 500).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn through_pgbouncer_in_transaction_mode_the_error_names_session_mode() {
    let database = fresh_database().await;
    let name = database.name().to_owned();
    let bouncer = tokio::task::spawn_blocking(|| PgBouncer::start(shared(), PoolMode::Transaction))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("cannot start PgBouncer in transaction mode: {e}"));
    let store = Arc::new(connect(&bouncer.url(&name)).await);
    store.put_post(p(1)).await.unwrap();
    let mut errors = Vec::new();
    // Concurrent likes from the store's 8 connections over PgBouncer's
    // shared server connections: their prepared statements soon meet a
    // server connection that never saw them.
    for round in 0..20_u64 {
        let likes: Vec<_> = (0..32)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move { store.like(u(round * 32 + i + 1), p(1)).await })
            })
            .collect();
        for like in likes {
            if let Err(e) = like.await.unwrap() {
                errors.push(e.to_string());
            }
        }
        if !errors.is_empty() {
            break;
        }
    }
    assert!(
        !errors.is_empty(),
        "transaction mode lost no prepared statement"
    );
    for error in &errors {
        assert!(error.contains("26000"), "{error}");
        assert!(error.contains("pool_mode = session"), "{error}");
    }
    drop(store);
    drop(bouncer);
}

/// A second cluster, with TLS: its certificate, for `localhost` and
/// 127.0.0.1, signed by a CA made at test time (PEM in the returned file).
fn tls_cluster() -> &'static (Cluster, tempfile::TempDir) {
    static CLUSTER: OnceLock<(Cluster, tempfile::TempDir)> = OnceLock::new();
    CLUSTER.get_or_init(|| {
        let ca = likekit_testing::tls::TestCa::new().unwrap();
        let (certificate, key) = ca
            .server_certificate_pem(&["localhost", "127.0.0.1"])
            .unwrap();
        let files = tempfile::tempdir().unwrap();
        std::fs::write(files.path().join("ca.pem"), ca.pem()).unwrap();
        let other = likekit_testing::tls::TestCa::new().unwrap();
        std::fs::write(files.path().join("other-ca.pem"), other.pem()).unwrap();
        let cluster = Cluster::start(ClusterOptions::default().tls(certificate, key))
            .unwrap_or_else(|e| panic!("cannot start a PostgreSQL test cluster with TLS: {e}"));
        (cluster, files)
    })
}

/// A store on a fresh database of the TLS cluster, `sslmode=verify-full`
/// with the test CA.
async fn tls_store() -> (PostgresStore, TestDatabase<'static>) {
    let database = tokio::task::spawn_blocking(|| tls_cluster().0.database())
        .await
        .unwrap()
        .unwrap();
    let ca = tls_cluster().1.path().join("ca.pem");
    let url = format!(
        "{}?sslmode=verify-full&sslrootcert={}",
        database.url(),
        ca.display()
    );
    (connect_with(&url, Layout::Auto).await, database)
}

/// The store suite over TLS, the server's certificate checked.
mod tls_suite_cases {
    use super::*;

    likekit_testing::store_suite!(guarded async { tls_store().await });
}

/// How many of the store's connections are encrypted, of how many
/// (`"tls|all"`, PostgreSQL's own view), then closes the store.
async fn encrypted(cluster: &Cluster, database: &str, store: PostgresStore) -> String {
    let answer = cluster
        .psql(
            database,
            &["SELECT count(*) FILTER (WHERE ssl), count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE application_name = 'likekit-server'"],
        )
        .unwrap();
    store.close().await.unwrap();
    answer.trim().to_owned()
}

/// Every connection of a `verify-full` store is encrypted (PostgreSQL's
/// own view, `pg_stat_ssl`); a certificate from another CA is refused
/// with a clear error; `require` encrypts without a CA, and checks the
/// chain with one; a CA file without TLS is refused; `prefer` is
/// refused; without `sslmode` nothing is encrypted, as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_to_postgres_is_checked_as_sslmode_says() {
    let (cluster, files) = tls_cluster();
    let database = tokio::task::spawn_blocking(|| cluster.database())
        .await
        .unwrap()
        .unwrap();
    let url = database.url().to_owned();
    let with = |params: &str| format!("{url}?{params}");
    let ca = files.path().join("ca.pem");
    let full = connect(&with(&format!(
        "sslmode=verify-full&sslrootcert={}",
        ca.display()
    )))
    .await;
    full.put_post(p(1)).await.unwrap();
    let counts = encrypted(cluster, database.name(), full).await;
    let (tls, all) = counts.split_once('|').unwrap();
    assert!(
        all != "0" && tls == all,
        "every connection encrypted: {counts}"
    );

    let other = files.path().join("other-ca.pem");
    let refused = PostgresStore::connect(PostgresOptions {
        ca_file: Some(other),
        ..PostgresOptions::new(with("sslmode=verify-full"))
    })
    .await
    .expect_err("another CA's certificate is refused");
    let message = refused.to_string();
    assert!(
        message.contains("certificate") || message.contains("Certificate"),
        "{message}"
    );
    assert!(!message.contains("password"), "{message}");

    let require = connect(&with("sslmode=require")).await;
    require.put_post(p(2)).await.unwrap();
    let counts = encrypted(cluster, database.name(), require).await;
    let (tls, all) = counts.split_once('|').unwrap();
    assert!(all != "0" && tls == all, "require encrypts: {counts}");

    // `require` with a CA file checks the chain, as libpq does (verify-ca).
    let refused = PostgresStore::connect(PostgresOptions {
        ca_file: Some(files.path().join("other-ca.pem")),
        ..PostgresOptions::new(with("sslmode=require"))
    })
    .await
    .expect_err("require with a CA file refuses another CA's certificate");
    let message = refused.to_string();
    assert!(
        message.contains("certificate") || message.contains("Certificate"),
        "{message}"
    );
    let checked = connect(&with(&format!(
        "sslmode=require&sslrootcert={}",
        ca.display()
    )))
    .await;
    checked.put_post(p(4)).await.unwrap();
    let counts = encrypted(cluster, database.name(), checked).await;
    let (tls, all) = counts.split_once('|').unwrap();
    assert!(all != "0" && tls == all, "require with a CA: {counts}");
    // A CA file without TLS would check nothing: refused.
    for url in [url.clone(), with("sslmode=disable")] {
        let refused = PostgresStore::connect(PostgresOptions {
            ca_file: Some(ca.clone()),
            ..PostgresOptions::new(url)
        })
        .await
        .expect_err("a CA file without TLS is refused");
        assert!(refused.to_string().contains("sslmode="), "{refused}");
    }

    // As libpq: checking a certificate needs its CA, given; the public
    // CAs (`sslrootcert=system`, verify-full implied) do not sign the
    // test's; and client certificates are refused as not supported.
    for mode in ["verify-ca", "verify-full"] {
        let refused =
            PostgresStore::connect(PostgresOptions::new(with(&format!("sslmode={mode}"))))
                .await
                .expect_err("no CA, no check");
        assert!(refused.to_string().contains("sslrootcert="), "{refused}");
    }
    let public = PostgresStore::connect(PostgresOptions::new(with("sslrootcert=system")))
        .await
        .expect_err("the public CAs do not sign the test CA's certificate");
    assert!(public.to_string().contains("UnknownIssuer"), "{public}");
    let weaker = PostgresStore::connect(PostgresOptions::new(with(
        "sslrootcert=system&sslmode=require",
    )))
    .await
    .expect_err("system roots with a weaker mode");
    assert!(
        weaker.to_string().contains("sslmode=verify-full"),
        "{weaker}"
    );
    let certificate = PostgresStore::connect(PostgresOptions::new(with(&format!(
        "sslmode=verify-full&sslrootcert={}&sslcert=/etc/c.pem&sslkey=/etc/c.key",
        ca.display()
    ))))
    .await
    .expect_err("client certificates are refused");
    assert!(
        certificate
            .to_string()
            .contains("client certificates are not supported"),
        "{certificate}"
    );

    let prefer = PostgresStore::connect(PostgresOptions::new(with("sslmode=prefer")))
        .await
        .expect_err("prefer is refused");
    assert!(
        prefer.to_string().contains("may or may not encrypt"),
        "{prefer}"
    );

    let plain = connect(&url).await;
    plain.put_post(p(3)).await.unwrap();
    let counts = encrypted(cluster, database.name(), plain).await;
    assert!(counts.starts_with("0|"), "no sslmode, no TLS: {counts}");
}

/// The reads Citus gets (one statement per post), on plain PostgreSQL: the
/// same answers with or without Citus.
mod citus_reads_suite_cases {
    use super::*;

    likekit_testing::store_suite!(guarded async { fresh_store(Layout::Citus).await });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_run_once_even_when_servers_start_together() {
    let database = fresh_database().await;
    let url = database.url();
    // Two servers migrating the same empty database at the same time.
    let (a, b) = tokio::join!(connect(url), connect(url));
    let latest = POSTGRES_MIGRATIONS.last().unwrap().0;
    assert_eq!(a.schema_version().await.unwrap(), latest);
    a.put_post(p(1)).await.unwrap();
    b.like(u(7), p(1)).await.unwrap();
    a.close().await.unwrap();
    b.close().await.unwrap();
    drop((a, b));

    // A restart keeps the data and applies nothing again.
    let again = connect(url).await;
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
    // The URL's `options` are set once connected, so they may hold only
    // settings: anything else is refused before connecting.
    let url = format!("postgres://ana:s3cret@127.0.0.1:{port}/likes?options=-B%20100");
    let err = PostgresStore::connect(PostgresOptions::new(url))
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("the URL's options hold `-B`"), "{message}");
    assert!(!message.contains("s3cret"), "{message}");
}

/// A server on a fresh PostgreSQL database, with the usual test settings,
/// and the database's guard (to drop after the server stops).
async fn http_server() -> (common::TestServer, TestDatabase<'static>) {
    let database = fresh_database().await;
    let server = common::TestServer::with(Config {
        database: Database::Postgres(database.url().to_owned()),
        db_connections: 8,
        ..common::test_config()
    })
    .await;
    (server, database)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_seed_table_on_postgres() {
    let (t, _database) = http_server().await;
    common::http_seed_table(&t).await;
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn friends_are_answered_as_stored_on_postgres() {
    let (t, _database) = http_server().await;
    common::http_friends_answered_as_stored(&t).await;
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn http_random_likes_with_duplicates_stay_exact_on_postgres() {
    let (t, _database) = http_server().await;
    let t = Arc::new(t);
    common::http_random_likes_with_duplicates(
        t.clone(),
        common::RandomLikes {
            posts: 3,
            tasks: 12,
            users_per_task: 4,
            ops_per_task: 30,
            rng_base: 500,
        },
    )
    .await;
    Arc::into_inner(t).unwrap().stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_seed_keeps_the_friends_keys() {
    // 260 users × 200 friends: past the size where the seed adds the
    // foreign keys back after the insert instead of checking every row.
    const USERS: u64 = 260;
    const FRIENDS: u64 = 200;
    let database = fresh_database().await;
    let url = database.url();
    let store = connect(url).await;
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
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
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
    let (store, _database) = fresh_store(Layout::Auto).await;
    let store = Arc::new(store);
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

/// `posts.shard_rows` (which lets a write skip reading the shard rows of a
/// post that never was hot) counts every shard row, through posts turning
/// hot with concurrent likes and unlikes over several server starts, and a
/// reset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shard_rows_count_every_shard_row() {
    let database = fresh_database().await;
    let url = database.url();
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let connection = tokio::spawn(connection);
    let wrong = || async {
        client
            .query_one(
                "SELECT count(*) FROM posts p WHERE p.shard_rows <> \
                 (SELECT count(*) FROM post_count_shards s WHERE s.post_id = p.id)",
                &[],
            )
            .await
            .unwrap()
            .get::<_, i64>(0)
    };
    let mut sharded = 0;
    for round in 0..3 {
        let store = Arc::new(connect(url).await);
        let hot = store.hot_posts().unwrap();
        hot.set_threshold(0);
        hot.set_shards(8);
        let base = round as u64 * 1_000;
        for post in 1..=3 {
            store.put_post(p(post)).await.unwrap();
        }
        let writes: Vec<_> = (1..=300)
            .map(|k| {
                let store = store.clone();
                tokio::spawn(async move {
                    let (user, post) = (u(base + k % 100 + 1), p(k % 3 + 1));
                    if k % 4 == 0 {
                        store.unlike(user, post).await
                    } else {
                        store.like(user, post).await
                    }
                })
            })
            .collect();
        for write in writes {
            write.await.unwrap().unwrap();
        }
        suite::assert_exact(store.as_ref()).await;
        assert_eq!(wrong().await, 0, "round {round}");
        sharded = store
            .audit()
            .await
            .unwrap()
            .iter()
            .map(|post| post.shard_rows)
            .sum::<u64>();
        store.close().await.unwrap();
    }
    assert!(sharded > 3, "the writes made shard rows ({sharded})");
    let store = connect(url).await;
    store.reset().await.unwrap();
    assert_eq!(wrong().await, 0, "after a reset");
    drop(client);
    let _ = connection.await;
}

/// The hash the store places posts by on Citus is PostgreSQL's own
/// `hashint8`, for ids across the whole range (and the negative numbers
/// PostgreSQL folds differently, though no id is negative).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hashint8_is_postgresql_s() {
    let database = fresh_database().await;
    let url = database.url();
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let mut values: Vec<i64> = vec![1, 2, 42, i64::from(i32::MAX), 1 << 31, 1 << 32, i64::MAX];
    values.extend([-1, -2, i64::MIN]);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..2_000 {
        // splitmix64: ids of every size, not only small ones.
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        values.push((z ^ (z >> 31)) as i64 >> (x % 48));
    }
    let rows = client
        .query(
            "SELECT v, hashint8(v) FROM unnest($1::bigint[]) v",
            &[&values],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), values.len());
    for row in rows {
        let (value, theirs): (i64, i32) = (row.get(0), row.get(1));
        assert_eq!(hashint8(value), theirs, "hashint8({value})");
    }
}

/// `/readyz` asks the database: 200 while PostgreSQL answers, 503
/// `not_ready` once it is stopped, and 200 again once it is back; `/livez` stays 200 (a
/// lost database must not get the process restarted).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_follows_the_database_and_livez_does_not() {
    let cluster = tokio::task::spawn_blocking(|| Cluster::start(ClusterOptions::default()))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("cannot start a PostgreSQL test cluster: {e}"));
    let t = common::TestServer::with(Config {
        database: Database::Postgres(cluster.url("postgres")),
        db_connections: 2,
        ..common::test_config()
    })
    .await;
    let probe = |path: &'static str| t.http.get(t.url(path)).send();

    let ready = probe("/readyz").await.unwrap();
    assert_eq!(ready.status(), reqwest::StatusCode::OK);
    assert_eq!(
        ready.json::<serde_json::Value>().await.unwrap(),
        serde_json::json!({"status": "ok"})
    );
    t.setup(&[(7, "Ana")], &[42]).await;
    assert_eq!(t.like(7, 42).await.status(), reqwest::StatusCode::OK);

    let cluster = Arc::new(cluster);
    let c = Arc::clone(&cluster);
    tokio::task::spawn_blocking(move || c.pause())
        .await
        .unwrap()
        .unwrap();
    let not_ready = probe("/readyz").await.unwrap();
    assert_eq!(not_ready.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    let body: serde_json::Value = not_ready.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_ready", "{body}");
    assert_eq!(
        probe("/livez").await.unwrap().status(),
        reqwest::StatusCode::OK
    );
    // A database out of reach passes as a restart does: 503 with
    // Retry-After, twice (a pooled connection found closed, then a new
    // one refused), not 500.
    for _ in 0..2 {
        let refused = t.like(7, 42).await;
        assert!(refused.headers().contains_key("retry-after"));
        common::expect_error(
            refused,
            reqwest::StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
        )
        .await;
    }
    t.stop().await;
}

/// `/metrics` on PostgreSQL reports the store's own pool, `main`: idle and
/// in-use connections, the pool's size (`--db-connections`) and the tasks
/// waiting, read when the metrics are asked for; no worker pools off Citus,
/// and no group-commit histogram (SQLite's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_report_the_connection_pool() {
    let (t, _database) = http_server().await;
    t.setup(&[(7, "Ana")], &[42]).await;
    let liked = t.like(7, 42).await;
    assert_eq!(liked.status(), reqwest::StatusCode::OK);
    let viewed = t.view(7, 42).await;
    assert_eq!(viewed.status(), reqwest::StatusCode::OK);

    let response = t.http.get(t.url("/metrics")).send().await.unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    let text = response.text().await.unwrap();
    let value = |series: &str| -> f64 {
        let prefix = format!("{series} ");
        let found: Vec<f64> = text
            .lines()
            .filter_map(|line| line.strip_prefix(&prefix))
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(found.len(), 1, "one {series} in\n{text}");
        found[0]
    };
    let max = value("likekit_db_pool_max_connections{pool=\"main\"}");
    assert_eq!(max, 8.0, "--db-connections");
    let idle = value("likekit_db_pool_connections{pool=\"main\",state=\"idle\"}");
    let in_use = value("likekit_db_pool_connections{pool=\"main\",state=\"in_use\"}");
    // The like and the view opened at least one connection, back idle by now
    // or held by the readiness probe or a batch.
    assert!(idle + in_use >= 1.0, "idle {idle}, in use {in_use}");
    assert!(idle + in_use <= max, "idle {idle}, in use {in_use}");
    assert!(idle >= 0.0 && in_use >= 0.0);
    // Nothing is in flight: no one waits.
    assert_eq!(value("likekit_db_pool_waiting{pool=\"main\"}"), 0.0);
    for family in [
        "likekit_db_pool_connections",
        "likekit_db_pool_max_connections",
        "likekit_db_pool_waiting",
    ] {
        assert!(
            text.contains(&format!("# TYPE {family} gauge\n")),
            "{family} in\n{text}"
        );
    }
    assert!(!text.contains("pool=\"worker:"), "{text}");
    // SQLite's group-commit histogram is not there: nothing would feed it.
    assert!(!text.contains("likekit_group_commit_writes"), "{text}");
    t.stop().await;
}

/// What a like logs from its write's task names the request: on a
/// read-only database, `PostgreSQL answered that it is read-only` carries
/// the id the client sent in `X-Request-Id`, and the route.
// One thread: the handlers and their writes' tasks run where the test's
// subscriber is the default.
#[tokio::test(flavor = "current_thread")]
async fn the_read_only_line_of_a_like_names_its_request() {
    use axum::{body::Body, http::Request};
    use tower::ServiceExt as _;

    const READ_ONLY: &str = "PostgreSQL answered that it is read-only: the connection and \
                             every idle one of its pool are closed, and new ones are opened \
                             as needed";
    let database = fresh_database().await;
    let store = connect(database.url()).await;
    store.put_user(u(7), "Ana").await.unwrap();
    store.put_post(p(42)).await.unwrap();
    store.close().await.unwrap();
    drop(store);
    outside_client(database.url())
        .await
        .batch_execute(&format!(
            "ALTER DATABASE \"{}\" SET default_transaction_read_only = on",
            database.name()
        ))
        .await
        .unwrap();

    let (captured, _default) = common::Captured::json_lines();
    let store = Arc::new(connect(database.url()).await);
    let config = Config {
        token_secret: Some("read-only-line".into()),
        write_rate_limit: None,
        ..Config::default()
    };
    let app = likekit_server::App::new(&config, store.clone()).unwrap();
    let bearer = format!(
        "Bearer {}",
        app.tokens().mint(u(7), std::time::Duration::from_secs(600))
    );
    let read_only_lines = || -> Vec<serde_json::Value> {
        captured
            .lines()
            .iter()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
            .filter(|line| line["fields"]["message"] == READ_ONLY)
            .collect()
    };

    // The line is written at most once a second: like until it is (the
    // first like's, unless a line of its kind came just before).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut sent = Vec::new();
    while read_only_lines().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "no read-only line after {} likes: {:?}",
            sent.len(),
            captured.lines()
        );
        let id = format!("read-only-like-{}", sent.len());
        let request = Request::post("/posts/42/like")
            .header("authorization", &bearer)
            .header("x-request-id", &id)
            .body(Body::empty())
            .unwrap();
        let answer = app.router().oneshot(request).await.unwrap();
        assert_eq!(answer.status(), 503, "{id}");
        sent.push(id);
    }
    for line in read_only_lines() {
        let id = line["span"]["request_id"].as_str().unwrap_or_default();
        assert!(sent.iter().any(|sent| sent == id), "{line}");
        assert_eq!(line["span"]["route"], "like", "{line}");
    }
    store.close().await.unwrap();
}

/// The store's migration lock (`MIGRATION_LOCK` in the store).
const MIGRATION_LOCK: i64 = 0x4c69_6b65_4b69_7400;

/// A client of its own on `url`, its connection driven in the background.
async fn outside_client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

/// How many of the store's backends in this test's database wait for a
/// lock (other tests share the cluster, each in a database of its own).
const LOCK_WAITERS: &str = "SELECT count(*) FROM pg_stat_activity \
     WHERE application_name = 'likekit-server' AND wait_event_type = 'Lock' \
     AND datname = current_database()";

/// Waits until at least `n` of the store's backends wait for a lock.
async fn wait_for_lock_waiters(client: &tokio_postgres::Client, n: i64) {
    wait_for_count(client, LOCK_WAITERS, n).await;
}

/// Waits until `sql` (one count) answers at least `n`, for at most 20 s.
async fn wait_for_count(client: &tokio_postgres::Client, sql: &str, n: i64) {
    for _ in 0..400 {
        let found: i64 = client.query_one(sql, &[]).await.unwrap().get(0);
        if found >= n {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{sql} never reached {n}");
}

/// Two servers starting together on a database whose sessions default to
/// repeatable read: the one that waited for the other's migration lock
/// still sees its migrations (the migration runs read committed) and
/// applies nothing again. Both wait on the lock before either migrates,
/// so their snapshots would predate the first one's commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_starting_together_migrate_once_under_repeatable_read() {
    let database = fresh_database().await;
    let url = database.url().to_owned();
    let client = outside_client(&url).await;
    client
        .batch_execute(&format!(
            "ALTER DATABASE \"{}\" SET default_transaction_isolation = 'repeatable read'",
            database.name()
        ))
        .await
        .unwrap();
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .await
        .unwrap();
    let starts = {
        let url = url.clone();
        tokio::spawn(async move {
            tokio::join!(
                PostgresStore::connect(PostgresOptions::new(url.clone())),
                PostgresStore::connect(PostgresOptions::new(url))
            )
        })
    };
    wait_for_count(
        &client,
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
        2,
    )
    .await;
    client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
        .await
        .unwrap();
    let (a, b) = starts.await.unwrap();
    let (a, b) = (a.unwrap(), b.unwrap());
    let latest = POSTGRES_MIGRATIONS.last().unwrap().0;
    assert_eq!(b.schema_version().await.unwrap(), latest);
    a.put_post(p(1)).await.unwrap();
    b.like(u(7), p(1)).await.unwrap();
    suite::assert_exact(&a).await;
    a.close().await.unwrap();
    b.close().await.unwrap();
}

/// `url` with the serving connections' statement and lock timeouts set in
/// its `options` (`0`: off), as an operator sets them.
fn with_timeouts(url: &str, statement: &str, lock: &str) -> String {
    format!("{url}?options=-c%20statement_timeout%3D{statement}%20-c%20lock_timeout%3D{lock}")
}

/// A store whose connections are all taken by feed reads waiting on a
/// table lock (the timeouts off, so they wait as long as it is held)
/// answers another read with an error within the pool's wait deadline
/// (5 s), not when the lock is let go: 503 `unavailable` to the client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_a_connection_has_a_deadline() {
    let database = fresh_database().await;
    let store = Arc::new(
        PostgresStore::connect(PostgresOptions {
            connections: 2,
            ..PostgresOptions::new(with_timeouts(database.url(), "0", "0"))
        })
        .await
        .unwrap(),
    );
    store.put_post(p(1)).await.unwrap();
    store.put_post(p(2)).await.unwrap();
    let mut client = outside_client(database.url()).await;
    let lock = client.transaction().await.unwrap();
    lock.batch_execute("LOCK TABLE likes IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    let feeds: Vec<_> = (1..=2)
        .map(|user| {
            let store = store.clone();
            tokio::spawn(async move { store.liked(u(user), &posts([1, 2])).await })
        })
        .collect();
    // Both of the pool's connections wait on the lock.
    let other = outside_client(database.url()).await;
    wait_for_lock_waiters(&other, 2).await;
    let read = tokio::time::timeout(std::time::Duration::from_secs(20), store.post(p(2))).await;
    let Ok(Err(StoreError::Unavailable(message))) = read else {
        panic!("an error within the pool's deadline, got {read:?}");
    };
    assert!(message.contains("pool"), "{message}");
    lock.rollback().await.unwrap();
    for feed in feeds {
        assert_eq!(feed.await.unwrap().unwrap(), [false, false]);
    }
    assert!(store.post(p(2)).await.unwrap().is_some());
    suite::assert_exact(store.as_ref()).await;
}

/// A batch of view lookups stuck on the database (here behind a table
/// lock, the timeouts off) fails within the batch deadline (10 s) instead
/// of waiting as long as the database does; the store answers again once
/// it is free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_batch_of_lookups_has_a_deadline() {
    let _database = fresh_database().await;
    let store = connect(&with_timeouts(_database.url(), "0", "0")).await;
    store.put_post(p(1)).await.unwrap();
    let mut client = outside_client(_database.url()).await;
    let lock = client.transaction().await.unwrap();
    lock.batch_execute("LOCK TABLE likes IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    let looked = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        store.liked(u(1), &posts([1])),
    )
    .await;
    let Ok(Err(StoreError::Backend(message))) = looked else {
        panic!("an error within the batch deadline, got {looked:?}");
    };
    assert!(message.contains("within"), "{message}");
    lock.rollback().await.unwrap();
    assert_eq!(store.liked(u(1), &posts([1])).await.unwrap(), [false]);
    store.close().await.unwrap();
}

/// A stored count below zero (drift the audit exists to find) is reported
/// as such, not read as 0, which would match a post with no like rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_shows_a_count_below_zero() {
    let database = fresh_database().await;
    let store = connect(database.url()).await;
    store.put_post(p(1)).await.unwrap();
    outside_client(database.url())
        .await
        .execute(
            "INSERT INTO post_count_shards (post_id, shard, count, version) VALUES (1, 0, -1, 1)",
            &[],
        )
        .await
        .unwrap();
    let err = store.audit().await.expect_err("a count of -1 is not 0");
    assert!(err.to_string().contains("-1"), "{err}");
    store.close().await.unwrap();
}

/// A like behind a row lock another session holds waits at most the lock
/// timeout (2 s), then is answered 503 `unavailable` with `Retry-After`,
/// having changed nothing; once the lock is let go the client's retry
/// counts it, once, and a view agrees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_like_behind_a_held_lock_is_503_and_the_retry_counts_once() {
    let (t, database) = http_server().await;
    t.setup(&[(7, "Ana"), (8, "Ben")], &[42]).await;
    assert_eq!(t.like(8, 42).await.status(), reqwest::StatusCode::OK);
    let mut client = outside_client(database.url()).await;
    let lock = client.transaction().await.unwrap();
    lock.execute("SELECT 1 FROM posts WHERE id = 42 FOR UPDATE", &[])
        .await
        .unwrap();

    let refused = t.like(7, 42).await;
    let retry_after = refused.headers().get(reqwest::header::RETRY_AFTER).cloned();
    common::expect_error(
        refused,
        reqwest::StatusCode::SERVICE_UNAVAILABLE,
        "unavailable",
    )
    .await;
    assert_eq!(retry_after.unwrap(), "1");
    // The lock timeout's failure rolled the like row back.
    let rows: i64 = client_count(&database, "SELECT count(*) FROM likes WHERE user_id = 7").await;
    assert_eq!(rows, 0);

    lock.rollback().await.unwrap();
    let liked: likekit_server::wire::LikeState = common::ok_json(t.like(7, 42).await).await;
    assert_eq!(
        (liked.count, liked.liked_by_me, liked.version),
        (2, true, 2)
    );
    let again: likekit_server::wire::LikeState = common::ok_json(t.like(7, 42).await).await;
    assert_eq!(
        (again.count, again.version),
        (2, 2),
        "a duplicate changes nothing"
    );
    let view: likekit_server::wire::PostLikes = common::ok_json(t.view(7, 42).await).await;
    assert_eq!((view.count, view.liked_by_me), (2, true));
    let audit = suite::assert_exact(t.server.store().as_ref()).await;
    assert_eq!(audit[0].count, 2);
    t.stop().await;
}

/// One count from a connection of its own to `database`.
async fn client_count(database: &TestDatabase<'_>, sql: &str) -> i64 {
    outside_client(database.url())
        .await
        .query_one(sql, &[])
        .await
        .unwrap()
        .get(0)
}

/// The URL's `options` set the timeouts: here a statement timeout of 1 s
/// and no lock timeout, so a like behind a held row lock ends as a
/// canceled statement (57014), which is `Unavailable` as a lock timeout is;
/// nothing was counted, and the like goes through once the lock is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_url_sets_the_timeouts_and_a_canceled_statement_is_unavailable() {
    let database = fresh_database().await;
    let store = connect(&with_timeouts(database.url(), "1s", "0")).await;
    let message = like_behind_a_row_lock(store, &database).await;
    assert!(message.contains("57014"), "{message}");
    assert!(message.contains("statement_timeout"), "{message}");
}

/// A like of post 1 by user 1 on `store` while another session holds the
/// post's row lock: the `Unavailable` error's message it ends with (within
/// 20 s, or the test fails), having counted nothing; then, the lock let
/// go, the like again, which counts once. Closes the store.
async fn like_behind_a_row_lock(store: PostgresStore, database: &TestDatabase<'_>) -> String {
    store.put_post(p(1)).await.unwrap();
    let mut client = outside_client(database.url()).await;
    let lock = client.transaction().await.unwrap();
    lock.execute("SELECT 1 FROM posts WHERE id = 1 FOR UPDATE", &[])
        .await
        .unwrap();
    let like =
        tokio::time::timeout(std::time::Duration::from_secs(20), store.like(u(1), p(1))).await;
    let Ok(Err(StoreError::Unavailable(message))) = like else {
        panic!("a like behind a held row lock is Unavailable, got {like:?}");
    };
    lock.rollback().await.unwrap();
    suite::assert_exact(&store).await;
    let liked = store.like(u(1), p(1)).await.unwrap();
    assert_eq!((liked.state.count, liked.changed), (1, true));
    suite::assert_exact(&store).await;
    store.close().await.unwrap();
    message
}

/// Likes hold at most three quarters of the pool: with more of them
/// waiting on a row lock (the timeouts off) than that share, views, feeds
/// and friends lookups still get a connection. Once the lock is gone every
/// like is counted exactly once (a like that waited past the pool's wait
/// for its share is `Unavailable` and is sent again, as a client would).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn likes_leave_a_share_of_the_pool_to_reads() {
    let database = fresh_database().await;
    let store = Arc::new(
        PostgresStore::connect(PostgresOptions {
            connections: 4,
            ..PostgresOptions::new(with_timeouts(database.url(), "0", "0"))
        })
        .await
        .unwrap(),
    );
    for post in 1..=2 {
        store.put_post(p(post)).await.unwrap();
    }
    store.put_user(u(1), "Ana").await.unwrap();
    let mut client = outside_client(database.url()).await;
    let lock = client.transaction().await.unwrap();
    lock.execute("SELECT 1 FROM posts WHERE id = 1 FOR UPDATE", &[])
        .await
        .unwrap();
    let likes: Vec<_> = (1..=6)
        .map(|user| {
            let store = store.clone();
            tokio::spawn(async move { (user, store.like(u(user), p(1)).await) })
        })
        .collect();
    // Three (of four) connections wait on the lock, the rest of the likes
    // for a place among the writes.
    let other = outside_client(database.url()).await;
    wait_for_lock_waiters(&other, 3).await;
    assert_eq!(
        store.post(p(2)).await.unwrap().map(|post| post.count),
        Some(0)
    );
    assert_eq!(
        store.liked(u(1), &posts([1, 2])).await.unwrap(),
        [false, false]
    );
    assert!(store.friends(u(1)).await.unwrap().is_empty());
    store.ready().await.unwrap();
    let waiting: i64 = other.query_one(LOCK_WAITERS, &[]).await.unwrap().get(0);
    assert_eq!(
        waiting, 3,
        "never more likes on connections than their share"
    );
    lock.rollback().await.unwrap();
    for like in likes {
        let (user, done) = like.await.unwrap();
        match done {
            Ok(outcome) => assert!(outcome.changed),
            Err(StoreError::Unavailable(_)) => {
                assert!(store.like(u(user), p(1)).await.unwrap().changed);
            }
            Err(other) => panic!("like {user}: {other:?}"),
        }
    }
    let audit = suite::assert_exact(store.as_ref()).await;
    assert_eq!(audit[0].count, 6);
}

/// A database whose sessions are read-only (as a standby after a failover
/// is): the server still starts on it, as it is already migrated, but
/// `/readyz` answers 503 and a like 503 `unavailable` with `Retry-After`,
/// not 500. Once it takes writes again, the connections opened read-only
/// are closed as they answer so, and the server is ready and counts again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_database_is_not_ready_and_likes_are_503() {
    let (t, database) = http_server().await;
    t.setup(&[(7, "Ana"), (8, "Ben")], &[42]).await;
    assert_eq!(t.like(8, 42).await.status(), reqwest::StatusCode::OK);
    t.stop().await;
    let admin = outside_client(database.url()).await;
    admin
        .batch_execute(&format!(
            "ALTER DATABASE \"{}\" SET default_transaction_read_only = on",
            database.name()
        ))
        .await
        .unwrap();

    let t = common::TestServer::with(Config {
        database: Database::Postgres(database.url().to_owned()),
        db_connections: 4,
        ..common::test_config()
    })
    .await;
    let not_ready = t.http.get(t.url("/readyz")).send().await.unwrap();
    common::expect_error(
        not_ready,
        reqwest::StatusCode::SERVICE_UNAVAILABLE,
        "not_ready",
    )
    .await;
    let refused = t.like(7, 42).await;
    assert_eq!(
        refused.headers().get(reqwest::header::RETRY_AFTER).unwrap(),
        "1"
    );
    common::expect_error(
        refused,
        reqwest::StatusCode::SERVICE_UNAVAILABLE,
        "unavailable",
    )
    .await;

    admin
        .batch_execute(&format!(
            "ALTER DATABASE \"{}\" RESET default_transaction_read_only",
            database.name()
        ))
        .await
        .unwrap();
    // Each connection opened read-only is closed when it answers so; the
    // pool holds at most four, so a few tries see a writable one.
    let mut ready = false;
    for _ in 0..10 {
        let answer = t.http.get(t.url("/readyz")).send().await.unwrap();
        if answer.status() == reqwest::StatusCode::OK {
            ready = true;
            break;
        }
        common::expect_error(
            answer,
            reqwest::StatusCode::SERVICE_UNAVAILABLE,
            "not_ready",
        )
        .await;
    }
    assert!(ready, "ready once the database takes writes");
    let mut liked = None;
    for _ in 0..10 {
        let answer = t.like(7, 42).await;
        if answer.status() == reqwest::StatusCode::OK {
            liked = Some(
                answer
                    .json::<likekit_server::wire::LikeState>()
                    .await
                    .unwrap(),
            );
            break;
        }
        common::expect_error(
            answer,
            reqwest::StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
        )
        .await;
    }
    let liked = liked.expect("the like counts once the database takes writes");
    assert_eq!((liked.count, liked.version), (2, 2));
    suite::assert_exact(t.server.store().as_ref()).await;
    t.stop().await;
}

/// A database at schema version 1, as an older server left it.
async fn database_at_version_1() -> TestDatabase<'static> {
    let database = fresh_database().await;
    let client = outside_client(database.url()).await;
    client
        .batch_execute(POSTGRES_MIGRATIONS[0].1)
        .await
        .unwrap();
    client
        .batch_execute(
            "CREATE TABLE likekit_schema (version integer PRIMARY KEY, \
             applied_at timestamptz NOT NULL DEFAULT now()); \
             INSERT INTO likekit_schema (version) VALUES (1); \
             INSERT INTO posts (id, count, version) VALUES (1, 0, 0)",
        )
        .await
        .unwrap();
    database
}

/// A migration that needs a lock another session holds (here `ALTER
/// TABLE posts` behind a reader's open transaction) gives up after its
/// lock timeout, saying so, rather than wait in the lock queue with every
/// like behind it; once the lock is gone it applies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migration_gives_way_to_a_held_lock() {
    let database = database_at_version_1().await;
    let mut client = outside_client(database.url()).await;
    let reader = client.transaction().await.unwrap();
    reader
        .execute("SELECT count(*) FROM posts", &[])
        .await
        .unwrap();
    let err = PostgresStore::connect(PostgresOptions::new(database.url()))
        .await
        .expect_err("the migration gives up");
    let message = err.to_string();
    assert!(message.contains("migration 2"), "{message}");
    assert!(message.contains("lock timeout"), "{message}");
    reader.rollback().await.unwrap();
    let store = connect(database.url()).await;
    let latest = POSTGRES_MIGRATIONS.last().unwrap().0;
    assert_eq!(store.schema_version().await.unwrap(), latest);
    assert!(store.like(u(1), p(1)).await.unwrap().changed);
    store.close().await.unwrap();
}

/// A server started while a migration's lock is held tries again while
/// `--db-wait-secs` lasts, and is up once the lock is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_tries_a_migration_again_while_it_may_wait() {
    let database = database_at_version_1().await;
    let mut client = outside_client(database.url()).await;
    let reader = client.transaction().await.unwrap();
    reader
        .execute("SELECT count(*) FROM posts", &[])
        .await
        .unwrap();
    let url = database.url().to_owned();
    let starting = tokio::spawn(async move {
        likekit_server::spawn(Config {
            database: Database::Postgres(url),
            db_connections: 2,
            db_start_wait: std::time::Duration::from_secs(120),
            ..common::test_config()
        })
        .await
    });
    // The migration waits for the lock, gives up, and a later try (a new
    // connection: another backend) waits again.
    let other = outside_client(database.url()).await;
    let first = waiting_backend(&other, None).await;
    waiting_backend(&other, Some(first)).await;
    reader.rollback().await.unwrap();
    let server = starting.await.unwrap().expect("up once the lock is gone");
    let t = common::TestServer::from_handle(server);
    t.setup(&[(7, "Ana")], &[]).await;
    let liked: likekit_server::wire::LikeState = common::ok_json(t.like(7, 1).await).await;
    assert_eq!(liked.count, 1);
    t.stop().await;
}

/// The process id of a backend of the store waiting for a lock, other
/// than `not`; waits for one for at most 60 s.
async fn waiting_backend(client: &tokio_postgres::Client, not: Option<i32>) -> i32 {
    for _ in 0..1200 {
        let found: Option<i32> = client
            .query_opt(
                "SELECT pid FROM pg_stat_activity WHERE application_name = 'likekit-server' \
                 AND wait_event_type = 'Lock' AND datname = current_database() \
                 AND pid <> $1 LIMIT 1",
                &[&not.unwrap_or(0)],
            )
            .await
            .unwrap()
            .map(|row| row.get(0));
        if let Some(pid) = found {
            return pid;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("no backend of the store waited for a lock (but {not:?})");
}

/// A role that may read and write the tables but not create anything in
/// the schema serves a database already migrated: the store creates
/// nothing there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_without_create_serves_a_migrated_database() {
    let database = fresh_database().await;
    connect(database.url()).await.close().await.unwrap();
    let role = format!("likekit_no_create_{}", std::process::id());
    outside_client(database.url())
        .await
        .batch_execute(&format!(
            "CREATE ROLE {role} LOGIN; \
             REVOKE CREATE ON SCHEMA public FROM PUBLIC; \
             GRANT USAGE ON SCHEMA public TO {role}; \
             GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}"
        ))
        .await
        .unwrap();
    let url = database
        .url()
        .replacen("postgres://likekit@", &format!("postgres://{role}@"), 1);
    assert_ne!(url, database.url());
    let store = connect(&url).await;
    store.put_post(p(1)).await.unwrap();
    assert!(store.like(u(1), p(1)).await.unwrap().changed);
    let refused = outside_client(&url)
        .await
        .batch_execute("CREATE TABLE t (x int)")
        .await
        .unwrap_err();
    assert_eq!(
        refused.code(),
        Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE)
    );
    store.close().await.unwrap();
}

/// Closing waits for the writes in flight, but not for ever: a like stuck
/// behind a row lock (the timeouts off) does not hold the close up past
/// its wait; new writes are refused at once, and the stuck like commits
/// when the lock goes, counted once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_does_not_wait_for_ever() {
    let database = fresh_database().await;
    let store = Arc::new(connect(&with_timeouts(database.url(), "0", "0")).await);
    store.put_post(p(1)).await.unwrap();
    let mut client = outside_client(database.url()).await;
    let lock = client.transaction().await.unwrap();
    lock.execute("SELECT 1 FROM posts WHERE id = 1 FOR UPDATE", &[])
        .await
        .unwrap();
    let stuck = {
        let store = store.clone();
        tokio::spawn(async move { store.like(u(1), p(1)).await })
    };
    let other = outside_client(database.url()).await;
    wait_for_lock_waiters(&other, 1).await;
    store.close().await.unwrap();
    assert_eq!(store.like(u(2), p(1)).await, Err(StoreError::Closed));
    lock.rollback().await.unwrap();
    assert!(stuck.await.unwrap().unwrap().changed);
    suite::assert_exact(store.as_ref()).await;
}
