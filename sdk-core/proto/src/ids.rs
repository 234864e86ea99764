//! Post and user ids: the one home of the id rule.
//!
//! An id is a whole number from 1 to [`MAX_ID`] (`i64::MAX`, so that every
//! id fits a signed 64-bit database column and a Kotlin `Long` or Swift
//! `Int64`). [`PostId::new`] and [`UserId::new`] are the only constructors;
//! every other way in — [`TryFrom`] of the integer types, [`FromStr`],
//! deserialization — goes through them, so an id that exists is valid.

use std::{fmt, num::NonZeroU64, str::FromStr};

use serde::{Deserialize, Serialize};

/// The largest id, `i64::MAX`.
pub const MAX_ID: u64 = i64::MAX as u64;

/// Which kind of id an [`IdError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdKind {
    /// A [`PostId`].
    Post,
    /// A [`UserId`].
    User,
}

impl IdKind {
    fn noun(self) -> &'static str {
        match self {
            Self::Post => "post",
            Self::User => "user",
        }
    }
}

/// An id outside `1..=MAX_ID`, or text that is not a whole number.
///
/// ```
/// use likekit_proto::PostId;
/// let e = PostId::try_from(-1_i64).unwrap_err();
/// assert_eq!(e.code(), "bad_post_id");
/// assert_eq!(e.to_string(), "post ids are whole numbers from 1 to 9223372036854775807; got -1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} ids are whole numbers from 1 to {MAX_ID}; got {got}", .kind.noun())]
pub struct IdError {
    kind: IdKind,
    got: String,
}

impl IdError {
    fn new(kind: IdKind, got: impl fmt::Display) -> Self {
        // Long text is cut: the message quotes the input, never all of it.
        let mut got = got.to_string();
        if got.len() > 40 {
            let mut end = 40;
            while !got.is_char_boundary(end) {
                end -= 1;
            }
            got.truncate(end);
            got.push('…');
        }
        Self { kind, got }
    }

    /// Which kind of id was refused.
    pub fn kind(&self) -> IdKind {
        self.kind
    }

    /// The error code, the same on every platform and on the wire:
    /// `bad_post_id` or `bad_user_id` ([`crate::code`]).
    pub fn code(&self) -> &'static str {
        match self.kind {
            IdKind::Post => crate::code::BAD_POST_ID,
            IdKind::User => crate::code::BAD_USER_ID,
        }
    }
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $kind:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(into = "u64")]
        pub struct $name(NonZeroU64);

        /// A JSON whole number (`42`, or `42.0`, which JSON Schema counts the same), checked
        /// by [`Self::new`].
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let crate::whole::IdNumber(id) = crate::whole::IdNumber::deserialize(deserializer)?;
                Self::new(id).map_err(serde::de::Error::custom)
            }
        }

        impl $name {
            /// The smallest id, 1.
            pub const MIN: Self = Self(NonZeroU64::MIN);
            /// The largest id, [`MAX_ID`].
            pub const MAX: Self = match NonZeroU64::new(MAX_ID) {
                Some(id) => Self(id),
                None => unreachable!(),
            };

            /// The id `id`, if it is in `1..=MAX_ID`.
            ///
            /// # Errors
            ///
            /// [`IdError`] for 0 and for anything above [`MAX_ID`].
            pub fn new(id: u64) -> Result<Self, IdError> {
                Self::checked(id).ok_or_else(|| IdError::new($kind, id))
            }

            /// The id `id`, if it is in `1..=MAX_ID`, in a form usable in
            /// constants: `const POST: Self = Self::checked(42).unwrap();`
            /// (an id out of range fails the build). This is the one place
            /// the range is checked; [`Self::new`] and every `TryFrom`
            /// call it.
            pub const fn checked(id: u64) -> Option<Self> {
                match NonZeroU64::new(id) {
                    Some(nonzero) if id <= MAX_ID => Some(Self(nonzero)),
                    _ => None,
                }
            }

            /// The id as an unsigned number.
            pub const fn get(self) -> u64 {
                self.0.get()
            }

            /// The id as a signed number (always positive: ids fit `i64`).
            pub const fn as_i64(self) -> i64 {
                // In range by construction: 1..=i64::MAX.
                self.0.get() as i64
            }
        }

        impl TryFrom<u64> for $name {
            type Error = IdError;
            fn try_from(id: u64) -> Result<Self, IdError> {
                Self::new(id)
            }
        }

        impl TryFrom<i64> for $name {
            type Error = IdError;
            fn try_from(id: i64) -> Result<Self, IdError> {
                u64::try_from(id)
                    .map_err(|_| IdError::new($kind, id))
                    .and_then(Self::new)
            }
        }

        impl From<$name> for u64 {
            fn from(id: $name) -> u64 {
                id.get()
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                id.as_i64()
            }
        }

        /// Decimal digits only: no sign, no spaces, no leading `+`.
        impl FromStr for $name {
            type Err = IdError;
            fn from_str(text: &str) -> Result<Self, IdError> {
                if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(IdError::new($kind, crate::quoted(text)));
                }
                text.parse::<u64>()
                    .map_err(|_| IdError::new($kind, text))
                    .and_then(Self::new)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }

        /// An integer from 1 to [`MAX_ID`] in the OpenAPI document.
        #[cfg(feature = "openapi")]
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                    .minimum(Some(1))
                    .maximum(Some(MAX_ID as i64))
                    .examples([42])
                    .into()
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::ToSchema for $name {}

        impl PartialEq<u64> for $name {
            fn eq(&self, other: &u64) -> bool {
                self.get() == *other
            }
        }
    };
}

