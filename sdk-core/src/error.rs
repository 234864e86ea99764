//! The SDK's one public error type.

use std::time::Duration;

/// Why a like, an unlike or a read did not go through.
///
/// The variants are flat and stable so that every platform binding can map
/// them one to one. [`LikeError::is_transient`] is the single place that
/// decides whether a failed call is worth retrying.
///
/// ```
/// use likekit_core::LikeError;
/// let e = LikeError::NotFound { message: "no post 42".into() };
/// assert!(!e.is_transient());
/// assert_eq!(e.code(), "post_not_found");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LikeError {
    /// The server could not be reached, or the connection broke before an
    /// answer arrived. Also a like or unlike whose
    /// [`Transport`](crate::Transport) or token provider panicked
    /// (natively; the message says so): whether the request left is not
    /// known. Retried.
    #[error("network error: {message}")]
    Network {
        /// What the network layer said.
        message: String,
    },
    /// No answer within the request timeout, or no token from an
    /// [`AsyncTokenProvider`](crate::AsyncTokenProvider) within it (then
    /// nothing was sent, though the error counts as
    /// [`may_have_applied`](Self::may_have_applied) all the same). Retried.
    #[error("the request timed out")]
    Timeout,
    /// The server failed (5xx), or answered 408 Request Timeout or 425 Too
    /// Early: transient answers after which the request may have been
    /// processed even so. Retried.
    // Statuses are written as `u64`s here and elsewhere: the web package
    // then carries one integer formatter, not a second one for `u16`.
    #[error("server error {}: {message}", u64::from(*.status))]
    Server {
        /// The HTTP status.
        status: u16,
        /// The error code from the body, or `http_<status>`.
        code: String,
        /// The error message from the body.
        message: String,
    },
    /// Too many requests (429). Retried, no sooner than `retry_after_ms`;
    /// a `retry_after_ms` longer than the retry policy's
    /// [ceiling](crate::RetryPolicy::retry_after_ceiling) (one minute by
    /// default) ends the retries at once.
    #[error("rate limited by the server")]
    RateLimited {
        /// The server's `Retry-After`, in milliseconds, when it sent one.
        retry_after_ms: Option<u64>,
    },
    /// The answer could not be read (malformed or truncated body, or one
    /// longer than the client's answer cap, `max_answer_bytes`). Retried:
    /// like and unlike are idempotent.
    #[error("unreadable answer from the server: {message}")]
    InvalidResponse {
        /// What was wrong with it.
        message: String,
    },
    /// The sign-in token was refused, even after asking the token provider
    /// for a fresh one (401). Not retried.
    #[error("not signed in: {message}")]
    Unauthorized {
        /// The server's message.
        message: String,
    },
    /// The user may not do this (403). Not retried.
    #[error("not allowed: {message}")]
    Forbidden {
        /// The server's message.
        message: String,
    },
    /// The post does not exist, or no longer does: a 404 with the
    /// server's `post_not_found`. Not retried.
    #[error("post not found: {message}")]
    NotFound {
        /// The server's message.
        message: String,
    },
    /// The server refused the request (400 and other 4xx but 401, 403,
    /// 408, 425 and 429; also a 404 that is not the server's
    /// `post_not_found`, such as a route it does not have), or redirected
    /// it (3xx: redirects are not followed, and the message says to give
    /// the address it leads to as the base URL). Not retried.
    #[error("request refused ({} {code}): {message}", u64::from(*.status))]
    Rejected {
        /// The HTTP status.
        status: u16,
        /// The error code from the body.
        code: String,
        /// The error message from the body.
        message: String,
    },
    /// A post or user id outside `1..=i64::MAX` was given where the platform
    /// passes ids as plain numbers (the bindings). `code` is the server's
    /// own code for it, `bad_post_id` or `bad_user_id`. Nothing was sent.
    #[error("{message}")]
    InvalidId {
        /// `bad_post_id` or `bad_user_id`.
        code: String,
        /// What was wrong, with the id given.
        message: String,
    },
    /// The client was configured wrongly (a bad base URL, say). Not retried.
    #[error("invalid configuration: {message}")]
    Config {
        /// What is wrong.
        message: String,
    },
    /// The client was shut down before the call could finish. Not retried.
    #[error("the client was shut down")]
    Shutdown,
    /// The intent journal could not be used; `fault` says how, and the
    /// code with it (`journal_in_use`, `journal_damaged`,
    /// `journal_unreadable`, `journal_unwritable`). A journal that cannot
    /// be read is reported once (see
    /// [`LikeClient::restore`](crate::LikeClient::restore)) and the client
    /// starts without it; a damaged one is replaced, one that could not be
    /// read now is left alone (see
    /// [`RestoreReport::problem`](crate::RestoreReport::problem)). A save
    /// that failed is tried again
    /// ([`LikeClient::journal_problem`](crate::LikeClient::journal_problem)).
    /// Not retried.
    #[error("intent journal: {message}")]
    Journal {
        /// What kind of failure it is.
        fault: JournalFault,
        /// What was wrong.
        message: String,
    },
    /// The viewer's intent was older than the client's
    /// `max_intent_age` when it could be sent, so it was dropped. Not
    /// retried.
    #[error("the tap is too old to send")]
    Expired,
}

