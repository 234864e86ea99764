//! The driver and client against a transport the test answers by hand.

#![allow(clippy::unwrap_used)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_channel::oneshot;

use crate::runtime::BoxFuture;
use crate::wire::{BatchLikes, LikeState, PostLikes};
use crate::{
    Action, LikeClient, LikeError, LikeEvent, MemoryTransport, PostId, RetryPolicy, Transport,
};

fn id(n: u64) -> PostId {
    PostId::new(n).unwrap()
}

/// One call the client made, waiting for the test's answer.
struct Call {
    post: PostId,
    action: Action,
    answer: oneshot::Sender<Result<LikeState, LikeError>>,
}

impl Call {
    fn ok(self, count: u64, version: u64) {
        let liked = self.action == Action::Like;
        let _ = self.answer.send(Ok(LikeState {
            count,
            liked_by_me: liked,
            version,
        }));
    }

    fn fail(self, error: LikeError) {
        let _ = self.answer.send(Err(error));
    }
}

/// A transport whose like/unlike calls wait until the test answers them.
/// Reads are answered from `reads`, and counted.
#[derive(Default)]
struct Gate {
    calls: Mutex<VecDeque<Call>>,
    sent: Mutex<Vec<(PostId, Action)>>,
    reads: Mutex<Vec<Vec<PostId>>>,
}

impl Gate {
    /// The next call the client made, waiting for it up to 5 s.
    async fn next(&self) -> Call {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(call) = self.calls.lock().unwrap().pop_front() {
                return call;
            }
            assert!(Instant::now() < deadline, "no call came");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    fn waiting(&self) -> usize {
        self.calls.lock().unwrap().len()
    }

    fn sent(&self) -> Vec<(PostId, Action)> {
        self.sent.lock().unwrap().clone()
    }
}

impl Transport for Gate {
    fn send(&self, post: PostId, action: Action) -> BoxFuture<'_, Result<LikeState, LikeError>> {
        let (tx, rx) = oneshot::channel();
        self.sent.lock().unwrap().push((post, action));
        self.calls.lock().unwrap().push_back(Call {
            post,
            action,
            answer: tx,
        });
        Box::pin(async move { rx.await.unwrap_or(Err(LikeError::Timeout)) })
    }

    fn read(&self, post: PostId) -> BoxFuture<'_, Result<PostLikes, LikeError>> {
        self.reads.lock().unwrap().push(vec![post]);
        Box::pin(async move {
            Ok(PostLikes {
                count: 10,
                liked_by_me: false,
                friends: vec!["Ana".into()],
                version: 5,
            })
        })
    }

    fn read_many<'a>(
        &'a self,
        posts: &'a [PostId],
    ) -> BoxFuture<'a, Result<BatchLikes, LikeError>> {
        self.reads.lock().unwrap().push(posts.to_vec());
        Box::pin(async move {
            let mut batch = BatchLikes::default();
            for &post in posts {
                // even posts exist
                if post.get() % 2 == 0 {
                    batch.posts.insert(
                        post,
                        PostLikes {
                            count: post.get(),
                            liked_by_me: false,
                            friends: vec![],
                            version: 1,
                        },
                    );
                }
            }
            // and something nobody asked for, which is left out
            batch.posts.insert(
                id(999_999),
                PostLikes {
                    count: 1,
                    liked_by_me: true,
                    friends: vec![],
                    version: 1,
                },
            );
            Ok(batch)
        })
    }
}

fn fast_retries(max_retries: usize) -> RetryPolicy {
    RetryPolicy {
        min_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
        max_retries,
        seed: Some(1),
        ..RetryPolicy::default()
    }
}

fn gated(retries: usize) -> (LikeClient, Arc<Gate>) {
    let gate = Arc::new(Gate::default());
    let client = LikeClient::builder()
        .transport(Arc::clone(&gate))
        .retry_policy(fast_retries(retries))
        .build()
        .unwrap();
    (client, gate)
}

type Log = Arc<Mutex<Vec<LikeEvent>>>;

fn record(client: &LikeClient, post: PostId) -> (Log, crate::Subscription) {
    let log: Log = Arc::default();
    let sink = Arc::clone(&log);
    let sub = client.subscribe(post, move |e: &LikeEvent| {
        sink.lock().unwrap().push(e.clone())
    });
    (log, sub)
}

fn failures(log: &Log) -> usize {
    log.lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, LikeEvent::Failed(_)))
        .count()
}

fn last_view(log: &Log) -> crate::PostView {
    log.lock()
        .unwrap()
        .iter()
        .rev()
        .find_map(|e| match e {
            LikeEvent::Changed(v) => Some(v.clone()),
            LikeEvent::Failed(_) => None,
        })
        .unwrap()
}

#[test]
fn the_client_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<LikeClient>();
    assert_send_sync::<crate::Subscription>();
    assert_send_sync::<crate::HttpTransport>();
}

#[tokio::test]
async fn a_tap_shows_at_once_and_the_answer_confirms_it() {
    let (client, gate) = gated(3);
    let (log, _sub) = record(&client, id(42));

    let view = client.set_liked(id(42), true);
    assert!(view.liked && view.pending);
    assert_eq!(view.count, 1);
    // the observer heard of it before any I/O
    assert_eq!(log.lock().unwrap().len(), 1);
    assert_eq!(last_view(&log), view);

    let call = gate.next().await;
    assert_eq!((call.post, call.action), (id(42), Action::Like));
    call.ok(7, 3);
    assert!(client.wait_idle(Duration::from_secs(5)).await);
    let view = client.view(id(42)).unwrap();
    assert!(view.liked && !view.pending);
    assert_eq!(view.count, 7);
    assert_eq!(last_view(&log), view);
    assert_eq!(failures(&log), 0);
}

#[tokio::test]
async fn failing_every_attempt_rolls_back_with_one_failure() {
    let (client, gate) = gated(2);
    let (log, _sub) = record(&client, id(42));
    client.set_liked(id(42), true);
    for _ in 0..3 {
        gate.next().await.fail(LikeError::Server {
            status: 503,
            code: "http_503".into(),
            message: String::new(),
        });
    }
    assert!(client.wait_idle(Duration::from_secs(5)).await);
    let view = client.view(id(42)).unwrap();
    assert!(!view.liked && !view.pending);
    assert_eq!(view.count, 0);
    assert!(matches!(view.error, Some(LikeError::Server { .. })));
    assert_eq!(failures(&log), 1);
    assert_eq!(gate.waiting(), 0);
    let stats = client.stats();
    assert_eq!(
        (stats.calls_sent, stats.retries, stats.rollbacks),
        (3, 2, 1)
    );
}

#[tokio::test]
async fn one_failure_then_success_sticks_silently() {
    let (client, gate) = gated(2);
    let (log, _sub) = record(&client, id(42));
    client.set_liked(id(42), true);
    gate.next().await.fail(LikeError::Timeout);
    gate.next().await.ok(1, 2);
    assert!(client.wait_idle(Duration::from_secs(5)).await);
    assert!(client.view(id(42)).unwrap().liked);
    assert_eq!(failures(&log), 0);
}

#[tokio::test]
async fn a_permanent_error_rolls_back_without_retrying() {
    let (client, gate) = gated(5);
    let (log, _sub) = record(&client, id(42));
    client.set_liked(id(42), true);
    gate.next().await.fail(LikeError::NotFound {
        message: "gone".into(),
    });
    assert!(client.wait_idle(Duration::from_secs(5)).await);
    assert_eq!(gate.sent().len(), 1);
    assert!(!client.view(id(42)).unwrap().liked);
    let log = log.lock().unwrap();
    let failure = log.iter().find_map(|e| match e {
        LikeEvent::Failed(f) => Some(f.clone()),
        LikeEvent::Changed(_) => None,
    });
    let failure = failure.unwrap();
    assert!(failure.wanted);
    assert_eq!(failure.error.code(), "post_not_found");
}

