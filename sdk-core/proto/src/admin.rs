//! Bodies of the reference server's admin and test-control API (enabled
//! only with `--admin-key`, authorised by the `X-Admin-Key` header), and
//! the `--seed FILE` document. Behind the `admin` feature: no app needs
//! them.

use serde::{Deserialize, Serialize};

use crate::{PostId, UserId};

/// The longest display name, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// The display name's "not blank" rule as a pattern (ECMA-262, as JSON
/// Schema reads it) for the OpenAPI document: a name must hold a character
/// outside Unicode's `White_Space`, the set `str::trim` removes. Spelled
/// out rather than `\S`, whose set differs from one regex engine to the
/// next (Python's counts U+001C..U+001F as space, ECMA-262's counts U+FEFF).
pub const NAME_PATTERN: &str =
    r"[^\t\n\x0B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]";

/// What a display name may not hold, as a pattern for the OpenAPI
/// document (a name's schema says `not` this): control characters, U+0000
/// to U+001F and U+007F to U+009F (`char::is_control`).
pub const NAME_FORBIDDEN: &str = r"[\u0000-\u001F\u007F-\u009F]";

/// The most friends one user may have.
pub const MAX_FRIENDS: usize = 5_000;
/// The longest token lifetime the admin API mints: one year, in seconds.
pub const MAX_TOKEN_TTL_SECS: u64 = 365 * 24 * 3600;

/// A token lifetime the server mints, as a [`Duration`](core::time::Duration):
/// 1 s to a year ([`MAX_TOKEN_TTL_SECS`]). The one rule of
/// `POST /admin/tokens` (`ttl_secs`, 400 `bad_ttl` otherwise) and of
/// `likekit-server token --ttl`.
///
/// ```
/// use likekit_proto::admin::token_ttl;
///
/// assert_eq!(token_ttl(3600).map(|t| t.as_secs()), Ok(3600));
/// assert_eq!(
///     token_ttl(0).unwrap_err(),
///     "must be from 1 to 31536000 seconds (one year); got 0"
/// );
/// ```
///
/// # Errors
///
/// The rule, in words, with the value given.
pub fn token_ttl(secs: u64) -> Result<core::time::Duration, String> {
    if (1..=MAX_TOKEN_TTL_SECS).contains(&secs) {
        Ok(core::time::Duration::from_secs(secs))
    } else {
        Err(format!(
            "must be from 1 to {MAX_TOKEN_TTL_SECS} seconds (one year); got {secs}"
        ))
    }
}
/// When a minted token starts being valid, in seconds from now, checked:
/// a year back to a year ahead ([`MAX_TOKEN_TTL_SECS`] either way). The one
/// rule of `POST /admin/tokens` (`valid_from_secs`, 400 `bad_valid_from`
/// otherwise) and of `likekit-server token --valid-from`.
///
/// ```
/// use likekit_proto::admin::token_valid_from;
///
/// assert_eq!(token_valid_from(-7200), Ok(-7200));
/// assert_eq!(
///     token_valid_from(-40_000_000).unwrap_err(),
///     "must be from -31536000 to 31536000 seconds from now (a year either way); got -40000000"
/// );
/// ```
///
/// # Errors
///
/// The rule, in words, with the value given.
pub fn token_valid_from(secs: i64) -> Result<i64, String> {
    let year = MAX_TOKEN_TTL_SECS as i64;
    if (-year..=year).contains(&secs) {
        Ok(secs)
    } else {
        Err(format!(
            "must be from -{year} to {year} seconds from now (a year either way); got {secs}"
        ))
    }
}

/// The most rules in force at once: what one `PUT /admin/faults` may set,
/// and what the rules in force and those a `POST /admin/faults` adds may
/// come to.
pub const MAX_RULES: usize = 256;
/// The longest latency (and jitter, and slow-body interval) a fault rule
/// may ask for: ten minutes.
pub const MAX_LATENCY_MS: u64 = 600_000;
/// The largest body an `oversized` fault action may send: 1 GiB.
pub const MAX_OVERSIZED_BYTES: u64 = 1 << 30;
/// The longest fault rule `tag`, in characters.
pub const MAX_TAG_CHARS: usize = 64;
/// A fault rule's `tag` as a pattern (ECMA-262, as JSON Schema reads it)
/// for the OpenAPI document: visible ASCII characters only, `!` to `~`
/// (no space). Its length, 1 to [`MAX_TAG_CHARS`], is said apart.
pub const TAG_PATTERN: &str = "^[!-~]+$";

