//! The error codes of [`ErrorBody`](crate::ErrorBody): every code the
//! reference server answers, one constant each, with its status and when.
//! The server builds its error answers from these constants and from
//! nothing else; [`ALL`] lists them with their statuses, and the server
//! README's table of errors names exactly these (a test of the server
//! checks both ways).
//!
//! One family is a pattern rather than a constant: `http_<status>`
//! ([`http`], [`http_status`]), the code the server gives an error answer
//! that reached its middleware without a JSON body and has no code of its
//! own: the static files' 412 and 416 (`--web-root`), and any other status
//! a route of your own under the server's middleware (`App::wrap` of
//! `likekit-server`) answers in plain text.
//!
//! ```
//! use likekit_proto::code;
//!
//! let missing = likekit_proto::ErrorBody::new(code::POST_NOT_FOUND, "there is no post 42");
//! assert_eq!(missing.error.code, "post_not_found");
//! assert!(code::ALL.iter().any(|(c, statuses)| *c == code::POST_NOT_FOUND && statuses.contains(&404)));
//! assert_eq!(code::http(416), "http_416");
//! ```
//!
//! # The server's codes and the client's
//!
//! The client's errors (`LikeError::code()` in `likekit-core`, `code` in
//! the bindings) are a set of their own, and none of them is defined here.
//! A `Server` or `Rejected` error carries the server's code as it was
//! answered (`http_<status>`, the same pattern, when the answer had no JSON
//! error body), and an `InvalidId` the [`IdError::code`](crate::IdError::code)
//! the server would have answered. Every other error carries a code the
//! client makes itself, whatever the server said; some are spelled like
//! codes of this module and mean something wider:
//!
//! - `unauthorized`: every 401 (the server's `missing_token`,
//!   `invalid_token`, `token_expired`, …);
//! - `forbidden`: every 403;
//! - `post_not_found`: a 404 whose error body says `post_not_found` (any
//!   other 404, such as the server's `not_found` for a route it does not
//!   have, is a `Rejected` error carrying the code answered);
//! - `rate_limited`: every 429 (also a fault rule's `injected_fault`);
//! - `timeout`: no answer within the client's own timeout (the server's
//!   503 [`TIMEOUT`] reaches the client as a `Server` error with that code).
//!
//! The rest (`network`, `invalid_response`, `config`, `shutdown`,
//! `expired`, `journal_…`) the server never answers.

use std::ops::RangeInclusive;

