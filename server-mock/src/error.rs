//! Errors: the public [`Error`] of starting and running a server, and the
//! JSON error answers of the HTTP API.

use std::{borrow::Cow, io, net::SocketAddr};

use axum::{
    Json,
    extract::rejection::{JsonRejection, QueryRejection},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use likekit_proto::{ErrorBody, IdError, PostId, UserId, code};
use tracing::Level;

use crate::log_limit::limited;
use crate::store::{StoreError, rules::RuleViolation};

/// Why a server could not start, or failed while running.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A listen address could not be bound.
    #[error("cannot listen on {addr} ({listener}): {source}")]
    Bind {
        /// Which listener: `the public listener` or `the operations
        /// listener`.
        listener: &'static str,
        /// The address asked for.
        addr: SocketAddr,
        /// Why it failed.
        source: io::Error,
    },
    /// The store could not be opened, seeded, or closed.
    #[error("storage error: {0}")]
    Store(#[from] StoreError),
    /// A setting is unusable (for example a CORS origin that is not a valid
    /// header value, or a fault rule out of range).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The server task ended abnormally.
    #[error("server task failed: {0}")]
    Task(String),
}

/// An error answer of the HTTP API: a status and
/// `{"error": {"code": "…", "message": "…"}}`, with `WWW-Authenticate` on a
/// 401 and `Retry-After` on a 429 and on a store's 503 `unavailable`. Every
/// error the server answers is one; handlers added with
/// [`App::wrap`](crate::App::wrap) may return them too.
///
/// ```
/// use axum::{http::StatusCode, response::IntoResponse};
/// use likekit_server::ApiError;
///
/// let answer = ApiError::new(StatusCode::CONFLICT, "already_there", "it exists").into_response();
/// assert_eq!(answer.status(), StatusCode::CONFLICT);
/// let bad: ApiError = "0".parse::<likekit_server::wire::PostId>().unwrap_err().into();
/// assert_eq!((bad.status(), bad.code()), (StatusCode::BAD_REQUEST, "bad_post_id"));
/// ```
#[derive(Debug, Clone)]
pub struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) code: Cow<'static, str>,
    pub(crate) message: String,
    pub(crate) www_authenticate: Option<HeaderValue>,
    pub(crate) retry_after_secs: Option<u64>,
}