/// Checks a fault rule's `tag` (and the `tag` that `/admin/faults` and the
/// `fault_tag` that `/admin/requests` take in their query):
/// 1 to 64 ([`MAX_TAG_CHARS`]) visible ASCII characters, `!` to `~`.
///
/// ```
/// use likekit_proto::admin::check_tag;
///
/// assert_eq!(check_tag("checkout-test#3"), Ok(()));
/// assert_eq!(
///     check_tag("two words").unwrap_err(),
///     "must be 1 to 64 visible ASCII characters (! to ~); got \"two words\""
/// );
/// ```
///
/// # Errors
///
/// The rule, in words, with the tag given.
pub fn check_tag(tag: &str) -> Result<(), String> {
    if (1..=MAX_TAG_CHARS).contains(&tag.len()) && tag.bytes().all(|b| b.is_ascii_graphic()) {
        Ok(())
    } else {
        Err(format!(
            "must be 1 to {MAX_TAG_CHARS} visible ASCII characters (! to ~); got {}",
            crate::quoted(tag)
        ))
    }
}

/// `POST /admin/users`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"id": 7, "name": "Ana"}))))]
#[serde(deny_unknown_fields)]
pub struct NewUser {
    /// The user's id (the `sub` of their tokens).
    pub id: UserId,
    /// The display name friends see in "Liked by …": not blank, at most
    /// 200 characters (`MAX_NAME_CHARS`).
    // The schema's numbers and pattern are checked against the constants
    // by the server's OpenAPI tests.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"[^\t\n\x0B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
        )
    )]
    pub name: String,
}

/// `POST /admin/posts`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"id": 42}))))]
#[serde(deny_unknown_fields)]
pub struct NewPost {
    /// The post's id.
    pub id: PostId,
}

/// `GET /admin/users/{id}`: a user as the store holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"id": 7, "name": "Ana", "friends": [1, 2, 3]}))))]
#[serde(deny_unknown_fields)]
pub struct StoredUser {
    /// The user's id.
    pub id: UserId,
    /// The display name.
    pub name: String,
    /// The user's own (directed) friend list, in ascending order of id
    /// (at most 5,000, `MAX_FRIENDS`).
    #[cfg_attr(feature = "openapi", schema(max_items = 5000))]
    pub friends: Vec<UserId>,
}

/// `GET /admin/posts/{id}`: a post as the store holds it, read past the
/// view cache: what a test asserts when it checks that a count moved
/// exactly once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"id": 42, "count": 3, "version": 5, "recent_likers": [7, 3, 1]}))))]
#[serde(deny_unknown_fields)]
pub struct StoredPost {
    /// The post's id.
    pub id: PostId,
    /// How many users like it: its like rows, as committed.
    pub count: u64,
    /// Grows by one with every real change of its likes (a like that
    /// added a row, an unlike that removed one); 0 after a reset.
    pub version: u64,
    /// Its most recent likers, newest first, at most 100
    /// (`RECENT_LIKERS`). An unlike removes its user; the list is not
    /// refilled from older likes.
    #[cfg_attr(feature = "openapi", schema(max_items = 100))]
    pub recent_likers: Vec<UserId>,
}

/// `PUT /admin/users/{id}/friends` — the user's own (directed) friend list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"friends": [1, 2, 3]}))))]
#[serde(deny_unknown_fields)]
pub struct Friends {
    /// Ids of the users this user counts as friends (at most 5,000,
    /// `MAX_FRIENDS`).
    #[cfg_attr(feature = "openapi", schema(max_items = 5000))]
    pub friends: Vec<UserId>,
}

/// `POST /admin/tokens`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(
    json!({"user_id": 7, "ttl_secs": 3600}),
    json!({"user_id": 7, "valid_from_secs": -7200}),
)))]
#[serde(deny_unknown_fields)]
pub struct TokenRequest {
    /// Whose token.
    pub user_id: UserId,
    /// Lifetime in seconds, 1 to 31,536,000 (a year, `MAX_TOKEN_TTL_SECS`;
    /// default one hour), counted from `valid_from_secs`: the token's `exp`
    /// is its start plus this.
    #[serde(default = "default_ttl", deserialize_with = "crate::whole::u64")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 31_536_000))]
    pub ttl_secs: u64,
    /// When the token starts being valid, in seconds from now, −31,536,000
    /// to 31,536,000 (a year either way; default 0, now). Below zero the
    /// token was issued then (`iat`), and is already expired when
    /// `ttl_secs` is shorter than that: `{"user_id": 7, "valid_from_secs":
    /// -7200}` expired an hour ago, for a test of a client's token
    /// renewal. Above zero the token carries it as `nbf` and is refused
    /// (401 `invalid_token`) until then.
    #[serde(default, deserialize_with = "crate::whole::i64")]
    #[cfg_attr(feature = "openapi", schema(minimum = -31_536_000, maximum = 31_536_000))]
    pub valid_from_secs: i64,
}

fn default_ttl() -> u64 {
    3600
}

/// The answer to `TokenRequest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"token": "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI3IiwiZXhwIjoxNzk2MzEwMDAwfQ.c2lnbmF0dXJl"}))))]
pub struct TokenResponse {
    /// A signed HS256 JWT for `Authorization: Bearer …`.
    pub token: String,
}

/// `{"ok": true}`: what `POST /admin/reset`, `POST /admin/seed` and
/// `DELETE /admin/requests` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"ok": true}))))]
pub struct Ack {
    /// Always `true`.
    pub ok: bool,
}

