//! The web backend of [`HttpTransport`](super::HttpTransport): the
//! JavaScript host's own `fetch` (a page, a worker, Node 18 or newer),
//! an `AbortController` and a timer for the timeout, and the JavaScript
//! `URL` for the base URL. The host already does HTTP, TLS, redirects,
//! compression and URL parsing, so none of that is compiled in.
//!
//! How each outcome is classified, as natively:
//!
//! | outcome | error |
//! |---|---|
//! | `fetch` rejects before the timer fired (no connection, CORS refused, offline) | [`LikeError::Network`] |
//! | the timer fired, before or during the answer's body | [`LikeError::Timeout`] |
//! | the body's stream fails before the timer fired (cut short) | [`LikeError::InvalidResponse`] |
//! | the body is longer than the cap | [`LikeError::InvalidResponse`] (reading stops) |
//! | a token that is not a header value (visible ASCII and tabs) | [`LikeError::Config`] |
//!
//! Statuses, bodies and Retry-After are classified by the shared
//! `decode` and `error_for`.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use gloo_timers::callback::Timeout;
use js_sys::{Promise, Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, Headers, ReadableStreamDefaultReader, ReadableStreamReadResult, RequestInit,
    Response,
};

use super::{Method, ParsedUrl, too_large};
use crate::LikeError;
use crate::runtime::timer_millis;

#[wasm_bindgen]
extern "C" {
    /// `dst.set(src)`, as `Uint8Array::copy_to` calls it, without its
    /// length check (and the panic message and formatting that come with it).
    #[wasm_bindgen(js_namespace = Uint8Array, js_name = "prototype.set.call")]
    fn copy_into(dst: &mut [u8], src: &Uint8Array);
    /// The global `fetch`, looked up when called: `window.fetch` in a
    /// page, `self.fetch` in a worker, `globalThis.fetch` in Node.
    #[wasm_bindgen(catch, js_name = fetch)]
    fn global_fetch(url: &str, init: &RequestInit) -> Result<Promise, JsValue>;
}

/// `fetch` needs nothing set up: this is a marker that says so.
#[derive(Clone)]
pub(super) struct Http;

impl Http {
    pub(super) fn new() -> Result<Self, LikeError> {
        Ok(Self)
    }

    /// Sends one request with `Accept: application/json` and the bearer
    /// token, if any; its answer, head only, or the typed error for no
    /// answer. `timeout` covers the answer's body too.
    pub(super) async fn request(
        &self,
        method: Method,
        url: &str,
        token: Option<&str>,
        timeout: Duration,
    ) -> Result<Answer, LikeError> {
        let headers = Headers::new().map_err(|e| setup_error(&e))?;
        headers
            .set("accept", "application/json")
            .map_err(|e| setup_error(&e))?;
        if let Some(token) = token {
            // What reqwest takes as a header value: visible ASCII and tabs
            // (fetch would take more, and strip spaces at the ends).
            if !token
                .bytes()
                .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
            {
                return Err(LikeError::Config {
                    message: "the token is not a valid header value (visible ASCII only)".into(),
                });
            }
            headers
                .set("authorization", &format!("Bearer {token}"))
                .map_err(|e| setup_error(&e))?;
        }
        let abort = Abort::after(timeout)?;
        let init = RequestInit::new();
        init.set_method(method.as_str());
        init.set_headers(&headers);
        init.set_signal(Some(&abort.controller.signal()));
        let sent = match global_fetch(url, &init) {
            Ok(promise) => JsFuture::from(promise).await,
            Err(thrown) => Err(thrown),
        };
        match sent {
            Ok(response) => Ok(Answer {
                response: response.unchecked_into(),
                abort,
            }),
            Err(_) if abort.timed_out() => Err(LikeError::Timeout),
            Err(e) => Err(LikeError::Network {
                message: format!("error sending request for url ({url}): {}", message(&e)),
            }),
        }
    }
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Delete => "DELETE",
        }
    }
}

/// A request's `AbortController` and its timer. The timer aborts the
/// request when the timeout passes; dropping the guard (the answer was
/// read, or the call was given up) aborts it too and clears the timer.
struct Abort {
    controller: AbortController,
    timed_out: Rc<Cell<bool>>,
    _timer: Timeout,
}

