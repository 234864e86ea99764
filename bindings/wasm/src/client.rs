//! The `LikeClient` class JavaScript sees (wasm only). Each method converts
//! its arguments, calls `likekit_core::LikeClient`, and converts the answer.

use std::cell::RefCell;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::time::Duration;

use js_sys::{Function, Promise};
use likekit_core::{
    AsyncTokenProvider, BoxFuture, LikeEvent, LikeFailure, LikeObserver, PostView, StaticToken,
    Subscription,
};
use tsify::Ts;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::args;
use crate::convert::{self, TokenOption};
use crate::js::Write;
use crate::scripted::ScriptedServer;
use crate::types::{self, LikeStats, to_js};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(message: &str, detail: &JsValue);

    /// `LikeListener` (hand-written in `types.d.ts`: a function or an
    /// object of methods).
    #[derive(Debug, Clone)]
    #[wasm_bindgen(typescript_type = "LikeListener")]
    pub type JsListener;
    /// The function `subscribe` returns.
    #[derive(Debug, Clone)]
    #[wasm_bindgen(typescript_type = "() => void")]
    pub type JsUnsubscribe;
}

/// How long `shutdown()` lets calls finish when no deadline is given.
const DEFAULT_SHUTDOWN_MS: f64 = 5_000.0;

/// The token callback of the options: it answers a token (or nothing) at
/// once, or a Promise of one, which the request awaits.
struct JsTokens(Function);

impl AsyncTokenProvider for JsTokens {
    fn token(&self, refresh: bool) -> BoxFuture<'_, Option<String>> {
        let answer = self.0.call1(&JsValue::NULL, &JsValue::from_bool(refresh));
        Box::pin(async move {
            let token = match answer {
                Ok(answer) if is_thenable(&answer) => {
                    match JsFuture::from(Promise::resolve(&answer)).await {
                        Ok(token) => token,
                        Err(reason) => {
                            console_error(
                                "LikeKit: the token callback's promise rejected",
                                &reason,
                            );
                            return None;
                        }
                    }
                }
                Ok(token) => token,
                Err(thrown) => {
                    console_error("LikeKit: the token callback threw", &thrown);
                    return None;
                }
            };
            if token.is_null() || token.is_undefined() {
                return None;
            }
            token.as_string().or_else(|| {
                console_error(
                    "LikeKit: the token callback must give a string (or null), or a Promise of one; got",
                    &token,
                );
                None
            })
        })
    }
}

/// A Promise, or any object with a `then` method.
fn is_thenable(value: &JsValue) -> bool {
    value.is_object()
        && js_sys::Reflect::get(value, &JsValue::from_str("then"))
            .is_ok_and(|then| then.is_function())
}

/// A listener: a function taking every event, or an object with
/// `onChange` / `onFailure` methods.
struct JsObserver(JsValue);

impl JsObserver {
    fn call(&self, method: &str, argument: &JsValue) {
        let listener = &self.0;
        let result = if let Some(function) = listener.dyn_ref::<Function>() {
            function.call1(&JsValue::NULL, argument)
        } else {
            match js_sys::Reflect::get(listener, &JsValue::from_str(method)) {
                Ok(method) => match method.dyn_ref::<Function>() {
                    Some(method) => method.call1(listener, argument),
                    None => Ok(JsValue::UNDEFINED),
                },
                Err(thrown) => Err(thrown),
            }
        };
        if let Err(thrown) = result {
            console_error("LikeKit: a listener threw", &thrown);
        }
    }
}

impl LikeObserver for JsObserver {
    fn on_change(&self, view: &PostView) {
        self.on_event(&LikeEvent::Changed(view.clone()));
    }

    fn on_failure(&self, failure: &LikeFailure) {
        self.on_event(&LikeEvent::Failed(failure.clone()));
    }