#[tokio::test]
async fn rapid_taps_send_at_most_two_calls_and_end_in_the_last_state() {
    let (client, gate) = gated(3);
    for _ in 0..5 {
        client.toggle(id(42));
    }
    // like, unlike, like, unlike, like: the heart shows the last tap
    assert!(client.view(id(42)).unwrap().liked);
    let first = gate.next().await;
    assert_eq!(first.action, Action::Like);
    first.ok(1, 2);
    // the last tap equals what the first call confirmed: nothing more to send
    assert!(client.wait_idle(Duration::from_secs(5)).await);
    assert_eq!(gate.sent(), [(id(42), Action::Like)]);

    // three taps (unlike, like, unlike) while the like is confirmed: one
    // call, which the later taps ride along with or return to
    for _ in 0..3 {
        client.toggle(id(42));
    }
    let second = gate.next().await;
    assert_eq!(second.action, Action::Unlike);
    second.ok(0, 3);
    assert!(client.wait_idle(Duration::from_secs(5)).await);
    assert!(client.sent_at_most(3));
    assert_eq!(gate.sent().len(), 2);
    assert!(!client.view(id(42)).unwrap().liked);
}

impl LikeClient {
    fn sent_at_most(&self, calls: u64) -> bool {
        self.stats().calls_sent <= calls
    }
}

#[tokio::test]
async fn an_unlike_tapped_while_the_like_is_out_follows_it() {
    let (client, gate) = gated(3);
    client.set_liked(id(42), true);
    client.set_liked(id(42), false);
    let like = gate.next().await;
    // one call at a time: the unlike waits for the like's answer (the
    // client asks for its calls as the taps land, so none is on its way)
    assert_eq!(client.stats().calls_sent, 1);
    assert!(client.view(id(42)).unwrap().pending);
    assert_eq!(gate.waiting(), 0);
    like.ok(1, 2);
    let unlike = gate.next().await;
    assert_eq!(unlike.action, Action::Unlike);
    unlike.ok(0, 3);
    assert!(client.wait_idle(Duration::from_secs(5)).await);
    let view = client.view(id(42)).unwrap();
    assert!(!view.liked && !view.pending);
}

#[tokio::test]
async fn dropping_a_subscription_stops_its_events_and_lets_the_post_go() {
    let gate = Arc::new(Gate::default());
    let client = LikeClient::builder()
        .transport(Arc::clone(&gate))
        .max_posts(1)
        .build()
        .unwrap();
    let (log, sub) = record(&client, id(1));
    client.refresh(id(1)).await.unwrap();
    // a read of post 2 would evict post 1, but post 1 is watched
    client.refresh(id(2)).await.unwrap();
    assert!(client.view(id(1)).is_some());
    let seen = log.lock().unwrap().len();
    assert_eq!(seen, 1);

    drop(sub);
    client.refresh(id(3)).await.unwrap();
    client.refresh(id(4)).await.unwrap();
    assert!(client.view(id(1)).is_none(), "unwatched, idle: evicted");
    client.set_liked(id(1), true);
    assert_eq!(log.lock().unwrap().len(), seen);
    assert!(client.stats().evictions >= 2);
}

