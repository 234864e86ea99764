//! The machine's side of durable intents: what it asks a journal to keep,
//! intents restored from an earlier run, expiry, and keeping a tap while
//! offline.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use likekit_core::wire::{LikeState, PostLikes};
use likekit_core::{
    Action, CallId, Effect, LikeError, Machine, MachineConfig, PostId, RetryPolicy,
};

fn post() -> PostId {
    PostId::new(42).unwrap()
}

fn machine(max_retries: usize, offline_retry: Option<Duration>) -> Machine {
    Machine::new(MachineConfig {
        retry: RetryPolicy {
            max_retries,
            jitter: false,
            ..RetryPolicy::default()
        },
        offline_retry,
        ..MachineConfig::default()
    })
}

fn effects(m: &mut Machine) -> Vec<Effect> {
    m.drain_effects().collect()
}

fn intents(effects: &[Effect]) -> Vec<Option<bool>> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Intent { liked, .. } => Some(*liked),
            _ => None,
        })
        .collect()
}

fn send(effects: &[Effect]) -> Option<(CallId, Action)> {
    effects.iter().find_map(|e| match e {
        Effect::Send { call, action, .. } => Some((*call, *action)),
        _ => None,
    })
}

fn wait(effects: &[Effect]) -> Option<(CallId, Duration)> {
    effects.iter().find_map(|e| match e {
        Effect::Wait { call, delay, .. } => Some((*call, *delay)),
        _ => None,
    })
}

fn failures(effects: &[Effect]) -> Vec<(bool, LikeError)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Failed { wanted, error, .. } => Some((*wanted, error.clone())),
            _ => None,
        })
        .collect()
}

fn ok(liked: bool, count: u64, version: u64) -> Result<LikeState, LikeError> {
    Ok(LikeState {
        count,
        liked_by_me: liked,
        version,
    })
}

fn unavailable() -> LikeError {
    LikeError::Network {
        message: "offline".into(),
    }
}

#[test]
fn each_new_intent_is_noted_and_dropped_once_confirmed() {
    let mut m = machine(0, None);
    m.tap(post(), true);
    let first = effects(&mut m);
    assert_eq!(intents(&first), [Some(true)]);
    let (call, _) = send(&first).unwrap();
    // like → unlike → like while the call is out: each change is noted
    m.tap(post(), false);
    m.tap(post(), true);
    assert_eq!(intents(&effects(&mut m)), [Some(false), Some(true)]);
    // a tap that changes nothing notes nothing
    m.tap(post(), true);
    assert_eq!(intents(&effects(&mut m)), []);
    m.response(post(), call, ok(true, 1, 2));
    assert_eq!(intents(&effects(&mut m)), [None]);
}

#[test]
fn a_rollback_drops_the_intent() {
    let mut m = machine(0, None);
    m.tap(post(), true);
    let (call, _) = send(&effects(&mut m)).unwrap();
    m.response(post(), call, Err(unavailable()));
    let after = effects(&mut m);
    assert_eq!(failures(&after).len(), 1);
    assert_eq!(intents(&after), [None]);
}

#[test]
fn a_restored_intent_shows_pending_at_once_and_is_sent_even_if_it_matches() {
    let mut m = machine(0, None);
    let view = m.restore(post(), true);
    assert!(view.liked && view.pending);
    assert_eq!(view.count, 1, "the viewer's like, until a read says more");
    let out = effects(&mut m);
    assert_eq!(send(&out), Some((send(&out).unwrap().0, Action::Like)));
    assert_eq!(intents(&out), [Some(true)]);
    // the read that lands meanwhile moves the count, not the heart
    let view = m.snapshot(
        post(),
        PostLikes {
            count: 10,
            liked_by_me: false,
            friends: vec![],
            version: 3,
        },
    );
    assert!(view.liked && view.pending);
    assert_eq!(view.count, 11);

    // An unlike restored on a post the read shows unliked is still sent:
    // the earlier run's call may have landed.
    let mut m = machine(0, None);
    m.snapshot(
        post(),
        PostLikes {
            count: 10,
            liked_by_me: false,
            friends: vec![],
            version: 3,
        },
    );
    effects(&mut m);
    m.restore(post(), false);
    assert_eq!(send(&effects(&mut m)).unwrap().1, Action::Unlike);
}

#[test]
fn a_tap_in_this_run_wins_over_a_restored_intent() {
    let mut m = machine(0, None);
    m.tap(post(), true);
    let (call, _) = send(&effects(&mut m)).unwrap();
    let view = m.restore(post(), false);
    assert!(view.liked && view.pending);
    assert!(effects(&mut m).is_empty(), "nothing more sent or noted");
    // and once that tap is confirmed, it is still the newer intent
    m.response(post(), call, ok(true, 1, 2));
    effects(&mut m);
    assert!(m.restore(post(), false).liked);
    assert!(effects(&mut m).is_empty());
}

#[test]
fn an_expired_intent_fails_once_and_sends_nothing() {
    let mut m = machine(0, None);
    m.expire(post(), true);
    let out = effects(&mut m);
    assert_eq!(failures(&out), [(true, LikeError::Expired)]);
    assert!(send(&out).is_none());
    assert!(
        m.view(post()).is_none(),
        "an untracked post stays untracked"
    );
}

