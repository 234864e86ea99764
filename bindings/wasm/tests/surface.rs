//! The binding's own surface, run in Node by wasm-bindgen-test
//! (`cargo xtask test --only wasm`): the shapes of the objects JavaScript
//! gets, errors as `Error` objects with a `code`, argument checks, options,
//! listeners and Promises. The client runs on an in-memory server here; the
//! Node test (`tests/js/client.test.mjs`) covers the real one.

#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::float_cmp)]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use js_sys::{Array, Function, Object, Reflect};
use likekit_core::{LikeError, MemoryTransport, PostId, RetryPolicy};
use likekit_wasm::{LikeClient, ScriptedServer, types};
use tsify::Ts;
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &JsValue::from_str(key)).unwrap()
}

fn keys(value: &JsValue) -> Vec<String> {
    Object::keys(value.unchecked_ref::<Object>())
        .iter()
        .map(|k| k.as_string().unwrap())
        .collect()
}

fn strings(value: &JsValue) -> Vec<String> {
    value
        .dyn_ref::<Array>()
        .expect("an array")
        .iter()
        .map(|s| s.as_string().unwrap())
        .collect()
}

fn id(n: u64) -> PostId {
    PostId::new(n).unwrap()
}

/// A client on an in-memory server with post 42 (1,203 other likers) and
/// post 7 (no likers).
fn client() -> (LikeClient, Arc<MemoryTransport>) {
    let server = Arc::new(
        MemoryTransport::new()
            .with_post(id(42), 1203)
            .with_post(id(7), 0),
    );
    let core = likekit_core::LikeClient::builder()
        .shared_transport(server.clone())
        .retry_policy(RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        })
        .build()
        .unwrap();
    (LikeClient::from_core(core), server)
}

async fn settle(client: &LikeClient) {
    let idle = JsFuture::from(client.wait_idle(5_000.0).unwrap())
        .await
        .unwrap();
    assert_eq!(idle.as_bool(), Some(true));
}

fn assert_like_error(err: &JsValue, code: &str) {
    assert!(err.is_instance_of::<js_sys::Error>(), "{err:?}");
    assert_eq!(get(err, "name").as_string().as_deref(), Some("LikeError"));
    assert_eq!(
        get(err, "code").as_string().as_deref(),
        Some(code),
        "{err:?}"
    );
    assert!(
        get(err, "message")
            .as_string()
            .is_some_and(|m| !m.is_empty())
    );
    assert!(get(err, "transient").as_bool().is_some());
}

/// Collects what a listener function receives.
fn recorder() -> (Function, Rc<RefCell<Vec<JsValue>>>) {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let log = seen.clone();
    let f = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| log.borrow_mut().push(event));
    (f.into_js_value().unchecked_into(), seen)
}

#[wasm_bindgen_test]
async fn a_tap_returns_a_plain_view_with_camel_case_fields() {
    let (client, _) = client();
    JsFuture::from(client.refresh(JsValue::from(42.0)).unwrap())
        .await
        .unwrap();
    let view: JsValue = client.set_liked(JsValue::from(42.0), true).unwrap().into();
    assert_eq!(
        keys(&view),
        [
            "postId",
            "liked",
            "count",
            "friends",
            "line",
            "lineParts",
            "pending",
            "error"
        ]
    );
    assert_eq!(get(&view, "postId").as_f64(), Some(42.0));
    assert_eq!(get(&view, "liked").as_bool(), Some(true));
    assert_eq!(get(&view, "count").as_f64(), Some(1204.0));
    assert!(strings(&get(&view, "friends")).is_empty());
    assert_eq!(
        get(&view, "line").as_string().as_deref(),
        Some("Liked by you and 1,203 others")
    );
    assert_eq!(get(&view, "pending").as_bool(), Some(true));
    assert!(get(&view, "error").is_null());

    let parts = get(&view, "lineParts");
    assert_eq!(keys(&parts), ["you", "friends", "others", "total"]);
    assert_eq!(get(&parts, "you").as_bool(), Some(true));
    assert_eq!(get(&parts, "others").as_f64(), Some(1203.0));
    assert_eq!(get(&parts, "total").as_f64(), Some(1204.0));
}

