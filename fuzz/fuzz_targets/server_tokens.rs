//! The server's sign-in token check (`Tokens::verify`, HS256) against any
//! text, against its one valid token changed, and against claims of any
//! bytes signed with its secret.
//!
//! The first byte picks the mode (its value modulo 3); the rest is:
//!
//! * `0`: the token itself;
//! * `1`: edits to a valid token (minted in the target with a fixed
//!   secret), four bytes each: where (the first two), which edit (the
//!   third: flip, insert, remove or cut) and the byte flipped in or
//!   inserted (the fourth);
//! * `2`: a header (the second byte picks one) and the claims (the rest),
//!   signed with the secret, so that the check gets past the signature.
//!
//! For every input, `verify` returns, never panics, and:
//!
//! * signs a user in from text (`0`) or a changed token (`1`) only when it
//!   is the valid token itself, and then as its user. HS256 signs the
//!   header and claims exactly as written, and the signature is read as
//!   unpadded base64url that refuses padding and trailing bits that are
//!   not zero, so it has one spelling: a change anywhere is refused;
//! * signs a user in from signed claims (`2`) only under an HS256 header,
//!   when they are a JSON object whose `sub` is that user's id and whose
//!   `exp` is a whole number not yet past; it says "expired" only when
//!   `exp` is past. The claims are read as serde_json reads them into
//!   those two fields, as the server does: the other fields are skipped,
//!   and the UTF-8 of strings in them is not checked (a claims set with
//!   bytes that are not UTF-8 in a string of another field is taken, as
//!   `jsonwebtoken` takes it; only the holder of the secret can sign one).

#![no_main]

use std::sync::LazyLock;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey};
use libfuzzer_sys::fuzz_target;
use likekit_fuzz::{edited, now_secs};
use likekit_server::wire::UserId;
use likekit_server::{TokenError, Tokens};
use serde::Deserialize;

const SECRET: &[u8] = b"the fuzz target's own secret";

/// The user of the valid token.
const USER: UserId = UserId::checked(7).expect("7 is an id");

static TOKENS: LazyLock<Tokens> = LazyLock::new(|| Tokens::new(SECRET).expect("a secret"));

/// A token for `USER`, valid for a hundred years.
static VALID: LazyLock<String> =
    LazyLock::new(|| TOKENS.mint(USER, Duration::from_secs(100 * 365 * 24 * 3600)));

static KEY: LazyLock<EncodingKey> =
    LazyLock::new(|| EncodingKey::from_secret(SECRET).expect("a secret"));

/// The headers of mode `2`, and whether each is an HS256 one.
const HEADERS: [(&str, bool); 6] = [
    (r#"{"typ":"JWT","alg":"HS256"}"#, true),
    (r#"{"alg":"HS256"}"#, true),
    (r#"{"alg":"none"}"#, false),
    (r#"{"alg":"HS384","typ":"JWT"}"#, false),
    (r#"{"alg":"RS256"}"#, false),
    (r#"{"alg":"hs256"}"#, false),
];

/// The claims a token signs a user in with, read as serde_json reads
/// them into fields (as the server does: other fields skipped, without a
/// check of the UTF-8 of strings in them).
#[derive(Debug, Deserialize)]
struct SignsIn {
    sub: String,
    exp: u64,
}

/// The expiry of the claims, read the same way.
#[derive(Debug, Deserialize)]
struct Exp {
    exp: u64,
}

/// The claims of mode `2` under header `header`, signed with the secret.
fn signed(header: &str, claims: &[u8]) -> String {
    // `Tokens::new` installs the crypto provider that `sign` uses.
    LazyLock::force(&TOKENS);
    let message = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header),
        URL_SAFE_NO_PAD.encode(claims)
    );
    let signature =
        jsonwebtoken::crypto::sign(message.as_bytes(), &KEY, Algorithm::HS256).expect("HS256");
    format!("{message}.{signature}")
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 | 1 => {
            let token = if mode % 3 == 0 {
                String::from_utf8_lossy(rest).into_owned()
            } else {
                String::from_utf8_lossy(&edited(VALID.as_bytes(), rest)).into_owned()
            };
            match TOKENS.verify(&token) {
                Ok(user) => {
                    assert_eq!(token, *VALID, "a token that is not the valid one signs in");
                    assert_eq!(user, USER);
                }
                Err(e) => assert_ne!(token, *VALID, "the valid token is refused: {e}"),
            }
        }
        _ => {
            let Some((&pick, claims)) = rest.split_first() else {
                return;
            };
            let (header, hs256) = HEADERS[usize::from(pick) % HEADERS.len()];
            let token = signed(header, claims);
            let before = now_secs();
            let verified = TOKENS.verify(&token);
            let after = now_secs();
            let exp = serde_json::from_slice::<Exp>(claims).map(|read| read.exp);
            match verified {
                Ok(user) => {
                    assert!(hs256, "signed in under {header}");
                    let read = serde_json::from_slice::<SignsIn>(claims)
                        .expect("claims that sign a user in can be read");
                    assert_eq!(read.sub.parse::<UserId>(), Ok(user), "{read:?}");
                    assert!(read.exp >= before, "{read:?}");
                }
                Err(TokenError::Expired) => {
                    assert!(exp.as_ref().is_ok_and(|exp| *exp < after), "{exp:?}");
                }
                Err(_) => {}
            }
        }
    }
});
