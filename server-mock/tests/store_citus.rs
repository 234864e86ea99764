//! The Citus test mode: the shared store suite, the HTTP seed table, the
//! HTTP concurrency run, views and feed reads, a large seed, a pool per
//! worker on `/metrics`, and the plans —
//! every statement of a like, an unlike and a one-post view is
//! router-planned to a single task, and a like or an unlike is one command
//! from the coordinator to one worker — against a Citus coordinator someone
//! else runs, named by `LIKEKIT_TEST_CITUS_URL` (a libpq URL). Without it
//! every test here returns at once and the binary prints one line saying
//! they were skipped.
//!
//! Isolation (see `likekit_testing::citus`): each test makes a schema of
//! its own on the coordinator, the store makes its tables and write
//! functions there (the URL sets `search_path`), the test distributes them
//! with the server's own `CITUS_LAYOUT` ([`SHARDS`] shards per table), and
//! the schema is dropped, shards and all, when the test ends. Tests never
//! share rows, so they may run at once, also beside other runs on the same
//! cluster.

#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;

use likekit_server::{
    Config, Database,
    store::{
        CITUS_LAYOUT, CITUS_STATEMENTS, HotPostOptions, Layout, POSTGRES_MIGRATIONS,
        PostgresOptions, PostgresStore, Store,
    },
    wire::{
        LikeState, PostId, PostLikes,
        admin::{Seed, SeedPost, SeedUser},
    },
};
use likekit_testing::{
    citus::{self, Schema},
    suite::{self, p, u},
};
use tokio_postgres::{AsyncMessage, types::ToSql};

/// How this binary's skip line starts.
const SUITE: &str = "store_citus";

/// Shards per distributed table in a test schema: enough to spread posts
/// over two or more workers, few enough to distribute in a second.
const SHARDS: u32 = 8;

/// Runs blocking work (`psql`) without stalling the runtime.
fn blocking<T>(work: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(work)
}

/// A store on `url` as the server makes it: the layout found in the
/// database (Citus).
async fn connect(url: &str) -> PostgresStore {
    PostgresStore::connect(PostgresOptions {
        url: url.to_owned(),
        connections: 8,
        hot_posts: HotPostOptions::default(),
        layout: Layout::Auto,
        direct_to_workers: true,
        ca_file: None,
    })
    .await
    .unwrap_or_else(|e| panic!("connect a store to {url}: {e}"))
}

/// A new schema on the coordinator with the store's tables and write
/// functions made there and distributed; `None` (skipped, said once) when
/// `LIKEKIT_TEST_CITUS_URL` is not set.
async fn distributed_schema() -> Option<Schema> {
    let coordinator = citus::coordinator_or_skip(SUITE)?;
    let schema = blocking(|| Schema::create(&coordinator))
        .unwrap_or_else(|e| panic!("make a test schema on the coordinator: {e}"));
    // The first connection migrates: the tables, the migration record and
    // the write functions land in the schema.
    let store = connect(schema.url()).await;
    store.close().await.unwrap();
    drop(store);
    blocking(|| schema.distribute(CITUS_LAYOUT, SHARDS))
        .unwrap_or_else(|e| panic!("distribute {}: {e}", schema.name()));
    Some(schema)
}

/// A store on a fresh distributed schema, and the schema (dropped last).
async fn citus_store() -> Option<(PostgresStore, Schema)> {
    let schema = distributed_schema().await?;
    let store = connect(schema.url()).await;
    assert_eq!(store.layout(), Layout::Citus, "the store finds Citus");
    Some((store, schema))
}

mod suite_cases {
    use super::*;

    likekit_testing::store_suite!(optional async { citus_store().await });
}

