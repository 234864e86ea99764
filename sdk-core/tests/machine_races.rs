//! The machine's rules, one explicit event order per test.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use likekit_core::wire::{LikeState, PostLikes};
use likekit_core::{
    Action, CallId, Effect, LikeError, Machine, MachineConfig, PostId, RetryPolicy,
};

/// The post every race here is about.
fn post() -> PostId {
    id(42)
}

fn id(n: u64) -> PostId {
    PostId::new(n).unwrap()
}

/// A machine plus the effects it has emitted, split by kind.
struct Probe {
    m: Machine,
    effects: Vec<Effect>,
}

impl Probe {
    fn new() -> Self {
        Self::with(MachineConfig {
            retry: RetryPolicy {
                seed: Some(7),
                ..RetryPolicy::default()
            },
            ..MachineConfig::default()
        })
    }

    /// A machine that gives up after the first failure.
    fn without_retries() -> Self {
        Self::with(MachineConfig {
            retry: RetryPolicy {
                max_retries: 0,
                ..RetryPolicy::default()
            },
            ..MachineConfig::default()
        })
    }

    fn with(config: MachineConfig) -> Self {
        Self {
            m: Machine::new(config),
            effects: Vec::new(),
        }
    }

    /// Collects new effects and returns them.
    fn take(&mut self) -> Vec<Effect> {
        let new: Vec<Effect> = self.m.drain_effects().collect();
        self.effects.extend(new.iter().cloned());
        new
    }

    /// The calls among the new effects.
    fn sends(&mut self) -> Vec<(CallId, Action)> {
        self.take()
            .into_iter()
            .filter_map(|e| match e {
                Effect::Send { call, action, .. } => Some((call, action)),
                _ => None,
            })
            .collect()
    }

    /// The one call among the new effects.
    fn one_send(&mut self) -> (CallId, Action) {
        let sends = self.sends();
        assert_eq!(sends.len(), 1, "expected exactly one call, got {sends:?}");
        sends[0]
    }

    fn failures(&self) -> Vec<(bool, LikeError)> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Failed { wanted, error, .. } => Some((*wanted, error.clone())),
                _ => None,
            })
            .collect()
    }

    fn waits(effects: &[Effect]) -> Vec<(CallId, Duration)> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Wait { call, delay, .. } => Some((*call, *delay)),
                _ => None,
            })
            .collect()
    }

    fn seen(&mut self, count: u64, liked: bool, friends: &[&str], version: u64) {
        self.m.snapshot(
            post(),
            PostLikes {
                count,
                liked_by_me: liked,
                friends: friends.iter().map(|s| s.to_string()).collect(),
                version,
            },
        );
        self.take();
    }

    fn ok(&mut self, call: CallId, count: u64, liked: bool, version: u64) {
        self.m.response(
            post(),
            call,
            Ok(LikeState {
                count,
                liked_by_me: liked,
                version,
            }),
        );
    }

    fn err(&mut self, call: CallId, error: LikeError) {
        self.m.response(post(), call, Err(error));
    }

    fn shown(&self) -> (bool, u64, bool) {
        let v = self.m.view(post()).unwrap();
        (v.liked, v.count, v.pending)
    }
}

fn unavailable() -> LikeError {
    LikeError::Server {
        status: 503,
        code: "http_503".into(),
        message: "unavailable".into(),
    }
}

#[test]
fn tap_is_instant_and_sends_state() {
    let mut p = Probe::new();
    p.seen(1203, false, &["Ana"], 9);
    let view = p.m.tap(post(), true);
    assert!(view.liked && view.pending);
    assert_eq!(view.count, 1204);
    assert_eq!(view.line.to_string(), "Liked by you, Ana and 1,202 others");
    let new = p.take();
    assert!(matches!(&new[0], Effect::Changed(v) if v == &view));
    assert!(
        matches!(
            new[1],
            Effect::Send {
                post: sent,
                action: Action::Like,
                ..
            } if sent == post()
        ),
        "{new:?}"
    );
}

#[test]
fn confirmed_like_settles() {
    let mut p = Probe::new();
    p.seen(1203, false, &[], 9);
    p.m.tap(post(), true);
    let (call, _) = p.one_send();
    p.ok(call, 1204, true, 10);
    assert_eq!(p.shown(), (true, 1204, false));
    assert!(p.sends().is_empty());
    assert!(p.failures().is_empty());
}

#[test]
fn refresh_lands_while_like_is_pending() {
    let mut p = Probe::new();
    p.seen(10, false, &[], 3);
    p.m.tap(post(), true);
    let (call, _) = p.one_send();
    // Others liked meanwhile; our like has not reached the server yet.
    p.seen(12, false, &["Ben"], 5);
    let v = p.m.view(post()).unwrap();
    assert!(v.liked, "a refresh must not empty a pending like");
    assert_eq!(v.count, 13, "others' likes show, plus ours");
    assert_eq!(v.friends, ["Ben"]);
    // The same read after our like committed: no double count.
    p.seen(13, true, &["Ben"], 6);
    assert_eq!(p.shown(), (true, 13, true));
    p.ok(call, 13, true, 6);
    assert_eq!(p.shown(), (true, 13, false));
}

