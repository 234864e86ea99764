//! Random event orders against a tiny reference model of the server and of
//! what the viewer should see. After every step the machine's invariants
//! hold; when the network finally delivers, what the viewer sees is the
//! server's truth, and the server holds the viewer's last intent unless that
//! intent was reported as failed.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use likekit_core::wire::{LikeState, PostLikes};
use likekit_core::{
    Action, CallId, Effect, LikeError, Machine, MachineConfig, PostId, RetryPolicy,
};
use proptest::prelude::*;

const POSTS: u64 = 3;

fn pid(n: u64) -> PostId {
    PostId::new(n).unwrap()
}

/// One post on the server: the viewer's like, other users' likes, a version.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ServerPost {
    mine: bool,
    others: u64,
    version: u64,
}

impl ServerPost {
    fn count(&self) -> u64 {
        self.others + u64::from(self.mine)
    }

    fn read(&self) -> PostLikes {
        PostLikes {
            count: self.count(),
            liked_by_me: self.mine,
            friends: vec![],
            version: self.version,
        }
    }

    /// Applies a like or unlike exactly as the server does: the version and
    /// count move only when the row really changes.
    fn apply(&mut self, action: Action) -> LikeState {
        if self.mine != action.liked() {
            self.mine = action.liked();
            self.version += 1;
        }
        LikeState {
            count: self.count(),
            liked_by_me: self.mine,
            version: self.version,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Outcome {
    Ok,
    /// Applied on the server, answer lost.
    LostAnswer,
    /// Refused before applying, worth retrying.
    Busy,
    /// Refused for good.
    Forbidden,
}

#[derive(Debug, Clone)]
enum Step {
    Tap(PostId, bool),
    Deliver(PostId, Outcome),
    Timer(PostId),
    /// A read of the server as it is now.
    Fresh(PostId),
    /// A read served from an older state (a stale cache or a slow answer).
    Stale(PostId, usize),
    /// Another user likes or unlikes.
    Other(PostId, bool),
}

fn step() -> impl Strategy<Value = Step> {
    let post = (1..=POSTS).prop_map(pid);
    let outcome = prop_oneof![
        4 => Just(Outcome::Ok),
        2 => Just(Outcome::LostAnswer),
        2 => Just(Outcome::Busy),
        1 => Just(Outcome::Forbidden),
    ];
    prop_oneof![
        5 => (post.clone(), any::<bool>()).prop_map(|(p, w)| Step::Tap(p, w)),
        5 => (post.clone(), outcome).prop_map(|(p, o)| Step::Deliver(p, o)),
        3 => post.clone().prop_map(Step::Timer),
        1 => post.clone().prop_map(Step::Fresh),
        1 => (post.clone(), 0..8usize).prop_map(|(p, back)| Step::Stale(p, back)),
        1 => (post, any::<bool>()).prop_map(|(p, like)| Step::Other(p, like)),
    ]
}

/// The viewer-side reference model of one post.
#[derive(Debug, Clone, Default)]
struct Model {
    /// The newest server state the client was told (by version).
    confirmed: Option<(u64, bool, u64)>, // (count, liked, version)
    /// The last tap's wish, until it settles or is rolled back.
    intent: Option<bool>,
    last_tap: Option<bool>,
    failed_since_tap: u32,
}

impl Model {
    fn accept(&mut self, count: u64, liked: bool, version: u64) {
        if self.confirmed.is_none_or(|(_, _, v)| version >= v) {
            self.confirmed = Some((count, liked, version));
        }
    }

    fn expected(&self) -> (bool, u64) {
        let (count, liked, _) = self.confirmed.unwrap_or((0, false, 0));
        let shown = self.intent.unwrap_or(liked);
        let count = match (liked, shown) {
            (false, true) => count + 1,
            (true, false) => count.saturating_sub(1),
            _ => count,
        };
        (shown, count)
    }
}

struct World {
    m: Machine,
    server: HashMap<PostId, ServerPost>,
    history: HashMap<PostId, Vec<ServerPost>>,
    in_flight: HashMap<PostId, (CallId, Action)>,
    timers: HashMap<PostId, CallId>,
    model: HashMap<PostId, Model>,
    /// The intents the machine asked to keep, as a journal would.
    journal: HashMap<PostId, bool>,
}

impl World {
    fn new() -> Self {
        Self {
            m: Machine::new(MachineConfig {
                retry: RetryPolicy {
                    max_retries: 2,
                    seed: Some(11),
                    ..RetryPolicy::default()
                },
                max_posts: 100,
                offline_retry: None,
            }),
            server: HashMap::new(),
            history: HashMap::new(),
            in_flight: HashMap::new(),
            timers: HashMap::new(),
            model: HashMap::new(),
            journal: HashMap::new(),
        }
    }

    fn server(&mut self, post: PostId) -> &mut ServerPost {
        self.server.entry(post).or_default()
    }

    fn remember(&mut self, post: PostId) {
        let now = *self.server(post);
        self.history.entry(post).or_default().push(now);
    }

    /// Performs the machine's effects into the world, checking the rules.
    fn collect(&mut self) -> Result<(), TestCaseError> {
        while let Some(effect) = self.m.poll_effect() {
            match effect {
                Effect::Send { post, call, action } => {
                    prop_assert!(
                        !self.in_flight.contains_key(&post) && !self.timers.contains_key(&post),
                        "a second call for post {post} while one is out"
                    );
                    self.in_flight.insert(post, (call, action));
                }
                Effect::Wait { post, call, .. } => {
                    prop_assert!(!self.in_flight.contains_key(&post));
                    prop_assert!(self.timers.insert(post, call).is_none());
                }
                Effect::Failed { post, wanted, .. } => {
                    let model = self.model.entry(post).or_default();
                    model.failed_since_tap += 1;
                    prop_assert!(model.failed_since_tap <= 1, "two failures for one intent");
                    prop_assert_eq!(Some(wanted), model.last_tap, "only the latest intent fails");
                    model.intent = None;
                }
                Effect::Changed(view) => {
                    prop_assert!(view.count < 1_000, "count wrapped below zero");
                }
                Effect::Intent { post, liked } => {
                    let before = match liked {
                        Some(liked) => self.journal.insert(post, liked),
                        None => self.journal.remove(&post),
                    };
                    prop_assert_ne!(before, liked, "an intent noted twice for post {}", post);
                }
            }
        }
        // The journal holds exactly the intents not yet confirmed: each
        // shows on its post, pending; a post with nothing pending has none.
        for post in (1..=POSTS).map(pid) {
            let view = self.m.view(post);
            match self.journal.get(&post) {
                Some(&liked) => {
                    let view = view.expect("a post with an intent is tracked");
                    prop_assert!(
                        view.pending && view.liked == liked,
                        "post {}: {:?}",
                        post,
                        view
                    );
                }
                None => prop_assert!(
                    view.as_ref()
                        .is_none_or(|v| !v.pending || self.m.is_busy(post)),
                    "post {} pending without an intent: {:?}",
                    post,
                    view
                ),
            }
        }
        for post in (1..=POSTS).map(pid) {
            if let Some(view) = self.m.view(post) {
                let model = self.model.entry(post).or_default();
                if !view.pending {
                    model.intent = None;
                }
                prop_assert_eq!((view.liked, view.count), model.expected(), "post {}", post);
                if !self.m.is_busy(post) {
                    // A retry wait the machine gave up early (the viewer came
                    // back to what the server holds): its timer, when it
                    // ends, is ignored.
                    self.timers.remove(&post);
                }
                let pending = self.in_flight.contains_key(&post) || self.timers.contains_key(&post);
                prop_assert_eq!(pending, self.m.is_busy(post));
            }
        }
        let s = self.m.stats();
        // Equal once no tap waits unsent behind a call in flight.
        prop_assert!(s.taps >= s.intents_sent + s.coalesced);
        Ok(())
    }

    fn run(&mut self, step: &Step) -> Result<(), TestCaseError> {
        match *step {
            Step::Tap(post, want) => {
                let view = self.m.tap(post, want);
                let model = self.model.entry(post).or_default();
                model.last_tap = Some(want);
                model.failed_since_tap = 0;
                model.intent = Some(want);
                prop_assert_eq!(view.liked, want, "a tap shows at once");
            }
            Step::Deliver(post, outcome) => {
                if let Some((call, action)) = self.in_flight.remove(&post) {
                    let result = match outcome {
                        Outcome::Ok => Ok(self.server(post).apply(action)),
                        Outcome::LostAnswer => {
                            self.server(post).apply(action);
                            Err(LikeError::Timeout)
                        }
                        Outcome::Busy => Err(LikeError::RateLimited {
                            retry_after_ms: None,
                        }),
                        Outcome::Forbidden => Err(LikeError::Forbidden {
                            message: "no".into(),
                        }),
                    };
                    self.remember(post);
                    if let Ok(state) = &result {
                        let model = self.model.entry(post).or_default();
                        model.accept(state.count, state.liked_by_me, state.version);
                        if model.intent == Some(action.liked()) {
                            model.intent = None;
                        }
                    }
                    self.m.response(post, call, result);
                }
            }
            Step::Timer(post) => {
                if let Some(call) = self.timers.remove(&post) {
                    self.m.timer(post, call);
                }
            }
            Step::Fresh(post) => {
                let read = self.server(post).read();
                self.snapshot(post, read);
            }
            Step::Stale(post, back) => {
                let past = self
                    .history
                    .get(&post)
                    .and_then(|h| h.iter().rev().nth(back).copied());
                if let Some(past) = past {
                    self.snapshot(post, past.read());
                }
            }
            Step::Other(post, like) => {
                let s = self.server(post);
                if like {
                    s.others += 1;
                    s.version += 1;
                } else if s.others > 0 {
                    s.others -= 1;
                    s.version += 1;
                }
                self.remember(post);
            }
        }
        self.collect()
    }

    fn snapshot(&mut self, post: PostId, read: PostLikes) {
        self.model
            .entry(post)
            .or_default()
            .accept(read.count, read.liked_by_me, read.version);
        self.m.snapshot(post, read);
    }

    /// The network recovers: every call succeeds and every timer fires.
    fn settle(&mut self) -> Result<(), TestCaseError> {
        for _ in 0..100 {
            let posts: Vec<PostId> = self
                .in_flight
                .keys()
                .chain(self.timers.keys())
                .copied()
                .collect();
            if posts.is_empty() {
                return Ok(());
            }
            for post in posts {
                self.run(&Step::Deliver(post, Outcome::Ok))?;
                self.run(&Step::Timer(post))?;
            }
        }
        Err(TestCaseError::fail("calls never settled"))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn machine_keeps_its_rules(steps in prop::collection::vec(step(), 1..80)) {
        let mut w = World::new();
        for step in &steps {
            w.run(step)?;
        }
        w.settle()?;
        prop_assert!(!w.m.has_pending_calls());
        let s = w.m.stats();
        prop_assert_eq!(s.taps, s.intents_sent + s.coalesced, "{:?}", s);
        for post in (1..=POSTS).map(pid) {
            let truth = w.server(post).read();
            let model = w.model.get(&post).cloned().unwrap_or_default();
            if let Some(want) = model.last_tap {
                if model.failed_since_tap == 0 {
                    prop_assert_eq!(truth.liked_by_me, want, "post {}: the last intent lands", post);
                }
            }
            w.run(&Step::Fresh(post))?;
            let view = w.m.view(post).unwrap();
            prop_assert_eq!((view.liked, view.count), (truth.liked_by_me, truth.count));
            prop_assert!(!view.pending);
        }
    }
}