/// A server on a fresh distributed schema, and the schema; `direct`: likes
/// and one-post reads go straight to the workers (the default), otherwise
/// all through the coordinator.
async fn http_server(direct: bool) -> Option<(common::TestServer, Schema)> {
    let schema = distributed_schema().await?;
    let server = common::TestServer::with(Config {
        database: Database::Postgres(schema.url().to_owned()),
        db_connections: 8,
        citus_direct: direct,
        ..common::test_config()
    })
    .await;
    Some((server, schema))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_seed_table_on_citus() {
    let Some((t, _schema)) = http_server(true).await else {
        return;
    };
    common::http_seed_table(&t).await;
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn http_random_likes_with_duplicates_stay_exact_on_citus() {
    random_likes_with_duplicates(true).await;
}

/// The same run with every statement through the coordinator
/// (`--citus-direct false`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn http_random_likes_stay_exact_through_the_coordinator_alone() {
    random_likes_with_duplicates(false).await;
}

async fn random_likes_with_duplicates(direct: bool) {
    let Some((t, _schema)) = http_server(direct).await else {
        return;
    };
    let t = Arc::new(t);
    common::http_random_likes_with_duplicates(
        t.clone(),
        common::RandomLikes {
            // More posts than shards: the writes land on every worker.
            posts: 12,
            tasks: 12,
            users_per_task: 4,
            ops_per_task: 30,
            rng_base: 900,
        },
    )
    .await;
    Arc::into_inner(t).unwrap().stop().await;
}

/// Straight to the worker: the store's map puts every post on the worker
/// Citus placed it on (`get_shard_id_for_distribution_column`), and a like
/// sent there is no remote command at all, where one sent to the other
/// worker is passed on as one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn likes_go_straight_to_the_worker_holding_the_post() {
    let Some((store, schema)) = citus_store().await else {
        return;
    };
    let ids: Vec<i64> = (1..=300).chain([1 << 40, i64::MAX]).collect();
    let (client, _) = client_with_notices(schema.url()).await;
    let rows = client
        .query(
            "SELECT v, n.nodename, n.nodeport \
             FROM unnest($1::bigint[]) v \
             JOIN pg_dist_placement pl \
               ON pl.shardid = get_shard_id_for_distribution_column('posts', v) \
             JOIN pg_dist_node n ON n.groupid = pl.groupid",
            &[&ids],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), ids.len());
    let mut workers = std::collections::BTreeSet::new();
    for row in &rows {
        let (id, host, port): (i64, String, i32) = (row.get(0), row.get(1), row.get(2));
        let citus = (host, u16::try_from(port).unwrap());
        let post = p(u64::try_from(id).unwrap());
        assert_eq!(store.citus_worker(post), Some(citus.clone()), "post {id}");
        workers.insert(citus);
    }
    assert!(
        workers.len() >= 2,
        "the posts spread over the workers: {workers:?}"
    );

    store.put_user(u(7), "Ana").await.unwrap();
    store.put_post(p(42)).await.unwrap();
    let (host, port) = store.citus_worker(p(42)).unwrap();
    let elsewhere = workers.iter().find(|w| w.0 != host || w.1 != port).unwrap();
    for ((host, port), remote) in [((host, port), 0), (elsewhere.clone(), 1)] {
        let url = citus::with_hosts(schema.url(), &[format!("{host}:{port}")]).unwrap();
        let (client, mut notices) = logging_remote_commands(&url).await;
        let params: [&(dyn ToSql + Sync); 4] = [&42_i64, &7_i64, &-1_i32, &1_i64];
        client
            .query_one(CITUS_STATEMENTS[0].1, &params)
            .await
            .unwrap();
        let unlike: [&(dyn ToSql + Sync); 3] = [&42_i64, &7_i64, &-1_i32];
        client
            .query_one(CITUS_STATEMENTS[1].1, &unlike)
            .await
            .unwrap();
        let issued: Vec<String> = std::iter::from_fn(|| notices.try_recv().ok())
            .filter(|notice| notice.starts_with("issuing"))
            .collect();
        println!("a like and an unlike sent to {host}:{port}: {issued:?}");
        assert_eq!(issued.len(), 2 * remote, "{host}:{port}: {issued:#?}");
    }
    suite::assert_exact(&store).await;
    store.close().await.unwrap();
}

