//! The driver: runs the machine's effects and feeds what happened back in.
//!
//! It holds the [`Machine`] behind one lock. Every input — a tap, an answer,
//! a timer, a read — is applied under the lock, and the effects that come
//! out are collected there too; they are performed after the lock is
//! released: [`Effect::Send`] becomes a task that calls the [`Transport`],
//! [`Effect::Wait`] a task that sleeps, and [`Effect::Changed`] and
//! [`Effect::Failed`] become events for the observers.
//!
//! Observers are never called under the lock, and events reach them in the
//! order the machine emitted them: one thread at a time delivers the queued
//! events, and a thread that finds another delivering leaves its events to
//! it. An observer may therefore call back into the client (tap, subscribe)
//! without deadlocking.
//!
//! No rule about likes lives here: which call to send, when to retry and
//! what to show are all the machine's decisions.

use std::collections::{HashMap, HashSet, VecDeque};
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_channel::oneshot;
use futures_util::future::{self, Either, FutureExt, Shared};

use crate::events::{LikeEvent, LikeFailure, LikeObserver};
use crate::journal::{Intent, JournalStore, is_unusable};
use crate::machine::{Effect, Machine};
use crate::runtime::{Executor, now_ms, sleep};
use crate::transport::Transport;
use crate::wire::{LikeState, MAX_BATCH_POSTS, PostLikes};
use crate::{LikeError, PostId, PostView, Stats};

/// Identifies one subscription.
pub(crate) type SubscriptionId = u64;

/// Observers, each with its subscription's id.
type Observers = Vec<(SubscriptionId, Arc<dyn LikeObserver>)>;

/// The observers, by the post they watch.
#[derive(Default)]
struct Registry {
    next_id: SubscriptionId,
    by_post: HashMap<PostId, Observers>,
    all: Observers,
}

impl Registry {
    fn add(&mut self, post: Option<PostId>, observer: Arc<dyn LikeObserver>) -> SubscriptionId {
        self.next_id += 1;
        let id = self.next_id;
        match post {
            Some(post) => self.by_post.entry(post).or_default().push((id, observer)),
            None => self.all.push((id, observer)),
        }
        id
    }

    fn remove(&mut self, id: SubscriptionId, post: Option<PostId>) {
        match post {
            Some(post) => {
                if let Some(list) = self.by_post.get_mut(&post) {
                    list.retain(|(i, _)| *i != id);
                    if list.is_empty() {
                        self.by_post.remove(&post);
                    }
                }
            }
            None => self.all.retain(|(i, _)| *i != id),
        }
    }

    /// The observer of subscription `id` to `post`, if it is still there.
    fn one(&self, post: PostId, id: SubscriptionId, out: &mut Vec<Arc<dyn LikeObserver>>) {
        let list = self.by_post.get(&post).map_or(&[][..], Vec::as_slice);
        if let Some((_, o)) = list.iter().find(|(i, _)| *i == id) {
            out.push(Arc::clone(o));
        }
    }

    /// Everyone who hears about `post`: its own observers, then those of
    /// every post.
    fn for_post(&self, post: PostId, out: &mut Vec<Arc<dyn LikeObserver>>) {
        if let Some(list) = self.by_post.get(&post) {
            out.extend(list.iter().map(|(_, o)| Arc::clone(o)));
        }
        out.extend(self.all.iter().map(|(_, o)| Arc::clone(o)));
    }
}

/// Calls `observer` with `event`. An observer that panics (natively) is
/// caught here: the panic hook has printed it, the other observers hear
/// the event, and the client goes on (before, the panic reached whoever
/// was delivering, a tap's caller or a runtime thread, and left delivery
/// marked busy and the tap's call unsent).
fn hear(observer: &dyn LikeObserver, event: &LikeEvent) {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| observer.on_event(event)));
    }
    #[cfg(target_arch = "wasm32")]
    observer.on_event(event);
}

/// Sends the call through `transport`. A panic in the transport, or in
/// the token provider it asks, ends the call (natively; the panic hook
/// has printed it) as a [`LikeError::Network`]: the call may have reached
/// the server or not, and a `Network` failure says just that (it is
/// retried, and counts as [`may_have_applied`](LikeError::may_have_applied),
/// so an undo still goes out). Left uncaught, it would end the task that
/// owes the machine the call's answer, and the post would wait for it for
/// good.
#[cfg(not(target_arch = "wasm32"))]
async fn send_caught(
    transport: &dyn Transport,
    post: PostId,
    action: crate::Action,
) -> Result<LikeState, LikeError> {
    // `send` itself runs inside the future, so a panic there is caught too.
    let sent = async { transport.send(post, action).await };
    std::panic::AssertUnwindSafe(sent)
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| {
            Err(LikeError::Network {
                message: format!(
                    "the transport or its token provider panicked: {}",
                    panic_message(&*panic)
                ),
            })
        })
}

