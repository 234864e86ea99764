//! [`ScriptedServer`]: a server the test answers by hand, call by call.

use std::collections::HashMap;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_channel::oneshot;
use futures_util::future::{self, Either};

use crate::runtime::BoxFuture;
use crate::wire::{BatchLikes, LikeState, PostLikes};
use crate::{Action, LikeError, PostId, Transport};

/// A server whose like and unlike calls wait until the test answers them,
/// in whatever order it likes: for tests of an app's own screens and for
/// LikeKit's conformance suite, which replays one list of scenarios through
/// every binding.
///
/// Calls are numbered from 0 in the order the client sends them
/// ([`ScriptedCall::id`]). Reads are answered at once from the posts given
/// with [`set_post`](Self::set_post) (others are [`LikeError::NotFound`]).
/// Clones share one server.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use likekit_core::{LikeClient, PostId, ScriptedServer, wire::LikeState};
///
/// let post = PostId::new(42).unwrap();
/// let server = ScriptedServer::new();
/// let client = LikeClient::builder().transport(server.clone()).build().unwrap();
///
/// assert!(client.set_liked(post, true).pending); // the heart fills now
/// let call = server.next_call().await;
/// assert_eq!(call.to_string(), "like 42 #0");
/// server.answer(call.id, Ok(LikeState { count: 1, liked_by_me: true, version: 2 }));
/// assert!(client.wait_idle(std::time::Duration::from_secs(5)).await);
/// assert!(!client.view(post).unwrap().pending);
/// # }
/// ```
#[derive(Clone, Default)]
pub struct ScriptedServer {
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    /// Calls not answered yet, oldest (lowest id) first: ids only grow,
    /// so a call is pushed at the end. A list, not a map: there are a
    /// handful at a time, and the web package need not carry a map type
    /// only a test server uses.
    waiting: Vec<Waiting>,
    posts: HashMap<PostId, PostLikes>,
    /// Woken when a call arrives.
    arrivals: Vec<oneshot::Sender<()>>,
}

struct Waiting {
    call: ScriptedCall,
    answer: oneshot::Sender<Result<LikeState, LikeError>>,
}

/// A like or unlike call the client sent to a [`ScriptedServer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScriptedCall {
    /// The call's number: 0 for the first call the server saw, then 1, 2…
    pub id: u64,
    /// The post.
    pub post: PostId,
    /// Like (POST) or unlike (DELETE).
    pub action: Action,
}

/// How a [`ScriptedServer`] call fails, as the HTTP transport would
/// classify it ([`ScriptedServer::fail`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptedFailure {
    /// An answer with this HTTP status (and `Retry-After`, and the error
    /// body's `code` when given; `http_<status>` without one).
    Status {
        /// The HTTP status: 429, 503, 404…
        status: u16,
        /// The `Retry-After` header, in milliseconds.
        retry_after_ms: Option<u64>,
        /// The error body's code.
        code: Option<String>,
    },
    /// The connection broke before an answer: [`LikeError::Network`].
    Network,
    /// No answer in time: [`LikeError::Timeout`].
    Timeout,
    /// A 200 whose body could not be read: [`LikeError::InvalidResponse`].
    Unreadable,
}

impl ScriptedFailure {
    /// The error the client sees, from the same classification as the
    /// HTTP transport's.
    ///
    /// ```
    /// use likekit_core::ScriptedFailure;
    /// let e = ScriptedFailure::Status { status: 503, retry_after_ms: None, code: None }.into_error();
    /// assert_eq!((e.code(), e.status(), e.is_transient()), ("http_503", Some(503), true));
    /// ```
    pub fn into_error(self) -> LikeError {
        match self {
            Self::Status {
                status,
                retry_after_ms,
                code,
            } => match code {
                // As from the error body {"error": {"code", "message"}}.
                Some(code) => crate::transport::error_with(
                    status,
                    retry_after_ms,
                    code,
                    "scripted failure".into(),
                ),
                None => crate::transport::error_for(status, retry_after_ms, b""),
            },
            Self::Network => LikeError::Network {
                message: "scripted: the connection broke".into(),
            },
            Self::Timeout => LikeError::Timeout,
            Self::Unreadable => LikeError::InvalidResponse {
                message: "scripted: an unreadable answer".into(),
            },
        }
    }
}

/// `like 42 #0`, `unlike 42 #3`: the form the conformance scenarios use.
impl std::fmt::Display for ScriptedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verb = match self.action {
            Action::Like => "like",
            Action::Unlike => "unlike",
        };
        write!(f, "{verb} {} #{}", self.post, self.id)
    }
}

impl std::fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedServer")
            .field("calls", &self.calls())
            .finish_non_exhaustive()
    }
}

