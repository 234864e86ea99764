//! The plain objects of the web package, as Rust types (wasm only).
//!
//! Each type here is the one definition of a shape JavaScript sees:
//! `#[derive(Tsify)]` writes its TypeScript declaration, doc comments
//! included, into the package's `likekit_wasm.d.ts`, following the serde
//! attributes (`rename_all = "camelCase"`, `untagged`, optional fields).
//! The outgoing types are made from the core's (`From`) and written by
//! [`js::Write`]; the incoming ones are read by [`FromJs`], whose error
//! names the field that is wrong. Both are written by hand at the end of
//! this file, with `Reflect`, each naming the fields of its type once: a
//! general converter (serde-wasm-bindgen) cost a fifth of the package.
//! The drift test (`tests/drift.rs`) holds every one of them to what
//! serde-wasm-bindgen makes of the same value through the same serde
//! attributes the declarations come from. The serde derives stay for that
//! test; nothing in the package calls them, so they add no code to it.
//!
//! The doc comments of the types and fields are the TypeScript
//! declarations' documentation, so they speak of JavaScript names
//! (`postId`, `number`); notes for Rust readers are `//` comments.
//!
//! The `Error` objects named `LikeError` are made here too ([`error`],
//! [`invalid_argument`]), from [`LikeErrorFields`], as is a count written
//! as a JavaScript number ([`number`]), whose failure is such an error.
//!
//! What cannot be derived stays in `types.d.ts`: the `LikeError` interface
//! (an `Error` object, not a plain one), `LikeErrorCode`, `PostIdInput`
//! (a `bigint` has no serde form), the callback types and
//! `JournalStorage` (a host object).

use js_sys::Object;
use likekit_core::LikeError;
use likekit_core::wire::{LikeState, PostLikes};
use serde::{Deserialize, Serialize};
use tsify::{Ts, Tsify};
use wasm_bindgen::{JsCast, JsValue};

use crate::args;
use crate::js::{self, Fields, Read, Write, Writer};

/// A plain object for JavaScript from `value`, typed for the signature.
///
/// # Errors
///
/// A `LikeError` (`invalid_response`) if a number in it is past
/// `Number.MAX_SAFE_INTEGER`, which no count the server sends comes near.
pub fn to_js<T: Tsify + Write>(value: &T) -> Result<Ts<T>, JsValue> {
    value.write().map(Ts::new_unchecked)
}