#[wasm_bindgen_test]
async fn toggle_view_and_the_confirmed_state() {
    let (client, server) = client();
    let unknown: JsValue = client.view(JsValue::from(42.0)).unwrap().into();
    assert!(unknown.is_undefined());

    let liked: JsValue = client.toggle(JsValue::from(7.0)).unwrap().into();
    assert_eq!(get(&liked, "liked").as_bool(), Some(true));
    assert_eq!(
        get(&liked, "line").as_string().as_deref(),
        Some("Liked by you")
    );
    settle(&client).await;
    let confirmed: JsValue = client.view(JsValue::from(7.0)).unwrap().into();
    assert_eq!(get(&confirmed, "pending").as_bool(), Some(false));
    assert_eq!(get(&confirmed, "count").as_f64(), Some(1.0));
    assert_eq!(server.liked(id(7)), Some(true));

    let unliked: JsValue = client.toggle(JsValue::from(7.0)).unwrap().into();
    assert_eq!(get(&unliked, "liked").as_bool(), Some(false));
    assert_eq!(get(&unliked, "line").as_string().as_deref(), Some(""));
    settle(&client).await;
    assert_eq!(server.liked(id(7)), Some(false));
}

/// Every way of passing a post id to the client: each must fail with
/// `code` and change nothing.
fn assert_refused(client: &LikeClient, bad: &JsValue, code: &str) {
    let err = client.toggle(bad.clone()).unwrap_err();
    assert_like_error(&err, code);
    assert_like_error(&client.set_liked(bad.clone(), true).unwrap_err(), code);
    assert_like_error(&client.view(bad.clone()).unwrap_err(), code);
    assert_like_error(&client.refresh(bad.clone()).unwrap_err(), code);
    let (listener, _) = recorder();
    assert_like_error(
        &client
            .subscribe(bad.clone(), listener.unchecked_into())
            .unwrap_err(),
        code,
    );
    let ids: JsValue = Array::of2(&JsValue::from(7.0), bad).into();
    assert_like_error(&client.refresh_many(ids).unwrap_err(), code);
}

#[wasm_bindgen_test]
fn post_ids_go_through_the_one_constructor() {
    let (client, _) = client();
    let not_ids = [
        JsValue::from(0.0),
        JsValue::from(-1.0),
        JsValue::from(1.5),
        JsValue::from(f64::NAN),
        JsValue::from(f64::INFINITY),
        JsValue::from(1e300),
        JsValue::from_str("0"),
        JsValue::from_str("-1"),
        JsValue::from_str("9223372036854775808"),
        JsValue::from_str(" 42"),
        JsValue::from_str("4e2"),
        JsValue::from(0_i64),
        JsValue::from(-1_i64),
        JsValue::from(1_u64 << 63),
        JsValue::from(u128::MAX),
    ];
    for bad in &not_ids {
        assert_refused(&client, bad, "bad_post_id");
    }
    let message = get(&client.toggle(JsValue::from(-1.0)).unwrap_err(), "message");
    assert_eq!(
        message.as_string().as_deref(),
        Some("post ids are whole numbers from 1 to 9223372036854775807; got -1")
    );
    // A number past 2^53 − 1 is not exact: refused, with the way out.
    for inexact in [9_007_199_254_740_992.0, 2f64.powi(62)] {
        let inexact = JsValue::from(inexact);
        assert_refused(&client, &inexact, "invalid_argument");
        let message = get(&client.toggle(inexact).unwrap_err(), "message");
        assert!(
            message.as_string().unwrap().contains("BigInt"),
            "{message:?}"
        );
    }
    for wrong_type in [
        JsValue::TRUE,
        JsValue::NULL,
        JsValue::UNDEFINED,
        Object::new().into(),
    ] {
        assert_refused(&client, &wrong_type, "invalid_argument");
    }
    // Nothing was tapped.
    let stats: JsValue = client.stats().unwrap().into();
    assert_eq!(get(&stats, "taps").as_f64(), Some(0.0));
}