/// On the web a panic aborts: the transport's own future, not wrapped.
#[cfg(target_arch = "wasm32")]
fn send_caught(
    transport: &dyn Transport,
    post: PostId,
    action: crate::Action,
) -> crate::runtime::BoxFuture<'_, Result<LikeState, LikeError>> {
    transport.send(post, action)
}

/// Saves `intents` to `store`. A store that panics (natively; the panic
/// hook has printed it) fails the save as an
/// [`Unwritable`](crate::JournalFault::Unwritable) one, so that the save
/// ends like any failed save: reported, tried again, and the calls held
/// for it let go.
fn save_caught(store: &dyn JournalStore, intents: &[Intent]) -> Result<(), LikeError> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| store.save(intents)))
            .unwrap_or_else(|panic| {
                Err(LikeError::Journal {
                    fault: crate::JournalFault::Unwritable,
                    message: format!("the journal store panicked: {}", panic_message(&*panic)),
                })
            })
    }
    #[cfg(target_arch = "wasm32")]
    store.save(intents)
}

/// What a panic said, when it said it with a string.
#[cfg(not(target_arch = "wasm32"))]
fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// Work to start once the lock is released.
enum Job {
    Send {
        post: PostId,
        call: u64,
        action: crate::Action,
        /// The journal version whose save must be tried before the call
        /// goes out (0: none).
        after: u64,
        /// The `retry_now` signal current when the call went out: a retry
        /// wait its failure starts ends at once if one came since.
        nudge: NudgeSignal,
    },
    Wait {
        post: PostId,
        call: u64,
        delay: Duration,
        /// What ends it early (`retry_now`); none for a wait the server
        /// asked for.
        nudge: Option<NudgeSignal>,
    },
}

/// Resolves at the next `retry_now` after it was taken.
type NudgeSignal = Shared<oneshot::Receiver<()>>;

/// Everything under the lock.
struct State {
    machine: Machine,
    observers: Registry,
    /// Events waiting to be delivered, in the machine's order, each to
    /// everyone who hears of its post, or to one subscription alone (its
    /// first view, [`Driver::subscribe`]).
    queue: VecDeque<(LikeEvent, Option<SubscriptionId>)>,
    /// A thread is delivering events.
    delivering: bool,
    /// No new taps or reads (shutdown began).
    closed: bool,
    /// Calls are no longer sent: every [`Effect::Send`] fails at once with
    /// [`LikeError::Shutdown`] and every wait ends at once.
    stopped: bool,
    /// Woken when no call is in flight or waiting to be retried.
    idle_waiters: Vec<oneshot::Sender<()>>,
    journal: Journal,
    /// The signal the next `retry_now` resolves: every call sent and every
    /// wait that may end early holds it. Each `retry_now` resolves it (by
    /// dropping its sender) and puts a new one in its place, under this
    /// lock, so a wait is either started with the old one (and ended) or
    /// after the new one was put (a call sent before `retry_now` ends its
    /// wait at once: it holds the old one).
    nudge: Nudge,
    /// While a call's answer is fed to the machine, the signal that call
    /// went out with: a retry wait it starts takes that one.
    answered_nudge: Option<NudgeSignal>,
}

/// How far in the future an intent's tap time may lie (the clock moved a
/// little) before the intent counts as expired: its age cannot be known.
const FUTURE_SLACK_MS: u64 = 5 * 60 * 1000;

/// How long after a failed save the journal is saved again (unless a change
/// saves it sooner); each failure in a row doubles it, up to
/// [`MAX_SAVE_RETRY`].
const FIRST_SAVE_RETRY: Duration = Duration::from_millis(500);
const MAX_SAVE_RETRY: Duration = Duration::from_secs(60);

/// The intents the machine has not seen confirmed, with when they were
/// tapped, and the store that keeps them across starts.
pub(crate) struct Journal {
    store: Option<Arc<dyn JournalStore>>,
    /// A store that could not be read at start: held (and with it any
    /// lock it takes) but never written, so that what it holds is still
    /// there for a later start.
    _unread: Option<Arc<dyn JournalStore>>,
    /// Why the store could not be read at start, for as long as the client
    /// lives (see `problem` for the one report at restore).
    unreadable: Option<LikeError>,
    /// Why the last save failed, until a save succeeds.
    save_problem: Option<LikeError>,
    /// The delay before the next save after a failed one, and whether one
    /// is scheduled.
    save_retry: Duration,
    save_retry_scheduled: bool,
    /// Every unconfirmed intent (kept with or without a store: expiry
    /// needs the tap's time).
    intents: Intents,
    /// Intents read at start and not yet restored: saved with the others,
    /// so that a client that never restores loses nothing.
    unrestored: Intents,
    /// Why the journal could not be read at start, until restore reports it.
    problem: Option<LikeError>,
    max_age: Duration,
    /// Changes so far, how many of them a save was tried for, and how many
    /// of them are saved.
    version: u64,
    attempted: u64,
    saved: u64,
    saving: bool,
    /// Calls waiting for a version's save to be tried.
    flushed: Vec<(u64, oneshot::Sender<()>)>,
}