/// The SQL of a `CITUS_STATEMENTS` entry, by name.
fn statement(what: &str) -> &'static str {
    CITUS_STATEMENTS
        .iter()
        .find(|(name, _)| *name == what)
        .unwrap_or_else(|| panic!("no statement {what:?} in CITUS_STATEMENTS"))
        .1
}

/// The like and the unlike as the store sends them straight to the worker
/// holding the post: no remote command there, and a plan made once per
/// connection and then reused (PostgreSQL's generic plan), where Citus
/// plans the plain call again on every execution. Sent to the other worker
/// (as on a stale placement map) they still count each change once, their
/// statements sent on from there to the post's worker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_calls_are_planned_once_on_the_worker_holding_the_post() {
    let Some((store, schema)) = citus_store().await else {
        return;
    };
    store.put_user(u(7), "Ana").await.unwrap();
    store.put_post(p(42)).await.unwrap();
    let (host, port) = store.citus_worker(p(42)).unwrap();
    let (client, _) = client_with_notices(schema.url()).await;
    let other = client
        .query_one(
            "SELECT nodename, nodeport FROM pg_dist_node \
             WHERE groupid <> 0 AND noderole = 'primary' AND isactive \
               AND (nodename, nodeport) <> ($1, $2) ORDER BY nodeid LIMIT 1",
            &[&host, &i32::from(port)],
        )
        .await
        .unwrap();
    let other: (String, i32) = (other.get(0), other.get(1));
    let like = statement("like, straight to the worker");
    let unlike = statement("unlike, straight to the worker");
    let calls = vec![like.to_owned(), unlike.to_owned()];
    let mut at = 0_i64;
    for ((host, port), holder) in [((host, i32::from(port)), true), (other, false)] {
        let url = citus::with_hosts(schema.url(), &[format!("{host}:{port}")]).unwrap();
        let (client, mut notices) = logging_remote_commands(&url).await;
        let (like, unlike) = (
            client.prepare(like).await.unwrap(),
            client.prepare(unlike).await.unwrap(),
        );
        // More than PostgreSQL's five custom plans before a generic one;
        // the last round counts on a hot post's shard row.
        for row in [-1_i32, -1, -1, -1, -1, -1, -1, -1, 3] {
            at += 1;
            let liked = client
                .query_one(&like, &[&42_i64, &7_i64, &row, &at])
                .await
                .unwrap();
            let unliked = client
                .query_one(&unlike, &[&42_i64, &7_i64, &row])
                .await
                .unwrap();
            assert!(liked.get::<_, bool>(0) && unliked.get::<_, bool>(0));
        }
        let issued = std::iter::from_fn(|| notices.try_recv().ok())
            .filter(|notice| notice.starts_with("issuing"))
            .count();
        let plans = client
            .query(
                "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements \
                 WHERE statement = ANY ($1)",
                &[&calls],
            )
            .await
            .unwrap();
        println!(
            "{host}:{port} (holds the post: {holder}): {issued} remote commands; plans: {:?}",
            plans
                .iter()
                .map(|row| (row.get::<_, i64>(1), row.get::<_, i64>(2)))
                .collect::<Vec<_>>()
        );
        if holder {
            assert_eq!(
                issued, 0,
                "no remote command on the worker holding the post"
            );
            assert_eq!(plans.len(), 2);
            for row in &plans {
                let generic: i64 = row.get(1);
                assert!(
                    generic > 0,
                    "planned anew each time: {}",
                    row.get::<_, String>(0)
                );
            }
        } else {
            assert!(issued > 0, "the other worker sends the statements on");
        }
    }
    let audit = suite::assert_exact(&store).await;
    assert_eq!((audit[0].count, audit[0].version), (0, 36));
    store.close().await.unwrap();
}

