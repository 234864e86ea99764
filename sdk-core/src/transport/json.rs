//! The server's JSON answers, read by hand: the four bodies the client
//! takes ([`LikeState`], [`PostLikes`], [`BatchLikes`], [`ErrorBody`]) and
//! nothing else.
//!
//! It accepts and refuses exactly what `serde_json::from_slice` does for
//! these types (a property test in this file holds it to that): fields in
//! any order, unknown fields skipped (any JSON value), a field twice
//! refused, `friends` optional, a struct also as an array of its fields in
//! order (serde's sequence form), whole numbers up to `u64::MAX` (a sign,
//! a fraction, an exponent or a larger number is refused), strings with
//! every JSON escape, surrogate pairs paired, UTF-8 checked, and nothing
//! but whitespace after the value.
//!
//! Why by hand: in the web package serde_json and the visitors serde
//! derives for these types were 44.7 KB of a 293 KB module (18.4 KB of
//! 111 KB gzipped); this reader is 14.9 KB (6.1 KB gzipped). The
//! browser's `JSON.parse` with a converter to these types would be smaller
//! still (8.1 KB, 2.9 KB gzipped, measured on 2026-12-03) but not correct:
//! it reads every number as a float, so a version past 2^53 comes back
//! rounded (and the machine's "older read" check with it), and it cannot
//! tell `3.0` from `3` or see a field given twice. Natively this is the
//! same code, so every platform reads an answer the same way.

use std::collections::BTreeMap;
use std::fmt;

use crate::PostId;
use crate::wire::{BatchLikes, ErrorBody, ErrorDetail, LikeState, PostLikes};

/// Why a body is not the JSON expected (and which field, if one), and at
/// which byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JsonError {
    what: &'static str,
    field: &'static str,
    at: usize,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{} at byte {}", self.what, self.at)
        } else {
            write!(f, "{} `{}` at byte {}", self.what, self.field, self.at)
        }
    }
}

pub(crate) type Result<T> = std::result::Result<T, JsonError>;

/// Reads `body` as one `T` and nothing after it but whitespace.
pub(crate) fn from_json<T: Json>(body: &[u8]) -> Result<T> {
    let mut r = Reader { bytes: body, at: 0 };
    let value = T::read(&mut r)?;
    match r.peek() {
        None => Ok(value),
        Some(_) => Err(r.error("trailing characters")),
    }
}

