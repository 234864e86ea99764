//! The JSON bodies of the LikeKit wire protocol, shared by the client and the
//! reference server (which must not redefine them).
//!
//! ```text
//! POST   /posts/{post_id}/like   -> 200 LikeState
//! DELETE /posts/{post_id}/like   -> 200 LikeState
//! GET    /posts/{post_id}/likes  -> 200 PostLikes
//! GET    /likes?posts=1,2,3      -> 200 BatchLikes
//! any error                      -> 4xx/5xx ErrorBody
//! ```
//!
//! The wire carries *state*, never "toggle": POST means "I like this", DELETE
//! means "I don't", and both are idempotent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A post's id. Ids are positive and fit in a signed 64-bit integer on the
/// server (`1..=i64::MAX`).
pub type PostId = u64;

/// A user's id, the `sub` of the sign-in token.
pub type UserId = u64;

/// The most posts one `GET /likes?posts=…` read may name.
pub const MAX_BATCH_POSTS: usize = 100;

/// The answer to a like (`POST`) or an unlike (`DELETE`): the post's exact
/// count and version, read in the write's own transaction.
///
/// ```
/// let s: likekit_core::wire::LikeState =
///     serde_json::from_str(r#"{"count": 1204, "liked_by_me": true, "version": 9}"#).unwrap();
/// assert_eq!(s.count, 1204);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
/// let p: likekit_core::wire::PostLikes = serde_json::from_str(
///     r#"{"count": 1204, "liked_by_me": false, "friends": ["Ana"], "version": 9}"#,
/// ).unwrap();
/// assert_eq!(p.friends, ["Ana"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// A feed page in one read (`GET /likes?posts=1,2,3`). Keys are post ids as
/// decimal strings; posts that do not exist are left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchLikes {
    /// One entry per existing post that was asked for.
    pub posts: BTreeMap<String, PostLikes>,
}

/// Every error answer: `{"error": {"code": "post_not_found", "message": "…"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The error itself.
    pub error: ErrorDetail,
}

/// The inside of an [`ErrorBody`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// A stable `snake_case` code a program can match on, such as
    /// `post_not_found`, `unauthorized`, `rate_limited`.
    pub code: String,
    /// A human-readable explanation.
    pub message: String,
}

impl ErrorBody {
    /// Builds an error body.
    ///
    /// ```
    /// let e = likekit_core::wire::ErrorBody::new("post_not_found", "no post 42");
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

/// Bodies of the reference server's admin and test-control API (enabled only
/// with `--admin-key`, authorised by the `X-Admin-Key` header).
pub mod admin {
    use serde::{Deserialize, Serialize};

    use super::{PostId, UserId};

    /// `POST /admin/users`
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct NewUser {
        /// The user's id (the `sub` of their tokens).
        pub id: UserId,
        /// The display name friends see in "Liked by …".
        pub name: String,
    }

    /// `POST /admin/posts`
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct NewPost {
        /// The post's id.
        pub id: PostId,
    }

    /// `PUT /admin/users/{id}/friends` — the user's own (directed) friend list.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Friends {
        /// Ids of the users this user counts as friends.
        pub friends: Vec<UserId>,
    }

    /// `POST /admin/tokens`
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct TokenRequest {
        /// Whose token.
        pub user_id: UserId,
        /// Lifetime in seconds (default one hour).
        #[serde(default = "default_ttl")]
        pub ttl_secs: u64,
    }

    fn default_ttl() -> u64 {
        3600
    }

    /// The answer to [`TokenRequest`].
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct TokenResponse {
        /// A signed HS256 JWT for `Authorization: Bearer …`.
        pub token: String,
    }

    /// Which routes a [`FaultRule`] applies to.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum FaultRoute {
        /// `POST /posts/{id}/like`
        Like,
        /// `DELETE /posts/{id}/like`
        Unlike,
        /// `GET /posts/{id}/likes`
        Likes,
        /// `GET /likes?posts=…`
        Batch,
        /// Every public route.
        #[serde(rename = "*")]
        All,
    }

    /// One fault rule. Every field but `route` defaults to "no fault".
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct FaultRule {
        /// The route it applies to.
        pub route: FaultRoute,
        /// Fixed delay before the request is handled.
        #[serde(default)]
        pub latency_ms: u64,
        /// Extra random delay, uniform in `0..=jitter_ms`.
        #[serde(default)]
        pub jitter_ms: u64,
        /// Probability (0..=1) of answering `status` instead of handling.
        #[serde(default)]
        pub error_rate: f64,
        /// The status of injected errors (default 503).
        #[serde(default = "default_status")]
        pub status: u16,
        /// Probability (0..=1) of dropping the connection without an answer.
        #[serde(default)]
        pub drop_rate: f64,
        /// Answer `status` to the next N matching requests, then stop.
        #[serde(default)]
        pub fail_next: u64,
    }

    fn default_status() -> u16 {
        503
    }

    impl FaultRule {
        /// A rule for `route` that injects nothing yet.
        ///
        /// ```
        /// use likekit_core::wire::admin::{FaultRoute, FaultRule};
        /// let slow = FaultRule { latency_ms: 2000, ..FaultRule::new(FaultRoute::All) };
        /// assert_eq!(slow.status, 503);
        /// ```
        pub fn new(route: FaultRoute) -> Self {
            Self {
                route,
                latency_ms: 0,
                jitter_ms: 0,
                error_rate: 0.0,
                status: default_status(),
                drop_rate: 0.0,
                fail_next: 0,
            }
        }
    }

    /// `PUT /admin/faults` — replaces every rule.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    pub struct FaultRules {
        /// The rules, applied in order.
        pub rules: Vec<FaultRule>,
    }

    /// The `--seed FILE` document.
    #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Seed {
        /// Users with their names and friend lists.
        #[serde(default)]
        pub users: Vec<SeedUser>,
        /// Posts with the users who already like them (oldest first).
        #[serde(default)]
        pub posts: Vec<SeedPost>,
    }

    /// A user in a [`Seed`].
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct SeedUser {
        /// The user's id.
        pub id: UserId,
        /// The display name.
        pub name: String,
        /// The user's friends.
        #[serde(default)]
        pub friends: Vec<UserId>,
    }

    /// A post in a [`Seed`].
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct SeedPost {
        /// The post's id.
        pub id: PostId,
        /// Users who like it, oldest first.
        #[serde(default)]
        pub likers: Vec<UserId>,
    }
}
