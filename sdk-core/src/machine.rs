//! The like machine: pure, synchronous, no I/O, no clock, no runtime.
//!
//! Inputs go in ([`Machine::tap`], [`Machine::response`],
//! [`Machine::snapshot`], [`Machine::timer`]); [`Effect`]s come out
//! ([`Machine::poll_effect`]). Whoever drives the machine performs the
//! effects — sends the call, starts the timer, redraws the post, shows the
//! "didn't save" message — and feeds what happened back in. Time passes only
//! as [`Effect::Wait`] delays and the [`Machine::timer`] inputs that end
//! them, so every race is an ordinary unit test.
//!
//! ## The rules
//!
//! * **Instant.** A tap returns the new [`PostView`] before any I/O.
//! * **State on the wire.** Calls carry [`Action::Like`] or
//!   [`Action::Unlike`], never "toggle".
//! * **One call per post.** While a call is in flight (or waiting to be
//!   retried), later taps only change the *desired* state.
//! * **Coalescing.** When the slot frees, only the latest desired state is
//!   sent, and nothing when it equals the confirmed state. A retry waiting
//!   for a state the viewer no longer wants ends at once when nothing
//!   needs sending (the server's state is known): the post settles then,
//!   not when the wait would have ended. So does a call refused before it
//!   applied (a 429) once the server is known to hold what the viewer
//!   wants by then (an undo tapped while the call was out): no retry
//!   wait begins.
//! * **Retry.** Transient errors retry with exponential backoff and jitter
//!   (`backon`'s delay iterator), never sooner than a server's Retry-After;
//!   permanent errors do not retry.
//! * **Rollback.** When the latest intent finally fails, the post goes back
//!   to its confirmed state and one [`Effect::Failed`] is emitted. An intent a
//!   later tap superseded fails silently.
//! * **Reads never clobber intent.** Displayed = confirmed + the pending
//!   intent; a snapshot older (by version) than the one held is ignored.
//! * **Versions.** The server's version of a post only grows, and a read
//!   never shows one the server has not reached, so a like's or unlike's
//!   own answer is at least as new as what was held when its call went
//!   out. An answer older than a read that arrived while the call was out
//!   is ignored like an older snapshot (the read is newer). An answer
//!   older than what was held when the call went out cannot come from the
//!   same history: the server's versions started again (a test server
//!   reset, a database restored). That answer is taken whole — heart,
//!   count and version; the friends named are dropped with the old
//!   history — and reads of the new history count from then on. Reads
//!   alone cannot tell a restarted history from a stale cache, so until
//!   a write is answered, reads below the version held stay ignored.
//! * **Bounded memory.** Posts nobody watches and with no pending work are
//!   evicted, least recently used first, beyond [`MachineConfig::max_posts`].
//! * **Lost answers.** After a failure whose request may have reached the
//!   server (a timeout, a 5xx, a broken connection), the server's state is
//!   unknown: while the intent's retries last, the machine re-sends the
//!   desired state even when it equals the confirmed one, and until a call
//!   succeeds a tap is sent even when it matches the heart. When the
//!   retries run out instead, the intent is rolled back and nothing more is
//!   sent: the server may hold the lost call's state after all (a like the
//!   viewer was told did not save). The next read of the post shows it.
//! * **Already there.** When the latest intent fails for good (or expires)
//!   but a read newer than its call already showed the server holding what
//!   the viewer wanted, the intent settles silently: no rollback, no
//!   [`Effect::Failed`].

use std::collections::VecDeque;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};
use lru::LruCache;

use crate::wire::{LikeState, PostLikes};
use crate::{LikeError, LikeLine, PostId, PostView};

/// Identifies one call (or one retry timer) the machine asked for. Answers
/// and timers that carry an id the machine no longer waits for are ignored.
pub type CallId = u64;

/// What a call asks the server for: the state the viewer wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// `POST /posts/{id}/like`
    Like,
    /// `DELETE /posts/{id}/like`
    Unlike,
}

impl Action {
    /// The action that makes `liked` true on the server.
    pub fn to_reach(liked: bool) -> Self {
        if liked { Self::Like } else { Self::Unlike }
    }

    /// The liked state this action leaves on the server.
    pub fn liked(self) -> bool {
        self == Self::Like
    }
}

