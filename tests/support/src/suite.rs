//! The behaviour every `likekit_server::store::Store` backend must have, as
//! a reusable test suite.
//!
//! Each case is an async function that takes a fresh, empty store and
//! panics on the first broken rule. [`store_suite!`](crate::store_suite)
//! stamps the whole list out as `#[tokio::test]`s for one backend:
//!
//! ```ignore
//! // server-mock/tests/store_postgres.rs
//! likekit_testing::store_suite!(async { fresh_store().await });
//! ```
//!
//! The cases write ids as plain numbers through [`p`] and [`u`]; the store
//! only ever sees valid [`PostId`]s and [`UserId`]s (the types leave no
//! out-of-range id to test).

use std::{collections::BTreeMap, sync::Arc};

use likekit_proto::{
    LikeState, PostId, UserId,
    admin::{Seed, SeedPost, SeedUser},
};
use likekit_server::store::{
    HotPosts, MAX_FRIENDS, PostAudit, PostSnapshot, RECENT_LIKERS, Store, StoreError, Upsert,
    WriteOutcome,
};

/// Expands to one `#[tokio::test]` per case of [`suite`](crate::suite),
/// each with a fresh store made by the given async expression (evaluated
/// once per test). The calling crate needs `tokio` with the `macros` and
/// `rt-multi-thread` features.
///
/// ```ignore
/// likekit_testing::store_suite!(async {
///     likekit_server::store::SqliteStore::open(Default::default()).expect("open")
/// });
/// ```
///
/// For a backend whose store comes with something to clean up afterwards
/// (a database of its own), `guarded` takes an expression giving
/// `(store, guard)`: the guard lives until the store is closed, then drops.
///
/// ```ignore
/// likekit_testing::store_suite!(guarded async { fresh_store().await });
/// ```
///
/// For a backend that may be absent (an external cluster), `optional`
/// takes an expression giving `Option<(store, guard)>`: on `None` the test
/// returns at once (the expression says why it skipped); otherwise the
/// guard (say, the test's schema) lives until the store is closed.
///
/// ```ignore
/// likekit_testing::store_suite!(optional async { citus_store().await });
/// ```
#[macro_export]
macro_rules! store_suite {
    (optional $make:expr) => {
        $crate::store_suite!(@all optional $make);
    };
    (guarded $make:expr) => {
        $crate::store_suite!(@all guarded $make);
    };
    ($make:expr) => {
        $crate::store_suite!(@all always $make);
    };
    (@all $mode:ident $make:expr) => {
        $crate::store_suite!(@cases $mode $make;
            seed_table,
            unknown_posts,
            largest_ids,
            recent_likers_newest_first,
            liked_reads_own_rows,
            post_seen_by_is_post_and_own_row,
            friends_are_directed_with_names,
            set_friends_checks_users,
            put_user_and_post_are_upserts,
            reset_keeps_users_and_posts,
            seed_loads_once,
            concurrent_duplicates_stay_exact,
            group_commit_answers_each_write,
            close_commits_then_refuses,
            hot_post_concurrent_likes_and_unlikes,
            hot_post_duplicates_stay_exact,
            hot_post_cools_and_stays_exact
        );
    };
    (@cases $mode:ident $make:expr; $($case:ident),* $(,)?) => {
        $(
            $crate::store_suite!(@case $mode $make; $case);
        )*
    };
    (@case always $make:expr; $case:ident) => {
        $crate::store_suite!(@case guarded async { ($make.await, ()) }; $case);
    };
    (@case guarded $make:expr; $case:ident) => {
        $crate::store_suite!(@case optional async { ::std::option::Option::Some($make.await) }; $case);
    };
    (@case optional $make:expr; $case:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $case() {
            let ::std::option::Option::Some((store, guard)) = $make.await else {
                return;
            };
            let store: ::std::sync::Arc<dyn ::likekit_server::store::Store> =
                ::std::sync::Arc::new(store);
            $crate::suite::$case(store.clone()).await;
            ::likekit_server::store::Store::close(&*store)
                .await
                .expect("close the store");
            drop(store);
            drop(guard);
        }
    };
}

