//! Tokens from an identity provider: RS256, ES256 and EdDSA keys published
//! as a JWKS (a file, or a URL served here on loopback), `iss` and `aud`,
//! key rotation, and every forgery class answered 401 with
//! `WWW-Authenticate`.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::common::{self, TestServer, test_config};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use likekit_server::{Config, JwksSource, TokenPolicy};
use reqwest::StatusCode;
use serde_json::{Value, json};

const ISSUER: &str = "https://id.example";
const AUDIENCE: &str = "likekit";

/// A signing key of the identity provider, with its public JWK.
struct ProviderKey {
    kid: String,
    alg: Algorithm,
    encoding: EncodingKey,
    jwk: Value,
    /// The public key as PEM (what an attacker would use as an HS256
    /// secret).
    public_pem: String,
}

/// The two big-endian integers of a DER `SEQUENCE { n INTEGER, e INTEGER }`
/// (an RSA public key in PKCS#1).
fn rsa_n_e(der: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut at = 0;
    assert_eq!(der[at], 0x30, "a SEQUENCE");
    at += 1;
    der_length(der, &mut at);
    let n = der_integer(der, &mut at);
    let e = der_integer(der, &mut at);
    (n, e)
}

fn der_length(der: &[u8], at: &mut usize) -> usize {
    let first = der[*at];
    *at += 1;
    if first < 0x80 {
        return usize::from(first);
    }
    let mut n = 0;
    for _ in 0..(first & 0x7f) {
        n = (n << 8) | usize::from(der[*at]);
        *at += 1;
    }
    n
}

fn der_integer(der: &[u8], at: &mut usize) -> Vec<u8> {
    assert_eq!(der[*at], 0x02, "an INTEGER");
    *at += 1;
    let len = der_length(der, at);
    let mut bytes = der[*at..*at + len].to_vec();
    *at += len;
    while bytes.len() > 1 && bytes[0] == 0 {
        bytes.remove(0);
    }
    bytes
}

/// The PKCS#1 RSA private key inside a PKCS#8 one: `SEQUENCE { INTEGER
/// version, SEQUENCE algorithm, OCTET STRING key }`.
fn pkcs1_of_pkcs8(der: &[u8]) -> Vec<u8> {
    let mut at = 0;
    assert_eq!(der[at], 0x30, "a SEQUENCE");
    at += 1;
    der_length(der, &mut at);
    der_integer(der, &mut at);
    assert_eq!(der[at], 0x30, "the algorithm");
    at += 1;
    let skip = der_length(der, &mut at);
    at += skip;
    assert_eq!(der[at], 0x04, "an OCTET STRING");
    at += 1;
    let len = der_length(der, &mut at);
    der[at..at + len].to_vec()
}