/// Which routes a `FaultRule` applies to.
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

/// An HTTP method a `FaultRule` may be limited to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "UPPERCASE")]
pub enum FaultMethod {
    Get,
    Post,
    Delete,
}

/// When a `FaultRule` acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum FaultPhase {
    /// Before the request is handled: a like or unlike never happens.
    #[default]
    Before,
    /// After it was handled, and only when the handler answered 2xx: the
    /// write has committed, then the answer is delayed, replaced, cut or
    /// lost — "saved, but the answer was lost". Any other answer passes
    /// unchanged and uses nothing of the rule.
    After,
}

/// What a `FaultRule` does when it fires (after its latency).
///
/// The actions without fields of their own are written with braces
/// (`FaultAction::Drop {}`): serde reads a unit variant of a tagged enum
/// past any other field in its object, and these refuse unknown fields like
/// every other admin body (`{"kind": "drop", "after": 1}` is `bad_json`, not
/// a drop).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FaultAction {
    /// Answer `status` (200..=599) with `body` (any JSON; by default the
    /// `injected_fault` error body), and `Retry-After` when given.
    Status {
        // The schema's numbers are checked against the server's rules by
        // its OpenAPI tests.
        #[serde(deserialize_with = "action::status")]
        #[cfg_attr(feature = "openapi", schema(minimum = 200, maximum = 599))]
        status: u16,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(value_type = Value))]
        body: Option<serde_json::Value>,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "action::retry_after_secs"
        )]
        retry_after_secs: Option<u64>,
    },
    /// Close the connection without an answer.
    Drop {},
    /// Reset the connection (TCP RST) without an answer.
    Reset {},
    /// Never answer: hold the request until the server's request timeout
    /// (counted from its arrival), then close the connection (the client
    /// times out first).
    Hang {},
    /// Answer with the first `bytes` bytes of the real answer's body (cut
    /// JSON, consistent framing). Phase `after` only.
    Truncate {
        #[serde(deserialize_with = "action::bytes_u32")]
        bytes: u32,
    },
    /// Answer with a body that is not JSON: status 200 in phase `before`;
    /// in phase `after`, the real answer's status.
    Malformed {},
    /// Send the real answer's body `bytes` at a time, one piece every
    /// `interval_ms` (below the server's request timeout: the reference
    /// server refuses a longer pause, as it closes connections whose
    /// answers stop moving). Phase `after` only.
    SlowBody {
        #[serde(deserialize_with = "action::bytes_u32")]
        #[cfg_attr(feature = "openapi", schema(minimum = 1))]
        bytes: u32,
        #[serde(deserialize_with = "action::interval_ms")]
        #[cfg_attr(feature = "openapi", schema(maximum = 600_000))]
        interval_ms: u64,
    },
    /// Answer 200 with valid JSON of `bytes` bytes (padding), streamed.
    Oversized {
        #[serde(deserialize_with = "action::bytes_u64")]
        #[cfg_attr(feature = "openapi", schema(maximum = 1_073_741_824_u64))]
        bytes: u64,
    },
}

/// The readers of a [`FaultAction`]'s numbers. serde reads a tagged
/// enum's fields from a copy of the object, past the place its errors are
/// said to be (`rules[0].action`), so each reader names its field in the
/// message: ``rules[0].action: bytes: invalid value: integer `-1`, …``.
mod action {
    use serde::de::{Deserializer, Error};

    fn named<T, E: Error>(field: &str, read: Result<T, E>) -> Result<T, E> {
        read.map_err(|e| E::custom(format_args!("{field}: {e}")))
    }

    pub(super) fn status<'de, D: Deserializer<'de>>(d: D) -> Result<u16, D::Error> {
        named("status", crate::whole::u16(d))
    }

    pub(super) fn retry_after_secs<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<u64>, D::Error> {
        named("retry_after_secs", crate::whole::option_u64(d))
    }

    pub(super) fn bytes_u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        named("bytes", crate::whole::u32(d))
    }

    pub(super) fn bytes_u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        named("bytes", crate::whole::u64(d))
    }

    pub(super) fn interval_ms<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        named("interval_ms", crate::whole::u64(d))
    }
}

