//! The fault language through real HTTP: answers lost after the write
//! committed, broken bodies, reset connections, Retry-After, and seeded
//! rules that replay.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use likekit_core::{Action, LikeError, Transport};
use likekit_proto::admin::{
    FaultAction, FaultMethod, FaultPhase, FaultRoute, FaultRule, FaultRules, JournalFault,
    RequestFilter, RuleState, WriteResult,
};
use likekit_tests::{PostId, Recorder, UserId, World, eventually, settle, user};

const ANA: UserId = UserId::checked(1).unwrap();
const POST: PostId = PostId::checked(42).unwrap();

/// A rule on `route` that acts on its first call only.
fn first_call(route: FaultRoute, phase: FaultPhase, action: FaultAction) -> FaultRule {
    FaultRule {
        nth: Some(1),
        phase,
        action: Some(action),
        ..FaultRule::new(route)
    }
}

/// The like is saved, its answer lost (the connection dropped after the
/// commit): the client retries, the retry changes nothing on the server,
/// the count moved once, the heart stays filled and nobody hears "didn't
/// save".
#[tokio::test]
async fn a_like_saved_but_its_answer_lost_sticks_and_counts_once() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    let ana = world.client(ANA);
    ana.refresh(POST).await.unwrap();
    let (events, _sub) = Recorder::on(&ana, POST);
    world
        .faults(vec![first_call(
            FaultRoute::Like,
            FaultPhase::After,
            FaultAction::Drop {},
        )])
        .await;

    ana.set_liked(POST, true);
    settle(&ana).await;

    let view = ana.view(POST).unwrap();
    assert!(view.liked && !view.pending, "{view:?}");
    assert_eq!(view.count, 1);
    assert!(events.failures().is_empty(), "{:?}", events.failures());
    assert_eq!(ana.stats().calls_sent, 2, "the lost answer was retried");
    assert_eq!(world.requests("like").await, 2);
    assert!(world.liked(ANA, POST).await);
    assert_eq!(world.count(POST).await, 1, "counted once");
    for audit in world.audit().await {
        assert_eq!(audit.count, audit.rows, "{audit:?}");
    }

    // The journal tells the story: applied, answer lost; the retry changed
    // nothing and was answered.
    let journal = world
        .admin
        .requests(&RequestFilter {
            post: Some(POST),
            ..RequestFilter::route(FaultRoute::Like)
        })
        .await
        .unwrap();
    let seen: Vec<_> = journal
        .entries
        .iter()
        .map(|e| (e.write, e.status, e.fault, e.fault_phase))
        .collect();
    assert_eq!(
        seen,
        [
            (
                Some(WriteResult::Applied),
                None,
                Some(JournalFault::Drop),
                Some(FaultPhase::After)
            ),
            (Some(WriteResult::Unchanged), Some(200), None, None),
        ]
    );
    assert!(journal.entries.iter().all(|e| e.user == Some(ANA)));
    world.stop().await;
}

/// An unlike commits and then answers 500; the user taps back to "like".
/// The server ends in the user's last state, whatever the order the
/// client learned things in.
#[tokio::test]
async fn an_unlike_saved_then_failed_and_a_tap_back_ends_liked() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    let ana = world.client(ANA);
    ana.set_liked(POST, true);
    settle(&ana).await;
    assert!(world.liked(ANA, POST).await);
    world
        .faults(vec![first_call(
            FaultRoute::Unlike,
            FaultPhase::After,
            FaultAction::Status {
                status: 500,
                body: None,
                retry_after_secs: None,
            },
        )])
        .await;

    ana.set_liked(POST, false);
    tokio::time::sleep(Duration::from_millis(5)).await;
    ana.set_liked(POST, true);
    settle(&ana).await;

    let view = ana.view(POST).unwrap();
    assert!(view.liked && !view.pending, "{view:?}");
    assert!(
        world.liked(ANA, POST).await,
        "the server has the last state"
    );
    assert_eq!(world.count(POST).await, 1);
    world.stop().await;
}

