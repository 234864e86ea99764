//! Attacks on sign-in: every bad token is a 401 with `WWW-Authenticate:
//! Bearer` and a JSON error, and no token lets one user act as another.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::common::{self, TOKEN_SECRET, TestServer, expect_error, ok_json};
use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use likekit_server::wire::{LikeState, PostLikes};
use likekit_testing::suite::u;
use reqwest::{Method, StatusCode, header};
use serde_json::{Value, json};

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn sign(alg: Algorithm, secret: &str, claims: &Value) -> String {
    jsonwebtoken::encode(
        &Header::new(alg),
        claims,
        &EncodingKey::from_secret(secret.as_bytes()).unwrap(),
    )
    .unwrap()
}

fn unsigned(header: &Value, claims: &Value) -> String {
    format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    )
}

/// Sends a like with this raw Authorization header (or none).
async fn like_with(t: &TestServer, authorization: Option<String>) -> reqwest::Response {
    let mut request = t.http.post(t.url("/posts/1/like"));
    if let Some(value) = authorization {
        request = request.header(header::AUTHORIZATION, value);
    }
    request.send().await.unwrap()
}

async fn expect_401(response: reqwest::Response, code: &str) {
    let challenge = response
        .headers()
        .get(header::WWW_AUTHENTICATE)
        .expect("WWW-Authenticate")
        .to_str()
        .unwrap()
        .to_string();
    assert!(challenge.starts_with("Bearer"), "{challenge}");
    expect_error(response, StatusCode::UNAUTHORIZED, code).await;
}

#[tokio::test]
async fn bad_tokens_are_401() {
    let t = TestServer::start().await;
    t.setup(&[(7, "Ana")], &[1]).await;
    let exp = now() + 3600;

    expect_401(like_with(&t, None).await, "missing_token").await;
    let cases: Vec<(&str, String, &str)> = vec![
        ("empty bearer", "Bearer ".into(), "invalid_token"),
        ("garbage", "Bearer not-a-token".into(), "invalid_token"),
        (
            "three garbage parts",
            "Bearer a.b.c".into(),
            "invalid_token",
        ),
        (
            "basic scheme",
            format!("Basic {}", URL_SAFE_NO_PAD.encode("7:pw")),
            "invalid_token",
        ),
        (
            "no scheme",
            sign(
                Algorithm::HS256,
                TOKEN_SECRET,
                &json!({"sub": "7", "exp": exp}),
            ),
            "invalid_token",
        ),
        (
            "expired",
            format!(
                "Bearer {}",
                sign(
                    Algorithm::HS256,
                    TOKEN_SECRET,
                    &json!({"sub": "7", "exp": now() - 120})
                )
            ),
            "token_expired",
        ),
        (
            "not valid yet (nbf an hour ahead)",
            format!(
                "Bearer {}",
                sign(
                    Algorithm::HS256,
                    TOKEN_SECRET,
                    &json!({"sub": "7", "exp": exp, "nbf": now() + 3600})
                )
            ),
            "invalid_token",
        ),
        (
            "forged signature (other secret)",
            format!(
                "Bearer {}",
                sign(
                    Algorithm::HS256,
                    "not-the-secret",
                    &json!({"sub": "7", "exp": exp})
                )
            ),
            "invalid_token",
        ),
        (
            "another HMAC algorithm",
            format!(
                "Bearer {}",
                sign(
                    Algorithm::HS512,
                    TOKEN_SECRET,
                    &json!({"sub": "7", "exp": exp})
                )
            ),
            "invalid_token",
        ),
        (
            "alg none",
            format!(
                "Bearer {}",
                unsigned(
                    &json!({"alg": "none", "typ": "JWT"}),
                    &json!({"sub": "7", "exp": exp})
                )
            ),
            "invalid_token",
        ),
        (
            "alg None",
            format!(
                "Bearer {}",
                unsigned(
                    &json!({"alg": "None", "typ": "JWT"}),
                    &json!({"sub": "7", "exp": exp})
                )
            ),
            "invalid_token",
        ),
        (
            "no exp",
            format!(
                "Bearer {}",
                sign(Algorithm::HS256, TOKEN_SECRET, &json!({"sub": "7"}))
            ),
            "invalid_token",
        ),
        (
            "no sub",
            format!(
                "Bearer {}",
                sign(Algorithm::HS256, TOKEN_SECRET, &json!({"exp": exp}))
            ),
            "invalid_token",
        ),
        (
            "numeric sub",
            format!(
                "Bearer {}",
                sign(
                    Algorithm::HS256,
                    TOKEN_SECRET,
                    &json!({"sub": 7, "exp": exp})
                )
            ),
            "invalid_token",
        ),
        (
            "sub not a user id",
            format!(
                "Bearer {}",
                sign(
                    Algorithm::HS256,
                    TOKEN_SECRET,
                    &json!({"sub": "ana", "exp": exp})
                )
            ),
            "invalid_token",
        ),
        (
            "sub zero",
            format!(
                "Bearer {}",
                sign(
                    Algorithm::HS256,
                    TOKEN_SECRET,
                    &json!({"sub": "0", "exp": exp})
                )
            ),
            "invalid_token",
        ),
        (
            // "07" and "7" are two subjects to an identity provider: one
            // user here would be both.
            "sub with a leading zero",
            format!(
                "Bearer {}",
                sign(
                    Algorithm::HS256,
                    TOKEN_SECRET,
                    &json!({"sub": "07", "exp": exp})
                )
            ),
            "invalid_token",
        ),
        (
            "sub out of range",
            format!(
                "Bearer {}",
                sign(
                    Algorithm::HS256,
                    TOKEN_SECRET,
                    &json!({"sub": "9223372036854775808", "exp": exp})
                )
            ),
            "invalid_token",
        ),
    ];
    for (name, authorization, code) in cases {
        let response = like_with(&t, Some(authorization)).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{name}");
        expect_401(response, code).await;
    }
    // Reads need a token too.
    let r = t.http.get(t.url("/posts/1/likes")).send().await.unwrap();
    expect_401(r, "missing_token").await;
    let r = t.http.get(t.url("/likes?posts=1")).send().await.unwrap();
    expect_401(r, "missing_token").await;

    // Nothing above was written.
    let audit = t.server.store().audit().await.unwrap();
    assert_eq!((audit[0].count, audit[0].rows), (0, 0));

    // The scheme is case-insensitive, and a well-made token works.
    let good = sign(
        Algorithm::HS256,
        TOKEN_SECRET,
        &json!({"sub": "7", "exp": exp}),
    );
    let state: LikeState = ok_json(like_with(&t, Some(format!("bearer {good}"))).await).await;
    assert_eq!(state.count, 1);
    t.stop().await;
}