/// 400: a post id that is not a whole number from 1 to `i64::MAX`.
pub const BAD_POST_ID: &str = "bad_post_id";
/// 400: a user id that is not a whole number from 1 to `i64::MAX` (admin
/// routes).
pub const BAD_USER_ID: &str = "bad_user_id";
/// 400: `/likes` without `posts=`, or with an empty or malformed list.
pub const BAD_POSTS: &str = "bad_posts";
/// 400: more than [`MAX_BATCH_POSTS`](crate::MAX_BATCH_POSTS) post ids in
/// one read (a repeated id counts too).
pub const TOO_MANY_POSTS: &str = "too_many_posts";
/// 400, on the admin API: a query string that cannot be decoded, an
/// unknown filter or a bad tag on `requests` and `faults`, or any query on
/// a route that takes none (`POST /admin/reset?post=42`).
pub const BAD_QUERY: &str = "bad_query";
/// 400: a chunked request body that cannot be read; from code of your
/// own, a store that refuses a value or a plain-text 400.
pub const BAD_REQUEST: &str = "bad_request";
/// 400: an admin body that is not valid JSON of the right shape, or that
/// breaks off before the length it declared.
pub const BAD_JSON: &str = "bad_json";
/// 400: a display name that is blank, longer than 200 characters, or has
/// a control character.
pub const BAD_NAME: &str = "bad_name";
/// 400: more than 5000 friends.
pub const TOO_MANY_FRIENDS: &str = "too_many_friends";
/// 400: a token lifetime outside 1 s..1 year (`POST /admin/tokens`).
pub const BAD_TTL: &str = "bad_ttl";
/// 400: a token start outside a year either way of now
/// (`POST /admin/tokens`' `valid_from_secs`).
pub const BAD_VALID_FROM: &str = "bad_valid_from";
/// 400: fault rules out of range, or with a part that could never act.
pub const BAD_FAULT_RULES: &str = "bad_fault_rules";
/// 401: no `Authorization` header.
pub const MISSING_TOKEN: &str = "missing_token";
/// 401: a token that is malformed, wrongly signed, of the wrong algorithm,
/// without `exp` or `sub`, or with a bad `sub`.
pub const INVALID_TOKEN: &str = "invalid_token";
/// 401: a token whose `exp` has passed.
pub const TOKEN_EXPIRED: &str = "token_expired";
/// 401: an admin route without the right `X-Admin-Key`.
pub const BAD_ADMIN_KEY: &str = "bad_admin_key";
/// 401: only a plain-text 401 from a route of your own (`App::wrap`); the
/// server's own 401s have the four codes above.
pub const UNAUTHORIZED: &str = "unauthorized";
/// 403: only a plain-text 403 from a route of your own (`App::wrap`); the
/// server's own routes never answer 403.
pub const FORBIDDEN: &str = "forbidden";
/// 404: the post does not exist (likes, unlikes and views).
pub const POST_NOT_FOUND: &str = "post_not_found";
/// 404: admin: the user or a friend does not exist.
pub const USER_NOT_FOUND: &str = "user_not_found";
/// 404: no such route (also every `/admin` route on a server without an
/// admin key).
pub const NOT_FOUND: &str = "not_found";
/// 405: the route exists, the method does not (with `Allow`).
pub const METHOD_NOT_ALLOWED: &str = "method_not_allowed";
/// 408: only a plain-text 408 from a route of your own (`App::wrap`); the
/// server's own request timeout is the 503 [`TIMEOUT`].
pub const REQUEST_TIMEOUT: &str = "request_timeout";
/// 409: `POST /admin/tokens` on a server that takes tokens from an
/// identity provider (`--jwks`) without `--token-secret`.
pub const OWN_TOKENS_OFF: &str = "own_tokens_off";
/// 409: `POST /admin/faults` whose rules and those in force would be more
/// than 256; nothing is added.
pub const TOO_MANY_RULES: &str = "too_many_rules";
/// 409: `GET` or `DELETE /admin/requests` on a server whose request
/// journal is off (`--journal-size 0`): an empty list would read as "no
/// request was sent".
pub const JOURNAL_OFF: &str = "journal_off";
/// 413: a body over `--max-body-bytes`, on every route.
pub const PAYLOAD_TOO_LARGE: &str = "payload_too_large";
/// 415: an admin body without `Content-Type: application/json`.
pub const UNSUPPORTED_MEDIA_TYPE: &str = "unsupported_media_type";
/// 429: over the per-user write limit; the answer carries `Retry-After`.
pub const RATE_LIMITED: &str = "rate_limited";
/// 200–599: a fault rule answered (a `status` action without a `body`,
/// `error_rate`, `fail_next`), with the rule's status.
pub const INJECTED_FAULT: &str = "injected_fault";
/// 500: the database failed (retrying is safe).
pub const STORAGE_ERROR: &str = "storage_error";
/// 500: a bug (a handler panicked), or a static file that cannot be read.
pub const INTERNAL: &str = "internal";
/// 503: the request took longer than `--request-timeout-secs`.
pub const TIMEOUT: &str = "timeout";
/// 503: a fault rule's `drop`, `reset` or `hang` on a router served
/// without a connection to cut (neither `net::serve` nor `net::Listener`).
pub const CONNECTION_DROPPED: &str = "connection_dropped";
/// 503: a write reached a store that was closed.
pub const SHUTTING_DOWN: &str = "shutting_down";
/// 503 on `/readyz` only: the store failed or did not answer within 2 s,
/// or the server is stopping.
pub const NOT_READY: &str = "not_ready";
/// 503: the database cannot take the request now (a statement or lock
/// timeout, a read-only or full database, one restarting), with
/// `Retry-After`; also a plain-text 503 from a route of your own
/// (`App::wrap`).
pub const UNAVAILABLE: &str = "unavailable";