/// Post `id`; panics outside `1..=i64::MAX` (a test's own mistake).
pub fn p(id: u64) -> PostId {
    PostId::new(id).unwrap_or_else(|e| panic!("{e}"))
}

/// User `id`; panics outside `1..=i64::MAX` (a test's own mistake).
pub fn u(id: u64) -> UserId {
    UserId::new(id).unwrap_or_else(|e| panic!("{e}"))
}

/// Posts by number.
pub fn posts<const N: usize>(ids: [u64; N]) -> [PostId; N] {
    ids.map(p)
}

/// Users by number.
pub fn users<const N: usize>(ids: [u64; N]) -> [UserId; N] {
    ids.map(u)
}

fn named<const N: usize>(friends: [(u64, &str); N]) -> Vec<(UserId, String)> {
    friends
        .into_iter()
        .map(|(id, name)| (u(id), name.to_owned()))
        .collect()
}

/// Panics unless every post's count equals its number of like rows.
pub async fn assert_exact(store: &dyn Store) -> Vec<PostAudit> {
    let audit = store.audit().await.expect("audit");
    for post in &audit {
        assert_eq!(
            post.count, post.rows,
            "post {} has count {} but {} like rows",
            post.post, post.count, post.rows
        );
    }
    audit
}

fn state(count: u64, liked_by_me: bool, version: u64) -> LikeState {
    LikeState {
        count,
        liked_by_me,
        version,
    }
}

/// The seed table: first like +1; the same like again changes nothing;
/// unlike -1; unlike again changes nothing; an unlike by someone who never
/// liked changes nothing; a like later +1. `version` moves only on changes.
pub async fn seed_table(store: Arc<dyn Store>) {
    store.put_post(p(42)).await.expect("post");
    let steps: [(u64, bool, LikeState, bool); 6] = [
        (7, true, state(1, true, 1), true),
        (7, true, state(1, true, 1), false),
        (7, false, state(0, false, 2), true),
        (7, false, state(0, false, 2), false),
        (8, false, state(0, false, 2), false),
        (7, true, state(1, true, 3), true),
    ];
    for (step, (user, like, expected, changed)) in steps.into_iter().enumerate() {
        let outcome = if like {
            store.like(u(user), p(42)).await
        } else {
            store.unlike(u(user), p(42)).await
        }
        .expect("write");
        assert_eq!(outcome.state, expected, "step {step}");
        assert_eq!(outcome.changed, changed, "step {step}");
    }
    let post = store.post(p(42)).await.expect("read").expect("exists");
    assert_eq!((post.count, post.version), (1, 3));
    assert_eq!(post.recent_likers, users([7]));
    assert_exact(&*store).await;
}

/// Writes to unknown posts fail with `PostNotFound` and change nothing.
pub async fn unknown_posts(store: Arc<dyn Store>) {
    store.put_post(p(1)).await.expect("post");
    assert_eq!(
        store.like(u(7), p(999)).await.map(|o| o.state),
        Err(StoreError::PostNotFound(p(999)))
    );
    assert_eq!(
        store.unlike(u(7), p(999)).await.map(|o| o.state),
        Err(StoreError::PostNotFound(p(999)))
    );
    assert_eq!(store.post(p(999)).await.expect("read"), None);
    assert_eq!(
        store.liked(u(7), &posts([999, 1])).await.expect("read"),
        [false, false]
    );
    let audit = assert_exact(&*store).await;
    assert_eq!(audit.len(), 1, "no post was created by the failed writes");
}

/// The largest id, `i64::MAX`, works for users and posts alike.
pub async fn largest_ids(store: Arc<dyn Store>) {
    store.put_post(PostId::MAX).await.expect("largest post id");
    store
        .put_user(UserId::MAX, "Max")
        .await
        .expect("largest user id");
    let outcome = store.like(UserId::MAX, PostId::MAX).await.expect("like");
    assert_eq!(outcome.state, state(1, true, 1));
    let post = store
        .post(PostId::MAX)
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(post.recent_likers, [UserId::MAX]);
    assert_eq!(
        store
            .liked(UserId::MAX, &[PostId::MAX])
            .await
            .expect("read"),
        [true]
    );
    assert_exact(&*store).await;
}