#[test]
fn response_to_superseded_call_is_ignored() {
    let mut p = Probe::new();
    p.m.tap(post(), true);
    let (call, _) = p.one_send();
    p.ok(call, 1, true, 1);
    p.take();
    let before = p.m.view(post());
    // A duplicate or late answer to the same call changes nothing.
    p.ok(call, 0, false, 2);
    p.err(call, LikeError::Timeout);
    p.m.response(
        post(),
        9999,
        Ok(LikeState {
            count: 5,
            liked_by_me: false,
            version: 3,
        }),
    );
    p.m.timer(post(), call);
    assert_eq!(p.m.view(post()), before);
    assert!(p.take().is_empty());
}

#[test]
fn like_then_unlike_while_like_in_flight() {
    let mut p = Probe::new();
    p.seen(5, false, &[], 1);
    p.m.tap(post(), true);
    let (like, action) = p.one_send();
    assert_eq!(action, Action::Like);
    let v = p.m.tap(post(), false);
    assert!(!v.liked, "the heart empties from the second tap on");
    assert_eq!(v.count, 5);
    assert!(p.sends().is_empty(), "one call in flight per post");
    p.ok(like, 6, true, 2);
    assert_eq!(p.shown(), (false, 5, true));
    let (unlike, action) = p.one_send();
    assert_eq!(
        action,
        Action::Unlike,
        "exactly one DELETE follows the like's answer"
    );
    p.ok(unlike, 5, false, 3);
    assert_eq!(p.shown(), (false, 5, false));
    assert!(p.sends().is_empty());
}

#[test]
fn like_unlike_like_while_in_flight_sends_nothing_more() {
    let mut p = Probe::new();
    p.seen(5, false, &[], 1);
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    p.m.tap(post(), false);
    let v = p.m.tap(post(), true);
    assert!(v.liked);
    assert_eq!(v.count, 6);
    p.ok(like, 6, true, 2);
    assert!(p.sends().is_empty());
    assert_eq!(p.shown(), (true, 6, false));
    let s = p.m.stats();
    assert_eq!((s.taps, s.intents_sent, s.coalesced), (3, 1, 2));
}

#[test]
fn rapid_taps_coalesce_to_the_latest_intent() {
    let mut p = Probe::new();
    p.seen(0, false, &[], 1);
    for i in 0..5 {
        p.m.tap(post(), i % 2 == 0);
    }
    let (like, _) = p.one_send();
    p.ok(like, 1, true, 2);
    assert!(p.sends().is_empty(), "five taps ending liked need one call");
    for want in [false, true, false] {
        p.m.tap(post(), want);
    }
    let (unlike, action) = p.one_send();
    assert_eq!(action, Action::Unlike);
    p.ok(unlike, 0, false, 3);
    assert!(p.sends().is_empty());
    assert_eq!(p.shown(), (false, 0, false));
}

#[test]
fn transient_failure_retries_then_sticks() {
    let mut p = Probe::new();
    p.seen(7, false, &[], 1);
    p.m.tap(post(), true);
    let (call, _) = p.one_send();
    p.err(call, unavailable());
    let new = p.take();
    let waits = Probe::waits(&new);
    assert_eq!(waits.len(), 1, "{new:?}");
    assert!(!new.iter().any(|e| matches!(e, Effect::Changed(_))));
    assert_eq!(
        p.shown(),
        (true, 8, true),
        "the heart stays filled while retrying"
    );
    let (timer, delay) = waits[0];
    assert!(delay >= Duration::from_millis(500) && delay <= Duration::from_millis(1000));
    p.m.timer(post(), timer);
    let (retry, action) = p.one_send();
    assert_eq!(action, Action::Like);
    p.ok(retry, 8, true, 2);
    assert_eq!(p.shown(), (true, 8, false));
    assert!(p.failures().is_empty());
    assert_eq!(p.m.stats().retries, 1);
}

