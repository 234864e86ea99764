//! Sign-in tokens: HS256 JWTs whose `sub` is the user id, and the
//! remembered tokens of both verifiers (this one and an identity
//! provider's key set, `jwks.rs`). What a token's claims must say, and the
//! one mapping of refusals, are in `claims.rs`, below both.

use std::{
    fmt,
    sync::atomic::{AtomicU64, Ordering, fence},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use axum::http::header;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use likekit_proto::{UserId, code};

use crate::{
    claims::{Claims, TokenError, signed_in, token_error},
    error::ApiError,
    ttl_cache::TtlCache,
};

/// Mints and checks sign-in tokens with one HS256 secret.
///
/// ```
/// use std::time::Duration;
/// use likekit_server::wire::UserId;
/// let tokens = likekit_server::Tokens::new(b"a secret of some length").unwrap();
/// let ana = UserId::new(7).unwrap();
/// let token = tokens.mint(ana, Duration::from_secs(3600));
/// assert_eq!(tokens.verify(&token), Ok(ana));
/// let other = likekit_server::Tokens::new(b"another secret").unwrap();
/// assert!(other.verify(&token).is_err());
/// assert!(likekit_server::Tokens::new(b"").is_err());
/// ```
#[derive(Clone)]
pub struct Tokens {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens").finish_non_exhaustive()
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Tokens {
    /// Uses `secret` for signing and checking; it must not be empty.
    pub fn new(secret: &[u8]) -> Result<Self, crate::Error> {
        // Select the pure-Rust backend explicitly, so the choice holds even if
        // another crate in the build enables a second backend feature.
        let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_required_spec_claims(&["exp", "sub"]);
        validation.leeway = 0;
        validation.validate_exp = true;
        // As with an identity provider's tokens: one not valid yet is
        // refused (`jsonwebtoken` skips `nbf` unless asked).
        validation.validate_nbf = true;
        let empty = |_| crate::Error::Config("the token secret must not be empty".into());
        Ok(Self {
            encoding: EncodingKey::from_secret(secret).map_err(empty)?,
            decoding: DecodingKey::from_secret(secret).map_err(empty)?,
            validation,
        })
    }

    /// A token for `user` that expires after `ttl`.
    pub fn mint(&self, user: UserId, ttl: Duration) -> String {
        self.mint_valid_from(user, 0, ttl)
    }

    /// A token for `user` valid from `valid_from_secs` seconds from now
    /// for `ttl`: issued then (`iat`) when that is now or past, so that a
    /// start far enough back makes a token already expired; carrying it as
    /// `nbf` (with `iat` now) when it is ahead, so that it is refused until
    /// then. What `POST /admin/tokens` mints, for tests of a client's
    /// handling of expired and not-yet-valid tokens.
    ///
    /// ```
    /// use std::time::Duration;
    /// use likekit_server::{TokenError, Tokens};
    /// use likekit_server::wire::UserId;
    ///
    /// let tokens = Tokens::new(b"a secret of thirty-two bytes, at least").unwrap();
    /// let ana = UserId::new(7).unwrap();
    /// let expired = tokens.mint_valid_from(ana, -7200, Duration::from_secs(3600));
    /// assert_eq!(tokens.verify(&expired), Err(TokenError::Expired));
    /// let later = tokens.mint_valid_from(ana, 600, Duration::from_secs(3600));
    /// assert!(matches!(tokens.verify(&later), Err(TokenError::Invalid(_))));
    /// ```
    pub fn mint_valid_from(&self, user: UserId, valid_from_secs: i64, ttl: Duration) -> String {
        let now = now_secs();
        let start = now.saturating_add_signed(valid_from_secs);
        let exp = start.saturating_add(ttl.as_secs());
        let claims = if start > now {
            Claims::new(user.to_string(), exp, Some(now)).not_before(start)
        } else {
            Claims::new(user.to_string(), exp, Some(start))
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .expect("HS256 signing with an in-memory key cannot fail")
    }

    /// The user a token signs in, if it is valid now.
    pub fn verify(&self, token: &str) -> Result<UserId, TokenError> {
        self.verify_with_expiry(token).map(|(user, _)| user)
    }

    /// The user and the expiry (`exp`) of a token valid now.
    pub(crate) fn verify_with_expiry(&self, token: &str) -> Result<(UserId, u64), TokenError> {
        let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .map_err(|err| token_error(&err))?;
        signed_in(data.claims)
    }
}

/// Checks tokens, remembering the ones that passed: a client sends the same
/// token on every call, and a lookup is far cheaper than an HMAC and two JSON
/// parses. Only successes are remembered, and expiry is checked on every use.
pub(crate) struct Authenticator {
    tokens: Tokens,
    /// The identity provider's keys, when tokens come from one.
    pub(crate) jwks: Option<crate::jwks::Jwks>,
    /// Whether HS256 tokens (the server's own secret) are taken: always
    /// without an identity provider; with one, only when a token secret
    /// was given explicitly (development and tests).
    hs256: bool,
    verified: TtlCache<String, (UserId, u64)>,
    /// Bumped by [`forget`](Self::forget): a token checked against the
    /// keys of an older generation is not remembered, so a check that was
    /// under way when a key was removed cannot put its token back.
    generation: AtomicU64,
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authenticator")
            .field("remembered", &self.verified.len())
            .finish_non_exhaustive()
    }
}

impl Authenticator {
    pub(crate) fn new(tokens: Tokens) -> Self {
        Self {
            tokens,
            jwks: None,
            hs256: true,
            verified: TtlCache::new(Duration::from_secs(60), 100_000),
            generation: AtomicU64::new(0),
        }
    }

    /// Tokens from an identity provider's key set; HS256 ones too when
    /// `hs256`.
    pub(crate) fn with_jwks(tokens: Tokens, jwks: crate::jwks::Jwks, hs256: bool) -> Self {
        Self {
            jwks: Some(jwks),
            hs256,
            ..Self::new(tokens)
        }
    }

    /// Forgets the tokens remembered as verified (the key set changed).
    pub(crate) fn forget(&self) {
        // Release: a check that sees the new generation also sees the new
        // keys, put in force before this call. The fence pairs with the
        // one in `remember`: either this clear sees its entry, or it sees
        // this generation and takes the entry out itself.
        self.generation.fetch_add(1, Ordering::Release);
        fence(Ordering::SeqCst);
        self.verified.clear();
    }

    /// The generation a check starts in (see [`remember`](Self::remember)).
    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Remembers a token checked in `generation`, unless the tokens have
    /// been forgotten since: its check may have used a key no longer in
    /// force.
    fn remember(&self, token: &str, checked: (UserId, u64), generation: u64) {
        if self.generation.load(Ordering::Relaxed) != generation {
            return;
        }
        self.verified.insert(token.to_owned(), checked);
        // A `forget` between the look above and the insert: its clear may
        // have run before the insert.
        fence(Ordering::SeqCst);
        if self.generation.load(Ordering::Relaxed) != generation {
            self.verified.remove(&token.to_owned());
        }
    }

    /// The full check of a token not remembered.
    fn check(&self, token: &str) -> Result<(UserId, u64), TokenError> {
        let Some(jwks) = &self.jwks else {
            return self.tokens.verify_with_expiry(token);
        };
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| TokenError::Invalid("not a well-formed token".into()))?;
        if header.alg != Algorithm::HS256 {
            jwks.verify(token, &header)
        } else if self.hs256 {
            self.tokens.verify_with_expiry(token)
        } else {
            Err(TokenError::Invalid(
                "tokens must be signed by the identity provider's keys".into(),
            ))
        }
    }

    pub(crate) fn tokens(&self) -> &Tokens {
        &self.tokens
    }

    pub(crate) fn verify(&self, token: &str) -> Result<UserId, TokenError> {
        if let Some((user, exp)) = self.verified.get(token) {
            // The same rule as the full check (no leeway).
            return if exp < now_secs() {
                Err(TokenError::Expired)
            } else {
                Ok(user)
            };
        }
        let generation = self.generation();
        let (user, exp) = self.check(token)?;
        self.remember(token, (user, exp), generation);
        Ok(user)
    }

    /// Drops expired entries.
    pub(crate) fn sweep(&self) {
        self.verified.sweep();
    }
}

/// Reads `Authorization: Bearer <token>` and checks it. A request with
/// two `Authorization` headers is refused (`invalid_token`): which one a
/// proxy in front would have checked or passed on is anyone's guess.
pub(crate) fn authenticate(
    tokens: &Authenticator,
    headers: &axum::http::HeaderMap,
) -> Result<UserId, ApiError> {
    let value = match crate::extract::single_header(headers, header::AUTHORIZATION) {
        Ok(Some(value)) => value,
        Ok(None) => {
            return Err(ApiError::unauthorized(
                code::MISSING_TOKEN,
                "send Authorization: Bearer <token>",
            ));
        }
        Err(()) => {
            return Err(ApiError::unauthorized(
                code::INVALID_TOKEN,
                "send one Authorization header, not several",
            ));
        }
    };
    let value = value
        .to_str()
        .map_err(|_| ApiError::unauthorized(code::INVALID_TOKEN, "not a well-formed token"))?;
    let token = match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
        _ => {
            return Err(ApiError::unauthorized(
                code::INVALID_TOKEN,
                "use the Bearer scheme: Authorization: Bearer <token>",
            ));
        }
    };
    tokens.verify(token).map_err(|err| match err {
        TokenError::Expired => ApiError::unauthorized(code::TOKEN_EXPIRED, err.to_string()),
        TokenError::Invalid(_) => ApiError::unauthorized(code::INVALID_TOKEN, err.to_string()),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn user(id: u64) -> UserId {
        UserId::new(id).unwrap()
    }

    #[test]
    fn round_trip_and_wrong_secret() {
        let tokens = Tokens::new(b"secret-one").expect("secret");
        let token = tokens.mint(user(42), Duration::from_secs(60));
        assert_eq!(tokens.verify(&token), Ok(user(42)));
        assert!(matches!(
            Tokens::new(b"secret-two").expect("secret").verify(&token),
            Err(TokenError::Invalid(_))
        ));
    }

    #[test]
    fn expired_tokens_are_refused() {
        let tokens = Tokens::new(b"secret").expect("secret");
        let claims = Claims::new("5".into(), now_secs() - 10, None);
        let token = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(b"secret").expect("key"),
        )
        .expect("sign");
        assert_eq!(tokens.verify(&token), Err(TokenError::Expired));
    }

    #[test]
    fn remembered_tokens_still_expire() {
        let tokens = Tokens::new(b"secret").expect("secret");
        let auth = Authenticator::new(tokens.clone());
        let token = tokens.mint(user(3), Duration::from_secs(60));
        assert_eq!(auth.verify(&token), Ok(user(3)));
        assert_eq!(auth.verify(&token), Ok(user(3)), "remembered");
        assert!(auth.verify("garbage").is_err());
        assert!(
            auth.verify("garbage").is_err(),
            "failures are not remembered"
        );
        // A remembered entry whose expiry has passed is refused.
        auth.verified
            .insert("old".to_string(), (user(3), now_secs() - 1));
        assert_eq!(auth.verify("old"), Err(TokenError::Expired));
    }

    /// A key set refresh that forgets the remembered tokens while a token
    /// is being checked (against the keys of before): the check's answer
    /// stands for that request, but the token is not remembered, so its
    /// next use is checked against the keys in force.
    #[test]
    fn a_check_under_way_when_tokens_are_forgotten_is_not_remembered() {
        let tokens = Tokens::new(b"secret").unwrap();
        let auth = Authenticator::new(tokens.clone());
        let token = tokens.mint(user(3), Duration::from_secs(60));

        let generation = auth.generation();
        let checked = auth.check(&token).unwrap();
        auth.forget();
        auth.remember(&token, checked, generation);
        assert_eq!(auth.verified.get(token.as_str()), None, "remembered");

        // A check that starts after the forget is remembered.
        assert_eq!(auth.verify(&token), Ok(user(3)));
        assert!(auth.verified.get(token.as_str()).is_some());
    }

    #[test]
    fn a_sub_that_is_not_a_user_id_is_invalid() {
        let tokens = Tokens::new(b"secret").unwrap();
        for sub in ["0", "-1", "+1", "abc", "9223372036854775808"] {
            let claims = Claims::new(sub.into(), now_secs() + 60, None);
            let token = jsonwebtoken::encode(
                &Header::new(Algorithm::HS256),
                &claims,
                &EncodingKey::from_secret(b"secret").unwrap(),
            )
            .unwrap();
            assert!(
                matches!(tokens.verify(&token), Err(TokenError::Invalid(_))),
                "{sub:?}"
            );
        }
    }
}