id_type!(
    /// A post's id: a whole number from 1 to [`MAX_ID`].
    ///
    /// ```
    /// use likekit_proto::PostId;
    /// let post = PostId::new(42).unwrap();
    /// assert_eq!(post.get(), 42);
    /// assert_eq!("42".parse::<PostId>().unwrap(), post);
    /// assert_eq!(serde_json::to_string(&post).unwrap(), "42");
    /// assert!(PostId::new(0).is_err());
    /// assert!(serde_json::from_str::<PostId>("-1").is_err());
    /// ```
    PostId,
    IdKind::Post
);

id_type!(
    /// A user's id, the `sub` of their sign-in token: a whole number from 1
    /// to [`MAX_ID`].
    ///
    /// ```
    /// use likekit_proto::UserId;
    /// assert_eq!(UserId::try_from(7_i64).unwrap().get(), 7);
    /// assert_eq!(UserId::try_from(0_i64).unwrap_err().code(), "bad_user_id");
    /// ```
    UserId,
    IdKind::User
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_range_is_one_to_i64_max() {
        assert_eq!(PostId::new(1).map(PostId::get), Ok(1));
        assert_eq!(PostId::new(MAX_ID).map(PostId::get), Ok(MAX_ID));
        assert_eq!(PostId::MAX.as_i64(), i64::MAX);
        assert_eq!(PostId::MIN.get(), 1);
        for bad in [0, MAX_ID + 1, u64::MAX] {
            let e = PostId::try_from(bad).unwrap_err();
            assert_eq!(e.code(), "bad_post_id");
            assert!(e.to_string().ends_with(&format!("got {bad}")), "{e}");
        }
        for bad in [0_i64, -1, i64::MIN] {
            assert_eq!(UserId::try_from(bad).unwrap_err().code(), "bad_user_id");
        }
    }

    #[test]
    fn constants_use_the_same_range() {
        const POST: PostId = PostId::checked(42).unwrap();
        assert_eq!(POST.get(), 42);
        for n in [0, 1, 42, MAX_ID, MAX_ID + 1, u64::MAX] {
            assert_eq!(PostId::checked(n), PostId::new(n).ok(), "{n}");
            assert_eq!(UserId::checked(n), UserId::new(n).ok(), "{n}");
        }
    }

    #[test]
    fn text_is_digits_only() {
        assert_eq!("9223372036854775807".parse::<UserId>(), Ok(UserId::MAX));
        for bad in [
            "",
            "0",
            "-1",
            "+1",
            " 1",
            "1 ",
            "1.0",
            "0x10",
            "9223372036854775808",
            "١",
        ] {
            let e = bad.parse::<PostId>().unwrap_err();
            assert_eq!(e.kind(), IdKind::Post, "{bad:?}");
        }
        let long = "9".repeat(100);
        let e = long.parse::<PostId>().unwrap_err();
        assert!(e.to_string().len() < 120, "{e}");
    }

    #[test]
    fn serde_goes_through_the_constructor() {
        #[derive(Debug, Deserialize)]
        struct Body {
            #[allow(dead_code)]
            id: PostId,
        }
        assert!(serde_json::from_str::<Body>(r#"{"id": 5}"#).is_ok());
        // JSON Schema counts 5.0 an integer, and so do the bodies.
        assert!(serde_json::from_str::<Body>(r#"{"id": 5.0}"#).is_ok());
        for bad in [
            r#"{"id": 0}"#,
            r#"{"id": 0.0}"#,
            r#"{"id": -3}"#,
            r#"{"id": 1.5}"#,
            r#"{"id": "5"}"#,
            r#"{"id": 9223372036854775808}"#,
            r#"{"id": 9223372036854775806.0}"#,
        ] {
            assert!(serde_json::from_str::<Body>(bad).is_err(), "{bad}");
        }
        let e = serde_json::from_str::<Body>(r#"{"id": 0}"#).unwrap_err();
        assert!(e.to_string().contains("post ids are whole numbers"), "{e}");
    }
}