#[tokio::test]
async fn a_tampered_subject_cannot_act_as_someone_else() {
    let t = TestServer::start().await;
    t.setup(&[(7, "Ana"), (8, "Ben")], &[1]).await;
    ok_json::<LikeState>(t.like(7, 1).await).await;

    // Ben's token with the payload swapped for Ana's subject.
    let ben = t.token(8);
    let parts: Vec<&str> = ben.split('.').collect();
    let mut claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
    claims["sub"] = json!("7");
    let forged = format!(
        "{}.{}.{}",
        parts[0],
        URL_SAFE_NO_PAD.encode(claims.to_string()),
        parts[2]
    );
    let r = t
        .http
        .delete(t.url("/posts/1/like"))
        .bearer_auth(forged)
        .send()
        .await
        .unwrap();
    expect_401(r, "invalid_token").await;

    // Ben's real token acts as Ben only: his unlike leaves Ana's like alone.
    let state: LikeState = ok_json(t.unlike(8, 1).await).await;
    assert_eq!((state.count, state.liked_by_me), (1, false));
    let view: PostLikes = ok_json(t.view(7, 1).await).await;
    assert!(view.liked_by_me, "Ana still likes the post");
    let view: PostLikes = ok_json(t.view(8, 1).await).await;
    assert!(!view.liked_by_me);
    t.stop().await;
}

/// Two `Authorization` headers are refused whichever of them is good: a
/// proxy in front might have checked one and the server the other.
#[tokio::test]
async fn two_authorization_headers_are_refused() {
    let t = TestServer::start().await;
    t.setup(&[(7, "Ana"), (8, "Ben")], &[1]).await;
    let ana = format!("Bearer {}", t.token(7));
    let ben = format!("Bearer {}", t.token(8));
    for pair in [
        [ana.clone(), ana.clone()],
        [ana.clone(), ben.clone()],
        [ben.clone(), "Bearer nonsense".to_string()],
        ["Bearer nonsense".to_string(), ana.clone()],
    ] {
        let r = t
            .http
            .post(t.url("/posts/1/like"))
            .header(header::AUTHORIZATION, &pair[0])
            .header(header::AUTHORIZATION, &pair[1])
            .send()
            .await
            .unwrap();
        expect_401(r, "invalid_token").await;
    }
    // Nothing was liked, and one header still signs in.
    let view: PostLikes = ok_json(t.view(7, 1).await).await;
    assert_eq!((view.count, view.liked_by_me), (0, false));
    ok_json::<LikeState>(t.like(7, 1).await).await;
    t.stop().await;
}

#[tokio::test]
async fn tokens_from_another_server_are_refused() {
    // Same code, random secret per start: a token from one run is no good
    // on another.
    let a = TestServer::with(likekit_server::Config {
        token_secret: None,
        ..common::test_config()
    })
    .await;
    let b = TestServer::with(likekit_server::Config {
        token_secret: None,
        ..common::test_config()
    })
    .await;
    b.setup(&[], &[1]).await;
    let token = a.server.mint_token(u(7), Duration::from_secs(60));
    let r = b
        .http
        .request(Method::POST, b.url("/posts/1/like"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    expect_401(r, "invalid_token").await;
    a.stop().await;
    b.stop().await;
}