impl Journal {
    /// A journal of `store` (none: intents are kept in memory only),
    /// loaded now.
    pub(crate) fn open(store: Option<Arc<dyn JournalStore>>, max_age: Duration) -> Self {
        let mut journal = Self {
            store,
            _unread: None,
            unreadable: None,
            save_problem: None,
            save_retry: FIRST_SAVE_RETRY,
            save_retry_scheduled: false,
            intents: Intents::default(),
            unrestored: Intents::default(),
            problem: None,
            max_age,
            version: 0,
            attempted: 0,
            saved: 0,
            saving: false,
            flushed: Vec::new(),
        };
        if let Some(store) = &journal.store {
            match store.load() {
                Ok(intents) => {
                    journal.unrestored = Intents::newest_per_post(intents);
                }
                Err(problem) if is_unusable(&problem) => {
                    journal.problem = Some(problem);
                    // The next save replaces what cannot be used.
                    journal.version = 1;
                }
                Err(problem) => {
                    // Not readable now (an I/O failure; storage locked
                    // until the device is first unlocked): left as it is
                    // for a later start, and this client keeps no journal.
                    journal.unreadable = Some(problem.clone());
                    journal.problem = Some(problem);
                    journal._unread = journal.store.take();
                }
            }
        }
        journal
    }

    /// Forgets what an earlier run left for `post`: the viewer tapped it
    /// in this run, which supersedes it even when the tap changed nothing.
    fn tapped(&mut self, post: PostId) {
        if self.unrestored.get(&post).is_some() {
            self.unrestored.remove(&post);
            if self.store.is_some() {
                self.version += 1;
            }
        }
    }

    /// Why the journal is not kept as it should be now, if it is not.
    fn problem_now(&self) -> Option<LikeError> {
        self.save_problem
            .clone()
            .or_else(|| self.unreadable.clone())
    }

    /// Notes the machine's intent for `post` (a new one is stamped now;
    /// the same one keeps its time).
    fn note(&mut self, post: PostId, liked: Option<bool>) {
        match liked {
            Some(liked) => {
                let kept = self
                    .intents
                    .get(&post)
                    .filter(|i| i.liked == liked)
                    .copied();
                let intent = kept.unwrap_or(Intent {
                    post,
                    liked,
                    tapped_at_ms: now_ms(),
                });
                self.intents.insert(post, intent);
            }
            None => {
                self.intents.remove(&post);
            }
        }
        // A tap in this run supersedes what an earlier run left.
        self.unrestored.remove(&post);
        if self.store.is_some() {
            self.version += 1;
        }
    }

    /// The version a call sent now must wait for, or 0.
    fn barrier(&self) -> u64 {
        if self.version > self.attempted {
            self.version
        } else {
            0
        }
    }

    /// A save to start now, if one is due (a change not yet tried) and
    /// none is running.
    fn due(&mut self) -> Option<Save> {
        self.due_or_retry(false)
    }

    /// As [`due`](Self::due); with `retry`, a save that failed is due too.
    fn due_or_retry(&mut self, retry: bool) -> Option<Save> {
        let store = self.store.as_ref()?;
        let wanted = self.version > self.attempted || (retry && self.version > self.saved);
        if self.saving || !wanted {
            return None;
        }
        self.saving = true;
        let mut intents = self.unrestored.0.clone();
        intents.extend_from_slice(&self.intents.0);
        Some(Save {
            store: Arc::clone(store),
            intents,
            version: self.version,
        })
    }

    /// A save of every change was tried and no save is running.
    fn settled(&self) -> bool {
        !self.saving && self.version <= self.attempted
    }

    /// Notes how the save of `version` went; returns the delay after which
    /// to try again when it failed and no retry is scheduled yet.
    fn save_ended(&mut self, version: u64, result: Result<(), LikeError>) -> Option<Duration> {
        self.saving = false;
        self.attempted = self.attempted.max(version);
        match result {
            Ok(()) => {
                self.saved = self.saved.max(version);
                self.save_problem = None;
                self.save_retry = FIRST_SAVE_RETRY;
                None
            }
            Err(problem) => {
                self.save_problem = Some(problem);
                if self.save_retry_scheduled {
                    return None;
                }
                self.save_retry_scheduled = true;
                let delay = self.save_retry;
                self.save_retry = (delay * 2).min(MAX_SAVE_RETRY);
                Some(delay)
            }
        }
    }

    /// Whether `intent` is older than the journal's `max_age`, or stamped
    /// more than [`FUTURE_SLACK_MS`] in the future (the clock was set back,
    /// or the stamp is bogus), when its age cannot be known.
    fn expired(&self, intent: &Intent) -> bool {
        let now = now_ms();
        if intent.tapped_at_ms > now.saturating_add(FUTURE_SLACK_MS) {
            return true;
        }
        let age = now.saturating_sub(intent.tapped_at_ms);
        u128::from(age) > self.max_age.as_millis()
    }
}

/// Intents, one per post. A plain list: a viewer has a handful of taps
/// unconfirmed at a time, and a map's code would weigh more in the web
/// package than the scans it saves.
#[derive(Default)]
struct Intents(Vec<Intent>);