/// One fault rule: which requests it matches, which of their calls it
/// fires on, and what it does then. Every field but `route` is optional;
/// a rule with only today's fields behaves as it always did.
///
/// A request matches when `route`, and `method`, `post` and `user` when
/// given, all match. Each rule counts the requests it matches (1, 2, 3, …)
/// and fires on call `n` when every given call condition holds (`nth`,
/// `every`, `first`, `after`) and a draw from the rule set's seeded
/// generator falls below `probability`. When it fires it waits
/// `latency_ms` plus a drawn `0..=jitter_ms`, then acts: `drop_rate`,
/// `fail_next` and `error_rate` as before, then `action`. Rules stack in
/// order: every firing rule's latency adds up, and the first rule that acts
/// is the last to fire. The rules after it still count the request as one
/// of their calls (so a rule's call numbers never depend on the rules
/// before it), but do not fire on it: no latency, no draw, no `fail_next`
/// used. The two phases are walked apart: `before` rules when the request
/// arrives, `after` rules once the handler has answered 2xx (an `after`
/// rule's call `n` is the `n`-th matching request answered 2xx), so an
/// `after` rule never stops a `before` rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"route": "like", "post": 42, "nth": 1, "phase": "after", "action": {"kind": "drop"}, "tag": "lost-answer"}))))]
#[serde(deny_unknown_fields)]
pub struct FaultRule {
    /// The route it applies to.
    pub route: FaultRoute,
    /// Only requests with this method. On a route other than `*` it must be
    /// the route's own (`like` POST, `unlike` DELETE, `likes` and `batch`
    /// GET): a rule for another would never fire, and is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<FaultMethod>,
    /// Only requests about this post (a batch read: one that names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post: Option<PostId>,
    /// Only requests signed in as this user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<UserId>,
    /// Only the `nth` matching call (1 is the first).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::option_u64"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub nth: Option<u64>,
    /// Only every `every`-th matching call (`every`, `2 × every`, …).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::option_u64"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub every: Option<u64>,
    /// Only the first `first` matching calls (at least 1: a rule for none
    /// of them would never fire).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::option_u64"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub first: Option<u64>,
    /// Only the calls after the first `after` matching ones.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::option_u64"
    )]
    pub after: Option<u64>,
    /// The chance (0..=1) that the rule fires on a call its conditions
    /// select, drawn from the seeded generator (default 1: always).
    #[serde(default = "always", skip_serializing_if = "is_always")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1))]
    pub probability: f64,
    /// Before the request is handled (default) or after.
    #[serde(default, skip_serializing_if = "is_before")]
    pub phase: FaultPhase,
    /// Fixed delay when the rule fires, in milliseconds (at most 600,000:
    /// ten minutes, `MAX_LATENCY_MS`).
    #[serde(default, deserialize_with = "crate::whole::u64")]
    #[cfg_attr(feature = "openapi", schema(maximum = 600_000))]
    pub latency_ms: u64,
    /// Extra random delay, uniform in `0..=jitter_ms`.
    #[serde(default, deserialize_with = "crate::whole::u64")]
    #[cfg_attr(feature = "openapi", schema(maximum = 600_000))]
    pub jitter_ms: u64,
    /// Probability (0..=1) of answering `status` instead of handling.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1))]
    pub error_rate: f64,
    /// The status `error_rate` and `fail_next` answer (default 503). Beside
    /// an `action` with neither, another status is refused, since nothing
    /// would answer it; without an `action` it is taken, as before.
    #[serde(default = "default_status", deserialize_with = "crate::whole::u16")]
    #[cfg_attr(feature = "openapi", schema(minimum = 400, maximum = 599))]
    pub status: u16,
    /// Probability (0..=1) of dropping the connection without an answer.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1))]
    pub drop_rate: f64,
    /// Answer `status` to the next N calls the rule fires on (and that
    /// `drop_rate` does not drop), then stop.
    #[serde(default, deserialize_with = "crate::whole::u64")]
    pub fail_next: u64,
    /// What to do when the rule fires, beyond the fields above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<FaultAction>,
    /// A name of the test's choosing (1 to 64 visible ASCII characters,
    /// `MAX_TAG_CHARS`), so that `DELETE /admin/faults?tag=…` removes this
    /// test's rules and leaves every other one as it is. It does not change
    /// what the rule does.
    // The schema's numbers and pattern are checked against the constants
    // by the server's OpenAPI tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 64, pattern = "^[!-~]+$")
    )]
    pub tag: Option<String>,
}

fn default_status() -> u16 {
    503
}

fn always() -> f64 {
    1.0
}

fn is_always(p: &f64) -> bool {
    *p == 1.0
}

fn is_before(phase: &FaultPhase) -> bool {
    *phase == FaultPhase::Before
}

impl FaultRule {
    /// A rule for `route` that injects nothing yet.
    ///
    /// ```
    /// use likekit_proto::admin::{FaultAction, FaultPhase, FaultRoute, FaultRule};
    /// let slow = FaultRule { latency_ms: 2000, ..FaultRule::new(FaultRoute::All) };
    /// assert_eq!(slow.status, 503);
    /// // The like commits, then its answer is lost.
    /// let lost = FaultRule {
    ///     phase: FaultPhase::After,
    ///     action: Some(FaultAction::Drop {}),
    ///     ..FaultRule::new(FaultRoute::Like)
    /// };
    /// assert_eq!(lost.probability, 1.0);
    /// ```
    pub fn new(route: FaultRoute) -> Self {
        Self {
            route,
            method: None,
            post: None,
            user: None,
            nth: None,
            every: None,
            first: None,
            after: None,
            probability: always(),
            phase: FaultPhase::Before,
            latency_ms: 0,
            jitter_ms: 0,
            error_rate: 0.0,
            status: default_status(),
            drop_rate: 0.0,
            fail_next: 0,
            action: None,
            tag: None,
        }
    }
}