    fn on_event(&self, event: &LikeEvent) {
        let (method, argument) = if self.0.is_function() {
            ("", to_js(&types::LikeEvent::from(event)).map(JsValue::from))
        } else {
            match event {
                LikeEvent::Changed(view) => (
                    "onChange",
                    to_js(&types::PostView::from(view)).map(JsValue::from),
                ),
                LikeEvent::Failed(failure) => (
                    "onFailure",
                    to_js(&types::LikeFailure::from(failure)).map(JsValue::from),
                ),
            }
        };
        match argument {
            Ok(argument) => self.call(method, &argument),
            Err(e) => console_error("LikeKit: an event could not be converted", &e),
        }
    }
}

/// A core builder with the options that do not name a server or a token.
fn configured(options: convert::Options) -> likekit_core::LikeClientBuilder {
    let mut builder = likekit_core::LikeClient::builder().retry_policy(options.retry);
    if let Some(timeout) = options.timeout {
        builder = builder.request_timeout(timeout);
    }
    if let Some(max_posts) = options.max_posts {
        builder = builder.max_posts(max_posts);
    }
    if let Some(bytes) = options.max_answer_bytes {
        builder = builder.max_answer_bytes(bytes);
    }
    if let Some(journal) = options.journal {
        builder = builder.journal(journal);
    }
    if let Some(age) = options.max_intent_age {
        builder = builder.max_intent_age(age);
    }
    if let Some(every) = options.keep_while_offline {
        builder = builder.keep_while_offline(every);
    }
    builder
}

/// Live subscriptions, kept until unsubscribed or the client is freed (so
/// that a discarded unsubscribe function never ends one by itself).
#[derive(Default)]
struct Subscriptions {
    next: u32,
    // A list, not a map: a screen holds a few dozen at most, and a map of
    // its own would add its hashing code to the package.
    live: Vec<(u32, Subscription)>,
}

/// The LikeKit client for one signed-in viewer.
///
/// Taps (`setLiked`, `toggle`) return the new view at once, before any
/// network call; the call follows in the background, one at a time per
/// post, coalesced to the latest tap, retried on transient failures, and
/// rolled back with a "failed" event when the latest tap does not save.
///
/// Every method that takes a post id takes a safe-integer number, a
/// decimal string or a `BigInt` (`PostIdInput`), and throws a `LikeError`
/// with code `"bad_post_id"` for one that is no post id (0, -1, past
/// 2^63 − 1) before anything is tapped or sent.
///
/// ```js
/// const client = new LikeClient("https://likes.example.com", {
///   token: () => session.token,
/// });
/// const stop = client.subscribe(42, (event) => {
///   if (event.kind === "changed") render(event.view);
///   else toast(event.failure.message); // "Your like didn't save: …"
/// });
/// render(await client.refresh(42));
/// button.onclick = () => render(client.toggle(42)); // instant
/// ```
#[wasm_bindgen]
pub struct LikeClient {
    inner: likekit_core::LikeClient,
    subscriptions: Rc<RefCell<Subscriptions>>,
}