impl Intents {
    /// `listed`, one intent per post: of several for one post, the newest
    /// by `tapped_at_ms` (of those tapped in the same millisecond, the
    /// last listed), in the place of the post's first.
    fn newest_per_post(listed: Vec<Intent>) -> Self {
        let mut kept: Vec<Intent> = Vec::with_capacity(listed.len());
        for intent in listed {
            match kept.iter_mut().find(|i| i.post == intent.post) {
                Some(held) if held.tapped_at_ms > intent.tapped_at_ms => {}
                Some(held) => *held = intent,
                None => kept.push(intent),
            }
        }
        Self(kept)
    }

    fn get(&self, post: &PostId) -> Option<&Intent> {
        self.0.iter().find(|i| i.post == *post)
    }

    fn insert(&mut self, post: PostId, intent: Intent) {
        self.remove(&post);
        self.0.push(intent);
    }

    fn remove(&mut self, post: &PostId) {
        self.0.retain(|i| i.post != *post);
    }
}

/// One save of the journal, performed off the lock.
struct Save {
    store: Arc<dyn JournalStore>,
    intents: Vec<Intent>,
    version: u64,
}

/// What the journal held at start: see [`crate::LikeClient::restore`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RestoreReport {
    /// The posts restored, each showing its intent, pending; their calls
    /// are on their way.
    pub restored: Vec<PostView>,
    /// The intents too old to send: each was dropped, and observers heard
    /// one failure ([`LikeError::Expired`]) for it.
    pub expired: Vec<LikeFailure>,
    /// Why the journal could not be read, if it could not; the client
    /// started without what it held. A journal whose content is unusable
    /// (damaged, another viewer's, a newer format:
    /// [`journal::is_unusable`](crate::journal::is_unusable)) is replaced
    /// by the next save. One that could not be read at all (an I/O
    /// failure, storage locked until the device is unlocked) is left
    /// untouched for a later start, and this client keeps no journal:
    /// its taps are not written down
    /// ([`LikeClient::journal_problem`](crate::LikeClient::journal_problem)
    /// keeps saying so).
    pub problem: Option<LikeError>,
}

/// What to do after the lock is released.
#[derive(Default)]
struct Followup {
    jobs: Vec<Job>,
    deliver: bool,
    idle: Vec<oneshot::Sender<()>>,
    save: Option<Save>,
}

/// The machine, its observers and the tasks that perform its effects.
pub(crate) struct Driver {
    state: Mutex<State>,
    transport: Arc<dyn Transport>,
    executor: Executor,
    /// Resolves when the driver stops (at the end of a shutdown).
    stop: Shared<oneshot::Receiver<()>>,
    stop_tx: Mutex<Option<oneshot::Sender<()>>>,
}

/// One `retry_now`'s signal.
struct Nudge {
    _tx: oneshot::Sender<()>,
    rx: NudgeSignal,
}

impl Nudge {
    fn new() -> Self {
        let (tx, rx) = oneshot::channel();
        Self {
            _tx: tx,
            rx: rx.shared(),
        }
    }
}

impl Driver {
    // On wasm nothing is Send: the client lives on the one JavaScript thread.
    #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
    pub(crate) fn new(
        machine: Machine,
        transport: Arc<dyn Transport>,
        executor: Executor,
        journal: Journal,
    ) -> Arc<Self> {
        let (stop_tx, stop_rx) = oneshot::channel();
        Arc::new(Self {
            state: Mutex::new(State {
                machine,
                observers: Registry::default(),
                queue: VecDeque::new(),
                delivering: false,
                closed: false,
                stopped: false,
                idle_waiters: Vec::new(),
                journal,
                nudge: Nudge::new(),
                answered_nudge: None,
            }),
            transport,
            executor,
            stop: stop_rx.shared(),
            stop_tx: Mutex::new(Some(stop_tx)),
        })
    }

