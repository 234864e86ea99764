//! [`LikeError`]: the core's error, one variant for one variant.

/// Why a like, an unlike or a read did not go through.
///
/// One variant per variant of [`likekit_core::LikeError`], each carrying the
/// core's English message (Kotlin's `LikeException.NotFound.message`,
/// Swift's `LikeError.NotFound(message:)`, Python's `str(error)`).
/// `Network`, `Timeout`, `Server`, `RateLimited` and `InvalidResponse` are
/// transient (the client retries them); the others are not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, uniffi::Error)]
#[uniffi(flat_error)]
pub enum LikeError {
    /// The server could not be reached, or the connection broke.
    #[error("{message}")]
    Network { message: String },
    /// No answer within the request timeout.
    #[error("{message}")]
    Timeout { message: String },
    /// The server failed (5xx).
    #[error("{message}")]
    Server { message: String },
    /// Too many requests (429).
    #[error("{message}")]
    RateLimited { message: String },
    /// The answer could not be read.
    #[error("{message}")]
    InvalidResponse { message: String },
    /// The sign-in token was refused, even after a fresh one (401).
    #[error("{message}")]
    Unauthorized { message: String },
    /// The user may not do this (403).
    #[error("{message}")]
    Forbidden { message: String },
    /// The post does not exist (404).
    #[error("{message}")]
    NotFound { message: String },
    /// The server refused the request as malformed (400 and other 4xx).
    #[error("{message}")]
    Rejected { message: String },
    /// A post id outside 1 to 2⁶³−1 (zero or negative) was passed: the
    /// core's code `bad_post_id`. The message names the rule and the id
    /// given. Nothing was tapped, read or sent.
    #[error("{message}")]
    InvalidId { message: String },
    /// The client was configured wrongly (a bad base URL, say).
    #[error("{message}")]
    Config { message: String },
    /// The client was shut down before the call could finish.
    #[error("{message}")]
    Shutdown { message: String },
}

impl From<likekit_core::LikeError> for LikeError {
    fn from(error: likekit_core::LikeError) -> Self {
        use likekit_core::LikeError as Core;
        let message = error.to_string();
        match error {
            Core::Network { .. } => Self::Network { message },
            Core::Timeout => Self::Timeout { message },
            Core::Server { .. } => Self::Server { message },
            Core::RateLimited { .. } => Self::RateLimited { message },
            Core::InvalidResponse { .. } => Self::InvalidResponse { message },
            Core::Unauthorized { .. } => Self::Unauthorized { message },
            Core::Forbidden { .. } => Self::Forbidden { message },
            Core::NotFound { .. } => Self::NotFound { message },
            Core::Rejected { .. } => Self::Rejected { message },
            Core::InvalidId { .. } => Self::InvalidId { message },
            Core::Config { .. } => Self::Config { message },
            Core::Shutdown => Self::Shutdown { message },
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use likekit_core::LikeError as Core;

    #[test]
    fn keeps_the_variant_and_the_message() {
        let e = LikeError::from(Core::NotFound {
            message: "no post 42".into(),
        });
        assert_eq!(
            e,
            LikeError::NotFound {
                message: "post not found: no post 42".into()
            }
        );
        assert_eq!(e.to_string(), "post not found: no post 42");
        assert!(matches!(
            LikeError::from(Core::Timeout),
            LikeError::Timeout { message } if message == "the request timed out"
        ));
        assert!(matches!(
            LikeError::from(Core::Shutdown),
            LikeError::Shutdown { .. }
        ));
    }

    #[test]
    fn an_invalid_id_keeps_the_id_rule_message() {
        let id_error = likekit_core::PostId::try_from(-1_i64).unwrap_err();
        let core = Core::from(id_error.clone());
        assert_eq!(core.code(), "bad_post_id");
        assert_eq!(
            LikeError::from(core),
            LikeError::InvalidId {
                message: id_error.to_string()
            }
        );
    }
}