#[wasm_bindgen]
impl LikeClient {
    /// A client for the server at `baseUrl` (`http(s)://host[:port][/prefix]`).
    ///
    /// Throws a `LikeError` with code `"config"` for a bad URL, a bad
    /// option, or an option key it does not know (`tokn`), naming it.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(js_name = baseUrl)] base_url: &str,
        #[wasm_bindgen(unchecked_optional_param_type = "LikeClientOptions")] options: JsValue,
    ) -> Result<LikeClient, JsValue> {
        let mut options = convert::options(options).map_err(types::config_error)?;
        let token = std::mem::replace(&mut options.token, TokenOption::None);
        let mut builder = configured(options).base_url(base_url);
        builder = match token {
            TokenOption::None => builder,
            TokenOption::Fixed(token) => builder.token_provider(StaticToken::new(token)),
            TokenOption::Callback(callback) => builder.async_token_provider(JsTokens(callback)),
        };
        let inner = builder.build().map_err(|e| types::error(&e))?;
        Ok(Self::from_core(inner))
    }

    /// A client whose calls go to `server`, a `ScriptedServer` the test
    /// answers by hand. `options` as the constructor's (`token` and the
    /// network ones unused).
    pub fn scripted(
        server: &ScriptedServer,
        #[wasm_bindgen(unchecked_optional_param_type = "LikeClientOptions")] options: JsValue,
    ) -> Result<LikeClient, JsValue> {
        let options = convert::options(options).map_err(types::config_error)?;
        let inner = configured(options)
            .transport(server.inner.clone())
            .build()
            .map_err(|e| types::error(&e))?;
        Ok(Self::from_core(inner))
    }

    /// Sends what the journal (`options.journal`) held when the client was
    /// made: each tap from an earlier page load shows again, pending, and
    /// its call goes out, one per post; taps older than `maxIntentAgeMs`
    /// fail once (listeners hear `expired`) and send nothing. A journal
    /// that could not be read is reported once, in `problem` (and by
    /// `journalProblem()` while this client keeps none). Call it once the
    /// page listens (after `subscribe`); without a journal the report is
    /// empty.
    #[wasm_bindgen(unchecked_return_type = "RestoreReport")]
    pub fn restore(&self) -> Result<JsValue, JsValue> {
        types::RestoreReport::from(&self.inner.restore()).write()
    }

    /// Why the journal (`options.journal`) is not kept as it should be
    /// now: the last save failed (storage full or disabled; it is tried
    /// again at the next change, and after a delay that doubles from 0.5 s
    /// up to a minute; calls are not held back meanwhile), or the storage
    /// could not be read when the client was made and this client keeps no
    /// journal. A `LikeError` with code `"journal_unwritable"` or
    /// `"journal_unreadable"`, or `null` when all is well or there is no
    /// journal.
    #[wasm_bindgen(js_name = journalProblem, unchecked_return_type = "LikeError | null")]
    pub fn journal_problem(&self) -> JsValue {
        self.inner
            .journal_problem()
            .map_or(JsValue::NULL, |e| types::error(&e))
    }

    /// The viewer wants the post liked (`true`) or not (`false`). Returns
    /// the new view at once; the call follows in the background.
    #[wasm_bindgen(js_name = setLiked)]
    pub fn set_liked(
        &self,
        #[wasm_bindgen(js_name = postId, unchecked_param_type = "PostIdInput")] post_id: JsValue,
        liked: bool,
    ) -> Result<Ts<types::PostView>, JsValue> {
        let view = self.inner.set_liked(convert::post_id(&post_id)?, liked);
        to_js(&types::PostView::from(&view))
    }

    /// The viewer taps the heart: like if it shows empty, unlike if it shows
    /// filled. Returns the new view at once.
    ///
    /// "Shows" means as the client holds it: a post that was read
    /// (`refresh`, `refreshMany`) or tapped. A post the client holds no
    /// view of — never read (even if subscribed to: `view()` is
    /// `undefined` until its first read), or forgotten since to stay
    /// within `maxPosts` — counts as not liked with a count of 0, so
    /// `toggle` likes it and shows 1: keep the heart disabled until the
    /// post's first view. For a post the page renders from data
    /// of its own without subscribing, call `setLiked(postId, !shownLiked)`
    /// instead.
    pub fn toggle(
        &self,
        #[wasm_bindgen(js_name = postId, unchecked_param_type = "PostIdInput")] post_id: JsValue,
    ) -> Result<Ts<types::PostView>, JsValue> {
        let view = self.inner.toggle(convert::post_id(&post_id)?);
        to_js(&types::PostView::from(&view))
    }

    /// What the post shows now, or `undefined` when the client holds no
    /// view of it: never tapped or read (a post only subscribed to is
    /// `undefined` until its first read), or evicted since.
    pub fn view(
        &self,
        #[wasm_bindgen(js_name = postId, unchecked_param_type = "PostIdInput")] post_id: JsValue,
    ) -> Result<Option<Ts<types::PostView>>, JsValue> {
        let view = self.inner.view(convert::post_id(&post_id)?);
        view.as_ref()
            .map(|view| to_js(&types::PostView::from(view)))
            .transpose()
    }

    /// Reads the post from the server. Resolves with its view; rejects with
    /// a `LikeError` (`"post_not_found"`, `"network"`…). The viewer's
    /// pending tap stays on top of what the server says.
    #[wasm_bindgen(unchecked_return_type = "Promise<PostView>")]
    pub fn refresh(
        &self,
        #[wasm_bindgen(js_name = postId, unchecked_param_type = "PostIdInput")] post_id: JsValue,
    ) -> Result<Promise, JsValue> {
        let post_id = convert::post_id(&post_id)?;
        let client = self.inner.clone();
        Ok(promise(async move {
            match client.refresh(post_id).await {
                Ok(view) => to_js(&types::PostView::from(&view)).map(JsValue::from),
                Err(e) => Err(types::error(&e)),
            }
        }))
    }

    /// Reads a feed page in as few requests as possible. Resolves with the
    /// views of the posts that exist, in the order asked.
    #[wasm_bindgen(js_name = refreshMany, unchecked_return_type = "Promise<PostView[]>")]
    pub fn refresh_many(
        &self,
        #[wasm_bindgen(js_name = postIds, unchecked_param_type = "Iterable<PostIdInput>")]
        post_ids: JsValue,
    ) -> Result<Promise, JsValue> {
        let ids = convert::post_ids(&post_ids)?;
        let client = self.inner.clone();
        Ok(promise(async move {
            let views = client
                .refresh_many(&ids)
                .await
                .map_err(|e| types::error(&e))?;
            let array = js_sys::Array::new();
            for view in &views {
                array.push(&to_js(&types::PostView::from(view))?.into());
            }
            Ok(array.into())
        }))
    }

    /// Calls `listener` with every change of the post and every failure of
    /// the viewer's tap on it, until the returned function is called.
    /// There is no event for the current state: read it with `view`.
    pub fn subscribe(
        &self,
        #[wasm_bindgen(js_name = postId, unchecked_param_type = "PostIdInput")] post_id: JsValue,
        listener: JsListener,
    ) -> Result<JsUnsubscribe, JsValue> {
        let post_id = convert::post_id(&post_id)?;
        let observer = observer(listener.into())?;
        let subscription = self.inner.subscribe(post_id, observer);
        Ok(self.keep(subscription))
    }

    /// Calls `listener` with the changes and failures of every post, until
    /// the returned function is called.
    #[wasm_bindgen(js_name = subscribeAll)]
    pub fn subscribe_all(&self, listener: JsListener) -> Result<JsUnsubscribe, JsValue> {
        let observer = observer(listener.into())?;
        let subscription = self.inner.subscribe_all(observer);
        Ok(self.keep(subscription))
    }

    /// Counters so far: taps, calls sent, taps coalesced, retries, rollbacks.
    pub fn stats(&self) -> Result<Ts<LikeStats>, JsValue> {
        to_js(&LikeStats::from(&self.inner.stats()))
    }

    /// How many subscriptions are live: made by `subscribe` or
    /// `subscribeAll` and not yet ended by their unsubscribe function. A
    /// screen that unsubscribes everything it subscribed brings it back to
    /// where it was, so a test can check that nothing leaked.
    #[wasm_bindgen(js_name = liveSubscriptions)]
    pub fn live_subscriptions(&self) -> u32 {
        let live = self.subscriptions.borrow().live.len();
        u32::try_from(live).unwrap_or(u32::MAX)
    }

    /// Whether any post has a call in flight or waiting to be retried.
    #[wasm_bindgen(js_name = hasPendingCalls)]
    pub fn has_pending_calls(&self) -> bool {
        self.inner.has_pending_calls()
    }

    /// Sends now every call waiting to be retried: call it from the
    /// window's `online` event, so that a tap kept while offline, or one in
    /// its retry backoff, does not wait out the rest of its delay. A wait
    /// the server asked for (`Retry-After`) is kept; calls still go one at
    /// a time per post. Harmless with nothing waiting.
    #[wasm_bindgen(js_name = retryNow)]
    pub fn retry_now(&self) {
        self.inner.retry_now();
    }

    /// Resolves `true` once no call is in flight or waiting to be retried,
    /// every listener has heard every change so far and the journal (if
    /// any) is saved — or its save failed: see `journalProblem()` — or
    /// `false` after `timeoutMs`.
    #[wasm_bindgen(js_name = waitIdle, unchecked_return_type = "Promise<boolean>")]
    pub fn wait_idle(
        &self,
        #[wasm_bindgen(js_name = timeoutMs)] timeout_ms: f64,
    ) -> Result<Promise, JsValue> {
        let timeout = millis(timeout_ms, "timeoutMs")?;
        let client = self.inner.clone();
        Ok(promise(async move {
            Ok(JsValue::from_bool(client.wait_idle(timeout).await))
        }))
    }

    /// Stops the client: later taps change nothing and reads reject with
    /// `"shutdown"`. Calls already asked for — in flight, waiting to be
    /// retried, or queued behind another — go on for up to `deadlineMs`
    /// (default 5000). Those still unfinished then are abandoned — the
    /// server may or may not have applied them — and their posts go back
    /// to the confirmed state in this client, with a failure event
    /// (`"shutdown"`) each.
    ///
    /// Without a journal (`options.journal`) that is the end of those taps.
    /// With one, they stay in it: the next client for the viewer (the next
    /// page load) sends them again at `restore()` (unless they have grown
    /// older than `maxIntentAgeMs` by then). For such a client, a
    /// `"shutdown"` failure means "not saved yet", not "given up".
    ///
    /// Resolves `true` when every call finished within the deadline.
    #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
    pub fn shutdown(
        &self,
        #[wasm_bindgen(js_name = deadlineMs)] deadline_ms: Option<f64>,
    ) -> Result<Promise, JsValue> {
        let deadline = millis(deadline_ms.unwrap_or(DEFAULT_SHUTDOWN_MS), "deadlineMs")?;
        // Begins here, not at the promise's first poll (a microtask later).
        let shutdown = self.inner.shutdown(deadline);
        Ok(promise(
            async move { Ok(JsValue::from_bool(shutdown.await)) },
        ))
    }

    /// Whether `shutdown` was called.
    #[wasm_bindgen(js_name = isShutDown)]
    pub fn is_shut_down(&self) -> bool {
        self.inner.is_shut_down()
    }
}

