//! The plain objects of the web package, as Rust types (wasm only).
//!
//! Each type here is the one definition of a shape JavaScript sees: serde
//! (with `rename_all = "camelCase"`) says how it is written and read, and
//! `#[derive(Tsify)]` writes its TypeScript declaration, doc comments
//! included, into the package's `likekit_wasm.d.ts`. serde-wasm-bindgen
//! does the converting ([`to_js`], [`from_js`]), so no shape is restated by
//! hand. The outgoing types are made from the core's (`From`); the incoming
//! ones are read by [`from_js`], whose error names the field that is wrong.
//!
//! The doc comments of the types and fields are the TypeScript
//! declarations' documentation, so they speak of JavaScript names
//! (`postId`, `number`); notes for Rust readers are `//` comments.
//!
//! What cannot be derived stays in `types.d.ts`: the `LikeError` interface
//! (an `Error` object, not a plain one), `LikeErrorCode`, `PostIdInput`
//! (a `bigint` has no serde form) and the callback types.

use js_sys::{Array, Object, Reflect};
use likekit_core::wire::{LikeState, PostLikes};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tsify::{Ts, Tsify};
use wasm_bindgen::{JsCast, JsValue};

use crate::args;
use crate::convert;

/// A plain object for JavaScript from `value`.
///
/// # Errors
///
/// A `LikeError` (`invalid_response`) if a number in it is past
/// `Number.MAX_SAFE_INTEGER`, which no count the server sends comes near.
pub fn to_js<T: Tsify + Serialize>(value: &T) -> Result<Ts<T>, JsValue> {
    match value.into_js() {
        Ok(js) => Ok(Ts::new_unchecked(js.into())),
        Err(e) => Err(convert::error(&likekit_core::LikeError::InvalidResponse {
            message: message(e),
        })),
    }
}

/// Reads `value` as a `T`; `what` names the argument in the error.
///
/// serde's errors do not say which field they are about, so when `value`
/// is refused, each of its fields is tried alone (an object of that one
/// field), and the first that is refused for a reason other than another
/// field missing is named: `{ timeoutMs: "10" }` as `"options"` gives
/// `"options.timeoutMs: invalid type: string \"10\", expected f64"`. That
/// costs nothing unless the value is wrong, and far less code than a
/// deserializer that tracks its path.
///
/// # Errors
///
/// A sentence naming the field of the wrong type, when there is one.
pub fn from_js<T: DeserializeOwned>(value: JsValue, what: &str) -> Result<T, String> {
    serde_wasm_bindgen::from_value(value.clone()).map_err(|error| {
        let refused = |alone: JsValue| {
            serde_wasm_bindgen::from_value::<T>(alone)
                .err()
                .map(message)
        };
        name_the_field(&value, what, &message(error), &refused)
    })
}

/// The sentence of a serde-wasm-bindgen error (a JavaScript `Error`), without
/// the `"Error: "` its `Display` starts with.
fn message(error: serde_wasm_bindgen::Error) -> String {
    let error = JsValue::from(error);
    match error.dyn_ref::<js_sys::Error>() {
        Some(error) => error.message().into(),
        None => format!("{error:?}"),
    }
}

/// The error sentence for `value`, refused with `error`: names the first
/// field that `refused` refuses alone (see [`from_js`]). Not generic, so
/// that its code is in the package once.
fn name_the_field(
    value: &JsValue,
    what: &str,
    error: &str,
    refused: &dyn Fn(JsValue) -> Option<String>,
) -> String {
    if value.is_object() {
        for entry in Object::entries(value.unchecked_ref()) {
            let entry: Array = entry.unchecked_into();
            let (field, field_value) = (entry.get(0), entry.get(1));
            let alone = Object::new();
            // Cannot fail: `alone` is a plain object made here.
            let _ = Reflect::set(&alone, &field, &field_value);
            if let Some(e) = refused(alone.into()) {
                if !e.starts_with("missing field") {
                    let field = field.as_string().unwrap_or_default();
                    return format!("{what}.{field}: {e}");
                }
            }
        }
    }
    format!("{what}: {error}")
}

