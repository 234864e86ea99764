//! Tokens from an identity provider (`--jwks`): the server's reading of a
//! key set document, and its check of tokens against a set of two keys
//! (EdDSA `ed` and ES256 `es`, made for this target only), with `iss` and
//! `aud` required, and no token secret (its own HS256 tokens refused).
//!
//! The first byte picks the mode (its value modulo 5); the rest is:
//!
//! * `0`: a key set document;
//! * `1`: a token;
//! * `2`: edits to a valid EdDSA token, four bytes each: where (the first
//!   two), which edit (the third: flip, insert, remove or cut) and the byte
//!   flipped in or inserted (the fourth);
//! * `3`: a header (the second byte picks one of [`HEADERS`]) and the
//!   claims (the rest), signed as that header says;
//! * `4`: a header, then one byte each for the `sub`, `exp`, `nbf`, `iss`
//!   and `aud` of the claims, picked from [`SUBS`], [`TIMES`] (`exp` and
//!   `nbf`) and [`NAMES`] (`iss` and `aud`).
//!
//! For every input nothing panics, and:
//!
//! * a key set is taken only when it is a JSON object with a `keys` array
//!   of 1 to 64 public keys, none of them symmetric (`oct`), each for an
//!   algorithm of its own type (RSA: RS or PS; EC: ES256 or ES384; OKP:
//!   EdDSA);
//! * a token of modes `1` and `2` signs in only when it is the valid token
//!   itself (an Ed25519 signature has one encoding, and the signature part
//!   one spelling);
//! * signed claims (`3`) sign in only under a header whose `kid` names a
//!   key, whose `alg` is that key's and whose signature is that key's, and
//!   only when `sub` is a user id, `exp` a whole number not yet past, `nbf`
//!   absent or not in the future, `iss` the configured issuer (one string)
//!   and `aud` the configured audience or an array that holds it;
//!   "expired" only when `exp` is past;
//! * the claims of mode `4` sign in exactly when those rules say.

#![no_main]

use std::sync::LazyLock;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::{Algorithm, EncodingKey};
use libfuzzer_sys::fuzz_target;
use likekit_fuzz::{edited, now_secs};
use likekit_server::TokenError;
use likekit_server::fuzzing::{JwksTokens, jwks_algorithms};
use likekit_server::wire::UserId;
use serde::Deserialize;
use serde_json::{Value, json};

const ISSUER: &str = "https://id.example";
const AUDIENCE: &str = "likekit";

/// The Ed25519 key `ed` (PKCS#8 DER, base64), made for this target only.
const ED_PKCS8: &str = "MC4CAQAwBQYDK2VwBCIEINHCS78SADTxvRJt6If7iY3trDqgdeSWhDtgnhdXWU1Q";
/// The P-256 key `es` (PKCS#8 DER, base64), made for this target only.
const ES_PKCS8: &str = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgQ5N0wA+w0tJm/F+B\
                        LAZNhm0ALKL/wnFP2VglYzie+ymhRANCAAT7WGlZVBqPRag+KDrkDm3g+ep9ibBH\
                        DuEKrsckJvsfg9fuaATX8mqUtwf3T9bozMvNxyaGAI4kgp35qUXvfLOx";
/// The public half of `ed`, and of `es`, as JWKs.
const ED_JWK: &str =
    r#"{"kty":"OKP","crv":"Ed25519","kid":"ed","x":"wccx3HgSG1_MyMNMInsOlmZLQOAv1ubmM7gPmNzRVv8"}"#;
const ES_JWK: &str = r#"{"kty":"EC","crv":"P-256","kid":"es","alg":"ES256","x":"-1hpWVQaj0WoPig65A5t4PnqfYmwRw7hCq7HJCb7H4M","y":"1-5oBNfyapS3B_dP1ujMy83HJoYAjiSCnfmpRe98s7E"}"#;

