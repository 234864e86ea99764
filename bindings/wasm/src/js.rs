//! Plain JavaScript objects written and read by hand with `Reflect` (wasm
//! only).
//!
//! The types in [`crate::types`] say what each object holds; this module
//! holds the few pieces their conversions are made of. It replaces a
//! general serializer (serde-wasm-bindgen), whose code was a fifth of the
//! package: each type's [`Write`] or [`Read`] names its fields once, in
//! the order of the Rust type, and the drift test in `tests/drift.rs`
//! holds each of them to what serde-wasm-bindgen makes of the same value,
//! so a conversion cannot part from the type's TypeScript declaration.
//!
//! The error sentences are serde's (`invalid type: string "10", expected
//! f64`), with the path of the field in front (`options.timeoutMs: …`).

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use crate::args;

/// Writes a value as the plain object (or primitive) its TypeScript
/// declaration describes.
pub trait Write {
    /// The JavaScript value.
    ///
    /// # Errors
    ///
    /// A `LikeError` (`invalid_response`) if a number in it is past
    /// `Number.MAX_SAFE_INTEGER`, which no count the server sends comes near.
    fn write(&self) -> Result<JsValue, JsValue>;
}

/// A plain object being written, one field after another.
#[derive(Debug, Default)]
pub struct Writer(Object);

impl Writer {
    /// An empty object.
    pub fn new() -> Self {
        Self(Object::new())
    }

    /// Sets `key` to `value`.
    #[must_use]
    pub fn field(self, key: &str, value: &JsValue) -> Self {
        // Cannot fail: the object is a plain one made here.
        let _ = Reflect::set(&self.0, &JsValue::from_str(key), value);
        self
    }

    /// The object.
    pub fn finish(self) -> JsValue {
        self.0.into()
    }
}

/// An array of strings.
pub fn strings(items: &[String]) -> JsValue {
    items
        .iter()
        .map(|item| JsValue::from_str(item))
        .collect::<Array>()
        .into()
}

/// Reads a JavaScript value as a Rust one.
pub trait Read: Sized {
    /// `value` as `Self`, or why not (serde's words, without the path).
    ///
    /// # Errors
    ///
    /// The sentence.
    fn read(value: &JsValue) -> Result<Self, String>;
}

/// What a value is, in serde's words: `string "yes"`, `integer \`3\``.
fn unexpected(value: &JsValue) -> String {
    if let Some(text) = value.as_string() {
        format!("string {}", likekit_core::wire::quoted(&text))
    } else if let Some(flag) = value.as_bool() {
        format!("boolean `{flag}`")
    } else if let Some(n) = value.as_f64() {
        let kind = if n.fract() == 0.0 && n.abs() <= args::MAX_SAFE_INTEGER {
            "integer"
        } else {
            "floating point"
        };
        format!("{kind} `{}`", args::show(n))
    } else if value.is_null() {
        "null".into()
    } else if value.is_undefined() {
        "undefined".into()
    } else if value.is_bigint() {
        "a BigInt".into()
    } else if Array::is_array(value) {
        "sequence".into()
    } else if value.is_function() {
        "a function".into()
    } else {
        "map".into()
    }
}

/// `invalid type: …, expected {expected}`.
fn invalid_type(value: &JsValue, expected: &str) -> String {
    format!("invalid type: {}, expected {expected}", unexpected(value))
}

/// `invalid value: …, expected {expected}`.
fn invalid_value(value: &JsValue, expected: &str) -> String {
    format!("invalid value: {}, expected {expected}", unexpected(value))
}

impl Read for f64 {
    fn read(value: &JsValue) -> Result<Self, String> {
        value.as_f64().ok_or_else(|| invalid_type(value, "f64"))
    }
}

impl Read for bool {
    fn read(value: &JsValue) -> Result<Self, String> {
        value
            .as_bool()
            .ok_or_else(|| invalid_type(value, "a boolean"))
    }
}

impl Read for String {
    fn read(value: &JsValue) -> Result<Self, String> {
        value
            .as_string()
            .ok_or_else(|| invalid_type(value, "a string"))
    }
}

/// A whole number from 0 to `max` (at most `Number.MAX_SAFE_INTEGER`), as
/// a number, or (for `u64`) a `BigInt`.
fn unsigned(value: &JsValue, max: u64, expected: &str) -> Result<u64, String> {
    if let Some(n) = value.as_f64() {
        // Exact for every `max` used (u16::MAX, 2^53 − 1).
        #[allow(clippy::cast_precision_loss)]
        let max_f = max as f64;
        if n.fract() == 0.0 && (0.0..=max_f).contains(&n) {
            // The checks above make the cast exact.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            return Ok(n as u64);
        }
        Err(invalid_value(value, expected))
    } else if value.is_bigint() && max == u64::MAX {
        u64::try_from(value.clone()).map_err(|_| invalid_value(value, expected))
    } else {
        Err(invalid_type(value, expected))
    }
}

