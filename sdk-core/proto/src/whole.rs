//! Whole numbers in JSON bodies: the one home of how they are read.
//!
//! JSON has a single number type, and JSON Schema (so the server's OpenAPI
//! document, whose `integer` fields these are) counts `42.0` and `4.2e1` as
//! the integer 42. So a body may write a whole number with a fraction or an
//! exponent, as long as it is exact: up to 2^53, the largest a JSON number
//! with a fraction carries without rounding in every common parser. Larger
//! ones must be written as plain digits. `42.5`, `-1` and anything above the
//! field's largest value are refused with a message naming the range.
//!
//! Each field's largest value follows the OpenAPI `format` its Rust type is
//! given: `int64` fields (`u64` here) stop at `i64::MAX`, `int32` ones
//! (`u32`) at `i32::MAX`, so that a value the document allows always fits,
//! and one it forbids is never taken (a Kotlin `Long`, a Java `int`). The
//! one exception is a fault rule set's seed, `uint64` in the document: the
//! server takes any unsigned 64-bit seed (and picks one below 2^53 when
//! none is given).

use std::fmt;

use serde::de::{self, Deserializer, Visitor};

/// The largest whole number a JSON number with a fraction or an exponent
/// may stand for: 2^53 (every integer up to it is exact in an `f64`).
const EXACT_FLOAT_MAX: f64 = 9_007_199_254_740_992.0;

/// Reads a whole number from 0 to `max`; from a query string's text too
/// when `from_text`.
struct Whole {
    max: u64,
    from_text: bool,
}

impl Whole {
    fn checked<E: de::Error>(&self, n: u64) -> Result<u64, E> {
        if n <= self.max {
            Ok(n)
        } else {
            Err(E::invalid_value(de::Unexpected::Unsigned(n), self))
        }
    }
}

impl Visitor<'_> for Whole {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.max == u64::MAX {
            // An id's: its own constructor says its range.
            f.write_str("a whole number")
        } else {
            write!(f, "a whole number from 0 to {}", self.max)
        }
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<u64, E> {
        self.checked(n)
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<u64, E> {
        let n = u64::try_from(n).map_err(|_| E::invalid_value(de::Unexpected::Signed(n), &self))?;
        self.checked(n)
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<u64, E> {
        if n.fract() != 0.0 || !(0.0..=EXACT_FLOAT_MAX).contains(&n) {
            return Err(E::invalid_value(de::Unexpected::Float(n), &self));
        }
        // Whole and within 0..=2^53: the conversion is exact.
        self.checked(n as u64)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<u64, E> {
        let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        match text.parse::<u64>() {
            Ok(n) if self.from_text && digits => self.checked(n),
            _ => Err(E::invalid_type(de::Unexpected::Str(text), &self)),
        }
    }
}

/// A whole number from 0 to `max`. Read with `deserialize_any`, so that
/// the number's own type chooses the visit: a body buffered by serde (an
/// internally tagged enum's, as a fault action's) holds a float as a float,
/// and refuses it to `deserialize_u64`.
fn whole<'de, D: Deserializer<'de>>(deserializer: D, max: u64) -> Result<u64, D::Error> {
    deserializer.deserialize_any(Whole {
        max,
        from_text: false,
    })
}

/// An optional `int64` query parameter: absent, or the digits of a whole
/// number from 0 to `i64::MAX` (a query string is text; serde's reader of
/// it hands every value over as a string).
#[cfg_attr(not(feature = "admin"), allow(dead_code))]
pub(crate) fn query_option_u64<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u64>, D::Error> {
    optional(deserializer, i64::MAX as u64, true)
}

/// `None` for an absent or `null` value, else a whole number from 0 to
/// `max` (from text too when `from_text`).
fn optional<'de, D: Deserializer<'de>>(
    deserializer: D,
    max: u64,
    from_text: bool,
) -> Result<Option<u64>, D::Error> {
    deserializer.deserialize_option(Optional(Whole { max, from_text }))
}

/// Reads [`optional`].
struct Optional(Whole);

impl<'de> Visitor<'de> for Optional {
    type Value = Option<u64>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)?;
        f.write_str(" or null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<u64>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<u64>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<u64>, D::Error> {
        deserializer.deserialize_any(self.0).map(Some)
    }
}

/// An `int64` field: 0 to `i64::MAX`.
#[cfg_attr(not(feature = "admin"), allow(dead_code))]
pub(crate) fn u64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    whole(deserializer, i64::MAX as u64)
}

