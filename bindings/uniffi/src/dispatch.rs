//! Observers called where the app chooses: [`CallbackDispatcher`] (a
//! `LikeClientOptions` field) and the [`DispatchedCall`]s it is handed.
//!
//! A dispatcher that throws is an ordinary error here, a [`DispatchError`]
//! (uniffi turns any foreign exception into one), and its call runs in
//! place:
//!
//! ```
//! use likekit_ffi::DispatchError;
//! let e = DispatchError::from(uniffi::UnexpectedUniFFICallbackError::new("queue closed"));
//! assert_eq!(e.to_string(), "the callback dispatcher threw: queue closed");
//! ```

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use crate::Live;

/// Runs a client's observer calls on the thread or queue the app chooses:
/// Kotlin `Dispatchers.Main.asCallbackDispatcher()` or
/// `executor.asCallbackDispatcher()`, Swift `MainQueueDispatcher()`,
/// Python a class whose `dispatch` hands the call to the event loop.
/// Implemented in Kotlin, Swift or Python; given as
/// `LikeClientOptions.callback_dispatcher`.
///
/// `dispatch` is called from any thread, as soon as there is something to
/// tell; it must return at once and arrange for `call.run()` to be called
/// once, soon, where the app wants observers to run. Each call delivers
/// every event waiting at that moment, in order, to every observer of the
/// client, so observers hear everything in the order it happened even when
/// the dispatcher's thread is busy.
///
/// A `dispatch` that throws (any exception) has its call run in place, on
/// the thread that had it, rather than lost; the exception is its
/// [`DispatchError`] and goes no further.
#[uniffi::export(with_foreign)]
pub trait CallbackDispatcher: Send + Sync {
    /// Arrange for `call.run()` to be called once, soon, where observers
    /// should run.
    ///
    /// # Errors
    ///
    /// Whatever the dispatcher throws: LikeKit then runs `call` itself.
    fn dispatch(&self, call: Arc<DispatchedCall>) -> Result<(), DispatchError>;
}

/// Why a [`CallbackDispatcher`] did not take a call: it threw. Any
/// exception thrown by `dispatch` arrives as [`Threw`](Self::Threw) (or a
/// dispatcher may throw this one itself); the call is then run in place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, uniffi::Error)]
pub enum DispatchError {
    /// The dispatcher threw.
    #[error("the callback dispatcher threw: {reason}")]
    Threw {
        /// What it threw, as text.
        reason: String,
    },
}

impl From<uniffi::UnexpectedUniFFICallbackError> for DispatchError {
    fn from(error: uniffi::UnexpectedUniFFICallbackError) -> Self {
        Self::Threw {
            reason: error.reason,
        }
    }
}

/// Observer calls waiting to be run by a [`CallbackDispatcher`]: call
/// [`run`](Self::run) once, where the observers should run.
#[derive(uniffi::Object)]
pub struct DispatchedCall {
    queue: Arc<Queue>,
    done: AtomicBool,
    _live: Live,
}

impl std::fmt::Debug for DispatchedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DispatchedCall")
            .field("done", &self.done.load(Ordering::SeqCst))
            .finish_non_exhaustive()
    }
}

#[uniffi::export]
impl DispatchedCall {
    /// Calls the observers with every event waiting, in order. Running it
    /// again does nothing.
    pub fn run(&self) {
        if !self.done.swap(true, Ordering::SeqCst) {
            self.queue.drain();
        }
    }
}

impl Drop for DispatchedCall {
    /// A call let go without being run (a dispatcher whose event loop
    /// closed with the call still queued, or whose bounded queue dropped
    /// it) does not stop delivery for good: the events it would have
    /// delivered wait, and the next event hands the dispatcher a new call
    /// that delivers them all, in order.
    fn drop(&mut self) {
        if !self.done.load(Ordering::SeqCst) {
            self.queue.lock().scheduled = false;
        }
    }
}