/// `/metrics` on Citus: with likes and views straight to the workers, a
/// pool per worker the placement map names (`worker:HOST:PORT`, each of
/// `--db-connections`) beside the store's own (`main`); through the
/// coordinator alone, `main` only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_report_a_pool_per_worker() {
    for direct in [true, false] {
        let Some((t, schema)) = http_server(direct).await else {
            return;
        };
        t.setup(&[(7, "Ana")], &[42]).await;
        assert_eq!(t.like(7, 42).await.status(), reqwest::StatusCode::OK);
        let (client, _) = client_with_notices(schema.url()).await;
        let rows = client
            .query(
                "SELECT DISTINCT n.nodename, n.nodeport \
                 FROM pg_dist_shard s \
                 JOIN pg_dist_placement p ON p.shardid = s.shardid \
                 JOIN pg_dist_node n ON n.groupid = p.groupid \
                 WHERE s.logicalrelid = 'posts'::regclass \
                   AND n.noderole = 'primary' AND n.isactive",
                &[],
            )
            .await
            .unwrap();
        let mut expected = std::collections::BTreeSet::from(["main".to_owned()]);
        if direct {
            assert!(rows.len() >= 2, "posts spread over the workers");
            for row in &rows {
                let (host, port): (String, i32) = (row.get(0), row.get(1));
                expected.insert(if host.contains(':') {
                    format!("worker:[{host}]:{port}")
                } else {
                    format!("worker:{host}:{port}")
                });
            }
        }

        let text = t
            .http
            .get(t.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let prefix = "likekit_db_pool_max_connections{pool=\"";
        let reported: std::collections::BTreeMap<String, f64> = text
            .lines()
            .filter_map(|line| line.strip_prefix(prefix))
            .map(|rest| {
                let (pool, value) = rest.split_once("\"} ").unwrap();
                (pool.to_owned(), value.parse().unwrap())
            })
            .collect();
        assert_eq!(
            reported
                .keys()
                .cloned()
                .collect::<std::collections::BTreeSet<_>>(),
            expected,
            "direct {direct}:\n{text}"
        );
        for (pool, max) in &reported {
            assert_eq!(*max, 8.0, "{pool}: --db-connections");
            for series in [
                format!("likekit_db_pool_connections{{pool=\"{pool}\",state=\"idle\"}} "),
                format!("likekit_db_pool_connections{{pool=\"{pool}\",state=\"in_use\"}} "),
                format!("likekit_db_pool_waiting{{pool=\"{pool}\"}} "),
            ] {
                assert!(text.contains(&series), "{series} in\n{text}");
            }
        }
        t.stop().await;
    }
}

/// Servers may connect to the workers instead of the coordinator (each
/// connection to a random one): the workers see the schema version and
/// migrate nothing, likes run where their post lives or go on to the worker
/// that holds it, and everything stays exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_server_on_the_workers() {
    let Some(schema) = distributed_schema().await else {
        return;
    };
    let workers = blocking(|| schema.workers_url()).unwrap();
    let store = connect(&workers).await;
    assert_eq!(store.layout(), Layout::Citus);
    store.close().await.unwrap();
    drop(store);
    let t = Arc::new(
        common::TestServer::with(Config {
            database: Database::Postgres(workers),
            db_connections: 8,
            ..common::test_config()
        })
        .await,
    );
    common::http_seed_table(&t).await;
    common::http_random_likes_with_duplicates(
        t.clone(),
        common::RandomLikes {
            posts: 12,
            tasks: 8,
            users_per_task: 4,
            ops_per_task: 20,
            rng_base: 700,
        },
    )
    .await;
    Arc::into_inner(t).unwrap().stop().await;
}