    /// Ends every wait that may end early (a retry's backoff, an offline
    /// wait; not a server's `Retry-After`), and the one a call out now
    /// would start: their calls go out now.
    pub(crate) fn retry_now(&self) {
        let spent = std::mem::replace(&mut self.lock().nudge, Nudge::new());
        // Dropping its sender resolves the signal every such wait holds.
        drop(spent);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The machine is never left half-changed by a panic elsewhere:
        // observers run outside the lock.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Applies `input` to the machine, then performs what came out.
    pub(crate) fn input<R>(self: &Arc<Self>, input: impl FnOnce(&mut Machine) -> R) -> R {
        let (out, followup) = {
            let mut st = self.lock();
            let out = input(&mut st.machine);
            (out, collect(&mut st))
        };
        self.follow_up(followup);
        out
    }

    /// A tap (`want = Some(liked)`) or a toggle (`None`). After shutdown
    /// began, nothing changes and the view carries [`LikeError::Shutdown`].
    pub(crate) fn tap(self: &Arc<Self>, post: PostId, want: Option<bool>) -> PostView {
        let (view, followup) = {
            let mut st = self.lock();
            if st.closed {
                let mut view = st
                    .machine
                    .view(post)
                    .unwrap_or_else(|| PostView::unknown(post));
                view.error = Some(LikeError::Shutdown);
                return view;
            }
            let view = match want {
                Some(liked) => st.machine.tap(post, liked),
                None => st.machine.toggle(post),
            };
            st.journal.tapped(post);
            (view, collect(&mut st))
        };
        self.follow_up(followup);
        view
    }

    pub(crate) fn view(&self, post: PostId) -> Option<PostView> {
        self.lock().machine.view(post)
    }

    pub(crate) fn stats(&self) -> Stats {
        self.lock().machine.stats()
    }

    pub(crate) fn has_pending_calls(&self) -> bool {
        self.lock().machine.has_pending_calls()
    }

    pub(crate) fn journal_problem(&self) -> Option<LikeError> {
        self.lock().journal.problem_now()
    }

    /// Adds `observer` for `post` (every post: `None`). With `first_view`,
    /// the view held now (if the machine knows the post) is queued for
    /// this observer alone, behind the events already queued: it hears
    /// those (older) first, and nothing older after it.
    pub(crate) fn subscribe(
        self: &Arc<Self>,
        post: Option<PostId>,
        observer: Arc<dyn LikeObserver>,
        first_view: bool,
    ) -> SubscriptionId {
        self.input_with_state(|st| {
            if let Some(post) = post {
                st.machine.watch(post);
            }
            let id = st.observers.add(post, observer);
            if let Some(view) = post.filter(|_| first_view).and_then(|p| st.machine.view(p)) {
                st.queue.push_back((LikeEvent::Changed(view), Some(id)));
            }
            id
        })
    }

    pub(crate) fn unsubscribe(self: &Arc<Self>, id: SubscriptionId, post: Option<PostId>) {
        self.input_with_state(|st| {
            st.observers.remove(id, post);
            if let Some(post) = post {
                st.machine.unwatch(post);
            }
        });
    }

    fn input_with_state<R>(self: &Arc<Self>, f: impl FnOnce(&mut State) -> R) -> R {
        let (out, followup) = {
            let mut st = self.lock();
            let out = f(&mut st);
            (out, collect(&mut st))
        };
        self.follow_up(followup);
        out
    }

    /// Reads one post and feeds the read to the machine.
    pub(crate) async fn refresh(self: &Arc<Self>, post: PostId) -> Result<PostView, LikeError> {
        let driver = Arc::clone(self);
        self.run(async move {
            let likes = driver.transport.read(post).await?;
            Ok(driver.feed_snapshot(post, likes))
        })
        .await
    }

    /// Reads a feed page (one read per [`MAX_BATCH_POSTS`] posts) and feeds
    /// every post that came back to the machine.
    pub(crate) async fn refresh_many(
        self: &Arc<Self>,
        posts: &[PostId],
    ) -> Result<Vec<PostView>, LikeError> {
        let mut seen = HashSet::with_capacity(posts.len());
        let wanted: Vec<PostId> = posts.iter().copied().filter(|p| seen.insert(*p)).collect();
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let driver = Arc::clone(self);
        self.run(async move {
            let pages: Vec<&[PostId]> = wanted.chunks(MAX_BATCH_POSTS).collect();
            // The views read, and the error of the first page (in order)
            // whose read failed.
            let found = Mutex::new((
                HashMap::with_capacity(wanted.len()),
                None::<(usize, LikeError)>,
            ));
            let found_now = || found.lock().unwrap_or_else(PoisonError::into_inner);
            // A few pages out at a time, each worker taking the next page
            // as its last one is in: a browser opens about six connections
            // to a server, and a page waiting in its queue for one would
            // spend its request timeout there.
            let next = std::sync::atomic::AtomicUsize::new(0);
            let worker = || async {
                loop {
                    let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(page) = pages.get(at) else { break };
                    match driver.transport.read_many(page).await {
                        Ok(batch) => {
                            for (post, likes) in batch.posts {
                                // Posts that were not asked for are left out.
                                if page.contains(&post) {
                                    let view = driver.feed_snapshot(post, likes);
                                    found_now().0.insert(post, view);
                                }
                            }
                        }
                        Err(e) => {
                            let first = &mut found_now().1;
                            if first.as_ref().is_none_or(|(earlier, _)| at < *earlier) {
                                *first = Some((at, e));
                            }
                        }
                    }
                }
            };
            join_all(
                (0..PAGES_AT_ONCE.min(pages.len()))
                    .map(|_| worker())
                    .collect(),
            )
            .await;
            let (mut views, first_error) =
                found.into_inner().unwrap_or_else(PoisonError::into_inner);
            match first_error {
                Some((_, e)) => Err(e),
                None => Ok(wanted.iter().filter_map(|p| views.remove(p)).collect()),
            }
        })
        .await
    }

    fn feed_snapshot(self: &Arc<Self>, post: PostId, likes: PostLikes) -> PostView {
        self.input(|m| m.snapshot(post, likes))
    }

    /// Runs `work` on the executor and waits for its result, so that reads
    /// run on the client's runtime whatever polls the returned future.
    /// Fails with [`LikeError::Shutdown`] once shutdown began or when the
    /// driver stops first.
    async fn run<T, F>(self: &Arc<Self>, work: F) -> Result<T, LikeError>
    where
        T: crate::runtime::SendOutsideWasm + 'static,
        F: Future<Output = Result<T, LikeError>> + crate::runtime::SendOutsideWasm + 'static,
    {
        if self.lock().closed {
            return Err(LikeError::Shutdown);
        }
        let (tx, rx) = oneshot::channel();
        let stop = self.stop.clone();
        self.executor.spawn(async move {
            let result = match future::select(pin!(work), stop).await {
                Either::Left((result, _)) => result,
                Either::Right(_) => Err(LikeError::Shutdown),
            };
            let _ = tx.send(result);
        });
        rx.await.unwrap_or(Err(LikeError::Shutdown))
    }

    /// Delivers queued events, starts the jobs and wakes idle waiters.
    ///
    /// Events go first: the observer hears of a tap before the call is
    /// started (which may wake a runtime thread).
    fn follow_up(self: &Arc<Self>, followup: Followup) {
        if followup.deliver {
            self.deliver();
        }
        for job in followup.jobs {
            self.start(job);
        }
        wake(followup.idle);
        if let Some(save) = followup.save {
            self.save(save);
        }
    }

    /// Saves the journal off the lock (natively on a blocking thread), then
    /// lets the calls waiting for it go, and saves again if it changed
    /// meanwhile.
    ///
    /// A failed save does not hold the calls back: the intent is sent
    /// anyway. The journal is saved again at the next change or, failing
    /// that, after a delay that doubles with each failure in a row
    /// (0.5 s up to 60 s), so that it never keeps an intent the server has
    /// since confirmed; meanwhile [`Driver::journal_problem`] says why.
    fn save(self: &Arc<Self>, save: Save) {
        let driver = Arc::clone(self);
        self.executor.spawn_blocking(move || {
            let result = save_caught(&*save.store, &save.intents);
            let (flushed, next, idle, retry) = {
                let mut st = driver.lock();
                let journal = &mut st.journal;
                let retry = journal.save_ended(save.version, result);
                let attempted = journal.attempted;
                let (ready, waiting) = std::mem::take(&mut journal.flushed)
                    .into_iter()
                    .partition(|(version, _)| *version <= attempted);
                journal.flushed = waiting;
                let next = journal.due();
                let idle = if st.delivering {
                    Vec::new()
                } else {
                    idle_after_delivery(&mut st)
                };
                (ready, next, idle, retry)
            };
            for (_, waiter) in flushed {
                let _ = waiter.send(());
            }
            wake(idle);
            if let Some(next) = next {
                driver.save(next);
            }
            if let Some(delay) = retry {
                driver.retry_save(delay);
            }
        });
    }

    /// Tries a failed save again after `delay` (at once when the driver
    /// stops), unless the client is gone by then.
    ///
    /// Once the driver has stopped, the retry waits its whole delay: the
    /// stop signal has fired for good, and racing it would save again and
    /// again without a pause while the store keeps failing.
    fn retry_save(self: &Arc<Self>, delay: Duration) {
        let driver = Arc::downgrade(self);
        let stop = (!self.lock().stopped).then(|| self.stop.clone());
        self.executor.spawn(async move {
            match stop {
                Some(stop) => drop(future::select(pin!(sleep(delay)), stop).await),
                None => sleep(delay).await,
            }
            let Some(driver) = driver.upgrade() else {
                return;
            };
            let save = {
                let mut st = driver.lock();
                st.journal.save_retry_scheduled = false;
                st.journal.due_or_retry(true)
            };
            if let Some(save) = save {
                driver.save(save);
            }
        });
    }

    /// Waits until the save of journal version `version` was tried.
    async fn journal_saved(&self, version: u64) {
        let rx = {
            let mut st = self.lock();
            if st.journal.attempted >= version {
                return;
            }
            let (tx, rx) = oneshot::channel();
            st.journal.flushed.push((version, tx));
            rx
        };
        let _ = rx.await;
    }

    /// A retry wait ended: the call goes out again, unless its intent has
    /// grown too old, when it is dropped with an `Expired` failure.
    fn timer(self: &Arc<Self>, post: PostId, call: u64) {
        self.input_with_state(|st| {
            let expired = st
                .journal
                .intents
                .get(&post)
                .filter(|intent| st.journal.expired(intent))
                .copied();
            match expired {
                Some(intent) => {
                    st.machine.expire(post, intent.liked);
                }
                None => st.machine.timer(post, call),
            }
        });
    }

    /// Restores what the journal held at start: see
    /// [`crate::LikeClient::restore`].
    pub(crate) fn restore(self: &Arc<Self>) -> RestoreReport {
        self.input_with_state(|st| {
            let mut report = RestoreReport {
                problem: st.journal.problem.take(),
                ..RestoreReport::default()
            };
            if st.closed {
                // Shutdown began: nothing new is sent. The intents stay
                // in the journal for the viewer's next client.
                return report;
            }
            for intent in std::mem::take(&mut st.journal.unrestored.0) {
                let post = intent.post;
                if st.journal.expired(&intent) {
                    if !st.machine.expire(post, intent.liked) {
                        // A read of this run shows the server holding it.
                        continue;
                    }
                    report.expired.push(LikeFailure {
                        post_id: post,
                        wanted: intent.liked,
                        error: LikeError::Expired,
                    });
                } else {
                    // Kept with its own tap time, for expiry.
                    st.journal.intents.insert(post, intent);
                    report.restored.push(st.machine.restore(post, intent.liked));
                }
            }
            if st.journal.store.is_some() {
                // Saves the journal as restored (the expired ones gone, a
                // damaged one replaced).
                st.journal.version += 1;
            }
            report
        })
    }

    fn start(self: &Arc<Self>, job: Job) {
        let driver = Arc::clone(self);
        let stop = self.stop.clone();
        match job {
            Job::Send {
                post,
                call,
                action,
                after,
                nudge,
            } => self.executor.spawn(async move {
                if after > 0 {
                    // Written down before it is sent.
                    driver.journal_saved(after).await;
                }
                let sent = send_caught(&*driver.transport, post, action);
                let result = match future::select(pin!(sent), stop).await {
                    Either::Left((result, _)) => result,
                    Either::Right(_) => Err(LikeError::Shutdown),
                };
                driver.input_with_state(|st| {
                    st.answered_nudge = Some(nudge);
                    st.machine.response(post, call, result);
                });
            }),
            Job::Wait {
                post,
                call,
                delay,
                nudge,
            } => self.executor.spawn(async move {
                // Ends early when the driver stops (the retry then fails at
                // once), or at a `retry_now` (it goes out now).
                let nudged = pin!(async move {
                    match nudge {
                        Some(nudge) => drop(nudge.await),
                        None => future::pending::<()>().await,
                    }
                });
                let woken = future::select(stop, nudged);
                let _ = future::select(pin!(sleep(delay)), woken).await;
                driver.timer(post, call);
            }),
        }
    }

    /// Delivers queued events until none is left, unless another thread
    /// already does.
    fn deliver(&self) {
        /// Hands delivery back even if an observer panics.
        struct Release<'a>(&'a Driver);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    let idle = {
                        let mut st = self.0.lock();
                        st.delivering = false;
                        idle_after_delivery(&mut st)
                    };
                    wake(idle);
                }
            }
        }
        let _release = Release(self);
        let mut batch: Vec<(LikeEvent, Vec<Arc<dyn LikeObserver>>)> = Vec::new();
        loop {
            {
                let mut st = self.lock();
                if st.queue.is_empty() {
                    st.delivering = false;
                    let idle = idle_after_delivery(&mut st);
                    drop(st);
                    wake(idle);
                    return;
                }
                let State {
                    queue, observers, ..
                } = &mut *st;
                for (event, one) in queue.drain(..) {
                    let mut to = Vec::new();
                    match one {
                        Some(id) => observers.one(event.post_id(), id, &mut to),
                        None => observers.for_post(event.post_id(), &mut to),
                    }
                    if !to.is_empty() {
                        batch.push((event, to));
                    }
                }
            }
            for (event, observers) in batch.drain(..) {
                for observer in observers {
                    hear(&*observer, &event);
                }
            }
        }
    }

    /// Stops taking taps and reads; calls already asked for go on.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
    }

    /// Whether shutdown began.
    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Waits until no call is in flight or waiting to be retried, no
    /// event is waiting to be delivered or being delivered, and a save of
    /// every change of the intent journal was tried, at most `timeout`.
    /// Returns whether that happened.
    pub(crate) async fn wait_idle(self: &Arc<Self>, timeout: Duration) -> bool {
        let rx = {
            let mut st = self.lock();
            if !st.machine.has_pending_calls() && !st.delivering && st.journal.settled() {
                return true;
            }
            let (tx, rx) = oneshot::channel();
            st.idle_waiters.push(tx);
            rx
        };
        let timer = sleep(timeout);
        match self.on_executor(rx, timer).await {
            Some(idle) => idle,
            None => !self.has_pending_calls(),
        }
    }

    /// Waits for `rx` or `timer` on the executor (timers need its runtime).
    /// `Some(true)` when `rx` fired first, `Some(false)` when the timer did,
    /// `None` if the task could not report.
    async fn on_executor<T>(self: &Arc<Self>, rx: oneshot::Receiver<()>, timer: T) -> Option<bool>
    where
        T: Future<Output = ()> + crate::runtime::SendOutsideWasm + 'static,
    {
        let (tx, done) = oneshot::channel();
        self.executor.spawn(async move {
            let idle = match future::select(rx, pin!(timer)).await {
                Either::Left((fired, _)) => fired.is_ok(),
                Either::Right(_) => false,
            };
            let _ = tx.send(idle);
        });
        done.await.ok()
    }

    /// Shutdown's wait and stop, run on the executor from now on, whoever
    /// awaits the answer (the receiver): a caller that stops awaiting it
    /// (a cancelled coroutine, a dropped future) does not keep the calls
    /// going past `deadline`. The answer is whether every call finished
    /// within it.
    pub(crate) fn shut_down(self: &Arc<Self>, deadline: Duration) -> oneshot::Receiver<bool> {
        self.close();
        let (tx, rx) = oneshot::channel();
        let driver = Arc::clone(self);
        self.executor.spawn(async move {
            let clean = driver.wait_idle(deadline).await;
            driver.stop();
            if !clean {
                // Let the abandoned calls report their rollbacks.
                driver.wait_idle(Duration::from_secs(1)).await;
            }
            let _ = tx.send(clean);
        });
        rx
    }

    /// Stops sending: calls in flight are abandoned and fail with
    /// [`LikeError::Shutdown`], waiting retries fail at once.
    pub(crate) fn stop(self: &Arc<Self>) {
        self.input_with_state(|st| {
            st.closed = true;
            st.stopped = true;
        });
        let tx = self
            .stop_tx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(tx);
    }
}