/// Truncated, malformed and oversized 200 answers reach the SDK's
/// unreadable-answer error, and the client recovers on the retry.
#[tokio::test]
async fn broken_bodies_are_unreadable_answers_and_the_retry_recovers() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    let broken = [
        (
            FaultPhase::After,
            FaultAction::Truncate { bytes: 12 },
            "truncated",
        ),
        (FaultPhase::Before, FaultAction::Malformed {}, "malformed"),
        (
            FaultPhase::Before,
            FaultAction::Oversized { bytes: 3 << 20 },
            "valid JSON of the wrong shape",
        ),
        (
            FaultPhase::Before,
            FaultAction::Oversized {
                bytes: likekit_core::DEFAULT_MAX_ANSWER_BYTES as u64 + 1,
            },
            "larger than",
        ),
    ];
    for (phase, action, what) in broken {
        // Straight through the transport: the error itself.
        world
            .faults(vec![first_call(FaultRoute::Likes, phase, action.clone())])
            .await;
        let error = world.transport(ANA).read(POST).await.unwrap_err();
        assert!(
            matches!(error, LikeError::InvalidResponse { .. }),
            "{what}: {error:?}"
        );
        assert!(error.is_transient(), "{what}");
        if what == "larger than" {
            // Refused from its Content-Length, before its body is read.
            assert!(error.to_string().contains("larger than"), "{error}");
        }

        // Through the client: a like whose first answer is broken is
        // retried and sticks.
        world.clear_faults().await;
        world.admin.reset().await.unwrap();
        world
            .faults(vec![first_call(FaultRoute::Like, phase, action)])
            .await;
        let ana = world.client(ANA);
        let (events, _sub) = Recorder::on(&ana, POST);
        ana.set_liked(POST, true);
        settle(&ana).await;
        let view = ana.view(POST).unwrap();
        assert!(view.liked && !view.pending, "{what}: {view:?}");
        assert!(events.failures().is_empty(), "{what}");
        assert_eq!(world.count(POST).await, 1, "{what}");
        world.clear_faults().await;
        world.admin.reset().await.unwrap();
    }
    world.stop().await;
}

/// A reset connection is a network error, retried.
#[tokio::test]
async fn a_reset_connection_is_a_network_error() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    world
        .faults(vec![first_call(
            FaultRoute::Like,
            FaultPhase::Before,
            FaultAction::Reset {},
        )])
        .await;
    let error = world
        .transport(ANA)
        .send(POST, Action::Like)
        .await
        .unwrap_err();
    assert!(matches!(error, LikeError::Network { .. }), "{error:?}");
    assert!(!world.liked(ANA, POST).await, "phase before: never written");
    world.transport(ANA).send(POST, Action::Like).await.unwrap();
    assert!(world.liked(ANA, POST).await);
    world.stop().await;
}

/// The first like gets 429 with `Retry-After: 1`: the client's retry
/// comes no sooner than a second later.
#[tokio::test]
async fn a_retry_waits_for_retry_after() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    world
        .faults(vec![first_call(
            FaultRoute::Like,
            FaultPhase::Before,
            FaultAction::Status {
                status: 429,
                body: None,
                retry_after_secs: Some(1),
            },
        )])
        .await;
    let ana = world.client(ANA);
    let tapped = Instant::now();
    ana.set_liked(POST, true);
    eventually("the like is confirmed", || async {
        !ana.view(POST).unwrap().pending
    })
    .await;
    assert!(
        tapped.elapsed() >= Duration::from_secs(1),
        "retried after {:?}",
        tapped.elapsed()
    );
    assert!(ana.view(POST).unwrap().liked);
    assert_eq!(world.requests("like").await, 2);
    // From the journal: the retry arrived no sooner than Retry-After said.
    let journal = world
        .admin
        .requests(&RequestFilter {
            method: Some(FaultMethod::Post),
            ..RequestFilter::default()
        })
        .await
        .unwrap();
    let [first, retry] = &journal.entries[..] else {
        panic!("two likes: {journal:?}");
    };
    assert_eq!((first.status, retry.status), (Some(429), Some(200)));
    assert_eq!(first.write, None, "refused before the handler");
    let waited = retry.at_ms - (first.at_ms + first.duration_ms);
    assert!(waited >= 1000, "the retry came {waited} ms after the 429");
    world.stop().await;
}

/// Five taps in 50 ms go out as at most two calls (the first, then the
/// latest intent), and no DELETE for a burst that ends liked — read from
/// the journal.
#[tokio::test]
async fn five_quick_taps_are_at_most_two_calls() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    // Slow answers, so that the taps land while the first call is out.
    world
        .faults(vec![FaultRule {
            latency_ms: 100,
            ..FaultRule::new(FaultRoute::All)
        }])
        .await;
    world.admin.clear_requests().await.unwrap();
    let ana = world.client(ANA);
    for _ in 0..5 {
        ana.toggle(POST);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    settle(&ana).await;
    assert!(ana.view(POST).unwrap().liked, "an odd number of taps");

    let journal = world
        .admin
        .requests(&RequestFilter {
            post: Some(POST),
            ..RequestFilter::default()
        })
        .await
        .unwrap();
    let calls: Vec<FaultMethod> = journal.entries.iter().map(|e| e.method).collect();
    assert!(calls.len() <= 2, "five taps, calls: {calls:?}");
    assert_eq!(calls.first(), Some(&FaultMethod::Post));
    assert!(world.liked(ANA, POST).await);
    let deletes = world
        .admin
        .requests(&RequestFilter {
            method: Some(FaultMethod::Delete),
            ..RequestFilter::default()
        })
        .await
        .unwrap();
    assert!(
        deletes.entries.is_empty(),
        "the burst ends liked, as its first call: no unlike is sent ({calls:?})"
    );
    world.stop().await;
}