#[test]
fn failure_after_retries_rolls_back_once() {
    let mut p = Probe::with(MachineConfig {
        retry: RetryPolicy {
            max_retries: 3,
            seed: Some(1),
            ..RetryPolicy::default()
        },
        ..MachineConfig::default()
    });
    p.seen(7, false, &["Ana"], 1);
    p.m.tap(post(), true);
    let (mut call, _) = p.one_send();
    let mut delays = Vec::new();
    for _ in 0..3 {
        p.err(call, unavailable());
        let waits = Probe::waits(&p.take());
        let (timer, delay) = waits[0];
        delays.push(delay);
        p.m.timer(post(), timer);
        call = p.one_send().0;
    }
    p.err(call, LikeError::Timeout);
    let new = p.take();
    let failed: Vec<_> = new
        .iter()
        .filter(|e| matches!(e, Effect::Failed { .. }))
        .collect();
    assert_eq!(failed.len(), 1);
    assert!(matches!(
        failed[0],
        Effect::Failed {
            wanted: true,
            error: LikeError::Timeout,
            ..
        }
    ));
    let v = p.m.view(post()).unwrap();
    assert!(!v.liked && !v.pending);
    assert_eq!(v.count, 7, "back to the confirmed count");
    assert_eq!(v.error, Some(LikeError::Timeout));
    assert_eq!(v.line.to_string(), "Liked by Ana and 6 others");
    assert!(
        new.iter()
            .any(|e| matches!(e, Effect::Changed(v) if !v.liked))
    );
    // Backoff grows (jitter adds at most 100% of each step).
    assert!(delays[0] < Duration::from_secs(1));
    assert!(delays[1] >= Duration::from_secs(1) && delays[1] < Duration::from_secs(2));
    assert!(delays[2] >= Duration::from_secs(2) && delays[2] < Duration::from_secs(4));
    assert_eq!(p.m.stats().rollbacks, 1);
    // The next tap clears the error and tries again.
    let v = p.m.tap(post(), true);
    assert_eq!(v.error, None);
    assert_eq!(p.sends().len(), 1);
}

#[test]
fn failure_of_superseded_intent_fires_nothing() {
    let mut p = Probe::new();
    p.seen(3, false, &[], 1);
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    p.m.tap(post(), false);
    p.err(
        like,
        LikeError::NotFound {
            message: "gone".into(),
        },
    );
    assert!(
        p.failures().is_empty(),
        "the like was superseded by the unlike"
    );
    assert!(
        p.sends().is_empty(),
        "the unlike equals the confirmed state"
    );
    assert_eq!(p.shown(), (false, 3, false));
    let s = p.m.stats();
    assert_eq!(s.taps, s.intents_sent + s.coalesced);
}

#[test]
fn superseded_intent_after_transient_failure_is_sent_on_the_retry() {
    let mut p = Probe::new();
    p.seen(3, true, &[], 1);
    p.m.tap(post(), false);
    let (unlike, _) = p.one_send();
    p.err(
        unlike,
        LikeError::RateLimited {
            retry_after_ms: None,
        },
    );
    let (timer, _) = Probe::waits(&p.take())[0];
    // The viewer changes their mind while the retry waits.
    p.m.tap(post(), true);
    assert!(p.sends().is_empty(), "still one call at a time");
    p.m.timer(post(), timer);
    // Nothing may have applied (429), so the like equals the confirmed state.
    assert!(p.sends().is_empty());
    assert_eq!(p.shown(), (true, 3, false));
    assert!(p.failures().is_empty());
}

#[test]
fn lost_answer_makes_the_machine_resend_even_the_confirmed_state() {
    let mut p = Probe::new();
    p.seen(3, false, &[], 1);
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    // The like may have reached the server; its answer was lost.
    p.err(like, LikeError::Timeout);
    let (timer, _) = Probe::waits(&p.take())[0];
    p.m.tap(post(), false);
    p.m.timer(post(), timer);
    let (unlike, action) = p.one_send();
    assert_eq!(
        action,
        Action::Unlike,
        "the server may hold the like: undo it"
    );
    p.ok(unlike, 3, false, 1);
    assert_eq!(p.shown(), (false, 3, false));
    assert!(p.failures().is_empty());
}

#[test]
fn stale_snapshot_never_moves_the_count_back() {
    let mut p = Probe::new();
    p.seen(1203, false, &[], 9);
    p.m.tap(post(), true);
    let (call, _) = p.one_send();
    p.ok(call, 1204, true, 10);
    // The server's one-second cache still serves version 9.
    p.seen(1203, false, &[], 9);
    assert_eq!(p.shown(), (true, 1204, false));
    // A newer read wins.
    p.seen(1210, true, &["Cleo"], 14);
    assert_eq!(p.shown(), (true, 1210, false));
    assert_eq!(p.m.view(post()).unwrap().friends, ["Cleo"]);
}

#[test]
fn permanent_errors_roll_back_at_once() {
    let errors = [
        LikeError::Unauthorized {
            message: "token refused after refresh".into(),
        },
        LikeError::Forbidden {
            message: "blocked".into(),
        },
        LikeError::NotFound {
            message: "post deleted".into(),
        },
        LikeError::Rejected {
            status: 400,
            code: "bad_post_id".into(),
            message: String::new(),
        },
    ];
    for error in errors {
        let mut p = Probe::new();
        p.seen(9, false, &[], 1);
        p.m.tap(post(), true);
        let (call, _) = p.one_send();
        p.err(call, error.clone());
        let new = p.take();
        assert!(Probe::waits(&new).is_empty(), "{error:?} must not retry");
        assert!(!new.iter().any(|e| matches!(e, Effect::Send { .. })));
        assert_eq!(p.failures(), vec![(true, error.clone())]);
        assert_eq!(p.shown(), (false, 9, false));
        assert_eq!(p.m.stats().retries, 0);
    }
}