// ---------------------------------------------------------------- out

/// A post id as LikeKit hands it back (`PostView.postId`, events,
/// failures). Post ids are whole numbers from 1 to 2^63 − 1
/// (9223372036854775807), more than a JavaScript number holds exactly, so
/// an id is a `number` when it is at most `Number.MAX_SAFE_INTEGER`
/// (2^53 − 1) and otherwise its decimal `string` ("9223372036854775807"),
/// never a rounded number.
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[serde(untagged)]
pub enum PostId {
    /// At most `Number.MAX_SAFE_INTEGER`.
    Number(f64),
    /// Past `Number.MAX_SAFE_INTEGER`: the decimal digits.
    Text(String),
}

impl From<likekit_core::PostId> for PostId {
    fn from(id: likekit_core::PostId) -> Self {
        args::exact_number(id).map_or_else(|| Self::Text(id.to_string()), Self::Number)
    }
}

/// The parts of the "Liked by …" line, for building a localised sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
pub struct LikeLineParts {
    /// The viewer likes the post.
    pub you: bool,
    /// Friends to name, newest first (at most two).
    pub friends: Vec<String>,
    /// Everyone else who likes the post.
    pub others: u64,
    /// Everyone who likes the post: `you + friends.length + others`.
    pub total: u64,
}

impl From<&likekit_core::LikeLine> for LikeLineParts {
    fn from(line: &likekit_core::LikeLine) -> Self {
        Self {
            you: line.you,
            friends: line.friends.clone(),
            others: line.others,
            total: line.total,
        }
    }
}

/// What a post's heart, count and line show right now, for the viewer.
#[derive(Debug, Clone, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct PostView {
    pub post_id: PostId,
    /// Whether the heart is filled.
    pub liked: bool,
    /// The count to show under the heart.
    pub count: u64,
    /// The viewer's friends among the post's recent likers, newest first.
    pub friends: Vec<String>,
    /// The line in English: "Liked by Ana and 1,203 others"; "" at 0 likes.
    pub line: String,
    /// The same line in parts.
    pub line_parts: LikeLineParts,
    /// A like or unlike is on its way (or waiting to be retried).
    pub pending: bool,
    /// Why the viewer's last tap did not save, until the next tap or answer.
    #[serde(with = "serde_wasm_bindgen::preserve")]
    #[tsify(type = "LikeError | null")]
    pub error: JsValue,
}

impl From<&likekit_core::PostView> for PostView {
    fn from(view: &likekit_core::PostView) -> Self {
        Self {
            post_id: view.post_id.into(),
            liked: view.liked,
            count: view.count,
            friends: view.friends.clone(),
            line: view.line.to_string(),
            line_parts: (&view.line).into(),
            pending: view.pending,
            error: view.error.as_ref().map_or(JsValue::NULL, convert::error),
        }
    }
}

/// The fields a `LikeError` has besides `name` and `message` (see
/// `LikeError`).
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct LikeErrorFields {
    #[tsify(type = "LikeErrorCode")]
    pub code: String,
    /// Whether sending the same call again may succeed (the client retries these).
    pub transient: bool,
    /// The HTTP status the error stands for: a server error's or refusal's own, 401, 403, 404 or 429 for `unauthorized`, `forbidden`, `post_not_found` and `rate_limited`; absent when no answer was classified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The server's `Retry-After`, for `"rate_limited"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl From<&likekit_core::LikeError> for LikeErrorFields {
    fn from(e: &likekit_core::LikeError) -> Self {
        Self {
            code: e.code().to_owned(),
            transient: e.is_transient(),
            status: e.status(),
            retry_after_ms: e
                .retry_after()
                .map(|wait| u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)),
        }
    }
}

/// The viewer's latest like or unlike did not save and was rolled back.
#[derive(Debug, Clone, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct LikeFailure {
    pub post_id: PostId,
    /// `true` for a like, `false` for an unlike.
    pub wanted: bool,
    /// A sentence for the UI: "Your like didn't save: the request timed out".
    pub message: String,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    #[tsify(type = "LikeError")]
    pub error: JsValue,
}

