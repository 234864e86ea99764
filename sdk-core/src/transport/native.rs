//! The native HTTP backend of [`HttpTransport`](super::HttpTransport):
//! reqwest on hyper and rustls (aws-lc-rs), with each platform's trusted
//! roots (see "TLS" on `HttpTransport`). The body of an answer is read
//! piece by piece, so the answer cap holds however the server sends it.

use std::time::Duration;

use super::{Method, ParsedUrl, too_large};
use crate::LikeError;

/// The HTTP client: reqwest, trusting this platform's roots and any extra
/// ones. Cheap to clone.
#[derive(Clone)]
pub(super) struct Http(reqwest::Client);

impl Http {
    /// A client that trusts this platform's roots.
    pub(super) fn new() -> Result<Self, LikeError> {
        Self::trusting(&[])
    }

    /// A client that trusts this platform's roots and `extra` (checked by
    /// [`parse_root_certificates`]).
    pub(super) fn trusting(
        extra: &[rustls_pki_types::CertificateDer<'static>],
    ) -> Result<Self, LikeError> {
        native_client(RootStore::NATIVE, extra).map(Self)
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
        let method = match method {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
            Method::Delete => reqwest::Method::DELETE,
        };
        let mut request = self
            .0
            .request(method, url)
            .timeout(timeout)
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send().await.map(Answer).map_err(|e| send_error(&e))
    }
}

/// An answer whose head has arrived.
pub(super) struct Answer(reqwest::Response);

impl Answer {
    pub(super) fn status(&self) -> u16 {
        self.0.status().as_u16()
    }

    /// The `Retry-After` header, as text.
    pub(super) fn retry_after(&self) -> Option<String> {
        let value = self.0.headers().get(reqwest::header::RETRY_AFTER)?;
        value.to_str().ok().map(str::to_owned)
    }

    /// The body, at most `limit` bytes of it (see [`read_body`]).
    pub(super) async fn body(self, limit: usize) -> Result<Vec<u8>, LikeError> {
        read_body(self.0, limit).await
    }
}

/// `text` parsed as a URL by the `url` crate (the WHATWG rules browsers
/// follow), for [`checked_base_url`](super::checked_base_url).
pub(super) fn parse_url(text: &str) -> Result<ParsedUrl, String> {
    let url = reqwest::Url::parse(text).map_err(|e| e.to_string())?;
    Ok(ParsedUrl {
        http: matches!(url.scheme(), "http" | "https") && !url.cannot_be_a_base(),
        query_or_fragment: url.query().is_some() || url.fragment().is_some(),
        credentials: !url.username().is_empty() || url.password().is_some(),
        href: url.into(),
    })
}

fn http_setup_error(error: &reqwest::Error) -> LikeError {
    LikeError::Config {
        message: format!("could not set up HTTP: {}", chain(error)),
    }
}

/// Where a native client's trusted roots come from (see "TLS" on
/// [`HttpTransport`](super::HttpTransport)). Each platform has one; tests build both here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RootStore {
    /// The platform's verifier (rustls-platform-verifier), extra roots
    /// merged in.
    #[cfg(any(not(target_os = "android"), test))]
    Platform,
    /// Mozilla's roots bundled in the library, and the extra roots, checked
    /// by webpki; nothing from the device.
    #[cfg(any(target_os = "android", test))]
    Bundled,
}

impl RootStore {
    /// This platform's.
    #[cfg(not(target_os = "android"))]
    const NATIVE: Self = Self::Platform;
    /// This platform's: Android's verifier needs JNI set-up, so the bundled
    /// roots.
    #[cfg(target_os = "android")]
    const NATIVE: Self = Self::Bundled;
}

/// The native HTTP client: rustls trusting `roots` and the `extra` roots
/// (already checked by [`parse_root_certificates`]).
fn native_client(
    roots: RootStore,
    extra: &[rustls_pki_types::CertificateDer<'static>],
) -> Result<reqwest::Client, LikeError> {
    let extra = extra
        .iter()
        .map(|der| reqwest::Certificate::from_der(der))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| http_setup_error(&e))?;
    let builder = reqwest::Client::builder()
        .user_agent(concat!("likekit/", env!("CARGO_PKG_VERSION")))
        // No connect timeout of its own: each request's timeout covers
        // connecting too, so a longer one set for slow networks is not cut
        // short while the connection opens.
        // The protocol has no redirects. Followed, one would carry the
        // token to wherever the same origin points (another path, another
        // app), or turn a like's POST into a GET whose answer reads as
        // confirmed: a 3xx is refused instead (`Rejected`, not retried).
        .redirect(reqwest::redirect::Policy::none());
    let builder = match roots {
        // None extra: the platform verifier alone.
        #[cfg(any(not(target_os = "android"), test))]
        RootStore::Platform => builder.tls_certs_merge(extra),
        #[cfg(any(target_os = "android", test))]
        RootStore::Bundled => builder.tls_certs_only(bundled_roots().chain(extra)),
    };
    builder.build().map_err(|e| http_setup_error(&e))
}