impl ApiError {
    /// An answer with `status`, a stable `snake_case` `code` and a message
    /// for people. The server's own codes are the constants of
    /// [`wire::code`](crate::wire::code); a handler of your own may add its
    /// own.
    pub fn new(
        status: StatusCode,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            status,
            code: code.into(),
            message: message.into(),
            www_authenticate: None,
            retry_after_secs: None,
        }
    }

    pub(crate) fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// The status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The error code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The message for people.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// 404 `post_not_found`.
    pub fn post_not_found(post: PostId) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            code::POST_NOT_FOUND,
            format!("there is no post {post}"),
        )
    }

    pub(crate) fn unauthorized(code: &'static str, message: impl Into<String>) -> Self {
        let message = message.into();
        // RFC 6750: no error attribute when no credentials were sent at all.
        let challenge = if code == code::MISSING_TOKEN {
            HeaderValue::from_static("Bearer realm=\"likekit\"")
        } else {
            let description = message.replace(['"', '\\'], "'");
            HeaderValue::from_str(&format!(
                "Bearer realm=\"likekit\", error=\"invalid_token\", error_description=\"{description}\""
            ))
            .unwrap_or_else(|_| {
                HeaderValue::from_static("Bearer realm=\"likekit\", error=\"invalid_token\"")
            })
        };
        Self {
            www_authenticate: Some(challenge),
            ..Self::new(StatusCode::UNAUTHORIZED, code, message)
        }
    }

    pub(crate) fn rate_limited(retry_after_secs: u64) -> Self {
        Self {
            retry_after_secs: Some(retry_after_secs.max(1)),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                code::RATE_LIMITED,
                "too many likes and unlikes; slow down",
            )
        }
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, code::INTERNAL, message)
    }

    /// The generic answer for a status that was produced without a more
    /// specific error (used to turn plain-text answers into JSON ones).
    pub(crate) fn for_status(status: StatusCode) -> Self {
        let (code, message): (Cow<'static, str>, &str) = match status {
            StatusCode::BAD_REQUEST => (code::BAD_REQUEST.into(), "the request is malformed"),
            StatusCode::UNAUTHORIZED => (code::UNAUTHORIZED.into(), "sign in first"),
            StatusCode::FORBIDDEN => (code::FORBIDDEN.into(), "not allowed"),
            StatusCode::NOT_FOUND => (code::NOT_FOUND.into(), "no such route"),
            StatusCode::METHOD_NOT_ALLOWED => (
                code::METHOD_NOT_ALLOWED.into(),
                "this route does not accept that method",
            ),
            StatusCode::REQUEST_TIMEOUT => {
                (code::REQUEST_TIMEOUT.into(), "the request took too long")
            }
            StatusCode::PAYLOAD_TOO_LARGE => (
                code::PAYLOAD_TOO_LARGE.into(),
                "the request body is too large",
            ),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => (
                code::UNSUPPORTED_MEDIA_TYPE.into(),
                "send JSON with Content-Type: application/json",
            ),
            StatusCode::TOO_MANY_REQUESTS => (code::RATE_LIMITED.into(), "too many requests"),
            StatusCode::INTERNAL_SERVER_ERROR => (code::INTERNAL.into(), "internal server error"),
            StatusCode::SERVICE_UNAVAILABLE => (code::UNAVAILABLE.into(), "try again later"),
            other => (
                code::http(other.as_u16()).into(),
                other.canonical_reason().unwrap_or("error"),
            ),
        };
        Self::new(status, code, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            Json(ErrorBody::new(self.code.into_owned(), self.message)),
        )
            .into_response();
        let headers = response.headers_mut();
        if let Some(challenge) = self.www_authenticate {
            headers.insert(header::WWW_AUTHENTICATE, challenge);
        }
        if let Some(secs) = self.retry_after_secs {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// 400 `bad_post_id` or `bad_user_id`.
impl From<IdError> for ApiError {
    fn from(err: IdError) -> Self {
        Self::bad_request(err.code(), err.to_string())
    }
}

/// 400 with the rule's own code (`bad_name`, `too_many_friends`).
impl From<RuleViolation> for ApiError {
    fn from(violation: RuleViolation) -> Self {
        Self::bad_request(violation.code, violation.message)
    }
}

/// How long a client is asked to wait before trying again after 503
/// `unavailable` from the store (`Retry-After`, in seconds): the
/// timeouts behind it are a few seconds, and a client's own backoff
/// stretches the wait further.
pub(crate) const STORE_RETRY_AFTER_SECS: u64 = 1;

/// 404 `post_not_found` / `user_not_found`, 400 `bad_request`, 503
/// `shutting_down`, 503 `unavailable` with `Retry-After` (logged as a
/// warning), 500 `storage_error` (logged; the message hides the details).
/// Both lines carry the store's `reason`, and each is written at most once
/// a second, with `suppressed` when others were held back (`log_limit`):
/// a database that is down fails every request that reaches it.
impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::PostNotFound(post) => Self::post_not_found(post),
            StoreError::UserNotFound(user) => Self::new(
                StatusCode::NOT_FOUND,
                code::USER_NOT_FOUND,
                format!("there is no user {user}"),
            ),
            StoreError::Invalid(message) => Self::bad_request(code::BAD_REQUEST, message),
            StoreError::Closed => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                code::SHUTTING_DOWN,
                "the server is shutting down",
            ),
            StoreError::Unavailable(reason) => {
                limited!(
                    Level::WARN,
                    %reason,
                    "the database cannot take the request now"
                );
                Self {
                    retry_after_secs: Some(STORE_RETRY_AFTER_SECS),
                    ..Self::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        code::UNAVAILABLE,
                        "the database cannot take the request now; try again shortly",
                    )
                }
            }
            StoreError::Backend(reason) => {
                limited!(Level::ERROR, %reason, "storage failure");
                Self::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    code::STORAGE_ERROR,
                    "the database failed; try again",
                )
            }
        }
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        match rejection.status() {
            StatusCode::UNSUPPORTED_MEDIA_TYPE => Self::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                code::UNSUPPORTED_MEDIA_TYPE,
                "send JSON with Content-Type: application/json",
            ),
            StatusCode::PAYLOAD_TOO_LARGE => Self::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                code::PAYLOAD_TOO_LARGE,
                "the request body is too large",
            ),
            _ => {
                let text = own_words(&rejection.body_text());
                match refused_id_code(&text) {
                    Some(code) => Self::bad_request(code, text),
                    None => Self::bad_request(code::BAD_JSON, text),
                }
            }
        }
    }
}