#[wasm_bindgen_test]
async fn strings_and_bigints_carry_every_id_and_ids_come_back_exact() {
    let (client, _) = client();
    let by_string: JsValue = client.view(JsValue::from_str("42")).unwrap().into();
    assert!(by_string.is_undefined(), "post 42 is not known yet");
    let view = JsFuture::from(client.refresh(JsValue::from_str("42")).unwrap())
        .await
        .unwrap();
    assert_eq!(get(&view, "postId").as_f64(), Some(42.0));
    let view: JsValue = client.toggle(JsValue::from(42_i64)).unwrap().into();
    assert_eq!(get(&view, "postId").as_f64(), Some(42.0));
    assert_eq!(get(&view, "liked").as_bool(), Some(true));

    // The largest id, which no JavaScript number holds: back as its digits.
    for largest in [
        JsValue::from_str("9223372036854775807"),
        JsValue::from(i64::MAX),
    ] {
        let view: JsValue = client.set_liked(largest, true).unwrap().into();
        assert_eq!(
            get(&view, "postId").as_string().as_deref(),
            Some("9223372036854775807")
        );
    }
    // The largest safe integer is still a number both ways.
    let view: JsValue = client
        .set_liked(JsValue::from(9_007_199_254_740_991.0), true)
        .unwrap()
        .into();
    assert_eq!(get(&view, "postId").as_f64(), Some(9_007_199_254_740_991.0));
    settle(&client).await;
}

#[wasm_bindgen_test]
fn errors_are_error_objects_with_a_code() {
    let server_error = types::error(&LikeError::Server {
        status: 503,
        code: "http_503".into(),
        message: "down".into(),
    });
    assert_like_error(&server_error, "http_503");
    assert_eq!(get(&server_error, "status").as_f64(), Some(503.0));
    assert_eq!(get(&server_error, "transient").as_bool(), Some(true));

    let limited = types::error(&LikeError::RateLimited {
        retry_after_ms: Some(2000),
    });
    assert_like_error(&limited, "rate_limited");
    assert_eq!(get(&limited, "retryAfterMs").as_f64(), Some(2000.0));
    assert_eq!(get(&limited, "status").as_f64(), Some(429.0));

    let missing = types::error(&LikeError::NotFound {
        message: "no post 9".into(),
    });
    assert_like_error(&missing, "post_not_found");
    assert_eq!(get(&missing, "transient").as_bool(), Some(false));
    assert_eq!(get(&missing, "status").as_f64(), Some(404.0));
    assert!(get(&types::error(&LikeError::Timeout), "status").is_undefined());
    assert_eq!(
        get(&missing, "message").as_string().as_deref(),
        Some("post not found: no post 9")
    );
}

fn options(json: &str) -> JsValue {
    js_sys::JSON::parse(json).unwrap()
}