static CHECK: LazyLock<JwksTokens> = LazyLock::new(|| {
    let set = format!(r#"{{"keys":[{ED_JWK},{ES_JWK}]}}"#);
    JwksTokens::new(set.as_bytes(), Some(ISSUER), Some(AUDIENCE)).expect("the target's key set")
});

static ED: LazyLock<EncodingKey> =
    LazyLock::new(|| EncodingKey::from_ed_der(&STANDARD.decode(ED_PKCS8).expect("base64")));
static ES: LazyLock<EncodingKey> =
    LazyLock::new(|| EncodingKey::from_ec_der(&STANDARD.decode(ES_PKCS8).expect("base64")));

/// How a header's token is signed.
#[derive(Clone, Copy, Debug)]
enum Signer {
    Ed,
    Es,
    /// HS256 with this text as the secret (algorithm confusion: a public
    /// key used as a shared secret).
    Hmac(&'static str),
    /// No signature (`alg: none`).
    Unsigned,
}

/// The headers of modes `3` and `4`: the header, how its token is signed,
/// and whether the set's checks take it.
const HEADERS: [(&str, Signer, bool); 12] = [
    (r#"{"alg":"EdDSA","kid":"ed"}"#, Signer::Ed, true),
    (
        r#"{"typ":"JWT","alg":"EdDSA","kid":"ed"}"#,
        Signer::Ed,
        true,
    ),
    (r#"{"alg":"ES256","kid":"es"}"#, Signer::Es, true),
    // The `alg` of another key than the one named.
    (r#"{"alg":"EdDSA","kid":"es"}"#, Signer::Ed, false),
    (r#"{"alg":"ES256","kid":"ed"}"#, Signer::Es, false),
    // The named key's `alg`, another key's signature.
    (r#"{"alg":"ES256","kid":"es"}"#, Signer::Ed, false),
    // No `kid` while the set holds two keys; a `kid` not in the set.
    (r#"{"alg":"EdDSA"}"#, Signer::Ed, false),
    (r#"{"alg":"EdDSA","kid":"gone"}"#, Signer::Ed, false),
    // Algorithm confusion, and no signature at all.
    (r#"{"alg":"HS256","kid":"ed"}"#, Signer::Hmac(ED_JWK), false),
    (
        r#"{"alg":"HS256","kid":"es"}"#,
        Signer::Hmac("-1hpWVQaj0WoPig65A5t4PnqfYmwRw7hCq7HJCb7H4M"),
        false,
    ),
    (r#"{"alg":"none","kid":"ed"}"#, Signer::Unsigned, false),
    (r#"{"alg":"none"}"#, Signer::Unsigned, false),
];

/// The `sub`s of mode `4`.
const SUBS: [&str; 7] = [
    r#""7""#,
    r#""9223372036854775807""#,
    r#""9223372036854775808""#,
    r#""0""#,
    r#""ana@example.com""#,
    "7",
    "null",
];

/// The `exp`s and `nbf`s of mode `4`, as offsets from now (whole seconds,
/// far from now so that the second turning cannot change an answer), or
/// other JSON.
#[derive(Clone, Copy, Debug)]
enum Time {
    Absent,
    Null,
    Whole(i64),
    /// A number with a fraction (`jsonwebtoken` rounds an `nbf` so; the
    /// server reads `exp` as a whole number only).
    Fraction(i64),
    Text(i64),
    Max,
}

const TIMES: [Time; 9] = [
    Time::Absent,
    Time::Null,
    Time::Whole(-100),
    Time::Whole(100),
    Time::Fraction(-100),
    Time::Fraction(100),
    Time::Text(100),
    Time::Whole(i64::MIN),
    Time::Max,
];

/// The `iss`s and `aud`s of mode `4` (`{}` is the configured value).
const NAMES: [&str; 8] = [
    "",
    "null",
    r#""{}""#,
    r#""{}x""#,
    r#"["{}"]"#,
    r#"["someone else","{}"]"#,
    r#"["someone else"]"#,
    "[]",
];

/// The token of `header` and `claims`, signed as `signer` says.
fn signed(header: &str, claims: &[u8], signer: Signer) -> String {
    LazyLock::force(&CHECK); // installs the crypto provider `sign` uses
    let message = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header),
        URL_SAFE_NO_PAD.encode(claims)
    );
    let signature = match signer {
        Signer::Ed => jsonwebtoken::crypto::sign(message.as_bytes(), &ED, Algorithm::EdDSA),
        Signer::Es => jsonwebtoken::crypto::sign(message.as_bytes(), &ES, Algorithm::ES256),
        Signer::Hmac(secret) => jsonwebtoken::crypto::sign(
            message.as_bytes(),
            &EncodingKey::from_secret(secret.as_bytes()).expect("a secret"),
            Algorithm::HS256,
        ),
        Signer::Unsigned => Ok(String::new()),
    }
    .expect("signing with the target's keys");
    format!("{message}.{signature}")
}

/// A valid EdDSA token of user 7, for a hundred years.
static VALID: LazyLock<String> = LazyLock::new(|| {
    let claims = json!({
        "sub": "7",
        "exp": now_secs() + 100 * 365 * 24 * 3600,
        "iss": ISSUER,
        "aud": AUDIENCE,
    });
    signed(HEADERS[0].0, claims.to_string().as_bytes(), Signer::Ed)
});

/// Whether `value` is `name`.
fn is(value: Option<&Value>, name: &str) -> bool {
    value.and_then(Value::as_str) == Some(name)
}

/// Whether `value` is `name`, or an array that holds it.
fn names(value: Option<&Value>, name: &str) -> bool {
    match value {
        Some(Value::String(s)) => s == name,
        Some(Value::Array(items)) => items.iter().any(|item| item.as_str() == Some(name)),
        _ => false,
    }
}

/// Whether an `nbf` lets a token in at `now`, as `jsonwebtoken` reads it:
/// absent, a whole number, or a number with a fraction, rounded (`null`
/// is malformed).
fn nbf_passes(nbf: Option<&Value>, now: u64) -> bool {
    match nbf {
        None => true,
        Some(Value::Number(n)) => match (n.as_u64(), n.as_f64()) {
            (Some(whole), _) => whole <= now,
            (None, Some(f)) if f.is_finite() && f >= 0.0 && f < u64::MAX as f64 => {
                f.round() as u64 <= now
            }
            _ => false,
        },
        _ => false,
    }
}

/// The claims a token signs a user in with, read as serde_json reads them
/// into fields (other fields skipped, without a check of the UTF-8 of
/// strings in them, as the server and `jsonwebtoken` read them).
#[derive(Debug, Deserialize)]
struct SignsIn {
    sub: String,
    exp: u64,
    #[serde(default, deserialize_with = "present")]
    nbf: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    iss: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    aud: Option<Value>,
}

/// A field that is there, `null` too (`None` is for one that is not).
fn present<'de, D: serde::Deserializer<'de>>(field: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(field).map(Some)
}

#[derive(Debug, Deserialize)]
struct KeySet {
    keys: Vec<Value>,
}

#[derive(Debug, Deserialize)]
struct Exp {
    exp: u64,
}

/// Mode `0`: the server's reading of a key set document.
fn key_set(document: &[u8]) {
    let Ok(algorithms) = jwks_algorithms(document) else {
        return;
    };
    assert!((1..=64).contains(&algorithms.len()), "{algorithms:?}");
    // A set taken is a JSON object whose `keys` are these keys (read as
    // the server reads it: other fields skipped, without a check of the
    // UTF-8 of strings in them).
    let set: KeySet = serde_json::from_slice(document).expect("a set taken is a JSON object");
    let keys = set.keys;
    assert_eq!(keys.len(), algorithms.len());
    for (key, algorithm) in keys.iter().zip(&algorithms) {
        let family: &[Algorithm] = match key["kty"].as_str() {
            Some("RSA") => &[
                Algorithm::RS256,
                Algorithm::RS384,
                Algorithm::RS512,
                Algorithm::PS256,
                Algorithm::PS384,
                Algorithm::PS512,
            ],
            Some("EC") => &[Algorithm::ES256, Algorithm::ES384],
            Some("OKP") => &[Algorithm::EdDSA],
            other => panic!("a key of type {other:?} is taken: {key}"),
        };
        assert!(family.contains(algorithm), "{algorithm:?} for {key}");
    }
}

/// Modes `1` and `2`: only the valid token signs in.
fn only_the_valid_token(token: &str) {
    match CHECK.verify(token) {
        Ok(user) => {
            assert_eq!(token, *VALID, "a token that is not the valid one signs in");
            assert_eq!(user, UserId::checked(7).expect("an id"));
        }
        Err(e) => assert_ne!(token, *VALID, "the valid token is refused: {e}"),
    }
}

/// Mode `3`: signed claims sign in only under the rules.
fn signed_claims(pick: u8, claims: &[u8]) {
    let (header, signer, taken) = HEADERS[usize::from(pick) % HEADERS.len()];
    let token = signed(header, claims, signer);
    let before = now_secs();
    let verified = CHECK.verify(&token);
    let after = now_secs();
    match verified {
        Ok(user) => {
            assert!(taken, "signed in under {header} signed as {signer:?}");
            let read = serde_json::from_slice::<SignsIn>(claims)
                .expect("claims that sign a user in can be read");
            assert_eq!(read.sub.parse::<UserId>(), Ok(user), "{read:?}");
            assert!(read.exp >= before, "{read:?}");
            assert!(nbf_passes(read.nbf.as_ref(), after), "{read:?}");
            assert!(is(read.iss.as_ref(), ISSUER), "{read:?}");
            assert!(names(read.aud.as_ref(), AUDIENCE), "{read:?}");
        }
        Err(TokenError::Expired) => {
            let exp = serde_json::from_slice::<Exp>(claims).map(|read| read.exp);
            assert!(exp.as_ref().is_ok_and(|exp| *exp < after), "{exp:?}");
        }
        Err(_) => {}
    }
}

/// A time of mode `4` as JSON, and whether it passes as `exp` and as `nbf`.
fn time(t: Time, now: u64) -> (Option<String>, bool, bool) {
    let at = |offset: i64| now.saturating_add_signed(offset);
    match t {
        Time::Absent => (None, false, true),
        // `jsonwebtoken` reads a null `exp` or `nbf` as a malformed one.
        Time::Null => (Some("null".into()), false, false),
        Time::Whole(i64::MIN) => (Some(i64::MIN.to_string()), false, false),
        Time::Whole(offset) => (Some(at(offset).to_string()), offset > 0, offset < 0),
        // The server's claims take `exp` as a whole number only.
        Time::Fraction(offset) => (Some(format!("{}.25", at(offset))), false, offset < 0),
        Time::Text(offset) => (Some(format!("\"{}\"", at(offset))), false, false),
        Time::Max => (Some(u64::MAX.to_string()), true, false),
    }
}

/// Mode `4`: claims built from choices sign in exactly when the rules say.
fn chosen_claims(choices: &[u8]) {
    let [pick, sub, exp, nbf, iss, aud, ..] = *choices else {
        return;
    };
    let (header, signer, taken) = HEADERS[usize::from(pick) % HEADERS.len()];
    let now = now_secs();
    let sub = SUBS[usize::from(sub) % SUBS.len()];
    let (exp, exp_passes, _) = time(TIMES[usize::from(exp) % TIMES.len()], now);
    let (nbf, _, nbf_passes) = time(TIMES[usize::from(nbf) % TIMES.len()], now);
    let iss = NAMES[usize::from(iss) % NAMES.len()].replace("{}", ISSUER);
    let aud = NAMES[usize::from(aud) % NAMES.len()].replace("{}", AUDIENCE);
    let mut fields = vec![format!(r#""sub":{sub}"#)];
    fields.extend(exp.map(|exp| format!(r#""exp":{exp}"#)));
    fields.extend(nbf.map(|nbf| format!(r#""nbf":{nbf}"#)));
    if !iss.is_empty() {
        fields.push(format!(r#""iss":{iss}"#));
    }
    if !aud.is_empty() {
        fields.push(format!(r#""aud":{aud}"#));
    }
    let claims = format!("{{{}}}", fields.join(","));
    let parsed: Value = serde_json::from_str(&claims).expect("mode 4 writes JSON");
    let user = parsed["sub"]
        .as_str()
        .and_then(|s| s.parse::<UserId>().ok());
    let expected = taken
        && user.is_some()
        && exp_passes
        && nbf_passes
        && is(parsed.get("iss"), ISSUER)
        && names(parsed.get("aud"), AUDIENCE);
    let verified = CHECK.verify(&signed(header, claims.as_bytes(), signer));
    match (verified, expected) {
        (Ok(signed_in), true) => assert_eq!(Some(signed_in), user, "{claims}"),
        (Err(_), false) => {}
        (verified, _) => panic!("{claims} under {header} as {signer:?}: {verified:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 5 {
        0 => key_set(rest),
        1 => only_the_valid_token(&String::from_utf8_lossy(rest)),
        2 => only_the_valid_token(&String::from_utf8_lossy(&edited(VALID.as_bytes(), rest))),
        3 => {
            if let Some((&pick, claims)) = rest.split_first() {
                signed_claims(pick, claims);
            }
        }
        _ => chosen_claims(rest),
    }
});