/// `PUT /admin/faults` — replaces every rule; also the answer of every
/// `/admin/faults` call (`GET`, `PUT`, `POST`, `DELETE`): the rules in
/// force, with the seed in use and what each has used up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"seed": 1, "rules": [{"route": "*", "latency_ms": 1500, "jitter_ms": 1000}, {"route": "likes", "fail_next": 2}, {"route": "*", "first": 5, "probability": 0.2, "action": {"kind": "drop"}}], "state": [{"matched": 4, "fired": 4, "acted": 0}, {"matched": 3, "fired": 3, "acted": 2, "fail_next_left": 0}, {"matched": 4, "fired": 1, "acted": 1, "first_left": 1}]}))))]
#[serde(deny_unknown_fields)]
pub struct FaultRules {
    /// The seed of the generator every probability and jitter is drawn
    /// from: the same seed and the same calls give the same faults. When
    /// not given the server picks one (below 2^53) and reports it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::option_uint64"
    )]
    #[cfg_attr(
        feature = "openapi",
        schema(format = "uint64", maximum = 18_446_744_073_709_551_615_u64)
    )]
    pub seed: Option<u64>,
    /// The rules, applied in order (at most 256, `MAX_RULES`).
    #[cfg_attr(feature = "openapi", schema(max_items = 256))]
    pub rules: Vec<FaultRule>,
    /// Read-only: what each rule has used up so far, `state[i]` for
    /// `rules[i]`, in every answer. A `PUT` ignores it (so an answer can be
    /// put back as it is): every `PUT` starts the counters over. A `POST`
    /// refuses it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "openapi", schema(read_only, max_items = 256))]
    pub state: Vec<RuleState>,
}

impl FaultRules {
    /// `rules` with a seed the server picks.
    pub fn new(rules: Vec<FaultRule>) -> Self {
        Self {
            seed: None,
            rules,
            state: Vec::new(),
        }
    }
}

/// `POST /admin/faults` — rules to add after those in force, keeping them,
/// what each has used up, and the seed. Its `rules` come last in the
/// answer (a `FaultRules`), in the order given. The seed belongs to the
/// whole set: a `seed` here is refused (set it with `PUT`), as is a
/// `state`.
///
/// ```
/// use likekit_proto::admin::{FaultRoute, FaultRule, NewFaultRules};
///
/// let mine = NewFaultRules::new(vec![FaultRule {
///     user: Some(likekit_proto::UserId::new(7).unwrap()),
///     fail_next: 1,
///     tag: Some("checkout-test".into()),
///     ..FaultRule::new(FaultRoute::Like)
/// }]);
/// let json = serde_json::to_value(&mine).unwrap();
/// assert_eq!(json["rules"][0]["tag"], "checkout-test");
/// assert!(json.get("seed").is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"rules": [{"route": "like", "user": 7, "fail_next": 1, "tag": "checkout-test"}]}))))]
#[serde(deny_unknown_fields)]
pub struct NewFaultRules {
    /// The rules to add, in order (with those in force, at most 256,
    /// `MAX_RULES`).
    #[cfg_attr(feature = "openapi", schema(max_items = 256))]
    pub rules: Vec<FaultRule>,
}

impl NewFaultRules {
    /// These rules, to add.
    pub fn new(rules: Vec<FaultRule>) -> Self {
        Self { rules }
    }
}

/// The query of `GET` and `DELETE /admin/faults`: without a `tag`, every
/// rule (and the seed) is read or removed; with one, only the rules with
/// that tag.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields)]
pub struct FaultFilter {
    /// Only the rules with this `tag` (1 to 64 visible ASCII characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        param(min_length = 1, max_length = 64, pattern = "^[!-~]+$")
    )]
    pub tag: Option<String>,
}

impl FaultFilter {
    /// Only the rules tagged `tag`.
    pub fn tag(tag: impl Into<String>) -> Self {
        Self {
            tag: Some(tag.into()),
        }
    }
}