/// One-post views (each post on whichever worker holds it) and a feed read
/// across every shard answer 200 with the right hearts, counts and friends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_and_feed_reads_on_citus() {
    let Some((t, _schema)) = http_server(true).await else {
        return;
    };
    let posts: Vec<u64> = (1..=24).collect();
    t.setup(&[(1, "Ana"), (2, "Ben"), (3, "Cy")], &posts).await;
    t.admin_client
        .set_friends(u(1), &[u(2), u(3)])
        .await
        .unwrap();
    // Ben likes the even posts, Cy every third; Ana likes post 5.
    for &post in &posts {
        if post % 2 == 0 {
            common::ok_json::<LikeState>(t.like(2, post).await).await;
        }
        if post % 3 == 0 {
            common::ok_json::<LikeState>(t.like(3, post).await).await;
        }
    }
    common::ok_json::<LikeState>(t.like(1, 5).await).await;
    for &post in &posts {
        let view: PostLikes = common::ok_json(t.view(1, post).await).await;
        let mut friends = Vec::new();
        // Newest first: Cy liked after Ben.
        if post % 3 == 0 {
            friends.push("Cy".to_owned());
        }
        if post % 2 == 0 {
            friends.push("Ben".to_owned());
        }
        let count = friends.len() as u64 + u64::from(post == 5);
        assert_eq!(
            (view.count, view.liked_by_me, view.friends),
            (count, post == 5, friends),
            "post {post}"
        );
    }
    let list = posts
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let response = t
        .as_user(1, reqwest::Method::GET, &format!("/likes?posts={list},999"))
        .send()
        .await
        .unwrap();
    let feed: likekit_server::wire::BatchLikes = common::ok_json(response).await;
    assert_eq!(feed.posts.len(), posts.len(), "unknown posts are left out");
    for &post in &posts {
        let view = &feed.posts[&p(post)];
        assert_eq!(view.liked_by_me, post == 5, "post {post}");
        assert_eq!(
            view.count,
            u64::from(post % 2 == 0) + u64::from(post % 3 == 0) + u64::from(post == 5),
            "post {post}"
        );
    }
    t.stop().await;
}

/// A seed past the size where the friends table's keys are dropped and
/// added back (one `ALTER TABLE` per key on Citus), with likes on many
/// posts (no `FOR UPDATE` across shards), loads once and stays exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_seed_on_citus() {
    const USERS: u64 = 260;
    const FRIENDS: u64 = 200;
    let Some((store, _schema)) = citus_store().await else {
        return;
    };
    let seed = Seed {
        users: (1..=USERS)
            .map(|id| SeedUser {
                id: u(id),
                name: format!("User {id}"),
                friends: (1..=FRIENDS).map(|k| u((id + k - 1) % USERS + 1)).collect(),
            })
            .collect(),
        posts: (1..=40)
            .map(|post| SeedPost {
                id: p(post),
                likers: (1..=post * 3).map(|user| u(user % USERS + 1)).collect(),
            })
            .collect(),
    };
    store.seed(&seed).await.unwrap();
    store.seed(&seed).await.unwrap();
    assert_eq!(store.friends(u(5)).await.unwrap().len() as u64, FRIENDS);
    let audit = suite::assert_exact(&store).await;
    assert_eq!(audit.len(), 40);
    for post in &audit {
        let likers = (post.post.get() * 3).min(USERS);
        assert_eq!((post.count, post.version), (likers, likers), "{post:?}");
    }
    let top = store.post(p(40)).await.unwrap().unwrap();
    assert_eq!(
        top.recent_likers.first(),
        Some(&u(121)),
        "the last liker listed first"
    );
    store.close().await.unwrap();
}