/// The recent likers are newest first, at most [`RECENT_LIKERS`], and an
/// unlike removes its user.
pub async fn recent_likers_newest_first(store: Arc<dyn Store>) {
    store.put_post(p(5)).await.expect("post");
    let total = RECENT_LIKERS as u64 + 20;
    let mut last = None;
    for user in 1..=total {
        last = Some(store.like(u(user), p(5)).await.expect("like"));
    }
    let expected: Vec<UserId> = (21..=total).rev().map(u).collect();
    let post = store.post(p(5)).await.expect("read").expect("exists");
    assert_eq!(post.count, total);
    assert_eq!(post.recent_likers, expected);
    if let Some(snapshot) = last.and_then(|o| o.snapshot) {
        assert_eq!(*snapshot, post, "a write's snapshot is the post after it");
    }

    store.unlike(u(total), p(5)).await.expect("unlike newest");
    store
        .unlike(u(50), p(5))
        .await
        .expect("unlike a middle one");
    store
        .unlike(u(3), p(5))
        .await
        .expect("unlike one already out of the list");
    let post = store.post(p(5)).await.expect("read").expect("exists");
    assert_eq!(post.count, total - 3);
    assert_eq!(post.recent_likers.first(), Some(&u(total - 1)));
    assert!(!post.recent_likers.contains(&u(total)));
    assert!(!post.recent_likers.contains(&u(50)));
    assert_eq!(post.recent_likers.len(), RECENT_LIKERS - 2);

    store.like(u(3), p(5)).await.expect("like again");
    let post = store.post(p(5)).await.expect("read").expect("exists");
    assert_eq!(post.recent_likers.first(), Some(&u(3)));
    assert_exact(&*store).await;
}

/// `liked` answers from the user's own rows, for many posts at once.
pub async fn liked_reads_own_rows(store: Arc<dyn Store>) {
    for post in 1..=3 {
        store.put_post(p(post)).await.expect("post");
    }
    store.like(u(7), p(2)).await.expect("like");
    store.like(u(8), p(3)).await.expect("like");
    assert_eq!(
        store.liked(u(7), &posts([1, 2, 3])).await.expect("read"),
        [false, true, false]
    );
    assert_eq!(
        store.liked(u(8), &posts([3, 2, 3])).await.expect("read"),
        [true, false, true]
    );
    store.unlike(u(7), p(2)).await.expect("unlike");
    assert_eq!(store.liked(u(7), &posts([2])).await.expect("read"), [false]);
    assert!(
        store
            .liked(u(7), &posts([]))
            .await
            .expect("read")
            .is_empty()
    );
}

fn sorted(mut friends: Vec<(UserId, String)>) -> Vec<(UserId, String)> {
    friends.sort();
    friends
}

/// A friend list is the user's own (directed), with current names.
pub async fn friends_are_directed_with_names(store: Arc<dyn Store>) {
    for (id, name) in [(1, "Ana"), (2, "Ben"), (3, "Cy")] {
        store.put_user(u(id), name).await.expect("user");
    }
    store
        .set_friends(u(1), &users([2, 3, 2]))
        .await
        .expect("friends");
    assert_eq!(
        sorted(store.friends(u(1)).await.expect("read")),
        named([(2, "Ben"), (3, "Cy")])
    );
    assert!(
        store.friends(u(2)).await.expect("read").is_empty(),
        "directed"
    );
    assert!(
        store.friends(u(99)).await.expect("read").is_empty(),
        "unknown user"
    );

    store.put_user(u(2), "Benny").await.expect("rename");
    assert_eq!(
        sorted(store.friends(u(1)).await.expect("read")),
        named([(2, "Benny"), (3, "Cy")])
    );
    store.set_friends(u(1), &users([3])).await.expect("replace");
    assert_eq!(store.friends(u(1)).await.expect("read"), named([(3, "Cy")]));
    store.set_friends(u(1), &users([])).await.expect("clear");
    assert!(store.friends(u(1)).await.expect("read").is_empty());
}