impl Abort {
    fn after(timeout: Duration) -> Result<Self, LikeError> {
        let controller = AbortController::new().map_err(|e| setup_error(&e))?;
        let timed_out = Rc::new(Cell::new(false));
        let timer = {
            let (controller, timed_out) = (controller.clone(), Rc::clone(&timed_out));
            Timeout::new(timer_millis(timeout), move || {
                timed_out.set(true);
                controller.abort();
            })
        };
        Ok(Self {
            controller,
            timed_out,
            _timer: timer,
        })
    }

    fn timed_out(&self) -> bool {
        self.timed_out.get()
    }
}

impl Drop for Abort {
    fn drop(&mut self) {
        // A request already answered and read is not affected.
        self.controller.abort();
    }
}

/// An answer whose head has arrived; the request's timer still runs.
pub(super) struct Answer {
    response: Response,
    abort: Abort,
}

impl Answer {
    pub(super) fn status(&self) -> u16 {
        self.response.status()
    }

    /// The `Retry-After` header, as text (a cross-origin page sees it when
    /// the server exposes it, as the LikeKit server does).
    pub(super) fn retry_after(&self) -> Option<String> {
        self.header("retry-after")
    }

    fn header(&self, name: &str) -> Option<String> {
        self.response.headers().get(name).ok().flatten()
    }

    /// The body, at most `limit` bytes of it: an answer whose
    /// `Content-Length` is over `limit` is refused before its body is
    /// read; otherwise the body's stream is read piece by piece, and
    /// reading stops (the request is aborted) as soon as it passes `limit`.
    pub(super) async fn body(self, limit: usize) -> Result<Vec<u8>, LikeError> {
        let announced = self
            .header("content-length")
            .and_then(|length| length.trim().parse::<u64>().ok());
        if announced.is_some_and(|length| length > limit as u64) {
            return Err(too_large(limit));
        }
        // An announced length is at most `limit` here.
        let capacity = announced.map_or(0, |length| usize::try_from(length).unwrap_or(0));
        let mut body = Vec::with_capacity(capacity);
        let Some(stream) = self.response.body() else {
            return Ok(body);
        };
        let reader: ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
        loop {
            let read = JsFuture::from(reader.read())
                .await
                .map_err(|e| self.body_error(&e))?;
            let read: ReadableStreamReadResult = read.unchecked_into();
            if read.get_done().unwrap_or(true) {
                return Ok(body);
            }
            let chunk: Uint8Array = read.get_value().unchecked_into();
            let length = chunk.length() as usize;
            if length > limit - body.len() {
                return Err(too_large(limit));
            }
            let start = body.len();
            body.resize(start + length, 0);
            copy_into(&mut body[start..], &chunk);
        }
    }

    /// The answer's body could not be read to its end.
    fn body_error(&self, error: &JsValue) -> LikeError {
        if self.abort.timed_out() {
            LikeError::Timeout
        } else {
            LikeError::InvalidResponse {
                message: format!("the body was cut short: {}", message(error)),
            }
        }
    }
}

/// `text` parsed by the JavaScript `URL`, for
/// [`checked_base_url`](super::checked_base_url).
pub(super) fn parse_url(text: &str) -> Result<ParsedUrl, String> {
    let url = web_sys::Url::new(text).map_err(|e| message(&e))?;
    let href = url.href();
    Ok(ParsedUrl {
        http: matches!(url.protocol().as_str(), "http:" | "https:"),
        // Written out, a URL has `?` only before its query and `#` only
        // before its fragment (anywhere else they are percent-encoded),
        // and keeps an empty query or fragment: `http://h/?`.
        query_or_fragment: href.contains(['?', '#']),
        href,
    })
}

fn setup_error(error: &JsValue) -> LikeError {
    LikeError::Config {
        message: format!("could not set up HTTP: {}", message(error)),
    }
}

/// A JavaScript error's message and its causes', one after the other:
/// Node's `fetch` says only "fetch failed" and puts the reason
/// ("connect ECONNREFUSED 127.0.0.1:9") in `cause`.
fn message(error: &JsValue) -> String {
    let mut text = String::new();
    let mut current = error.clone();
    // A few causes at most: a cycle of causes must not loop.
    for _ in 0..4 {
        if current.is_undefined() || current.is_null() {
            break;
        }
        let part = if current.is_object() {
            Reflect::get(&current, &JsValue::from_str("message"))
                .ok()
                .and_then(|m| m.as_string())
        } else {
            current.as_string()
        };
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(part.as_deref().unwrap_or("an unknown error"));
        if !current.is_object() {
            break;
        }
        current = Reflect::get(&current, &JsValue::from_str("cause")).unwrap_or(JsValue::UNDEFINED);
    }
    text
}