/// One observer call, ready to run.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// A client's observer calls on their way to its dispatcher.
pub(crate) struct Dispatch {
    queue: Arc<Queue>,
    /// The client owns the dispatcher; this lets go with it.
    dispatcher: Weak<dyn CallbackDispatcher>,
}

#[derive(Default)]
struct Queue {
    state: Mutex<QueueState>,
}

#[derive(Default)]
struct QueueState {
    jobs: VecDeque<Job>,
    /// A [`DispatchedCall`] is out that will run the jobs.
    scheduled: bool,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs jobs until none is left; new ones queued meanwhile run too.
    fn drain(&self) {
        loop {
            let job = {
                let mut st = self.lock();
                match st.jobs.pop_front() {
                    Some(job) => job,
                    None => {
                        st.scheduled = false;
                        return;
                    }
                }
            };
            // Each job catches its observer's exceptions itself.
            job();
        }
    }
}

impl Dispatch {
    pub(crate) fn new(dispatcher: &Arc<dyn CallbackDispatcher>) -> Arc<Self> {
        Arc::new(Self {
            queue: Arc::default(),
            dispatcher: Arc::downgrade(dispatcher),
        })
    }

    /// Queues `job` and makes sure a [`DispatchedCall`] is out to run it.
    pub(crate) fn send(&self, job: Job) {
        let Some(dispatcher) = self.dispatcher.upgrade() else {
            // The client is closed: nobody listens any more.
            return;
        };
        let schedule = {
            let mut st = self.queue.lock();
            st.jobs.push_back(job);
            !std::mem::replace(&mut st.scheduled, true)
        };
        if !schedule {
            return;
        }
        let call = Arc::new(DispatchedCall {
            queue: Arc::clone(&self.queue),
            done: AtomicBool::new(false),
            _live: Live::new(),
        });
        let handed = Arc::clone(&call);
        // A foreign exception is an `Err`; the unwind is caught only for a
        // foreign side that breaks uniffi's contract.
        let taken = catch_unwind(AssertUnwindSafe(|| dispatcher.dispatch(handed)));
        if !matches!(taken, Ok(Ok(()))) {
            // A dispatcher that throws: run the calls here rather than
            // lose them.
            call.run();
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Hands each call to one thread, which runs them in turn.
    struct OneThread(Mutex<mpsc::Sender<Arc<DispatchedCall>>>);

    impl CallbackDispatcher for OneThread {
        fn dispatch(&self, call: Arc<DispatchedCall>) -> Result<(), DispatchError> {
            self.0.lock().unwrap().send(call).unwrap();
            Ok(())
        }
    }

    #[test]
    fn jobs_run_in_order_on_the_dispatchers_thread() {
        let (tx, rx) = mpsc::channel::<Arc<DispatchedCall>>();
        let worker = std::thread::Builder::new()
            .name("callbacks".into())
            .spawn(move || {
                for call in rx {
                    call.run();
                    call.run(); // a second run does nothing
                }
            })
            .unwrap();
        let dispatcher: Arc<dyn CallbackDispatcher> = Arc::new(OneThread(Mutex::new(tx)));
        let dispatch = Dispatch::new(&dispatcher);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let senders: Vec<_> = (0..4)
            .map(|t| {
                let dispatch = Arc::new(Dispatch {
                    queue: Arc::clone(&dispatch.queue),
                    dispatcher: Arc::downgrade(&dispatcher),
                });
                let seen = Arc::clone(&seen);
                std::thread::spawn(move || {
                    for i in 0..250 {
                        let seen = Arc::clone(&seen);
                        dispatch.send(Box::new(move || {
                            let name = std::thread::current().name().map(str::to_owned);
                            seen.lock().unwrap().push((t, i, name));
                        }));
                    }
                })
            })
            .collect();
        for s in senders {
            s.join().unwrap();
        }
        drop(dispatch);
        drop(dispatcher); // closes the channel once every call was handed
        worker.join().unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1000);
        assert!(
            seen.iter()
                .all(|(_, _, name)| name.as_deref() == Some("callbacks"))
        );
        // each sender's jobs ran in the order it sent them
        for t in 0..4 {
            let order: Vec<_> = seen.iter().filter(|s| s.0 == t).map(|s| s.1).collect();
            assert_eq!(order, (0..250).collect::<Vec<_>>());
        }
    }

    /// As a foreign dispatcher that throws reaches Rust.
    struct Throws;

    impl CallbackDispatcher for Throws {
        fn dispatch(&self, _call: Arc<DispatchedCall>) -> Result<(), DispatchError> {
            Err(uniffi::UnexpectedUniFFICallbackError::new("RuntimeError: boom").into())
        }
    }

    struct Panics;

    impl CallbackDispatcher for Panics {
        fn dispatch(&self, _call: Arc<DispatchedCall>) -> Result<(), DispatchError> {
            panic!("dispatcher bug (expected in this test)");
        }
    }

    #[test]
    fn a_dispatcher_that_throws_runs_the_calls_in_place() {
        let dispatcher: Arc<dyn CallbackDispatcher> = Arc::new(Throws);
        let dispatch = Dispatch::new(&dispatcher);
        let ran = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&ran);
        dispatch.send(Box::new(move || flag.store(true, Ordering::SeqCst)));
        assert!(ran.load(Ordering::SeqCst));
        // and the next one is dispatched (and run in place) again
        let again = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&again);
        dispatch.send(Box::new(move || flag.store(true, Ordering::SeqCst)));
        assert!(again.load(Ordering::SeqCst));
    }

    #[test]
    fn a_dispatcher_that_panics_runs_the_calls_in_place_too() {
        let dispatcher: Arc<dyn CallbackDispatcher> = Arc::new(Panics);
        let dispatch = Dispatch::new(&dispatcher);
        let ran = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&ran);
        dispatch.send(Box::new(move || flag.store(true, Ordering::SeqCst)));
        assert!(ran.load(Ordering::SeqCst));
    }

    /// Keeps the calls it is handed, for the test to run or let go of.
    struct Keeps(Mutex<Vec<Arc<DispatchedCall>>>);

    impl CallbackDispatcher for Keeps {
        fn dispatch(&self, call: Arc<DispatchedCall>) -> Result<(), DispatchError> {
            self.0.lock().unwrap().push(call);
            Ok(())
        }
    }

    #[test]
    fn a_call_let_go_unrun_leaves_its_events_for_the_next_call() {
        let keeps = Arc::new(Keeps(Mutex::default()));
        let dispatcher: Arc<dyn CallbackDispatcher> = Arc::<Keeps>::clone(&keeps);
        let dispatch = Dispatch::new(&dispatcher);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let job = |n: u32| -> Job {
            let seen = Arc::clone(&seen);
            Box::new(move || seen.lock().unwrap().push(n))
        };
        dispatch.send(job(1));
        dispatch.send(job(2));
        assert_eq!(keeps.0.lock().unwrap().len(), 1, "one call out for both");
        // the dispatcher's queue is dropped with the call in it
        keeps.0.lock().unwrap().clear();
        dispatch.send(job(3));
        let calls: Vec<_> = keeps.0.lock().unwrap().drain(..).collect();
        assert_eq!(calls.len(), 1, "a new call is handed out");
        calls[0].run();
        assert_eq!(*seen.lock().unwrap(), [1, 2, 3]);
        // a call that ran, once let go, changes nothing
        drop(calls);
        dispatch.send(job(4));
        assert_eq!(keeps.0.lock().unwrap().len(), 1);
    }

    #[test]
    fn nothing_is_sent_once_the_dispatcher_is_gone() {
        let dispatcher: Arc<dyn CallbackDispatcher> = Arc::new(Throws);
        let dispatch = Dispatch::new(&dispatcher);
        drop(dispatcher);
        dispatch.send(Box::new(|| panic!("ran after the client closed")));
        assert!(dispatch.queue.lock().jobs.is_empty());
    }
}
