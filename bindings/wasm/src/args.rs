//! Checks on the values JavaScript hands in. Pure Rust, so they are tested
//! on the host as well as in the wasm tests.
//!
//! JavaScript has one number type, a 64-bit float, which holds every whole
//! number up to 2^53 − 1 (`Number.MAX_SAFE_INTEGER`) exactly. Counts and
//! times cross the boundary as such numbers. Post ids run to 2^63 − 1, past
//! what a number holds exactly, so a post id may also be given as a decimal
//! string or a `BigInt` ([`post_id_number`], [`post_id_text`],
//! [`post_id_integer`]), and comes back as a number only when the number is
//! exact ([`exact_number`]). Whether a value is a post id is decided by
//! [`PostId`]'s constructor alone; this module adds only what is particular
//! to JavaScript: a number past `Number.MAX_SAFE_INTEGER` may not be the id
//! that was meant, so it is refused.

use std::time::Duration;

use likekit_core::PostId;
use likekit_core::wire::IdError;

/// `Number.MAX_SAFE_INTEGER`: the largest whole number a JavaScript number
/// holds exactly.
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// [`MAX_SAFE_INTEGER`] as an integer.
const MAX_SAFE: u64 = (1 << 53) - 1;

/// Why a value JavaScript passed is not a post id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostIdError {
    /// Not a post id at all (zero, negative, a fraction, past 2^63 − 1, not
    /// digits): [`PostId`]'s own error, code `bad_post_id`.
    Id(IdError),
    /// A number that would be a post id, but past `Number.MAX_SAFE_INTEGER`,
    /// where numbers are not exact (`2**53 + 1` is `2**53`): the id may not
    /// be the one meant. The sentence says to pass a string or a `BigInt`.
    Inexact(String),
}

impl From<IdError> for PostIdError {
    fn from(e: IdError) -> Self {
        Self::Id(e)
    }
}

/// A post id from a JavaScript number. Whole numbers go through
/// [`PostId`]'s `TryFrom<i64>`, anything else through its `FromStr` (with
/// the number as JavaScript prints it), so zero, negative numbers,
/// fractions, `NaN` and infinities are [`PostIdError::Id`]. An id past
/// [`MAX_SAFE_INTEGER`] is [`PostIdError::Inexact`].
///
/// ```
/// use likekit_wasm::args::{post_id_number, PostIdError};
/// assert_eq!(post_id_number(42.0).unwrap().get(), 42);
/// for bad in [0.0, -1.0, 1.5, f64::NAN] {
///     assert!(matches!(post_id_number(bad), Err(PostIdError::Id(e)) if e.code() == "bad_post_id"));
/// }
/// assert!(matches!(post_id_number(2f64.powi(53)), Err(PostIdError::Inexact(_))));
/// ```
///
/// # Errors
///
/// [`PostIdError`], as above.
pub fn post_id_number(value: f64) -> Result<PostId, PostIdError> {
    let exact = value.is_finite() && value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER;
    let id = if exact {
        // Whole and within ±(2^53 − 1), so the cast is exact.
        #[allow(clippy::cast_possible_truncation)]
        let whole = value as i64;
        PostId::try_from(whole)?
    } else {
        show(value).parse::<PostId>()?
    };
    if id.get() > MAX_SAFE {
        return Err(PostIdError::Inexact(format!(
            "post id {id} is past Number.MAX_SAFE_INTEGER, where JavaScript numbers are \
             not exact: pass it as a decimal string (\"{id}\") or a BigInt ({id}n)"
        )));
    }
    Ok(id)
}

/// A post id from a JavaScript string: decimal digits only, through
/// [`PostId`]'s `FromStr`. Every id, to 2^63 − 1, can be given this way.
///
/// ```
/// use likekit_wasm::args::post_id_text;
/// assert_eq!(post_id_text("9223372036854775807").unwrap().get(), i64::MAX as u64);
/// assert_eq!(post_id_text("-1").unwrap_err().code(), "bad_post_id");
/// ```
///
/// # Errors
///
/// [`PostId`]'s error (code `bad_post_id`) for anything but the digits of
/// an id.
pub fn post_id_text(text: &str) -> Result<PostId, IdError> {
    text.parse()
}

/// A post id from a JavaScript `BigInt` (one that fits 128 bits), through
/// [`PostId`]'s `TryFrom<i64>` or, past `i64`, `TryFrom<u64>` and `FromStr`.
///
/// ```
/// use likekit_wasm::args::post_id_integer;
/// assert_eq!(post_id_integer(42).unwrap().get(), 42);
/// assert_eq!(post_id_integer(1 << 63).unwrap_err().code(), "bad_post_id");
/// ```
///
/// # Errors
///
/// [`PostId`]'s error (code `bad_post_id`) for a number outside its range.
pub fn post_id_integer(value: i128) -> Result<PostId, IdError> {
    if let Ok(id) = i64::try_from(value) {
        PostId::try_from(id)
    } else if let Ok(id) = u64::try_from(value) {
        PostId::try_from(id)
    } else {
        value.to_string().parse()
    }
}

