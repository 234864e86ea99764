//! [`ScriptedServer`]: a server the test answers by hand, for the tests of
//! an app's own screens and for LikeKit's conformance suite.

use std::sync::Arc;

use crate::types::{core_id, foreign_id, non_negative, wait_ms};
use crate::{LikeError, Live};

/// A server for tests whose like and unlike calls wait until the test
/// answers them, in any order: build a client on it with
/// `LikeClient.scripted(server, options)`, tap, then look at
/// [`calls`](Self::calls) and [`answer`](Self::answer) or
/// [`fail`](Self::fail) each. Reads answer at once from the posts given to
/// [`set_post`](Self::set_post). Nothing goes over the network.
#[derive(uniffi::Object)]
pub struct ScriptedServer {
    pub(crate) inner: likekit_core::ScriptedServer,
    _live: Live,
}

impl std::fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

/// A like or unlike call waiting for the test's answer.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ScriptedCall {
    /// The call's number: 0 for the first call the server saw, then 1, 2…
    pub id: i64,
    /// The post.
    pub post_id: i64,
    /// `true` for a like (POST), `false` for an unlike (DELETE).
    pub like: bool,
    /// `like 42 #0`, `unlike 42 #3`: as the conformance scenarios write it.
    pub text: String,
}

/// How a scripted call fails, classified as the HTTP client would.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum ScriptedFailure {
    /// An answer with this HTTP status (429, 503, 404…), its
    /// `Retry-After` in milliseconds, and its error body's code (none:
    /// `http_<status>`).
    Status {
        status: u16,
        retry_after_ms: Option<i64>,
        code: Option<String>,
    },
    /// The connection broke before an answer.
    Network,
    /// No answer in time.
    Timeout,
    /// A 200 whose body could not be read.
    Unreadable,
}

impl From<ScriptedFailure> for likekit_core::ScriptedFailure {
    fn from(failure: ScriptedFailure) -> Self {
        match failure {
            ScriptedFailure::Status {
                status,
                retry_after_ms,
                code,
            } => Self::Status {
                status,
                retry_after_ms: retry_after_ms.map(|ms| u64::try_from(ms).unwrap_or(0)),
                code,
            },
            ScriptedFailure::Network => Self::Network,
            ScriptedFailure::Timeout => Self::Timeout,
            ScriptedFailure::Unreadable => Self::Unreadable,
        }
    }
}

impl From<likekit_core::ScriptedCall> for ScriptedCall {
    fn from(call: likekit_core::ScriptedCall) -> Self {
        Self {
            id: i64::try_from(call.id).unwrap_or(i64::MAX),
            post_id: foreign_id(call.post),
            like: call.action == likekit_core::Action::Like,
            text: call.to_string(),
        }
    }
}

#[uniffi::export(async_runtime = "tokio")]
impl ScriptedServer {
    /// A server with no posts and no calls.
    #[uniffi::constructor]
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            inner: likekit_core::ScriptedServer::new(),
            _live: Live::new(),
        })
    }

    /// Reads of `post_id` answer this from now on.
    ///
    /// # Errors
    ///
    /// [`LikeError::InvalidId`] for a post id below 1; [`LikeError::Config`]
    /// for a negative count or version.
    pub fn set_post(
        &self,
        post_id: i64,
        count: i64,
        liked_by_me: bool,
        friends: Vec<String>,
        version: i64,
    ) -> Result<(), LikeError> {
        self.inner.set_post(
            core_id(post_id)?,
            likekit_core::wire::PostLikes {
                count: non_negative(count, "count")?,
                liked_by_me,
                friends,
                version: non_negative(version, "version")?,
            },
        );
        Ok(())
    }

    /// Reads of `post_id` answer "not found" from now on.
    ///
    /// # Errors
    ///
    /// [`LikeError::InvalidId`] for a post id below 1.
    pub fn remove_post(&self, post_id: i64) -> Result<(), LikeError> {
        self.inner.remove_post(core_id(post_id)?);
        Ok(())
    }

    /// The calls waiting for an answer, oldest first. A tap returns before
    /// its call goes out, so right after one this may not show it yet:
    /// read [`wait_calls`](Self::wait_calls) there.
    pub fn calls(&self) -> Vec<ScriptedCall> {
        self.inner.calls().into_iter().map(Into::into).collect()
    }

    /// The calls waiting for an answer, oldest first, once at least
    /// `count` are; or, after `timeout_ms` (a negative one is 0), those
    /// waiting then, fewer than `count`. What a test reads after a tap,
    /// whose call reaches the server from LikeKit's own threads a moment
    /// later: `wait_calls(1, 5000)` and check there is one. It waits in
    /// real time, also under a test dispatcher's virtual time.
    pub async fn wait_calls(&self, count: u32, timeout_ms: i64) -> Vec<ScriptedCall> {
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        let calls = self.inner.wait_calls(count, wait_ms(timeout_ms));
        calls.await.into_iter().map(Into::into).collect()
    }

    /// Answers call `id` with what the server saved. Returns `false` when
    /// no call `id` is waiting.
    ///
    /// # Errors
    ///
    /// [`LikeError::Config`] for a negative count or version.
    pub fn answer(
        &self,
        id: i64,
        count: i64,
        liked_by_me: bool,
        version: i64,
    ) -> Result<bool, LikeError> {
        let state = likekit_core::wire::LikeState {
            count: non_negative(count, "count")?,
            liked_by_me,
            version: non_negative(version, "version")?,
        };
        Ok(call_id(id).is_some_and(|id| self.inner.answer(id, Ok(state))))
    }

    /// Fails call `id`. Returns `false` when no call `id` is waiting.
    pub fn fail(&self, id: i64, failure: ScriptedFailure) -> bool {
        call_id(id).is_some_and(|id| self.inner.fail(id, failure.into()))
    }
}

fn call_id(id: i64) -> Option<u64> {
    u64::try_from(id).ok()
}