impl From<&likekit_core::LikeFailure> for LikeFailure {
    fn from(failure: &likekit_core::LikeFailure) -> Self {
        Self {
            post_id: failure.post_id.into(),
            wanted: failure.wanted,
            message: failure.to_string(),
            error: convert::error(&failure.error),
        }
    }
}

/// What a listener hears: a change to redraw, or a failure to tell.
#[derive(Debug, Clone, Serialize, Tsify)]
#[serde(untagged)]
pub enum LikeEvent {
    Changed {
        #[serde(rename = "postId")]
        post_id: PostId,
        #[tsify(type = "\"changed\"")]
        kind: &'static str,
        view: PostView,
    },
    Failed {
        #[serde(rename = "postId")]
        post_id: PostId,
        #[tsify(type = "\"failed\"")]
        kind: &'static str,
        failure: LikeFailure,
    },
}

impl From<&likekit_core::LikeEvent> for LikeEvent {
    fn from(event: &likekit_core::LikeEvent) -> Self {
        let post_id = event.post_id().into();
        match event {
            likekit_core::LikeEvent::Changed(view) => Self::Changed {
                post_id,
                kind: "changed",
                view: view.into(),
            },
            likekit_core::LikeEvent::Failed(failure) => Self::Failed {
                post_id,
                kind: "failed",
                failure: failure.into(),
            },
        }
    }
}

/// Counters since the client was made.
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct LikeStats {
    /// Taps (`setLiked`, `toggle`) seen.
    pub taps: u64,
    /// Calls sent, retries included.
    pub calls_sent: u64,
    /// Calls sent for a new tap (not retries).
    pub intents_sent: u64,
    /// Taps that needed no call of their own.
    pub coalesced: u64,
    /// Calls sent again after a transient failure.
    pub retries: u64,
    /// Taps rolled back with a failure.
    pub rollbacks: u64,
    /// Posts forgotten to stay within `maxPosts`.
    pub evictions: u64,
}

impl From<&likekit_core::Stats> for LikeStats {
    fn from(stats: &likekit_core::Stats) -> Self {
        Self {
            taps: stats.taps,
            calls_sent: stats.calls_sent,
            intents_sent: stats.intents_sent,
            coalesced: stats.coalesced,
            retries: stats.retries,
            rollbacks: stats.rollbacks,
            evictions: stats.evictions,
        }
    }
}

/// A like or unlike call waiting for the test's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ScriptedCall {
    /// 0 for the first call the server saw, then 1, 2…
    pub id: u64,
    pub post_id: PostId,
    /// `true` for a like (POST), `false` for an unlike (DELETE).
    pub like: bool,
    /// `"like 42 #0"`, as the conformance scenarios write it.
    pub text: String,
}

impl From<&likekit_core::ScriptedCall> for ScriptedCall {
    fn from(call: &likekit_core::ScriptedCall) -> Self {
        Self {
            id: call.id,
            post_id: call.post.into(),
            like: call.action == likekit_core::Action::Like,
            text: call.to_string(),
        }
    }
}

// ---------------------------------------------------------------- in

/// How failed calls are retried; every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct RetryOptions {
    /// The first retry's delay before jitter (default 500).
    #[tsify(optional)]
    pub min_delay_ms: Option<f64>,
    /// The longest delay before jitter (default 8000).
    #[tsify(optional)]
    pub max_delay_ms: Option<f64>,
    /// How much each delay grows (default 2).
    #[tsify(optional)]
    pub factor: Option<f64>,
    /// Retries after the first attempt; 0 never retries (default 4).
    #[tsify(optional)]
    pub max_retries: Option<f64>,
    /// Add 0–100 % random jitter to each delay (default true).
    #[tsify(optional)]
    pub jitter: Option<bool>,
    /// Seed the jitter, for reproducible tests.
    #[tsify(optional)]
    pub seed: Option<f64>,
}