#[wasm_bindgen_test]
fn the_constructor_checks_the_url_and_the_options() {
    assert_like_error(
        &LikeClient::new("not a url", JsValue::UNDEFINED).unwrap_err(),
        "config",
    );
    assert!(LikeClient::new("http://127.0.0.1:1", JsValue::UNDEFINED).is_ok());
    assert!(LikeClient::new("http://127.0.0.1:1", JsValue::NULL).is_ok());
    let full = options(
        r#"{"token":"t","timeoutMs":2500,"maxPosts":100,"maxAnswerBytes":65536,
            "retry":{"minDelayMs":10,"maxDelayMs":50,"factor":1.5,"maxRetries":2,"jitter":false,"seed":7}}"#,
    );
    assert!(LikeClient::new("https://likes.example.com/api", full).is_ok());

    let callback = Function::new_with_args("refresh", "return refresh ? 'new' : 'old'");
    let with_callback = Object::new();
    Reflect::set(&with_callback, &"token".into(), &callback).unwrap();
    assert!(LikeClient::new("http://127.0.0.1:1", with_callback.into()).is_ok());

    for (bad, field) in [
        (r#"{"token":5}"#, "options.token"),
        (r#"{"timeoutMs":"10"}"#, "options.timeoutMs"),
        (r#"{"timeoutMs":-1}"#, "options.timeoutMs"),
        (r#"{"maxPosts":1.5}"#, "options.maxPosts"),
        (r#"{"maxAnswerBytes":-5}"#, "options.maxAnswerBytes"),
        (r#"{"maxAnswerBytes":"1MB"}"#, "options.maxAnswerBytes"),
        (r#"{"retry":3}"#, "options.retry"),
        (r#"{"retry":{"maxRetries":-1}}"#, "options.retry.maxRetries"),
        (r#"{"retry":{"factor":0}}"#, "options.retry.factor"),
        (r#"{"retry":{"jitter":"yes"}}"#, "options.retry.jitter"),
        (r#"{"retry":{"seed":0.5}}"#, "options.retry.seed"),
    ] {
        let err = LikeClient::new("http://127.0.0.1:1", options(bad)).unwrap_err();
        assert_like_error(&err, "config");
        let message = get(&err, "message").as_string().unwrap();
        assert!(message.contains(field), "{bad}: {message}");
    }
    assert_like_error(
        &LikeClient::new("http://127.0.0.1:1", JsValue::from_str("x")).unwrap_err(),
        "config",
    );
}

#[wasm_bindgen_test]
async fn refresh_resolves_views_and_rejects_with_like_errors() {
    let (client, _) = client();
    let view = JsFuture::from(client.refresh(JsValue::from(42.0)).unwrap())
        .await
        .unwrap();
    assert_eq!(get(&view, "count").as_f64(), Some(1203.0));
    assert_eq!(
        get(&view, "line").as_string().as_deref(),
        Some("1,203 likes")
    );

    let err = JsFuture::from(client.refresh(JsValue::from(404.0)).unwrap())
        .await
        .unwrap_err();
    assert_like_error(&err, "post_not_found");

    let ids: JsValue = [7.0, 404.0, 42.0, 7.0]
        .iter()
        .map(|&n| JsValue::from_f64(n))
        .collect::<Array>()
        .into();
    let views = JsFuture::from(client.refresh_many(ids).unwrap())
        .await
        .unwrap();
    let ids: Vec<f64> = views
        .dyn_ref::<Array>()
        .unwrap()
        .iter()
        .map(|v| get(&v, "postId").as_f64().unwrap())
        .collect();
    assert_eq!(ids, [7.0, 42.0]);

    let set = js_sys::Set::new(&JsValue::UNDEFINED);
    set.add(&JsValue::from_f64(42.0));
    let views = JsFuture::from(client.refresh_many(set.into()).unwrap())
        .await
        .unwrap();
    assert_eq!(views.dyn_ref::<Array>().unwrap().length(), 1);

    assert_like_error(
        &client.refresh_many(JsValue::from_f64(42.0)).unwrap_err(),
        "invalid_argument",
    );
    let mixed: JsValue = Array::of2(&JsValue::from_f64(1.0), &JsValue::TRUE).into();
    assert_like_error(&client.refresh_many(mixed).unwrap_err(), "invalid_argument");

    // Numbers, strings and BigInts mix.
    let ids: JsValue = Array::of3(
        &JsValue::from_f64(7.0),
        &JsValue::from_str("42"),
        &JsValue::from(7_i64),
    )
    .into();
    let views = JsFuture::from(client.refresh_many(ids).unwrap())
        .await
        .unwrap();
    let ids: Vec<f64> = views
        .dyn_ref::<Array>()
        .unwrap()
        .iter()
        .map(|v| get(&v, "postId").as_f64().unwrap())
        .collect();
    assert_eq!(ids, [7.0, 42.0]);
}

#[wasm_bindgen_test]
async fn a_listener_function_gets_events_until_unsubscribed() {
    let (client, _) = client();
    let (listener, seen) = recorder();
    let unsubscribe: Function = client
        .subscribe(JsValue::from(42.0), listener.unchecked_into())
        .unwrap()
        .unchecked_into();

    client.toggle(JsValue::from(42.0)).unwrap();
    settle(&client).await;
    {
        let events = seen.borrow();
        assert!(events.len() >= 2, "the tap and the answer: {events:?}");
        let first = &events[0];
        assert_eq!(keys(first), ["postId", "kind", "view"]);
        assert_eq!(get(first, "kind").as_string().as_deref(), Some("changed"));
        assert_eq!(get(first, "postId").as_f64(), Some(42.0));
        assert_eq!(get(&get(first, "view"), "liked").as_bool(), Some(true));
        let last = events.last().unwrap();
        assert_eq!(get(&get(last, "view"), "pending").as_bool(), Some(false));
    }

    let before = seen.borrow().len();
    unsubscribe.call0(&JsValue::NULL).unwrap();
    unsubscribe.call0(&JsValue::NULL).unwrap(); // twice is harmless
    client.toggle(JsValue::from(42.0)).unwrap();
    settle(&client).await;
    assert_eq!(seen.borrow().len(), before);
}

#[wasm_bindgen_test]
async fn an_observer_object_hears_the_rollback_and_the_failure() {
    let (client, server) = client();
    let (on_change, changes) = recorder();
    let (on_failure, failures) = recorder();
    let observer = Object::new();
    Reflect::set(&observer, &"onChange".into(), &on_change).unwrap();
    Reflect::set(&observer, &"onFailure".into(), &on_failure).unwrap();
    let _unsubscribe = client
        .subscribe(JsValue::from(7.0), observer.unchecked_into())
        .unwrap();

    server.fail_next(LikeError::Forbidden {
        message: "read-only account".into(),
    });
    let tapped: JsValue = client.set_liked(JsValue::from(7.0), true).unwrap().into();
    assert_eq!(get(&tapped, "liked").as_bool(), Some(true));
    settle(&client).await;

    let failures = failures.borrow();
    assert_eq!(failures.len(), 1);
    let failure = &failures[0];
    assert_eq!(keys(failure), ["postId", "wanted", "message", "error"]);
    assert_eq!(get(failure, "postId").as_f64(), Some(7.0));
    assert_eq!(get(failure, "wanted").as_bool(), Some(true));
    assert_eq!(
        get(failure, "message").as_string().as_deref(),
        Some("Your like didn't save: not allowed: read-only account")
    );
    assert_like_error(&get(failure, "error"), "forbidden");

    let last = changes.borrow().last().cloned().unwrap();
    assert_eq!(get(&last, "liked").as_bool(), Some(false), "rolled back");
    let view: JsValue = client.view(JsValue::from(7.0)).unwrap().into();
    assert_like_error(&get(&view, "error"), "forbidden");
}

#[wasm_bindgen_test]
async fn a_throwing_listener_does_not_break_the_client() {
    let (client, _) = client();
    let thrower = Function::new_no_args("throw new Error('listener bug')");
    let _a = client
        .subscribe(JsValue::from(42.0), thrower.unchecked_into())
        .unwrap();
    let (listener, seen) = recorder();
    let _b = client.subscribe_all(listener.unchecked_into()).unwrap();
    client.toggle(JsValue::from(42.0)).unwrap();
    settle(&client).await;
    assert!(!seen.borrow().is_empty());
    let view: JsValue = client.view(JsValue::from(42.0)).unwrap().into();
    assert_eq!(get(&view, "count").as_f64(), Some(1204.0));

    assert_like_error(
        &client
            .subscribe(JsValue::from(42.0), JsValue::from_f64(1.0).unchecked_into())
            .unwrap_err(),
        "invalid_argument",
    );
}

#[wasm_bindgen_test]
async fn stats_and_shutdown() {
    let (client, _) = client();
    client.toggle(JsValue::from(42.0)).unwrap();
    client.toggle(JsValue::from(42.0)).unwrap();
    client.toggle(JsValue::from(42.0)).unwrap();
    settle(&client).await;
    let stats: JsValue = client.stats().unwrap().into();
    assert_eq!(
        keys(&stats),
        [
            "taps",
            "callsSent",
            "intentsSent",
            "coalesced",
            "retries",
            "rollbacks",
            "evictions"
        ]
    );
    assert_eq!(get(&stats, "taps").as_f64(), Some(3.0));
    assert_eq!(get(&stats, "callsSent").as_f64(), Some(1.0));
    assert_eq!(get(&stats, "coalesced").as_f64(), Some(2.0));
    assert!(!client.has_pending_calls());

    let clean = JsFuture::from(client.shutdown(Some(1000.0)).unwrap())
        .await
        .unwrap();
    assert_eq!(clean.as_bool(), Some(true));
    assert!(client.is_shut_down());
    let err = JsFuture::from(client.refresh(JsValue::from(42.0)).unwrap())
        .await
        .unwrap_err();
    assert_like_error(&err, "shutdown");
    assert_like_error(&client.wait_idle(-1.0).unwrap_err(), "invalid_argument");
}

#[wasm_bindgen_test]
fn wrong_plain_objects_are_refused_with_the_field_named() {
    fn message(err: &JsValue) -> String {
        get(err, "message").as_string().unwrap()
    }
    for (bad, says) in [
        (
            r#"{"retry":{"jitter":"yes"}}"#,
            r#"invalid configuration: options.retry.jitter: invalid type: string "yes", expected a boolean"#,
        ),
        (
            r#"{"timeoutMs":"10"}"#,
            r#"invalid configuration: options.timeoutMs: invalid type: string "10", expected f64"#,
        ),
        // A misspelt key is refused too, not ignored (a client that would
        // send no token).
        (
            r#"{"tokn":"x"}"#,
            "invalid configuration: options: unknown field `tokn`, expected one of `token`, \
             `retry`, `timeoutMs`, `maxPosts`, `maxAnswerBytes`, `journal`, `maxIntentAgeMs`, \
             `keepWhileOfflineMs`",
        ),
        (
            r#"{"retry":{"maxRetries":2,"jiter":false}}"#,
            "invalid configuration: options.retry: unknown field `jiter`, expected one of \
             `minDelayMs`, `maxDelayMs`, `factor`, `maxRetries`, `jitter`, `seed`",
        ),
        (
            r#"{"journal":{"viewer":"ana","store":{}}}"#,
            "invalid configuration: options.journal: unknown field `store`, expected `viewer` \
             or `storage`",
        ),
    ] {
        let err = LikeClient::new("http://127.0.0.1:1", options(bad)).unwrap_err();
        assert_eq!(message(&err), says);
    }

    let server = ScriptedServer::new();
    let likes = |json: &str| Ts::new_unchecked(options(json));
    server
        .set_post(
            JsValue::from(42.0),
            likes(r#"{"count":3,"likedByMe":false,"version":1}"#),
        )
        .unwrap();
    for (bad, says) in [
        (
            r#"{"count":"3","likedByMe":false,"version":1}"#,
            "likes.count: ",
        ),
        (
            r#"{"count":3,"likedByMe":0,"version":1}"#,
            "likes.likedByMe: ",
        ),
        (
            r#"{"count":3,"likedByMe":false,"version":1,"friends":[1]}"#,
            "likes.friends: ",
        ),
        (
            r#"{"count":3,"likedByMe":false}"#,
            "missing field `version`",
        ),
        (r#"[]"#, "likes: "),
    ] {
        let err = server
            .set_post(JsValue::from(42.0), likes(bad))
            .unwrap_err();
        assert_like_error(&err, "invalid_argument");
        assert!(message(&err).contains(says), "{bad}: {}", message(&err));
    }

    let state = |json: &str| Ts::new_unchecked(options(json));
    let err = server
        .answer(0.0, state(r#"{"count":-1,"likedByMe":true,"version":2}"#))
        .unwrap_err();
    assert!(
        message(&err).starts_with("state.count: "),
        "{}",
        message(&err)
    );
    assert!(
        !server
            .answer(0.0, state(r#"{"count":1,"likedByMe":true,"version":2}"#))
            .unwrap(),
        "no call 0 is waiting"
    );

    let failure = |json: &str| Ts::new_unchecked(options(json));
    for fine in [
        r#""network""#,
        r#""timeout""#,
        r#""unreadable""#,
        r#"{"status":503}"#,
    ] {
        assert!(!server.fail(0.0, failure(fine)).unwrap(), "{fine}");
    }
    for (bad, says) in [
        (r#""boom""#, "unknown variant `boom`"),
        (r#"{"retryAfterMs":5}"#, "missing field `status`"),
        (r#"{"status":70000}"#, "failure.status: "),
        (r#"{"status":429,"code":7}"#, "failure.code: "),
    ] {
        let err = server.fail(0.0, failure(bad)).unwrap_err();
        assert_like_error(&err, "invalid_argument");
        assert!(message(&err).contains(says), "{bad}: {}", message(&err));
    }
}
