//! The `ScriptedServer` class JavaScript sees (wasm only): a server for
//! tests whose calls wait until the test answers them.

use tsify::Ts;
use wasm_bindgen::prelude::*;

use crate::args;
use crate::convert;
use crate::types::{
    self, FromJs, ScriptedCall, ScriptedFailure, ScriptedLikes, ScriptedState, to_js,
};

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
/// server.calls();                        // [] : the call starts on the event loop
/// await Promise.resolve();
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
        likes: Ts<ScriptedLikes>,
    ) -> Result<(), JsValue> {
        let post = convert::post_id(&post_id)?;
        let likes: ScriptedLikes = read(&likes.into(), "likes")?;
        self.inner.set_post(post, likes.into());
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
    pub fn calls(&self) -> Result<Vec<Ts<ScriptedCall>>, JsValue> {
        self.inner
            .calls()
            .iter()
            .map(|call| to_js(&ScriptedCall::from(call)))
            .collect()
    }

    /// Answers call `id` with what the server saved. Returns `false` when
    /// no call `id` is waiting.
    pub fn answer(&self, id: f64, state: Ts<ScriptedState>) -> Result<bool, JsValue> {
        let state: ScriptedState = read(&state.into(), "state")?;
        Ok(call_id(id)?.is_some_and(|id| self.inner.answer(id, Ok(state.into()))))
    }

    /// Fails call `id`: `"network"`, `"timeout"`, `"unreadable"`, or an
    /// answer `{ status, retryAfterMs?, code? }`. Returns `false` when no
    /// call `id` is waiting.
    pub fn fail(&self, id: f64, failure: Ts<ScriptedFailure>) -> Result<bool, JsValue> {
        let failure = ScriptedFailure::from_js(&failure.into())
            .map_err(|message| types::invalid_argument(&message))?;
        Ok(call_id(id)?.is_some_and(|id| self.inner.fail(id, failure.into())))
    }
}

/// An argument read as its type, or a `LikeError` (`invalid_argument`)
/// naming the field that is wrong.
fn read<T: FromJs>(value: &JsValue, what: &str) -> Result<T, JsValue> {
    T::read_js(value, what).map_err(|message| types::invalid_argument(&message))
}

fn call_id(id: f64) -> Result<Option<u64>, JsValue> {
    args::count(id, "id")
        .map(Some)
        .map_err(|message| types::invalid_argument(&message))
}
