//! # LikeKit wire protocol
//!
//! The contract between the LikeKit client core and the reference server:
//! the JSON bodies, the post and user ids with their one range rule, and
//! the stable error codes. Both sides depend on this crate and neither
//! redefines what is here; it has no runtime, no HTTP client and no server.
//!
//! ```text
//! POST   /posts/{post_id}/like   -> 200 LikeState
//! DELETE /posts/{post_id}/like   -> 200 LikeState
//! GET    /posts/{post_id}/likes  -> 200 PostLikes
//! GET    /likes?posts=1,2,3      -> 200 BatchLikes
//! any error                      -> 4xx/5xx ErrorBody
//! ```
//!
//! The wire carries *state*, never "toggle": POST means "I like this",
//! DELETE means "I don't", and both are idempotent.
//!
//! Features: `admin` adds the module `admin`, the bodies of the reference server's
//! admin, fault and seed API (no app needs them); `openapi` derives
//! `utoipa::ToSchema` on every body for the server's OpenAPI document.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[cfg(feature = "admin")]
pub mod admin;
pub mod code;
mod ids;
mod whole;

pub use ids::{IdError, IdKind, MAX_ID, PostId, UserId};

/// `text` in double quotes, with `"`, `\` and control characters escaped as
/// Rust's `{:?}` escapes them. Error messages quote user input with it
/// rather than with `{:?}`, whose Unicode tables weigh about 4 KB gzipped
/// in the web package; it differs from `{:?}` only in leaving non-printable
/// non-control characters as they are.
///
/// ```
/// assert_eq!(likekit_proto::quoted("a\"b\\c\n"), r#""a\"b\\c\n""#);
/// assert_eq!(likekit_proto::quoted("x\u{7}"), format!("{:?}", "x\u{7}"));
/// ```
pub fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() => {
                use std::fmt::Write;
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The most posts one `GET /likes?posts=…` read may name.
pub const MAX_BATCH_POSTS: usize = 100;

/// How many of a post's most recent likers the server keeps beside its
/// count, and so the most friends a view can name.
pub const RECENT_LIKERS: usize = 100;

/// The answer to a like (`POST`) or an unlike (`DELETE`): the post's exact
/// count and version, read in the write's own transaction.
///
/// ```
/// let s: likekit_proto::LikeState =
///     serde_json::from_str(r#"{"count": 1204, "liked_by_me": true, "version": 9}"#).unwrap();
/// assert_eq!(s.count, 1204);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"count": 1204, "liked_by_me": true, "version": 9}))))]
pub struct LikeState {
    /// How many users like the post, exactly.
    pub count: u64,
    /// Whether the caller likes the post after the write.
    pub liked_by_me: bool,
    /// Grows by one with every real change of the post's likes.
    pub version: u64,
}

/// The read of one post as one viewer sees it (`GET /posts/{id}/likes`).
///
/// `count` and `version` may lag up to about a second (they come from the
/// server's per-post cache); `liked_by_me` is always the viewer's own row.
///
/// ```
/// let p: likekit_proto::PostLikes = serde_json::from_str(
///     r#"{"count": 1204, "liked_by_me": false, "friends": ["Ana"], "version": 9}"#,
/// ).unwrap();
/// assert_eq!(p.friends, ["Ana"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"count": 1204, "liked_by_me": false, "friends": ["Ana", "Ben"], "version": 9}))))]
pub struct PostLikes {
    /// How many users like the post.
    pub count: u64,
    /// Whether the viewer likes the post.
    pub liked_by_me: bool,
    /// Display names of the viewer's friends among the post's recent likers,
    /// newest first.
    #[serde(default)]
    pub friends: Vec<String>,
    /// The version of `count` and `friends`.
    pub version: u64,
}

/// A feed page in one read (`GET /likes?posts=1,2,3`). Keys are post ids
/// (decimal strings in JSON); posts that do not exist are left out.
///
/// ```
/// use likekit_proto::{BatchLikes, PostId};
/// let page: BatchLikes = serde_json::from_str(
///     r#"{"posts": {"7": {"count": 1, "liked_by_me": true, "version": 1}}}"#,
/// ).unwrap();
/// assert_eq!(page.posts[&PostId::new(7).unwrap()].count, 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"posts": {"42": {"count": 1204, "liked_by_me": true, "friends": ["Ana"], "version": 9}}}))))]
pub struct BatchLikes {
    /// One entry per existing post that was asked for.
    #[cfg_attr(feature = "openapi", schema(value_type = BTreeMap<String, PostLikes>))]
    #[serde(deserialize_with = "post_keys")]
    pub posts: BTreeMap<PostId, PostLikes>,
}

/// A map keyed by post ids, read as the keys are written: the digits of
/// an id. A post id in a body may be written `7.0` (a JSON number, which
/// JSON Schema counts whole), but a key is text, and `"7.0"` is not the
/// key of post 7; so keys are read as unsigned integers, as before ids
/// took whole numbers with a zero fraction.
fn post_keys<'de, D, V>(deserializer: D) -> Result<BTreeMap<PostId, V>, D::Error>
where
    D: serde::Deserializer<'de>,
    V: Deserialize<'de>,
{
    #[derive(PartialEq, Eq, PartialOrd, Ord, Deserialize)]
    #[serde(try_from = "u64")]
    struct Key(PostId);

    impl TryFrom<u64> for Key {
        type Error = IdError;
        fn try_from(id: u64) -> Result<Self, IdError> {
            PostId::new(id).map(Key)
        }
    }

    let keyed: BTreeMap<Key, V> = BTreeMap::deserialize(deserializer)?;
    Ok(keyed
        .into_iter()
        .map(|(Key(post), value)| (post, value))
        .collect())
}

/// Every error answer: `{"error": {"code": "post_not_found", "message": "…"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"error": {"code": "post_not_found", "message": "there is no post 42"}}))))]
pub struct ErrorBody {
    /// The error itself.
    pub error: ErrorDetail,
}

/// The inside of an `ErrorBody`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"code": "post_not_found", "message": "there is no post 42"}))))]
pub struct ErrorDetail {
    /// A stable `snake_case` code a program can match on: one of
    /// `likekit_proto::code`'s (also in the server's table of errors), or
    /// `http_<status>` for an answer of a status no code names
    /// (`code::http`).
    pub code: String,
    /// A human-readable explanation.
    pub message: String,
}

impl ErrorBody {
    /// Builds an error body.
    ///
    /// ```
    /// let e = likekit_proto::ErrorBody::new("post_not_found", "no post 42");
    /// assert_eq!(serde_json::to_string(&e).unwrap(),
    ///     r#"{"error":{"code":"post_not_found","message":"no post 42"}}"#);
    /// ```
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            error: ErrorDetail {
                code: code.into(),
                message: message.into(),
            },
        }
    }
}

impl From<&IdError> for ErrorBody {
    fn from(e: &IdError) -> Self {
        Self::new(e.code(), e.to_string())
    }
}