#[test]
fn kept_while_offline_a_tap_stays_pending_and_saves_later() {
    let every = Duration::from_secs(30);
    let mut m = machine(1, Some(every));
    m.tap(post(), true);
    let (call, _) = send(&effects(&mut m)).unwrap();
    m.response(post(), call, Err(unavailable()));
    // the one retry of the budget, at the backoff's delay
    let (call, delay) = wait(&effects(&mut m)).unwrap();
    assert!(delay < every);
    m.timer(post(), call);
    let (call, _) = send(&effects(&mut m)).unwrap();
    m.response(post(), call, Err(unavailable()));
    // budget spent: not rolled back, tried again on the slow schedule
    let out = effects(&mut m);
    assert!(failures(&out).is_empty());
    let shown: Vec<_> = out
        .iter()
        .filter_map(|e| match e {
            Effect::Changed(view) => Some(view.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(shown.len(), 1, "observers hear the view say why: {out:?}");
    assert!(shown[0].pending && shown[0].error.is_some());
    let (call, delay) = wait(&out).unwrap();
    assert_eq!(delay, every);
    let view = m.view(post()).unwrap();
    assert!(view.liked && view.pending);
    assert_eq!(view.error.unwrap().code(), "network", "the view says why");
    m.timer(post(), call);
    let (call, _) = send(&effects(&mut m)).unwrap();
    m.response(post(), call, ok(true, 5, 2));
    let view = m.view(post()).unwrap();
    assert!(view.liked && !view.pending && view.error.is_none());
    // the default rolls back as ever
    let mut m = machine(0, None);
    m.tap(post(), true);
    let (call, _) = send(&effects(&mut m)).unwrap();
    m.response(post(), call, Err(unavailable()));
    assert_eq!(failures(&effects(&mut m)).len(), 1);
}

#[test]
fn an_intent_kept_offline_expires_between_tries_but_not_in_flight() {
    let mut m = machine(0, Some(Duration::from_secs(30)));
    m.tap(post(), true);
    let (call, _) = send(&effects(&mut m)).unwrap();
    // in flight: its answer settles it
    m.expire(post(), true);
    assert!(effects(&mut m).is_empty());
    m.response(post(), call, Err(unavailable()));
    let (wait_call, _) = wait(&effects(&mut m)).unwrap();
    // another intent by now: not this one's to expire
    m.expire(post(), false);
    assert!(effects(&mut m).is_empty());
    m.expire(post(), true);
    let out = effects(&mut m);
    assert_eq!(failures(&out), [(true, LikeError::Expired)]);
    assert_eq!(intents(&out), [None]);
    let view = m.view(post()).unwrap();
    assert!(!view.liked && !view.pending);
    assert_eq!(view.error.unwrap(), LikeError::Expired);
    // the wait that was cancelled changes nothing when it ends
    m.timer(post(), wait_call);
    assert!(effects(&mut m).is_empty());
}

#[test]
fn an_expiring_intent_the_server_already_holds_is_dropped_silently() {
    let mut m = machine(0, Some(Duration::from_secs(30)));
    m.snapshot(post(), likes(false, 4, 1));
    m.tap(post(), true);
    let (call, _) = send(&effects(&mut m)).unwrap();
    m.response(post(), call, Err(unavailable()));
    wait(&effects(&mut m)).unwrap();
    // A read newer than the call shows the like saved.
    m.snapshot(post(), likes(true, 5, 2));
    effects(&mut m);
    assert!(!m.expire(post(), true));
    let out = effects(&mut m);
    assert!(failures(&out).is_empty(), "{out:?}");
    assert_eq!(intents(&out), [None]);
    let view = m.view(post()).unwrap();
    assert!(view.liked && !view.pending && view.error.is_none());

    // An earlier run's intent that a read of this run shows saved.
    let mut m = machine(0, None);
    m.snapshot(post(), likes(true, 5, 2));
    effects(&mut m);
    assert!(!m.expire(post(), true));
    assert!(effects(&mut m).is_empty());
    // One the read contradicts still fails, once.
    assert!(m.expire(post(), false));
    assert_eq!(failures(&effects(&mut m)), [(false, LikeError::Expired)]);
}

fn likes(liked: bool, count: u64, version: u64) -> PostLikes {
    PostLikes {
        count,
        liked_by_me: liked,
        friends: vec![],
        version,
    }
}

#[test]
fn a_restore_after_a_settled_tap_of_this_run_is_ignored() {
    // A tap confirmed in this run is newer than an earlier run's intent.
    let mut m = machine(0, None);
    m.snapshot(post(), likes(false, 3, 1));
    m.tap(post(), true);
    let (call, _) = send(&effects(&mut m)).unwrap();
    m.response(post(), call, ok(true, 4, 2));
    effects(&mut m);
    let view = m.restore(post(), false);
    assert!(view.liked && !view.pending, "{view:?}");
    assert_eq!(view.count, 4);
    assert!(effects(&mut m).is_empty(), "nothing sent or noted");
    // So is a tap that asked for what the heart showed (nothing sent).
    let mut m = machine(0, None);
    m.snapshot(post(), likes(true, 3, 1));
    m.tap(post(), true);
    effects(&mut m);
    let view = m.restore(post(), false);
    assert!(view.liked && !view.pending, "{view:?}");
    assert!(effects(&mut m).is_empty(), "nothing sent or noted");
    // A post only read in this run takes the earlier run's intent.
    let mut m = machine(0, None);
    m.snapshot(post(), likes(true, 3, 1));
    effects(&mut m);
    let view = m.restore(post(), false);
    assert!(!view.liked && view.pending, "{view:?}");
    let out = effects(&mut m);
    assert_eq!(send(&out).unwrap().1, Action::Unlike);
    assert_eq!(intents(&out), [Some(false)]);
}