/// A database laid out on Citus by an older server (schema version 1, its
/// three tables distributed) migrates when a newer server starts: the
/// shard-row counts are filled in from the rows already there, the write
/// functions are made, and once they are distributed too, writes are exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_distributed_schema_migrates() {
    let Some(coordinator) = citus::coordinator_or_skip(SUITE) else {
        return;
    };
    let schema = blocking(|| Schema::create(&coordinator)).unwrap();
    let (version, first) = POSTGRES_MIGRATIONS[0];
    assert_eq!(version, 1);
    blocking(|| {
        schema.psql(&[
            first,
            "CREATE TABLE likekit_schema (version integer PRIMARY KEY, \
             applied_at timestamptz NOT NULL DEFAULT now())",
            "INSERT INTO likekit_schema (version) VALUES (1)",
        ])?;
        // The tables as the older layout distributed them.
        schema.distribute(&CITUS_LAYOUT[..5], SHARDS)?;
        // A post that was hot: its own row and two shard rows (5 likes).
        schema.psql(&[
            "INSERT INTO posts (id, count, version) VALUES (1, 2, 2), (2, 0, 0)",
            "INSERT INTO likes SELECT 1, u FROM generate_series(1, 5) u",
            "INSERT INTO post_count_shards (post_id, shard, count, version) \
             VALUES (1, 0, 1, 1), (1, 3, 2, 2)",
        ])
    })
    .unwrap();

    let store = connect(schema.url()).await;
    let latest = POSTGRES_MIGRATIONS.last().unwrap().0;
    assert_eq!(store.schema_version().await.unwrap(), latest);
    store.close().await.unwrap();
    drop(store);
    let shard_rows =
        blocking(|| schema.psql(&["SELECT id, shard_rows FROM posts ORDER BY id"])).unwrap();
    assert_eq!(
        shard_rows.trim(),
        "1|2\n2|0",
        "filled in from the shard rows"
    );
    blocking(|| schema.distribute(&CITUS_LAYOUT[5..], SHARDS)).unwrap();

    let store = connect(schema.url()).await;
    assert_eq!(store.layout(), Layout::Citus);
    let outcome = store.like(u(6), p(1)).await.unwrap();
    assert_eq!((outcome.state.count, outcome.state.version), (6, 6));
    let outcome = store.unlike(u(3), p(1)).await.unwrap();
    assert_eq!((outcome.state.count, outcome.state.version), (5, 7));
    store.like(u(1), p(2)).await.unwrap();
    let audit = suite::assert_exact(&store).await;
    assert_eq!(
        audit.iter().map(|post| post.count).collect::<Vec<_>>(),
        [5, 1]
    );
    store.close().await.unwrap();
}