/// `set_friends` needs the user and every friend to exist, and changes
/// nothing when one does not.
pub async fn set_friends_checks_users(store: Arc<dyn Store>) {
    store.put_user(u(1), "Ana").await.expect("user");
    store.put_user(u(2), "Ben").await.expect("user");
    store.set_friends(u(1), &users([2])).await.expect("friends");
    assert_eq!(
        store.set_friends(u(1), &users([2, 99])).await,
        Err(StoreError::UserNotFound(u(99)))
    );
    assert_eq!(
        store.friends(u(1)).await.expect("read"),
        named([(2, "Ben")])
    );
    assert_eq!(
        store.set_friends(u(98), &users([1])).await,
        Err(StoreError::UserNotFound(u(98)))
    );
    assert!(matches!(
        store.set_friends(u(1), &vec![u(2); MAX_FRIENDS + 1]).await,
        Err(StoreError::Invalid(_))
    ));
}

/// Creating a user or post twice is not an error; a post keeps its likes;
/// a user's name reads back as last put.
pub async fn put_user_and_post_are_upserts(store: Arc<dyn Store>) {
    assert_eq!(store.user_name(u(1)).await, Ok(None));
    assert_eq!(store.put_user(u(1), "Ana").await, Ok(Upsert::Created));
    assert_eq!(store.user_name(u(1)).await, Ok(Some("Ana".to_owned())));
    assert_eq!(store.put_user(u(1), "Ana B").await, Ok(Upsert::Updated));
    assert_eq!(store.user_name(u(1)).await, Ok(Some("Ana B".to_owned())));
    // Refused by the rule on every backend (PostgreSQL's `text` cannot
    // even hold U+0000), never a storage error.
    for bad in ["   ", "A\0B", "Ana\n"] {
        assert!(
            matches!(store.put_user(u(2), bad).await, Err(StoreError::Invalid(_))),
            "{bad:?}"
        );
    }
    assert_eq!(
        store.user_name(u(2)).await,
        Ok(None),
        "a refused name makes no user"
    );
    assert_eq!(store.put_post(p(9)).await, Ok(Upsert::Created));
    store.like(u(1), p(9)).await.expect("like");
    assert_eq!(store.put_post(p(9)).await, Ok(Upsert::Updated));
    let post = store.post(p(9)).await.expect("read").expect("exists");
    assert_eq!((post.count, post.version), (1, 1));
}

/// `reset` drops likes and zeroes posts but keeps users, friends and posts.
pub async fn reset_keeps_users_and_posts(store: Arc<dyn Store>) {
    store.put_user(u(1), "Ana").await.expect("user");
    store.put_user(u(2), "Ben").await.expect("user");
    store.set_friends(u(1), &users([2])).await.expect("friends");
    for post in [10, 11] {
        store.put_post(p(post)).await.expect("post");
        store.like(u(1), p(post)).await.expect("like");
        store.like(u(2), p(post)).await.expect("like");
    }
    store.reset().await.expect("reset");
    let audit = assert_exact(&*store).await;
    assert_eq!(audit.len(), 2);
    for post in audit {
        assert_eq!((post.count, post.rows, post.version), (0, 0, 0));
    }
    assert_eq!(
        store.friends(u(1)).await.expect("read"),
        named([(2, "Ben")])
    );
    assert_eq!(
        store.liked(u(1), &posts([10, 11])).await.expect("read"),
        [false, false]
    );
    assert!(
        store
            .post(p(10))
            .await
            .expect("read")
            .expect("kept")
            .recent_likers
            .is_empty()
    );
    assert_eq!(
        store.like(u(2), p(10)).await.expect("like").state,
        state(1, true, 1)
    );
}