#[test]
fn retry_after_is_honoured() {
    let mut p = Probe::new();
    p.m.tap(post(), true);
    let (call, _) = p.one_send();
    p.err(
        call,
        LikeError::RateLimited {
            retry_after_ms: Some(30_000),
        },
    );
    let (_, delay) = Probe::waits(&p.take())[0];
    assert!(delay >= Duration::from_secs(30), "{delay:?}");
}

#[test]
fn count_never_shows_fewer_likes_than_the_line_names() {
    let mut p = Probe::new();
    // The heart comes from the viewer's own row, the count from a cache a
    // second old that does not have the like yet.
    p.seen(0, true, &["Ana"], 4);
    let v = p.m.view(post()).unwrap();
    assert_eq!(v.count, 2);
    assert_eq!(v.count, v.line.total);
    assert_eq!(v.line.to_string(), "Liked by you and Ana");
}

#[test]
fn unlike_of_a_stale_zero_count_never_goes_below_zero() {
    let mut p = Probe::new();
    p.seen(0, true, &[], 4);
    let v = p.m.tap(post(), false);
    assert_eq!(v.count, 0);
    assert_eq!(v.line.to_string(), "");
}

#[test]
fn toggle_follows_the_displayed_heart() {
    let mut p = Probe::new();
    assert!(p.m.toggle(post()).liked);
    assert!(!p.m.toggle(post()).liked);
    assert!(p.m.toggle(post()).liked);
    let sends = p.sends();
    assert_eq!(sends.len(), 1);
    assert_eq!(sends[0].1, Action::Like);
}

#[test]
fn tap_matching_the_heart_is_a_no_op() {
    let mut p = Probe::new();
    p.seen(4, true, &[], 2);
    let v = p.m.tap(post(), true);
    assert_eq!((v.liked, v.count, v.pending), (true, 4, false));
    assert!(p.take().is_empty());
    assert_eq!(p.m.stats().coalesced, 1);
}