/// An object argument read as its type; `what` names it in errors.
///
/// # Errors
///
/// A sentence naming the field that is wrong: `{ timeoutMs: "10" }` as
/// `"options"` gives `"options.timeoutMs: invalid type: string \"10\",
/// expected f64"`.
pub trait FromJs: Sized {
    /// Reads `value`.
    ///
    /// # Errors
    ///
    /// As the trait says.
    fn read_js(value: &JsValue, what: &str) -> Result<Self, String>;
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
    #[serde(with = "tsify::serde_wasm_bindgen::preserve")]
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
            error: view.error.as_ref().map_or(JsValue::NULL, error),
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
    /// Whether sending the same call again may succeed (the client retries these): `network`, `timeout`, `invalid_response`, `rate_limited`, and server errors (5xx, 408 and 425, which may have been applied even so).
    pub transient: bool,
    /// The HTTP status the error stands for: a server error's or refusal's own, 401, 403, 404 or 429 for `unauthorized`, `forbidden`, `post_not_found` and `rate_limited`; absent when no answer was classified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The server's `Retry-After`, for `"rate_limited"`. One longer than the retry policy's ceiling (one minute, or `retry.maxDelayMs` when that is longer) ends the retries at once.
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

/// The error code for arguments of the wrong type or range.
pub const INVALID_ARGUMENT: &str = "invalid_argument";

/// An `Error` named `LikeError` with `message` and `fields` (`code`,
/// `transient`, and `status` or `retryAfterMs` when the error has them).
fn like_error(message: &str, fields: &LikeErrorFields) -> JsValue {
    let err = js_sys::Error::new(message);
    err.set_name("LikeError");
    // Fails only for a `retryAfterMs` past `Number.MAX_SAFE_INTEGER`.
    if let Ok(fields) = fields.write() {
        Object::assign(&err, fields.unchecked_ref());
    }
    err.into()
}

/// The `LikeError` object for a core error.
pub fn error(e: &LikeError) -> JsValue {
    like_error(&e.to_string(), &e.into())
}

/// A `LikeError` for an argument JavaScript passed wrongly.
pub fn invalid_argument(message: &str) -> JsValue {
    like_error(
        message,
        &LikeErrorFields {
            code: INVALID_ARGUMENT.to_owned(),
            transient: false,
            status: None,
            retry_after_ms: None,
        },
    )
}

/// A `LikeError` with code `config`.
pub fn config_error(message: String) -> JsValue {
    error(&LikeError::Config { message })
}

/// A count as a JavaScript number.
///
/// # Errors
///
/// A `LikeError` (`invalid_response`) past `Number.MAX_SAFE_INTEGER`, where
/// the number would not be exact.
pub fn number(n: u64) -> Result<JsValue, JsValue> {
    if n <= args::MAX_SAFE_INTEGER as u64 {
        // Exact: at most 2^53 − 1.
        #[allow(clippy::cast_precision_loss)]
        Ok(JsValue::from_f64(n as f64))
    } else {
        Err(error(&LikeError::InvalidResponse {
            message: format!("{n} is past Number.MAX_SAFE_INTEGER"),
        }))
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
    #[serde(with = "tsify::serde_wasm_bindgen::preserve")]
    #[tsify(type = "LikeError")]
    pub error: JsValue,
}

impl From<&likekit_core::LikeFailure> for LikeFailure {
    fn from(failure: &likekit_core::LikeFailure) -> Self {
        Self {
            post_id: failure.post_id.into(),
            wanted: failure.wanted,
            message: failure.to_string(),
            error: error(&failure.error),
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

/// How failed calls are retried; every field is optional, and a key that
/// is none of them is refused.
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

/// Options of `new LikeClient(baseUrl, options)`; every field is optional,
/// and a key that is none of them (a misspelt `tokn`) is refused with
/// `config`.
#[derive(Debug, Clone, Default, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct LikeClientOptions {
    /// A fixed token, or a callback that returns the current one.
    #[serde(default, with = "tsify::serde_wasm_bindgen::preserve")]
    #[tsify(optional, type = "string | TokenCallback")]
    pub token: JsValue,
    // Read on its own by `convert::options`, so that its errors name its
    // fields too.
    #[serde(default, with = "tsify::serde_wasm_bindgen::preserve")]
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
    /// Where to keep the viewer's unconfirmed taps across page loads (see `restore()`); none by default.
    #[serde(default, with = "tsify::serde_wasm_bindgen::preserve")]
    #[tsify(optional, type = "IntentJournalOptions")]
    pub journal: JsValue,
    /// How old an unconfirmed tap may be and still be sent, in milliseconds (default one day): older ones fail with `expired`.
    #[tsify(optional)]
    pub max_intent_age_ms: Option<f64>,
    /// Keep a tap pending while the network fails, retrying every this many milliseconds, instead of rolling it back once the retries run out (default: roll back).
    #[tsify(optional)]
    pub keep_while_offline_ms: Option<f64>,
}

/// The journal option: the viewer's unconfirmed taps kept in a `Storage`
/// (`localStorage` by default) under the key `likekit-intents:<viewer>`.
/// Other keys are refused.
#[derive(Debug, Clone, Default, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct IntentJournalOptions {
    /// The signed-in viewer (the user id, say): written in the journal and checked, so one viewer's taps are never sent with another's token.
    pub viewer: String,
    /// Where: `localStorage` (the default), `sessionStorage`, or any object with `getItem`, `setItem` and `removeItem`. Where there is no `localStorage` (Node) or reading it throws (site data blocked, a sandboxed frame), the client is made without a journal, and `restore().problem` and `journalProblem()` say why (`journal_unreadable`).
    #[serde(default, with = "tsify::serde_wasm_bindgen::preserve")]
    #[tsify(optional, type = "JournalStorage")]
    pub storage: JsValue,
}

/// What the journal held when the client was made (`restore()`).
#[derive(Debug, Clone, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct RestoreReport {
    /// The posts restored, each showing its tap, pending; their calls are on their way.
    pub restored: Vec<PostView>,
    /// The taps too old to send: each was dropped, and listeners heard one failure (`expired`) for it.
    pub expired: Vec<LikeFailure>,
    /// Why the journal could not be read, if it could not; the client started without what it held. Content that cannot be used (damaged, another viewer's, a newer format: `journal_damaged`) is replaced by the next save; storage that could not be read at all (`getItem` threw, or there is no `localStorage`: `journal_unreadable`) is left untouched, and this client keeps no journal (`journalProblem()` keeps saying so).
    #[serde(with = "tsify::serde_wasm_bindgen::preserve")]
    #[tsify(type = "LikeError | null")]
    pub problem: JsValue,
}

impl From<&likekit_core::RestoreReport> for RestoreReport {
    fn from(report: &likekit_core::RestoreReport) -> Self {
        Self {
            restored: report.restored.iter().map(PostView::from).collect(),
            expired: report.expired.iter().map(LikeFailure::from).collect(),
            problem: report.problem.as_ref().map_or(JsValue::NULL, error),
        }
    }
}

impl Write for RestoreReport {
    fn write(&self) -> Result<JsValue, JsValue> {
        let Self {
            restored,
            expired,
            problem,
        } = self;
        let list = |items: Vec<Result<JsValue, JsValue>>| {
            items
                .into_iter()
                .collect::<Result<js_sys::Array, JsValue>>()
                .map(JsValue::from)
        };
        Ok(Writer::new()
            .field(
                "restored",
                &list(restored.iter().map(Write::write).collect())?,
            )
            .field(
                "expired",
                &list(expired.iter().map(Write::write).collect())?,
            )
            .field("problem", problem)
            .finish())
    }
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
// status.
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
    pub fn from_js(value: &JsValue) -> Result<Self, String> {
        if value.is_string() {
            ScriptedFailureKind::read(value)
                .map(Self::Kind)
                .map_err(|reason| format!("failure: {reason}"))
        } else {
            ScriptedStatus::read_js(value, "failure").map(Self::Status)
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

// ------------------------------------------------- the conversions by hand
//
// Each names the fields of its type once, in the type's order (the
// destructuring makes a field added to the type a compile error here), and
// the drift test in `tests/drift.rs` holds each to serde-wasm-bindgen's
// output or reading of the same value.

impl Write for PostId {
    fn write(&self) -> Result<JsValue, JsValue> {
        Ok(match self {
            Self::Number(n) => JsValue::from_f64(*n),
            Self::Text(digits) => JsValue::from_str(digits),
        })
    }
}

impl Write for LikeLineParts {
    fn write(&self) -> Result<JsValue, JsValue> {
        let Self {
            you,
            friends,
            others,
            total,
        } = self;
        Ok(Writer::new()
            .field("you", &JsValue::from_bool(*you))
            .field("friends", &js::strings(friends))
            .field("others", &number(*others)?)
            .field("total", &number(*total)?)
            .finish())
    }
}

impl Write for PostView {
    fn write(&self) -> Result<JsValue, JsValue> {
        let Self {
            post_id,
            liked,
            count,
            friends,
            line,
            line_parts,
            pending,
            error,
        } = self;
        Ok(Writer::new()
            .field("postId", &post_id.write()?)
            .field("liked", &JsValue::from_bool(*liked))
            .field("count", &number(*count)?)
            .field("friends", &js::strings(friends))
            .field("line", &JsValue::from_str(line))
            .field("lineParts", &line_parts.write()?)
            .field("pending", &JsValue::from_bool(*pending))
            .field("error", error)
            .finish())
    }
}

impl Write for LikeErrorFields {
    fn write(&self) -> Result<JsValue, JsValue> {
        let Self {
            code,
            transient,
            status,
            retry_after_ms,
        } = self;
        let mut out = Writer::new()
            .field("code", &JsValue::from_str(code))
            .field("transient", &JsValue::from_bool(*transient));
        if let Some(status) = status {
            out = out.field("status", &JsValue::from(*status));
        }
        if let Some(ms) = retry_after_ms {
            out = out.field("retryAfterMs", &number(*ms)?);
        }
        Ok(out.finish())
    }
}

impl Write for LikeFailure {
    fn write(&self) -> Result<JsValue, JsValue> {
        let Self {
            post_id,
            wanted,
            message,
            error,
        } = self;
        Ok(Writer::new()
            .field("postId", &post_id.write()?)
            .field("wanted", &JsValue::from_bool(*wanted))
            .field("message", &JsValue::from_str(message))
            .field("error", error)
            .finish())
    }
}

impl Write for LikeEvent {
    fn write(&self) -> Result<JsValue, JsValue> {
        let (post_id, kind, field, value) = match self {
            Self::Changed {
                post_id,
                kind,
                view,
            } => (post_id, kind, "view", view.write()?),
            Self::Failed {
                post_id,
                kind,
                failure,
            } => (post_id, kind, "failure", failure.write()?),
        };
        Ok(Writer::new()
            .field("postId", &post_id.write()?)
            .field("kind", &JsValue::from_str(kind))
            .field(field, &value)
            .finish())
    }
}

impl Write for LikeStats {
    fn write(&self) -> Result<JsValue, JsValue> {
        let Self {
            taps,
            calls_sent,
            intents_sent,
            coalesced,
            retries,
            rollbacks,
            evictions,
        } = self;
        Ok(Writer::new()
            .field("taps", &number(*taps)?)
            .field("callsSent", &number(*calls_sent)?)
            .field("intentsSent", &number(*intents_sent)?)
            .field("coalesced", &number(*coalesced)?)
            .field("retries", &number(*retries)?)
            .field("rollbacks", &number(*rollbacks)?)
            .field("evictions", &number(*evictions)?)
            .finish())
    }
}

impl Write for ScriptedCall {
    fn write(&self) -> Result<JsValue, JsValue> {
        let Self {
            id,
            post_id,
            like,
            text,
        } = self;
        Ok(Writer::new()
            .field("id", &number(*id)?)
            .field("postId", &post_id.write()?)
            .field("like", &JsValue::from_bool(*like))
            .field("text", &JsValue::from_str(text))
            .finish())
    }
}

impl FromJs for RetryOptions {
    fn read_js(value: &JsValue, what: &str) -> Result<Self, String> {
        let fields = Fields::of(value, what)?;
        fields.only(&[
            "minDelayMs",
            "maxDelayMs",
            "factor",
            "maxRetries",
            "jitter",
            "seed",
        ])?;
        Ok(Self {
            min_delay_ms: fields.optional("minDelayMs")?,
            max_delay_ms: fields.optional("maxDelayMs")?,
            factor: fields.optional("factor")?,
            max_retries: fields.optional("maxRetries")?,
            jitter: fields.optional("jitter")?,
            seed: fields.optional("seed")?,
        })
    }
}

impl FromJs for LikeClientOptions {
    fn read_js(value: &JsValue, what: &str) -> Result<Self, String> {
        let fields = Fields::of(value, what)?;
        fields.only(&[
            "token",
            "retry",
            "timeoutMs",
            "maxPosts",
            "maxAnswerBytes",
            "journal",
            "maxIntentAgeMs",
            "keepWhileOfflineMs",
        ])?;
        Ok(Self {
            token: fields.raw("token"),
            retry: fields.raw("retry"),
            timeout_ms: fields.optional("timeoutMs")?,
            max_posts: fields.optional("maxPosts")?,
            max_answer_bytes: fields.optional("maxAnswerBytes")?,
            journal: fields.raw("journal"),
            max_intent_age_ms: fields.optional("maxIntentAgeMs")?,
            keep_while_offline_ms: fields.optional("keepWhileOfflineMs")?,
        })
    }
}

impl FromJs for IntentJournalOptions {
    fn read_js(value: &JsValue, what: &str) -> Result<Self, String> {
        let fields = Fields::of(value, what)?;
        fields.only(&["viewer", "storage"])?;
        Ok(Self {
            viewer: fields.required("viewer")?,
            storage: fields.raw("storage"),
        })
    }
}

impl FromJs for ScriptedLikes {
    fn read_js(value: &JsValue, what: &str) -> Result<Self, String> {
        let fields = Fields::of(value, what)?;
        Ok(Self {
            count: fields.required("count")?,
            liked_by_me: fields.required("likedByMe")?,
            friends: fields.or_default("friends")?,
            version: fields.required("version")?,
        })
    }
}

impl FromJs for ScriptedState {
    fn read_js(value: &JsValue, what: &str) -> Result<Self, String> {
        let fields = Fields::of(value, what)?;
        Ok(Self {
            count: fields.required("count")?,
            liked_by_me: fields.required("likedByMe")?,
            version: fields.required("version")?,
        })
    }
}

impl FromJs for ScriptedStatus {
    fn read_js(value: &JsValue, what: &str) -> Result<Self, String> {
        let fields = Fields::of(value, what)?;
        Ok(Self {
            status: fields.required("status")?,
            retry_after_ms: fields.optional("retryAfterMs")?,
            code: fields.optional("code")?,
        })
    }
}

impl Read for ScriptedFailureKind {
    fn read(value: &JsValue) -> Result<Self, String> {
        let text = String::read(value)?;
        match text.as_str() {
            "network" => Ok(Self::Network),
            "timeout" => Ok(Self::Timeout),
            "unreadable" => Ok(Self::Unreadable),
            _ => Err(format!(
                "unknown variant `{text}`, expected one of `network`, `timeout`, `unreadable`"
            )),
        }
    }
}
