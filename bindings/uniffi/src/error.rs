//! [`LikeError`]: the core's error, one variant for one variant, each
//! carrying what the core says about it.
//!
//! Every field comes from the core's one classification
//! ([`likekit_core::LikeError`]'s `Display`, `code()`, `is_transient()`,
//! `retry_after()` and `status()`); this file restates none of it.
//!
//! ```
//! use likekit_ffi::LikeError;
//! let e = LikeError::from(likekit_core::LikeError::RateLimited { retry_after_ms: Some(2000) });
//! assert!(matches!(
//!     e,
//!     LikeError::RateLimited { is_transient: true, status: Some(429), retry_after_ms: Some(2000), .. }
//! ));
//! assert_eq!(e.to_string(), "rate limited by the server");
//! ```

/// Declares [`LikeError`] with the same five fields on every variant, and
/// its conversion from the core's error, variant for variant.
macro_rules! like_error {
    ($($(#[doc = $doc:literal])* $variant:ident,)*) => {
        /// Why a like, an unlike or a read did not go through.
        ///
        /// One variant for each variant of the core's error, under the same
        /// name, to match on. Every variant carries the same five fields,
        /// taken from the core's error: `reason`, `code`, `is_transient`,
        /// `status` and `retry_after_ms`. Kotlin and Swift also have them
        /// as properties of the error itself, whatever its variant
        /// (`LikeException.code`, `LikeError.code`); in Python they are
        /// attributes of every `LikeError`.
        ///
        /// Two errors are equal when their variant and fields are: Kotlin's
        /// `equals` and `hashCode` and Swift's `==` and `hash(into:)` are
        /// this type's `Eq` and `Hash`, and Python's `==` and `hash()`
        /// compare the same. So a view or a failure holding an error is
        /// `==` to one holding an equal error, and a Kotlin `StateFlow` or
        /// `distinctUntilChanged` takes it for the same value.
        #[uniffi::export(Eq, Hash)]
        #[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error, uniffi::Error)]
        pub enum LikeError {
            $(
                $(#[doc = $doc])*
                #[error("{reason}")]
                $variant {
                    /// The core's English message, for logs.
                    reason: String,
                    /// The core's stable code: `post_not_found`,
                    /// `rate_limited`, `bad_post_id`, …, or the server's own
                    /// code for a `Server` or `Rejected` answer (`http_503`
                    /// when its body had none).
                    code: String,
                    /// Whether the same call may succeed if sent again (the
                    /// client retried it already): the core's classification.
                    is_transient: bool,
                    /// The HTTP status the error stands for (the core's
                    /// `status()`): a `Server` or `Rejected` answer's own,
                    /// 401, 403, 404 or 429 for `Unauthorized`,
                    /// `Forbidden`, `NotFound` and `RateLimited`; null when
                    /// no answer was classified or nothing was sent.
                    status: Option<i32>,
                    /// A `RateLimited` answer's `Retry-After`, in
                    /// milliseconds; null when there was none.
                    retry_after_ms: Option<i64>,
                },
            )*
        }

        impl From<likekit_core::LikeError> for LikeError {
            fn from(error: likekit_core::LikeError) -> Self {
                use likekit_core::LikeError as Core;
                let reason = error.to_string();
                let code = error.code().to_owned();
                let is_transient = error.is_transient();
                let status = error.status().map(i32::from);
                let retry_after_ms = error
                    .retry_after()
                    .map(|wait| i64::try_from(wait.as_millis()).unwrap_or(i64::MAX));
                match error {
                    $(
                        Core::$variant { .. } => Self::$variant {
                            reason,
                            code,
                            is_transient,
                            status,
                            retry_after_ms,
                        },
                    )*
                }
            }
        }

        #[cfg(test)]
        impl LikeError {
            /// The variant's name, as the bindings spell it.
            fn variant(&self) -> &'static str {
                match self {
                    $(Self::$variant { .. } => stringify!($variant),)*
                }
            }

            /// `(reason, code, is_transient, status, retry_after_ms)`.
            fn fields(&self) -> (&str, &str, bool, Option<i32>, Option<i64>) {
                match self {
                    $(
                        Self::$variant {
                            reason,
                            code,
                            is_transient,
                            status,
                            retry_after_ms,
                        } => (reason, code, *is_transient, *status, *retry_after_ms),
                    )*
                }
            }
        }
    };
}

like_error! {
    /// The server could not be reached, or the connection broke.
    Network,
    /// No answer within the request timeout.
    Timeout,
    /// The server failed (5xx), or answered 408 Request Timeout or 425
    /// Too Early: transient answers after which the request may have been
    /// processed even so. Retried.
    Server,
    /// Too many requests (429). Retried, no sooner than `retry_after_ms`;
    /// a `Retry-After` longer than the retry policy's ceiling (one minute,
    /// or the retry max delay when that is longer) ends the retries at once.
    RateLimited,
    /// The answer could not be read.
    InvalidResponse,
    /// The sign-in token was refused, even after a fresh one (401).
    Unauthorized,
    /// The user may not do this (403).
    Forbidden,
    /// The post does not exist (404, with the server's `post_not_found`).
    NotFound,
    /// The server refused the request (400 and other 4xx but 401, 403,
    /// 408, 425 and 429; also a 404 that is not the server's
    /// `post_not_found`, such as a route it does not have), or redirected
    /// it (3xx: redirects are not followed).
    Rejected,
    /// A post id outside 1 to 2⁶³−1 (zero or negative) was passed: the
    /// core's code `bad_post_id`. The reason names the rule and the id
    /// given. Nothing was tapped, read or sent.
    InvalidId,
    /// The client was configured wrongly (a bad base URL, say).
    Config,
    /// The client was shut down before the call could finish.
    Shutdown,
    /// The intent journal could not be used, `code` says how:
    /// `journal_in_use` (another client holds this viewer's journal: close
    /// it first), `journal_damaged` (its content cannot be used: what it
    /// held is lost, the next save replaces it), `journal_unreadable` (it
    /// could not be read now: left as it is for a later start) or
    /// `journal_unwritable` (its folder could not be made, or a save
    /// failed). In `RestoreReport.problem` and
    /// `LikeClient.journalProblem()`, or thrown by `IntentJournal.file`
    /// and the client's constructor.
    Journal,
    /// The tap was older than the client's `max_intent_age` when it could
    /// be sent, so it was dropped.
    Expired,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use likekit_core::LikeError as Core;

    /// A case: the core's error, the variant the bindings show for it, and
    /// its `(reason, code, is_transient, status, retry_after_ms)`.
    struct Case {
        core: Core,
        variant: &'static str,
        fields: (String, &'static str, bool, Option<i32>, Option<i64>),
    }

    fn case(
        core: Core,
        variant: &'static str,
        (reason, code, is_transient, status, retry_after_ms): (
            &str,
            &'static str,
            bool,
            Option<i32>,
            Option<i64>,
        ),
    ) -> Case {
        Case {
            core,
            variant,
            fields: (
                reason.to_owned(),
                code,
                is_transient,
                status,
                retry_after_ms,
            ),
        }
    }

    /// Every variant of the core, with what the bindings show for it.
    fn every_core_variant() -> Vec<Case> {
        let id_error = likekit_core::PostId::try_from(-1_i64).unwrap_err();
        let bad_id = id_error.to_string();
        vec![
            case(
                Core::Network {
                    message: "connection refused".into(),
                },
                "Network",
                (
                    "network error: connection refused",
                    "network",
                    true,
                    None,
                    None,
                ),
            ),
            case(
                Core::Timeout,
                "Timeout",
                ("the request timed out", "timeout", true, None, None),
            ),
            case(
                Core::Server {
                    status: 503,
                    code: "http_503".into(),
                    message: "Service Unavailable".into(),
                },
                "Server",
                (
                    "server error 503: Service Unavailable",
                    "http_503",
                    true,
                    Some(503),
                    None,
                ),
            ),
            case(
                Core::RateLimited {
                    retry_after_ms: Some(1500),
                },
                "RateLimited",
                (
                    "rate limited by the server",
                    "rate_limited",
                    true,
                    Some(429),
                    Some(1500),
                ),
            ),
            case(
                Core::InvalidResponse {
                    message: "eof".into(),
                },
                "InvalidResponse",
                (
                    "unreadable answer from the server: eof",
                    "invalid_response",
                    true,
                    None,
                    None,
                ),
            ),
            case(
                Core::Unauthorized {
                    message: "expired token".into(),
                },
                "Unauthorized",
                (
                    "not signed in: expired token",
                    "unauthorized",
                    false,
                    Some(401),
                    None,
                ),
            ),
            case(
                Core::Forbidden {
                    message: "not yours".into(),
                },
                "Forbidden",
                (
                    "not allowed: not yours",
                    "forbidden",
                    false,
                    Some(403),
                    None,
                ),
            ),
            case(
                Core::NotFound {
                    message: "no post 42".into(),
                },
                "NotFound",
                (
                    "post not found: no post 42",
                    "post_not_found",
                    false,
                    Some(404),
                    None,
                ),
            ),
            case(
                Core::Rejected {
                    status: 400,
                    code: "bad_query".into(),
                    message: "posts= is empty".into(),
                },
                "Rejected",
                (
                    "request refused (400 bad_query): posts= is empty",
                    "bad_query",
                    false,
                    Some(400),
                    None,
                ),
            ),
            case(
                Core::from(id_error),
                "InvalidId",
                (&bad_id, "bad_post_id", false, None, None),
            ),
            case(
                Core::Config {
                    message: "bad base URL".into(),
                },
                "Config",
                (
                    "invalid configuration: bad base URL",
                    "config",
                    false,
                    None,
                    None,
                ),
            ),
            case(
                Core::Shutdown,
                "Shutdown",
                ("the client was shut down", "shutdown", false, None, None),
            ),
            case(
                Core::Journal {
                    fault: likekit_core::JournalFault::Unreadable,
                    message: "the journal is not readable".into(),
                },
                "Journal",
                (
                    "intent journal: the journal is not readable",
                    "journal_unreadable",
                    false,
                    None,
                    None,
                ),
            ),
            case(
                Core::Expired,
                "Expired",
                ("the tap is too old to send", "expired", false, None, None),
            ),
        ]
    }

    #[test]
    fn every_core_variant_maps_to_its_namesake_and_fields() {
        let cases = every_core_variant();
        // The conversion's match names every core variant (a new one fails
        // to compile there); this keeps the table from missing one.
        assert_eq!(cases.len(), 14);
        for Case {
            core,
            variant,
            fields: (reason, code, is_transient, status, retry_after_ms),
        } in cases
        {
            let e = LikeError::from(core.clone());
            assert_eq!(
                (e.variant(), e.fields()),
                (
                    variant,
                    (reason.as_str(), code, is_transient, status, retry_after_ms)
                ),
                "{core:?}"
            );
        }
    }

    #[test]
    fn the_fields_are_the_cores_own_answers() {
        for Case { core, .. } in every_core_variant() {
            let e = LikeError::from(core.clone());
            let (reason, code, is_transient, status, retry_after_ms) = e.fields();
            assert_eq!(reason, core.to_string(), "{core:?}");
            assert_eq!(code, core.code(), "{core:?}");
            assert_eq!(is_transient, core.is_transient(), "{core:?}");
            let waited = core
                .retry_after()
                .map(|d| i64::try_from(d.as_millis()).unwrap());
            assert_eq!(retry_after_ms, waited, "{core:?}");
            assert_eq!(status, core.status().map(i32::from), "{core:?}");
        }
    }

    #[test]
    fn the_display_is_the_reason() {
        let e = LikeError::from(Core::NotFound {
            message: "no post 42".into(),
        });
        assert_eq!(e.to_string(), "post not found: no post 42");
        assert_eq!(e.to_string(), e.fields().0);
    }

    #[test]
    fn a_code_from_the_answer_is_kept() {
        let e = LikeError::from(Core::Server {
            status: 500,
            code: "storage_error".into(),
            message: "the store failed".into(),
        });
        assert_eq!(
            (e.variant(), e.fields().1, e.fields().3),
            ("Server", "storage_error", Some(500))
        );
    }

    #[test]
    fn a_429_without_retry_after_has_none() {
        let e = LikeError::from(Core::RateLimited {
            retry_after_ms: None,
        });
        assert_eq!(
            e.fields(),
            (
                "rate limited by the server",
                "rate_limited",
                true,
                Some(429),
                None
            )
        );
    }

    #[test]
    fn a_retry_after_past_i64_saturates() {
        let e = LikeError::from(Core::RateLimited {
            retry_after_ms: Some(u64::MAX),
        });
        assert_eq!(e.fields().4, Some(i64::MAX));
    }
}
