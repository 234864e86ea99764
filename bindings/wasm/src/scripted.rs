//! The `ScriptedServer` class JavaScript sees (wasm only): a server for
//! tests whose calls wait until the test answers them.

use js_sys::Array;
use likekit_core::wire::{LikeState, PostLikes};
use likekit_core::{Action, ScriptedFailure};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::args;
use crate::convert;

#[wasm_bindgen]
extern "C" {
    /// `ScriptedCall[]`.
    #[derive(Debug, Clone)]
    #[wasm_bindgen(typescript_type = "ScriptedCall[]")]
    pub type JsScriptedCalls;
}

/// A server for tests: its like and unlike calls wait until the test
/// answers them, in any order. Build a client on it with
/// `LikeClient.scripted(server, options)`, tap, then read `calls()` and
/// `answer` or `fail` each. Reads answer at once from the posts given to
/// `setPost`. Nothing goes over the network.
///
/// ```js
/// const server = new ScriptedServer();
/// const client = LikeClient.scripted(server, { retry: { maxRetries: 0 } });
/// client.setLiked(42, true);             // pending at once
/// server.calls();                        // [{ id: 0, postId: 42, like: true, text: "like 42 #0" }]
/// server.answer(0, { count: 1, likedByMe: true, version: 2 });
/// ```
#[wasm_bindgen]
#[derive(Debug, Default)]
pub struct ScriptedServer {
    pub(crate) inner: likekit_core::ScriptedServer,
}

#[wasm_bindgen]
impl ScriptedServer {
    /// A server with no posts and no calls.
    #[wasm_bindgen(constructor)]
    pub fn new() -> ScriptedServer {
        Self::default()
    }

    /// Reads of the post answer `likes` from now on.
    ///
    /// Throws a `LikeError` (`"bad_post_id"`, `"invalid_argument"`) for a
    /// bad id or field.
    #[wasm_bindgen(js_name = setPost)]
    pub fn set_post(
        &self,
        #[wasm_bindgen(js_name = postId, unchecked_param_type = "PostIdInput")] post_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ScriptedLikes")] likes: JsValue,
    ) -> Result<(), JsValue> {
        let post = convert::post_id(&post_id)?;
        let friends = field(&likes, "friends");
        let friends = if friends.is_undefined() {
            Vec::new()
        } else {
            Array::is_array(&friends)
                .then(|| {
                    Array::from(&friends)
                        .iter()
                        .map(|f| f.as_string())
                        .collect()
                })
                .flatten()
                .ok_or_else(|| {
                    convert::invalid_argument("likes.friends must be an array of strings")
                })?
        };
        self.inner.set_post(
            post,
            PostLikes {
                count: whole(&likes, "count")?,
                liked_by_me: flag(&likes, "likedByMe")?,
                friends,
                version: whole(&likes, "version")?,
            },
        );
        Ok(())
    }

    /// Reads of the post answer "not found" from now on.
    #[wasm_bindgen(js_name = removePost)]
    pub fn remove_post(
        &self,
        #[wasm_bindgen(js_name = postId, unchecked_param_type = "PostIdInput")] post_id: JsValue,
    ) -> Result<(), JsValue> {
        self.inner.remove_post(convert::post_id(&post_id)?);
        Ok(())
    }

    /// The calls waiting for an answer, oldest first.
    pub fn calls(&self) -> JsScriptedCalls {
        let calls: Array = self
            .inner
            .calls()
            .iter()
            .map(|call| {
                let object = js_sys::Object::new();
                let set = |key: &str, value: JsValue| {
                    let _ = js_sys::Reflect::set(&object, &JsValue::from_str(key), &value);
                };
                #[allow(clippy::cast_precision_loss)]
                set("id", JsValue::from_f64(call.id as f64));
                set("postId", convert::post_id_value(call.post));
                set("like", JsValue::from_bool(call.action == Action::Like));
                set("text", JsValue::from_str(&call.to_string()));
                JsValue::from(object)
            })
            .collect();
        calls.unchecked_into()
    }

    /// Answers call `id` with what the server saved. Returns `false` when
    /// no call `id` is waiting.
    pub fn answer(
        &self,
        id: f64,
        #[wasm_bindgen(unchecked_param_type = "ScriptedState")] state: JsValue,
    ) -> Result<bool, JsValue> {
        let state = LikeState {
            count: whole(&state, "count")?,
            liked_by_me: flag(&state, "likedByMe")?,
            version: whole(&state, "version")?,
        };
        Ok(call_id(id)?.is_some_and(|id| self.inner.answer(id, Ok(state))))
    }

    /// Fails call `id`: `"network"`, `"timeout"`, `"unreadable"`, or an
    /// answer `{ status, retryAfterMs?, code? }`. Returns `false` when no
    /// call `id` is waiting.
    pub fn fail(
        &self,
        id: f64,
        #[wasm_bindgen(unchecked_param_type = "ScriptedFailure")] failure: JsValue,
    ) -> Result<bool, JsValue> {
        let failure = scripted_failure(&failure)?;
        Ok(call_id(id)?.is_some_and(|id| self.inner.fail(id, failure)))
    }
}

fn field(source: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(source, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn whole(source: &JsValue, key: &str) -> Result<u64, JsValue> {
    let value = field(source, key);
    let number = value
        .as_f64()
        .ok_or_else(|| convert::invalid_argument(&format!("{key} must be a number")))?;
    args::count(number, key).map_err(|message| convert::invalid_argument(&message))
}

fn flag(source: &JsValue, key: &str) -> Result<bool, JsValue> {
    field(source, key)
        .as_bool()
        .ok_or_else(|| convert::invalid_argument(&format!("{key} must be a boolean")))
}

fn call_id(id: f64) -> Result<Option<u64>, JsValue> {
    args::count(id, "id")
        .map(Some)
        .map_err(|message| convert::invalid_argument(&message))
}

fn scripted_failure(value: &JsValue) -> Result<ScriptedFailure, JsValue> {
    if let Some(kind) = value.as_string() {
        return match kind.as_str() {
            "network" => Ok(ScriptedFailure::Network),
            "timeout" => Ok(ScriptedFailure::Timeout),
            "unreadable" => Ok(ScriptedFailure::Unreadable),
            other => Err(convert::invalid_argument(&format!(
                "failure must be \"network\", \"timeout\", \"unreadable\" or {{ status }}, not {other:?}"
            ))),
        };
    }
    let status = whole(value, "status")?;
    let status = u16::try_from(status)
        .map_err(|_| convert::invalid_argument("status must be an HTTP status"))?;
    let retry_after = field(value, "retryAfterMs");
    let retry_after_ms = if retry_after.is_undefined() || retry_after.is_null() {
        None
    } else {
        Some(whole(value, "retryAfterMs")?)
    };
    let code = field(value, "code");
    let code = if code.is_undefined() || code.is_null() {
        None
    } else {
        Some(
            code.as_string()
                .ok_or_else(|| convert::invalid_argument("code must be a string"))?,
        )
    };
    Ok(ScriptedFailure::Status {
        status,
        retry_after_ms,
        code,
    })
}