/// A value the reader can read.
pub(crate) trait Json: Sized {
    fn read(r: &mut Reader<'_>) -> Result<Self>;
}

/// A position in a body.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn error(&self, what: &'static str) -> JsonError {
        self.field_error(what, "")
    }

    pub(crate) fn field_error(&self, what: &'static str, field: &'static str) -> JsonError {
        JsonError {
            what,
            field,
            at: self.at,
        }
    }

    /// The next byte that is not whitespace, not taken.
    fn peek(&mut self) -> Option<u8> {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
        self.bytes.get(self.at).copied()
    }

    /// The next byte, whitespace included, taken.
    fn next(&mut self) -> Result<u8> {
        let byte = self.bytes.get(self.at).copied();
        self.at += 1;
        byte.ok_or_else(|| self.error("unexpected end"))
    }

    /// Takes `byte` if it comes next (after whitespace).
    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.at += usize::from(found);
        found
    }

    /// Takes `byte`, or fails with `what` ("expected …").
    pub(crate) fn expect(&mut self, byte: u8, what: &'static str) -> Result<()> {
        if self.eat(byte) {
            Ok(())
        } else {
            Err(self.error(what))
        }
    }

    /// `word` (`true`, `null`…), whose first byte was taken.
    fn word(&mut self, rest: &[u8]) -> Result<()> {
        for &byte in rest {
            if self.next()? != byte {
                return Err(self.error("expected a value"));
            }
        }
        Ok(())
    }

    /// The items of an array, `[` taken: `item` for each, then `]`.
    pub(crate) fn items(&mut self, item: &mut dyn FnMut(&mut Self) -> Result<()>) -> Result<()> {
        if self.eat(b']') {
            return Ok(());
        }
        loop {
            item(self)?;
            if self.eat(b']') {
                return Ok(());
            }
            self.expect(b',', "expected `,` or `]`")?;
        }
    }

    /// The entries of an object, `{` taken: `entry` with the reader just
    /// after each opening `"` of a key, then `}`.
    fn entries(&mut self, entry: &mut dyn FnMut(&mut Self) -> Result<()>) -> Result<()> {
        if self.eat(b'}') {
            return Ok(());
        }
        loop {
            self.expect(b'"', "expected a key")?;
            entry(self)?;
            if self.eat(b'}') {
                return Ok(());
            }
            self.expect(b',', "expected `,` or `}`")?;
        }
    }

    /// A struct's fields, as an object (in any order, each at most once,
    /// unknown ones skipped) or, as serde also reads a struct, as an array
    /// of them in order. `field` reads the value of field `i` of `names`
    /// (at most 8).
    pub(crate) fn fields(
        &mut self,
        names: &[&'static str],
        field: &mut dyn FnMut(&mut Self, usize) -> Result<()>,
    ) -> Result<()> {
        if self.eat(b'[') {
            for i in 0..names.len() {
                if self.eat(b']') {
                    return Ok(());
                }
                if i > 0 {
                    self.expect(b',', "expected `,` or `]`")?;
                }
                field(self, i)?;
            }
            return self.expect(b']', "expected `]`");
        }
        self.expect(b'{', "expected an object")?;
        let mut seen = 0_u8;
        self.entries(&mut |r| {
            let key = r.string_after_quote()?;
            r.expect(b':', "expected `:`")?;
            match names.iter().position(|name| *name == key) {
                Some(i) if seen & 1 << i != 0 => Err(r.field_error("duplicate field", names[i])),
                Some(i) => {
                    seen |= 1 << i;
                    field(r, i)
                }
                None => r.skip_value(),
            }
        })
    }

    /// A string, `"` taken: escapes decoded, surrogates paired, UTF-8
    /// checked.
    fn string_after_quote(&mut self) -> Result<String> {
        let mut text = Vec::new();
        loop {
            match self.next()? {
                b'"' => break,
                b'\\' => {
                    let decoded = match self.next()? {
                        b'u' => self.unicode_escape()?,
                        other => escaped(other).ok_or_else(|| self.error("invalid escape"))?,
                    };
                    let mut utf8 = [0; 4];
                    text.extend_from_slice(decoded.encode_utf8(&mut utf8).as_bytes());
                }
                0..0x20 => return Err(self.error("control character in a string")),
                byte => text.push(byte),
            }
        }
        String::from_utf8(text).map_err(|_| self.error("invalid UTF-8 in a string"))
    }

    /// The character of a `\u` escape (`\u` taken), with the second half
    /// of a surrogate pair when it is one.
    fn unicode_escape(&mut self) -> Result<char> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if self.next()? != b'\\' || self.next()? != b'u' {
                    return Err(self.error("lone surrogate in a \\u escape"));
                }
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.error("lone surrogate in a \\u escape"));
                }
                0x1_0000 + ((u32::from(first) - 0xD800) << 10) + (u32::from(second) - 0xDC00)
            }
            _ => u32::from(first),
        };
        char::from_u32(code).ok_or_else(|| self.error("lone surrogate in a \\u escape"))
    }

    /// Four hex digits.
    fn hex4(&mut self) -> Result<u16> {
        let mut n = 0;
        for _ in 0..4 {
            let digit = char::from(self.next()?).to_digit(16);
            let digit = digit.ok_or_else(|| self.error("invalid \\u escape"))?;
            n = n << 4 | digit as u16;
        }
        Ok(n)
    }

    /// A whole number from 0 to `u64::MAX`, the reader on its first byte.
    /// A minus sign is refused, even on `-0`, which serde_json reads as the
    /// float -0.0.
    fn whole_number(&mut self) -> Result<u64> {
        if self.bytes.get(self.at) == Some(&b'-') {
            return Err(self.error("expected a whole number, 0 or more"));
        }
        let start = self.at;
        self.integer_digits()?;
        if let Some(b'.' | b'e' | b'E') = self.bytes.get(self.at) {
            return Err(self.error("expected a whole number"));
        }
        let mut n: u64 = 0;
        for &digit in &self.bytes[start..self.at] {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(digit - b'0')))
                .ok_or_else(|| self.error("number out of range"))?;
        }
        Ok(n)
    }

    /// `0` or a digit from 1 to 9 and more digits.
    fn integer_digits(&mut self) -> Result<()> {
        match self.next()? {
            b'0' => {
                if self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
                    return Err(self.error("invalid number"));
                }
            }
            b'1'..=b'9' => {
                while self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
                    self.at += 1;
                }
            }
            _ => return Err(self.error("expected a number")),
        }
        Ok(())
    }

    /// One or more digits.
    fn digits(&mut self) -> Result<()> {
        if !self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
            return Err(self.error("invalid number"));
        }
        while self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        Ok(())
    }

    /// Skips any JSON value, checking its syntax as serde_json does for a
    /// value it ignores (strings: escapes and control characters, not
    /// UTF-8). Nested arrays and objects are followed on a stack of their
    /// own, so no depth of nesting runs the call stack out.
    fn skip_value(&mut self) -> Result<()> {
        let mut open: Vec<u8> = Vec::new();
        loop {
            // A value.
            match self.peek() {
                Some(b'n') => self.skip_word(b"null")?,
                Some(b't') => self.skip_word(b"true")?,
                Some(b'f') => self.skip_word(b"false")?,
                Some(b'"') => {
                    self.at += 1;
                    self.skip_string()?;
                }
                Some(b'-' | b'0'..=b'9') => {
                    self.at += usize::from(self.bytes[self.at] == b'-');
                    self.integer_digits()?;
                    if self.bytes.get(self.at) == Some(&b'.') {
                        self.at += 1;
                        self.digits()?;
                    }
                    if let Some(b'e' | b'E') = self.bytes.get(self.at) {
                        self.at += 1;
                        if let Some(b'+' | b'-') = self.bytes.get(self.at) {
                            self.at += 1;
                        }
                        self.digits()?;
                    }
                }
                Some(bracket @ (b'[' | b'{')) => {
                    self.at += 1;
                    let close = if bracket == b'[' { b']' } else { b'}' };
                    if !self.eat(close) {
                        open.push(close);
                        if close == b'}' {
                            self.skip_key()?;
                        }
                        continue;
                    }
                }
                _ => return Err(self.error("expected a value")),
            }
            // After a value: close what it ends, or go on to the next one.
            loop {
                let Some(&close) = open.last() else {
                    return Ok(());
                };
                if self.eat(close) {
                    open.pop();
                    continue;
                }
                self.expect(b',', "expected `,` or the end of an array or object")?;
                if close == b'}' {
                    self.skip_key()?;
                }
                break;
            }
        }
    }

    fn skip_word(&mut self, word: &[u8]) -> Result<()> {
        self.at += 1;
        self.word(&word[1..])
    }

    /// A key and its `:` in an object being skipped.
    fn skip_key(&mut self) -> Result<()> {
        self.expect(b'"', "expected a key")?;
        self.skip_string()?;
        self.expect(b':', "expected `:`")
    }

    /// A string being skipped, `"` taken.
    fn skip_string(&mut self) -> Result<()> {
        loop {
            match self.next()? {
                b'"' => return Ok(()),
                b'\\' => match self.next()? {
                    b'u' => {
                        self.hex4()?;
                    }
                    other if escaped(other).is_some() => {}
                    _ => return Err(self.error("invalid escape")),
                },
                0..0x20 => return Err(self.error("control character in a string")),
                _ => {}
            }
        }
    }

    pub(crate) fn value<T: Json>(&mut self) -> Result<T> {
        T::read(self)
    }
}