/// The id as a JavaScript number, when the number is exact (at most
/// [`MAX_SAFE_INTEGER`]); otherwise JavaScript gets its decimal string.
///
/// ```
/// use likekit_core::PostId;
/// assert_eq!(likekit_wasm::args::exact_number(PostId::new(42).unwrap()), Some(42.0));
/// assert_eq!(likekit_wasm::args::exact_number(PostId::MAX), None);
/// ```
pub fn exact_number(id: PostId) -> Option<f64> {
    // At most 2^53 − 1 when used, so the conversion is exact.
    #[allow(clippy::cast_precision_loss)]
    let number = id.get() as f64;
    (id.get() <= MAX_SAFE).then_some(number)
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
        // Whole milliseconds and the fraction's nanoseconds, by integer
        // casts (which cannot fail on these values), not `from_secs_f64`,
        // whose float handling and panics the web package need not carry.
        let whole = value.trunc();
        let nanos = ((value - whole) * 1e6) as u64;
        Ok(Duration::from_millis(whole as u64).saturating_add(Duration::from_nanos(nanos)))
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

/// A number as JavaScript prints it, by JavaScript itself (`String(n)`):
/// this also keeps Rust's float formatting (some 20 KB) out of the package.
#[cfg(target_arch = "wasm32")]
pub(crate) fn show(value: f64) -> String {
    js_sys::Number::from(value)
        .to_string_with_radix(10)
        .map(String::from)
        .unwrap_or_default()
}

/// A number as JavaScript prints it, written by Rust on the host (the
/// same but for the very large and the very small, which JavaScript writes
/// with an exponent: `1e+21`).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn show(value: f64) -> String {
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

    fn bad_post_id(result: Result<PostId, PostIdError>) -> String {
        match result {
            Err(PostIdError::Id(e)) => {
                assert_eq!(e.code(), "bad_post_id", "{e}");
                e.to_string()
            }
            other => panic!("expected bad_post_id, got {other:?}"),
        }
    }

    #[test]
    fn numbers_go_through_the_post_id_constructor() {
        assert_eq!(post_id_number(1.0).map(PostId::get), Ok(1));
        assert_eq!(
            post_id_number(MAX_SAFE_INTEGER).map(PostId::get),
            Ok(MAX_SAFE)
        );
        for bad in [
            0.0,
            -0.0,
            -1.0,
            -0.5,
            0.5,
            42.000_001,
            -MAX_SAFE_INTEGER,
            -1e300,
            1e300,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let message = bad_post_id(post_id_number(bad));
            assert!(
                message.starts_with("post ids are whole numbers"),
                "{bad}: {message}"
            );
        }
        assert!(bad_post_id(post_id_number(-1.0)).ends_with("got -1"));
        assert!(bad_post_id(post_id_number(1.5)).ends_with("got \"1.5\""));
        assert!(bad_post_id(post_id_number(f64::NAN)).ends_with("got \"NaN\""));
    }

    #[test]
    fn numbers_past_the_safe_range_are_refused_as_inexact() {
        // 2^53 + 1 is the same number as 2^53: the caller may have meant either.
        for inexact in [
            MAX_SAFE_INTEGER + 1.0,
            MAX_SAFE_INTEGER + 2.0,
            2f64.powi(62),
        ] {
            let Err(PostIdError::Inexact(message)) = post_id_number(inexact) else {
                panic!("{inexact} was taken");
            };
            assert!(message.contains("BigInt"), "{message}");
        }
        // Past 2^63 − 1 it is no id at all, whatever its precision.
        bad_post_id(post_id_number(2f64.powi(63)));
    }

    #[test]
    fn text_and_big_integers_cover_the_whole_range() {
        assert_eq!(post_id_text("42").map(PostId::get), Ok(42));
        assert_eq!(post_id_text("9223372036854775807"), Ok(PostId::MAX));
        for bad in ["0", "-1", "9223372036854775808", "", " 1", "1.0", "abc"] {
            assert_eq!(
                post_id_text(bad).unwrap_err().code(),
                "bad_post_id",
                "{bad:?}"
            );
        }
        assert_eq!(post_id_integer(i128::from(i64::MAX)), Ok(PostId::MAX));
        for bad in [0, -1, 1 << 63, 1 << 64, -(1 << 100), i128::MAX, i128::MIN] {
            assert_eq!(
                post_id_integer(bad).unwrap_err().code(),
                "bad_post_id",
                "{bad}"
            );
        }
        assert!(
            post_id_integer(-1)
                .unwrap_err()
                .to_string()
                .ends_with("got -1")
        );
        assert!(
            post_id_integer(1 << 63)
                .unwrap_err()
                .to_string()
                .ends_with("got 9223372036854775808")
        );
    }

    #[test]
    fn ids_go_back_as_numbers_only_when_exact() {
        assert_eq!(exact_number(PostId::MIN), Some(1.0));
        assert_eq!(
            exact_number(PostId::new(MAX_SAFE).unwrap()),
            Some(MAX_SAFE_INTEGER)
        );
        assert_eq!(exact_number(PostId::new(MAX_SAFE + 1).unwrap()), None);
    }

    #[test]
    fn negative_zero_is_a_count() {
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