/// Every code the server answers, with the statuses it answers it with:
/// one status for each but [`INJECTED_FAULT`], whose status is the fault
/// rule's. `http_<status>` ([`http`]) is not listed.
///
/// ```
/// use likekit_proto::code;
///
/// let status = |wanted: &str| code::ALL.iter().find(|(c, _)| *c == wanted).map(|(_, s)| s.clone());
/// assert_eq!(status(code::TOKEN_EXPIRED), Some(401..=401));
/// assert_eq!(status(code::INJECTED_FAULT), Some(200..=599));
/// assert_eq!(status("network"), None, "a code of the client's own");
/// ```
pub const ALL: &[(&str, RangeInclusive<u16>)] = &[
    (BAD_POST_ID, 400..=400),
    (BAD_USER_ID, 400..=400),
    (BAD_POSTS, 400..=400),
    (TOO_MANY_POSTS, 400..=400),
    (BAD_QUERY, 400..=400),
    (BAD_REQUEST, 400..=400),
    (BAD_JSON, 400..=400),
    (BAD_NAME, 400..=400),
    (TOO_MANY_FRIENDS, 400..=400),
    (BAD_TTL, 400..=400),
    (BAD_VALID_FROM, 400..=400),
    (BAD_FAULT_RULES, 400..=400),
    (MISSING_TOKEN, 401..=401),
    (INVALID_TOKEN, 401..=401),
    (TOKEN_EXPIRED, 401..=401),
    (BAD_ADMIN_KEY, 401..=401),
    (UNAUTHORIZED, 401..=401),
    (FORBIDDEN, 403..=403),
    (POST_NOT_FOUND, 404..=404),
    (USER_NOT_FOUND, 404..=404),
    (NOT_FOUND, 404..=404),
    (METHOD_NOT_ALLOWED, 405..=405),
    (REQUEST_TIMEOUT, 408..=408),
    (OWN_TOKENS_OFF, 409..=409),
    (TOO_MANY_RULES, 409..=409),
    (JOURNAL_OFF, 409..=409),
    (PAYLOAD_TOO_LARGE, 413..=413),
    (UNSUPPORTED_MEDIA_TYPE, 415..=415),
    (RATE_LIMITED, 429..=429),
    (INJECTED_FAULT, 200..=599),
    (STORAGE_ERROR, 500..=500),
    (INTERNAL, 500..=500),
    (TIMEOUT, 503..=503),
    (CONNECTION_DROPPED, 503..=503),
    (SHUTTING_DOWN, 503..=503),
    (NOT_READY, 503..=503),
    (UNAVAILABLE, 503..=503),
];

/// How every `http_<status>` code begins.
pub const HTTP_PREFIX: &str = "http_";

/// `http_<status>`: the code of an error answer of `status` that has no
/// code of its own (see the [module](self) docs).
///
/// ```
/// assert_eq!(likekit_proto::code::http(412), "http_412");
/// ```
pub fn http(status: u16) -> String {
    // As a `u64`: the web package formats no `u16` (one formatter less).
    format!("{HTTP_PREFIX}{}", u64::from(status))
}

/// The status of an `http_<status>` code: three digits after
/// [`HTTP_PREFIX`], 100 to 599; `None` for any other code.
///
/// ```
/// use likekit_proto::code;
/// assert_eq!(code::http_status("http_416"), Some(416));
/// assert_eq!(code::http_status("http_4160"), None);
/// assert_eq!(code::http_status(code::NOT_FOUND), None);
/// ```
pub fn http_status(code: &str) -> Option<u16> {
    let digits = code.strip_prefix(HTTP_PREFIX)?;
    if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|s| (100..=599).contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_code_is_listed_once_in_snake_case_with_an_http_status() {
        for (i, (code, statuses)) in ALL.iter().enumerate() {
            assert!(
                ALL[..i].iter().all(|(seen, _)| seen != code),
                "{code} is listed twice"
            );
            assert!(
                !code.is_empty()
                    && code
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                    && !code.starts_with('_')
                    && !code.ends_with('_'),
                "{code} is not snake_case"
            );
            assert_eq!(http_status(code), None, "{code} is spelled as the pattern");
            assert!(
                !statuses.is_empty() && *statuses.start() >= 200 && *statuses.end() <= 599,
                "{code}: {statuses:?}"
            );
        }
    }

    #[test]
    fn the_http_pattern_reads_back_its_status_only() {
        for status in [100, 412, 416, 599] {
            assert_eq!(http_status(&http(status)), Some(status));
        }
        for code in [
            "http_", "http_99", "http_600", "http_4x2", "http_+12", "HTTP_412",
        ] {
            assert_eq!(http_status(code), None, "{code}");
        }
    }
}