/// How the intent journal failed ([`LikeError::Journal`]), each with its
/// own code, so an app tells them apart without reading the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JournalFault {
    /// Another client holds this viewer's journal (`journal_in_use`):
    /// close that client first, or wait until its calls have ended.
    InUse,
    /// The journal's content cannot be used (`journal_damaged`):
    /// truncated, corrupted, another viewer's, a newer format. What it
    /// held is lost; the next save replaces it.
    Damaged,
    /// The journal could not be read now (`journal_unreadable`): an I/O
    /// failure, a permission refused, storage locked until the device is
    /// first unlocked. It is left as it is for a later start.
    Unreadable,
    /// The journal could not be made or written (`journal_unwritable`):
    /// its folder, its lock file or a save failed. A failed save is tried
    /// again.
    Unwritable,
}

impl JournalFault {
    /// The error code of a journal that failed this way.
    ///
    /// ```
    /// use likekit_core::{JournalFault, LikeError};
    /// let e = LikeError::Journal { fault: JournalFault::InUse, message: "held".into() };
    /// assert_eq!(e.code(), "journal_in_use");
    /// assert_eq!(JournalFault::Damaged.code(), "journal_damaged");
    /// ```
    pub fn code(self) -> &'static str {
        match self {
            Self::InUse => "journal_in_use",
            Self::Damaged => "journal_damaged",
            Self::Unreadable => "journal_unreadable",
            Self::Unwritable => "journal_unwritable",
        }
    }
}