/// Something the driver must do for the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Send a call; answer with [`Machine::response`].
    Send {
        /// The post.
        post: PostId,
        /// The id to answer with.
        call: CallId,
        /// Like (POST) or unlike (DELETE).
        action: Action,
    },
    /// Wait `delay`, then call [`Machine::timer`] with `call`.
    Wait {
        /// The post.
        post: PostId,
        /// The id to answer with.
        call: CallId,
        /// How long to wait.
        delay: Duration,
        /// Whether the app may end the wait early (the client's
        /// `retry_now`, when the network is back): a backoff's or an
        /// offline wait's. Never one the server asked for (`Retry-After`).
        early: bool,
    },
    /// The post's displayed state changed: redraw it.
    Changed(PostView),
    /// The viewer's unconfirmed intent for the post changed: `Some(liked)`
    /// for a new intent to keep (a journal writes it before the post's
    /// next call goes out), `None` once it is confirmed or given up.
    ///
    /// It comes after the [`Effect::Send`] of the same tap or restore, in
    /// the same [`drain_effects`](Machine::drain_effects): a driver that
    /// keeps a journal takes every effect of a drain first, saves, and only
    /// then performs the drain's sends (as `LikeClient`'s driver does).
    Intent {
        /// The post.
        post: PostId,
        /// The intent to keep, or none.
        liked: Option<bool>,
    },
    /// The viewer's latest intent did not save; the post is back at its
    /// confirmed state, and an [`Effect::Changed`] with that state follows
    /// unless the intent was never shown ([`Machine::expire`] of an intent
    /// for a post with nothing pending: nothing changed on screen). Tell the
    /// viewer ("your like didn't save").
    Failed {
        /// The post.
        post: PostId,
        /// What the viewer wanted: `true` for a like, `false` for an unlike.
        wanted: bool,
        /// Why it failed.
        error: LikeError,
    },
}

/// How failed calls are retried. Delays grow from `min_delay` by `factor` up
/// to `max_delay`, each with up to 100% random jitter added; after
/// `max_retries` retries the latest intent is rolled back.
///
/// A server's `Retry-After` is honoured as the least delay up to
/// [`RetryPolicy::retry_after_ceiling`] (the larger of `max_delay` and
/// [`MAX_RETRY_AFTER`]); a server that asks for longer will not take the
/// call soon, so that failure ends the retries at once.
///
/// ```
/// use std::time::Duration;
/// let policy = likekit_core::RetryPolicy {
///     max_retries: 2,
///     ..likekit_core::RetryPolicy::default()
/// };
/// assert_eq!(policy.min_delay, Duration::from_millis(500));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// The first retry's delay, before jitter.
    pub min_delay: Duration,
    /// The longest delay, before jitter.
    pub max_delay: Duration,
    /// How much each delay grows.
    pub factor: f32,
    /// Retries after the first attempt; 0 means never retry.
    pub max_retries: usize,
    /// Add random jitter (0–100% of the delay) so that many clients that
    /// failed together do not retry together.
    pub jitter: bool,
    /// Seed the jitter's random numbers, for reproducible tests.
    pub seed: Option<u64>,
}

impl Default for RetryPolicy {
    /// 0.5 s, 1 s, 2 s, 4 s (each plus jitter): about 8–15 s before a like
    /// is given up, long enough for a train's tunnel, short enough that the
    /// viewer still remembers tapping.
    fn default() -> Self {
        Self {
            min_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            factor: 2.0,
            max_retries: 4,
            jitter: true,
            seed: None,
        }
    }
}

/// The longest `Retry-After` a [`RetryPolicy`] waits for, unless its
/// `max_delay` is longer: one minute. A viewer still watching the heart
/// after that would rather hear "didn't save" than wait on.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

impl RetryPolicy {
    /// The longest `Retry-After` honoured: the larger of `max_delay` and
    /// [`MAX_RETRY_AFTER`]. A call refused with a longer one is not
    /// retried (and, kept while offline, is tried again after the larger
    /// of the offline interval and this ceiling).
    ///
    /// ```
    /// use std::time::Duration;
    /// use likekit_core::RetryPolicy;
    /// assert_eq!(RetryPolicy::default().retry_after_ceiling(), Duration::from_secs(60));
    /// let patient = RetryPolicy { max_delay: Duration::from_secs(300), ..RetryPolicy::default() };
    /// assert_eq!(patient.retry_after_ceiling(), Duration::from_secs(300));
    /// ```
    pub fn retry_after_ceiling(&self) -> Duration {
        self.max_delay.max(MAX_RETRY_AFTER)
    }