impl Read for u64 {
    fn read(value: &JsValue) -> Result<Self, String> {
        // Numbers up to `Number.MAX_SAFE_INTEGER`, `BigInt`s to u64::MAX.
        if value.is_bigint() {
            unsigned(value, u64::MAX, "u64")
        } else {
            unsigned(value, args::MAX_SAFE_INTEGER as u64, "u64")
        }
    }
}

impl Read for u16 {
    fn read(value: &JsValue) -> Result<Self, String> {
        let n = unsigned(value, u64::from(u16::MAX), "u16")?;
        // Within u16 by the check above.
        Ok(u16::try_from(n).unwrap_or(u16::MAX))
    }
}

impl Read for Vec<String> {
    fn read(value: &JsValue) -> Result<Self, String> {
        // An array or any other iterable, as serde-wasm-bindgen took it.
        let iter = if value.is_string() {
            None
        } else {
            js_sys::try_iter(value).ok().flatten()
        };
        let Some(iter) = iter else {
            return Err(invalid_type(value, "a sequence"));
        };
        iter.map(|item| String::read(&item.map_err(|e| unexpected(&e))?))
            .collect()
    }
}

/// The fields of an object argument, read one by one with the path of
/// each in its error.
#[derive(Debug)]
pub struct Fields<'a> {
    object: &'a JsValue,
    path: &'a str,
}

impl<'a> Fields<'a> {
    /// The fields of `value`, which must be an object; `path` names it in
    /// errors (`"options"`, `"options.retry"`).
    ///
    /// # Errors
    ///
    /// `"{path}: invalid type: …, expected an object"`.
    pub fn of(value: &'a JsValue, path: &'a str) -> Result<Self, String> {
        if value.is_object() {
            Ok(Self {
                object: value,
                path,
            })
        } else {
            Err(format!("{path}: {}", invalid_type(value, "an object")))
        }
    }

    /// Refuses an own key of the object that is not one of `known`, so
    /// that a misspelt option (`tokn`) is an error rather than ignored.
    ///
    /// # Errors
    ///
    /// `"{path}: unknown field `{key}`, expected one of `a`, `b`, …"`,
    /// worded as serde words it.
    pub fn only(&self, known: &[&str]) -> Result<(), String> {
        for key in Object::keys(self.object.unchecked_ref::<Object>()).iter() {
            let Some(key) = key.as_string() else {
                continue;
            };
            if !known.contains(&key.as_str()) {
                // A loop rather than `join`: the package's size is a goal.
                let mut expected = String::from(match known.len() {
                    0 => "there are no fields",
                    1 | 2 => "expected ",
                    _ => "expected one of ",
                });
                for (i, name) in known.iter().enumerate() {
                    if i > 0 {
                        expected.push_str(if known.len() == 2 { " or " } else { ", " });
                    }
                    expected.push('`');
                    expected.push_str(name);
                    expected.push('`');
                }
                return Err(format!("{}: unknown field `{key}`, {expected}", self.path));
            }
        }
        Ok(())
    }

    /// The field's value as it is (`undefined` when absent).
    pub fn raw(&self, key: &str) -> JsValue {
        Reflect::get(self.object, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    }

    /// `reason` with the field's path in front.
    fn fail(&self, key: &str, reason: &str) -> String {
        format!("{}.{key}: {reason}", self.path)
    }

    /// A field that must be there.
    ///
    /// # Errors
    ///
    /// `"{path}: missing field `{key}`"`, or the field's own error.
    pub fn required<T: Read>(&self, key: &str) -> Result<T, String> {
        let value = self.raw(key);
        if value.is_undefined() {
            return Err(format!("{}: missing field `{key}`", self.path));
        }
        T::read(&value).map_err(|reason| self.fail(key, &reason))
    }

    /// A field that may be absent, `undefined` or `null` (`None`).
    ///
    /// # Errors
    ///
    /// The field's own error.
    pub fn optional<T: Read>(&self, key: &str) -> Result<Option<T>, String> {
        let value = self.raw(key);
        if value.is_undefined() || value.is_null() {
            return Ok(None);
        }
        T::read(&value)
            .map(Some)
            .map_err(|reason| self.fail(key, &reason))
    }

    /// A field that is its default when absent.
    ///
    /// # Errors
    ///
    /// The field's own error.
    pub fn or_default<T: Read + Default>(&self, key: &str) -> Result<T, String> {
        let value = self.raw(key);
        if value.is_undefined() {
            return Ok(T::default());
        }
        T::read(&value).map_err(|reason| self.fail(key, &reason))
    }
}