fn provider_key(kid: &str, alg: Algorithm) -> ProviderKey {
    let scheme = match alg {
        Algorithm::RS256 => &rcgen::PKCS_RSA_SHA256,
        Algorithm::ES256 => &rcgen::PKCS_ECDSA_P256_SHA256,
        Algorithm::EdDSA => &rcgen::PKCS_ED25519,
        other => panic!("no test key for {other:?}"),
    };
    let key = rcgen::KeyPair::generate_for(scheme).unwrap();
    let private = key.serialize_der();
    let raw = key.public_key_raw();
    let (encoding, jwk) = match alg {
        Algorithm::RS256 => {
            let (n, e) = rsa_n_e(raw);
            (
                EncodingKey::from_rsa_der(&pkcs1_of_pkcs8(&private)),
                json!({"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig", "n": B64.encode(n), "e": B64.encode(e)}),
            )
        }
        Algorithm::ES256 => {
            assert_eq!(raw.len(), 65, "an uncompressed P-256 point");
            (
                EncodingKey::from_ec_der(&private),
                json!({"kty": "EC", "kid": kid, "crv": "P-256", "x": B64.encode(&raw[1..33]), "y": B64.encode(&raw[33..])}),
            )
        }
        _ => (
            EncodingKey::from_ed_der(&private),
            json!({"kty": "OKP", "kid": kid, "crv": "Ed25519", "alg": "EdDSA", "x": B64.encode(raw)}),
        ),
    };
    ProviderKey {
        kid: kid.to_owned(),
        alg,
        encoding,
        jwk,
        public_pem: key.public_key_pem(),
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Good claims for user 7, changed by `edit`.
fn claims(edit: impl FnOnce(&mut Value)) -> Value {
    let mut claims =
        json!({"sub": "7", "exp": now() + 300, "iat": now(), "iss": ISSUER, "aud": AUDIENCE});
    edit(&mut claims);
    claims
}

fn sign(key: &ProviderKey, claims: &Value) -> String {
    let mut header = Header::new(key.alg);
    header.kid = Some(key.kid.clone());
    jsonwebtoken::encode(&header, claims, &key.encoding).unwrap()
}

fn jwks(keys: &[&ProviderKey]) -> String {
    json!({"keys": keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()}).to_string()
}

fn policy(source: JwksSource) -> TokenPolicy {
    TokenPolicy {
        jwks: source,
        issuer: Some(ISSUER.into()),
        audience: Some(AUDIENCE.into()),
        refresh: Duration::from_secs(1),
    }
}

/// A server taking the provider's tokens only (no token secret given).
async fn server_with(source: JwksSource) -> TestServer {
    let t = TestServer::with(Config {
        token_policy: Some(policy(source)),
        token_secret: None,
        ..test_config()
    })
    .await;
    t.setup(&[(7, "Ana")], &[42]).await;
    t
}

async fn view_with(t: &TestServer, token: &str) -> reqwest::Response {
    t.http
        .get(t.url("/posts/42/likes"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

/// 401 with the code and an `invalid_token` challenge.
async fn refused(t: &TestServer, token: &str, code: &str, what: &str) {
    let r = view_with(t, token).await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{what}");
    let challenge = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert!(
        challenge.starts_with("Bearer realm=\"likekit\""),
        "{what}: {challenge}"
    );
    assert!(
        challenge.contains("error=\"invalid_token\""),
        "{what}: {challenge}"
    );
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], code, "{what}: {body}");
}

#[tokio::test]
async fn rs256_es256_and_eddsa_tokens_verify_and_every_forgery_is_refused() {
    let rsa = provider_key("rsa-1", Algorithm::RS256);
    let ec = provider_key("ec-1", Algorithm::ES256);
    let ed = provider_key("ed-1", Algorithm::EdDSA);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jwks.json");
    std::fs::write(&file, jwks(&[&rsa, &ec, &ed])).unwrap();
    let t = server_with(JwksSource::File(file)).await;

    for key in [&rsa, &ec, &ed] {
        let r = view_with(&t, &sign(key, &claims(|_| {}))).await;
        assert_eq!(r.status(), StatusCode::OK, "{:?}", key.alg);
    }

    // alg none: an unsigned token.
    let none = format!(
        "{}.{}.",
        B64.encode(r#"{"alg":"none","typ":"JWT","kid":"rsa-1"}"#),
        B64.encode(claims(|_| {}).to_string())
    );
    refused(&t, &none, "invalid_token", "alg none").await;
    // Algorithm confusion: HS256 with the RSA public key as the secret.
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("rsa-1".into());
    let confused = jsonwebtoken::encode(
        &header,
        &claims(|_| {}),
        &EncodingKey::from_secret(rsa.public_pem.as_bytes()).unwrap(),
    )
    .unwrap();
    refused(
        &t,
        &confused,
        "invalid_token",
        "RS256 key used as an HS256 secret",
    )
    .await;
    // A header that names another algorithm than the key's.
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("rsa-1".into());
    let mismatched = jsonwebtoken::encode(&header, &claims(|_| {}), &ec.encoding).unwrap();
    refused(
        &t,
        &mismatched,
        "invalid_token",
        "ES256 header on the RSA key",
    )
    .await;
    // An unknown kid, and a known kid with another key's signature.
    let stranger = provider_key("stranger", Algorithm::ES256);
    refused(
        &t,
        &sign(&stranger, &claims(|_| {})),
        "invalid_token",
        "unknown kid",
    )
    .await;
    let impostor = ProviderKey {
        kid: "ec-1".into(),
        ..provider_key("x", Algorithm::ES256)
    };
    refused(
        &t,
        &sign(&impostor, &claims(|_| {})),
        "invalid_token",
        "bad signature",
    )
    .await;
    // Time and the claims the provider must have set.
    let expired = claims(|c| c["exp"] = json!(now() - 5));
    refused(&t, &sign(&ec, &expired), "token_expired", "expired").await;
    let early = claims(|c| c["nbf"] = json!(now() + 300));
    refused(&t, &sign(&ec, &early), "invalid_token", "not yet valid").await;
    let other_aud = claims(|c| c["aud"] = json!("another-app"));
    refused(&t, &sign(&ed, &other_aud), "invalid_token", "wrong aud").await;
    let other_iss = claims(|c| c["iss"] = json!("https://evil.example"));
    refused(&t, &sign(&ed, &other_iss), "invalid_token", "wrong iss").await;
    let no_iss = claims(|c| {
        c.as_object_mut().unwrap().remove("iss");
    });
    refused(&t, &sign(&ed, &no_iss), "invalid_token", "no iss").await;
    // `iss` is one string: an array that holds the issuer is refused.
    let iss_array = claims(|c| c["iss"] = json!([ISSUER]));
    refused(&t, &sign(&ec, &iss_array), "invalid_token", "iss array").await;
    // `aud` may be an array that holds the audience.
    let aud_array = claims(|c| c["aud"] = json!(["another-app", AUDIENCE]));
    let r = view_with(&t, &sign(&ec, &aud_array)).await;
    assert_eq!(r.status(), StatusCode::OK, "aud array");
    let no_aud = claims(|c| {
        c.as_object_mut().unwrap().remove("aud");
    });
    refused(&t, &sign(&rsa, &no_aud), "invalid_token", "no aud").await;
    let bad_sub = claims(|c| c["sub"] = json!("ana@example.com"));
    refused(
        &t,
        &sign(&rsa, &bad_sub),
        "invalid_token",
        "sub not a user id",
    )
    .await;
    // The server's own HS256 tokens: not without a token secret.
    let hs = t.server.tokens().mint(
        likekit_server::wire::UserId::new(7).unwrap(),
        Duration::from_secs(60),
    );
    refused(&t, &hs, "invalid_token", "HS256 without a token secret").await;
    t.stop().await;
}

#[tokio::test]
async fn hs256_stays_for_development_when_a_secret_is_given() {
    let ec = provider_key("ec-1", Algorithm::ES256);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jwks.json");
    std::fs::write(&file, jwks(&[&ec])).unwrap();
    let t = TestServer::with(Config {
        token_policy: Some(policy(JwksSource::File(file))),
        ..test_config()
    })
    .await;
    t.setup(&[(7, "Ana")], &[42]).await;
    assert_eq!(view_with(&t, &t.token(7)).await.status(), StatusCode::OK);
    assert_eq!(
        view_with(&t, &sign(&ec, &claims(|_| {}))).await.status(),
        StatusCode::OK
    );
    t.stop().await;
}

/// A provider's set may hold its encryption keys beside the signing keys
/// (Keycloak publishes `use: enc`, `alg: RSA-OAEP`): the server starts
/// with the signing keys, and a token that names an encryption key is
/// refused, even when that key's material did sign it.
#[tokio::test]
async fn encryption_keys_in_the_set_are_left_out() {
    let rsa = provider_key("rsa-1", Algorithm::RS256);
    let mut enc = provider_key("enc-1", Algorithm::RS256);
    enc.jwk["use"] = json!("enc");
    enc.jwk["alg"] = json!("RSA-OAEP");
    let mut wrap = provider_key("wrap-1", Algorithm::EdDSA);
    wrap.jwk["key_ops"] = json!(["wrapKey"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jwks.json");
    std::fs::write(&file, jwks(&[&enc, &rsa, &wrap])).unwrap();
    let t = server_with(JwksSource::File(file)).await;

    let r = view_with(&t, &sign(&rsa, &claims(|_| {}))).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut enc_signed = Header::new(Algorithm::RS256);
    enc_signed.kid = Some("enc-1".into());
    let token = jsonwebtoken::encode(&enc_signed, &claims(|_| {}), &enc.encoding).unwrap();
    refused(&t, &token, "invalid_token", "signed with an encryption key").await;
    refused(
        &t,
        &sign(&wrap, &claims(|_| {})),
        "invalid_token",
        "signed with a key-wrapping key",
    )
    .await;
    t.stop().await;
}

#[tokio::test]
async fn a_bad_key_set_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    for (text, why) in [
        ("not json", "not a JSON Web Key Set"),
        (r#"{"keys":[]}"#, "no key"),
        (r#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#, "symmetric"),
        (
            r#"{"keys":[{"kty":"OKP","crv":"Ed25519","use":"enc","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#,
            "no key for signatures",
        ),
    ] {
        let file = dir.path().join("jwks.json");
        std::fs::write(&file, text).unwrap();
        let err = likekit_server::spawn(Config {
            token_policy: Some(policy(JwksSource::File(file))),
            ..test_config()
        })
        .await
        .unwrap_err();
        assert!(err.to_string().contains(why), "{text}: {err}");
    }
}

/// The provider's set served on loopback, changed by the test.
async fn serve_jwks(set: Arc<Mutex<String>>) -> String {
    let app = axum::Router::new().route(
        "/jwks.json",
        axum::routing::get(move || {
            let set = Arc::clone(&set);
            async move { set.lock().unwrap().clone() }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

#[tokio::test]
async fn keys_rotate_at_the_url() {
    let old = provider_key("2026-11", Algorithm::ES256);
    let new = provider_key("2026-12", Algorithm::EdDSA);
    let set = Arc::new(Mutex::new(jwks(&[&old])));
    let url = serve_jwks(Arc::clone(&set)).await;
    let t = server_with(JwksSource::Url(url)).await;
    let old_token = sign(&old, &claims(|_| {}));
    let new_token = sign(&new, &claims(|_| {}));
    assert_eq!(view_with(&t, &old_token).await.status(), StatusCode::OK);
    refused(&t, &new_token, "invalid_token", "a key not published yet").await;

    // The provider adds the new key: its tokens verify once the set is
    // read again.
    *set.lock().unwrap() = jwks(&[&old, &new]);
    common::eventually(Duration::from_secs(10), "the new key to verify", || async {
        (view_with(&t, &new_token).await.status() == StatusCode::OK).then_some(())
    })
    .await;
    assert_eq!(view_with(&t, &old_token).await.status(), StatusCode::OK);

    // It removes the old one: the old key's tokens stop verifying, even
    // one remembered as verified.
    *set.lock().unwrap() = jwks(&[&new]);
    common::eventually(
        Duration::from_secs(10),
        "the old key to stop verifying",
        || async {
            (view_with(&t, &old_token).await.status() == StatusCode::UNAUTHORIZED).then_some(())
        },
    )
    .await;
    assert_eq!(view_with(&t, &new_token).await.status(), StatusCode::OK);
    t.stop().await;
}

/// Two reads of the set that overlap — a slow one, and one asked for
/// meanwhile (`App::refresh_keys` from an embedder, or the housekeeping) —
/// are made one after the other: the slow one's older set is never put in
/// force after the newer one.
#[tokio::test]
async fn overlapping_reads_of_the_set_never_put_an_older_one_in_force() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let old = provider_key("2026-11", Algorithm::ES256);
    let new = provider_key("2026-12", Algorithm::EdDSA);
    let (old_set, new_set) = (jwks(&[&old]), jwks(&[&new]));
    // The read at start and the first one after it answer the old set, the
    // second after a pause; every later read answers the new set.
    let served = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&served);
    let app = axum::Router::new().route(
        "/jwks.json",
        axum::routing::get(move || {
            let (old_set, new_set) = (old_set.clone(), new_set.clone());
            let read = counted.fetch_add(1, Ordering::SeqCst);
            async move {
                match read {
                    0 => old_set,
                    1 => {
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        old_set
                    }
                    _ => new_set,
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let t = TestServer::with(Config {
        token_policy: Some(TokenPolicy {
            // No read of its own during the test.
            refresh: Duration::from_secs(3600),
            ..policy(JwksSource::Url(url))
        }),
        token_secret: None,
        ..test_config()
    })
    .await;
    t.setup(&[(7, "Ana")], &[42]).await;

    let app = t.server.app();
    let later = async {
        common::eventually(Duration::from_secs(5), "the slow read to start", || async {
            (served.load(Ordering::SeqCst) >= 2).then_some(())
        })
        .await;
        app.refresh_keys().await;
    };
    tokio::join!(app.refresh_keys(), later);
    assert_eq!(served.load(Ordering::SeqCst), 3);
    let r = view_with(&t, &sign(&new, &claims(|_| {}))).await;
    assert_eq!(r.status(), StatusCode::OK, "the newer set is in force");
    refused(
        &t,
        &sign(&old, &claims(|_| {})),
        "invalid_token",
        "a key only the older set has",
    )
    .await;
    t.stop().await;
}

/// `key` as the provider may publish it: the same parameters without a
/// `kid`, and tokens that name none.
fn without_kid(key: ProviderKey) -> ProviderKey {
    let mut jwk = key.jwk;
    jwk.as_object_mut().unwrap().remove("kid");
    ProviderKey {
        kid: String::new(),
        jwk,
        ..key
    }
}

fn sign_without_kid(key: &ProviderKey, claims: &Value) -> String {
    jsonwebtoken::encode(&Header::new(key.alg), claims, &key.encoding).unwrap()
}

#[tokio::test]
async fn a_key_replaced_under_the_same_kid_is_put_in_force() {
    let old = provider_key("main", Algorithm::ES256);
    let new = provider_key("main", Algorithm::ES256);
    let set = Arc::new(Mutex::new(jwks(&[&old])));
    let url = serve_jwks(Arc::clone(&set)).await;
    let t = server_with(JwksSource::Url(url)).await;
    let old_token = sign(&old, &claims(|_| {}));
    let new_token = sign(&new, &claims(|_| {}));
    // The old key's token is now remembered as verified.
    assert_eq!(view_with(&t, &old_token).await.status(), StatusCode::OK);
    refused(&t, &new_token, "invalid_token", "a key not published yet").await;

    // The provider replaces the key and keeps its `kid`.
    *set.lock().unwrap() = jwks(&[&new]);
    common::eventually(Duration::from_secs(10), "the new key to verify", || async {
        (view_with(&t, &new_token).await.status() == StatusCode::OK).then_some(())
    })
    .await;
    refused(&t, &old_token, "invalid_token", "the replaced key").await;
    t.stop().await;
}

#[tokio::test]
async fn a_single_key_without_kid_is_replaced_too() {
    let old = without_kid(provider_key("x", Algorithm::EdDSA));
    let new = without_kid(provider_key("x", Algorithm::EdDSA));
    let set = Arc::new(Mutex::new(jwks(&[&old])));
    let url = serve_jwks(Arc::clone(&set)).await;
    let t = server_with(JwksSource::Url(url)).await;
    let old_token = sign_without_kid(&old, &claims(|_| {}));
    let new_token = sign_without_kid(&new, &claims(|_| {}));
    assert_eq!(view_with(&t, &old_token).await.status(), StatusCode::OK);

    *set.lock().unwrap() = jwks(&[&new]);
    common::eventually(Duration::from_secs(10), "the new key to verify", || async {
        (view_with(&t, &new_token).await.status() == StatusCode::OK).then_some(())
    })
    .await;
    refused(&t, &old_token, "invalid_token", "the replaced key").await;
    t.stop().await;
}

/// Starts a server on `source` and returns why it did not start.
async fn start_error(source: JwksSource) -> String {
    likekit_server::spawn(Config {
        token_policy: Some(policy(source)),
        token_secret: None,
        ..test_config()
    })
    .await
    .expect_err("the start should fail")
    .to_string()
}

#[tokio::test]
async fn a_url_set_that_cannot_be_fetched_at_start_stops_the_start() {
    // The provider answers 500.
    let app = axum::Router::new().route(
        "/jwks.json",
        axum::routing::get(|| async { (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "down") }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let err = start_error(JwksSource::Url(url.clone())).await;
    assert!(err.contains("invalid configuration"), "{err}");
    assert!(err.contains(&url) && err.contains("500"), "{err}");

    // Nothing listens there.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
    drop(listener);
    let err = start_error(JwksSource::Url(url.clone())).await;
    assert!(err.contains(&format!("cannot fetch {url}")), "{err}");

    // It answers, but not with a key set.
    let set = Arc::new(Mutex::new(r#"{"keys":[]}"#.to_owned()));
    let url = serve_jwks(set).await;
    let err = start_error(JwksSource::Url(url)).await;
    assert!(err.contains("no key"), "{err}");
}

#[tokio::test]
async fn a_key_set_is_read_over_https_or_on_loopback_only() {
    let err = start_error(JwksSource::Url("http://id.example/jwks.json".into())).await;
    assert!(
        err.contains("invalid configuration") && err.contains("https://"),
        "{err}"
    );
    let err = start_error(JwksSource::Url("http://10.1.2.3:8080/jwks.json".into())).await;
    assert!(err.contains("only on loopback"), "{err}");
}

#[tokio::test]
async fn a_key_set_is_read_no_further_than_its_limit() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    // A provider whose answer never ends.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = vec![b' '; 64 * 1024];
                while socket.write_all(&chunk).await.is_ok() {}
            });
        }
    });
    let started = std::time::Instant::now();
    let err = start_error(JwksSource::Url(url)).await;
    assert!(err.contains("more than 1048576 bytes"), "{err}");
    // Well before the fetch's own 10 s timeout.
    assert!(started.elapsed() < Duration::from_secs(8), "{err}");
}

#[tokio::test]
async fn admin_tokens_are_refused_when_the_server_would_refuse_them() {
    let ec = provider_key("ec-1", Algorithm::ES256);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jwks.json");
    std::fs::write(&file, jwks(&[&ec])).unwrap();
    let mint = json!({"user_id": 7, "ttl_secs": 60});

    // An identity provider and no token secret: no HS256 token to mint.
    let t = server_with(JwksSource::File(file.clone())).await;
    assert!(!t.server.app().takes_own_tokens());
    let r = t
        .admin(reqwest::Method::POST, "/admin/tokens", Some(mint.clone()))
        .await;
    let body = common::expect_error(r, StatusCode::CONFLICT, "own_tokens_off").await;
    assert!(body.error.message.contains("--token-secret"), "{body:?}");
    t.stop().await;

    // With a token secret as well, the minted token signs in.
    let t = TestServer::with(Config {
        token_policy: Some(policy(JwksSource::File(file))),
        ..test_config()
    })
    .await;
    t.setup(&[(7, "Ana")], &[42]).await;
    assert!(t.server.app().takes_own_tokens());
    let r = t
        .admin(reqwest::Method::POST, "/admin/tokens", Some(mint))
        .await;
    let token: likekit_server::wire::admin::TokenResponse = common::ok_json(r).await;
    assert_eq!(view_with(&t, &token.token).await.status(), StatusCode::OK);
    t.stop().await;
}