/// Mozilla's root certificates as `webpki-root-certs` ships them.
#[cfg(any(target_os = "android", test))]
fn bundled_roots() -> impl Iterator<Item = reqwest::Certificate> {
    webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .filter_map(|der| reqwest::Certificate::from_der(der).ok())
}

/// The certificates in `pem`, each checked as a trust anchor the way
/// rustls's root store checks it; a typed [`LikeError::Config`] otherwise.
pub(super) fn parse_root_certificates(
    pem: &[u8],
) -> Result<Vec<rustls_pki_types::CertificateDer<'static>>, LikeError> {
    use rustls_pki_types::pem::{Error as PemError, PemObject};

    let bad = |what: String| LikeError::Config {
        message: format!("extra root certificates: {what}"),
    };
    let certs = rustls_pki_types::CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            bad(match e {
                PemError::MissingSectionEnd { .. } => {
                    "unreadable PEM: a certificate has no -----END line".to_owned()
                }
                PemError::IllegalSectionStart { .. } => {
                    "unreadable PEM: a malformed -----BEGIN line".to_owned()
                }
                PemError::Base64Decode(why) => format!("unreadable PEM: bad base64 ({why})"),
                other => format!("unreadable PEM: {other}"),
            })
        })?;
    if certs.is_empty() {
        return Err(bad(
            "no certificate in the PEM (expected -----BEGIN CERTIFICATE----- blocks)".to_owned(),
        ));
    }
    let total = certs.len();
    for (i, cert) in certs.iter().enumerate() {
        webpki::anchor_from_trusted_cert(cert).map_err(|e| {
            bad(format!(
                "certificate {} of {total} is not a usable X.509 certificate ({e})",
                i + 1
            ))
        })?;
    }
    Ok(certs)
}

/// An error and its causes, one after the other: reqwest's own message
/// alone ("error sending request") rarely says what went wrong.
fn chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

/// The request did not get an answer.
fn send_error(error: &reqwest::Error) -> LikeError {
    if error.is_timeout() {
        LikeError::Timeout
    } else if error.is_builder() {
        LikeError::Config {
            message: chain(error),
        }
    } else {
        LikeError::Network {
            message: chain(error),
        }
    }
}

/// The answer's body could not be read to its end.
fn body_error(error: &reqwest::Error) -> LikeError {
    if error.is_timeout() {
        LikeError::Timeout
    } else {
        LikeError::InvalidResponse {
            message: format!("the body was cut short: {}", chain(error)),
        }
    }
}