    fn backoff(&self, salt: u64) -> ExponentialBackoff {
        let mut builder = ExponentialBuilder::new()
            .with_min_delay(self.min_delay)
            .with_max_delay(self.max_delay)
            .with_factor(self.factor)
            .with_max_times(self.max_retries);
        if self.jitter {
            builder = builder.with_jitter();
        }
        if let Some(seed) = self.seed {
            builder = builder.with_jitter_seed(seed.wrapping_add(salt));
        }
        builder.build()
    }
}

/// The machine's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineConfig {
    /// How failed calls are retried.
    pub retry: RetryPolicy,
    /// How many posts to keep before idle ones are evicted (posts that are
    /// watched or have pending work are never evicted).
    pub max_posts: usize,
    /// Keep while offline: when set, an intent whose retries are used up
    /// on transient failures is not rolled back but kept pending (its view
    /// carries the last error) and tried again every this long, until it
    /// saves, fails for good, or expires. `None` (the default) rolls back.
    pub offline_retry: Option<Duration>,
}

impl Default for MachineConfig {
    fn default() -> Self {
        Self {
            retry: RetryPolicy::default(),
            max_posts: 10_000,
            offline_retry: None,
        }
    }
}

/// Counters a product team would chart.
///
/// `taps == intents_sent + coalesced`: every tap either started a call of
/// its own or was absorbed into one. An intent restored from a journal
/// ([`Machine::restore`]) is a tap of an earlier run: it adds to
/// `intents_sent` or `coalesced` without adding to `taps`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Taps (`tap` calls) seen.
    pub taps: u64,
    /// Calls sent, retries included.
    pub calls_sent: u64,
    /// Calls sent for a new intent (not retries).
    pub intents_sent: u64,
    /// Taps that did not need a call of their own: a later tap replaced them
    /// while a call was out, they returned to the confirmed state, or they
    /// asked for what the heart already showed.
    pub coalesced: u64,
    /// Calls sent again after a transient failure.
    pub retries: u64,
    /// Intents rolled back with a [`Effect::Failed`].
    pub rollbacks: u64,
    /// Posts evicted to stay within [`MachineConfig::max_posts`].
    pub evictions: u64,
}

/// What the server last confirmed for the post, as this viewer sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Confirmed {
    count: u64,
    liked: bool,
    friends: Vec<String>,
    /// `None` until the server has told us anything.
    version: Option<u64>,
}

impl Confirmed {
    /// Whether state at `version` is at least as new as what we hold (a
    /// write's answer from a restarted history is taken all the same:
    /// `response_inner`).
    fn accepts(&self, version: u64) -> bool {
        self.version.is_none_or(|held| version >= held)
    }
}

/// The post's one call slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Idle,
    InFlight {
        call: CallId,
        action: Action,
        /// The confirmed version when the call went out. Versions only
        /// grow, and a read's never runs ahead of the server's, so in the
        /// same history the call's answer is at least this new.
        over: Option<u64>,
    },
    /// A failed call waits to be retried; `action` is what it carried.
    Waiting {
        call: CallId,
        action: Action,
    },
}

#[derive(Debug)]
struct PostState {
    confirmed: Confirmed,
    /// The viewer's intent, while it is not yet confirmed.
    desired: Option<bool>,
    slot: Slot,
    /// A failed call may have been applied: the server's state is unknown.
    uncertain: bool,
    /// The confirmed version when the pending intent's call first went
    /// out (`None`: before any read, or an intent from an earlier run). A
    /// confirmed state newer than this was learnt after the call left.
    base: Option<u64>,
    backoff: Option<Box<ExponentialBackoff>>,
    error: Option<Box<LikeError>>,
    watchers: u32,
    /// The viewer tapped the post (or an intent of an earlier run was
    /// restored onto it) while it was tracked.
    tapped: bool,
}

impl PostState {
    fn new() -> Self {
        Self {
            confirmed: Confirmed::default(),
            desired: None,
            slot: Slot::Idle,
            uncertain: false,
            base: None,
            backoff: None,
            error: None,
            watchers: 0,
            tapped: false,
        }
    }

    fn liked(&self) -> bool {
        self.desired.unwrap_or(self.confirmed.liked)
    }

    /// Whether the post's view is more than a watcher's placeholder: the
    /// server told us its state, or the viewer tapped it.
    fn is_known(&self) -> bool {
        self.confirmed.version.is_some() || self.tapped
    }

