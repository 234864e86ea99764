//! Checks on the numbers JavaScript hands in. Pure Rust, so they are tested
//! on the host as well as in the wasm tests.
//!
//! JavaScript has one number type, a 64-bit float, which holds every whole
//! number up to 2^53 − 1 (`Number.MAX_SAFE_INTEGER`) exactly. Post ids and
//! counts cross the boundary as such numbers.

use std::time::Duration;

use likekit_core::PostId;

/// `Number.MAX_SAFE_INTEGER`: the largest whole number a JavaScript number
/// holds exactly.
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// A post id from a JavaScript number: a whole number from 1 to
/// [`MAX_SAFE_INTEGER`].
///
/// ```
/// use likekit_wasm::args::post_id;
/// assert_eq!(post_id(42.0), Ok(42));
/// assert!(post_id(0.0).is_err());
/// assert!(post_id(1.5).is_err());
/// assert!(post_id(f64::NAN).is_err());
/// ```
///
/// # Errors
///
/// A sentence naming the value, for the JavaScript error's message.
pub fn post_id(value: f64) -> Result<PostId, String> {
    match whole(value) {
        Some(id) if id >= 1 => Ok(id),
        _ => Err(format!(
            "a post id must be a whole number from 1 to Number.MAX_SAFE_INTEGER, not {}",
            show(value)
        )),
    }
}

/// A count (retries, cache size, a seed) from a JavaScript number: a whole
/// number from 0 to [`MAX_SAFE_INTEGER`].
///
/// ```
/// assert_eq!(likekit_wasm::args::count(3.0, "retry.maxRetries"), Ok(3));
/// assert!(likekit_wasm::args::count(-1.0, "retry.maxRetries").is_err());
/// ```
///
/// # Errors
///
/// A sentence naming the option and the value.
pub fn count(value: f64, what: &str) -> Result<u64, String> {
    whole(value).ok_or_else(|| {
        format!(
            "{what} must be a whole number from 0 to Number.MAX_SAFE_INTEGER, not {}",
            show(value)
        )
    })
}

/// A duration from a number of milliseconds (fractions allowed): finite and
/// not negative.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(likekit_wasm::args::millis(1.5, "timeoutMs"), Ok(Duration::from_micros(1500)));
/// assert!(likekit_wasm::args::millis(f64::INFINITY, "timeoutMs").is_err());
/// ```
///
/// # Errors
///
/// A sentence naming the option and the value.
pub fn millis(value: f64, what: &str) -> Result<Duration, String> {
    if (0.0..=MAX_SAFE_INTEGER).contains(&value) {
        Ok(Duration::from_secs_f64(value / 1000.0))
    } else {
        Err(format!(
            "{what} must be a number of milliseconds, 0 or more, not {}",
            show(value)
        ))
    }
}

/// A positive, finite number (the backoff factor).
///
/// ```
/// assert_eq!(likekit_wasm::args::positive(2.0, "retry.factor"), Ok(2.0));
/// assert!(likekit_wasm::args::positive(0.0, "retry.factor").is_err());
/// ```
///
/// # Errors
///
/// A sentence naming the option and the value.
pub fn positive(value: f64, what: &str) -> Result<f32, String> {
    if value.is_finite() && value > 0.0 && value <= f64::from(f32::MAX) {
        // Narrowing is the point: the core's factor is an f32.
        #[allow(clippy::cast_possible_truncation)]
        Ok(value as f32)
    } else {
        Err(format!(
            "{what} must be a positive number, not {}",
            show(value)
        ))
    }
}

/// The number as a whole number from 0 to [`MAX_SAFE_INTEGER`], if it is one.
fn whole(value: f64) -> Option<u64> {
    let exact = value.is_finite() && value.fract() == 0.0;
    // The checks above make the cast exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (exact && (0.0..=MAX_SAFE_INTEGER).contains(&value)).then_some(value as u64)
}

/// A number as JavaScript would print it.
fn show(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        value.to_string()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn post_ids_are_safe_whole_numbers_from_one() {
        assert_eq!(post_id(1.0), Ok(1));
        assert_eq!(post_id(MAX_SAFE_INTEGER), Ok(9_007_199_254_740_991));
        for bad in [
            0.0,
            -1.0,
            -0.5,
            0.5,
            42.000_001,
            MAX_SAFE_INTEGER + 1.0,
            1e300,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let err = post_id(bad).unwrap_err();
            assert!(err.starts_with("a post id must be"), "{bad}: {err}");
        }
        assert!(post_id(f64::NAN).unwrap_err().ends_with("not NaN"));
        assert!(post_id(-1.0).unwrap_err().ends_with("not -1"));
    }

    #[test]
    fn negative_zero_is_not_a_post_id_but_is_a_count() {
        assert!(post_id(-0.0).is_err());
        assert_eq!(count(-0.0, "x"), Ok(0));
    }

    #[test]
    fn counts_and_durations() {
        assert_eq!(count(0.0, "maxPosts"), Ok(0));
        assert!(count(2.5, "maxPosts").unwrap_err().contains("maxPosts"));
        assert_eq!(millis(0.0, "t"), Ok(Duration::ZERO));
        assert_eq!(millis(2000.0, "t"), Ok(Duration::from_secs(2)));
        assert!(millis(-1.0, "timeoutMs").unwrap_err().contains("timeoutMs"));
        assert!(millis(f64::NAN, "t").is_err());
        assert!(positive(f64::NAN, "f").is_err());
        assert!(positive(-2.0, "f").is_err());
        assert_eq!(positive(1.5, "f"), Ok(1.5));
    }
}