/// An answer's body, at most `limit` bytes of it: a longer one is
/// [`LikeError::InvalidResponse`], refused from its `Content-Length` before
/// any of it is read, or as soon as the bytes read pass `limit`, so that it
/// never holds more than `limit` bytes and one chunk.
async fn read_body(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, LikeError> {
    let announced = response.content_length();
    if announced.is_some_and(|length| length > limit as u64) {
        return Err(too_large(limit));
    }
    // An announced length is at most `limit` here.
    let capacity = announced.map_or(0, |length| usize::try_from(length).unwrap_or(0));
    let mut body = Vec::with_capacity(capacity);
    while let Some(chunk) = response.chunk().await.map_err(|e| body_error(&e))? {
        if chunk.len() > limit - body.len() {
            return Err(too_large(limit));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use super::super::*;
    use super::*;
    use crate::{Action, PostId};

    fn id(n: u64) -> PostId {
        PostId::new(n).unwrap()
    }

    /// The reason phrases [`plain_message`] falls back on are `http`'s.
    #[test]
    fn reason_phrases_are_the_http_crates() {
        for status in 100..=999 {
            let http = reqwest::StatusCode::from_u16(status)
                .ok()
                .and_then(|s| s.canonical_reason());
            assert_eq!(reason_phrase(status), http, "{status}");
        }
    }

    /// Canned HTTP answers, one per connection, from a raw TCP listener.
    mod wire_level {
        use std::sync::Mutex;

        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        use tokio::net::TcpListener;

        use super::*;

        enum Reply {
            Raw(Vec<u8>),
            /// Write `head`, `piece` `times` over and `tail` for as long as
            /// the client takes them; `outcome` then says how far it got.
            Stream {
                head: Vec<u8>,
                piece: Vec<u8>,
                times: usize,
                tail: Vec<u8>,
                outcome: Arc<Mutex<Option<Streamed>>>,
            },
            /// Read the request, never answer.
            Hang,
            /// Read the request, close the connection.
            Drop,
        }

        /// How far a [`Reply::Stream`] got.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Streamed {
            /// All of it was written.
            Whole,
            /// The client hung up after this many bytes were written.
            CutAfter(usize),
        }

        fn http(status: &str, headers: &[&str], body: &str) -> Reply {
            let mut r = format!("HTTP/1.1 {status}\r\nconnection: close\r\n");
            for h in headers {
                r.push_str(h);
                r.push_str("\r\n");
            }
            r.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
            Reply::Raw(r.into_bytes())
        }

        fn json(status: &str, body: &str) -> Reply {
            http(status, &["content-type: application/json"], body)
        }

        const LIKED: &str = r#"{"count":3,"liked_by_me":true,"version":9}"#;

        /// Serves `replies` in order; returns the base URL and the request
        /// heads seen.
        async fn serve(replies: Vec<Reply>) -> (String, Arc<Mutex<Vec<String>>>) {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            let heads = Arc::new(Mutex::new(Vec::new()));
            let seen = Arc::clone(&heads);
            tokio::spawn(async move {
                for reply in replies {
                    let (mut socket, _) = listener.accept().await.unwrap();
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        let n = socket.read(&mut buf).await.unwrap();
                        if n == 0 {
                            break;
                        }
                        head.extend_from_slice(&buf[..n]);
                    }
                    seen.lock()
                        .unwrap()
                        .push(String::from_utf8_lossy(&head).to_lowercase());
                    match reply {
                        Reply::Raw(bytes) => {
                            let _ = socket.write_all(&bytes).await;
                            let _ = socket.shutdown().await;
                        }
                        Reply::Stream {
                            head,
                            piece,
                            times,
                            tail,
                            outcome,
                        } => {
                            let parts = std::iter::once(&head)
                                .chain(std::iter::repeat_n(&piece, times))
                                .chain(std::iter::once(&tail));
                            let mut streamed = Streamed::Whole;
                            let mut written = 0;
                            for part in parts {
                                if socket.write_all(part).await.is_err() {
                                    streamed = Streamed::CutAfter(written);
                                    break;
                                }
                                written += part.len();
                            }
                            let _ = socket.shutdown().await;
                            *outcome.lock().unwrap() = Some(streamed);
                        }
                        Reply::Hang => {
                            tokio::time::sleep(Duration::from_secs(30)).await;
                        }
                        Reply::Drop => drop(socket),
                    }
                }
            });
            (base, heads)
        }

        /// A provider that hands out `t0`, then `t1`, `t2`… on refresh,
        /// and counts refreshes.
        fn rotating() -> (impl TokenProvider, Arc<Mutex<u32>>) {
            let refreshes = Arc::new(Mutex::new(0u32));
            let counter = Arc::clone(&refreshes);
            let provider = move |refresh: bool| {
                let mut n = counter.lock().unwrap();
                if refresh {
                    *n += 1;
                }
                Some(format!("t{n}"))
            };
            (provider, refreshes)
        }

        async fn like(replies: Vec<Reply>) -> (Result<LikeState, LikeError>, Vec<String>) {
            let (base, heads) = serve(replies).await;
            let transport = HttpTransport::new(&base)
                .unwrap()
                .with_token_provider(StaticToken::new("tok"))
                .with_timeout(Duration::from_millis(300));
            let result = transport.send(id(42), Action::Like).await;
            let heads = heads.lock().unwrap().clone();
            (result, heads)
        }

        #[tokio::test]
        async fn a_like_is_a_post_with_the_bearer_token() {
            let (result, heads) = like(vec![json("200 OK", LIKED)]).await;
            assert_eq!(result.unwrap().count, 3);
            assert!(heads[0].starts_with("post /posts/42/like http/1.1"));
            assert!(heads[0].contains("authorization: bearer tok"));
            assert!(heads[0].contains("accept: application/json"));
        }

        /// Redirects are not followed: not with the token to another path
        /// of the same origin, not as a GET in place of the like's POST.
        #[tokio::test]
        async fn a_redirect_is_not_followed() {
            for status in [
                "307 Temporary Redirect",
                "302 Found",
                "308 Permanent Redirect",
            ] {
                let moved = http(status, &["location: /other-app/like"], "");
                let (result, heads) = like(vec![moved, json("200 OK", LIKED)]).await;
                let Err(LikeError::Rejected { message, .. }) = &result else {
                    panic!("{status}: {result:?}")
                };
                assert!(message.contains(status), "{message}");
                assert!(message.contains("base URL"), "{message}");
                assert_eq!(heads.len(), 1, "{status}: {heads:?}");
            }
        }

        #[tokio::test]
        async fn unlike_reads_and_pages_use_their_routes() {
            let (base, heads) = serve(vec![
                json("200 OK", r#"{"count":2,"liked_by_me":false,"version":10}"#),
                json(
                    "200 OK",
                    r#"{"count":2,"liked_by_me":false,"friends":["Ana"],"version":10}"#,
                ),
                json(
                    "200 OK",
                    r#"{"posts":{"1":{"count":1,"liked_by_me":true,"friends":[],"version":1}}}"#,
                ),
            ])
            .await;
            let t = HttpTransport::new(&format!("{base}/")).unwrap();
            assert!(!t.send(id(7), Action::Unlike).await.unwrap().liked_by_me);
            assert_eq!(t.read(id(7)).await.unwrap().friends, ["Ana"]);
            assert_eq!(
                t.read_many(&[id(1), id(2), id(3)])
                    .await
                    .unwrap()
                    .posts
                    .len(),
                1
            );
            let heads = heads.lock().unwrap().clone();
            assert!(
                heads[0].starts_with("delete /posts/7/like "),
                "{}",
                heads[0]
            );
            assert!(heads[1].starts_with("get /posts/7/likes "), "{}", heads[1]);
            assert!(
                heads[2].starts_with("get /likes?posts=1,2,3 "),
                "{}",
                heads[2]
            );
            // no token provider: no authorization header
            assert!(!heads[0].contains("authorization"));
        }

        #[tokio::test]
        async fn a_401_asks_for_a_fresh_token_once_and_retries() {
            let refused = json(
                "401 Unauthorized",
                r#"{"error":{"code":"unauthorized","message":"token expired"}}"#,
            );
            let (base, heads) = serve(vec![refused, json("200 OK", LIKED)]).await;
            let (provider, refreshes) = rotating();
            let t = HttpTransport::new(&base)
                .unwrap()
                .with_token_provider(provider);
            assert!(t.send(id(42), Action::Like).await.unwrap().liked_by_me);
            assert_eq!(*refreshes.lock().unwrap(), 1);
            let heads = heads.lock().unwrap().clone();
            assert!(heads[0].contains("authorization: bearer t0"));
            assert!(heads[1].contains("authorization: bearer t1"));
        }

        /// Renews over "the network" (a timer) when asked to refresh.
        struct Renewing(Arc<Mutex<u32>>);

        impl AsyncTokenProvider for Renewing {
            fn token(&self, refresh: bool) -> BoxFuture<'_, Option<String>> {
                Box::pin(async move {
                    if refresh {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        *self.0.lock().unwrap() += 1;
                    }
                    Some(format!("a{}", self.0.lock().unwrap()))
                })
            }
        }

        #[tokio::test]
        async fn an_async_provider_is_awaited_and_renews_after_a_401() {
            let refused = json(
                "401 Unauthorized",
                r#"{"error":{"code":"unauthorized","message":"token expired"}}"#,
            );
            let (base, heads) = serve(vec![refused, json("200 OK", LIKED)]).await;
            let renewals = Arc::new(Mutex::new(0u32));
            let t = HttpTransport::new(&base)
                .unwrap()
                .with_async_token_provider(Arc::new(Renewing(Arc::clone(&renewals))));
            assert!(t.send(id(42), Action::Like).await.unwrap().liked_by_me);
            assert_eq!(*renewals.lock().unwrap(), 1);
            let heads = heads.lock().unwrap().clone();
            assert!(heads[0].contains("authorization: bearer a0"));
            assert!(heads[1].contains("authorization: bearer a1"));
        }

        #[tokio::test]
        async fn a_second_401_is_unauthorized() {
            let refused = || {
                json(
                    "401 Unauthorized",
                    r#"{"error":{"code":"unauthorized","message":"bad signature"}}"#,
                )
            };
            let (base, heads) = serve(vec![refused(), refused(), json("200 OK", LIKED)]).await;
            let (provider, refreshes) = rotating();
            let t = HttpTransport::new(&base)
                .unwrap()
                .with_token_provider(provider);
            assert_eq!(
                t.send(id(42), Action::Like).await,
                Err(LikeError::Unauthorized {
                    message: "bad signature".into()
                })
            );
            assert_eq!(*refreshes.lock().unwrap(), 1);
            assert_eq!(heads.lock().unwrap().len(), 2);
        }

        #[tokio::test]
        async fn a_401_without_a_fresh_token_is_unauthorized_at_once() {
            let (result, heads) = like(vec![
                http("401 Unauthorized", &["www-authenticate: Bearer"], ""),
                json("200 OK", LIKED),
            ])
            .await;
            assert!(matches!(result, Err(LikeError::Unauthorized { .. })));
            assert_eq!(heads.len(), 1);
        }

        #[tokio::test]
        async fn error_answers_are_typed() {
            let (result, _) =
                like(vec![http("429 Too Many Requests", &["retry-after: 2"], "")]).await;
            assert_eq!(
                result,
                Err(LikeError::RateLimited {
                    retry_after_ms: Some(2000)
                })
            );
            let (result, _) = like(vec![http(
                "503 Service Unavailable",
                &["content-type: text/html"],
                "<h1>down</h1>",
            )])
            .await;
            assert!(matches!(result, Err(LikeError::Server { status: 503, .. })));
            let (result, _) = like(vec![json(
                "404 Not Found",
                r#"{"error":{"code":"post_not_found","message":"no post 42"}}"#,
            )])
            .await;
            assert_eq!(
                result,
                Err(LikeError::NotFound {
                    message: "no post 42".into()
                })
            );
            let (result, _) = like(vec![json("403 Forbidden", "{}")]).await;
            assert!(matches!(result, Err(LikeError::Forbidden { .. })));
        }

        #[tokio::test]
        async fn bad_bodies_are_invalid_responses_not_panics() {
            for reply in [
                json("200 OK", "{\"count\":"),
                json("200 OK", "not json at all"),
                // the body is cut short: fewer bytes than content-length
                Reply::Raw(
                    b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\nconnection: close\r\n\r\n{\"count\":1"
                        .to_vec(),
                ),
            ] {
                let (result, _) = like(vec![reply]).await;
                assert!(
                    matches!(result, Err(LikeError::InvalidResponse { .. })),
                    "{result:?}"
                );
            }
        }

        #[tokio::test]
        async fn no_answer_in_time_is_a_timeout() {
            let (result, _) = like(vec![Reply::Hang]).await;
            assert_eq!(result, Err(LikeError::Timeout));
        }

        /// A connection that takes longer to open than the default timeout
        /// is waited for as long as the request's own, longer timeout: a
        /// listener whose queue of unaccepted connections is full leaves
        /// the next connect unanswered (on the paused clock, at once).
        #[tokio::test(start_paused = true)]
        async fn connecting_is_covered_by_the_requests_own_timeout() {
            let socket = tokio::net::TcpSocket::new_v4().unwrap();
            socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
            let listener = socket.listen(0).unwrap();
            let address = listener.local_addr().unwrap();
            let _queued = std::net::TcpStream::connect(address).unwrap();
            let timeout = crate::DEFAULT_REQUEST_TIMEOUT * 3;
            let t = HttpTransport::new(&format!("http://{address}"))
                .unwrap()
                .with_timeout(timeout);
            let started = tokio::time::Instant::now();
            assert_eq!(t.read(id(1)).await, Err(LikeError::Timeout));
            assert!(started.elapsed() >= timeout, "{:?}", started.elapsed());
        }

        #[tokio::test]
        async fn a_dropped_connection_is_a_network_error() {
            let (result, _) = like(vec![Reply::Drop]).await;
            assert!(
                matches!(result, Err(LikeError::Network { .. })),
                "{result:?}"
            );
        }

        #[tokio::test]
        async fn a_refused_connection_is_a_network_error() {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            drop(listener);
            let t = HttpTransport::new(&base).unwrap();
            let result = t.read(id(1)).await;
            let Err(LikeError::Network { message }) = result else {
                panic!("{result:?}")
            };
            assert!(message.to_lowercase().contains("connect"), "{message}");
        }

        /// The answer's body in `piece`-byte chunks, without `content-length`.
        fn chunked(status: &str, body: &str, piece: usize) -> Reply {
            let mut r = format!(
                "HTTP/1.1 {status}\r\nconnection: close\r\ncontent-type: application/json\r\n\
                 transfer-encoding: chunked\r\n\r\n"
            )
            .into_bytes();
            for chunk in body.as_bytes().chunks(piece) {
                r.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                r.extend_from_slice(chunk);
                r.extend_from_slice(b"\r\n");
            }
            r.extend_from_slice(b"0\r\n\r\n");
            Reply::Raw(r)
        }

        /// Spaces before the answer in [`padded`]: far over the caps
        /// here, and far over what the sockets between the two sides can
        /// hold (a few MiB; at most 36 MiB with this machine's settings).
        const PADDING: usize = 128 << 20;
        const PIECE: usize = 16 << 10;

        /// [`LIKED`] after [`PADDING`] bytes of spaces (which JSON allows),
        /// in chunks without `content-length`: an answer that decodes if
        /// read to the end. Also returns how far the server got.
        fn padded(status: &str) -> (Reply, Arc<Mutex<Option<Streamed>>>) {
            let mut piece = format!("{PIECE:x}\r\n").into_bytes();
            piece.resize(piece.len() + PIECE, b' ');
            piece.extend_from_slice(b"\r\n");
            let tail = format!("{:x}\r\n{LIKED}\r\n0\r\n\r\n", LIKED.len()).into_bytes();
            let head = format!(
                "HTTP/1.1 {status}\r\nconnection: close\r\ncontent-type: application/json\r\n\
                 transfer-encoding: chunked\r\n\r\n"
            )
            .into_bytes();
            let outcome = Arc::new(Mutex::new(None));
            let reply = Reply::Stream {
                head,
                piece,
                times: PADDING / PIECE,
                tail,
                outcome: Arc::clone(&outcome),
            };
            (reply, outcome)
        }

        /// Asserts that the client hung up on a [`padded`] answer early:
        /// the server got out no more than the sockets' buffers hold.
        async fn assert_hung_up_early(outcome: &Mutex<Option<Streamed>>) {
            for _ in 0..1000 {
                let streamed = *outcome.lock().unwrap();
                match streamed {
                    Some(Streamed::CutAfter(written)) => {
                        assert!(written < PADDING / 2, "{written} bytes written");
                        return;
                    }
                    Some(Streamed::Whole) => panic!("the client read the whole answer"),
                    None => tokio::time::sleep(Duration::from_millis(10)).await,
                }
            }
            panic!("the server was still writing after 10 s");
        }

        fn too_large(limit: usize) -> Result<LikeState, LikeError> {
            Err(LikeError::InvalidResponse {
                message: format!("answer larger than {limit} bytes"),
            })
        }

        #[tokio::test]
        async fn an_answer_announced_over_the_cap_is_refused_before_its_body() {
            // One byte of the gigabyte announced, then the server closes: a
            // client that began reading would find the body cut short.
            let head = "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: application/json\r\n\
                        content-length: 1073741824\r\n\r\n{";
            let (result, _) = like(vec![Reply::Raw(head.as_bytes().to_vec())]).await;
            assert_eq!(result, too_large(DEFAULT_MAX_ANSWER_BYTES));
            assert_eq!(
                result.unwrap_err().to_string(),
                "unreadable answer from the server: answer larger than 16777216 bytes"
            );
        }

        #[tokio::test]
        async fn a_chunked_answer_is_cut_off_once_past_the_cap() {
            let (reply, outcome) = padded("200 OK");
            let (base, _) = serve(vec![reply]).await;
            let t = HttpTransport::new(&base)
                .unwrap()
                .with_timeout(Duration::from_secs(10))
                .with_max_answer_bytes(64 << 10);
            let result = t.send(id(42), Action::Like).await;
            assert_eq!(result, too_large(64 << 10));
            let e = result.unwrap_err();
            assert!(e.is_transient() && e.may_have_applied());
            assert_hung_up_early(&outcome).await;
        }

        #[tokio::test]
        async fn answers_up_to_the_cap_are_read_and_one_byte_more_is_not() {
            let body = format!("  {LIKED}  ");
            // whole with content-length, or in 7-byte chunks without
            for chunks in [None, Some(7)] {
                let reply = || match chunks {
                    None => json("200 OK", &body),
                    Some(piece) => chunked("200 OK", &body, piece),
                };
                let (base, _) = serve(vec![reply(), reply()]).await;
                let at_cap = HttpTransport::new(&base)
                    .unwrap()
                    .with_max_answer_bytes(body.len());
                let state = at_cap.send(id(42), Action::Like).await;
                assert_eq!(state.map(|s| s.count), Ok(3), "{chunks:?}");
                let under = at_cap.with_max_answer_bytes(body.len() - 1);
                let result = under.send(id(42), Action::Like).await;
                assert_eq!(result, too_large(body.len() - 1), "{chunks:?}");
            }
        }

        #[tokio::test]
        async fn a_refused_401_body_is_not_read_past_the_cap() {
            let (refused, outcome) = padded("401 Unauthorized");
            let (base, heads) = serve(vec![refused, json("200 OK", LIKED)]).await;
            let (provider, refreshes) = rotating();
            let t = HttpTransport::new(&base)
                .unwrap()
                .with_token_provider(provider)
                .with_timeout(Duration::from_secs(10))
                .with_max_answer_bytes(64 << 10);
            assert!(t.send(id(42), Action::Like).await.unwrap().liked_by_me);
            assert_eq!(*refreshes.lock().unwrap(), 1);
            assert_hung_up_early(&outcome).await;
            let heads = heads.lock().unwrap().clone();
            assert!(heads[1].contains("authorization: bearer t1"));
        }

        #[tokio::test]
        async fn a_tap_whose_answer_is_too_large_is_retried_and_confirmed() {
            let oversized = json("200 OK", &format!("{}{LIKED}", " ".repeat(2000)));
            let (base, heads) = serve(vec![oversized, json("200 OK", LIKED)]).await;
            let client = crate::LikeClient::builder()
                .base_url(base)
                .max_answer_bytes(1024)
                .retry_policy(crate::RetryPolicy {
                    min_delay: Duration::from_millis(1),
                    max_delay: Duration::from_millis(5),
                    max_retries: 2,
                    seed: Some(1),
                    ..crate::RetryPolicy::default()
                })
                .build()
                .unwrap();
            assert!(client.set_liked(id(42), true).pending);
            assert!(client.wait_idle(Duration::from_secs(5)).await);
            let view = client.view(id(42)).unwrap();
            assert!(view.liked && !view.pending, "{view:?}");
            assert_eq!((view.count, view.error), (3, None));
            let stats = client.stats();
            assert_eq!((stats.retries, stats.rollbacks), (1, 0));
            let heads = heads.lock().unwrap().clone();
            assert_eq!(heads.len(), 2);
            assert!(heads.iter().all(|h| h.starts_with("post /posts/42/like ")));
        }
    }

    /// Extra roots given as PEM, and HTTPS through a TLS front with a
    /// throwaway CA, with each platform's root store (the Android one too).
    mod tls {
        use likekit_testing::tls::{TestCa, TlsFront};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        use tokio::net::TcpListener;

        use super::*;

        const LIKED: &str = r#"{"count":3,"liked_by_me":true,"version":9}"#;

        fn parse(pem: &str) -> Result<usize, String> {
            parse_root_certificates(pem.as_bytes())
                .map(|certs| certs.len())
                .map_err(|e| match e {
                    LikeError::Config { message } => message,
                    other => panic!("not a config error: {other:?}"),
                })
        }

        #[test]
        fn pem_that_holds_no_usable_certificate_is_a_config_error() {
            let ca = TestCa::new().unwrap();
            let key = "-----BEGIN PRIVATE KEY-----\naGVsbG8=\n-----END PRIVATE KEY-----\n";
            let garbage = "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n";
            let none = "extra root certificates: no certificate in the PEM (expected -----BEGIN CERTIFICATE----- blocks)";
            for (pem, expected) in [
                ("", none.to_owned()),
                ("a certificate, I promise", none.to_owned()),
                (key, none.to_owned()),
                (
                    "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n",
                    "extra root certificates: unreadable PEM: bad base64".to_owned(),
                ),
                (
                    "-----BEGIN CERTIFICATE-----\naGVsbG8=\n",
                    "extra root certificates: unreadable PEM: a certificate has no -----END line"
                        .to_owned(),
                ),
                (
                    garbage,
                    "extra root certificates: certificate 1 of 1 is not a usable X.509 certificate"
                        .to_owned(),
                ),
                (
                    &format!("{}{garbage}", ca.pem()),
                    "extra root certificates: certificate 2 of 2 is not a usable X.509 certificate"
                        .to_owned(),
                ),
            ] {
                let message = parse(pem).unwrap_err();
                assert!(message.starts_with(&expected), "{pem:?}: {message}");
            }
        }

        #[test]
        fn pem_bundles_with_text_and_other_blocks_around_them_are_read() {
            let (a, b) = (TestCa::new().unwrap(), TestCa::new().unwrap());
            assert_eq!(parse(a.pem()), Ok(1));
            let key = "-----BEGIN PRIVATE KEY-----\naGVsbG8=\n-----END PRIVATE KEY-----\n";
            let bundle = format!("# staging CA\n{}\n{key}# old CA\n{}", a.pem(), b.pem());
            assert_eq!(parse(&bundle), Ok(2));
            // Windows line ends
            assert_eq!(parse(&a.pem().replace('\n', "\r\n")), Ok(1));
        }

        #[test]
        fn every_bundled_root_is_a_usable_trust_anchor() {
            let all = webpki_root_certs::TLS_SERVER_ROOT_CERTS;
            assert!(all.len() > 100, "{} roots", all.len());
            for der in all {
                webpki::anchor_from_trusted_cert(der).unwrap();
            }
            assert_eq!(bundled_roots().count(), all.len());
            native_client(RootStore::Bundled, &[]).unwrap();
        }

        /// A plain server that answers every request with [`LIKED`], and
        /// an HTTPS front with its own CA before it.
        async fn liked_over_https() -> TlsFront {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let upstream = listener.local_addr().unwrap();
            tokio::spawn(async move {
                while let Ok((mut socket, _)) = listener.accept().await {
                    tokio::spawn(async move {
                        let mut head = Vec::new();
                        let mut buf = [0u8; 1024];
                        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                            match socket.read(&mut buf).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => head.extend_from_slice(&buf[..n]),
                            }
                        }
                        let answer = format!(
                            "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: application/json\r\n\
                             content-length: {}\r\n\r\n{LIKED}",
                            LIKED.len()
                        );
                        let _ = socket.write_all(answer.as_bytes()).await;
                        let _ = socket.shutdown().await;
                    });
                }
            });
            TlsFront::start(upstream).await.unwrap()
        }

        fn over(front: &TlsFront, roots: RootStore, trust_the_ca: bool) -> HttpTransport {
            let extra = if trust_the_ca {
                parse_root_certificates(front.ca_pem().as_bytes()).unwrap()
            } else {
                Vec::new()
            };
            HttpTransport::with_client(Http(native_client(roots, &extra).unwrap()), front.url())
        }

        async fn refused_handshakes(front: &TlsFront, expected: u64) {
            for _ in 0..500 {
                if front.refused_handshakes() == expected {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            panic!("{front:?}: expected {expected} refused handshakes");
        }

        #[tokio::test]
        async fn each_root_store_trusts_the_extra_root_and_refuses_a_stranger() {
            let front = liked_over_https().await;
            let mut refused = 0;
            for roots in [RootStore::Platform, RootStore::Bundled] {
                let trusting = over(&front, roots, true);
                let state = trusting.send(id(42), Action::Like).await;
                assert_eq!(state.map(|s| s.count), Ok(3), "{roots:?}");

                let wary = over(&front, roots, false);
                let result = wary.read(id(42)).await;
                let Err(LikeError::Network { message }) = &result else {
                    panic!("{roots:?}: {result:?}")
                };
                assert!(message.contains("certificate"), "{roots:?}: {message}");
                assert!(result.unwrap_err().is_transient());
                refused += 1;
                refused_handshakes(&front, refused).await;
            }
            assert_eq!(front.handshakes(), 2);
        }

        #[tokio::test]
        async fn the_public_constructor_reads_the_pem_once_and_trusts_it() {
            let front = liked_over_https().await;
            let t = HttpTransport::new_with_extra_roots(&front.url(), front.ca_pem()).unwrap();
            assert!(t.send(id(1), Action::Like).await.unwrap().liked_by_me);
            let stranger = TestCa::new().unwrap();
            let t = HttpTransport::new_with_extra_roots(&front.url(), stranger.pem()).unwrap();
            let result = t.send(id(1), Action::Like).await;
            assert!(
                matches!(result, Err(LikeError::Network { .. })),
                "{result:?}"
            );
            refused_handshakes(&front, 1).await;
        }
    }
}