/// A seed document loads users, friends, posts and likes (oldest first),
/// and loading it again changes nothing.
pub async fn seed_loads_once(store: Arc<dyn Store>) {
    let seed = Seed {
        users: vec![
            SeedUser {
                id: u(1),
                name: "Ana".into(),
                friends: vec![u(2)],
            },
            SeedUser {
                id: u(2),
                name: "Ben".into(),
                friends: users([1, 3]).to_vec(),
            },
            SeedUser {
                id: u(3),
                name: "Cy".into(),
                friends: vec![],
            },
        ],
        posts: vec![
            SeedPost {
                id: p(42),
                likers: users([1, 3, 2, 3]).to_vec(),
            },
            SeedPost {
                id: p(43),
                likers: vec![],
            },
        ],
    };
    store.seed(&seed).await.expect("seed");
    store.seed(&seed).await.expect("seed again");
    let post = store.post(p(42)).await.expect("read").expect("exists");
    assert_eq!((post.count, post.version), (3, 3));
    assert_eq!(post.recent_likers, users([2, 3, 1]));
    assert_eq!(
        store
            .post(p(43))
            .await
            .expect("read")
            .expect("exists")
            .count,
        0
    );
    assert_eq!(sorted(store.friends(u(2)).await.expect("read")).len(), 2);
    assert_eq!(
        store.friends(u(1)).await.expect("read"),
        named([(2, "Ben")])
    );
    assert_exact(&*store).await;

    let broken = Seed {
        users: vec![SeedUser {
            id: u(4),
            name: "Di".into(),
            friends: vec![u(77)],
        }],
        posts: vec![],
    };
    assert_eq!(
        store.seed(&broken).await,
        Err(StoreError::UserNotFound(u(77)))
    );
    assert!(
        store.friends(u(4)).await.expect("read").is_empty(),
        "a failed seed leaves nothing behind"
    );
}

/// Many tasks like and unlike a few posts at random, every write delivered
/// twice at the same time; afterwards every count equals its rows and an
/// independent tally.
pub async fn concurrent_duplicates_stay_exact(store: Arc<dyn Store>) {
    const POSTS: u64 = 4;
    const TASKS: u64 = 12;
    const USERS_PER_TASK: u64 = 5;
    const OPS_PER_TASK: usize = 120;
    for post in 1..=POSTS {
        store.put_post(p(post)).await.expect("post");
    }
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            // Each user belongs to one task, so the task knows its final state.
            let mut rng = fastrand::Rng::with_seed(task);
            let mut wants: BTreeMap<(u64, u64), bool> = BTreeMap::new();
            for _ in 0..OPS_PER_TASK {
                let user = task * USERS_PER_TASK + rng.u64(1..=USERS_PER_TASK);
                let post = rng.u64(1..=POSTS);
                let like = rng.bool();
                let write = || async {
                    if like {
                        store.like(u(user), p(post)).await
                    } else {
                        store.unlike(u(user), p(post)).await
                    }
                };
                let (a, b) = tokio::join!(write(), write());
                let (a, b) = (a.expect("write"), b.expect("duplicate"));
                assert_eq!(a.state.liked_by_me, like);
                assert_eq!(b.state.liked_by_me, like);
                assert!(
                    !(a.changed && b.changed),
                    "a duplicate delivery changed the post twice"
                );
                wants.insert((user, post), like);
            }
            wants
        }));
    }
    let mut tally: BTreeMap<PostId, u64> = BTreeMap::new();
    for task in tasks {
        for ((_, post), liked) in task.await.expect("task") {
            *tally.entry(p(post)).or_default() += u64::from(liked);
        }
    }
    for post in assert_exact(&*store).await {
        assert_eq!(
            post.count,
            tally.get(&post.post).copied().unwrap_or(0),
            "post {} disagrees with the tally",
            post.post
        );
    }
}