/// The character a one-letter escape (`\n`…) stands for.
fn escaped(letter: u8) -> Option<char> {
    Some(match letter {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        _ => return None,
    })
}

/// A field that must be there.
pub(crate) fn required<T>(value: Option<T>, name: &'static str, r: &Reader<'_>) -> Result<T> {
    value.ok_or_else(|| r.field_error("missing field", name))
}

impl Json for u64 {
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        match r.peek() {
            Some(b'-' | b'0'..=b'9') => r.whole_number(),
            _ => Err(r.error("expected a number")),
        }
    }
}

impl Json for bool {
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        match r.peek() {
            Some(b't') => r.skip_word(b"true").map(|()| true),
            Some(b'f') => r.skip_word(b"false").map(|()| false),
            _ => Err(r.error("expected true or false")),
        }
    }
}

impl Json for String {
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        r.expect(b'"', "expected a string")?;
        r.string_after_quote()
    }
}

impl Json for Vec<String> {
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        r.expect(b'[', "expected an array")?;
        let mut list = Vec::new();
        r.items(&mut |r| {
            list.push(r.value()?);
            Ok(())
        })?;
        Ok(list)
    }
}

impl Json for LikeState {
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        let (mut count, mut liked_by_me, mut version) = (None, None, None);
        r.fields(&["count", "liked_by_me", "version"], &mut |r, i| {
            match i {
                0 => count = Some(r.value()?),
                1 => liked_by_me = Some(r.value()?),
                _ => version = Some(r.value()?),
            }
            Ok(())
        })?;
        Ok(Self {
            count: required(count, "count", r)?,
            liked_by_me: required(liked_by_me, "liked_by_me", r)?,
            version: required(version, "version", r)?,
        })
    }
}