/// What one fault rule has used up since it was put or added, as
/// `GET /admin/faults` reports it beside the rule (`FaultRules::state`).
///
/// ```
/// use likekit_proto::admin::RuleState;
/// // `{"route": "likes", "fail_next": 2}` after three reads: two 503s,
/// // then the third read was answered as usual.
/// let used: RuleState = serde_json::from_str(
///     r#"{"matched": 3, "fired": 3, "acted": 2, "fail_next_left": 0}"#,
/// )
/// .unwrap();
/// assert_eq!((used.acted, used.fail_next_left, used.first_left), (2, Some(0), None));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"matched": 3, "fired": 3, "acted": 2, "fail_next_left": 0}))))]
pub struct RuleState {
    /// The requests the rule matched: its call number so far (what `nth`,
    /// `every`, `first` and `after` count), also calls an earlier rule
    /// acted on.
    #[serde(deserialize_with = "crate::whole::u64")]
    pub matched: u64,
    /// The calls it fired on: its call conditions selected them and the
    /// `probability` draw passed, so its latency (if any) applied.
    #[serde(deserialize_with = "crate::whole::u64")]
    pub fired: u64,
    /// The requests it acted on: answered, cut or spoiled (`drop_rate`,
    /// `fail_next`, `error_rate` or `action`); the journal names it as their
    /// `fault_rule`. A rule that only delays never acts.
    #[serde(deserialize_with = "crate::whole::u64")]
    pub acted: u64,
    /// For a rule with `fail_next`: how many of those failures are left.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::option_u64"
    )]
    pub fail_next_left: Option<u64>,
    /// For a rule with `first`: how many of its first calls are still to
    /// come.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::option_u64"
    )]
    pub first_left: Option<u64>,
}

/// The `--seed FILE` document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"users": [{"id": 1, "name": "Ana", "friends": [2]}, {"id": 2, "name": "Ben"}], "posts": [{"id": 42, "likers": [1]}]}))))]
#[serde(deny_unknown_fields)]
pub struct Seed {
    /// Users with their names and friend lists.
    #[serde(default)]
    pub users: Vec<SeedUser>,
    /// Posts with the users who already like them (oldest first).
    #[serde(default)]
    pub posts: Vec<SeedPost>,
}

/// A user in a `Seed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"id": 1, "name": "Ana", "friends": [2]}))))]
#[serde(deny_unknown_fields)]
pub struct SeedUser {
    /// The user's id.
    pub id: UserId,
    /// The display name: not blank, at most 200 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"[^\t\n\x0B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
        )
    )]
    pub name: String,
    /// The user's friends (at most 5,000, `MAX_FRIENDS`).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 5000))]
    pub friends: Vec<UserId>,
}

/// A post in a `Seed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"id": 42, "likers": [1]}))))]
#[serde(deny_unknown_fields)]
pub struct SeedPost {
    /// The post's id.
    pub id: PostId,
    /// Users who like it, oldest first.
    #[serde(default)]
    pub likers: Vec<UserId>,
}

/// The filters of `GET /admin/requests` (its query string): every one
/// given must match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields)]
pub struct RequestFilter {
    /// Only this route (`*`: every route).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<FaultRoute>,
    /// Only this method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<FaultMethod>,
    /// Only requests naming this post.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post: Option<PostId>,
    /// Only requests signed in as this user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<UserId>,
    /// Only entries after this `seq` (for reading what is new).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::query_option_u64"
    )]
    pub since: Option<u64>,
    /// Only the request with this id (its answer's `X-Request-Id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Only entries whose `fault_tag` is this: the requests a fault rule
    /// with this `tag` acted on, or delayed when no rule acted (1 to 64
    /// visible ASCII characters, as a rule's `tag`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        param(min_length = 1, max_length = 64, pattern = "^[!-~]+$")
    )]
    pub fault_tag: Option<String>,
}

/// The waiting of `GET /admin/requests` (beside its [`RequestFilter`]): for
/// a test that cannot wait for the client itself (a UI test in another
/// process), the answer is held until the client's requests are there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields)]
pub struct RequestWait {
    /// Answer once at least this many entries match the filters and none of
    /// the matching entries is in flight, or when `timeout_ms` has passed,
    /// whichever comes first; the answer's `met` says which. More than the
    /// journal's capacity can never be met: that answer comes at once.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::query_option_u64"
    )]
    #[cfg_attr(feature = "openapi", param(minimum = 1))]
    pub wait_for: Option<u64>,
    /// How long `wait_for` waits at most, in milliseconds (without it,
    /// nothing is waited for): 5,000 by default, at most 60,000, and never
    /// past one second before the server's request timeout.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::query_option_u64"
    )]
    #[cfg_attr(feature = "openapi", param(maximum = 60000))]
    pub timeout_ms: Option<u64>,
}

impl RequestWait {
    /// The most `timeout_ms` takes.
    pub const MAX_TIMEOUT_MS: u64 = 60_000;
}

impl RequestFilter {
    /// Only requests to `route`.
    pub fn route(route: FaultRoute) -> Self {
        Self {
            route: Some(route),
            ..Self::default()
        }
    }

    /// Whether `entry` passes every filter given.
    pub fn matches(&self, entry: &JournalEntry) -> bool {
        self.route
            .is_none_or(|r| r == entry.route || r == FaultRoute::All)
            && self.method.is_none_or(|m| m == entry.method)
            && self.post.is_none_or(|p| entry.posts.contains(&p))
            && self.user.is_none_or(|u| entry.user == Some(u))
            && self.since.is_none_or(|s| entry.seq > s)
            && self
                .request_id
                .as_ref()
                .is_none_or(|id| *id == entry.request_id)
            && self
                .fault_tag
                .as_ref()
                .is_none_or(|tag| entry.fault_tag.as_ref() == Some(tag))
    }
}