#[test]
fn seeded_jitter_is_reproducible_and_unseeded_varies() {
    let delays = |seed: Option<u64>| {
        let mut p = Probe::with(MachineConfig {
            retry: RetryPolicy {
                seed,
                ..RetryPolicy::default()
            },
            ..MachineConfig::default()
        });
        (1..=20u64)
            .map(|n| {
                let post = id(n);
                p.m.tap(post, true);
                let call = p
                    .take()
                    .into_iter()
                    .find_map(|e| match e {
                        Effect::Send { call, .. } => Some(call),
                        _ => None,
                    })
                    .unwrap();
                p.m.response(post, call, Err(LikeError::Timeout));
                Probe::waits(&p.take())[0].1
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(delays(Some(3)), delays(Some(3)));
    assert_ne!(delays(Some(3)), delays(Some(4)));
    let spread = delays(None);
    assert!(
        spread.iter().any(|d| *d != spread[0]),
        "jitter spreads retries"
    );
}

#[test]
fn idle_posts_are_evicted_least_recently_used_first() {
    let mut p = Probe::with(MachineConfig {
        max_posts: 3,
        ..MachineConfig::default()
    });
    let seen = |p: &mut Probe, post: u64| {
        p.m.snapshot(
            id(post),
            PostLikes {
                count: post,
                liked_by_me: false,
                friends: vec![],
                version: 1,
            },
        )
    };
    seen(&mut p, 1);
    seen(&mut p, 2);
    p.m.watch(id(2));
    p.m.tap(id(3), true); // pending: never evicted while its call is out
    let (call, _) = p.one_send();
    seen(&mut p, 4);
    assert_eq!(p.m.len(), 3);
    assert!(
        p.m.view(id(1)).is_none(),
        "the least recently used idle post goes"
    );
    seen(&mut p, 5);
    assert!(p.m.view(id(4)).is_none());
    assert!(p.m.view(id(2)).is_some(), "watched posts stay");
    assert!(p.m.view(id(3)).is_some(), "posts with a call out stay");
    p.m.response(
        id(3),
        call,
        Ok(LikeState {
            count: 1,
            liked_by_me: true,
            version: 2,
        }),
    );
    p.m.unwatch(id(2));
    seen(&mut p, 6);
    assert_eq!(p.m.len(), 3);
    assert_eq!(p.m.stats().evictions, 3);
}

#[test]
fn many_posts_stay_within_the_bound() {
    let mut m = Machine::new(MachineConfig {
        max_posts: 1000,
        ..MachineConfig::default()
    });
    for post in 1..=100_000u64 {
        m.snapshot(
            id(post),
            PostLikes {
                count: 1,
                liked_by_me: false,
                friends: vec![],
                version: 1,
            },
        );
    }
    assert_eq!(m.len(), 1000);
    assert!(m.view(id(100_000)).is_some());
    assert!(m.view(id(1)).is_none());
}

#[test]
fn tap_after_an_uncertain_rollback_is_sent_even_if_it_matches_the_heart() {
    let mut p = Probe::without_retries();
    p.seen(2, false, &[], 1);
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    // Applied on the server, but the answer was lost and no retry is left.
    p.err(like, LikeError::Timeout);
    p.take();
    assert_eq!(p.failures().len(), 1);
    assert_eq!(p.shown(), (false, 2, false));
    // The heart shows empty, but the server may hold the like: an unlike
    // tap must reach it.
    p.m.tap(post(), false);
    let (_, action) = p.one_send();
    assert_eq!(action, Action::Unlike);
}

/// The seed table, with one machine per viewer against a server that keeps
/// a row per (user, post) and moves the count only when a row changes.
#[test]
fn seed_table() {
    use std::collections::BTreeSet;

    #[derive(Default)]
    struct Server {
        rows: BTreeSet<&'static str>,
        version: u64,
    }
    impl Server {
        fn apply(&mut self, user: &'static str, action: Action) -> LikeState {
            let changed = match action {
                Action::Like => self.rows.insert(user),
                Action::Unlike => self.rows.remove(user),
            };
            self.version += u64::from(changed);
            LikeState {
                count: self.rows.len() as u64,
                liked_by_me: self.rows.contains(user),
                version: self.version,
            }
        }
    }

    let mut server = Server::default();
    let mut ana = Probe::new();
    let mut ben = Probe::new();

    // Ana's first like: +1.
    ana.m.tap(post(), true);
    let (call, action) = ana.one_send();
    let first = server.apply("ana", action);
    assert_eq!(first.count, 1);
    // Its answer is lost, so the machine retries the same state: no change.
    ana.err(call, LikeError::Timeout);
    let (timer, _) = Probe::waits(&ana.take())[0];
    ana.m.timer(post(), timer);
    let (retry, action) = ana.one_send();
    assert_eq!(
        action,
        Action::Like,
        "the retry carries the state, not a toggle"
    );
    let retried = server.apply("ana", action);
    assert_eq!((retried.count, retried.version), (1, first.version));
    ana.ok(retry, retried.count, retried.liked_by_me, retried.version);
    assert_eq!(ana.shown(), (true, 1, false));

    // Ana's unlike: -1; retried: no change.
    ana.m.tap(post(), false);
    let (call, action) = ana.one_send();
    let unliked = server.apply("ana", action);
    assert_eq!(unliked.count, 0);
    ana.err(call, LikeError::Timeout);
    let (timer, _) = Probe::waits(&ana.take())[0];
    ana.m.timer(post(), timer);
    let (retry, action) = ana.one_send();
    assert_eq!(action, Action::Unlike);
    let retried = server.apply("ana", action);
    assert_eq!((retried.count, retried.version), (0, unliked.version));
    ana.ok(retry, retried.count, retried.liked_by_me, retried.version);
    assert_eq!(ana.shown(), (false, 0, false));

    // Ben's unlike of a post he never liked: no change, never below zero.
    ben.m.snapshot(
        post(),
        PostLikes {
            count: 0,
            liked_by_me: true,
            friends: vec![],
            version: 0,
        },
    );
    ben.take();
    ben.m.tap(post(), false);
    let (call, action) = ben.one_send();
    let stray = server.apply("ben", action);
    assert_eq!((stray.count, stray.version), (0, unliked.version));
    ben.ok(call, stray.count, stray.liked_by_me, stray.version);
    assert_eq!(ben.shown(), (false, 0, false));

    // Ana likes again, later: +1.
    ana.m.tap(post(), true);
    let (call, action) = ana.one_send();
    let again = server.apply("ana", action);
    assert_eq!(again.count, 1);
    ana.ok(call, again.count, again.liked_by_me, again.version);
    assert_eq!(ana.shown(), (true, 1, false));
    assert!(ana.failures().is_empty() && ben.failures().is_empty());
}

/// A late answer to a call that is no longer the one in flight (its retry
/// is) changes nothing: the retry's own answer is the one that counts.
#[test]
fn an_answer_to_an_earlier_call_is_ignored_while_its_retry_is_in_flight() {
    let mut p = Probe::new();
    p.seen(7, false, &[], 1);
    p.m.tap(post(), true);
    let (first, _) = p.one_send();
    p.err(first, unavailable());
    let (wait, _) = Probe::waits(&p.take())[0];
    p.m.timer(post(), wait);
    let (retry, action) = p.one_send();
    assert_eq!(action, Action::Like);
    // The first call's answer turns up after all (a duplicate delivery).
    p.ok(first, 3, false, 9);
    assert!(p.take().is_empty(), "a stray answer emits nothing");
    assert!(p.m.is_busy(post()), "the retry is still out");
    assert_eq!(p.shown(), (true, 8, true));
    p.ok(retry, 8, true, 2);
    assert_eq!(p.shown(), (true, 8, false));
    assert!(!p.m.is_busy(post()));
}

/// A timer fires only the wait it was made for.
#[test]
fn a_timer_for_another_call_is_ignored() {
    let mut p = Probe::new();
    p.m.tap(post(), true);
    let (first, _) = p.one_send();
    p.err(first, unavailable());
    let (wait, _) = Probe::waits(&p.take())[0];
    assert_ne!(wait, first);
    p.m.timer(post(), first);
    assert!(p.take().is_empty(), "the call's own id is not the wait's");
    p.m.timer(post(), wait + 1);
    assert!(p.take().is_empty(), "nor is a later id");
    p.m.timer(post(), wait);
    let (_, action) = p.one_send();
    assert_eq!(action, Action::Like);
}

/// Every call and every wait gets an id of its own.
#[test]
fn every_call_and_wait_gets_a_new_id() {
    let mut p = Probe::new();
    let mut ids = Vec::new();
    p.m.tap(post(), true);
    let (a, _) = p.one_send();
    ids.push(a);
    p.err(a, unavailable());
    let (w, _) = Probe::waits(&p.take())[0];
    ids.push(w);
    p.m.timer(post(), w);
    let (b, _) = p.one_send();
    ids.push(b);
    p.ok(b, 1, true, 1);
    p.m.tap(post(), false);
    let (c, _) = p.one_send();
    ids.push(c);
    p.m.tap(id(43), true);
    let (d, _) = p.one_send();
    ids.push(d);
    let mut distinct = ids.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), ids.len(), "ids {ids:?}");
}

/// A rolled-back tap shows its error until a newer read of the post says
/// what the server holds; then the error goes.
#[test]
fn a_newer_read_clears_the_shown_error_when_no_call_is_out() {
    let mut p = Probe::new();
    p.seen(7, false, &[], 1);
    p.m.tap(post(), true);
    let (call, _) = p.one_send();
    p.err(
        call,
        LikeError::Forbidden {
            message: "not yours".into(),
        },
    );
    p.take();
    assert!(
        p.m.view(post()).unwrap().error.is_some(),
        "the error is shown"
    );
    // An older read leaves it; a newer one clears it.
    p.seen(6, false, &[], 0);
    assert!(p.m.view(post()).unwrap().error.is_some());
    p.seen(9, false, &[], 2);
    let view = p.m.view(post()).unwrap();
    assert!(view.error.is_none(), "{view:?}");
    assert_eq!((view.liked, view.count), (false, 9));
}

/// The machine reports the settings it was made with, and whether it
/// tracks any post.
#[test]
fn the_machine_reports_its_settings_and_whether_it_tracks_posts() {
    let config = MachineConfig {
        max_posts: 3,
        retry: RetryPolicy {
            max_retries: 1,
            seed: Some(11),
            ..RetryPolicy::default()
        },
        offline_retry: None,
    };
    let mut p = Probe::with(config);
    assert_eq!(p.m.config().max_posts, 3);
    assert_eq!(p.m.config().retry.max_retries, 1);
    assert_eq!(p.m.config().retry.seed, Some(11));
    assert!(p.m.is_empty());
    assert_eq!(p.m.len(), 0);
    p.m.tap(post(), true);
    assert!(!p.m.is_empty());
    assert_eq!(p.m.len(), 1);
}

/// Posts that fail together retry apart: each intent's backoff draws its
/// jitter from a stream of its own (a seeded policy stays reproducible).
#[test]
fn posts_failing_together_get_their_own_jitter() {
    let run = || {
        let mut p = Probe::new();
        let mut delays = Vec::new();
        for n in 1..=4 {
            p.m.tap(id(n), true);
            let (call, _) = p.one_send();
            p.m.response(id(n), call, Err(unavailable()));
            delays.push(Probe::waits(&p.take())[0].1);
        }
        delays
    };
    let delays = run();
    let mut distinct = delays.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), delays.len(), "lockstep retries: {delays:?}");
    assert_eq!(run(), delays, "the same seed, the same delays");
}