impl Json for PostLikes {
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        let (mut count, mut liked_by_me, mut friends, mut version) = (None, None, None, None);
        r.fields(
            &["count", "liked_by_me", "friends", "version"],
            &mut |r, i| {
                match i {
                    0 => count = Some(r.value()?),
                    1 => liked_by_me = Some(r.value()?),
                    2 => friends = Some(r.value()?),
                    _ => version = Some(r.value()?),
                }
                Ok(())
            },
        )?;
        Ok(Self {
            count: required(count, "count", r)?,
            liked_by_me: required(liked_by_me, "liked_by_me", r)?,
            friends: friends.unwrap_or_default(),
            version: required(version, "version", r)?,
        })
    }
}

impl Json for BatchLikes {
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        let mut posts = None;
        r.fields(&["posts"], &mut |r, _| {
            posts = Some(read_posts(r)?);
            Ok(())
        })?;
        Ok(Self {
            posts: required(posts, "posts", r)?,
        })
    }
}

/// The `posts` object of a feed page: post ids (decimal strings, as serde
/// reads numbers in keys) to their likes; a later entry for the same post
/// replaces an earlier one.
fn read_posts(r: &mut Reader<'_>) -> Result<BTreeMap<PostId, PostLikes>> {
    let mut posts = BTreeMap::new();
    r.expect(b'{', "expected an object")?;
    r.entries(&mut |r| {
        if !matches!(r.bytes.get(r.at), Some(b'-' | b'0'..=b'9')) {
            return Err(r.error("expected a post id"));
        }
        let id = r.whole_number()?;
        if r.next()? != b'"' {
            return Err(r.error("expected a post id"));
        }
        let id = PostId::try_from(id).map_err(|_| r.error("a post id out of range"))?;
        r.expect(b':', "expected `:`")?;
        posts.insert(id, r.value()?);
        Ok(())
    })?;
    Ok(posts)
}

