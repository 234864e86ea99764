//! What a verified sign-in token says, and why one is refused: the claims
//! both verifiers read (HS256 in `auth.rs`, an identity provider's key set
//! in `jwks.rs`), the user they sign in, and the one mapping of
//! `jsonwebtoken`'s refusals to what the server answers.

use jsonwebtoken::errors::ErrorKind;
use likekit_proto::UserId;
use serde::{Deserialize, Serialize};

/// The claims of a LikeKit token (and the ones read from an identity
/// provider's: `iss`, `aud` and `nbf` are checked by the validation).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Claims {
    /// The user id as a decimal string.
    pub(crate) sub: String,
    /// Expiry, seconds since the Unix epoch.
    pub(crate) exp: u64,
    /// Issued at, seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    iat: Option<u64>,
    /// Not before, seconds since the Unix epoch: written on a token minted
    /// to start later; read (and checked) by `jsonwebtoken`'s validation,
    /// not here.
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    nbf: Option<u64>,
    /// `iss` holds one string (RFC 7519, 4.1.1). `jsonwebtoken` would also
    /// take an array that holds the configured issuer; read here only so
    /// that an array, or any other value that is not a string, is refused.
    #[serde(
        rename = "iss",
        default,
        skip_serializing,
        deserialize_with = "one_string"
    )]
    _iss: (),
}

/// A claim that, when present, is one string (or `null`).
fn one_string<'de, D: serde::Deserializer<'de>>(claim: D) -> Result<(), D::Error> {
    Option::<String>::deserialize(claim).map(drop)
}

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The token's `exp` is in the past.
    #[error("the token has expired")]
    Expired,
    /// Anything else: not a JWT, a wrong signature, another algorithm
    /// (including `none`), a missing `exp`, a `sub` that is not a user id.
    #[error("the token is invalid: {0}")]
    Invalid(String),
}

impl Claims {
    /// Claims for `sub` that expire at `exp` (and were issued at `iat`).
    pub(crate) fn new(sub: String, exp: u64, iat: Option<u64>) -> Self {
        Self {
            sub,
            exp,
            iat,
            nbf: None,
            _iss: (),
        }
    }

    /// These claims, not valid before `nbf`.
    pub(crate) fn not_before(self, nbf: u64) -> Self {
        Self {
            nbf: Some(nbf),
            ..self
        }
    }
}

/// Why `jsonwebtoken` refused a token, as the server says it.
pub(crate) fn token_error(err: &jsonwebtoken::errors::Error) -> TokenError {
    match err.kind() {
        ErrorKind::ExpiredSignature => TokenError::Expired,
        ErrorKind::ImmatureSignature => {
            TokenError::Invalid("the token is not valid yet (`nbf`)".into())
        }
        ErrorKind::InvalidIssuer => TokenError::Invalid("wrong issuer (`iss`)".into()),
        ErrorKind::InvalidAudience => TokenError::Invalid("wrong audience (`aud`)".into()),
        ErrorKind::InvalidSignature => TokenError::Invalid("bad signature".into()),
        // Only the HS256 path can meet these: a key set's key pins its
        // algorithm before the token is decoded.
        ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => {
            TokenError::Invalid("tokens must be signed with HS256".into())
        }
        ErrorKind::MissingRequiredClaim(claim) => {
            TokenError::Invalid(format!("the `{claim}` claim is required"))
        }
        _ => TokenError::Invalid("not a well-formed token".into()),
    }
}

/// The user and expiry of verified claims, if `sub` is a user id written
/// as one is (no sign, no leading zero): to an identity provider `07` and
/// `7` are two subjects, which must not both be user 7.
pub(crate) fn signed_in(claims: Claims) -> Result<(UserId, u64), TokenError> {
    let user = claims
        .sub
        .parse::<UserId>()
        .ok()
        .filter(|user| claims.sub.len() == decimal_len(user.get()))
        .ok_or_else(|| TokenError::Invalid("`sub` must be a user id".into()))?;
    Ok((user, claims.exp))
}

/// How many digits `n` has in decimal.
fn decimal_len(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |log| log as usize + 1)
}