/// A client on `url` whose server notices (Citus's "issuing …" lines when
/// `citus.log_remote_commands` is on) arrive on the returned channel, in
/// order, before the result of the statement that caused them.
async fn client_with_notices(
    url: &str,
) -> (
    tokio_postgres::Client,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let (client, mut connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let (sender, notices) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(message) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
            match message {
                Ok(AsyncMessage::Notice(notice)) => {
                    let _ = sender.send(notice.message().to_owned());
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    });
    (client, notices)
}

/// A connection to `url` whose notices list the commands Citus sends on
/// to other nodes (`citus.log_remote_commands`), none listed yet.
async fn logging_remote_commands(
    url: &str,
) -> (
    tokio_postgres::Client,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let (client, mut notices) = client_with_notices(url).await;
    client
        .batch_execute("SET citus.log_remote_commands = on")
        .await
        .unwrap();
    while notices.try_recv().is_ok() {}
    (client, notices)
}

/// The parameters each statement of `CITUS_STATEMENTS` gets here: post 42
/// (liked by user 7), user 7, the post's own row.
fn parameters(what: &str) -> Vec<Box<dyn ToSql + Sync>> {
    let post: i64 = 42;
    let user: i64 = 7;
    match what {
        "like" => vec![
            Box::new(post),
            Box::new(8_i64),
            Box::new(-1_i32),
            Box::new(1_i64),
        ],
        "unlike" => vec![Box::new(post), Box::new(user), Box::new(-1_i32)],
        "view: own row" => vec![Box::new(post), Box::new(vec![user])],
        "view: post" => vec![Box::new(post)],
        "view: friends" => vec![Box::new(user)],
        "feed: own rows" => vec![Box::new(user), Box::new(vec![post])],
        other => panic!("no parameters for the statement {other:?}: add them here"),
    }
}

/// Every statement of a like, an unlike and a one-post view (and a feed read
/// of one post) is router-planned to one task; a like and an unlike, normal
/// or hot, changed or not, cost one command from the coordinator, sent to
/// the one worker that holds the post, and nothing else (no two-phase
/// commit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn likes_unlikes_and_views_are_router_planned_to_one_task() {
    let Some((store, schema)) = citus_store().await else {
        return;
    };
    store.put_user(u(7), "Ana").await.unwrap();
    store.put_user(u(8), "Ben").await.unwrap();
    store.set_friends(u(7), &[u(8)]).await.unwrap();
    store.put_post(p(42)).await.unwrap();
    store.like(u(7), p(42)).await.unwrap();

    let (client, mut notices) = client_with_notices(schema.url()).await;
    // The calls sent straight to a worker are checked there
    // (`direct_calls_are_planned_once_on_the_worker_holding_the_post`).
    let through_the_coordinator = CITUS_STATEMENTS
        .iter()
        .filter(|(what, _)| !what.ends_with("straight to the worker"));
    for (what, sql) in through_the_coordinator {
        let params = parameters(what);
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
        let plan: Vec<String> = client
            .query(&format!("EXPLAIN {sql}"), &refs)
            .await
            .unwrap_or_else(|e| panic!("EXPLAIN {what}: {e}"))
            .iter()
            .map(|row| row.get(0))
            .collect();
        let plan = plan.join("\n");
        println!("{what}:\n{plan}\n");
        let tasks = plan
            .lines()
            .find_map(|line| line.trim().strip_prefix("Task Count: "));
        assert_eq!(tasks, Some("1"), "{what} is not one task:\n{plan}");
    }

    client
        .batch_execute("SET citus.log_remote_commands = on")
        .await
        .unwrap();
    while notices.try_recv().is_ok() {}
    // (what, like or unlike, user, row); post 42 throughout.
    let calls = [
        ("a like", true, 9_i64, -1_i32),
        ("the same like again", true, 9, -1),
        ("a hot post's like (shard row 3)", true, 10, 3),
        ("a hot post's unlike", false, 10, 5),
        ("an unlike", false, 9, -1),
        ("a stray unlike", false, 11, -1),
    ];
    for (at, (what, like, user, row)) in (1_i64..).zip(calls) {
        let (sql, params): (&str, Vec<Box<dyn ToSql + Sync>>) = if like {
            let params: Vec<Box<dyn ToSql + Sync>> = vec![
                Box::new(42_i64),
                Box::new(user),
                Box::new(row),
                Box::new(at),
            ];
            (CITUS_STATEMENTS[0].1, params)
        } else {
            let params: Vec<Box<dyn ToSql + Sync>> =
                vec![Box::new(42_i64), Box::new(user), Box::new(row)];
            (CITUS_STATEMENTS[1].1, params)
        };
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
        let row = client.query_one(sql, &refs).await.unwrap();
        let changed: bool = row.get(0);
        let mut issued = Vec::new();
        while let Ok(notice) = notices.try_recv() {
            if notice.starts_with("issuing") {
                issued.push(notice);
            }
        }
        println!("{what} (changed: {changed}): {issued:?}");
        assert_eq!(issued.len(), 1, "{what}: {issued:#?}");
        assert!(issued[0].contains("likekit_"), "{what}: {issued:#?}");
    }
    let audit = suite::assert_exact(&store).await;
    assert_eq!((audit[0].count, audit[0].version), (1, 5));
    store.close().await.unwrap();
}

/// A schema with the store's tables made on the coordinator (a store
/// connected and closed), not distributed; `None` when skipped.
async fn undistributed_schema() -> Option<Schema> {
    let coordinator = citus::coordinator_or_skip(SUITE)?;
    let schema = blocking(|| Schema::create(&coordinator))
        .unwrap_or_else(|e| panic!("make a test schema on the coordinator: {e}"));
    let store = connect(schema.url()).await;
    store.close().await.unwrap();
    drop(store);
    Some(schema)
}