impl Json for ErrorDetail {
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        let (mut code, mut message) = (None, None);
        r.fields(&["code", "message"], &mut |r, i| {
            match i {
                0 => code = Some(r.value()?),
                _ => message = Some(r.value()?),
            }
            Ok(())
        })?;
        Ok(Self {
            code: required(code, "code", r)?,
            message: required(message, "message", r)?,
        })
    }
}

impl Json for ErrorBody {
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        let mut error = None;
        r.fields(&["error"], &mut |r, _| {
            error = Some(r.value()?);
            Ok(())
        })?;
        Ok(Self {
            error: required(error, "error", r)?,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use proptest::prelude::*;
    use serde::de::DeserializeOwned;

    use super::*;

    /// Whether the reader and serde_json agree on `body` read as `T`: the
    /// same value, or both refuse it.
    fn agree_as<T: Json + DeserializeOwned + PartialEq + fmt::Debug>(body: &[u8]) {
        let ours = from_json::<T>(body);
        let theirs = serde_json::from_slice::<T>(body);
        assert_eq!(
            ours.as_ref().ok(),
            theirs.as_ref().ok(),
            "{} as {}: ours {ours:?}, serde_json {theirs:?}",
            String::from_utf8_lossy(body),
            std::any::type_name::<T>(),
        );
    }

    fn agree(body: &[u8]) {
        agree_as::<LikeState>(body);
        agree_as::<PostLikes>(body);
        agree_as::<BatchLikes>(body);
        agree_as::<ErrorBody>(body);
    }

    #[test]
    fn the_servers_answers_are_read() {
        let liked: LikeState =
            from_json(br#"{"count":1204,"liked_by_me":true,"version":9}"#).unwrap();
        assert_eq!(
            (liked.count, liked.liked_by_me, liked.version),
            (1204, true, 9)
        );
        let post: PostLikes = from_json(
            br#" {"count": 3, "liked_by_me": false, "friends": ["Ana", "Bj\u00f6rn \ud83d\ude00"], "version": 18446744073709551615}
"#,
        )
        .unwrap();
        assert_eq!(post.friends, ["Ana", "Björn 😀"]);
        assert_eq!(post.version, u64::MAX);
        let page: BatchLikes = from_json(
            br#"{"posts":{"7":{"count":1,"liked_by_me":true,"version":1},"9223372036854775807":{"count":0,"liked_by_me":false,"friends":[],"version":2}}}"#,
        )
        .unwrap();
        assert_eq!(page.posts.len(), 2);
        assert_eq!(page.posts[&PostId::MAX].version, 2);
        let error: ErrorBody =
            from_json(br#"{"error":{"code":"post_not_found","message":"no post \"42\""}}"#)
                .unwrap();
        assert_eq!(error, ErrorBody::new("post_not_found", "no post \"42\""));
    }

    #[test]
    fn refusals_say_what_and_where() {
        let missing = from_json::<LikeState>(br#"{"count":1,"liked_by_me":true}"#).unwrap_err();
        assert_eq!(missing.to_string(), "missing field `version` at byte 30");
        let twice = from_json::<LikeState>(br#"{"count":1,"count":2}"#).unwrap_err();
        assert_eq!(twice.to_string(), "duplicate field `count` at byte 19");
        let cut = from_json::<LikeState>(br#"{"count":3,"liked_by_me":tr"#).unwrap_err();
        assert_eq!(cut.to_string(), "unexpected end at byte 28");
    }

    /// Every case a reader could get wrong, each checked against
    /// serde_json as all four types.
    #[test]
    fn edge_cases_agree_with_serde_json() {
        let cases: &[&str] = &[
            // numbers
            r#"{"count":0,"liked_by_me":true,"version":1}"#,
            r#"{"count":-0,"liked_by_me":true,"version":1}"#,
            r#"{"count":-1,"liked_by_me":true,"version":1}"#,
            r#"{"count":01,"liked_by_me":true,"version":1}"#,
            r#"{"count":1.0,"liked_by_me":true,"version":1}"#,
            r#"{"count":1e2,"liked_by_me":true,"version":1}"#,
            r#"{"count":1E+2,"liked_by_me":true,"version":1}"#,
            r#"{"count":18446744073709551615,"liked_by_me":true,"version":1}"#,
            r#"{"count":18446744073709551616,"liked_by_me":true,"version":1}"#,
            r#"{"count":-9223372036854775809,"liked_by_me":true,"version":1}"#,
            r#"{"count":"3","liked_by_me":true,"version":1}"#,
            r#"{"count":null,"liked_by_me":true,"version":1}"#,
            r#"{"count":-,"liked_by_me":true,"version":1}"#,
            // booleans
            r#"{"count":1,"liked_by_me":1,"version":1}"#,
            r#"{"count":1,"liked_by_me":True,"version":1}"#,
            r#"{"count":1,"liked_by_me":truex,"version":1}"#,
            // structure
            r#"{"count":1,"liked_by_me":true,"version":1,}"#,
            r#"{"count":1,"liked_by_me":true,"version":1}}"#,
            r#"{"count":1,"liked_by_me":true,"version":1} x"#,
            "\u{feff}{\"count\":1,\"liked_by_me\":true,\"version\":1}",
            " \t\r\n{\"count\" : 1 , \"liked_by_me\" :\ttrue,\"version\":1}\n ",
            r#"{"count":1 "liked_by_me":true,"version":1}"#,
            r#"{"count" 1,"liked_by_me":true,"version":1}"#,
            r#"{count:1,"liked_by_me":true,"version":1}"#,
            r#"{"count":1,"liked_by_me":true,"version":1,"count":1}"#,
            r#"{"\u0063ount":1,"liked_by_me":true,"version":1}"#,
            r#"{"Count":1,"count":1,"liked_by_me":true,"version":1}"#,
            r#"[1,true,9]"#,
            r#"[1,true]"#,
            r#"[1,true,9,]"#,
            r#"[1,true,9,4]"#,
            r#"[]"#,
            r#"{}"#,
            "",
            "null",
            // unknown fields: any value, its syntax checked
            r#"{"x":{"a":[1,{"b":null}],"c":"\u00e9\n"},"count":1,"liked_by_me":true,"version":1}"#,
            r#"{"x":[1,],"count":1,"liked_by_me":true,"version":1}"#,
            r#"{"x":{"a" 1},"count":1,"liked_by_me":true,"version":1}"#,
            r#"{"x":{1:2},"count":1,"liked_by_me":true,"version":1}"#,
            r#"{"x":-1.5e-3,"count":1,"liked_by_me":true,"version":1}"#,
            r#"{"x":1.,"count":1,"liked_by_me":true,"version":1}"#,
            r#"{"x":.5,"count":1,"liked_by_me":true,"version":1}"#,
            r#"{"x":1e,"count":1,"liked_by_me":true,"version":1}"#,
            r#"{"x":"\ud800","count":1,"liked_by_me":true,"version":1}"#,
            r#"{"x":"\q","count":1,"liked_by_me":true,"version":1}"#,
            r#"{"x":"\u12","count":1,"liked_by_me":true,"version":1}"#,
            r#"{"x":nul,"count":1,"liked_by_me":true,"version":1}"#,
            r#"{"x":[[[[[[]]]]]],"count":1,"liked_by_me":true,"version":1}"#,
            r#"{"x":[[[[[[]]]]],"count":1,"liked_by_me":true,"version":1}"#,
            // strings
            r#"{"count":1,"liked_by_me":false,"friends":["a\"b\\c\/d\b\f\n\r\t"],"version":1}"#,
            r#"{"count":1,"liked_by_me":false,"friends":["\ud83d\ude00"],"version":1}"#,
            r#"{"count":1,"liked_by_me":false,"friends":["\ud83d"],"version":1}"#,
            r#"{"count":1,"liked_by_me":false,"friends":["\ude00"],"version":1}"#,
            r#"{"count":1,"liked_by_me":false,"friends":["\ud83d\u0041"],"version":1}"#,
            r#"{"count":1,"liked_by_me":false,"friends":["\ud83dx"],"version":1}"#,
            r#"{"count":1,"liked_by_me":false,"friends":["\uD83D\uDE00"],"version":1}"#,
            "{\"count\":1,\"liked_by_me\":false,\"friends\":[\"a\u{1}b\"],\"version\":1}",
            "{\"count\":1,\"liked_by_me\":false,\"friends\":[\"a\u{7f}b\"],\"version\":1}",
            r#"{"count":1,"liked_by_me":false,"friends":null,"version":1}"#,
            r#"{"count":1,"liked_by_me":false,"friends":"Ana","version":1}"#,
            r#"{"count":1,"liked_by_me":false,"friends":[1],"version":1}"#,
            r#"{"count":1,"liked_by_me":false,"friends":[],"version":1}"#,
            r#"{"count":1,"liked_by_me":false,"version":1}"#,
            r#"[1,false,[],1]"#,
            r#"[1,false,["Ana"]]"#,
            // feed pages
            r#"{"posts":{}}"#,
            r#"{"posts":[]}"#,
            r#"{"posts":null}"#,
            r#"{"posts":{"0":{"count":1,"liked_by_me":true,"version":1}}}"#,
            r#"{"posts":{"-0":{"count":1,"liked_by_me":true,"version":1}}}"#,
            r#"{"posts":{"07":{"count":1,"liked_by_me":true,"version":1}}}"#,
            r#"{"posts":{" 7":{"count":1,"liked_by_me":true,"version":1}}}"#,
            r#"{"posts":{"7 ":{"count":1,"liked_by_me":true,"version":1}}}"#,
            r#"{"posts":{"7.0":{"count":1,"liked_by_me":true,"version":1}}}"#,
            r#"{"posts":{"\u0037":{"count":1,"liked_by_me":true,"version":1}}}"#,
            r#"{"posts":{"9223372036854775808":{"count":1,"liked_by_me":true,"version":1}}}"#,
            r#"{"posts":{"7":{"count":1,"liked_by_me":true,"version":1},"7":{"count":2,"liked_by_me":true,"version":1}}}"#,
            r#"{"posts":{"7":[1,true,[],1]}}"#,
            r#"[{"7":[1,true,[],1]}]"#,
            // error bodies
            r#"{"error":{"code":"c","message":"m"}}"#,
            r#"{"error":{"code":"c"}}"#,
            r#"{"error":["c","m"]}"#,
            r#"[["c","m"]]"#,
            r#"{"error":{"code":"c","message":"m","detail":{}}, "request":7}"#,
            r#"{"error":"oops"}"#,
        ];
        for case in cases {
            agree(case.as_bytes());
        }
        // Bytes that are not UTF-8: refused in a string that is read,
        // skipped in one that is not.
        agree(b"{\"count\":1,\"liked_by_me\":false,\"friends\":[\"\xff\"],\"version\":1}");
        agree(b"{\"x\":\"\xff\xfe\",\"count\":1,\"liked_by_me\":false,\"version\":1}");
        agree(b"{\"\xff\":1,\"count\":1,\"liked_by_me\":false,\"version\":1}");
    }

    #[test]
    fn deep_nesting_in_a_skipped_value_does_not_run_the_stack_out() {
        let depth = 1_000_000;
        let body = format!(
            r#"{{"x":{}{},"count":1,"liked_by_me":true,"version":1}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert!(from_json::<LikeState>(body.as_bytes()).is_ok());
    }

    /// JSON text built from pieces that exercise the grammar, the field
    /// names and the number and string rules: mostly well-formed, often
    /// one of the four bodies, sometimes not.
    fn piece() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            Just("false".to_owned()),
            prop::sample::select(vec![
                "0",
                "1",
                "7",
                "42",
                "-0",
                "-1",
                "01",
                "1.5",
                "1e2",
                "-2E-1",
                "18446744073709551615",
                "18446744073709551616",
                "9223372036854775807",
                "9007199254740993",
                "1.",
                "-",
                ".5",
            ])
            .prop_map(str::to_owned),
            prop::sample::select(vec![
                r#""Ana""#,
                r#""""#,
                r#""\u00e9\n""#,
                r#""\ud83d\ude00""#,
                r#""\ud83d""#,
                r#""\ude00""#,
                r#""\q""#,
                "\"a\u{1}\"",
                r#""é""#,
                r#""\/\b\f\r\t\"\\""#,
                r#""\u004""#,
            ])
            .prop_map(str::to_owned),
        ];
        let key = prop::sample::select(vec![
            "count",
            "liked_by_me",
            "friends",
            "version",
            "posts",
            "error",
            "code",
            "message",
            "\\u0063ount",
            "x",
            "7",
            "0",
            "-0",
            "07",
            " 7",
            "9223372036854775808",
            "1e2",
            "",
        ]);
        let space = prop::sample::select(vec!["", "", "", " ", "\n\t", "\r "]);
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                (prop::collection::vec(inner.clone(), 0..5), space.clone()).prop_map(
                    |(items, space)| format!("[{space}{}]", items.join(&format!(",{space}")))
                ),
                (
                    prop::collection::vec((key.clone(), inner), 0..6),
                    space.clone(),
                    any::<bool>(),
                )
                    .prop_map(|(entries, space, trailing_comma)| {
                        let entries: Vec<String> = entries
                            .into_iter()
                            .map(|(key, value)| format!("\"{key}\"{space}:{space}{value}"))
                            .collect();
                        let comma = if trailing_comma && !entries.is_empty() {
                            ","
                        } else {
                            ""
                        };
                        format!("{{{}{comma}}}", entries.join(","))
                    }),
            ]
        })
    }

    /// A body: a piece, sometimes cut short or with one byte changed.
    fn body() -> impl Strategy<Value = Vec<u8>> {
        (piece(), any::<u8>(), any::<prop::sample::Index>(), 0..8u8).prop_map(
            |(text, byte, index, edit)| {
                let mut bytes = text.into_bytes();
                if bytes.is_empty() {
                    return bytes;
                }
                let at = index.index(bytes.len());
                match edit {
                    0 => bytes.truncate(at),
                    1 => bytes[at] = byte,
                    2 => bytes.insert(at, byte),
                    3 => {
                        bytes.remove(at);
                    }
                    _ => {}
                }
                bytes
            },
        )
    }

    /// Bodies shaped like the four answers, with their fields shuffled,
    /// unknown ones added, and values drawn from the pieces.
    fn answer() -> impl Strategy<Value = Vec<u8>> {
        let value = prop_oneof![
            3 => prop::sample::select(vec!["0", "3", "18446744073709551615", "-0", "true", "false"])
                .prop_map(str::to_owned),
            1 => piece(),
        ];
        let fields = prop::collection::vec(
            (
                prop::sample::select(vec![
                    "count",
                    "liked_by_me",
                    "friends",
                    "version",
                    "x",
                    "count",
                ]),
                value,
            ),
            0..6,
        );
        (fields, any::<bool>()).prop_map(|(fields, paged)| {
            let object: Vec<String> = fields
                .into_iter()
                .map(|(key, value)| {
                    let value = if key == "friends" && value.starts_with('t') {
                        r#"["Ana","\u00c9mile"]"#.to_owned()
                    } else {
                        value
                    };
                    format!("\"{key}\":{value}")
                })
                .collect();
            let object = format!("{{{}}}", object.join(","));
            if paged {
                format!(r#"{{"posts":{{"7":{object},"8":{object}}}}}"#).into_bytes()
            } else {
                object.into_bytes()
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn any_body_is_read_as_serde_json_reads_it(body in body()) {
            agree(&body);
        }

        #[test]
        fn answer_shaped_bodies_are_read_as_serde_json_reads_them(body in answer()) {
            agree(&body);
        }
    }
}