#[test]
fn a_failure_after_a_read_showed_the_intent_saved_is_silent() {
    // A permanent failure, and retries used up on lost answers.
    let errors = [
        LikeError::Unauthorized {
            message: "token refused after refresh".into(),
        },
        LikeError::Timeout,
    ];
    for error in errors {
        let mut p = Probe::without_retries();
        p.seen(10, false, &[], 1);
        p.m.tap(post(), true);
        let (call, _) = p.one_send();
        // A read newer than the call shows the like saved (an earlier
        // attempt landed, or another of the viewer's devices).
        p.seen(11, true, &[], 2);
        p.err(call, error.clone());
        let new = p.take();
        assert!(p.failures().is_empty(), "{error:?}: {new:?}");
        assert_eq!(p.shown(), (true, 11, false), "{error:?}");
        assert!(
            new.contains(&Effect::Intent {
                post: post(),
                liked: None
            }),
            "{error:?}: the intent is settled"
        );
        assert_eq!(p.m.view(post()).unwrap().error, None);
        assert_eq!(p.m.stats().rollbacks, 0);
    }
}

#[test]
fn a_failure_is_still_reported_when_only_an_older_read_matches() {
    // The heart shows the wanted state from before the call (a tap sent
    // to make sure after a lost answer): the failure says it didn't save.
    let mut p = Probe::without_retries();
    p.seen(2, false, &[], 1);
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    p.err(like, LikeError::Timeout);
    p.m.tap(post(), false);
    let (unlike, _) = p.one_send();
    p.err(
        unlike,
        LikeError::Forbidden {
            message: "no".into(),
        },
    );
    p.take();
    let failed: Vec<bool> = p.failures().iter().map(|(wanted, _)| *wanted).collect();
    assert_eq!(failed, [true, false]);
}