/// The README's order: a server starts against the cluster (making the
/// schema), then the layout is applied while it runs. Straight-to-worker
/// routing starts at the next reading of the placement map (every 30 s),
/// without a restart; until then everything goes through the coordinator.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_routing_starts_when_the_layout_is_applied_after_the_start() {
    let Some(schema) = undistributed_schema().await else {
        return;
    };
    let store = connect(schema.url()).await;
    store.put_user(u(7), "Ana").await.unwrap();
    store.put_post(p(42)).await.unwrap();
    store.like(u(7), p(42)).await.unwrap();
    assert_eq!(store.citus_worker(p(42)), None, "nothing distributed yet");
    blocking(|| schema.distribute(CITUS_LAYOUT, SHARDS))
        .unwrap_or_else(|e| panic!("distribute {}: {e}", schema.name()));
    let started = std::time::Instant::now();
    while store.citus_worker(p(42)).is_none() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(45),
            "direct routing never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    store.like(u(8), p(42)).await.unwrap();
    store.unlike(u(7), p(42)).await.unwrap();
    assert_eq!(store.liked(u(8), &[p(42)]).await.unwrap(), [true]);
    let post = store.post(p(42)).await.unwrap().unwrap();
    assert_eq!((post.count, post.version), (1, 3));
    suite::assert_exact(&store).await;
    store.close().await.unwrap();
}

/// `posts` made a reference table (its one shard has no hash range): the
/// store starts, places no post on a worker, and works through the
/// coordinator.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn posts_as_a_reference_table_start_without_direct_routing() {
    let Some(schema) = undistributed_schema().await else {
        return;
    };
    blocking(|| schema.distribute(&["SELECT create_reference_table('posts')"], SHARDS))
        .unwrap_or_else(|e| panic!("make posts a reference table: {e}"));
    let store = connect(schema.url()).await;
    store.put_post(p(42)).await.unwrap();
    assert_eq!(store.citus_worker(p(42)), None);
    store.like(u(7), p(42)).await.unwrap();
    assert_eq!(store.liked(u(7), &[p(42)]).await.unwrap(), [true]);
    assert_eq!(store.post(p(42)).await.unwrap().unwrap().count, 1);
    store.close().await.unwrap();
}

/// A TCP proxy on a loopback port to `upstream`; dropping it closes its
/// listener and every connection through it (a path to one node cut).
struct Proxy {
    port: u16,
    accept: tokio::task::JoinHandle<()>,
    connections: Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Proxy {
    async fn start(upstream: String) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(std::sync::Mutex::new(Vec::new()));
        let accept = tokio::spawn({
            let connections = connections.clone();
            async move {
                while let Ok((mut inbound, _)) = listener.accept().await {
                    let upstream = upstream.clone();
                    let connection = tokio::spawn(async move {
                        if let Ok(mut outbound) = tokio::net::TcpStream::connect(upstream).await {
                            let _ =
                                tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        }
                    });
                    connections.lock().unwrap().push(connection);
                }
            }
        });
        Self {
            port,
            accept,
            connections,
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        for connection in self.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }
}

/// With likes and views straight to the workers, readiness still asks the
/// node `--db` names (friends, feeds and admin go there): once the path to
/// the coordinator is cut, `ready` fails although the workers answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_asks_the_coordinator_too() {
    let Some(schema) = distributed_schema().await else {
        return;
    };
    let given: tokio_postgres::Config = schema.url().parse().unwrap();
    let tokio_postgres::config::Host::Tcp(host) = &given.get_hosts()[0] else {
        panic!("the coordinator URL names a TCP host");
    };
    let port = given.get_ports().first().copied().unwrap_or(5432);
    let proxy = Proxy::start(format!("{host}:{port}")).await;
    let url = citus::with_hosts(schema.url(), &[format!("127.0.0.1:{}", proxy.port)]).unwrap();
    let store = connect(&url).await;
    let (_, worker) = store.citus_worker(PostId::MIN).expect("direct routing");
    assert_ne!(worker, proxy.port, "the probe's post lives on a worker");
    store.ready().await.unwrap();
    drop(proxy);
    let cut = tokio::time::timeout(std::time::Duration::from_secs(20), store.ready()).await;
    assert!(
        matches!(cut, Ok(Err(_))),
        "not ready without the coordinator: {cut:?}"
    );
}
