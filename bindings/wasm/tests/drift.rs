//! The hand-written conversions of `src/types.rs` against serde-wasm-bindgen
//! (`cargo xtask test --only wasm`).
//!
//! The package writes and reads its plain objects by hand, field by field,
//! while their TypeScript declarations are derived by tsify from the same
//! types' serde attributes. Here serde-wasm-bindgen (a dev-dependency only)
//! converts the same values through those attributes, and each hand
//! conversion must agree with it: the same keys in the same order with the
//! same values out, the same Rust value in, the same values refused. A
//! field renamed, added or forgotten on one side fails here.

#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used)]

use std::fmt::Debug;

use js_sys::{JSON, Object, Reflect};
use likekit_core::LikeError;
use likekit_wasm::js::{Read, Write};
use likekit_wasm::types;
use likekit_wasm::types::{
    FromJs, IntentJournalOptions, LikeClientOptions, LikeErrorFields, LikeEvent, LikeFailure,
    LikeLineParts, LikeStats, PostId, PostView, RestoreReport, RetryOptions, ScriptedCall,
    ScriptedFailureKind, ScriptedLikes, ScriptedState, ScriptedStatus,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tsify::Tsify;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

/// `JSON.stringify(value)`, or the value's debug form where JSON has none
/// (`undefined`, a `BigInt`).
fn text(value: &JsValue) -> String {
    JSON::stringify(value)
        .ok()
        .and_then(|json| json.as_string())
        .unwrap_or_else(|| format!("{value:?}"))
}

fn parse(json: &str) -> JsValue {
    JSON::parse(json).unwrap()
}

/// The hand-written object is serde-wasm-bindgen's, key for key in the same
/// order, and every key is in the type's TypeScript declaration.
fn same_out<T: Write + Serialize + Tsify + Debug>(value: &T) {
    let by_hand = value.write().unwrap();
    let by_serde = serde_wasm_bindgen::to_value(value).unwrap();
    assert_eq!(text(&by_hand), text(&by_serde), "{value:?}");
    if by_hand.is_object() {
        for key in Object::keys(by_hand.unchecked_ref::<Object>()) {
            let key = key.as_string().unwrap();
            assert!(
                T::DECL.contains(&format!("{key}:")) || T::DECL.contains(&format!("{key}?:")),
                "{key} is not declared in {}",
                T::DECL
            );
        }
    }
}

/// The hand reading of `value` is serde-wasm-bindgen's: the same value, or
/// both refuse it.
fn same_in<T: FromJs + DeserializeOwned + PartialEq + Debug>(value: &JsValue) {
    let by_hand = T::read_js(value, "x");
    let by_serde = serde_wasm_bindgen::from_value::<T>(value.clone());
    match (by_hand, by_serde) {
        (Ok(hand), Ok(serde)) => assert_eq!(hand, serde, "{}", text(value)),
        (Err(_), Err(_)) => {}
        (hand, serde) => panic!(
            "{}: by hand {hand:?}, by serde {:?}",
            text(value),
            serde.map_err(JsValue::from)
        ),
    }
}

fn a_like_error() -> JsValue {
    types::error(&LikeError::RateLimited {
        retry_after_ms: Some(1500),
    })
}

fn view(post_id: PostId, error: JsValue) -> PostView {
    PostView {
        post_id,
        liked: true,
        count: 1204,
        friends: vec!["Ana".into(), "Bo \"B\"".into()],
        line: "Liked by you, Ana, Bo and 1,201 others".into(),
        line_parts: LikeLineParts {
            you: true,
            friends: vec!["Ana".into(), "Bo".into()],
            others: 1201,
            total: 1204,
        },
        pending: true,
        error,
    }
}

fn failure() -> LikeFailure {
    LikeFailure {
        post_id: PostId::Number(42.0),
        wanted: true,
        message: "Your like didn't save: too many requests".into(),
        error: a_like_error(),
    }
}

#[wasm_bindgen_test]
fn what_the_package_writes_is_what_serde_writes() {
    same_out(&PostId::Number(42.0));
    same_out(&PostId::Text("9223372036854775807".into()));
    same_out(&view(PostId::Number(42.0), JsValue::NULL));
    same_out(&view(
        PostId::Text("9007199254740993".into()),
        a_like_error(),
    ));
    same_out(&LikeLineParts {
        you: false,
        friends: vec![],
        others: 0,
        total: 0,
    });
    for (status, retry_after_ms) in [(None, None), (Some(429), Some(1500)), (Some(503), None)] {
        same_out(&LikeErrorFields {
            code: "rate_limited".into(),
            transient: true,
            status,
            retry_after_ms,
        });
    }
    same_out(&failure());
    same_out(&RestoreReport {
        restored: vec![view(PostId::Number(7.0), JsValue::NULL)],
        expired: vec![failure()],
        problem: JsValue::NULL,
    });
    same_out(&RestoreReport {
        restored: vec![],
        expired: vec![],
        problem: a_like_error(),
    });
    same_out(&LikeEvent::Changed {
        post_id: PostId::Number(7.0),
        kind: "changed",
        view: view(PostId::Number(7.0), JsValue::NULL),
    });
    same_out(&LikeEvent::Failed {
        post_id: PostId::Number(42.0),
        kind: "failed",
        failure: failure(),
    });
    same_out(&LikeStats {
        taps: 1,
        calls_sent: 2,
        intents_sent: 3,
        coalesced: 4,
        retries: 5,
        rollbacks: 6,
        evictions: 7,
    });
    same_out(&ScriptedCall {
        id: 3,
        post_id: PostId::Text("9223372036854775807".into()),
        like: false,
        text: "unlike 9223372036854775807 #3".into(),
    });
    // Past `Number.MAX_SAFE_INTEGER` both refuse a count.
    let huge = LikeStats {
        taps: 1 << 53,
        calls_sent: 0,
        intents_sent: 0,
        coalesced: 0,
        retries: 0,
        rollbacks: 0,
        evictions: 0,
    };
    assert!(huge.write().is_err());
    assert!(serde_wasm_bindgen::to_value(&huge).is_err());
}

#[wasm_bindgen_test]
fn what_the_package_reads_is_what_serde_reads() {
    for json in [
        r#"{}"#,
        r#"{"minDelayMs":10,"maxDelayMs":50.5,"factor":1.5,"maxRetries":2,"jitter":false,"seed":7}"#,
        r#"{"minDelayMs":null,"jitter":true}"#,
        r#"{"jitter":"yes"}"#,
        r#"{"factor":"2"}"#,
        r#"{"seed":true}"#,
        r#"[]"#,
        r#"3"#,
        r#"null"#,
    ] {
        same_in::<RetryOptions>(&parse(json));
    }
    for json in [
        r#"{"count":3,"likedByMe":true,"friends":["Ana","Bo"],"version":9}"#,
        r#"{"count":0,"likedByMe":false,"version":1,"extra":"x"}"#,
        r#"{"count":"3","likedByMe":false,"version":1}"#,
        r#"{"count":-1,"likedByMe":false,"version":1}"#,
        r#"{"count":1.5,"likedByMe":false,"version":1}"#,
        r#"{"count":9007199254740992,"likedByMe":false,"version":1}"#,
        r#"{"count":3,"likedByMe":0,"version":1}"#,
        r#"{"count":3,"likedByMe":false,"version":1,"friends":[1]}"#,
        r#"{"count":3,"likedByMe":false,"version":1,"friends":"Ana"}"#,
        r#"{"count":3,"likedByMe":false}"#,
        r#"{"likedByMe":false,"version":1}"#,
        r#"[]"#,
        r#""likes""#,
    ] {
        same_in::<ScriptedLikes>(&parse(json));
    }
    // A `BigInt` count, and friends in a `Set`.
    let likes = parse(r#"{"likedByMe":true,"version":2}"#);
    Reflect::set(&likes, &"count".into(), &js_sys::BigInt::from(5u64).into()).unwrap();
    let friends = js_sys::Set::new(&parse(r#"["Ana"]"#));
    Reflect::set(&likes, &"friends".into(), &friends).unwrap();
    same_in::<ScriptedLikes>(&likes);
    assert_eq!(
        ScriptedLikes::read_js(&likes, "likes").unwrap().friends,
        ["Ana"]
    );

    for json in [
        r#"{"count":1,"likedByMe":true,"version":2}"#,
        r#"{"count":-1,"likedByMe":true,"version":2}"#,
        r#"{"count":1,"likedByMe":"true","version":2}"#,
        r#"{"count":1,"likedByMe":true}"#,
    ] {
        same_in::<ScriptedState>(&parse(json));
    }
    for json in [
        r#"{"status":503}"#,
        r#"{"status":429,"retryAfterMs":1500,"code":"slow_down"}"#,
        r#"{"status":429,"retryAfterMs":null,"code":null}"#,
        r#"{"status":70000}"#,
        r#"{"status":-1}"#,
        r#"{"status":"503"}"#,
        r#"{"status":429,"code":7}"#,
        r#"{"status":429,"retryAfterMs":-5}"#,
        r#"{"retryAfterMs":5}"#,
    ] {
        same_in::<ScriptedStatus>(&parse(json));
    }
    for kind in ["network", "timeout", "unreadable", "boom", "Network"] {
        let value = JsValue::from_str(kind);
        let by_hand = ScriptedFailureKind::read(&value).ok();
        let by_serde = serde_wasm_bindgen::from_value::<ScriptedFailureKind>(value).ok();
        assert_eq!(by_hand, by_serde, "{kind}");
    }

    // The options keep `token` and `retry` as they are (read later).
    for json in [
        r#"{}"#,
        r#"{"token":"t","timeoutMs":2500,"maxPosts":100,"maxAnswerBytes":65536,"retry":{"seed":1}}"#,
        r#"{"timeoutMs":"10"}"#,
        r#"{"maxPosts":null,"maxAnswerBytes":true}"#,
        r#"{"journal":{"viewer":"ana"},"maxIntentAgeMs":60000,"keepWhileOfflineMs":5000}"#,
        r#"{"maxIntentAgeMs":"1 day"}"#,
        r#"5"#,
    ] {
        let value = parse(json);
        let by_hand = LikeClientOptions::read_js(&value, "options");
        let by_serde = serde_wasm_bindgen::from_value::<LikeClientOptions>(value);
        match (by_hand, by_serde) {
            (Ok(hand), Ok(serde)) => {
                assert_eq!(hand.timeout_ms, serde.timeout_ms, "{json}");
                assert_eq!(hand.max_posts, serde.max_posts, "{json}");
                assert_eq!(hand.max_answer_bytes, serde.max_answer_bytes, "{json}");
                assert_eq!(hand.max_intent_age_ms, serde.max_intent_age_ms, "{json}");
                assert_eq!(
                    hand.keep_while_offline_ms, serde.keep_while_offline_ms,
                    "{json}"
                );
                assert_eq!(text(&hand.journal), text(&serde.journal), "{json}");
                assert!(Object::is(&hand.token, &serde.token), "{json}");
                assert_eq!(text(&hand.retry), text(&serde.retry), "{json}");
            }
            (Err(_), Err(_)) => {}
            (hand, serde) => panic!("{json}: by hand {hand:?}, by serde {serde:?}"),
        }
    }
}

#[wasm_bindgen_test]
fn the_journal_option_is_read_as_serde_reads_it() {
    for json in [
        r#"{"viewer":"ana"}"#,
        r#"{"viewer":"ben","storage":{}}"#,
        r#"{"viewer":7}"#,
        r#"{}"#,
        r#"null"#,
    ] {
        let value = parse(json);
        let by_hand = IntentJournalOptions::read_js(&value, "options.journal");
        let by_serde = serde_wasm_bindgen::from_value::<IntentJournalOptions>(value);
        match (by_hand, by_serde) {
            (Ok(hand), Ok(serde)) => {
                assert_eq!(hand.viewer, serde.viewer, "{json}");
                assert_eq!(text(&hand.storage), text(&serde.storage), "{json}");
            }
            (Err(_), Err(_)) => {}
            (hand, serde) => panic!("{json}: by hand {hand:?}, by serde {serde:?}"),
        }
    }
}

#[wasm_bindgen_test]
fn the_hand_errors_name_the_field_as_serde_words_it() {
    let err = RetryOptions::read_js(&parse(r#"{"jitter":"yes"}"#), "options.retry").unwrap_err();
    let serde =
        serde_wasm_bindgen::from_value::<RetryOptions>(parse(r#"{"jitter":"yes"}"#)).unwrap_err();
    let serde = JsValue::from(serde)
        .unchecked_into::<js_sys::Error>()
        .message()
        .as_string()
        .unwrap();
    assert_eq!(err, format!("options.retry.jitter: {serde}"));
    let err =
        ScriptedLikes::read_js(&parse(r#"{"count":1,"likedByMe":true}"#), "likes").unwrap_err();
    assert_eq!(err, "likes: missing field `version`");
}

/// Where the package is stricter than serde-wasm-bindgen: it refuses an
/// option key it does not know, which serde-wasm-bindgen (reading only the
/// fields a struct names, whatever `deny_unknown_fields` says) never sees.
/// The error is worded as serde's own `unknown_field`, and every key the
/// options declare is known.
#[wasm_bindgen_test]
fn an_unknown_option_key_is_refused_in_serdes_words() {
    use serde::de::Error as _;
    fn unknown(key: &str, known: &'static [&'static str]) -> String {
        serde::de::value::Error::unknown_field(key, known).to_string()
    }
    const OPTIONS: &[&str] = &[
        "token",
        "retry",
        "timeoutMs",
        "maxPosts",
        "maxAnswerBytes",
        "journal",
        "maxIntentAgeMs",
        "keepWhileOfflineMs",
    ];
    const RETRY: &[&str] = &[
        "minDelayMs",
        "maxDelayMs",
        "factor",
        "maxRetries",
        "jitter",
        "seed",
    ];
    const JOURNAL: &[&str] = &["viewer", "storage"];

    let json = r#"{"tokn":"x"}"#;
    assert!(serde_wasm_bindgen::from_value::<LikeClientOptions>(parse(json)).is_ok());
    assert_eq!(
        LikeClientOptions::read_js(&parse(json), "options").unwrap_err(),
        format!("options: {}", unknown("tokn", OPTIONS))
    );
    assert_eq!(
        RetryOptions::read_js(&parse(r#"{"jiter":false}"#), "options.retry").unwrap_err(),
        format!("options.retry: {}", unknown("jiter", RETRY))
    );
    assert_eq!(
        IntentJournalOptions::read_js(&parse(r#"{"viewer":"ana","store":{}}"#), "options.journal")
            .unwrap_err(),
        format!("options.journal: {}", unknown("store", JOURNAL))
    );

    // Every key the binding declares, present, is read.
    let every = |keys: &[&str]| {
        let object = Object::new();
        for key in keys {
            Reflect::set(&object, &JsValue::from_str(key), &JsValue::NULL).unwrap();
        }
        JsValue::from(object)
    };
    LikeClientOptions::read_js(&every(OPTIONS), "options").unwrap();
    RetryOptions::read_js(&every(RETRY), "options.retry").unwrap();
    let journal = every(JOURNAL);
    Reflect::set(&journal, &"viewer".into(), &"ana".into()).unwrap();
    IntentJournalOptions::read_js(&journal, "options.journal").unwrap();
}