#[test]
fn a_retry_after_beyond_the_ceiling_ends_the_retries() {
    let refused = |ms| LikeError::RateLimited {
        retry_after_ms: Some(ms),
    };
    // Up to the ceiling: honoured.
    let mut p = Probe::new();
    p.m.tap(post(), true);
    let (call, _) = p.one_send();
    p.err(call, refused(60_000));
    let (_, delay) = Probe::waits(&p.take())[0];
    assert!(delay >= Duration::from_secs(60), "{delay:?}");
    // Beyond it (here about three years): rolled back at once.
    let mut p = Probe::new();
    p.seen(5, false, &[], 1);
    p.m.tap(post(), true);
    let (call, _) = p.one_send();
    p.err(call, refused(100_000_000_000));
    let new = p.take();
    assert!(Probe::waits(&new).is_empty(), "{new:?}");
    assert_eq!(p.failures(), [(true, refused(100_000_000_000))]);
    assert_eq!(p.shown(), (false, 5, false));
    // Kept while offline, the wait is the longer of the interval and the
    // ceiling, no more.
    let every = Duration::from_secs(30);
    let mut p = Probe::with(MachineConfig {
        offline_retry: Some(every),
        ..MachineConfig::default()
    });
    p.m.tap(post(), true);
    let (call, _) = p.one_send();
    p.err(call, refused(u64::MAX));
    let (_, delay) = Probe::waits(&p.take())[0];
    assert_eq!(delay, RetryPolicy::default().retry_after_ceiling());
    assert!(p.failures().is_empty());
    // A policy whose own delays are longer honours up to those.
    let patient = RetryPolicy {
        max_delay: Duration::from_secs(600),
        ..RetryPolicy::default()
    };
    assert_eq!(patient.retry_after_ceiling(), Duration::from_secs(600));
}

#[test]
fn undoing_a_tap_while_its_retry_waits_settles_at_once() {
    let mut p = Probe::new();
    p.seen(3, false, &[], 1);
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    // Refused before it was applied: the server's state is known.
    p.err(
        like,
        LikeError::RateLimited {
            retry_after_ms: Some(30_000),
        },
    );
    let (timer, _) = Probe::waits(&p.take())[0];
    let v = p.m.tap(post(), false);
    assert!(!v.liked && !v.pending, "nothing left to send: {v:?}");
    assert!(!p.m.is_busy(post()) && !p.m.has_pending_calls());
    assert!(p.sends().is_empty());
    // The wait's end changes nothing.
    p.m.timer(post(), timer);
    assert!(p.take().is_empty());
    assert_eq!(p.shown(), (false, 3, false));
    assert!(p.failures().is_empty());
    let s = p.m.stats();
    assert_eq!(s.taps, s.intents_sent + s.coalesced, "{s:?}");

    // A read showing the wish saved settles it too.
    let mut p = Probe::new();
    p.seen(3, false, &[], 1);
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    p.err(
        like,
        LikeError::RateLimited {
            retry_after_ms: None,
        },
    );
    p.take();
    p.seen(4, true, &[], 2);
    assert_eq!(p.shown(), (true, 4, false));
    assert!(!p.m.has_pending_calls());
    let s = p.m.stats();
    assert_eq!(s.taps, s.intents_sent + s.coalesced, "{s:?}");

    // After a lost answer the undo still has to reach the server.
    let mut p = Probe::new();
    p.seen(3, false, &[], 1);
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    p.err(like, LikeError::Timeout);
    let (timer, _) = Probe::waits(&p.take())[0];
    assert!(p.m.tap(post(), false).pending);
    assert!(p.m.is_busy(post()));
    p.m.timer(post(), timer);
    assert_eq!(p.one_send().1, Action::Unlike);
}