/// Concurrent writes to one post each get their own exact answer: with N
/// distinct likers the answers are exactly the counts and versions 1..=N.
/// (Not for hot posts, whose writes may run side by side on different shard
/// rows: sharding is off here; see the `hot_post_*` cases.)
pub async fn group_commit_answers_each_write(store: Arc<dyn Store>) {
    const N: u64 = 200;
    if let Some(hot) = store.hot_posts() {
        hot.set_shards(0);
    }
    store.put_post(p(1)).await.expect("post");
    let likes: Vec<_> = (1..=N)
        .map(|user| {
            let store = store.clone();
            tokio::spawn(async move { store.like(u(user), p(1)).await })
        })
        .collect();
    let mut counts = Vec::new();
    let mut versions = Vec::new();
    for like in likes {
        let outcome = like.await.expect("task").expect("like");
        assert!(outcome.changed);
        counts.push(outcome.state.count);
        versions.push(outcome.state.version);
    }
    counts.sort_unstable();
    versions.sort_unstable();
    assert_eq!(counts, (1..=N).collect::<Vec<_>>());
    assert_eq!(versions, (1..=N).collect::<Vec<_>>());

    let unlikes: Vec<_> = (1..=N)
        .map(|user| {
            let store = store.clone();
            tokio::spawn(async move { store.unlike(u(user), p(1)).await })
        })
        .collect();
    let mut counts = Vec::new();
    for unlike in unlikes {
        let outcome = unlike.await.expect("task").expect("unlike");
        assert!(outcome.changed);
        counts.push(outcome.state.count);
    }
    counts.sort_unstable();
    assert_eq!(counts, (0..N).collect::<Vec<_>>());
    let post = store.post(p(1)).await.expect("read").expect("exists");
    assert_eq!((post.count, post.version), (0, 2 * N));
    assert_exact(&*store).await;
}

/// `close` commits what was accepted; afterwards writes fail with `Closed`
/// and reads still work.
pub async fn close_commits_then_refuses(store: Arc<dyn Store>) {
    store.put_post(p(1)).await.expect("post");
    let writes: Vec<_> = (1..=50)
        .map(|user| {
            let store = store.clone();
            tokio::spawn(async move { store.like(u(user), p(1)).await })
        })
        .collect();
    store.close().await.expect("close");
    store.close().await.expect("close twice");
    let mut acknowledged = Vec::new();
    for (user, write) in (1..=50).zip(writes) {
        match write.await.expect("task") {
            Ok(_) => acknowledged.push(user),
            Err(StoreError::Closed) => {}
            Err(other) => panic!("unexpected error {other}"),
        }
    }
    let liked = store
        .liked(u(1), &posts([]))
        .await
        .expect("reads still work");
    assert!(liked.is_empty());
    for user in &acknowledged {
        assert_eq!(
            store.liked(u(*user), &posts([1])).await.expect("read"),
            [true]
        );
    }
    let post = store.post(p(1)).await.expect("read").expect("exists");
    assert_eq!(post.count, acknowledged.len() as u64);
    assert_eq!(
        store.like(u(99), p(1)).await.map(|o| o.state),
        Err(StoreError::Closed)
    );
    assert_exact(&*store).await;
}

/// `post_seen_by` (a view's read on a cache miss) answers what `post` and
/// `liked` answer: for a post the viewer likes and one they do not, an
/// unknown post, and a hot post whose count is spread over shard rows.
pub async fn post_seen_by_is_post_and_own_row(store: Arc<dyn Store>) {
    for id in [1, 2] {
        store.put_post(p(id)).await.expect("post");
    }
    for user in [7, 8] {
        store.like(u(user), p(1)).await.expect("like");
    }
    let seen = |user: u64, post: u64| {
        let store = store.clone();
        async move {
            let both = store.post_seen_by(u(user), p(post)).await.expect("read");
            let apart = match store.post(p(post)).await.expect("read") {
                Some(snapshot) => Some((
                    snapshot,
                    store.liked(u(user), &posts([post])).await.expect("read")[0],
                )),
                None => None,
            };
            assert_eq!(both, apart, "user {user}, post {post}");
            both
        }
    };
    let (post, liked) = seen(7, 1).await.expect("exists");
    assert_eq!((post.count, post.version, liked), (2, 2, true));
    assert_eq!(post.recent_likers, [u(8), u(7)]);
    assert!(!seen(9, 1).await.expect("exists").1);
    assert_eq!(seen(7, 2).await, Some((PostSnapshot::default(), false)));
    assert_eq!(seen(7, 999).await, None);

    if let Some(hot) = store.hot_posts() {
        hot.set_threshold(0);
        hot.set_shards(4);
        store.put_post(p(3)).await.expect("post");
        all_at_once(&store, 1..=40, 3, true).await;
        let audit = assert_exact(&*store).await;
        let hot_post = audit.iter().find(|a| a.post == p(3)).expect("audited");
        assert!(hot_post.shard_rows > 0, "{hot_post:?}");
        let (post, liked) = seen(5, 3).await.expect("exists");
        assert_eq!((post.count, post.version, liked), (40, 40, true));
        assert!(!seen(99, 3).await.expect("exists").1);
    }
}