/// What a like or unlike did, as the request journal records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum WriteResult {
    /// The (user, post) row changed: the count moved by one.
    Applied,
    /// The row was already as asked (a retry, a repeated tap): nothing
    /// changed.
    Unchanged,
    /// The handler answered an error (unknown post, bad token, rate
    /// limit…): nothing changed. A write the request timeout cut short, or
    /// one answered 500 (the database failed, say a connection lost while
    /// the commit's answer was on its way), is not refused: its outcome is
    /// unknown, and its entry's `write` is `null`.
    Refused,
}

/// One request to a public route, as `GET /admin/requests` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"seq": 1, "request_id": "checkout-7f3a", "at_ms": 1_796_306_400_123_u64, "duration_ms": 4, "method": "POST", "route": "like", "path": "/posts/42/like", "posts": [42], "user": 7, "status": null, "write": "applied", "fault_rule": 0, "fault_tag": "checkout", "fault_phase": "after", "fault": "drop", "in_flight": false}))))]
pub struct JournalEntry {
    /// Its place in the journal: 1, 2, 3, … in order of arrival.
    pub seq: u64,
    /// Its id, as its answer's `X-Request-Id` gives it: the client's own
    /// `X-Request-Id` when it sent a usable one (1 to 128 visible ASCII
    /// characters), else the one the server made.
    pub request_id: String,
    /// When it arrived, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// How long it took until its answer (or until the connection was cut),
    /// in milliseconds.
    pub duration_ms: u64,
    /// Its method.
    pub method: FaultMethod,
    /// Its route: its own, never `*` (which only rules and filters use).
    #[cfg_attr(feature = "openapi", schema(schema_with = journal_route))]
    pub route: FaultRoute,
    /// Its path and query: whole up to 4 KiB, else its first 4 KiB ending
    /// in `…`.
    pub path: String,
    /// The post it names, or the posts a batch read asks for.
    pub posts: Vec<PostId>,
    /// The signed-in user, when the token was valid.
    pub user: Option<UserId>,
    /// The answer's status; `null` while the request is in flight, and when
    /// no answer was written (a fault dropped, reset or held the connection,
    /// or the client went away before the answer was ready).
    pub status: Option<u16>,
    /// For a like or unlike that reached the handler: what it did. `null`
    /// for reads, for requests a `before` fault answered, and for a write
    /// the request timeout cut short before the handler answered or that
    /// the handler answered 500 (it may or may not have committed).
    pub write: Option<WriteResult>,
    /// The fault rule that acted on it (its place in the rule set when it
    /// acted: removing rules by tag moves the rules after them up), if any:
    /// also one whose latency the request timeout cut short (`status` is
    /// then the 503 `timeout` the client got). When no rule acted, the
    /// first rule whose latency delayed it (`fault` is then `latency`).
    /// Shown from the moment the rule's phase begins, in flight too.
    pub fault_rule: Option<u32>,
    /// That rule's `tag`, when it has one. Unlike `fault_rule`, no removal
    /// changes it: a test sharing the server finds what its own rules did
    /// by their tag. (Absent from a server before it: read as `null`.)
    #[serde(default)]
    pub fault_tag: Option<String>,
    /// When that rule acted (or delayed it).
    pub fault_phase: Option<FaultPhase>,
    /// What it did: the kind of the action that acted, or `latency` for a
    /// rule that only delayed it.
    pub fault: Option<JournalFault>,
    /// Not answered yet: the entry is listed from its arrival, and
    /// `status`, `duration_ms`, `write` and the fault fields are filled in
    /// when its answer is ready.
    pub in_flight: bool,
}

/// What a fault rule did to a request, as its journal entry's `fault`
/// says it: the `kind` of the action that acted (`status` also for
/// `error_rate` and `fail_next`, `drop` also for `drop_rate`), or
/// `latency` for a rule that only delayed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum JournalFault {
    /// An answer with a status: a `status` action, `error_rate`,
    /// `fail_next`.
    Status,
    /// The connection closed with no answer: `drop`, `drop_rate`.
    Drop,
    /// The connection reset with no answer.
    Reset,
    /// The request held until the request timeout or the client gave up.
    Hang,
    /// An answer cut short.
    Truncate,
    /// An answer that is not JSON.
    Malformed,
    /// An answer sent slowly.
    SlowBody,
    /// An answer longer than the client takes.
    Oversized,
    /// Only delayed by the rule's latency.
    Latency,
}

/// [`JournalEntry::route`]'s schema: [`FaultRoute`]'s without `*`.
#[cfg(feature = "openapi")]
fn journal_route() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    let routes = [
        FaultRoute::Like,
        FaultRoute::Unlike,
        FaultRoute::Likes,
        FaultRoute::Batch,
    ];
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(
            routes.map(|r| serde_json::to_value(r).unwrap_or(serde_json::Value::Null)),
        ))
        .description(Some(
            "The request's own route (never `*`, which only rules and filters use)",
        ))
        .build()
}