/// An undo tapped while the like is out, then the like refused before it
/// applied (a 429 with a long Retry-After): the server holds what the
/// viewer wants now, so nothing is left to send and the post settles at
/// once, not when the Retry-After would have ended.
#[test]
fn an_undo_tapped_while_the_call_is_out_settles_at_once_when_the_call_is_refused() {
    let mut p = Probe::new();
    p.seen(3, false, &[], 1);
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    let v = p.m.tap(post(), false);
    assert!(!v.liked && v.pending);
    p.take();
    p.err(
        like,
        LikeError::RateLimited {
            retry_after_ms: Some(30_000),
        },
    );
    let new = p.take();
    assert!(Probe::waits(&new).is_empty(), "{new:?}");
    assert!(p.sends().is_empty());
    assert!(!p.m.is_busy(post()) && !p.m.has_pending_calls());
    assert_eq!(p.shown(), (false, 3, false));
    assert!(
        new.contains(&Effect::Intent {
            post: post(),
            liked: None
        }),
        "{new:?}"
    );
    assert!(
        new.iter()
            .any(|e| matches!(e, Effect::Changed(v) if !v.pending)),
        "{new:?}"
    );
    assert!(p.failures().is_empty());
    let s = p.m.stats();
    assert_eq!(s.taps, s.intents_sent + s.coalesced, "{s:?}");

    // A read that arrived while the like was out showed it saved: the
    // like's own refusal settles it too.
    let mut p = Probe::new();
    p.seen(3, false, &[], 1);
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    p.seen(4, true, &[], 2);
    p.err(
        like,
        LikeError::RateLimited {
            retry_after_ms: None,
        },
    );
    let new = p.take();
    assert!(Probe::waits(&new).is_empty(), "{new:?}");
    assert_eq!(p.shown(), (true, 4, false));
    assert!(!p.m.has_pending_calls());
    assert!(p.failures().is_empty());
    let s = p.m.stats();
    assert_eq!(s.taps, s.intents_sent + s.coalesced, "{s:?}");

    // After a failure that may have applied, the server may hold the
    // like: the undo still goes out, after the retry's wait.
    let mut p = Probe::new();
    p.seen(3, false, &[], 1);
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    p.m.tap(post(), false);
    p.take();
    p.err(like, unavailable());
    let (timer, _) = Probe::waits(&p.take())[0];
    assert!(p.m.view(post()).unwrap().pending);
    p.m.timer(post(), timer);
    let (unlike, action) = p.one_send();
    assert_eq!(action, Action::Unlike);
    p.ok(unlike, 3, false, 3);
    assert_eq!(p.shown(), (false, 3, false));

    // A post never read: what the server holds is unknown, so the undo
    // goes out too.
    let mut p = Probe::new();
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    p.m.tap(post(), false);
    p.take();
    p.err(
        like,
        LikeError::RateLimited {
            retry_after_ms: None,
        },
    );
    let (timer, _) = Probe::waits(&p.take())[0];
    p.m.timer(post(), timer);
    assert_eq!(p.one_send().1, Action::Unlike);
}

/// A server whose versions start again (the reference server's admin
/// reset, a database restored from a backup) answers a write with a
/// version below the one held when the call went out, which cannot happen
/// within one history. The answer is taken whole, and reads of the new
/// history count from then on.
#[test]
fn a_write_answered_below_the_version_it_was_sent_over_starts_a_new_history() {
    let mut p = Probe::new();
    p.seen(5, true, &["Ana"], 40);
    p.m.tap(post(), false);
    let (unlike, _) = p.one_send();
    // Reset meanwhile: no likes, version 0.
    p.ok(unlike, 0, false, 0);
    assert_eq!(p.shown(), (false, 0, false));
    let view = p.m.view(post()).unwrap();
    assert!(view.friends.is_empty(), "{view:?}");
    assert_eq!(view.line.to_string(), "");
    assert!(p.failures().is_empty());
    // Reads of the new history are taken; older ones of it are not.
    p.seen(2, false, &["Ben"], 2);
    assert_eq!(p.shown(), (false, 2, false));
    assert_eq!(p.m.view(post()).unwrap().friends, ["Ben"]);
    p.seen(1, false, &[], 1);
    assert_eq!(p.shown(), (false, 2, false));
    // And a tap is answered in it.
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    p.ok(like, 3, true, 3);
    assert_eq!(p.shown(), (true, 3, false));

    // An answer older only than a read that arrived while the call was
    // out is of the same history: the read is newer and stays.
    let mut p = Probe::new();
    p.seen(5, false, &[], 40);
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    // The like landed (41), then Ana liked too (42), read before the
    // like's answer arrived.
    p.seen(7, true, &["Ana"], 42);
    p.ok(like, 6, true, 41);
    assert_eq!(p.shown(), (true, 7, false));
    assert_eq!(p.m.view(post()).unwrap().friends, ["Ana"]);
    p.seen(6, true, &[], 41);
    assert_eq!(p.shown(), (true, 7, false), "an older read still is not");
}

/// A tap clears the error shown for the one before it, even a tap that
/// asks for what the heart already shows (and sends nothing).
#[test]
fn a_tap_that_sends_nothing_still_clears_the_shown_error() {
    let mut p = Probe::new();
    p.seen(3, false, &[], 1);
    p.m.tap(post(), true);
    let (like, _) = p.one_send();
    p.err(
        like,
        LikeError::Forbidden {
            message: "no".into(),
        },
    );
    p.take();
    assert!(p.m.view(post()).unwrap().error.is_some());
    let v = p.m.tap(post(), false);
    assert_eq!(v.error, None, "{v:?}");
    assert!(!v.liked && !v.pending);
    assert_eq!(p.m.view(post()).unwrap(), v);
    // Nothing is sent; the post is redrawn without the error.
    assert_eq!(p.take(), [Effect::Changed(v)]);
    // A tap that changes nothing shown changes nothing more.
    p.m.tap(post(), false);
    assert!(p.take().is_empty());
}