/// Options of `new LikeClient(baseUrl, options)`; every field is optional.
#[derive(Debug, Clone, Default, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct LikeClientOptions {
    /// A fixed token, or a callback that returns the current one.
    #[serde(default, with = "serde_wasm_bindgen::preserve")]
    #[tsify(optional, type = "string | TokenCallback")]
    pub token: JsValue,
    // Read on its own by `convert::options`, so that its errors name its
    // fields too.
    #[serde(default, with = "serde_wasm_bindgen::preserve")]
    #[tsify(optional, type = "RetryOptions")]
    pub retry: JsValue,
    /// How long one request may take, answer included (default 10000).
    #[tsify(optional)]
    pub timeout_ms: Option<f64>,
    /// How many posts the client keeps before forgetting idle ones (default 10000).
    #[tsify(optional)]
    pub max_posts: Option<f64>,
    /// The longest answer body the client reads, in bytes (default 16 MiB). A
    /// longer answer fails the call as `invalid_response`; a like or unlike is
    /// then retried, as after any unreadable answer.
    #[tsify(optional)]
    pub max_answer_bytes: Option<f64>,
}

/// A post as a `ScriptedServer`'s reads answer it.
#[derive(Debug, Clone, PartialEq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ScriptedLikes {
    pub count: u64,
    pub liked_by_me: bool,
    /// The viewer's friends among the recent likers, newest first.
    #[serde(default)]
    #[tsify(optional)]
    pub friends: Vec<String>,
    pub version: u64,
}

impl From<ScriptedLikes> for PostLikes {
    fn from(likes: ScriptedLikes) -> Self {
        Self {
            count: likes.count,
            liked_by_me: likes.liked_by_me,
            friends: likes.friends,
            version: likes.version,
        }
    }
}

/// What a `ScriptedServer` answers a like or unlike with.
#[derive(Debug, Clone, PartialEq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ScriptedState {
    pub count: u64,
    pub liked_by_me: bool,
    pub version: u64,
}

impl From<ScriptedState> for LikeState {
    fn from(state: ScriptedState) -> Self {
        Self {
            count: state.count,
            liked_by_me: state.liked_by_me,
            version: state.version,
        }
    }
}

/// How a scripted call fails, classified as a real answer would be: the
/// connection broke, no answer in time, an unreadable 200, or an answer
/// with this HTTP status (`ScriptedStatus`).
// Read by `ScriptedFailure::from_js`: a string is a kind, anything else a
// status. (serde's `untagged` would read it too, but through a buffer of
// every value, which costs the package several kilobytes.)
#[derive(Debug, Clone, PartialEq, Tsify)]
#[serde(untagged)]
pub enum ScriptedFailure {
    Kind(ScriptedFailureKind),
    Status(ScriptedStatus),
}

impl ScriptedFailure {
    /// Reads the `failure` argument of `ScriptedServer.fail`.
    ///
    /// # Errors
    ///
    /// A sentence saying what is wrong with it.
    pub fn from_js(value: JsValue) -> Result<Self, String> {
        if value.is_string() {
            from_js(value, "failure").map(Self::Kind)
        } else {
            from_js(value, "failure").map(Self::Status)
        }
    }
}

/// A scripted failure without an answer: the connection broke, no answer in
/// time, or a 200 whose body cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub enum ScriptedFailureKind {
    Network,
    Timeout,
    Unreadable,
}

/// A scripted answer with this HTTP status (429, 503, 404…).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ScriptedStatus {
    pub status: u16,
    /// The `Retry-After` header, in milliseconds.
    #[tsify(optional)]
    pub retry_after_ms: Option<u64>,
    /// The error body's code; none gives `http_<status>`.
    #[tsify(optional)]
    pub code: Option<String>,
}

impl From<ScriptedFailure> for likekit_core::ScriptedFailure {
    fn from(failure: ScriptedFailure) -> Self {
        match failure {
            ScriptedFailure::Kind(ScriptedFailureKind::Network) => Self::Network,
            ScriptedFailure::Kind(ScriptedFailureKind::Timeout) => Self::Timeout,
            ScriptedFailure::Kind(ScriptedFailureKind::Unreadable) => Self::Unreadable,
            ScriptedFailure::Status(ScriptedStatus {
                status,
                retry_after_ms,
                code,
            }) => Self::Status {
                status,
                retry_after_ms,
                code,
            },
        }
    }
}