/// An optional `int64` field: absent or `null`, or 0 to `i64::MAX`.
#[cfg_attr(not(feature = "admin"), allow(dead_code))]
pub(crate) fn option_u64<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u64>, D::Error> {
    optional(deserializer, i64::MAX as u64, false)
}

/// An optional `uint64` field, the one unsigned 64-bit number of the
/// bodies (a fault rule set's seed): absent or `null`, or 0 to `u64::MAX`.
#[cfg_attr(not(feature = "admin"), allow(dead_code))]
pub(crate) fn option_uint64<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u64>, D::Error> {
    optional(deserializer, u64::MAX, false)
}

/// An `int32` field: 0 to `i32::MAX`.
#[cfg_attr(not(feature = "admin"), allow(dead_code))]
pub(crate) fn u32<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    // In range by the bound.
    whole(deserializer, i32::MAX as u64).map(|n| n as u32)
}

/// An HTTP status field (its own range is checked where it is used).
#[cfg_attr(not(feature = "admin"), allow(dead_code))]
pub(crate) fn u16<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u16, D::Error> {
    whole(deserializer, u64::from(u16::MAX)).map(|n| n as u16)
}

/// A signed `int64` field: `i64::MIN` to `i64::MAX` (its own range is
/// checked where it is used, so that the message is the field's rule).
/// The one signed number of the bodies: a token's start, which may be in
/// the past.
#[cfg_attr(not(feature = "admin"), allow(dead_code))]
pub(crate) fn i64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    deserializer.deserialize_any(Signed)
}

/// Reads [`i64()`]: as [`Whole`], but below zero too.
struct Signed;