impl std::fmt::Debug for LikeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LikeClient")
            .field("inner", &self.inner)
            .field("subscriptions", &self.subscriptions.borrow().live.len())
            .finish()
    }
}

impl LikeClient {
    /// Wraps a client built in Rust (any transport): for Rust code that
    /// hands a client to JavaScript, and for tests.
    pub fn from_core(inner: likekit_core::LikeClient) -> LikeClient {
        LikeClient {
            inner,
            subscriptions: Rc::default(),
        }
    }

    /// Keeps `subscription` until the returned function is called.
    fn keep(&self, subscription: Subscription) -> JsUnsubscribe {
        let id = {
            let mut subscriptions = self.subscriptions.borrow_mut();
            let id = subscriptions.next;
            subscriptions.next = subscriptions.next.wrapping_add(1);
            subscriptions.live.push((id, subscription));
            id
        };
        let weak: Weak<RefCell<Subscriptions>> = Rc::downgrade(&self.subscriptions);
        let unsubscribe = Closure::<dyn FnMut()>::new(move || {
            let removed = weak.upgrade().and_then(|subscriptions| {
                let mut subscriptions = subscriptions.borrow_mut();
                let at = subscriptions
                    .live
                    .iter()
                    .position(|(live, _)| *live == id)?;
                Some(subscriptions.live.swap_remove(at))
            });
            // Dropped outside the borrow: dropping unsubscribes.
            drop(removed);
        });
        unsubscribe.into_js_value().unchecked_into()
    }
}

fn observer(listener: JsValue) -> Result<JsObserver, JsValue> {
    if listener.is_function() || listener.is_object() {
        Ok(JsObserver(listener))
    } else {
        Err(types::invalid_argument(
            "a listener must be a function or an object with onChange/onFailure methods",
        ))
    }
}

/// A Promise of what `answer` resolves to. Every method's future goes
/// through this one boxed type, so the package carries one copy of the
/// code that drives a future from a Promise, not one per method.
fn promise(answer: impl Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    let answer: Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>> = Box::pin(answer);
    wasm_bindgen_futures::future_to_promise(answer)
}

fn millis(value: f64, what: &str) -> Result<Duration, JsValue> {
    args::millis(value, what).map_err(|e| types::invalid_argument(&e))
}
