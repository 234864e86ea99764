//! Chaos: 50 users tap at random on 20 posts for a few seconds while the
//! server fails 20% of requests (and drops a few unlike connections) and
//! answers after a jittered delay. When
//! everything settles, every client shows every post exactly as the server
//! has it, and every post's count equals its like rows.
//!
//! The random seed is printed; set `LIKEKIT_CHAOS_SEED` to replay a run's
//! taps (the network's timing is not replayable).

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use likekit_core::{LikeClient, LikeEvent, PostId, PostView, RetryPolicy, UserId};
use likekit_proto::admin::{FaultRoute, FaultRule};
use likekit_tests::{World, post, settle, user as user_id};

const USERS: u64 = 50;
const POSTS: u64 = 20;
const TAPPING: Duration = Duration::from_secs(3);

/// The last view each post's events showed.
type LastSeen = Arc<Mutex<HashMap<PostId, PostView>>>;

async fn tapper(client: LikeClient, mut rng: fastrand::Rng, until: Instant) {
    while Instant::now() < until {
        let post = post(rng.u64(1..=POSTS));
        match rng.u8(0..10) {
            0..=7 => {
                client.toggle(post);
            }
            8 => {
                client.set_liked(post, rng.bool());
            }
            _ => {
                // a read in the middle of it all; it may fail
                let _ = client.refresh(post).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(rng.u64(0..40))).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_users_twenty_posts_twenty_percent_failures() {
    let seed = std::env::var("LIKEKIT_CHAOS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    println!("chaos seed: {seed} (LIKEKIT_CHAOS_SEED={seed} replays the taps)");
    let mut rng = fastrand::Rng::with_seed(seed);

    let world = World::start().await;
    let users: Vec<(UserId, String)> = (1..=USERS)
        .map(|u| (user_id(u), format!("user{u}")))
        .collect();
    let names: Vec<(UserId, &str)> = users.iter().map(|(u, n)| (*u, n.as_str())).collect();
    let posts: Vec<PostId> = (1..=POSTS).map(post).collect();
    world.setup(&names, &posts).await;
    // some friendships, so friends lines are in play too
    for u in 1..=USERS {
        let friends: Vec<UserId> = (0..3)
            .map(|_| rng.u64(1..=USERS))
            .filter(|f| *f != u)
            .map(user_id)
            .collect();
        world
            .server
            .set_friends(user_id(u), &friends)
            .await
            .unwrap();
    }

    let retry = RetryPolicy {
        min_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(200),
        // few enough that some intents fail for good and roll back
        max_retries: 2,
        ..RetryPolicy::default()
    };
    let mut clients = Vec::new();
    let mut seen = Vec::new();
    let mut subscriptions = Vec::new();
    for u in 1..=USERS {
        let client = world
            .builder(user_id(u))
            .retry_policy(retry)
            .build()
            .unwrap();
        let last: LastSeen = Arc::default();
        let sink = Arc::clone(&last);
        subscriptions.push(client.subscribe_all(move |e: &LikeEvent| {
            if let LikeEvent::Changed(view) = e {
                sink.lock().unwrap().insert(view.post_id, view.clone());
            }
        }));
        clients.push(client);
        seen.push(last);
    }

    world
        .faults(vec![
            FaultRule {
                latency_ms: 5,
                jitter_ms: 60,
                error_rate: 0.2,
                status: 503,
                ..FaultRule::new(FaultRoute::All)
            },
            FaultRule {
                drop_rate: 0.02,
                ..FaultRule::new(FaultRoute::Unlike)
            },
        ])
        .await;

    let until = Instant::now() + TAPPING;
    let tasks: Vec<_> = clients
        .iter()
        .map(|c| {
            tokio::spawn(tapper(
                c.clone(),
                fastrand::Rng::with_seed(rng.u64(..)),
                until,
            ))
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }

    // settle: no call pending anywhere, then read with the network healthy
    for client in &clients {
        settle(client).await;
    }
    world.clear_faults().await;
    tokio::time::sleep(Duration::from_millis(100)).await; // past the count cache
    for client in &clients {
        client.refresh_many(&posts).await.unwrap();
    }

    let audit = world.audit().await; // checks count == rows for every post
    let counts: HashMap<PostId, u64> = audit.iter().map(|a| (a.post, a.count)).collect();
    let store = world.server.store();
    let mut taps = 0;
    let mut calls = 0;
    let mut rollbacks = 0;
    let mut liked_rows: HashMap<PostId, u64> = HashMap::new();
    for (i, client) in clients.iter().enumerate() {
        let user = user_id(i as u64 + 1);
        let liked = store.liked(user, &posts).await.unwrap();
        for (&post, &liked) in posts.iter().zip(&liked) {
            *liked_rows.entry(post).or_default() += u64::from(liked);
            let view = client.view(post).unwrap();
            assert_eq!(
                (view.liked, view.count, view.pending),
                (liked, counts[&post], false),
                "user {user}, post {post}: client shows {view:?}"
            );
            if let Some(last) = seen[i].lock().unwrap().get(&post) {
                assert_eq!(
                    last, &view,
                    "user {user}, post {post}: the last event is stale"
                );
            }
        }
        let stats = client.stats();
        assert_eq!(
            stats.taps,
            stats.intents_sent + stats.coalesced,
            "{stats:?}"
        );
        taps += stats.taps;
        calls += stats.calls_sent;
        rollbacks += stats.rollbacks;
    }
    for post in &posts {
        assert_eq!(liked_rows[post], counts[post], "post {post}");
    }
    println!("chaos: {taps} taps, {calls} calls, {rollbacks} rollbacks");
    assert!(taps > 200, "the users hardly tapped: {taps}");
    drop(subscriptions);
    world.stop().await;
}