impl LikeError {
    /// Whether a call that failed this way may succeed if sent again.
    ///
    /// Connection failures, timeouts, unreadable answers, 5xx, 408, 425
    /// and 429 are transient; every other error is permanent.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Network { .. }
                | Self::Timeout
                | Self::Server { .. }
                | Self::RateLimited { .. }
                | Self::InvalidResponse { .. }
        )
    }

    /// Whether the failed call may have been applied by the server even so
    /// (its answer was lost). After such a failure the client no longer
    /// knows the server's state, and re-sends the wanted state even if it
    /// equals the last confirmed one.
    ///
    /// ```
    /// use likekit_core::LikeError;
    /// assert!(LikeError::Timeout.may_have_applied());
    /// assert!(!LikeError::RateLimited { retry_after_ms: None }.may_have_applied());
    /// ```
    pub fn may_have_applied(&self) -> bool {
        matches!(
            self,
            Self::Network { .. }
                | Self::Timeout
                | Self::Server { .. }
                | Self::InvalidResponse { .. }
        )
    }

    /// The least time to wait before retrying, when the server said so.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited {
                retry_after_ms: Some(ms),
            } => Some(Duration::from_millis(*ms)),
            _ => None,
        }
    }

    /// The HTTP status this error stands for: the answer's own for
    /// `Server` and `Rejected`, and the one status each of `Unauthorized`
    /// (401), `Forbidden` (403), `NotFound` (404) and `RateLimited` (429)
    /// is made from; `None` when no answer was classified (a network
    /// failure, a timeout, an unreadable answer) or nothing was sent.
    ///
    /// ```
    /// use likekit_core::LikeError;
    /// assert_eq!(LikeError::NotFound { message: "no post 42".into() }.status(), Some(404));
    /// assert_eq!(LikeError::Timeout.status(), None);
    /// ```
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Server { status, .. } | Self::Rejected { status, .. } => Some(*status),
            Self::Unauthorized { .. } => Some(401),
            Self::Forbidden { .. } => Some(403),
            Self::NotFound { .. } => Some(404),
            Self::RateLimited { .. } => Some(429),
            Self::Network { .. }
            | Self::Timeout
            | Self::InvalidResponse { .. }
            | Self::InvalidId { .. }
            | Self::Config { .. }
            | Self::Shutdown
            | Self::Journal { .. }
            | Self::Expired => None,
        }
    }

    /// A stable `snake_case` code for this error, for logs and bindings.
    pub fn code(&self) -> &str {
        match self {
            Self::Network { .. } => "network",
            Self::Timeout => "timeout",
            Self::Server { code, .. }
            | Self::Rejected { code, .. }
            | Self::InvalidId { code, .. } => code,
            Self::RateLimited { .. } => "rate_limited",
            Self::InvalidResponse { .. } => "invalid_response",
            Self::Unauthorized { .. } => "unauthorized",
            Self::Forbidden { .. } => "forbidden",
            Self::NotFound { .. } => "post_not_found",
            Self::Config { .. } => "config",
            Self::Shutdown => "shutdown",
            Self::Journal { fault, .. } => fault.code(),
            Self::Expired => "expired",
        }
    }
}

/// The one id rule's error, as the client's: the same `code` the server
/// answers for the same id.
///
/// ```
/// use likekit_core::{LikeError, PostId};
/// let e = LikeError::from(PostId::try_from(0_i64).unwrap_err());
/// assert_eq!(e.code(), "bad_post_id");
/// assert!(!e.is_transient());
/// ```
impl From<likekit_proto::IdError> for LikeError {
    fn from(e: likekit_proto::IdError) -> Self {
        Self::InvalidId {
            code: e.code().to_owned(),
            message: e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        let transient = [
            LikeError::Network {
                message: "refused".into(),
            },
            LikeError::Timeout,
            LikeError::Server {
                status: 503,
                code: "http_503".into(),
                message: String::new(),
            },
            LikeError::RateLimited {
                retry_after_ms: Some(1000),
            },
            LikeError::InvalidResponse {
                message: "eof".into(),
            },
        ];
        for e in &transient {
            assert!(e.is_transient(), "{e:?}");
        }
        let permanent = [
            LikeError::Unauthorized {
                message: String::new(),
            },
            LikeError::Forbidden {
                message: String::new(),
            },
            LikeError::NotFound {
                message: String::new(),
            },
            LikeError::Rejected {
                status: 400,
                code: "bad_post_id".into(),
                message: String::new(),
            },
            LikeError::Config {
                message: String::new(),
            },
            LikeError::Shutdown,
            LikeError::Journal {
                fault: JournalFault::Unreadable,
                message: String::new(),
            },
            LikeError::Expired,
        ];
        for e in &permanent {
            assert!(!e.is_transient(), "{e:?}");
            assert!(!e.may_have_applied(), "{e:?}");
        }
        assert_eq!(
            LikeError::RateLimited {
                retry_after_ms: Some(1500)
            }
            .retry_after(),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(LikeError::Timeout.retry_after(), None);
    }
}
