//! Bodies of the reference server's admin and test-control API (enabled
//! only with `--admin-key`, authorised by the `X-Admin-Key` header), and
//! the `--seed FILE` document. Behind the `admin` feature: no app needs
//! them.

use serde::{Deserialize, Serialize};

use crate::{PostId, UserId};

/// `POST /admin/users`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewUser {
    /// The user's id (the `sub` of their tokens).
    pub id: UserId,
    /// The display name friends see in "Liked by …".
    pub name: String,
}

/// `POST /admin/posts`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewPost {
    /// The post's id.
    pub id: PostId,
}

/// `PUT /admin/users/{id}/friends` — the user's own (directed) friend list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Friends {
    /// Ids of the users this user counts as friends.
    pub friends: Vec<UserId>,
}

/// `POST /admin/tokens`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenResponse {
    /// A signed HS256 JWT for `Authorization: Bearer …`.
    pub token: String,
}

/// Which routes a [`FaultRule`] applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    /// use likekit_proto::admin::{FaultRoute, FaultRule};
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FaultRules {
    /// The rules, applied in order.
    pub rules: Vec<FaultRule>,
}

/// The `--seed FILE` document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SeedPost {
    /// The post's id.
    pub id: PostId,
    /// Users who like it, oldest first.
    #[serde(default)]
    pub likers: Vec<UserId>,
}