    fn count(&self) -> u64 {
        match (self.confirmed.liked, self.liked()) {
            (false, true) => self.confirmed.count.saturating_add(1),
            (true, false) => self.confirmed.count.saturating_sub(1),
            _ => self.confirmed.count,
        }
    }

    fn pending(&self) -> bool {
        self.desired.is_some() || self.slot != Slot::Idle
    }

    fn idle(&self) -> bool {
        self.watchers == 0 && !self.pending()
    }

    fn view(&self, post_id: PostId) -> PostView {
        let liked = self.liked();
        // A count read from the server's one-second cache can lag behind the
        // viewer's own (fresh) heart or the friends named: never show fewer
        // likes than the line names.
        let line = LikeLine::new(liked, &self.confirmed.friends, self.count());
        PostView {
            post_id,
            liked,
            count: line.total,
            friends: self.confirmed.friends.clone(),
            line,
            pending: self.pending(),
            error: self.error.as_deref().cloned(),
        }
    }

    /// Whether the viewer's intent was set by a tap while another call was
    /// out, and has not been sent yet.
    fn has_unsent_intent(&self) -> bool {
        self.desired
            .is_some_and(|want| self.slot == Slot::Idle || !self.slot_carries(want))
    }

    /// Whether the call out (or waiting to be retried) asks for `want`.
    fn slot_carries(&self, want: bool) -> bool {
        match self.slot {
            Slot::Idle => false,
            Slot::InFlight { action, .. } | Slot::Waiting { action, .. } => action.liked() == want,
        }
    }

    /// Whether the desired state still has to be sent.
    fn needs_call(&self, want: bool) -> bool {
        want != self.confirmed.liked || self.server_unknown()
    }

    /// Whether what the server holds is unknown: the post was never read
    /// (no confirmed version: "not liked" is only a placeholder), or a lost
    /// answer left it so. A tap is then always sent.
    fn server_unknown(&self) -> bool {
        self.uncertain || self.confirmed.version.is_none()
    }

    /// Whether a state learnt after the pending intent's call went out
    /// shows the server holding `want`.
    fn holds_since_sent(&self, want: bool) -> bool {
        self.confirmed.liked == want && self.confirmed.version > self.base
    }

    /// Drops the intent without a rollback: the server holds it.
    fn settle_silently(&mut self) {
        self.desired = None;
        self.backoff = None;
        self.error = None;
    }
}

/// The sans-IO like machine for one viewer: every post's confirmed state,
/// the viewer's intent, and the one call in flight per post.
///
/// ```
/// # let post = likekit_core::PostId::new(42).unwrap();
/// use likekit_core::{Action, Effect, Machine, MachineConfig};
/// use likekit_core::wire::LikeState;
///
/// let mut m = Machine::new(MachineConfig::default());
/// let view = m.tap(post, true); // instant: before any I/O
/// assert!(view.liked);
/// let effects: Vec<Effect> = m.drain_effects().collect();
/// let Some(&Effect::Send { call, action, .. }) = effects.iter().find(|e| matches!(e, Effect::Send { .. }))
/// else { panic!("no call") };
/// assert_eq!(action, Action::Like);
///
/// // the server answers
/// m.response(post, call, Ok(LikeState { count: 1204, liked_by_me: true, version: 9 }));
/// assert_eq!(m.view(post).unwrap().line.to_string(), "Liked by you and 1,203 others");
/// ```
#[derive(Debug)]
pub struct Machine {
    config: MachineConfig,
    posts: LruCache<PostId, PostState>,
    effects: VecDeque<Effect>,
    next_call: CallId,
    backoffs_made: u64,
    stats: Stats,
}

impl Machine {
    /// A machine with no posts.
    pub fn new(config: MachineConfig) -> Self {
        Self {
            config,
            posts: LruCache::unbounded(),
            effects: VecDeque::new(),
            next_call: 1,
            backoffs_made: 0,
            stats: Stats::default(),
        }
    }

    /// The settings the machine runs with.
    pub fn config(&self) -> &MachineConfig {
        &self.config
    }

    /// The counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// How many posts are tracked now.
    pub fn len(&self) -> usize {
        self.posts.len()
    }

    /// Whether no post is tracked.
    pub fn is_empty(&self) -> bool {
        self.posts.is_empty()
    }

    /// What the post shows now, once the machine knows anything of it: a
    /// read, or a tap (or a restored intent). A post tracked only
    /// because someone watches it, and never read, is `None`: the machine
    /// makes up no view (count 0, not liked) that a screen could show as
    /// the server's. The first read of such a post sends
    /// [`Effect::Changed`] whatever it holds.
    pub fn view(&self, post: PostId) -> Option<PostView> {
        self.posts
            .peek(&post)
            .filter(|s| s.is_known())
            .map(|s| s.view(post))
    }