fn hot_posts(store: &dyn Store) -> &HotPosts {
    store
        .hot_posts()
        .expect("the backend spreads hot posts' counts over shard rows")
}

/// Spawns `like` (or unlike) of `post` by each of `users` at once and returns
/// every answer.
async fn all_at_once(
    store: &Arc<dyn Store>,
    users: impl IntoIterator<Item = u64>,
    post: u64,
    like: bool,
) -> Vec<WriteOutcome> {
    let post = p(post);
    let writes: Vec<_> = users
        .into_iter()
        .map(|user| {
            let user = u(user);
            let store = store.clone();
            tokio::spawn(async move {
                if like {
                    store.like(user, post).await
                } else {
                    store.unlike(user, post).await
                }
            })
        })
        .collect();
    let mut outcomes = Vec::with_capacity(writes.len());
    for write in writes {
        outcomes.push(write.await.expect("task").expect("write"));
    }
    outcomes
}

/// 2,500 distinct users like one hot post at once, then all unlike it: every
/// write changes the post once, each answer is within what is possible, and
/// afterwards count == rows and the version counts every change exactly.
pub async fn hot_post_concurrent_likes_and_unlikes(store: Arc<dyn Store>) {
    const N: u64 = 2_500;
    let hot = hot_posts(&*store);
    hot.set_threshold(0);
    hot.set_shards(16);
    store.put_post(p(1)).await.expect("post");

    for outcome in all_at_once(&store, 1..=N, 1, true).await {
        assert!(outcome.changed && outcome.state.liked_by_me);
        assert!((1..=N).contains(&outcome.state.count), "{outcome:?}");
        assert!((1..=N).contains(&outcome.state.version), "{outcome:?}");
    }
    let audit = assert_exact(&*store).await;
    assert_eq!((audit[0].count, audit[0].rows, audit[0].version), (N, N, N));
    assert!(
        audit[0].shard_rows >= 2,
        "the count was spread over {} shard rows",
        audit[0].shard_rows
    );
    let post = store.post(p(1)).await.expect("read").expect("exists");
    assert_eq!((post.count, post.version), (N, N));
    assert_eq!(post.recent_likers.len(), RECENT_LIKERS);
    let mut distinct = post.recent_likers.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), RECENT_LIKERS, "each liker once");
    assert!(distinct.iter().all(|user| (1..=N).contains(&user.get())));
    assert_eq!(
        store.liked(u(N), &posts([1])).await.expect("read"),
        [true],
        "own row"
    );

    for outcome in all_at_once(&store, 1..=N, 1, false).await {
        assert!(outcome.changed && !outcome.state.liked_by_me);
        assert!(outcome.state.count < N, "{outcome:?}");
        assert!(
            (N + 1..=2 * N).contains(&outcome.state.version),
            "{outcome:?}"
        );
    }
    let audit = assert_exact(&*store).await;
    assert_eq!(
        (audit[0].count, audit[0].rows, audit[0].version),
        (0, 0, 2 * N)
    );
    let post = store.post(p(1)).await.expect("read").expect("exists");
    assert_eq!((post.count, post.version), (0, 2 * N));
    assert!(post.recent_likers.is_empty(), "{:?}", post.recent_likers);
}