/// Takes the machine's effects: calls and waits become jobs (or, once
/// stopped, fail at once), changes and failures join the delivery queue.
fn collect(st: &mut State) -> Followup {
    let mut followup = Followup::default();
    let answered = st.answered_nudge.take();
    while let Some(effect) = st.machine.poll_effect() {
        match effect {
            Effect::Send { post, call, action } => {
                if st.stopped {
                    st.machine.response(post, call, Err(LikeError::Shutdown));
                } else {
                    followup.jobs.push(Job::Send {
                        post,
                        call,
                        action,
                        after: 0,
                        nudge: st.nudge.rx.clone(),
                    });
                }
            }
            Effect::Wait {
                post,
                call,
                delay,
                early,
            } => {
                if st.stopped {
                    st.machine.timer(post, call);
                } else {
                    // The signal of the call whose failure this wait
                    // follows: a `retry_now` since it went out ends it.
                    let nudge =
                        early.then(|| answered.clone().unwrap_or_else(|| st.nudge.rx.clone()));
                    followup.jobs.push(Job::Wait {
                        post,
                        call,
                        delay,
                        nudge,
                    });
                }
            }
            Effect::Changed(view) => st.queue.push_back((LikeEvent::Changed(view), None)),
            Effect::Failed {
                post,
                wanted,
                error,
            } => st.queue.push_back((
                LikeEvent::Failed(LikeFailure {
                    post_id: post,
                    wanted,
                    error,
                }),
                None,
            )),
            // Once stopped, an intent leaves the journal only by being
            // confirmed, which can no longer happen: a call cut off by the
            // shutdown's deadline may or may not have been applied, so its
            // intent is kept for the next start to send (`restore`).
            Effect::Intent { liked: None, .. } if st.stopped => {}
            Effect::Intent { post, liked } => st.journal.note(post, liked),
        }
    }
    // Every call asked for now goes out once the journal holding its intent
    // is saved (the machine notes the intent after asking for the call).
    let barrier = st.journal.barrier();
    for job in &mut followup.jobs {
        if let Job::Send { after, .. } = job {
            *after = barrier;
        }
    }
    followup.save = st.journal.due();
    if !st.queue.is_empty() && !st.delivering {
        st.delivering = true;
        followup.deliver = true;
    }
    // Waiters wake once the observers have heard everything: after this
    // thread's delivery, or, when another thread is delivering, when that
    // thread has emptied the queue (`Driver::deliver`).
    if st.machine.has_pending_calls()
        || (st.delivering && !followup.deliver)
        || followup.save.is_some()
        || !st.journal.settled()
    {
        return followup;
    }
    followup.idle = std::mem::take(&mut st.idle_waiters);
    followup
}

/// How many pages of one [`Driver::refresh_many`] are read at once.
const PAGES_AT_ONCE: usize = 4;

/// Runs `futures` together until every one is done. (futures-util's
/// `join_all` does the same with a stream of futures, several kilobytes of
/// the web package for the few pages of one feed read.)
async fn join_all<F: Future<Output = ()>>(futures: Vec<F>) {
    let mut futures: Vec<_> = futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for slot in &mut futures {
            if let Some(future) = slot {
                if future.as_mut().poll(cx).is_ready() {
                    *slot = None;
                } else {
                    done = false;
                }
            }
        }
        if done {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
}

fn wake(waiters: Vec<oneshot::Sender<()>>) {
    for waiter in waiters {
        let _ = waiter.send(());
    }
}

/// The idle waiters to wake now that delivery ended, if no call is pending.
fn idle_after_delivery(st: &mut State) -> Vec<oneshot::Sender<()>> {
    if st.machine.has_pending_calls() || !st.journal.settled() {
        Vec::new()
    } else {
        std::mem::take(&mut st.idle_waiters)
    }
}
