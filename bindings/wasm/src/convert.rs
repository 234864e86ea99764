//! JavaScript arguments to Rust (wasm only).
//!
//! The plain objects are the types in [`crate::types`], converted by the
//! hand-written conversions next to them, with the `Error` objects named
//! `LikeError`. What stays here is not a plain object: post ids, which may
//! be a `BigInt` and are checked by [`args`], and the options' token, which
//! may be a function.

use js_sys::Function;
use likekit_core::{LikeError, PostId, RetryPolicy};
use wasm_bindgen::{JsCast, JsValue};

use crate::args::{self, PostIdError};
use crate::types::{self, FromJs, error, invalid_argument};

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
    pub journal: Option<crate::journal::WebStorageJournal>,
    pub max_intent_age: Option<std::time::Duration>,
    pub keep_while_offline: Option<std::time::Duration>,
}

/// A count option that must also fit a `usize`.
fn size(value: f64, path: &str) -> Result<usize, String> {
    usize::try_from(args::count(value, path)?).map_err(|_| format!("{path} is too large"))
}

/// Reads and checks the `options` argument of the constructor (`undefined`
/// or `null` for the defaults).
///
/// # Errors
///
/// A sentence naming the first field of the wrong type or range.
pub fn options(value: JsValue) -> Result<Options, String> {
    let given: types::LikeClientOptions = if value.is_undefined() || value.is_null() {
        types::LikeClientOptions::default()
    } else {
        types::LikeClientOptions::read_js(&value, "options")?
    };
    let token = &given.token;
    let token = if token.is_undefined() || token.is_null() {
        TokenOption::None
    } else if let Some(fixed) = token.as_string() {
        TokenOption::Fixed(fixed)
    } else if let Some(callback) = token.dyn_ref::<Function>() {
        TokenOption::Callback(callback.clone())
    } else {
        return Err("options.token must be a string or a function".into());
    };

    let mut retry = RetryPolicy::default();
    let r: types::RetryOptions = if given.retry.is_undefined() || given.retry.is_null() {
        types::RetryOptions::default()
    } else {
        types::RetryOptions::read_js(&given.retry, "options.retry")?
    };
    if let Some(ms) = r.min_delay_ms {
        retry.min_delay = args::millis(ms, "options.retry.minDelayMs")?;
    }
    if let Some(ms) = r.max_delay_ms {
        retry.max_delay = args::millis(ms, "options.retry.maxDelayMs")?;
    }
    if let Some(factor) = r.factor {
        retry.factor = args::positive(factor, "options.retry.factor")?;
    }
    if let Some(n) = r.max_retries {
        retry.max_retries = size(n, "options.retry.maxRetries")?;
    }
    if let Some(jitter) = r.jitter {
        retry.jitter = jitter;
    }
    if let Some(seed) = r.seed {
        retry.seed = Some(args::count(seed, "options.retry.seed")?);
    }
    let journal = if given.journal.is_undefined() || given.journal.is_null() {
        None
    } else {
        let journal = types::IntentJournalOptions::read_js(&given.journal, "options.journal")?;
        Some(crate::journal::WebStorageJournal::new(
            journal.viewer,
            journal.storage,
        ))
    };
    Ok(Options {
        token,
        retry,
        journal,
        max_intent_age: given
            .max_intent_age_ms
            .map(|ms| args::millis(ms, "options.maxIntentAgeMs"))
            .transpose()?,
        keep_while_offline: given
            .keep_while_offline_ms
            .map(|ms| args::millis(ms, "options.keepWhileOfflineMs"))
            .transpose()?,
        timeout: given
            .timeout_ms
            .map(|ms| args::millis(ms, "options.timeoutMs"))
            .transpose()?,
        max_posts: given
            .max_posts
            .map(|n| size(n, "options.maxPosts"))
            .transpose()?,
        max_answer_bytes: given
            .max_answer_bytes
            .map(|n| size(n, "options.maxAnswerBytes"))
            .transpose()?,
    })
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