/// The answer of `GET /admin/requests`: the entries that match, oldest
/// first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(examples(json!({"entries": [{"seq": 2, "request_id": "5f0c2a9e41b7d3c8", "at_ms": 1_796_306_400_641_u64, "duration_ms": 3, "method": "POST", "route": "like", "path": "/posts/42/like", "posts": [42], "user": 7, "status": 200, "write": "unchanged", "fault_rule": null, "fault_tag": null, "fault_phase": null, "fault": null, "in_flight": false}], "capacity": 10000, "dropped": 0, "last_seq": 2}))))]
pub struct Journal {
    /// The matching entries, oldest first.
    pub entries: Vec<JournalEntry>,
    /// How many entries the journal holds at most (`--journal-size`).
    pub capacity: u64,
    /// How many older entries were dropped to stay within it.
    pub dropped: u64,
    /// The `seq` of the last request that arrived, whether these filters
    /// match it or not (0 before the first): `since=last_seq` then reads
    /// only what comes after this answer, so a test marks where it starts
    /// without reading the whole journal.
    #[serde(default)]
    pub last_seq: u64,
    /// Only on a read that waited (`wait_for`): `true` when the entries it
    /// waited for are there, none of them in flight; `false` when the wait
    /// ran out first (or the server began stopping, or it asked for more
    /// than the journal holds), the entries being those there were then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub met: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::{MAX_TAG_CHARS, NAME_FORBIDDEN, NAME_PATTERN, TAG_PATTERN, check_tag};

    /// A tag is what [`TAG_PATTERN`] and the lengths say: one character of
    /// `!` to `~` at a time, 1 to 64 of them.
    #[test]
    fn the_tag_rule_is_its_pattern() {
        assert_eq!(TAG_PATTERN, "^[!-~]+$");
        for c in (0..=0x10_FFFF).filter_map(char::from_u32) {
            let in_pattern = ('!'..='~').contains(&c);
            assert_eq!(
                check_tag(&c.to_string()).is_ok(),
                in_pattern,
                "U+{:04X}",
                u32::from(c)
            );
        }
        assert!(check_tag(&"t".repeat(MAX_TAG_CHARS)).is_ok());
        assert!(check_tag(&"t".repeat(MAX_TAG_CHARS + 1)).is_err());
        assert_eq!(
            check_tag("").expect_err("an empty tag"),
            "must be 1 to 64 visible ASCII characters (! to ~); got \"\""
        );
    }

    /// The characters [`NAME_PATTERN`] names as space, read off the pattern
    /// itself (`\t`-style escapes, `\xHH`, `\uHHHH`, ranges, a plain space).
    fn pattern_spaces() -> Vec<(char, char)> {
        let body = NAME_PATTERN
            .strip_prefix("[^")
            .and_then(|p| p.strip_suffix(']'))
            .expect("a negated class");
        let mut chars = body.chars().peekable();
        let mut single = Vec::new();
        while let Some(c) = chars.next() {
            let c = match c {
                '\\' => match chars.next().expect("an escape") {
                    't' => '\t',
                    'n' => '\n',
                    'f' => '\u{c}',
                    'r' => '\r',
                    kind @ ('x' | 'u') => {
                        let digits: String = chars
                            .by_ref()
                            .take(if kind == 'x' { 2 } else { 4 })
                            .collect();
                        let code = u32::from_str_radix(&digits, 16).expect("hex");
                        char::from_u32(code).expect("a char")
                    }
                    other => panic!("unexpected escape \\{other}"),
                },
                '-' => {
                    single.push('-');
                    continue;
                }
                c => c,
            };
            single.push(c);
        }
        let mut ranges = Vec::new();
        let mut i = 0;
        while i < single.len() {
            if single.get(i + 1) == Some(&'-') {
                ranges.push((single[i], single[i + 2]));
                i += 3;
            } else {
                ranges.push((single[i], single[i]));
                i += 1;
            }
        }
        ranges
    }

    #[test]
    fn the_forbidden_pattern_is_rusts_control_characters() {
        let (c0, c1) = (0x00..=0x1F, 0x7F..=0x9F);
        assert_eq!(NAME_FORBIDDEN, r"[\u0000-\u001F\u007F-\u009F]");
        for c in (0..=0x10_FFFF).filter_map(char::from_u32) {
            let code = u32::from(c);
            let named = c0.contains(&code) || c1.contains(&code);
            assert_eq!(named, c.is_control(), "U+{code:04X}");
        }
    }

    #[test]
    fn the_name_pattern_is_rusts_white_space() {
        let spaces = pattern_spaces();
        for c in (0..=0x10_FFFF).filter_map(char::from_u32) {
            let in_pattern = spaces.iter().any(|&(lo, hi)| (lo..=hi).contains(&c));
            assert_eq!(in_pattern, c.is_whitespace(), "U+{:04X}", u32::from(c));
        }
    }
}