impl ScriptedServer {
    /// A server with no posts and no calls.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads of `post` answer `likes` from now on.
    pub fn set_post(&self, post: PostId, likes: PostLikes) {
        self.lock().posts.insert(post, likes);
    }

    /// Reads of `post` answer [`LikeError::NotFound`] from now on.
    pub fn remove_post(&self, post: PostId) {
        self.lock().posts.remove(&post);
    }

    /// The calls waiting for an answer, oldest first. A call the client
    /// gave up on (it shut down) is left out.
    pub fn calls(&self) -> Vec<ScriptedCall> {
        let mut st = self.lock();
        st.waiting.retain(|w| !w.answer.is_canceled());
        st.waiting.iter().map(|w| w.call).collect()
    }

    /// Answers the waiting call `id`: `Ok` with what the server saved, or
    /// the error the call fails with. Returns `false` when no call `id` is
    /// waiting (never sent, already answered, or given up on).
    pub fn answer(&self, id: u64, result: Result<LikeState, LikeError>) -> bool {
        let waiting = {
            let mut st = self.lock();
            let at = st.waiting.iter().position(|w| w.call.id == id);
            at.map(|at| st.waiting.remove(at))
        };
        waiting.is_some_and(|w| w.answer.send(result).is_ok())
    }

    /// Fails the waiting call `id` (see [`answer`](Self::answer)).
    pub fn fail(&self, id: u64, failure: ScriptedFailure) -> bool {
        self.answer(id, Err(failure.into_error()))
    }

    /// The oldest waiting call, once there is one.
    pub async fn next_call(&self) -> ScriptedCall {
        loop {
            match self.calls_or_arrival(1) {
                Ok(calls) => return calls[0],
                // A server dropped while waiting leaves nothing to wait for.
                Err(arrived) => {
                    if arrived.await.is_err() {
                        std::future::pending::<()>().await;
                    }
                }
            }
        }
    }

    /// The calls waiting, oldest first, once at least `count` are; or,
    /// after `timeout`, those waiting then (fewer than `count`). What a
    /// test reads after a tap: the tap returns before its call goes out
    /// (it leaves from the client's executor a moment later), so
    /// [`calls`](Self::calls) read at once may not show it yet.
    pub async fn wait_calls(&self, count: usize, timeout: Duration) -> Vec<ScriptedCall> {
        let mut deadline = pin!(crate::runtime::sleep(timeout));
        loop {
            let arrived = match self.calls_or_arrival(count) {
                Ok(calls) => return calls,
                Err(arrived) => arrived,
            };
            if let Either::Right(_) = future::select(arrived, deadline.as_mut()).await {
                return self.calls();
            }
        }
    }

    /// The calls waiting if there are at least `count`; else what wakes at
    /// the next call's arrival.
    fn calls_or_arrival(&self, count: usize) -> Result<Vec<ScriptedCall>, oneshot::Receiver<()>> {
        let mut st = self.lock();
        st.waiting.retain(|w| !w.answer.is_canceled());
        if st.waiting.len() >= count {
            return Ok(st.waiting.iter().map(|w| w.call).collect());
        }
        let (tx, rx) = oneshot::channel();
        st.arrivals.push(tx);
        Err(rx)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn read_one(&self, post: PostId) -> Result<PostLikes, LikeError> {
        self.lock()
            .posts
            .get(&post)
            .cloned()
            .ok_or_else(|| LikeError::NotFound {
                message: format!("there is no post {post}"),
            })
    }
}

impl Transport for ScriptedServer {
    fn send(&self, post: PostId, action: Action) -> BoxFuture<'_, Result<LikeState, LikeError>> {
        let (tx, rx) = oneshot::channel();
        let arrivals = {
            let mut st = self.lock();
            let id = st.next_id;
            st.next_id += 1;
            let call = ScriptedCall { id, post, action };
            st.waiting.push(Waiting { call, answer: tx });
            std::mem::take(&mut st.arrivals)
        };
        for arrival in arrivals {
            let _ = arrival.send(());
        }
        Box::pin(async move {
            rx.await.unwrap_or_else(|_| {
                Err(LikeError::Network {
                    message: "the scripted server went away".into(),
                })
            })
        })
    }