/// Random likes and unlikes delivered twice at once, with every post hot.
pub async fn hot_post_duplicates_stay_exact(store: Arc<dyn Store>) {
    let hot = hot_posts(&*store);
    hot.set_threshold(0);
    hot.set_shards(8);
    concurrent_duplicates_stay_exact(store.clone()).await;
    assert!(
        store
            .audit()
            .await
            .expect("audit")
            .iter()
            .any(|post| post.shard_rows > 0),
        "hot writes went to shard rows"
    );
}

/// A post gets likes while cold, turns hot (concurrent likes and unlikes,
/// some of users listed on the post's own row), then cools: the count, the
/// version and the recent likers stay exact through every phase.
pub async fn hot_post_cools_and_stays_exact(store: Arc<dyn Store>) {
    let hot = hot_posts(&*store);
    hot.set_shards(0);
    store.put_post(p(1)).await.expect("post");
    let mut changes = 0u64;
    let check = |count: u64, changes: u64| {
        let store = store.clone();
        async move {
            let audit = assert_exact(&*store).await;
            assert_eq!((audit[0].count, audit[0].version), (count, changes));
            let post = store.post(p(1)).await.expect("read").expect("exists");
            assert_eq!((post.count, post.version), (count, changes));
            audit[0]
        }
    };

    // Cold: 150 likes on the post's own row (it lists users 150 down to 51).
    for user in 1..=150 {
        changes += u64::from(store.like(u(user), p(1)).await.expect("like").changed);
    }
    check(150, changes).await;

    // Hot: 1,000 new likes and 60 unlikes at once; users 51..=60 are listed
    // on the post's own row, 1..=50 nowhere.
    hot.set_shards(8);
    hot.set_threshold(0);
    let (likes, unlikes) = tokio::join!(
        all_at_once(&store, 151..=1_150, 1, true),
        all_at_once(&store, 1..=60, 1, false)
    );
    changes += likes.iter().chain(&unlikes).filter(|o| o.changed).count() as u64;
    assert_eq!(changes, 150 + 1_060);
    let audit = check(1_090, changes).await;
    assert!(audit.shard_rows >= 2, "{audit:?}");

    // Hot, one at a time: the newest likers come first across shard rows.
    for user in 2_001..=2_005 {
        changes += u64::from(store.like(u(user), p(1)).await.expect("like").changed);
    }
    changes += u64::from(store.unlike(u(2_003), p(1)).await.expect("unlike").changed);
    let post = store.post(p(1)).await.expect("read").expect("exists");
    assert_eq!(post.recent_likers[..4], users([2_005, 2_004, 2_002, 2_001]));
    assert!(!post.recent_likers.contains(&u(2_003)));
    check(1_094, changes).await;

    // Cooled: writes go to the post's own row again; the spread counts and
    // likers still add up.
    hot.set_shards(0);
    for user in 3_001..=3_003 {
        changes += u64::from(store.like(u(user), p(1)).await.expect("like").changed);
    }
    for user in [2_004, 151, 700] {
        changes += u64::from(store.unlike(u(user), p(1)).await.expect("unlike").changed);
    }
    let post = store.post(p(1)).await.expect("read").expect("exists");
    assert_eq!(
        post.recent_likers[..6],
        users([3_003, 3_002, 3_001, 2_005, 2_002, 2_001])
    );
    check(1_094, changes).await;

    // Everyone left unlikes at once.
    let left: Vec<u64> = (61..=150)
        .chain(152..=1_150)
        .chain([2_001, 2_002, 2_005, 3_001, 3_002, 3_003])
        .filter(|&user| user != 700)
        .collect();
    assert_eq!(left.len(), 1_094);
    let outcomes = all_at_once(&store, left, 1, false).await;
    assert!(outcomes.iter().all(|o| o.changed));
    changes += outcomes.len() as u64;
    let audit = check(0, changes).await;
    assert_eq!(audit.rows, 0);
    let post = store.post(p(1)).await.expect("read").expect("exists");
    assert!(post.recent_likers.is_empty(), "{:?}", post.recent_likers);
}
