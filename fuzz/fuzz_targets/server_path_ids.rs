//! The server's path ids — `{post_id}` in `/posts/{post_id}/like`, `{id}`
//! in `/admin/users/{id}/friends` — against any text at all.
//!
//! The input is the path segment's text (its bytes, percent-encoded in the
//! request as a client sends them). For every input:
//!
//! * `PostId` and `UserId`'s `FromStr`, the server's only id parser, never
//!   panic and accept exactly the decimal digits of a number from 1 to
//!   `MAX_ID` (leading zeros allowed), as that number; a refusal is
//!   `bad_post_id` or `bad_user_id`, with a message of bounded length;
//! * an accepted id displays as its digits without leading zeros, which
//!   parse back to it;
//! * the server's `PathId` extractor, on the routes as the server mounts
//!   them, answers what `FromStr` answers for the decoded text (text that
//!   is not UTF-8 as the empty text): the id, or a 400 whose JSON body
//!   has the refusal's code and message. So does the segment sent
//!   unencoded, when it is a valid one.

#![no_main]

use std::str::FromStr;
use std::sync::LazyLock;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{Request, StatusCode};
use axum::routing::{post, put};
use libfuzzer_sys::fuzz_target;
use likekit_server::wire::{ErrorBody, IdError, MAX_ID, PostId, UserId};
use likekit_server::{ApiError, PathId};
use tower::ServiceExt;

/// The two routes that read an id from the path, answering it as text.
static ROUTES: LazyLock<Router> = LazyLock::new(|| {
    async fn post_id(PathId(id): PathId<PostId>) -> String {
        id.to_string()
    }
    async fn user_id(PathId(id): PathId<UserId>) -> String {
        id.to_string()
    }
    Router::new()
        .route("/posts/{post_id}/like", post(post_id))
        .route("/admin/users/{id}/friends", put(user_id))
});

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime")
});

/// The id `text` names by the rule, worked out apart from the parser: 1 to
/// 19 significant digits (`MAX_ID` has 19) whose value is 1 to `MAX_ID`.
fn named(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = text.trim_start_matches('0');
    if digits.len() > 19 {
        return None;
    }
    let value = digits
        .bytes()
        .fold(0_u128, |n, b| n * 10 + u128::from(b - b'0'));
    u64::try_from(value)
        .ok()
        .filter(|value| (1..=MAX_ID).contains(value))
}

/// The longest refusal message: the fixed words, then at most 40 bytes
/// of the input and an ellipsis.
fn longest_message() -> usize {
    let refusal = PostId::new(0).expect_err("0 is no id").to_string();
    refusal.len() - "0".len() + 40 + '…'.len_utf8()
}

/// `FromStr` of one id type on `text`, checked against the rule.
fn parses<T>(text: &str, code: &str, get: fn(&T) -> u64)
where
    T: FromStr<Err = IdError> + std::fmt::Display + PartialEq + std::fmt::Debug,
{
    let parsed = text.parse::<T>();
    assert_eq!(parsed.as_ref().ok().map(get), named(text), "{text:?}");
    match &parsed {
        Ok(id) => {
            let shown = id.to_string();
            assert_eq!(shown, text.trim_start_matches('0'), "{text:?}");
            assert_eq!(shown.parse::<T>().as_ref(), Ok(id), "{shown:?}");
        }
        Err(e) => {
            assert_eq!(e.code(), code, "{text:?}");
            let message = e.to_string();
            assert!(message.len() <= longest_message(), "{message:?}");
            let answer = ApiError::from(e.clone());
            assert_eq!(
                (answer.status(), answer.code()),
                (StatusCode::BAD_REQUEST, code)
            );
        }
    }
}

/// `path` through the routes: the id answered, or the refusal's body.
fn extracted(method: &str, path: &str) -> Option<Result<String, ErrorBody>> {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .body(Body::empty())
        .ok()?;
    RUNTIME.block_on(async {
        let answer = ROUTES.clone().oneshot(request).await.expect("infallible");
        let status = answer.status();
        let body = to_bytes(answer.into_body(), usize::MAX)
            .await
            .expect("an in-memory body");
        Some(match status {
            StatusCode::OK => Ok(String::from_utf8(body.to_vec()).expect("an id as text")),
            StatusCode::BAD_REQUEST => Err(serde_json::from_slice(&body).expect("a JSON error")),
            other => panic!("{path:?}: {other}"),
        })
    })
}

/// What the extractor must answer for a segment that decodes to `text`.
fn expected<T: std::fmt::Display>(parsed: &Result<T, IdError>) -> Result<String, ErrorBody> {
    match parsed {
        Ok(id) => Ok(id.to_string()),
        Err(e) => Err(ErrorBody::new(e.code(), e.to_string())),
    }
}

/// Every byte but the unreserved ones as `%XX`.
fn percent_encoded(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let lossy = String::from_utf8_lossy(data);
    parses::<PostId>(&lossy, "bad_post_id", |id| id.get());
    parses::<UserId>(&lossy, "bad_user_id", |id| id.get());

    // An empty segment matches no route: nothing to extract.
    if data.is_empty() {
        return;
    }
    // The extractor reads text that is not UTF-8 as the empty text.
    let text = std::str::from_utf8(data).unwrap_or_default();
    let post = expected(&text.parse::<PostId>());
    let user = expected(&text.parse::<UserId>());
    // Percent-encoded, the segment is always a valid path; as it is, only
    // when it is one (and a single segment).
    let encoded = percent_encoded(data);
    let raw = !text.is_empty() && !text.contains(['/', '?', '#', '%']);
    for (segment, always) in [(encoded.as_str(), true), (text, false)] {
        if !always && !raw {
            continue;
        }
        let at_post = format!("/posts/{segment}/like");
        match extracted("POST", &at_post) {
            Some(answer) => assert_eq!(answer, post, "{at_post:?}"),
            None => assert!(!always, "{at_post:?} is not a valid request"),
        }
        let at_user = format!("/admin/users/{segment}/friends");
        match extracted("PUT", &at_user) {
            Some(answer) => assert_eq!(answer, user, "{at_user:?}"),
            None => assert!(!always, "{at_user:?} is not a valid request"),
        }
    }
});
