//! Rust values to plain JavaScript objects and back (wasm only). The shapes
//! are the TypeScript interfaces in `types.d.ts`.

use js_sys::{Array, Function, Object, Reflect};
use likekit_core::{
    LikeError, LikeEvent, LikeFailure, LikeLine, PostId, PostView, RetryPolicy, Stats,
};
use wasm_bindgen::{JsCast, JsValue};

use crate::args::{self, PostIdError};

/// The error code for arguments of the wrong type or range.
pub const INVALID_ARGUMENT: &str = "invalid_argument";

fn set(target: &Object, key: &str, value: impl Into<JsValue>) {
    // Cannot fail: `target` is a plain, extensible object made here.
    let _ = Reflect::set(target, &JsValue::from_str(key), &value.into());
}

fn get(source: &JsValue, key: &str) -> JsValue {
    Reflect::get(source, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// A JavaScript number from a count. Counts stay far below 2^53, where
/// every whole number is exact.
#[allow(clippy::cast_precision_loss)]
fn number(n: u64) -> JsValue {
    JsValue::from_f64(n as f64)
}

fn strings(items: &[String]) -> Array {
    items.iter().map(|s| JsValue::from_str(s)).collect()
}

/// An `Error` named `LikeError` with `code` and `transient`, plus `status`
/// or `retryAfterMs` when the error has them.
pub fn error(e: &LikeError) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    err.set_name("LikeError");
    set(&err, "code", e.code());
    set(&err, "transient", e.is_transient());
    if let Some(status) = e.status() {
        set(&err, "status", status);
    }
    if let Some(wait) = e.retry_after() {
        set(&err, "retryAfterMs", number(wait.as_millis() as u64));
    }
    err.into()
}

/// A `LikeError` for an argument JavaScript passed wrongly.
pub fn invalid_argument(message: &str) -> JsValue {
    let err = js_sys::Error::new(message);
    err.set_name("LikeError");
    set(&err, "code", INVALID_ARGUMENT);
    set(&err, "transient", false);
    err.into()
}

/// A `LikeError` with code `config`.
pub fn config_error(message: String) -> JsValue {
    error(&LikeError::Config { message })
}

/// A post id from JavaScript: a number (a safe integer), a decimal string
/// or a `BigInt`, each through [`PostId`]'s constructor (see [`args`]).
///
/// # Errors
///
/// A `LikeError` with code `bad_post_id` for a value that is no post id
/// (zero, negative, a fraction, past 2^63 − 1, not digits), or
/// `invalid_argument` for a number past `Number.MAX_SAFE_INTEGER` or a
/// value of another type.
pub fn post_id(value: &JsValue) -> Result<PostId, JsValue> {
    let id = if let Some(number) = value.as_f64() {
        args::post_id_number(number)
    } else if let Some(text) = value.as_string() {
        args::post_id_text(&text).map_err(PostIdError::from)
    } else if value.is_bigint() {
        // Within i64 as an integer; past it (a 64-bit id above i64::MAX or
        // anything larger) as its digits, which tell the constructor's
        // error as `post_id_integer` would, without 128-bit formatting in
        // the package.
        match i64::try_from(value.clone()) {
            Ok(integer) => PostId::try_from(integer),
            Err(big) => {
                let digits = big
                    .unchecked_ref::<js_sys::BigInt>()
                    .to_string(10)
                    .map(String::from)
                    .unwrap_or_default();
                args::post_id_text(&digits)
            }
        }
        .map_err(PostIdError::from)
    } else {
        return Err(invalid_argument(
            "a post id must be a number, a decimal string or a BigInt",
        ));
    };
    id.map_err(|e| match e {
        PostIdError::Id(e) => error(&LikeError::from(e)),
        PostIdError::Inexact(message) => invalid_argument(&message),
    })
}

/// A post id for JavaScript: a number when the number is exact (at most
/// `Number.MAX_SAFE_INTEGER`), otherwise its decimal string.
pub fn post_id_value(id: PostId) -> JsValue {
    args::exact_number(id).map_or_else(|| JsValue::from_str(&id.to_string()), JsValue::from_f64)
}

fn line_parts(line: &LikeLine) -> Object {
    let parts = Object::new();
    set(&parts, "you", line.you);
    set(&parts, "friends", strings(&line.friends));
    set(&parts, "others", number(line.others));
    set(&parts, "total", number(line.total));
    parts
}

/// A `PostView` object.
pub fn view(view: &PostView) -> JsValue {
    let o = Object::new();
    set(&o, "postId", post_id_value(view.post_id));
    set(&o, "liked", view.liked);
    set(&o, "count", number(view.count));
    set(&o, "friends", strings(&view.friends));
    set(&o, "line", view.line.to_string());
    set(&o, "lineParts", line_parts(&view.line));
    set(&o, "pending", view.pending);
    set(
        &o,
        "error",
        view.error.as_ref().map_or(JsValue::NULL, error),
    );
    o.into()
}

/// A `LikeFailure` object.
pub fn failure(failure: &LikeFailure) -> JsValue {
    let o = Object::new();
    set(&o, "postId", post_id_value(failure.post_id));
    set(&o, "wanted", failure.wanted);
    set(&o, "message", failure.to_string());
    set(&o, "error", error(&failure.error));
    o.into()
}

/// A `LikeEvent` object: `{kind: "changed", postId, view}` or
/// `{kind: "failed", postId, failure}`.
pub fn event(event: &LikeEvent) -> JsValue {
    let o = Object::new();
    set(&o, "postId", post_id_value(event.post_id()));
    match event {
        LikeEvent::Changed(v) => {
            set(&o, "kind", "changed");
            set(&o, "view", view(v));
        }
        LikeEvent::Failed(f) => {
            set(&o, "kind", "failed");
            set(&o, "failure", failure(f));
        }
    }
    o.into()
}

/// A `LikeStats` object.
pub fn stats(stats: &Stats) -> JsValue {
    let o = Object::new();
    set(&o, "taps", number(stats.taps));
    set(&o, "callsSent", number(stats.calls_sent));
    set(&o, "intentsSent", number(stats.intents_sent));
    set(&o, "coalesced", number(stats.coalesced));
    set(&o, "retries", number(stats.retries));
    set(&o, "rollbacks", number(stats.rollbacks));
    set(&o, "evictions", number(stats.evictions));
    o.into()
}

/// How the sign-in token is given in the options.
#[derive(Debug)]
pub enum TokenOption {
    None,
    Fixed(String),
    Callback(Function),
}

/// `LikeClientOptions`, read and checked.
#[derive(Debug)]
pub struct Options {
    pub token: TokenOption,
    pub retry: RetryPolicy,
    pub timeout: Option<std::time::Duration>,
    pub max_posts: Option<usize>,
    pub max_answer_bytes: Option<usize>,
}

/// A field that must be a number when present.
fn number_field(source: &JsValue, key: &str, path: &str) -> Result<Option<f64>, String> {
    let value = get(source, key);
    if value.is_undefined() {
        return Ok(None);
    }
    value
        .as_f64()
        .map(Some)
        .ok_or_else(|| format!("{path} must be a number"))
}

fn object_or_nothing(value: &JsValue, path: &str) -> Result<bool, String> {
    if value.is_undefined() || value.is_null() {
        Ok(false)
    } else if value.is_object() {
        Ok(true)
    } else {
        Err(format!("{path} must be an object"))
    }
}

/// Reads the `options` argument of the constructor (`undefined` or `null`
/// for the defaults).
///
/// # Errors
///
/// A sentence naming the first field of the wrong type or range.
pub fn options(value: &JsValue) -> Result<Options, String> {
    let mut options = Options {
        token: TokenOption::None,
        retry: RetryPolicy::default(),
        timeout: None,
        max_posts: None,
        max_answer_bytes: None,
    };
    if !object_or_nothing(value, "options")? {
        return Ok(options);
    }

    let token = get(value, "token");
    options.token = if token.is_undefined() || token.is_null() {
        TokenOption::None
    } else if let Some(fixed) = token.as_string() {
        TokenOption::Fixed(fixed)
    } else if let Some(callback) = token.dyn_ref::<Function>() {
        TokenOption::Callback(callback.clone())
    } else {
        return Err("options.token must be a string or a function".into());
    };

    if let Some(ms) = number_field(value, "timeoutMs", "options.timeoutMs")? {
        options.timeout = Some(args::millis(ms, "options.timeoutMs")?);
    }
    if let Some(n) = number_field(value, "maxPosts", "options.maxPosts")? {
        let n = args::count(n, "options.maxPosts")?;
        options.max_posts = Some(usize::try_from(n).map_err(|_| "options.maxPosts is too large")?);
    }
    if let Some(n) = number_field(value, "maxAnswerBytes", "options.maxAnswerBytes")? {
        let n = args::count(n, "options.maxAnswerBytes")?;
        options.max_answer_bytes =
            Some(usize::try_from(n).map_err(|_| "options.maxAnswerBytes is too large")?);
    }

    let retry = get(value, "retry");
    if object_or_nothing(&retry, "options.retry")? {
        let policy = &mut options.retry;
        if let Some(ms) = number_field(&retry, "minDelayMs", "options.retry.minDelayMs")? {
            policy.min_delay = args::millis(ms, "options.retry.minDelayMs")?;
        }
        if let Some(ms) = number_field(&retry, "maxDelayMs", "options.retry.maxDelayMs")? {
            policy.max_delay = args::millis(ms, "options.retry.maxDelayMs")?;
        }
        if let Some(f) = number_field(&retry, "factor", "options.retry.factor")? {
            policy.factor = args::positive(f, "options.retry.factor")?;
        }
        if let Some(n) = number_field(&retry, "maxRetries", "options.retry.maxRetries")? {
            let n = args::count(n, "options.retry.maxRetries")?;
            policy.max_retries =
                usize::try_from(n).map_err(|_| "options.retry.maxRetries is too large")?;
        }
        let jitter = get(&retry, "jitter");
        if !jitter.is_undefined() {
            policy.jitter = jitter
                .as_bool()
                .ok_or("options.retry.jitter must be a boolean")?;
        }
        if let Some(seed) = number_field(&retry, "seed", "options.retry.seed")? {
            policy.seed = Some(args::count(seed, "options.retry.seed")?);
        }
    }
    Ok(options)
}

/// The post ids of an iterable (an array, a `Set`…) of post ids as
/// [`post_id`] takes them.
///
/// # Errors
///
/// The `LikeError` to throw when `ids` is not iterable
/// (`invalid_argument`) or holds a value that is not a post id (as
/// [`post_id`]).
pub fn post_ids(ids: &JsValue) -> Result<Vec<PostId>, JsValue> {
    let not_iterable = || invalid_argument("post ids must be an array (or iterable) of post ids");
    let iter = js_sys::try_iter(ids)
        .map_err(|_| not_iterable())?
        .ok_or_else(not_iterable)?;
    let mut out = Vec::new();
    for item in iter {
        out.push(post_id(&item?)?);
    }
    Ok(out)
}