impl Visitor<'_> for Signed {
    type Value = i64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a whole number from {} to {}", i64::MIN, i64::MAX)
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<i64, E> {
        Ok(n)
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<i64, E> {
        i64::try_from(n).map_err(|_| E::invalid_value(de::Unexpected::Unsigned(n), &self))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<i64, E> {
        if n.fract() != 0.0 || !(-EXACT_FLOAT_MAX..=EXACT_FLOAT_MAX).contains(&n) {
            return Err(E::invalid_value(de::Unexpected::Float(n), &self));
        }
        // Whole and within ±2^53: the conversion is exact.
        Ok(n as i64)
    }
}

/// An id's number, of any size: the id's own constructor checks its range,
/// so that the message is the id rule's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IdNumber(pub(crate) u64);

impl<'de> serde::Deserialize<'de> for IdNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Asked for as a `u64`: ids come from query strings too
        // (`/admin/requests?post=42`), whose reader parses the text only
        // when told the type. No id sits in a buffered body.
        deserializer
            .deserialize_u64(Whole {
                max: u64::MAX,
                from_text: false,
            })
            .map(IdNumber)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    struct Body {
        #[serde(deserialize_with = "super::u64")]
        n: u64,
        #[serde(default, deserialize_with = "super::option_u64")]
        o: Option<u64>,
        #[serde(default, deserialize_with = "super::u32")]
        small: u32,
        #[serde(default, deserialize_with = "super::i64")]
        signed: i64,
    }

    fn read(json: &str) -> Result<Body, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn whole_numbers_may_have_a_zero_fraction_or_an_exponent() {
        for (json, n) in [
            (r#"{"n": 42}"#, 42),
            (r#"{"n": 42.0}"#, 42),
            (r#"{"n": 4.2e1}"#, 42),
            (r#"{"n": 0.0}"#, 0),
            (r#"{"n": -0.0}"#, 0),
            (r#"{"n": 9007199254740992.0}"#, 1 << 53),
            (r#"{"n": 9223372036854775807}"#, i64::MAX as u64),
        ] {
            assert_eq!(read(json).unwrap().n, n, "{json}");
        }
        let body = read(r#"{"n": 1, "o": 7.0, "small": 2147483647.0}"#).unwrap();
        assert_eq!((body.o, body.small), (Some(7), i32::MAX as u32));
        assert_eq!(read(r#"{"n": 1, "o": null}"#).unwrap().o, None);
        assert_eq!(read(r#"{"n": 1}"#).unwrap().o, None);
    }

    #[test]
    fn fractions_negatives_and_out_of_range_numbers_are_refused() {
        for json in [
            r#"{"n": 42.5}"#,
            r#"{"n": -1}"#,
            r#"{"n": -1.0}"#,
            r#"{"n": 9223372036854775808}"#,
            r#"{"n": 18446744073709551615}"#,
            // Above 2^53 a fraction may already have rounded the number.
            r#"{"n": 9007199254740994.0}"#,
            r#"{"n": 1e300}"#,
            r#"{"n": "42"}"#,
            r#"{"n": 1, "o": 9223372036854775808}"#,
            r#"{"n": 1, "small": 2147483648}"#,
        ] {
            let e = read(json).unwrap_err();
            assert!(
                e.contains("a whole number from 0 to") || e.contains("invalid type"),
                "{json}: {e}"
            );
        }
        let e = read(r#"{"n": 42.5}"#).unwrap_err();
        assert!(
            e.contains("a whole number from 0 to 9223372036854775807"),
            "{e}"
        );
    }

    #[test]
    fn a_signed_field_takes_whole_numbers_below_zero_and_nothing_else() {
        for (json, n) in [
            (r#"{"n": 1, "signed": -7200}"#, -7200),
            (r#"{"n": 1, "signed": -7200.0}"#, -7200),
            (r#"{"n": 1, "signed": -7.2e3}"#, -7200),
            (r#"{"n": 1, "signed": 60}"#, 60),
            (r#"{"n": 1, "signed": -9223372036854775808}"#, i64::MIN),
            (r#"{"n": 1, "signed": 9223372036854775807}"#, i64::MAX),
            (r#"{"n": 1, "signed": -9007199254740992.0}"#, -(1 << 53)),
        ] {
            assert_eq!(read(json).unwrap().signed, n, "{json}");
        }
        for json in [
            r#"{"n": 1, "signed": -1.5}"#,
            r#"{"n": 1, "signed": 9223372036854775808}"#,
            r#"{"n": 1, "signed": -9007199254740994.0}"#,
            r#"{"n": 1, "signed": -1e300}"#,
            r#"{"n": 1, "signed": "-1"}"#,
            r#"{"n": 1, "signed": null}"#,
        ] {
            let e = read(json).unwrap_err();
            assert!(
                e.contains("a whole number from -9223372036854775808 to 9223372036854775807"),
                "{json}: {e}"
            );
        }
    }

    #[test]
    fn a_buffered_body_reads_them_too() {
        // An internally tagged enum's fields are read from serde's buffer,
        // which keeps `306.0` a float.
        #[derive(Debug, Deserialize, PartialEq)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        enum Action {
            Oversized {
                #[serde(deserialize_with = "super::u64")]
                bytes: u64,
            },
        }
        let read = |json| serde_json::from_str::<Action>(json).map_err(|e| e.to_string());
        assert_eq!(
            read(r#"{"kind": "oversized", "bytes": 306.0}"#),
            Ok(Action::Oversized { bytes: 306 })
        );
        assert_eq!(
            read(r#"{"bytes": 306, "kind": "oversized"}"#),
            Ok(Action::Oversized { bytes: 306 })
        );
        let e = read(r#"{"kind": "oversized", "bytes": 306.5}"#).unwrap_err();
        assert!(e.contains("a whole number from 0 to"), "{e}");
        // Text is a query string's, not a body's.
        assert!(read(r#"{"kind": "oversized", "bytes": "306"}"#).is_err());
    }

    #[test]
    fn a_seed_takes_the_whole_unsigned_range() {
        #[derive(Debug, Deserialize)]
        struct Seeded {
            #[serde(default, deserialize_with = "super::option_uint64")]
            seed: Option<u64>,
        }
        let seed = |json| serde_json::from_str::<Seeded>(json).map(|s| s.seed);
        assert_eq!(
            seed(r#"{"seed": 18446744073709551615}"#).unwrap(),
            Some(u64::MAX)
        );
        assert_eq!(seed(r#"{"seed": 7.0}"#).unwrap(), Some(7));
        assert_eq!(seed(r#"{}"#).unwrap(), None);
        assert!(seed(r#"{"seed": 18446744073709551616}"#).is_err());
        assert!(seed(r#"{"seed": -1}"#).is_err());
    }
}