#[tokio::test]
async fn a_watched_post_has_no_view_until_its_first_read_which_is_always_heard() {
    let client = LikeClient::builder()
        .transport(MemoryTransport::new().with_post(id(5), 0))
        .build()
        .unwrap();
    let (log, _sub) = record(&client, id(5));
    // Watching makes the client track the post, but it knows nothing of it
    // yet: no made-up view of count 0 to draw as the server's.
    assert!(client.view(id(5)).is_none());
    // A read that finds what a placeholder would hold is still news.
    let read = client.refresh(id(5)).await.unwrap();
    assert_eq!((read.liked, read.count), (false, 0));
    assert_eq!(client.view(id(5)), Some(read.clone()));
    assert_eq!(*log.lock().unwrap(), [LikeEvent::Changed(read)]);
    // Read again, unchanged: not heard.
    client.refresh(id(5)).await.unwrap();
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_tapped_post_keeps_its_view_before_any_read() {
    let client = LikeClient::builder()
        .transport(MemoryTransport::new().with_post(id(6), 0))
        .build()
        .unwrap();
    let _sub = client.subscribe(id(6), |_: &LikeEvent| {});
    // An unlike of a post never read shows what the viewer asked for.
    let view = client.set_liked(id(6), false);
    assert!(!view.liked, "{view:?}");
    assert!(client.wait_idle(Duration::from_secs(5)).await);
    let settled = client.view(id(6)).expect("tracked");
    assert!(!settled.liked && !settled.pending, "{settled:?}");
}

/// An app showing a post from its own data unlikes it with
/// `set_liked(post, false)` before this client has read it: the unlike is
/// sent, since the server may hold a like from another session (a client
/// that only coalesced it against "not liked" left the like in place).
#[tokio::test]
async fn an_unlike_of_a_post_never_read_is_sent() {
    let server = Arc::new(MemoryTransport::new().with_post(id(6), 3));
    let earlier = LikeClient::builder()
        .transport(Arc::clone(&server))
        .build()
        .unwrap();
    earlier.set_liked(id(6), true);
    assert!(earlier.wait_idle(Duration::from_secs(5)).await);
    assert_eq!(server.liked(id(6)), Some(true));

    let client = LikeClient::builder()
        .transport(Arc::clone(&server))
        .build()
        .unwrap();
    let view = client.set_liked(id(6), false);
    assert!(!view.liked && view.pending, "{view:?}");
    assert!(client.wait_idle(Duration::from_secs(5)).await);
    assert_eq!(
        server.liked(id(6)),
        Some(false),
        "the unlike reached the server"
    );
    let settled = client.view(id(6)).expect("tracked");
    assert_eq!((settled.liked, settled.count), (false, 3), "{settled:?}");
    assert_eq!(client.stats().calls_sent, 1);
    // Once the server's state is known, a tap that changes nothing is not sent.
    client.set_liked(id(6), false);
    assert!(client.wait_idle(Duration::from_secs(5)).await);
    assert_eq!(client.stats().calls_sent, 1);
}

#[tokio::test]
async fn subscribe_all_hears_every_post() {
    let client = LikeClient::builder()
        .transport(
            MemoryTransport::new()
                .with_post(id(1), 0)
                .with_post(id(2), 0),
        )
        .build()
        .unwrap();
    let log: Log = Arc::default();
    let sink = Arc::clone(&log);
    let _sub = client.subscribe_all(move |e: &LikeEvent| sink.lock().unwrap().push(e.clone()));
    client.set_liked(id(1), true);
    client.set_liked(id(2), true);
    assert!(client.wait_idle(Duration::from_secs(5)).await);
    let posts: std::collections::BTreeSet<PostId> =
        log.lock().unwrap().iter().map(LikeEvent::post_id).collect();
    assert_eq!(posts.into_iter().collect::<Vec<_>>(), [1, 2]);
}

#[tokio::test]
async fn observers_may_call_the_client() {
    let client = LikeClient::builder()
        .transport(
            MemoryTransport::new()
                .with_post(id(42), 0)
                .with_post(id(43), 0),
        )
        .build()
        .unwrap();
    let inner = client.clone();
    let _sub = client.subscribe(id(42), move |e: &LikeEvent| {
        // a tap on 42 likes 43 too, from inside the callback
        if let LikeEvent::Changed(view) = e {
            if view.liked {
                inner.set_liked(id(43), true);
                let _ = inner.view(id(42));
                drop(inner.subscribe(id(44), |_: &LikeEvent| {}));
            }
        }
    });
    client.set_liked(id(42), true);
    assert!(client.view(id(43)).unwrap().liked);
    assert!(client.wait_idle(Duration::from_secs(5)).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_arrive_in_order_whatever_thread_feeds_the_machine() {
    let client = LikeClient::builder()
        .transport(MemoryTransport::new().with_post(id(42), 0))
        .build()
        .unwrap();
    let (log, _sub) = record(&client, id(42));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let client = client.clone();
            std::thread::spawn(move || {
                for _ in 0..200 {
                    client.toggle(id(42));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(client.wait_idle(Duration::from_secs(10)).await);
    // the last event the observer saw is the state the client ends in
    assert_eq!(last_view(&log), client.view(id(42)).unwrap());
    let stats = client.stats();
    assert_eq!(stats.taps, 800);
    assert_eq!(stats.taps, stats.intents_sent + stats.coalesced);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_with_view_hears_the_view_after_the_changes_still_on_their_way() {
    let (client, _gate) = gated(0);
    client.set_liked(id(42), false);
    let (entered_tx, entered) = std::sync::mpsc::channel::<()>();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Mutex::new(released);
    // An observer that holds the first delivery, so the next taps' changes
    // queue behind it.
    let _held = client.subscribe(id(42), move |_: &LikeEvent| {
        if entered_tx.send(()).is_ok() {
            released.lock().unwrap().recv().unwrap();
        }
    });
    let tapper = {
        let client = client.clone();
        std::thread::spawn(move || client.set_liked(id(42), true))
    };
    tokio::task::spawn_blocking(move || entered.recv().unwrap())
        .await
        .unwrap();
    // Delivery is held: an unlike and a like wait in the queue.
    client.set_liked(id(42), false);
    client.set_liked(id(42), true);
    let now = client.view(id(42)).unwrap();
    assert!(now.liked);

    let seen = |log: &Log| -> Vec<bool> {
        log.lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                LikeEvent::Changed(v) => Some(v.liked),
                LikeEvent::Failed(_) => None,
            })
            .collect()
    };
    let with_view: Log = Arc::default();
    let sink = Arc::clone(&with_view);
    let _with_view = client.subscribe_with_view(
        id(42),
        Arc::new(move |e: &LikeEvent| sink.lock().unwrap().push(e.clone())),
    );
    // Subscribing, then reading the view: the view read is the newest,
    // yet the queued unlike reaches this observer after it.
    let (read_after, _read_after) = record(&client, id(42));
    read_after
        .lock()
        .unwrap()
        .push(LikeEvent::Changed(client.view(id(42)).unwrap()));
    assert!(seen(&with_view).is_empty(), "delivered past the held one");

    release.send(()).unwrap();
    // The tapping thread delivers what queued meanwhile before its tap
    // returns (the call stays out: the gate holds it).
    tapper.join().unwrap();
    // The queued changes first, then the view held at subscribing: what
    // it heard last is the newest.
    assert_eq!(seen(&with_view), [false, true, true]);
    assert_eq!(last_view(&with_view), now);
    assert_eq!(
        seen(&read_after),
        [true, false, true],
        "read after subscribing, an older view follows the newer"
    );
}

#[test]
fn subscribe_with_view_hears_the_view_at_once_and_nothing_for_an_unknown_post() {
    let client = LikeClient::builder()
        .transport(MemoryTransport::new().with_post(id(5), 3))
        .build()
        .unwrap();
    let heard: Log = Arc::default();
    let sink = Arc::clone(&heard);
    let observer: Arc<dyn crate::LikeObserver> =
        Arc::new(move |e: &LikeEvent| sink.lock().unwrap().push(e.clone()));
    let _unknown = client.subscribe_with_view(id(5), Arc::clone(&observer));
    assert!(
        heard.lock().unwrap().is_empty(),
        "no view of an unknown post"
    );
    let tapped = client.set_liked(id(6), true);
    let _known = client.subscribe_with_view(id(6), observer);
    // Delivered before subscribe_with_view returned, on this thread.
    assert_eq!(*heard.lock().unwrap(), [LikeEvent::Changed(tapped)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_idle_returns_once_the_observers_heard_the_answer() {
    let (client, gate) = gated(0);
    let (entered_tx, entered) = std::sync::mpsc::channel::<()>();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Mutex::new(released);
    let log: Log = Arc::default();
    let sink = Arc::clone(&log);
    let _sub = client.subscribe(id(42), move |e: &LikeEvent| {
        let second = {
            let mut log = sink.lock().unwrap();
            log.push(e.clone());
            log.len() == 2
        };
        if second {
            // The read's event: hold this thread's delivery until the test
            // lets go, so the answer's event queues behind it.
            entered_tx.send(()).unwrap();
            released.lock().unwrap().recv().unwrap();
        }
    });
    client.set_liked(id(42), true);
    let call = gate.next().await;
    let read = {
        let client = client.clone();
        tokio::spawn(async move { client.refresh(id(42)).await })
    };
    tokio::task::spawn_blocking(move || entered.recv().unwrap())
        .await
        .unwrap();
    // A waiter that starts while the call is still out: the answer must
    // not wake it while its event waits behind the held delivery either.
    let mut early = Box::pin(client.wait_idle(Duration::from_secs(5)));
    let registered =
        std::future::poll_fn(|cx| std::task::Poll::Ready(early.as_mut().poll(cx).is_pending()))
            .await;
    assert!(registered, "idle with a call out");
    call.ok(11, 6);
    while client.has_pending_calls() {
        tokio::task::yield_now().await;
    }
    // The call is answered, but its event waits behind the held delivery.
    let waiter = {
        let client = client.clone();
        let log = Arc::clone(&log);
        tokio::spawn(async move {
            let idle = client.wait_idle(Duration::from_secs(5)).await;
            (idle, last_view(&log))
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !waiter.is_finished(),
        "idle before the observer heard the answer"
    );
    let early_done =
        std::future::poll_fn(|cx| std::task::Poll::Ready(early.as_mut().poll(cx).is_ready())).await;
    assert!(
        !early_done,
        "a waiter from before the answer woke before the observer heard it"
    );
    release.send(()).unwrap();
    let (idle, heard) = waiter.await.unwrap();
    assert!(idle);
    assert!(early.await, "the earlier waiter wakes too");
    assert!(heard.liked && !heard.pending, "{heard:?}");
    assert_eq!(heard.count, 11);
    assert!(read.await.unwrap().unwrap().pending);
}

/// Pages read at once by a feed read of many pages: at most four, each
/// started as another is in, all of them read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_many_reads_a_few_pages_at_a_time() {
    #[derive(Default)]
    struct Pages {
        out: std::sync::atomic::AtomicUsize,
        most: std::sync::atomic::AtomicUsize,
        read: Mutex<Vec<u64>>,
    }
    impl Transport for Pages {
        fn send(&self, _: PostId, _: Action) -> BoxFuture<'_, Result<LikeState, LikeError>> {
            Box::pin(async { Err(LikeError::Timeout) })
        }
        fn read(&self, _: PostId) -> BoxFuture<'_, Result<PostLikes, LikeError>> {
            Box::pin(async { Err(LikeError::Timeout) })
        }
        fn read_many<'a>(
            &'a self,
            posts: &'a [PostId],
        ) -> BoxFuture<'a, Result<BatchLikes, LikeError>> {
            use std::sync::atomic::Ordering::SeqCst;
            Box::pin(async move {
                let out = self.out.fetch_add(1, SeqCst) + 1;
                self.most.fetch_max(out, SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                self.read.lock().unwrap().push(posts[0].get());
                self.out.fetch_sub(1, SeqCst);
                let mut batch = BatchLikes::default();
                for &post in posts {
                    batch.posts.insert(
                        post,
                        PostLikes {
                            count: post.get(),
                            liked_by_me: false,
                            friends: vec![],
                            version: 1,
                        },
                    );
                }
                Ok(batch)
            })
        }
    }
    let pages = Arc::new(Pages::default());
    let client = LikeClient::builder()
        .transport(Arc::clone(&pages))
        .build()
        .unwrap();
    let posts: Vec<PostId> = (1..=1_050).map(id).collect();
    let views = client.refresh_many(&posts).await.unwrap();
    assert_eq!(views.len(), 1_050);
    assert!(views.iter().zip(1..).all(|(v, n)| v.post_id == id(n)));
    let mut read = pages.read.lock().unwrap().clone();
    read.sort_unstable();
    assert_eq!(read, (0..11).map(|page| page * 100 + 1).collect::<Vec<_>>());
    let most = pages.most.load(std::sync::atomic::Ordering::SeqCst);
    assert!((2..=4).contains(&most), "{most} pages out at once");
}

#[tokio::test]
async fn refresh_many_reads_pages_of_at_most_a_hundred() {
    let (client, gate) = gated(0);
    let posts: Vec<PostId> = (1..=250).chain([2, 4]).map(id).collect();
    let views = client.refresh_many(&posts).await.unwrap();
    let reads = gate.reads.lock().unwrap().clone();
    assert_eq!(reads.len(), 3);
    assert!(
        reads
            .iter()
            .all(|page| page.len() <= crate::wire::MAX_BATCH_POSTS)
    );
    assert_eq!(reads.iter().map(Vec::len).sum::<usize>(), 250);
    // the posts that exist, in the order asked, once each
    let ids: Vec<PostId> = views.iter().map(|v| v.post_id).collect();
    assert_eq!(ids, (2..=250).step_by(2).collect::<Vec<_>>());
    assert!(views.iter().all(|v| v.count == v.post_id.get()));
    assert!(client.view(id(999_999)).is_none());
    assert!(client.refresh_many(&[]).await.unwrap().is_empty());
    assert_eq!(gate.reads.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn a_read_during_a_pending_like_keeps_the_heart() {
    let (client, gate) = gated(0);
    client.set_liked(id(42), true);
    let call = gate.next().await;
    // the read (10 others, not liked by me) lands while the like is out
    let view = client.refresh(id(42)).await.unwrap();
    assert!(view.liked && view.pending);
    assert_eq!(view.count, 11);
    assert_eq!(view.line.to_string(), "Liked by you, Ana and 9 others");
    call.ok(11, 6);
    assert!(client.wait_idle(Duration::from_secs(5)).await);
    assert_eq!(client.view(id(42)).unwrap().count, 11);
}

#[tokio::test]
async fn shutdown_lets_calls_in_flight_finish() {
    let (client, gate) = gated(3);
    client.set_liked(id(42), true);
    let call = gate.next().await;
    let answer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        call.ok(1, 2);
    });
    assert!(client.shutdown(Duration::from_secs(5)).await);
    answer.await.unwrap();
    assert!(client.view(id(42)).unwrap().liked);
    assert!(client.is_shut_down());
    // no new taps or reads
    let late = client.set_liked(id(42), false);
    assert!(late.liked);
    assert_eq!(late.error, Some(LikeError::Shutdown));
    assert_eq!(
        client.set_liked(id(7), true).error,
        Some(LikeError::Shutdown)
    );
    assert!(client.view(id(7)).is_none());
    assert_eq!(client.refresh(id(42)).await, Err(LikeError::Shutdown));
    assert_eq!(gate.sent().len(), 1);
    // again: harmless
    assert!(client.shutdown(Duration::from_millis(10)).await);
}

#[tokio::test]
async fn shutdown_abandons_calls_past_the_deadline() {
    let (client, gate) = gated(3);
    let (log, _sub) = record(&client, id(42));
    client.set_liked(id(42), true);
    let _never_answered = gate.next().await;
    assert!(!client.shutdown(Duration::from_millis(50)).await);
    let view = client.view(id(42)).unwrap();
    assert!(!view.liked && !view.pending);
    assert_eq!(view.error, Some(LikeError::Shutdown));
    assert_eq!(failures(&log), 1);
    assert!(!client.has_pending_calls());
}

/// The deadline holds when the caller stops awaiting `shutdown` (a
/// cancelled coroutine, a dropped future): the call is abandoned at it all
/// the same, not left running.
#[tokio::test]
async fn shutdown_abandons_calls_at_the_deadline_even_when_no_one_awaits_it() {
    let (client, gate) = gated(3);
    let (log, _sub) = record(&client, id(42));
    client.set_liked(id(42), true);
    let _never_answered = gate.next().await;
    let shutdown = client.shutdown(Duration::from_millis(50));
    // Awaited for a moment, then given up on.
    assert!(
        tokio::time::timeout(Duration::from_millis(10), shutdown)
            .await
            .is_err()
    );
    assert!(client.is_shut_down());
    assert!(client.wait_idle(Duration::from_secs(5)).await);
    let view = client.view(id(42)).unwrap();
    assert!(!view.liked && !view.pending);
    assert_eq!(view.error, Some(LikeError::Shutdown));
    assert_eq!(failures(&log), 1);
}

/// On tokio's paused clock, so that "at once" and "never" can be checked
/// without waiting: the clock moves only when every task waits.
#[tokio::test(start_paused = true)]
async fn shutdown_ends_a_retry_wait_at_once() {
    let gate = Arc::new(Gate::default());
    let client = LikeClient::builder()
        .transport(Arc::clone(&gate))
        .retry_policy(RetryPolicy {
            min_delay: Duration::from_secs(60),
            max_delay: Duration::from_secs(60),
            jitter: false,
            ..RetryPolicy::default()
        })
        .build()
        .unwrap();
    let (log, _sub) = record(&client, id(42));
    client.set_liked(id(42), true);
    gate.next().await.fail(LikeError::Timeout);
    assert!(client.has_pending_calls(), "the retry waits its minute");
    let asked = tokio::time::Instant::now();
    assert!(!client.shutdown(Duration::from_millis(50)).await);
    // Ended at the shutdown's 50 ms deadline, not at the retry's minute.
    assert!(
        asked.elapsed() <= Duration::from_millis(50),
        "the retry's wait was not cut: {:?}",
        asked.elapsed()
    );
    assert!(!client.has_pending_calls());
    tokio::time::sleep(Duration::from_secs(61)).await;
    assert_eq!(gate.sent().len(), 1, "the retry is never sent");
    // the waiting retry failed at once: rolled back, and the viewer told
    let view = client.view(id(42)).unwrap();
    assert!(!view.liked && !view.pending, "{view:?}");
    assert_eq!(view.error, Some(LikeError::Shutdown));
    assert_eq!(failures(&log), 1);
}

/// A retry waiting out its backoff, or kept while offline, goes out at
/// `retry_now`; one waiting for the server's `Retry-After` does not.
#[tokio::test(start_paused = true)]
async fn retry_now_sends_a_waiting_retry_at_once_but_keeps_a_servers_retry_after() {
    let gate = Arc::new(Gate::default());
    let client = LikeClient::builder()
        .transport(Arc::clone(&gate))
        .retry_policy(RetryPolicy {
            min_delay: Duration::from_secs(60),
            max_delay: Duration::from_secs(60),
            max_retries: 1,
            jitter: false,
            ..RetryPolicy::default()
        })
        .keep_while_offline(Duration::from_secs(3600))
        .build()
        .unwrap();
    let (log, _sub) = record(&client, id(42));
    client.set_liked(id(42), true);
    gate.next().await.fail(LikeError::Network {
        message: "offline".into(),
    });
    // In its minute's backoff (the failure taken in, its wait started):
    // retry_now sends it now.
    tokio::time::sleep(Duration::from_millis(1)).await;
    let asked = tokio::time::Instant::now();
    client.retry_now();
    gate.next().await.fail(LikeError::Network {
        message: "offline".into(),
    });
    // On the paused clock: before the minute's backoff was out.
    assert!(
        asked.elapsed() < Duration::from_secs(60),
        "sent after the backoff: {:?}",
        asked.elapsed()
    );
    // Retries used up, kept while offline for an hour: retry_now again.
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert!(client.view(id(42)).unwrap().pending, "kept while offline");
    let asked = tokio::time::Instant::now();
    client.retry_now();
    gate.next().await.ok(1, 1);
    assert!(
        asked.elapsed() < Duration::from_secs(60),
        "sent after the offline wait: {:?}",
        asked.elapsed()
    );
    client.wait_idle(Duration::from_secs(1)).await;
    let view = client.view(id(42)).unwrap();
    assert!(
        view.liked && !view.pending && view.error.is_none(),
        "{view:?}"
    );
    assert_eq!(failures(&log), 0);

    // retry_now while a call is still out (the network came back as it
    // failed): the wait its failure starts ends at once.
    client.set_liked(id(44), true);
    let out = gate.next().await;
    client.retry_now();
    let asked = tokio::time::Instant::now();
    out.fail(LikeError::Network {
        message: "offline".into(),
    });
    gate.next().await.ok(1, 1);
    assert!(
        asked.elapsed() < Duration::from_secs(60),
        "sent after the backoff: {:?}",
        asked.elapsed()
    );

    // A 429's Retry-After of a minute is the server's: kept.
    client.set_liked(id(43), true);
    gate.next().await.fail(LikeError::RateLimited {
        retry_after_ms: Some(60_000),
    });
    tokio::time::sleep(Duration::from_millis(1)).await;
    let asked = tokio::time::Instant::now();
    client.retry_now();
    gate.next().await.ok(1, 1);
    assert!(
        asked.elapsed() >= Duration::from_secs(60),
        "sent before the server's Retry-After: {:?}",
        asked.elapsed()
    );
    // Nothing waiting, and after shutdown: harmless.
    client.retry_now();
    assert!(client.shutdown(Duration::from_secs(1)).await);
    client.retry_now();
}

#[test]
fn a_client_built_outside_any_runtime_runs_its_own() {
    let server = Arc::new(MemoryTransport::new().with_post(id(42), 5));
    let client = LikeClient::builder()
        .transport(Arc::clone(&server))
        .build()
        .unwrap();
    let view = client.set_liked(id(42), true);
    assert_eq!(view.count, 1, "nothing read yet: 0 + the viewer");
    let deadline = Instant::now() + Duration::from_secs(5);
    while client.has_pending_calls() {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(client.view(id(42)).unwrap().count, 6);
    assert_eq!(server.liked(id(42)), Some(true));
    // and async methods can be awaited from any executor
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let view = rt.block_on(client.refresh(id(42))).unwrap();
    assert_eq!(view.count, 6);
    assert!(rt.block_on(client.wait_idle(Duration::from_secs(1))));
    drop(client);
}

#[test]
fn building_needs_a_server() {
    let err = LikeClient::builder().build().unwrap_err();
    assert_eq!(err.code(), "config");
    let err = LikeClient::builder()
        .base_url("ftp://example.com")
        .build()
        .unwrap_err();
    assert_eq!(err.code(), "config");
}

mod journal {
    use super::*;
    use crate::journal::{Intent, encode};
    use crate::runtime::now_ms;
    use crate::{JournalFault, JournalStore, MemoryJournal, RestoreReport};

    fn journaled(journal: &Arc<MemoryJournal>) -> (LikeClient, Arc<Gate>) {
        let gate = Arc::new(Gate::default());
        let client = LikeClient::builder()
            .transport(Arc::clone(&gate))
            .retry_policy(fast_retries(0))
            .shared_journal(Arc::clone(journal) as Arc<dyn JournalStore>)
            .build()
            .unwrap();
        (client, gate)
    }

    #[tokio::test]
    async fn once_shutdown_began_restore_sends_nothing_and_the_journal_keeps_it() {
        let journal = Arc::new(MemoryJournal::new("ana"));
        journal
            .save(&[intent(7, true, Duration::from_secs(5))])
            .unwrap();
        let (client, gate) = journaled(&journal);
        // Shutdown begins at the call, before its future is awaited.
        let shutdown = client.shutdown(Duration::from_secs(1));
        assert!(client.is_shut_down());
        let report = client.restore();
        assert!(report.restored.is_empty() && report.expired.is_empty());
        let late = client.set_liked(id(8), true);
        assert_eq!(late.error, Some(LikeError::Shutdown));
        assert!(shutdown.await);
        assert!(gate.sent().is_empty(), "sent: {:?}", gate.sent());
        assert_eq!(saved(&journal, &[(7, true)]).await, [(7, true)]);
    }

    fn intent(post: u64, liked: bool, age: Duration) -> Intent {
        Intent {
            post: id(post),
            liked,
            tapped_at_ms: now_ms() - u64::try_from(age.as_millis()).unwrap(),
        }
    }

    /// The journal as last saved, once it is `expected` (saves happen in
    /// the background), or as it is after 5 s.
    async fn saved(journal: &MemoryJournal, expected: &[(u64, bool)]) -> Vec<(u64, bool)> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            // (a damaged journal reads as an error until it is replaced)
            let now: Option<Vec<(u64, bool)>> = journal
                .load()
                .ok()
                .map(|kept| kept.iter().map(|i| (i.post.get(), i.liked)).collect());
            if now.as_deref() == Some(expected) || Instant::now() >= deadline {
                return now.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// A store that takes a while to write (a slow disk): each save is
    /// written only after `delay`, on the blocking thread the client
    /// saves from.
    struct SlowDisk {
        inner: Arc<MemoryJournal>,
        delay: Duration,
    }

    impl JournalStore for SlowDisk {
        fn load(&self) -> Result<Vec<Intent>, LikeError> {
            self.inner.load()
        }

        fn save(&self, intents: &[Intent]) -> Result<(), LikeError> {
            std::thread::sleep(self.delay);
            self.inner.save(intents)
        }
    }

    /// A transport that notes what the journal holds at the moment each
    /// call goes out, then lets the gate answer it.
    struct Witness {
        gate: Arc<Gate>,
        journal: Arc<MemoryJournal>,
        at_send: Mutex<Vec<Vec<(u64, bool)>>>,
    }

    impl Transport for Witness {
        fn send(
            &self,
            post: PostId,
            action: Action,
        ) -> BoxFuture<'_, Result<LikeState, LikeError>> {
            let kept = self.journal.load().unwrap();
            self.at_send
                .lock()
                .unwrap()
                .push(kept.iter().map(|i| (i.post.get(), i.liked)).collect());
            self.gate.send(post, action)
        }

        fn read(&self, post: PostId) -> BoxFuture<'_, Result<PostLikes, LikeError>> {
            self.gate.read(post)
        }

        fn read_many<'a>(
            &'a self,
            posts: &'a [PostId],
        ) -> BoxFuture<'a, Result<BatchLikes, LikeError>> {
            self.gate.read_many(posts)
        }
    }

    #[tokio::test]
    async fn a_tap_is_written_down_before_its_call_goes_out() {
        let journal = Arc::new(MemoryJournal::new("ana"));
        // The save takes 50 ms: a call that did not wait for it would go
        // out while the journal is still empty.
        let disk = Arc::new(SlowDisk {
            inner: Arc::clone(&journal),
            delay: Duration::from_millis(50),
        });
        let witness = Arc::new(Witness {
            gate: Arc::new(Gate::default()),
            journal: Arc::clone(&journal),
            at_send: Mutex::default(),
        });
        let gate = Arc::clone(&witness.gate);
        let client = LikeClient::builder()
            .transport(Arc::clone(&witness))
            .retry_policy(fast_retries(0))
            .shared_journal(disk as Arc<dyn JournalStore>)
            .build()
            .unwrap();
        assert!(client.set_liked(id(42), true).pending);
        let call = gate.next().await;
        // the call went out only once the journal held its intent
        assert_eq!(*witness.at_send.lock().unwrap(), [vec![(42, true)]]);
        let kept = journal.load().unwrap();
        assert_eq!(kept.len(), 1);
        assert!(kept[0].post == id(42) && kept[0].liked);
        assert!(now_ms() - kept[0].tapped_at_ms < 60_000);
        call.ok(1, 2);
        assert!(client.wait_idle(Duration::from_secs(5)).await);
        assert_eq!(saved(&journal, &[]).await, []);
        // the last intent only: like → unlike → like while a call is out
        client.set_liked(id(7), true);
        let call = gate.next().await;
        client.set_liked(id(7), false);
        client.set_liked(id(7), true);
        client.set_liked(id(7), false);
        assert_eq!(saved(&journal, &[(7, false)]).await, [(7, false)]);
        call.ok(1, 2);
        gate.next().await.ok(0, 3);
        assert!(client.wait_idle(Duration::from_secs(5)).await);
        assert_eq!(saved(&journal, &[]).await, []);
        // every call found its own intent written down when it went out
        assert_eq!(
            *witness.at_send.lock().unwrap(),
            [vec![(42, true)], vec![(7, true)], vec![(7, false)]]
        );
    }

    /// A shutdown whose deadline cuts a call off keeps the call's intent:
    /// the app is closing, not giving up on the tap, and the next start
    /// sends it. Calls that finished within the deadline leave as usual.
    #[tokio::test]
    async fn a_call_cut_off_by_shutdown_keeps_its_intent_for_the_next_start() {
        let journal = Arc::new(MemoryJournal::new("ana"));
        let (client, gate) = journaled(&journal);
        client.set_liked(id(1), true);
        gate.next().await.ok(1, 2);
        client.set_liked(id(42), true);
        let _held = gate.next().await;
        assert_eq!(saved(&journal, &[(42, true)]).await, [(42, true)]);
        assert!(
            !client.shutdown(Duration::from_millis(50)).await,
            "a call was cut off"
        );
        assert_eq!(saved(&journal, &[(42, true)]).await, [(42, true)]);

        let (next, gate) = journaled(&journal);
        let report = next.restore();
        assert_eq!(report.restored.len(), 1);
        assert!(report.restored[0].post_id == id(42) && report.restored[0].pending);
        let call = gate.next().await;
        assert_eq!(call.post, id(42));
        call.ok(3, 4);
        assert!(next.wait_idle(Duration::from_secs(5)).await);
        assert_eq!(saved(&journal, &[]).await, []);
    }

    #[tokio::test]
    async fn restore_sends_what_an_earlier_run_left_and_drops_the_expired() {
        let day = Duration::from_secs(24 * 3600);
        let earlier = [
            intent(42, true, Duration::from_secs(60)),
            intent(43, true, day * 2),
        ];
        let journal = Arc::new(MemoryJournal::with_bytes("ana", encode("ana", &earlier)));
        let (client, gate) = journaled(&journal);
        let (log, _sub) = record(&client, id(43));
        // nothing is sent, nor the journal touched, before restore
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(gate.waiting(), 0);
        let RestoreReport {
            restored,
            expired,
            problem,
        } = client.restore();
        assert!(problem.is_none());
        assert_eq!(restored.len(), 1);
        assert!(restored[0].post_id == id(42) && restored[0].liked && restored[0].pending);
        assert_eq!(expired.len(), 1);
        assert_eq!(
            (expired[0].post_id, expired[0].error.clone()),
            (id(43), LikeError::Expired)
        );
        assert_eq!(
            failures(&log),
            1,
            "one failure heard for the expired intent"
        );
        let call = gate.next().await;
        assert_eq!((call.post, call.action), (id(42), Action::Like));
        assert_eq!(saved(&journal, &[(42, true)]).await, [(42, true)]);
        call.ok(11, 5);
        assert!(client.wait_idle(Duration::from_secs(5)).await);
        // idle means the journal is saved too
        assert_eq!(journal.load().unwrap(), []);
        assert_eq!(
            gate.sent().len(),
            1,
            "nothing of the expired intent was sent"
        );
        assert_eq!(client.restore(), RestoreReport::default(), "nothing left");
    }

    #[tokio::test]
    async fn a_journal_left_unrestored_loses_nothing() {
        let earlier = [intent(42, true, Duration::from_secs(60))];
        let journal = Arc::new(MemoryJournal::with_bytes("ana", encode("ana", &earlier)));
        let (client, gate) = journaled(&journal);
        client.set_liked(id(7), true);
        gate.next().await.ok(1, 2);
        assert!(client.wait_idle(Duration::from_secs(5)).await);
        assert_eq!(saved(&journal, &[(42, true)]).await, [(42, true)]);
    }

    /// A tap that changes nothing still supersedes what an earlier run
    /// left for the post: restore does not send the older intent.
    #[tokio::test]
    async fn a_tap_that_matches_the_heart_supersedes_the_journal() {
        let earlier = [intent(42, false, Duration::from_secs(60))];
        let journal = Arc::new(MemoryJournal::with_bytes("ana", encode("ana", &earlier)));
        let server = Arc::new(MemoryTransport::new().with_post(id(42), 3));
        server.send(id(42), Action::Like).await.unwrap();
        let client = LikeClient::builder()
            .shared_transport(Arc::clone(&server) as Arc<dyn Transport>)
            .shared_journal(Arc::clone(&journal) as Arc<dyn JournalStore>)
            .build()
            .unwrap();
        assert!(client.refresh(id(42)).await.unwrap().liked);
        let view = client.set_liked(id(42), true);
        assert!(view.liked && !view.pending, "nothing to send");
        let report = client.restore();
        assert!(report.restored.is_empty(), "{report:?}");
        assert!(report.expired.is_empty(), "{report:?}");
        assert!(client.wait_idle(Duration::from_secs(5)).await);
        assert_eq!(server.liked(id(42)), Some(true));
        assert_eq!(server.calls(), 1, "only the test's own like");
        assert_eq!(saved(&journal, &[]).await, []);
    }

    /// An intent stamped in the future (the clock was set back) cannot
    /// say how old it is: beyond a few minutes it counts as expired.
    #[tokio::test]
    async fn an_intent_stamped_in_the_future_expires() {
        let ahead = |post: u64, by: Duration| Intent {
            post: id(post),
            liked: true,
            tapped_at_ms: now_ms() + u64::try_from(by.as_millis()).unwrap(),
        };
        let earlier = [
            ahead(42, Duration::from_secs(10)),
            ahead(43, Duration::from_secs(24 * 3600 * 365)),
        ];
        let journal = Arc::new(MemoryJournal::with_bytes("ana", encode("ana", &earlier)));
        let (client, gate) = journaled(&journal);
        let report = client.restore();
        let restored: Vec<PostId> = report.restored.iter().map(|v| v.post_id).collect();
        let expired: Vec<PostId> = report.expired.iter().map(|f| f.post_id).collect();
        assert_eq!(restored, [id(42)], "a clock a little behind is fine");
        assert_eq!(expired, [id(43)]);
        let call = gate.next().await;
        assert_eq!(call.post, id(42));
        call.ok(1, 2);
        assert!(client.wait_idle(Duration::from_secs(5)).await);
        assert_eq!(gate.sent().len(), 1);
        assert_eq!(saved(&journal, &[]).await, []);
    }

    /// A store whose reads fail (as an I/O failure, not damaged content)
    /// and whose first `failing_saves` saves fail; it counts the saves.
    struct Flaky {
        inner: MemoryJournal,
        unreadable: bool,
        failing_saves: Mutex<usize>,
        saves: Mutex<usize>,
    }

    impl Flaky {
        fn new(inner: MemoryJournal, unreadable: bool, failing_saves: usize) -> Arc<Self> {
            Arc::new(Self {
                inner,
                unreadable,
                failing_saves: Mutex::new(failing_saves),
                saves: Mutex::new(0),
            })
        }

        fn saves(&self) -> usize {
            *self.saves.lock().unwrap()
        }
    }

    impl JournalStore for Flaky {
        fn load(&self) -> Result<Vec<Intent>, LikeError> {
            if self.unreadable {
                return Err(LikeError::Journal {
                    fault: JournalFault::Unreadable,
                    message: "cannot read likekit-intents.json: Operation not permitted".into(),
                });
            }
            self.inner.load()
        }

        fn save(&self, intents: &[Intent]) -> Result<(), LikeError> {
            *self.saves.lock().unwrap() += 1;
            let mut failing = self.failing_saves.lock().unwrap();
            if *failing > 0 {
                *failing -= 1;
                return Err(LikeError::Journal {
                    fault: JournalFault::Unwritable,
                    message: "cannot write likekit-intents.json: No space left on device".into(),
                });
            }
            self.inner.save(intents)
        }
    }

    fn flaky_client(store: &Arc<Flaky>) -> (LikeClient, Arc<Gate>) {
        let gate = Arc::new(Gate::default());
        let client = LikeClient::builder()
            .transport(Arc::clone(&gate))
            .retry_policy(fast_retries(0))
            .shared_journal(Arc::clone(store) as Arc<dyn JournalStore>)
            .build()
            .unwrap();
        (client, gate)
    }

    /// A journal that cannot be read now (file protection before the first
    /// unlock, an I/O error) is left untouched: what it holds is there for
    /// a later start. Taps still work, unjournaled.
    #[tokio::test]
    async fn a_journal_that_cannot_be_read_now_is_left_untouched() {
        let held = encode("ana", &[intent(42, true, Duration::from_secs(60))]);
        let store = Flaky::new(MemoryJournal::with_bytes("ana", held.clone()), true, 0);
        let (client, gate) = flaky_client(&store);
        let report = client.restore();
        let problem = report.problem.unwrap();
        assert_eq!(problem.code(), "journal_unreadable");
        assert!(report.restored.is_empty());
        assert_eq!(client.journal_problem(), Some(problem));
        client.set_liked(id(7), true);
        gate.next().await.ok(1, 2);
        assert!(client.wait_idle(Duration::from_secs(5)).await);
        assert!(client.shutdown(Duration::from_secs(1)).await);
        assert_eq!(store.saves(), 0, "never written");
        assert_eq!(store.inner.bytes(), Some(held));
    }

    /// A save that fails does not count as saved: the journal is saved
    /// again, so it never keeps an intent the server confirmed since.
    #[tokio::test]
    async fn a_failed_save_is_tried_again() {
        let store = Flaky::new(MemoryJournal::new("ana"), false, 0);
        let (client, gate) = flaky_client(&store);
        client.set_liked(id(42), true);
        let call = gate.next().await;
        assert_eq!(saved(&store.inner, &[(42, true)]).await, [(42, true)]);
        // The save that drops the confirmed intent fails, twice.
        *store.failing_saves.lock().unwrap() = 2;
        call.ok(1, 2);
        assert!(client.wait_idle(Duration::from_secs(5)).await);
        let deadline = Instant::now() + Duration::from_secs(5);
        while client.journal_problem().is_none() {
            assert!(Instant::now() < deadline, "the failure is surfaced");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(
            client.journal_problem().unwrap().code(),
            "journal_unwritable"
        );
        // Tried again on its own (after 0.5 s, then 1 s), until it saves.
        assert_eq!(saved(&store.inner, &[]).await, []);
        assert_eq!(store.saves(), 4);
        assert_eq!(client.journal_problem(), None);
    }

    #[tokio::test]
    async fn a_failing_save_after_shutdown_is_tried_again_with_a_pause() {
        let store = Flaky::new(MemoryJournal::new("ana"), false, 0);
        let (client, gate) = flaky_client(&store);
        client.set_liked(id(42), true);
        let call = gate.next().await;
        // Every save fails from now on.
        *store.failing_saves.lock().unwrap() = usize::MAX;
        call.ok(1, 2);
        assert!(client.wait_idle(Duration::from_secs(5)).await);
        let failed = store.saves();
        assert_eq!(failed, 2, "the intent's save, then the failing one");
        client.shutdown(Duration::from_secs(1)).await;
        // Tried again: the retry that waits is woken by the stop (or ends
        // its delay) and saves once more.
        let deadline = Instant::now() + Duration::from_secs(5);
        while store.saves() == failed {
            assert!(Instant::now() < deadline, "never tried again");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let after_stop = store.saves();
        tokio::time::sleep(Duration::from_millis(300)).await;
        // With a pause: the next try waits its delay (1 s by now) instead
        // of saving again at once.
        let more = store.saves() - after_stop;
        assert!(more <= 1, "{more} more saves within 300 ms");
        assert!(client.journal_problem().is_some());
    }

    #[tokio::test]
    async fn a_damaged_or_foreign_journal_is_reported_once_and_replaced() {
        let ana = encode("ana", &[intent(42, true, Duration::from_secs(1))]);
        for (bytes, viewer) in [
            (ana[..ana.len() / 2].to_vec(), "ana"),
            (b"{\"format\":99}".to_vec(), "ana"),
            (ana.clone(), "ben"),
        ] {
            let journal = Arc::new(MemoryJournal::with_bytes(viewer, bytes));
            let (client, gate) = journaled(&journal);
            let report = client.restore();
            assert_eq!(report.problem.unwrap().code(), "journal_damaged");
            assert!(report.restored.is_empty() && report.expired.is_empty());
            assert_eq!(client.restore(), RestoreReport::default(), "reported once");
            assert_eq!(
                saved(&journal, &[]).await,
                [],
                "replaced with an empty journal"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
            assert_eq!(gate.waiting(), 0, "nothing sent");
        }
    }
    /// A store that panics in `save` (natively) fails that save, as one
    /// that returns an error does: the call held for it goes out, the
    /// problem is reported, and the journal is saved again later.
    #[tokio::test]
    async fn a_save_that_panics_is_a_failed_save() {
        struct Panicking {
            inner: MemoryJournal,
            panics: Mutex<usize>,
        }

        impl JournalStore for Panicking {
            fn load(&self) -> Result<Vec<Intent>, LikeError> {
                self.inner.load()
            }

            fn save(&self, intents: &[Intent]) -> Result<(), LikeError> {
                let panic = {
                    let mut left = self.panics.lock().unwrap();
                    let panic = *left > 0;
                    *left = left.saturating_sub(1);
                    panic
                };
                assert!(!panic, "the app's journal store panicked");
                self.inner.save(intents)
            }
        }

        let store = Arc::new(Panicking {
            inner: MemoryJournal::new("ana"),
            panics: Mutex::new(1),
        });
        let gate = Arc::new(Gate::default());
        let client = LikeClient::builder()
            .transport(Arc::clone(&gate))
            .retry_policy(fast_retries(0))
            .shared_journal(Arc::clone(&store) as Arc<dyn JournalStore>)
            .build()
            .unwrap();
        client.set_liked(id(42), true);
        let call = gate.next().await;
        let problem = client.journal_problem().unwrap();
        assert_eq!(problem.code(), "journal_unwritable", "{problem:?}");
        assert!(problem.to_string().contains("panicked"), "{problem}");
        call.ok(1, 2);
        // Every later call goes out too, and the journal is kept again.
        client.set_liked(id(7), true);
        gate.next().await.ok(1, 2);
        assert!(client.wait_idle(Duration::from_secs(5)).await);
        assert_eq!(saved(&store.inner, &[]).await, []);
        assert_eq!(client.journal_problem(), None);
        assert!(client.shutdown(Duration::from_secs(1)).await);
    }

    /// A store of the app's own that lists a post twice: the newest
    /// intent for it (by tap time) is the one restored and sent, once.
    #[tokio::test]
    async fn a_store_listing_a_post_twice_restores_its_newest_intent() {
        struct Twice {
            listed: Vec<Intent>,
            saved: MemoryJournal,
        }

        impl JournalStore for Twice {
            fn load(&self) -> Result<Vec<Intent>, LikeError> {
                Ok(self.listed.clone())
            }

            fn save(&self, intents: &[Intent]) -> Result<(), LikeError> {
                self.saved.save(intents)
            }
        }

        let store = Arc::new(Twice {
            listed: vec![
                intent(42, true, Duration::from_secs(60)),
                intent(43, true, Duration::from_secs(1)),
                intent(42, false, Duration::from_secs(1)),
                intent(43, false, Duration::from_secs(60)),
            ],
            saved: MemoryJournal::new("ana"),
        });
        let gate = Arc::new(Gate::default());
        let client = LikeClient::builder()
            .transport(Arc::clone(&gate))
            .retry_policy(fast_retries(0))
            .shared_journal(Arc::clone(&store) as Arc<dyn JournalStore>)
            .build()
            .unwrap();
        let report = client.restore();
        let restored: Vec<(u64, bool, bool)> = report
            .restored
            .iter()
            .map(|v| (v.post_id.get(), v.liked, v.pending))
            .collect();
        assert_eq!(restored, [(42, false, true), (43, true, true)]);
        assert_eq!(
            saved(&store.saved, &[(42, false), (43, true)]).await,
            [(42, false), (43, true)]
        );
        let mut sent = Vec::new();
        for _ in 0..2 {
            let call = gate.next().await;
            sent.push((call.post.get(), call.action));
            call.ok(0, 2);
        }
        sent.sort_by_key(|(post, _)| *post);
        assert_eq!(sent, [(42, Action::Unlike), (43, Action::Like)]);
        assert!(client.wait_idle(Duration::from_secs(5)).await);
        assert_eq!(gate.sent().len(), 2, "one call per post");
    }
}

/// An observer that panics does not wedge the client: the tap's call is
/// still sent, the other observers hear every event, and the client goes
/// idle (before, the panic reached the tap's caller and left the call
/// unsent and the post pending for good).
#[tokio::test]
async fn an_observer_that_panics_does_not_stop_the_client() {
    let server = Arc::new(MemoryTransport::new().with_post(id(5), 2));
    let client = LikeClient::builder()
        .transport(Arc::clone(&server))
        .build()
        .unwrap();
    let _panics = client.subscribe(id(5), |_: &LikeEvent| panic!("an app's observer panicked"));
    let log: Log = Arc::default();
    let sink = Arc::clone(&log);
    let _hears = client.subscribe(id(5), move |e: &LikeEvent| {
        sink.lock().unwrap().push(e.clone())
    });
    let view = client.toggle(id(5));
    assert!(view.liked && view.pending, "{view:?}");
    assert!(
        client.wait_idle(Duration::from_secs(5)).await,
        "the client went idle"
    );
    assert_eq!(server.liked(id(5)), Some(true), "the like was sent");
    let heard: Vec<(bool, bool)> = log
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            LikeEvent::Changed(v) => Some((v.liked, v.pending)),
            LikeEvent::Failed(_) => None,
        })
        .collect();
    assert_eq!(heard, [(true, true), (true, false)]);
    // And the next tap goes through too.
    client.toggle(id(5));
    assert!(client.wait_idle(Duration::from_secs(5)).await);
    assert_eq!(server.liked(id(5)), Some(false));
}

/// A transport that panics, in `send` itself or while the call runs (as
/// a token provider it asks does), fails the call with a
/// [`LikeError::Network`] (natively), as a call that may have reached the
/// server: the post is not left pending, the viewer hears that the like
/// didn't save, and the next tap is sent.
#[tokio::test]
async fn a_transport_that_panics_fails_the_call_and_frees_the_post() {
    /// Panics on its first call, at once or when the call is first
    /// polled; then lets the gate answer.
    struct Panicking {
        gate: Arc<Gate>,
        at_once: bool,
        panics: Mutex<usize>,
    }

    fn token_provider_panics() -> Result<LikeState, LikeError> {
        panic!("the app's token provider panicked")
    }

    impl Transport for Panicking {
        fn send(
            &self,
            post: PostId,
            action: Action,
        ) -> BoxFuture<'_, Result<LikeState, LikeError>> {
            let panic = {
                let mut left = self.panics.lock().unwrap();
                let panic = *left > 0;
                *left = left.saturating_sub(1);
                panic
            };
            if !panic {
                return self.gate.send(post, action);
            }
            assert!(!self.at_once, "the app's transport panicked");
            Box::pin(async {
                tokio::task::yield_now().await;
                token_provider_panics()
            })
        }

        fn read(&self, post: PostId) -> BoxFuture<'_, Result<PostLikes, LikeError>> {
            self.gate.read(post)
        }

        fn read_many<'a>(
            &'a self,
            posts: &'a [PostId],
        ) -> BoxFuture<'a, Result<BatchLikes, LikeError>> {
            self.gate.read_many(posts)
        }
    }

    for at_once in [true, false] {
        let gate = Arc::new(Gate::default());
        let client = LikeClient::builder()
            .transport(Panicking {
                gate: Arc::clone(&gate),
                at_once,
                panics: Mutex::new(1),
            })
            .retry_policy(fast_retries(0))
            .build()
            .unwrap();
        let (log, _sub) = record(&client, id(5));
        client.set_liked(id(5), true);
        assert!(
            client.wait_idle(Duration::from_secs(5)).await,
            "at once: {at_once}"
        );
        let view = client.view(id(5)).unwrap();
        assert!(!view.liked && !view.pending, "{view:?}");
        let failure = log.lock().unwrap().iter().find_map(|e| match e {
            LikeEvent::Failed(f) => Some(f.clone()),
            LikeEvent::Changed(_) => None,
        });
        let failure = failure.unwrap();
        assert!(failure.wanted);
        assert!(
            matches!(failure.error, LikeError::Network { .. }),
            "{failure:?}"
        );
        assert!(failure.error.to_string().contains("panicked"), "{failure}");
        assert!(failure.error.may_have_applied());
        // The post's call slot is free: the next tap goes out and saves.
        client.set_liked(id(5), true);
        gate.next().await.ok(1, 2);
        assert!(client.wait_idle(Duration::from_secs(5)).await);
        let view = client.view(id(5)).unwrap();
        assert!(view.liked && !view.pending, "{view:?}");
        assert!(client.shutdown(Duration::from_secs(1)).await);
        assert!(!client.view(id(5)).unwrap().pending);
    }
}