/// A JSON rejection's text in the server's words: axum's "Failed to
/// deserialize the JSON body into the target type: " left out (the rest
/// says where and what), and its "Failed to parse the request body as
/// JSON" said as "the body is not valid JSON".
fn own_words(text: &str) -> String {
    if let Some(rest) =
        text.strip_prefix("Failed to deserialize the JSON body into the target type: ")
    {
        rest.to_owned()
    } else if let Some(rest) = text.strip_prefix("Failed to parse the request body as JSON: ") {
        format!("the body is not valid JSON: {rest}")
    } else {
        text.to_owned()
    }
}

/// `err` and its causes, one after the other, each said once: a library's
/// own message alone ("error sending request", "error performing TLS
/// handshake") rarely says what to fix.
pub(crate) fn with_causes(err: &dyn std::error::Error) -> String {
    let mut message = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

/// The code of an id refused inside a JSON body (`{"id": 0}`), if that is
/// what `text` reports. Deserializing keeps only an [`IdError`]'s message,
/// so it is recognised by that message's fixed part, taken from the id types
/// themselves. A number that is not even an unsigned integer (`-1`) stays
/// `bad_json`.
fn refused_id_code(text: &str) -> Option<&'static str> {
    let refusals = [PostId::new(0).err(), UserId::new(0).err()];
    refusals.into_iter().flatten().find_map(|err| {
        let message = err.to_string();
        let fixed = message.split("; got").next().unwrap_or(&message);
        text.contains(fixed).then(|| err.code())
    })
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        // The field and serde's reason, without axum's preamble, as the
        // body errors read.
        let text = rejection.body_text();
        let text = text
            .strip_prefix("Failed to deserialize query string: ")
            .unwrap_or(&text);
        Self::bad_request(
            code::BAD_QUERY,
            query_id_reason(text).unwrap_or(text.to_owned()),
        )
    }
}

/// An id in a query (`user=`, `post=`) is parsed by the query reader, whose
/// words are those of Rust's integer parser (`user: invalid digit found in
/// string`): said instead as the ids' range, as a body's id error says it.
fn query_id_reason(text: &str) -> Option<String> {
    let (field, reason) = text.split_once(": ")?;
    let why = match reason {
        "invalid digit found in string" => "is not one",
        "cannot parse integer from empty string" => "is empty",
        "number too large to fit in target type" => "is too large",
        _ => return None,
    };
    Some(format!(
        "{field}: ids are whole numbers from 1 to {}; the value given {why}",
        likekit_proto::MAX_ID
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// An id in a query that is not one says so in the ids' own terms, not
    /// the integer parser's.
    #[test]
    fn a_bad_id_in_a_query_names_the_ids_range() {
        for (query, why) in [
            ("user=abc", "is not one"),
            ("user=", "is empty"),
            ("post=-1", "is not one"),
            ("post=99999999999999999999", "is too large"),
        ] {
            let uri: axum::http::Uri = format!("/?{query}").parse().unwrap();
            let rejection =
                axum::extract::Query::<likekit_proto::admin::RequestFilter>::try_from_uri(&uri)
                    .unwrap_err();
            let answer = ApiError::from(rejection);
            assert_eq!(answer.code(), code::BAD_QUERY);
            let field = query.split('=').next().unwrap();
            assert_eq!(
                answer.message(),
                format!(
                    "{field}: ids are whole numbers from 1 to 9223372036854775807; the value given {why}"
                ),
                "{query}"
            );
        }
    }

    /// A failure of the store that passes is 503 `unavailable` with
    /// `Retry-After`, and says nothing of the database; any other is 500
    /// `storage_error`.
    #[test]
    fn a_store_failure_that_passes_asks_to_try_again() {
        let answer = ApiError::from(StoreError::Unavailable(
            "a lock was not granted within lock_timeout: db.internal".into(),
        ));
        assert_eq!(answer.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(answer.code(), code::UNAVAILABLE);
        assert!(!answer.message().contains("db.internal"));
        let response = answer.into_response();
        assert_eq!(response.headers()[header::RETRY_AFTER], "1");

        let failed = ApiError::from(StoreError::Backend("syntax error".into()));
        assert_eq!(failed.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(failed.code(), code::STORAGE_ERROR);
        assert!(
            failed
                .into_response()
                .headers()
                .get(header::RETRY_AFTER)
                .is_none()
        );
    }
}