/// A seeded 30% failure rule gives the same sequence of answers twice, and
/// `GET /admin/faults` reads back the rules with their seed.
#[tokio::test]
async fn a_seeded_rule_replays_identically() {
    let world = World::start().await;
    world
        .setup(&[(ANA, "Ana"), (user(2), "Ben")], &[POST])
        .await;
    let rules = FaultRules {
        seed: Some(2024),
        rules: vec![FaultRule {
            probability: 0.3,
            action: Some(FaultAction::Status {
                status: 503,
                body: None,
                retry_after_secs: None,
            }),
            ..FaultRule::new(FaultRoute::All)
        }],
        state: Vec::new(),
    };
    let mut runs = Vec::new();
    let mut journals = Vec::new();
    for _ in 0..2 {
        world.admin.clear_requests().await.unwrap();
        let in_force = world.admin.set_faults(&rules).await.unwrap();
        assert_eq!((in_force.seed, &in_force.rules), (rules.seed, &rules.rules));
        assert_eq!(in_force.state, [RuleState::default()], "nothing used yet");
        assert_eq!(world.admin.get_faults().await.unwrap(), in_force);
        let transport = world.transport(ANA);
        let mut answers = Vec::new();
        for i in 0..40 {
            let action = if i % 2 == 0 {
                Action::Like
            } else {
                Action::Unlike
            };
            answers.push(transport.send(POST, action).await.is_ok());
        }
        // What the rule used up: it matched the 40 calls and acted on
        // (fired on) the ones that failed.
        let failed = answers.iter().filter(|ok| !**ok).count() as u64;
        let used = world.admin.get_faults().await.unwrap();
        assert_eq!(used.rules, rules.rules, "the rules read back as put");
        assert_eq!(
            used.state,
            [RuleState {
                matched: 40,
                fired: failed,
                acted: failed,
                ..RuleState::default()
            }]
        );
        runs.push(answers);
        let journal = world
            .admin
            .requests(&RequestFilter::default())
            .await
            .unwrap();
        journals.push(
            journal
                .entries
                .iter()
                .map(|e| (e.method, e.status, e.write))
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(runs[0], runs[1], "the same seed, the same answers");
    assert_eq!(journals[0].len(), 40);
    assert_eq!(journals[0], journals[1], "the same journal twice");
    let failed = runs[0].iter().filter(|ok| !**ok).count();
    assert!(
        (4..=24).contains(&failed),
        "30% of 40 failed {failed} times"
    );

    // A rule set without a seed gets one, reported back.
    let picked = world
        .admin
        .set_faults(&FaultRules::new(rules.rules.clone()))
        .await
        .unwrap();
    assert!(picked.seed.is_some());
    assert_eq!(world.admin.get_faults().await.unwrap().seed, picked.seed);
    world.stop().await;
}

/// A request is in the journal from its arrival: in flight, without a
/// status, until its answer is ready.
#[tokio::test]
async fn the_journal_lists_a_request_in_flight() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana")], &[POST]).await;
    world
        .faults(vec![FaultRule {
            latency_ms: 300,
            ..FaultRule::new(FaultRoute::Like)
        }])
        .await;
    let ana = world.client(ANA);
    ana.set_liked(POST, true);
    eventually("the like reaches the server", || async {
        !world
            .admin
            .requests(&RequestFilter::route(FaultRoute::Like))
            .await
            .unwrap()
            .entries
            .is_empty()
    })
    .await;
    let journal = world
        .admin
        .requests(&RequestFilter::route(FaultRoute::Like))
        .await
        .unwrap();
    let [entry] = &journal.entries[..] else {
        panic!("one like: {journal:?}");
    };
    assert!(entry.in_flight, "{entry:?}");
    assert_eq!((entry.status, entry.write), (None, None));
    // Its id is there from its arrival, and finds it.
    let id = entry.request_id.clone();
    assert!(!id.is_empty(), "{entry:?}");
    let by_id = RequestFilter {
        request_id: Some(id.clone()),
        ..RequestFilter::default()
    };
    let found = world.admin.requests(&by_id).await.unwrap();
    let seqs: Vec<u64> = found.entries.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [entry.seq]);
    settle(&ana).await;
    let journal = world
        .admin
        .requests(&RequestFilter::route(FaultRoute::Like))
        .await
        .unwrap();
    let [entry] = &journal.entries[..] else {
        panic!("still one like: {journal:?}");
    };
    assert!(!entry.in_flight);
    assert_eq!(
        (entry.status, entry.write),
        (Some(200), Some(WriteResult::Applied))
    );
    assert!(entry.duration_ms >= 300, "{entry:?}");
    assert_eq!(entry.request_id, id, "the id it arrived with");
    world.stop().await;
}