    /// The next effect to perform, oldest first.
    pub fn poll_effect(&mut self) -> Option<Effect> {
        self.effects.pop_front()
    }

    /// Every effect waiting to be performed, oldest first.
    pub fn drain_effects(&mut self) -> impl Iterator<Item = Effect> + '_ {
        self.effects.drain(..)
    }

    /// The viewer taps the heart wanting `want` (`true` = like). Returns the
    /// new view at once; the call, if one is needed, is an [`Effect::Send`]
    /// now or after the call in flight ends.
    pub fn tap(&mut self, post: PostId, want: bool) -> PostView {
        let before = self.intent(post);
        let view = self.tap_inner(post, want);
        self.note_intent(post, before);
        view
    }

    fn tap_inner(&mut self, post: PostId, want: bool) -> PostView {
        self.stats.taps += 1;
        let st = self.posts.get_or_insert_mut(post, PostState::new);
        st.tapped = true;
        if st.liked() == want && (!st.server_unknown() || st.desired == Some(want)) {
            // Already showing (and asking for) this. When the server's state
            // is unknown (the post was never read, or a lost answer left it
            // so), the tap is sent to make sure: an app showing a post from
            // its own data unlikes one this client never read.
            self.stats.coalesced += 1;
            if st.error.take().is_some() {
                // The last tap's error goes with this tap all the same.
                let view = st.view(post);
                self.effects.push_back(Effect::Changed(view.clone()));
                return view;
            }
            return st.view(post);
        }
        if st.has_unsent_intent() {
            // An earlier tap's intent, never sent, is replaced by this one.
            self.stats.coalesced += 1;
        }
        if st.slot_carries(want) {
            // This tap rides along with the call already out.
            self.stats.coalesced += 1;
        }
        st.desired = Some(want);
        st.error = None;
        // A new intent gets a retry budget of its own.
        st.backoff = None;
        if matches!(st.slot, Slot::Waiting { .. }) {
            // While a retry waits, a tap back to what the server holds
            // settles at once (`pump`): show the view after that.
            self.pump(post);
            let view = self.entry(post).view(post);
            self.effects.push_back(Effect::Changed(view.clone()));
            self.evict();
            return view;
        }
        let view = st.view(post);
        self.effects.push_back(Effect::Changed(view.clone()));
        self.pump(post);
        self.evict();
        view
    }

    /// The viewer taps the heart: like if it shows empty, unlike if filled.
    /// The call still carries the wanted state, never "toggle".
    ///
    /// It works from the state the machine tracks: a post it does not
    /// track (never read, tapped or watched, or evicted since) counts as
    /// not liked, so this likes it. For a post the app shows from data of
    /// its own, tap with the state wanted ([`Machine::tap`] with
    /// `!shown_liked`).
    pub fn toggle(&mut self, post: PostId) -> PostView {
        let want = !self.posts.peek(&post).is_some_and(PostState::liked);
        self.tap(post, want)
    }

    /// The answer to the call `call` arrived. A successful one is the
    /// post's confirmed state, unless a read newer than it arrived while
    /// the call was out; one older than the state held when the call went
    /// out comes from a server whose versions started again, and is taken
    /// whole (see "Versions" in the module docs).
    pub fn response(&mut self, post: PostId, call: CallId, result: Result<LikeState, LikeError>) {
        let before = self.intent(post);
        self.response_inner(post, call, result);
        self.note_intent(post, before);
    }

    fn response_inner(&mut self, post: PostId, call: CallId, result: Result<LikeState, LikeError>) {
        let Some(st) = self.posts.get_mut(&post) else {
            return;
        };
        let (action, over) = match st.slot {
            Slot::InFlight {
                call: c,
                action,
                over,
            } if c == call => (action, over),
            _ => return,
        };
        let before = st.view(post);
        st.slot = Slot::Idle;
        match result {
            Ok(state) => {
                st.uncertain = false;
                st.backoff = None;
                st.error = None;
                if st.confirmed.accepts(state.version) {
                    st.confirmed.count = state.count;
                    st.confirmed.liked = state.liked_by_me;
                    st.confirmed.version = Some(state.version);
                } else if over.is_some_and(|held| state.version < held) {
                    // Older than what was held when the call went out: not
                    // the same history. The server's versions started
                    // again (a reset, a database restored); the answer is
                    // its state now, taken whole, and the friends named
                    // belong to the history it no longer has.
                    st.confirmed = Confirmed {
                        count: state.count,
                        liked: state.liked_by_me,
                        friends: Vec::new(),
                        version: Some(state.version),
                    };
                }
                // Otherwise a read that arrived while the call was out is
                // newer than the answer, and stays.
                if st.desired == Some(action.liked()) {
                    // The call did what the viewer last asked for.
                    st.desired = None;
                }
            }
            Err(error) => {
                if self.fail(post, action, error) {
                    return;
                }
            }
        }
        self.pump(post);
        self.changed_since(post, &before);
        self.evict();
    }

    /// Handles a failed call. Returns `true` when the failure ended in a
    /// retry wait or a rollback, `false` when the slot is free: a later
    /// tap superseded the failed intent, or the intent settled.
    fn fail(&mut self, post: PostId, action: Action, error: LikeError) -> bool {
        let st = self.state(post);
        st.uncertain |= error.may_have_applied();
        let want = st.desired.unwrap_or(action.liked());
        if error.is_transient() && !st.needs_call(want) {
            // Nothing to retry: the call was refused before it applied,
            // and the server is known to hold what the viewer wants now
            // (an undo tapped while the call was out, or a read that
            // arrived meanwhile). The intent settles now, not after a
            // retry's wait; a waiting retry would settle the same way.
            st.error = None;
            self.send_or_settle(post, want == action.liked());
            return false;
        }
        if error.is_transient() {
            let mut delay = self.next_delay(post, &error);
            let mut shown = None;
            if let (None, Some(every), true) =
                (delay, self.config.offline_retry, want == action.liked())
            {
                // Retries used up, kept while offline: the latest intent is
                // tried again on the slower schedule, its view saying why.
                let ceiling = self.config.retry.retry_after_ceiling();
                delay = Some(
                    error
                        .retry_after()
                        .map_or(every, |at| every.max(at.min(ceiling))),
                );
                let st = self.state(post);
                if st.error.as_deref() != Some(&error) {
                    st.error = Some(Box::new(error.clone()));
                    shown = Some(st.view(post));
                }
            }
            if let Some(delay) = delay {
                let call = self.next_call_id();
                self.state(post).slot = Slot::Waiting { call, action };
                let early = error.retry_after().is_none();
                self.effects.push_back(Effect::Wait {
                    post,
                    call,
                    delay,
                    early,
                });
                if let Some(view) = shown {
                    self.effects.push_back(Effect::Changed(view));
                }
                return true;
            }
        }
        self.state(post).backoff = None;
        if want != action.liked() {
            return false;
        }
        let st = self.state(post);
        if st.holds_since_sent(want) {
            // A read newer than the call already showed the server holding
            // what the viewer wanted: nothing to roll back, nothing to tell.
            st.settle_silently();
            return false;
        }
        self.roll_back(post, want, error);
        true
    }

    /// A read of the post arrived (from `refresh`, a feed page, or the app's
    /// own data). Older than what is held (by version): ignored (see
    /// "Versions" in the module docs for a server whose versions started
    /// again). The viewer's pending intent stays on top of it.
    ///
    /// Returns what the post shows after the read — even when the cache
    /// bound lets the post go at once, so a reader always gets the view the
    /// machine's rules make of it.
    pub fn snapshot(&mut self, post: PostId, likes: PostLikes) -> PostView {
        let before = self.intent(post);
        let view = self.snapshot_inner(post, likes);
        self.note_intent(post, before);
        view
    }

    fn snapshot_inner(&mut self, post: PostId, likes: PostLikes) -> PostView {
        let st = self.entry(post);
        if !st.confirmed.accepts(likes.version) {
            return st.view(post);
        }
        let before = st.is_known().then(|| st.view(post));
        st.confirmed = Confirmed {
            count: likes.count,
            liked: likes.liked_by_me,
            friends: likes.friends,
            version: Some(likes.version),
        };
        if st.slot == Slot::Idle {
            st.error = None;
        }
        self.pump(post);
        match before {
            Some(before) => self.changed_since(post, &before),
            // The post becomes known: its watchers hear it, even when it
            // holds what a placeholder would (no like, no count).
            None => {
                let view = self.state(post).view(post);
                self.effects.push_back(Effect::Changed(view));
            }
        }
        let view = self.entry(post).view(post);
        self.evict();
        view
    }

    /// The wait [`Effect::Wait`] asked for, with id `call`, is over.
    pub fn timer(&mut self, post: PostId, call: CallId) {
        let before = self.intent(post);
        self.timer_inner(post, call);
        self.note_intent(post, before);
    }

    /// An intent kept from an earlier run (an intent journal): the post
    /// shows it at once, pending, and it is sent like a tap — always, since
    /// the server may or may not have it. Ignored when the viewer already
    /// tapped the post in this run, even a tap that is settled by now or
    /// sent nothing (that tap is newer; a post evicted since is not
    /// remembered), and when an intent was already restored onto it.
    /// Returns the view.
    pub fn restore(&mut self, post: PostId, want: bool) -> PostView {
        let st = self.entry(post);
        let tapped = std::mem::replace(&mut st.tapped, true);
        if tapped || st.desired.is_some() || st.slot != Slot::Idle {
            let view = st.view(post);
            self.evict();
            return view;
        }
        let before = st.view(post);
        st.desired = Some(want);
        st.uncertain = true;
        st.error = None;
        self.pump(post);
        // The intent predates every read of this run.
        self.state(post).base = None;
        self.changed_since(post, &before);
        self.note_intent(post, None);
        let view = self.entry(post).view(post);
        self.evict();
        view
    }

    /// The viewer's intent `want` for the post is too old to send: it is
    /// dropped with one [`Effect::Failed`] ([`LikeError::Expired`]) — an
    /// intent from an earlier run with nothing pending for its post (not
    /// tracked, or only read or watched; no [`Effect::Changed`] follows,
    /// as it was never shown), or one kept pending while offline and
    /// waiting for its next try (rolled back to the confirmed state).
    /// Nothing happens while a call for it is in flight (its answer
    /// settles it) or when the viewer wants something else by now. When a
    /// read (newer than the intent's call, for a pending one) shows the
    /// server already holding `want`, the intent is dropped silently.
    ///
    /// Returns whether an [`Effect::Failed`] was emitted.
    pub fn expire(&mut self, post: PostId, want: bool) -> bool {
        let pending = self
            .posts
            .peek(&post)
            .map(|st| (st.desired, st.slot != Slot::Idle));
        match pending {
            // Nothing of it in this run (the post untracked, or only read
            // or watched): the viewer hears of it, nothing else changes,
            // unless a read of this run (newer than any earlier run's tap)
            // shows the server holding it.
            None | Some((None, false)) => {
                let held = self
                    .posts
                    .peek(&post)
                    .is_some_and(|st| st.confirmed.version.is_some() && st.confirmed.liked == want);
                if !held {
                    self.effects.push_back(Effect::Failed {
                        post,
                        wanted: want,
                        error: LikeError::Expired,
                    });
                }
                return !held;
            }
            Some((desired, _)) if desired != Some(want) => return false,
            _ => {}
        }
        if matches!(self.state(post).slot, Slot::InFlight { .. }) {
            return false;
        }
        let before = self.intent(post);
        let st = self.state(post);
        st.slot = Slot::Idle;
        let failed = if st.holds_since_sent(want) {
            let shown = st.view(post);
            st.settle_silently();
            self.changed_since(post, &shown);
            self.evict();
            false
        } else {
            self.roll_back(post, want, LikeError::Expired);
            true
        };
        self.note_intent(post, before);
        failed
    }

    fn timer_inner(&mut self, post: PostId, call: CallId) {
        let Some(st) = self.posts.get_mut(&post) else {
            return;
        };
        match st.slot {
            Slot::Waiting { call: c, action } if c == call => {
                st.slot = Slot::Idle;
                let retry = st.desired == Some(action.liked());
                let before = st.view(post);
                self.send_or_settle(post, retry);
                self.changed_since(post, &before);
                self.evict();
            }
            _ => {}
        }
    }

    /// Someone watches the post: keep it tracked until [`Machine::unwatch`].
    pub fn watch(&mut self, post: PostId) {
        self.entry(post).watchers += 1;
        self.evict();
    }

    /// A watcher of the post went away.
    pub fn unwatch(&mut self, post: PostId) {
        if let Some(st) = self.posts.peek_mut(&post) {
            st.watchers = st.watchers.saturating_sub(1);
        }
        self.evict();
    }

    /// Whether any post has a call in flight or waiting to be retried.
    pub fn has_pending_calls(&self) -> bool {
        self.posts.iter().any(|(_, st)| st.slot != Slot::Idle)
    }

    /// Whether the post has a call in flight or waiting to be retried.
    pub fn is_busy(&self, post: PostId) -> bool {
        self.posts
            .peek(&post)
            .is_some_and(|st| st.slot != Slot::Idle)
    }

    fn entry(&mut self, post: PostId) -> &mut PostState {
        self.posts.get_or_insert_mut(post, PostState::new)
    }

    fn state(&mut self, post: PostId) -> &mut PostState {
        self.entry(post)
    }

    fn next_call_id(&mut self) -> CallId {
        let id = self.next_call;
        self.next_call += 1;
        id
    }

    /// The delay before the next retry, or `None` when retries are used up.
    fn next_delay(&mut self, post: PostId, error: &LikeError) -> Option<Duration> {
        let salt = self.backoffs_made;
        let policy = self.config.retry;
        let st = self.state(post);
        let made = st.backoff.is_none();
        let delay = st
            .backoff
            .get_or_insert_with(|| Box::new(policy.backoff(salt)))
            .next()?;
        if made {
            self.backoffs_made += 1;
        }
        match error.retry_after() {
            // The server will not take the call soon: retrying is over.
            Some(at_least) if at_least > policy.retry_after_ceiling() => None,
            Some(at_least) => Some(delay.max(at_least)),
            None => Some(delay),
        }
    }

    /// If the slot is free, send the latest intent or settle it. While a
    /// retry waits, an intent that needs no call any more (the viewer came
    /// back to what the server holds) settles at once; the wait's timer is
    /// ignored when it ends.
    fn pump(&mut self, post: PostId) {
        let st = self.state(post);
        match st.slot {
            Slot::Idle => self.send_or_settle(post, false),
            Slot::Waiting { action, .. } if st.desired.is_some_and(|w| !st.needs_call(w)) => {
                // The waiting call's own intent was counted when it went out.
                let retry = st.desired == Some(action.liked());
                st.slot = Slot::Idle;
                st.error = None;
                self.send_or_settle(post, retry);
            }
            Slot::Waiting { .. } | Slot::InFlight { .. } => {}
        }
    }

    fn send_or_settle(&mut self, post: PostId, retry: bool) {
        let st = self.state(post);
        let Some(want) = st.desired else { return };
        if st.needs_call(want) {
            if !retry {
                st.base = st.confirmed.version;
            }
            let over = st.confirmed.version;
            let call = self.next_call_id();
            let action = Action::to_reach(want);
            self.state(post).slot = Slot::InFlight { call, action, over };
            self.stats.calls_sent += 1;
            if retry {
                self.stats.retries += 1;
            } else {
                self.stats.intents_sent += 1;
            }
            self.effects.push_back(Effect::Send { post, call, action });
        } else {
            // The viewer came back to the confirmed state: nothing to send.
            st.desired = None;
            st.backoff = None;
            if !retry {
                self.stats.coalesced += 1;
            }
        }
    }

    fn roll_back(&mut self, post: PostId, wanted: bool, error: LikeError) {
        let st = self.state(post);
        st.desired = None;
        st.backoff = None;
        st.error = Some(Box::new(error.clone()));
        let view = st.view(post);
        self.stats.rollbacks += 1;
        self.effects.push_back(Effect::Failed {
            post,
            wanted,
            error,
        });
        self.effects.push_back(Effect::Changed(view));
        self.evict();
    }

    /// The post's unconfirmed intent, if any.
    fn intent(&self, post: PostId) -> Option<bool> {
        self.posts.peek(&post).and_then(|st| st.desired)
    }

    /// Emits [`Effect::Intent`] when the post's intent is no longer `before`.
    fn note_intent(&mut self, post: PostId, before: Option<bool>) {
        let now = self.intent(post);
        if now != before {
            self.effects.push_back(Effect::Intent { post, liked: now });
        }
    }

    fn changed_since(&mut self, post: PostId, before: &PostView) {
        let view = self.state(post).view(post);
        if &view != before {
            self.effects.push_back(Effect::Changed(view));
        }
    }

    /// Evicts idle posts, least recently used first, down to the bound.
    fn evict(&mut self) {
        while self.posts.len() > self.config.max_posts {
            let victim = self
                .posts
                .iter()
                .rev()
                .find(|(_, st)| st.idle())
                .map(|(&post, _)| post);
            match victim {
                Some(post) => {
                    self.posts.pop(&post);
                    self.stats.evictions += 1;
                }
                None => break,
            }
        }
    }
}