    fn read(&self, post: PostId) -> BoxFuture<'_, Result<PostLikes, LikeError>> {
        Box::pin(std::future::ready(self.read_one(post)))
    }

    fn read_many<'a>(
        &'a self,
        posts: &'a [PostId],
    ) -> BoxFuture<'a, Result<BatchLikes, LikeError>> {
        let st = self.lock();
        let batch = crate::transport::batch_of(posts, |post| st.posts.get(post).cloned());
        Box::pin(std::future::ready(Ok(batch)))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn id(n: u64) -> PostId {
        PostId::new(n).unwrap()
    }

    #[tokio::test]
    async fn calls_wait_in_order_until_answered_by_id() {
        let server = ScriptedServer::new();
        let first = server.send(id(1), Action::Like);
        let second = server.send(id(2), Action::Unlike);
        let shown: Vec<String> = server.calls().iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["like 1 #0", "unlike 2 #1"]);
        assert_eq!(server.next_call().await.id, 0);
        // answered out of order
        assert!(server.answer(1, Err(LikeError::Timeout)));
        assert!(!server.answer(1, Err(LikeError::Timeout)), "answered twice");
        assert!(!server.answer(7, Err(LikeError::Timeout)), "never sent");
        assert_eq!(second.await, Err(LikeError::Timeout));
        let state = LikeState {
            count: 3,
            liked_by_me: true,
            version: 4,
        };
        assert!(server.answer(0, Ok(state)));
        assert_eq!(first.await, Ok(state));
        assert!(server.calls().is_empty());
    }

    #[test]
    fn failures_are_classified_as_the_http_transport_does() {
        let status = |status, retry_after_ms, code: Option<&str>| {
            ScriptedFailure::Status {
                status,
                retry_after_ms,
                code: code.map(str::to_owned),
            }
            .into_error()
        };
        assert_eq!(
            status(429, Some(7), None),
            LikeError::RateLimited {
                retry_after_ms: Some(7)
            }
        );
        let injected = status(503, None, Some("injected_fault"));
        assert_eq!(
            (injected.code(), injected.status()),
            ("injected_fault", Some(503))
        );
        assert_eq!(
            status(404, None, Some("post_not_found")).code(),
            "post_not_found"
        );
        // a 404 without the server's word on the post: the route's
        assert_eq!(status(404, None, None).code(), "http_404");
        assert_eq!(status(400, None, Some("bad_query")).code(), "bad_query");
        assert!(!status(400, None, None).is_transient());
        assert_eq!(ScriptedFailure::Network.into_error().code(), "network");
        assert_eq!(ScriptedFailure::Timeout.into_error(), LikeError::Timeout);
        assert_eq!(
            ScriptedFailure::Unreadable.into_error().code(),
            "invalid_response"
        );
    }

    #[tokio::test]
    async fn a_call_given_up_on_is_no_longer_waiting() {
        let server = ScriptedServer::new();
        drop(server.send(id(1), Action::Like));
        assert!(server.calls().is_empty());
        assert!(!server.answer(0, Err(LikeError::Timeout)));
    }

    #[tokio::test]
    async fn wait_calls_returns_once_enough_have_arrived_or_those_there_at_the_timeout() {
        let server = ScriptedServer::new();
        let waiting = {
            let server = server.clone();
            tokio::spawn(async move { server.wait_calls(2, Duration::from_secs(30)).await })
        };
        tokio::task::yield_now().await;
        let _first = server.send(id(1), Action::Like);
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "one call of two");
        let _second = server.send(id(2), Action::Unlike);
        let calls = waiting.await.unwrap();
        let seen: Vec<_> = calls.iter().map(ToString::to_string).collect();
        assert_eq!(seen, ["like 1 #0", "unlike 2 #1"]);

        // Fewer than asked for: those waiting at the timeout.
        let calls = server.wait_calls(3, Duration::from_millis(20)).await;
        assert_eq!(calls.len(), 2);
        // Already there: at once, whatever the timeout.
        let calls = server.wait_calls(1, Duration::from_secs(3600)).await;
        assert_eq!(calls.len(), 2);
    }

    #[tokio::test]
    async fn next_call_waits_for_one_to_arrive() {
        let server = ScriptedServer::new();
        let waiting = {
            let server = server.clone();
            tokio::spawn(async move { server.next_call().await })
        };
        tokio::task::yield_now().await;
        let _call = server.send(id(9), Action::Unlike);
        let call = waiting.await.unwrap();
        assert_eq!(
            (call.id, call.post, call.action),
            (0, id(9), Action::Unlike)
        );
    }

    #[tokio::test]
    async fn reads_answer_the_posts_set_and_not_found_for_others() {
        let server = ScriptedServer::new();
        let likes = PostLikes {
            count: 10,
            liked_by_me: false,
            friends: vec!["Ana".into()],
            version: 3,
        };
        server.set_post(id(1), likes.clone());
        assert_eq!(server.read(id(1)).await, Ok(likes.clone()));
        assert_eq!(
            server.read(id(2)).await.unwrap_err().code(),
            "post_not_found"
        );
        let batch = server.read_many(&[id(1), id(2)]).await.unwrap();
        assert_eq!(batch.posts.len(), 1);
        assert_eq!(batch.posts[&id(1)], likes);
        server.remove_post(id(1));
        assert!(server.read(id(1)).await.is_err());
    }
}
