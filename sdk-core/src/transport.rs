//! How calls reach the server: the [`Transport`] trait and its HTTP
//! implementation, [`HttpTransport`].
//!
//! A transport performs one call and says how it went, as a typed
//! [`LikeError`] when it failed. It never retries on its own but for one
//! case: a `401` makes it ask the [`TokenProvider`] for a fresh token and send
//! the request once more. Everything else — retries, backoff, rollback — is
//! the machine's business.
//!
//! | outcome | error |
//! |---|---|
//! | no connection, connection broken | [`LikeError::Network`] |
//! | TLS refused: the server's certificate is not trusted, expired, or for another name | [`LikeError::Network`] |
//! | no answer within the request timeout | [`LikeError::Timeout`] |
//! | no token from an [`AsyncTokenProvider`] within the request timeout (nothing sent) | [`LikeError::Timeout`] |
//! | 5xx, 408 Request Timeout, 425 Too Early | [`LikeError::Server`] (transient; the request may have been processed) |
//! | 429 (with `Retry-After: <seconds>`) | [`LikeError::RateLimited`] |
//! | 401 again after a fresh token, or no fresh token | [`LikeError::Unauthorized`] |
//! | 403 | [`LikeError::Forbidden`] |
//! | 404 with the server's `post_not_found` | [`LikeError::NotFound`] |
//! | other 4xx, and any other 404 (a route the server does not have: a wrong base URL, a proxy's page) | [`LikeError::Rejected`] |
//! | 3xx: a redirect, which is not followed (natively; the web's `fetch` follows its host's rules) | [`LikeError::Rejected`] (`http_301`…) |
//! | a body that is not the JSON expected, or cut short | [`LikeError::InvalidResponse`] |
//! | a body longer than the cap ([`HttpTransport::with_max_answer_bytes`]) | [`LikeError::InvalidResponse`] |
//!
//! A like or unlike whose transport panics — or the [`TokenProvider`] or
//! [`AsyncTokenProvider`] it asks — fails natively (where the client
//! catches the panic; a web build aborts on a panic) with
//! [`LikeError::Network`], its message saying it panicked: the client
//! cannot tell whether the request left, so the call is retried and
//! counts as one that may have applied, like a broken connection.
//!
//! Which certificates `https` trusts on each platform, and why a refused
//! certificate is a [`LikeError::Network`]: [`HttpTransport`], "TLS".
//!
//! `HttpTransport` has two backends behind one set of rules. Natively it
//! is reqwest (`transport/native.rs`). On `wasm32` it is the JavaScript
//! host's own `fetch`, with an `AbortController` and a timer for the
//! timeout and the JavaScript `URL` for the base URL (`transport/web.rs`):
//! a browser or Node already does HTTP, TLS and URLs, so the web package
//! carries none of that code. Everything a backend does not have to do
//! lives here, once: the routes, the token and its one refresh after a
//! `401`, the answer cap, Retry-After, reading the JSON answers
//! (`transport/json.rs`) and the classification of answers (`decode`,
//! `error_for`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub(crate) mod json;
#[cfg(not(target_arch = "wasm32"))]
mod native;
#[cfg(not(target_arch = "wasm32"))]
use native as backend;
#[cfg(target_arch = "wasm32")]
mod web;
#[cfg(target_arch = "wasm32")]
use web as backend;

use crate::runtime::{BoxFuture, SendOutsideWasm, SyncOutsideWasm};
use crate::wire::{BatchLikes, ErrorBody, LikeState, MAX_BATCH_POSTS, PostLikes, quoted};
use crate::{Action, LikeError, PostId};

/// Performs the calls the client needs. [`HttpTransport`] is the real one;
/// tests and apps with their own networking plug in others.
///
/// Methods return boxed futures so that the client can hold any transport
/// as `Arc<dyn Transport>`.
///
/// A [`send`](Self::send) that panics (in the method or in its future)
/// fails the call with [`LikeError::Network`], natively (see the module
/// docs); it does not leave the post pending.
///
/// ```
/// # let post = likekit_core::PostId::new(42).unwrap();
/// use likekit_core::runtime::BoxFuture;
/// use likekit_core::wire::{BatchLikes, LikeState, PostLikes};
/// use likekit_core::{Action, LikeError, PostId, Transport};
///
/// /// A server that says yes to everything, at once.
/// struct Agreeable;
///
/// impl Transport for Agreeable {
///     fn send(&self, _post: PostId, action: Action) -> BoxFuture<'_, Result<LikeState, LikeError>> {
///         let liked = action == Action::Like;
///         Box::pin(async move { Ok(LikeState { count: u64::from(liked), liked_by_me: liked, version: 1 }) })
///     }
///     fn read(&self, _post: PostId) -> BoxFuture<'_, Result<PostLikes, LikeError>> {
///         Box::pin(async { Ok(PostLikes { count: 0, liked_by_me: false, friends: vec![], version: 0 }) })
///     }
///     fn read_many<'a>(&'a self, _posts: &'a [PostId]) -> BoxFuture<'a, Result<BatchLikes, LikeError>> {
///         Box::pin(async { Ok(BatchLikes::default()) })
///     }
/// }
///
/// let client = likekit_core::LikeClient::builder().transport(Agreeable).build().unwrap();
/// assert!(client.set_liked(post, true).liked);
/// ```
pub trait Transport: SendOutsideWasm + SyncOutsideWasm + 'static {
    /// Likes (`POST /posts/{post}/like`) or unlikes
    /// (`DELETE /posts/{post}/like`) the post.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// use likekit_core::{Action, MemoryTransport, Transport};
    /// let server = MemoryTransport::new().with_post(post, 0);
    /// assert!(server.send(post, Action::Like).await.unwrap().liked_by_me);
    /// # }
    /// ```
    fn send(&self, post: PostId, action: Action) -> BoxFuture<'_, Result<LikeState, LikeError>>;

    /// Reads one post (`GET /posts/{post}/likes`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// use likekit_core::{MemoryTransport, Transport};
    /// let server = MemoryTransport::new().with_post(post, 3);
    /// assert_eq!(server.read(post).await.unwrap().count, 3);
    /// # }
    /// ```
    fn read(&self, post: PostId) -> BoxFuture<'_, Result<PostLikes, LikeError>>;

    /// Reads a feed page (`GET /likes?posts=1,2,3`). The client never asks
    /// for more than [`MAX_BATCH_POSTS`] posts at once. Posts that do not
    /// exist are left out.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let post_1 = likekit_core::PostId::new(1).unwrap();
    /// # let post_2 = likekit_core::PostId::new(2).unwrap();
    /// # let post_3 = likekit_core::PostId::new(3).unwrap();
    /// use likekit_core::{MemoryTransport, Transport};
    /// let server = MemoryTransport::new().with_post(post_1, 0).with_post(post_2, 5);
    /// let page = server.read_many(&[post_1, post_2, post_3]).await.unwrap();
    /// assert_eq!(page.posts.len(), 2);
    /// assert_eq!(page.posts[&post_2].count, 5);
    /// # }
    /// ```
    fn read_many<'a>(&'a self, posts: &'a [PostId])
    -> BoxFuture<'a, Result<BatchLikes, LikeError>>;
}

impl<T: Transport + ?Sized> Transport for Arc<T> {
    fn send(&self, post: PostId, action: Action) -> BoxFuture<'_, Result<LikeState, LikeError>> {
        (**self).send(post, action)
    }

    fn read(&self, post: PostId) -> BoxFuture<'_, Result<PostLikes, LikeError>> {
        (**self).read(post)
    }

    fn read_many<'a>(
        &'a self,
        posts: &'a [PostId],
    ) -> BoxFuture<'a, Result<BatchLikes, LikeError>> {
        (**self).read_many(posts)
    }
}

/// Supplies the sign-in token sent as `Authorization: Bearer <token>`.
///
/// The transport asks before every request with `refresh == false`; after a
/// `401` it asks once more with `refresh == true` and, given a token, sends
/// the request again. A second `401`, or `None` on refresh, fails the call
/// with [`LikeError::Unauthorized`].
///
/// It is called on the client's task, so it must return quickly: hand back
/// a cached token, and refresh it elsewhere (returning the newest one when
/// `refresh` is set). Closures `Fn(bool) -> Option<String>` are token
/// providers too. One that panics while a like or unlike is sent fails
/// that call with [`LikeError::Network`] (natively), which is retried.
///
/// ```
/// use likekit_core::TokenProvider;
/// use std::sync::Mutex;
///
/// let current = Mutex::new("old".to_string());
/// let provider = move |refresh: bool| {
///     let mut token = current.lock().unwrap();
///     if refresh {
///         *token = "new".to_string(); // in an app: the one the sign-in code renewed
///     }
///     Some(token.clone())
/// };
/// assert_eq!(provider.token(false).as_deref(), Some("old"));
/// assert_eq!(provider.token(true).as_deref(), Some("new"));
/// ```
pub trait TokenProvider: SendOutsideWasm + SyncOutsideWasm {
    /// The token to send, or `None` to send none. `refresh` is `true` when
    /// the server refused the last one.
    ///
    /// ```
    /// use likekit_core::TokenProvider;
    /// let anonymous = |_refresh: bool| None::<String>;
    /// assert_eq!(anonymous.token(false), None);
    /// ```
    fn token(&self, refresh: bool) -> Option<String>;
}

impl<F> TokenProvider for F
where
    F: Fn(bool) -> Option<String> + SendOutsideWasm + SyncOutsideWasm,
{
    fn token(&self, refresh: bool) -> Option<String> {
        self(refresh)
    }
}

/// A token that never changes: fine for demos, tests and short sessions.
/// On a `401` it has nothing fresher to give, so the call fails with
/// [`LikeError::Unauthorized`].
///
/// ```
/// use likekit_core::{StaticToken, TokenProvider};
/// let token = StaticToken::new("eyJhbGciOi…");
/// assert_eq!(token.token(false).as_deref(), Some("eyJhbGciOi…"));
/// assert_eq!(token.token(true), None);
/// ```
#[derive(Clone)]
pub struct StaticToken(String);

impl StaticToken {
    /// Wraps the token.
    ///
    /// ```
    /// let token = likekit_core::StaticToken::new(String::from("eyJ…"));
    /// # drop(token);
    /// ```
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }
}

impl fmt::Debug for StaticToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StaticToken(…)")
    }
}

impl TokenProvider for StaticToken {
    fn token(&self, refresh: bool) -> Option<String> {
        (!refresh).then(|| self.0.clone())
    }
}

/// A provider with no token at all (requests go without `Authorization`).
struct NoToken;

impl TokenProvider for NoToken {
    fn token(&self, _refresh: bool) -> Option<String> {
        None
    }
}

/// A [`TokenProvider`] that answers asynchronously: one that renews the
/// token over the network when `refresh` is set (a sign-in SDK's
/// `getIdToken()`, a suspend or async call in Kotlin, Swift or Python).
/// Same contract: the token to send or `None`, asked before each request
/// with `refresh` false and once more with `refresh` true after a 401. The
/// request waits for the answer, at most the request timeout (then the
/// call fails with [`LikeError::Timeout`], nothing sent, and is retried as
/// any timeout); the tap it carries has already returned. One that panics
/// while a like or unlike is sent fails that call with
/// [`LikeError::Network`] (natively), which is retried.
///
/// ```
/// use likekit_core::{AsyncTokenProvider, BoxFuture};
///
/// struct Renewing;
/// impl AsyncTokenProvider for Renewing {
///     fn token(&self, refresh: bool) -> BoxFuture<'_, Option<String>> {
///         Box::pin(async move {
///             // In an app: await the sign-in SDK, renewing when `refresh`.
///             Some(if refresh { "new" } else { "cached" }.to_string())
///         })
///     }
/// }
/// let client = likekit_core::LikeClient::builder()
///     .base_url("http://127.0.0.1:8080")
///     .async_token_provider(Renewing)
///     .build();
/// # drop(client);
/// ```
pub trait AsyncTokenProvider: SendOutsideWasm + SyncOutsideWasm {
    /// The token to send, or `None` to send none; `refresh` is `true` when
    /// the server refused the last one.
    fn token(&self, refresh: bool) -> BoxFuture<'_, Option<String>>;
}

/// How a transport gets its tokens: asked at once, or awaited.
#[derive(Clone)]
enum Tokens {
    Now(Arc<dyn TokenProvider>),
    Awaited(Arc<dyn AsyncTokenProvider>),
}

impl Tokens {
    /// The token to send; an awaited provider gets at most `timeout`.
    async fn token(&self, refresh: bool, timeout: Duration) -> Result<Option<String>, LikeError> {
        match self {
            Self::Now(tokens) => Ok(tokens.token(refresh)),
            Self::Awaited(tokens) => {
                let asked = tokens.token(refresh);
                let late = crate::runtime::sleep(timeout);
                match futures_util::future::select(asked, std::pin::pin!(late)).await {
                    futures_util::future::Either::Left((token, _)) => Ok(token),
                    futures_util::future::Either::Right(_) => Err(LikeError::Timeout),
                }
            }
        }
    }
}

/// The default per-request timeout of [`HttpTransport`]: 10 seconds.
///
/// ```
/// let t = likekit_core::HttpTransport::new("http://127.0.0.1:8080").unwrap();
/// assert_eq!(t.timeout(), likekit_core::DEFAULT_REQUEST_TIMEOUT);
/// ```
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The default cap on an answer's body that [`HttpTransport`] reads:
/// 16 MiB (16,777,216 bytes).
///
/// No answer the LikeKit server gives legitimately comes near it. The
/// largest is a feed page: at most [`MAX_BATCH_POSTS`] (100) posts, each
/// naming at most [`RECENT_LIKERS`](crate::wire::RECENT_LIKERS) (100)
/// friends, each name at most 200 characters (the server's own limit),
/// which JSON writes in at most 6 bytes each (`\u0001`). With the ids,
/// counts and versions around them that is 12.04 million bytes (11.5 MiB)
/// at the very worst; with 15-character names it is about 0.2 MB. Other
/// answers (a like, one post, an error) are far smaller. A hostile or
/// broken server, on the other hand, can no longer make the client
/// allocate without bound.
///
/// ```
/// let t = likekit_core::HttpTransport::new("http://127.0.0.1:8080").unwrap();
/// assert_eq!(t.max_answer_bytes(), likekit_core::DEFAULT_MAX_ANSWER_BYTES);
/// assert_eq!(likekit_core::DEFAULT_MAX_ANSWER_BYTES, 16 << 20);
/// ```
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 16 << 20;

/// The LikeKit wire protocol over HTTP: reqwest with rustls natively, the
/// JavaScript host's own `fetch` on wasm (a browser, a worker, Node 18 or
/// newer).
///
/// ```
/// use std::time::Duration;
/// use likekit_core::{HttpTransport, StaticToken};
///
/// let transport = HttpTransport::new("https://likes.example.com/api")
///     .unwrap()
///     .with_token_provider(StaticToken::new("token"))
///     .with_timeout(Duration::from_secs(5))
///     .with_max_answer_bytes(1 << 20);
/// assert_eq!(transport.base_url(), "https://likes.example.com/api");
/// ```
///
/// # TLS
///
/// Natively, `https` goes through reqwest with rustls (aws-lc-rs). Which
/// certificates are trusted depends on the platform; none needs set-up:
///
/// | platform | trusted roots |
/// |---|---|
/// | iOS, macOS | the system's, through `Security.framework` (rustls-platform-verifier): keychain and MDM roots, revocation |
/// | Windows | the system's, through the Windows certificate store |
/// | Linux | the system's CA bundle (`/etc/ssl/certs`, `SSL_CERT_FILE`, `SSL_CERT_DIR`), checked by webpki; a machine with no CA bundle at all fails [`new`](Self::new) with [`LikeError::Config`] unless extra roots are given |
/// | Android | Mozilla's roots, bundled in the library (`webpki-root-certs`), checked by webpki |
/// | web (wasm) | the browser's: the `fetch` API does TLS |
///
/// Kotlin on a desktop JVM and Python load this library natively, so they
/// trust what their OS trusts (not Java's `cacerts`).
///
/// On Android the platform verifier needs a JNI call with the app's
/// `Context` and a Kotlin component in the app's Gradle build before the
/// first connection, and panics at the first handshake without them
/// ("Expect rustls-platform-verifier to be initialized"); an SDK that
/// panics when an app forgets a set-up step is worse than one that needs
/// none, so Android trusts the bundled roots. The cost: roots the user or
/// an MDM installed on the device, and the app's
/// `network_security_config.xml`, are not consulted, and the bundled list
/// changes with LikeKit releases rather than with Android updates.
///
/// On every native platform the client also trusts the **extra roots** an
/// app gives as PEM ([`new_with_extra_roots`](Self::new_with_extra_roots),
/// [`LikeClientBuilder::extra_root_certificates_pem`](crate::LikeClientBuilder::extra_root_certificates_pem)):
/// a private CA, a staging server's CA, a test CA. They are added to the
/// platform's roots (reqwest's `tls_certs_merge`, which gives them to the
/// platform verifier) or, on Android, to the bundled ones (`tls_certs_only`
/// with both lists); they never replace them. On the web the browser
/// decides what it trusts, so the option does not exist there.
///
/// A refused certificate (not trusted, expired, for another name) is a
/// [`LikeError::Network`] error, transient like any other failure to
/// connect, on purpose: on a train the usual cause is a captive portal (the
/// Wi-Fi's sign-in page answering for every site with a certificate of its
/// own), which goes away once the viewer signs in, and a like must survive
/// that. When the certificate really is wrong, the retries end, the tap
/// rolls back and the `Failed` event carries the reason ("… invalid peer
/// certificate: UnknownIssuer"). Nothing about it panics.
///
/// # On the web
///
/// On `wasm32` the same type speaks through the host's `fetch` with the
/// same rules and the same errors. Each request has an `AbortController`;
/// a timer aborts it when the timeout passes (the call fails with
/// [`LikeError::Timeout`], whether the answer's head or its body was
/// late), and a call the client gives up (at shutdown) aborts its request.
/// A `fetch` that fails without an answer — no connection, CORS refused,
/// the browser offline — is a [`LikeError::Network`]; the browser does not
/// say which. The body is read from its stream piece by piece under the
/// answer cap, as natively. The base URL is checked with the JavaScript
/// `URL`. The timer counts whole milliseconds, rounded up, and waits at
/// most 2^31 − 1 ms (24.8 days, the longest a JavaScript timer waits):
/// a longer timeout is that long.
pub struct HttpTransport {
    http: backend::Http,
    base: String,
    tokens: Tokens,
    timeout: Duration,
    max_answer_bytes: usize,
}

impl fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpTransport")
            .field("base", &self.base)
            .field("timeout", &self.timeout)
            .field("max_answer_bytes", &self.max_answer_bytes)
            .finish_non_exhaustive()
    }
}

impl HttpTransport {
    /// A transport for the server at `base_url` (`http` or `https`, with or
    /// without a path prefix), with no token, the default timeout and the
    /// default answer cap.
    ///
    /// # Errors
    ///
    /// [`LikeError::Config`] when `base_url` is not an absolute `http(s)`
    /// URL without a query, or the HTTP client cannot be set up.
    ///
    /// ```
    /// use likekit_core::HttpTransport;
    /// assert!(HttpTransport::new("http://127.0.0.1:8080").is_ok());
    /// assert_eq!(HttpTransport::new("127.0.0.1:8080").unwrap_err().code(), "config");
    /// ```
    pub fn new(base_url: &str) -> Result<Self, LikeError> {
        let base = checked_base_url(base_url)?;
        Ok(Self::with_client(backend::Http::new()?, base))
    }

    /// A transport as [`new`](Self::new) gives, that also trusts the root
    /// certificates in `pem` (one or more `-----BEGIN CERTIFICATE-----`
    /// blocks; other blocks and text around them are ignored) on top of
    /// the platform's (see "TLS" on [`HttpTransport`]). Give the certificate of the
    /// CA that signed the server's certificate, not the server's own. Not
    /// on the web, where the browser decides.
    ///
    /// # Errors
    ///
    /// [`LikeError::Config`] as for [`new`](Self::new), and when `pem`
    /// holds no certificate, is not readable PEM, or holds a certificate
    /// that cannot be a trust anchor; the message says which.
    ///
    /// ```
    /// use likekit_core::HttpTransport;
    /// let err = HttpTransport::new_with_extra_roots("https://likes.internal", "not PEM").unwrap_err();
    /// assert_eq!(err.code(), "config");
    /// assert!(err.to_string().contains("no certificate"), "{err}");
    /// ```
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new_with_extra_roots(base_url: &str, pem: impl AsRef<[u8]>) -> Result<Self, LikeError> {
        let base = checked_base_url(base_url)?;
        let roots = backend::parse_root_certificates(pem.as_ref())?;
        Ok(Self::with_client(backend::Http::trusting(&roots)?, base))
    }

    fn with_client(http: backend::Http, base: String) -> Self {
        Self {
            http,
            base,
            tokens: Tokens::Now(Arc::new(NoToken)),
            timeout: DEFAULT_REQUEST_TIMEOUT,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
        }
    }

    /// Sends the tokens `tokens` supplies.
    ///
    /// ```
    /// let t = likekit_core::HttpTransport::new("http://127.0.0.1:8080")
    ///     .unwrap()
    ///     .with_token_provider(|_refresh: bool| Some("token".to_string()));
    /// # drop(t);
    /// ```
    pub fn with_token_provider(self, tokens: impl TokenProvider + 'static) -> Self {
        self.with_shared_token_provider(Arc::new(tokens))
    }

    /// Sends the tokens `tokens` supplies (a provider shared with others).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use likekit_core::{HttpTransport, StaticToken, TokenProvider};
    /// let tokens: Arc<dyn TokenProvider> = Arc::new(StaticToken::new("token"));
    /// let t = HttpTransport::new("http://127.0.0.1:8080").unwrap().with_shared_token_provider(tokens);
    /// # drop(t);
    /// ```
    pub fn with_shared_token_provider(mut self, tokens: Arc<dyn TokenProvider>) -> Self {
        self.tokens = Tokens::Now(tokens);
        self
    }

    /// Sends the tokens an [`AsyncTokenProvider`] supplies, awaiting each.
    pub fn with_async_token_provider(mut self, tokens: Arc<dyn AsyncTokenProvider>) -> Self {
        self.tokens = Tokens::Awaited(tokens);
        self
    }

    /// Gives up on a request (connecting, sending and the whole answer)
    /// after `timeout`; the call
    /// then fails with [`LikeError::Timeout`].
    ///
    /// ```
    /// use std::time::Duration;
    /// let t = likekit_core::HttpTransport::new("http://127.0.0.1:8080")
    ///     .unwrap()
    ///     .with_timeout(Duration::from_secs(3));
    /// assert_eq!(t.timeout(), Duration::from_secs(3));
    /// ```
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Reads at most `bytes` bytes of an answer's body (default
    /// [`DEFAULT_MAX_ANSWER_BYTES`], which says why it is safe). A longer
    /// answer fails the call with [`LikeError::InvalidResponse`] ("answer
    /// larger than … bytes"), which is transient: a like or unlike is sent
    /// again, and may have been applied meanwhile.
    ///
    /// An answer whose `Content-Length` is over the cap is refused before
    /// its body is read. The body is then read piece by piece (natively
    /// from the connection, on the web from the `fetch` body's stream) and
    /// reading stops as soon as it passes the cap, so an oversized answer
    /// never takes more than the cap and one piece of memory. A body
    /// refused with a `401` is held to the same cap.
    ///
    /// ```
    /// let t = likekit_core::HttpTransport::new("http://127.0.0.1:8080")
    ///     .unwrap()
    ///     .with_max_answer_bytes(64 * 1024);
    /// assert_eq!(t.max_answer_bytes(), 65_536);
    /// ```
    pub fn with_max_answer_bytes(mut self, bytes: usize) -> Self {
        self.max_answer_bytes = bytes;
        self
    }

    /// The server's base URL, without a trailing slash.
    ///
    /// ```
    /// let t = likekit_core::HttpTransport::new("http://127.0.0.1:8080/").unwrap();
    /// assert_eq!(t.base_url(), "http://127.0.0.1:8080");
    /// ```
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// The per-request timeout (see [`with_timeout`](Self::with_timeout)).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The cap on an answer's body (see
    /// [`with_max_answer_bytes`](Self::with_max_answer_bytes)).
    pub fn max_answer_bytes(&self) -> usize {
        self.max_answer_bytes
    }

    /// Sends one request, again once with a fresh token after a 401, and
    /// decodes the answer.
    async fn call<T: json::Json>(&self, method: Method, url: String) -> Result<T, LikeError> {
        let (status, retry_after_ms, body) = self.exchange(method, &url).await?;
        decode(status, retry_after_ms, &body)
    }

    /// Sends one request, again once with a fresh token after a 401; the
    /// final answer's status, Retry-After (in milliseconds) and body. Not
    /// generic, so there is one copy of it whatever the answer's type.
    async fn exchange(
        &self,
        method: Method,
        url: &str,
    ) -> Result<(u16, Option<u64>, Vec<u8>), LikeError> {
        let mut token = self.tokens.token(false, self.timeout).await?;
        let mut refreshed = false;
        loop {
            let answer = self
                .http
                .request(method, url, token.as_deref(), self.timeout)
                .await?;
            let status = answer.status();
            if status == 401 && !refreshed {
                refreshed = true;
                if let Some(fresh) = self.tokens.token(true, self.timeout).await? {
                    token = Some(fresh);
                    // Read the refusal to the end so the connection can be
                    // reused; one over the cap is dropped with its connection.
                    let _ = answer.body(self.max_answer_bytes).await;
                    continue;
                }
            }
            let retry_after_ms = answer.retry_after().as_deref().and_then(parse_retry_after);
            let body = answer.body(self.max_answer_bytes).await?;
            return Ok((status, retry_after_ms, body));
        }
    }
}

/// The HTTP methods of the wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    Get,
    Post,
    Delete,
}

impl Transport for HttpTransport {
    fn send(&self, post: PostId, action: Action) -> BoxFuture<'_, Result<LikeState, LikeError>> {
        let method = match action {
            Action::Like => Method::Post,
            Action::Unlike => Method::Delete,
        };
        let url = format!("{}/posts/{post}/like", self.base);
        Box::pin(self.call(method, url))
    }

    fn read(&self, post: PostId) -> BoxFuture<'_, Result<PostLikes, LikeError>> {
        let url = format!("{}/posts/{post}/likes", self.base);
        Box::pin(self.call(Method::Get, url))
    }

    fn read_many<'a>(
        &'a self,
        posts: &'a [PostId],
    ) -> BoxFuture<'a, Result<BatchLikes, LikeError>> {
        Box::pin(async move {
            if posts.is_empty() {
                return Ok(BatchLikes::default());
            }
            let mut all = BatchLikes::default();
            for page in posts.chunks(MAX_BATCH_POSTS) {
                let mut url = format!("{}/likes?posts=", self.base);
                for (i, post) in page.iter().enumerate() {
                    if i > 0 {
                        url.push(',');
                    }
                    url.push_str(&post.to_string());
                }
                let got: BatchLikes = self.call(Method::Get, url).await?;
                all.posts.extend(got.posts);
            }
            Ok(all)
        })
    }
}

/// An in-memory LikeKit server for one viewer, answering at once: for
/// examples, tests and benchmarks without a network.
///
/// Posts must be added first ([`with_post`](Self::with_post)); others are
/// answered with [`LikeError::NotFound`], as the real server does. Like and
/// unlike are idempotent, and the version grows with every real change.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// # let post = likekit_core::PostId::new(42).unwrap();
/// use likekit_core::{Action, LikeError, MemoryTransport, Transport};
///
/// let server = MemoryTransport::new().with_post(post, 1203);
/// let state = server.send(post, Action::Like).await.unwrap();
/// assert_eq!((state.count, state.liked_by_me), (1204, true));
///
/// server.fail_next(LikeError::Timeout);
/// assert_eq!(server.send(post, Action::Unlike).await, Err(LikeError::Timeout));
/// assert_eq!(server.calls(), 2);
/// assert_eq!(server.liked(post), Some(true));
/// # }
/// ```
#[derive(Debug, Default)]
pub struct MemoryTransport {
    state: std::sync::Mutex<MemoryState>,
}

#[derive(Debug, Default)]
struct MemoryState {
    posts: std::collections::HashMap<PostId, MemoryPost>,
    failures: std::collections::VecDeque<LikeError>,
    calls: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct MemoryPost {
    /// Likes by users other than the viewer.
    others: u64,
    liked: bool,
    version: u64,
}

impl MemoryPost {
    fn count(&self) -> u64 {
        self.others + u64::from(self.liked)
    }
}

impl MemoryTransport {
    /// A server with no posts.
    ///
    /// ```
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// let server = likekit_core::MemoryTransport::new();
    /// assert_eq!(server.liked(post), None);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a post that `others` other users like (the viewer does not).
    ///
    /// ```
    /// # let post = likekit_core::PostId::new(42).unwrap();
    /// let server = likekit_core::MemoryTransport::new().with_post(post, 1203);
    /// assert_eq!(server.liked(post), Some(false));
    /// ```
    pub fn with_post(self, post: PostId, others: u64) -> Self {
        self.add_post(post, others);
        self
    }

    /// Adds (or resets) a post that `others` other users like.
    ///
    /// ```
    /// # let post_7 = likekit_core::PostId::new(7).unwrap();
    /// let server = likekit_core::MemoryTransport::new();
    /// server.add_post(post_7, 0);
    /// assert_eq!(server.liked(post_7), Some(false));
    /// ```
    pub fn add_post(&self, post: PostId, others: u64) {
        self.lock().posts.insert(
            post,
            MemoryPost {
                others,
                liked: false,
                version: 1,
            },
        );
    }

    /// Removes a post: calls for it get [`LikeError::NotFound`] from now on.
    ///
    /// ```
    /// # let post_7 = likekit_core::PostId::new(7).unwrap();
    /// let server = likekit_core::MemoryTransport::new().with_post(post_7, 0);
    /// server.remove_post(post_7);
    /// assert_eq!(server.liked(post_7), None);
    /// ```
    pub fn remove_post(&self, post: PostId) {
        self.lock().posts.remove(&post);
    }

    /// The next like or unlike call fails with `error` (queued: call it
    /// twice to fail two calls). A failed call changes nothing (see the
    /// example on [`MemoryTransport`]).
    pub fn fail_next(&self, error: LikeError) {
        self.lock().failures.push_back(error);
    }

    /// How many like and unlike calls arrived, failed ones included (see
    /// the example on [`MemoryTransport`]).
    pub fn calls(&self) -> u64 {
        self.lock().calls
    }

    /// Whether the viewer likes the post on the server; `None` for a post
    /// it does not have (see the example on [`MemoryTransport`]).
    pub fn liked(&self, post: PostId) -> Option<bool> {
        self.lock().posts.get(&post).map(|p| p.liked)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MemoryState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn not_found(post: PostId) -> LikeError {
        LikeError::NotFound {
            message: format!("no post {post}"),
        }
    }

    fn likes(post: &MemoryPost) -> PostLikes {
        PostLikes {
            count: post.count(),
            liked_by_me: post.liked,
            friends: Vec::new(),
            version: post.version,
        }
    }
}

impl Transport for MemoryTransport {
    fn send(&self, post: PostId, action: Action) -> BoxFuture<'_, Result<LikeState, LikeError>> {
        let result = (|| {
            let mut st = self.lock();
            st.calls += 1;
            if let Some(error) = st.failures.pop_front() {
                return Err(error);
            }
            let p = st
                .posts
                .get_mut(&post)
                .ok_or_else(|| Self::not_found(post))?;
            if p.liked != action.liked() {
                p.liked = action.liked();
                p.version += 1;
            }
            Ok(LikeState {
                count: p.count(),
                liked_by_me: p.liked,
                version: p.version,
            })
        })();
        Box::pin(std::future::ready(result))
    }

    fn read(&self, post: PostId) -> BoxFuture<'_, Result<PostLikes, LikeError>> {
        let result = self
            .lock()
            .posts
            .get(&post)
            .map(Self::likes)
            .ok_or_else(|| Self::not_found(post));
        Box::pin(std::future::ready(result))
    }

    fn read_many<'a>(
        &'a self,
        posts: &'a [PostId],
    ) -> BoxFuture<'a, Result<BatchLikes, LikeError>> {
        let st = self.lock();
        let batch = batch_of(posts, |post| st.posts.get(post).map(Self::likes));
        Box::pin(std::future::ready(Ok(batch)))
    }
}

/// The feed page of `posts` an in-memory server answers: the posts it has.
pub(crate) fn batch_of(
    posts: &[PostId],
    mut likes: impl FnMut(&PostId) -> Option<PostLikes>,
) -> BatchLikes {
    let mut batch = BatchLikes::default();
    for post in posts {
        if let Some(likes) = likes(post) {
            batch.posts.insert(*post, likes);
        }
    }
    batch
}

/// What [`checked_base_url`] needs from a URL each backend parses.
struct ParsedUrl {
    /// The URL written out as the WHATWG URL Standard writes it.
    href: String,
    /// An `http` or `https` URL that can be a base.
    http: bool,
    query_or_fragment: bool,
    /// It has a user name or a password.
    #[cfg(not(target_arch = "wasm32"))]
    credentials: bool,
}

/// `base_url` checked (absolute `http(s)`, no query or fragment), without
/// its trailing slash. Natively the `url` crate parses it, on the web the
/// JavaScript `URL`: both follow the WHATWG URL Standard.
fn checked_base_url(base_url: &str) -> Result<String, LikeError> {
    let url = backend::parse_url(base_url).map_err(|why| LikeError::Config {
        message: format!("bad base URL {}: {why}", quoted(base_url)),
    })?;
    if !url.http {
        return Err(LikeError::Config {
            message: format!("base URL {} is not an http(s) URL", quoted(base_url)),
        });
    }
    if url.query_or_fragment {
        return Err(LikeError::Config {
            message: format!(
                "base URL {} must not have a query or fragment",
                quoted(base_url)
            ),
        });
    }
    // reqwest would send a user name or password as a second
    // `Authorization` header, in the clear over `http`: refused, and not
    // repeated in the message. (On the web, where a page's base URL is no
    // secret, fetch refuses such a URL itself: each call is a network error.)
    #[cfg(not(target_arch = "wasm32"))]
    if url.credentials {
        return Err(LikeError::Config {
            message: "base URL must not have a user name or password".to_owned(),
        });
    }
    Ok(url.href.trim_end_matches('/').to_owned())
}

/// The answer was longer than the cap.
fn too_large(limit: usize) -> LikeError {
    LikeError::InvalidResponse {
        message: format!("answer larger than {limit} bytes"),
    }
}

/// `Retry-After` in delay-seconds, whole or with a decimal fraction (`2`,
/// `0.25`, `.5`), as milliseconds: rounded to the nearest, a half up, at
/// most `u64::MAX`. Anything else (an HTTP date, a sign, an exponent) is
/// not understood (`None`): the machine's own backoff applies then.
///
/// Read digit by digit rather than as an `f64`: exact, the same on every
/// target, and the web package carries no float parser (whose tables
/// alone are about 10 KB).
fn parse_retry_after(value: &str) -> Option<u64> {
    let value = value.trim_matches([' ', '\t']);
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    let digits = || whole.bytes().chain(fraction.bytes());
    if value.is_empty() || value == "." || !digits().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digit = |b: u8| u64::from(b - b'0');
    let seconds = whole
        .bytes()
        .fold(0_u64, |n, b| n.saturating_mul(10).saturating_add(digit(b)));
    // Three digits of milliseconds, then the fourth rounds.
    let mut places = fraction.bytes().map(digit).chain(std::iter::repeat(0));
    let mut millis = 0;
    for _ in 0..3 {
        millis = millis * 10 + places.next().unwrap_or(0);
    }
    millis += u64::from(places.next().unwrap_or(0) >= 5);
    Some(seconds.saturating_mul(1000).saturating_add(millis))
}

/// Turns a status and body into the value or the typed error.
pub(crate) fn decode<T: json::Json>(
    status: u16,
    retry_after_ms: Option<u64>,
    body: &[u8],
) -> Result<T, LikeError> {
    if (200..300).contains(&status) {
        json::from_json(body).map_err(|e| LikeError::InvalidResponse {
            message: format!("status {}, unreadable body: {e}", u64::from(status)),
        })
    } else {
        Err(error_for(status, retry_after_ms, body))
    }
}

/// The typed error for a non-2xx answer, with the code and message of its
/// JSON error body when it has one.
pub(crate) fn error_for(status: u16, retry_after_ms: Option<u64>, body: &[u8]) -> LikeError {
    let (code, message) = match json::from_json::<ErrorBody>(body) {
        Ok(body) => (body.error.code, body.error.message),
        Err(_) => (
            likekit_proto::code::http(status),
            plain_message(status, body),
        ),
    };
    error_with(status, retry_after_ms, code, message)
}

/// The typed error for a non-2xx answer whose error body said `code` and
/// `message` (`http_<status>` and a plain message when it had none).
pub(crate) fn error_with(
    status: u16,
    retry_after_ms: Option<u64>,
    code: String,
    message: String,
) -> LikeError {
    match status {
        401 => LikeError::Unauthorized { message },
        403 => LikeError::Forbidden { message },
        // Only the server's own "no such post": a 404 for a route it does
        // not have (a base URL missing its path, a proxy's page) is no word
        // on the post, and an app that hides a post on `NotFound` would
        // hide every one.
        404 if code == likekit_proto::code::POST_NOT_FOUND => LikeError::NotFound { message },
        429 => LikeError::RateLimited { retry_after_ms },
        // Transient, and the server may have processed the request before
        // giving up on it: retried as a server failure.
        408 | 425 | 500..=599 => LikeError::Server {
            status,
            code,
            message,
        },
        400..=499 => LikeError::Rejected {
            status,
            code,
            message,
        },
        // A redirect (a base URL on `http` for an `https` site, one missing
        // a slash the server adds): not followed (it would carry the token
        // elsewhere, or turn a like's POST into a GET), and sending the
        // call again meets it again. Refused at once, saying what to fix,
        // rather than retried until the retries run out. (Natively only:
        // the web's `fetch` follows redirects by its host's rules, and one
        // that reaches here there stays an unexpected status.)
        #[cfg(not(target_arch = "wasm32"))]
        300..=399 => LikeError::Rejected {
            status,
            code,
            message: format!(
                "the server redirected the call ({status} {message}); redirects are not \
                 followed: give the address it leads to as the base URL"
            ),
        },
        _ => LikeError::InvalidResponse {
            message: format!("unexpected status {}: {message}", u64::from(status)),
        },
    }
}

/// A message for an error answer without a JSON body: its start, or the
/// status's reason phrase (natively; on the web, which carries no table of
/// them, `HTTP` and the status).
fn plain_message(status: u16, body: &[u8]) -> String {
    const MAX: usize = 200;
    let text = lossy(&body[..body.len().min(MAX)]);
    let text = text.trim();
    if !text.is_empty() {
        return text.to_owned();
    }
    #[cfg(not(target_arch = "wasm32"))]
    if let Some(reason) = reason_phrase(status) {
        return reason.to_owned();
    }
    format!("HTTP {}", u64::from(status))
}

/// `bytes` as text, each invalid sequence replaced by U+FFFD, as
/// `String::from_utf8_lossy` does, on `str::from_utf8` alone (which the
/// web package needs anyway; `from_utf8_lossy` brings its own decoder).
fn lossy(mut bytes: &[u8]) -> String {
    let mut text = String::new();
    loop {
        match std::str::from_utf8(bytes) {
            Ok(valid) => {
                text.push_str(valid);
                return text;
            }
            Err(error) => {
                let (valid, rest) = bytes.split_at(error.valid_up_to());
                text.push_str(std::str::from_utf8(valid).unwrap_or_default());
                text.push(char::REPLACEMENT_CHARACTER);
                bytes = rest
                    .get(error.error_len().unwrap_or(rest.len())..)
                    .unwrap_or_default();
            }
        }
    }
}

/// The reason phrase of a status HTTP defines (as the `http` crate words
/// it), or `None`.
#[cfg(not(target_arch = "wasm32"))]
fn reason_phrase(status: u16) -> Option<&'static str> {
    Some(match status {
        100 => "Continue",
        101 => "Switching Protocols",
        102 => "Processing",
        103 => "Early Hints",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        207 => "Multi-Status",
        208 => "Already Reported",
        226 => "IM Used",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        305 => "Use Proxy",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Payload Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        418 => "I'm a teapot",
        421 => "Misdirected Request",
        422 => "Unprocessable Entity",
        423 => "Locked",
        424 => "Failed Dependency",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        506 => "Variant Also Negotiates",
        507 => "Insufficient Storage",
        508 => "Loop Detected",
        510 => "Not Extended",
        511 => "Network Authentication Required",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn err(status: u16, body: &str) -> LikeError {
        decode::<LikeState>(status, None, body.as_bytes()).unwrap_err()
    }

    const NOT_FOUND: &str = r#"{"error":{"code":"post_not_found","message":"no post 42"}}"#;

    #[test]
    fn lossy_text_is_what_from_utf8_lossy_gives() {
        let cases: &[&[u8]] = &[
            b"",
            b"plain",
            "caf\u{e9} \u{1f494}".as_bytes(),
            b"\xff",
            b"a\xffb\xfe",
            b"\xe2\x82",              // a sequence cut short at the end
            b"\xe2\x82x\xe2\x82\xac", // cut short, then whole
            b"\xf0\x9f\x92",          // four-byte, cut short
            b"\xc0\x80\xed\xa0\x80",  // overlong, surrogate
            b"\x80\x80\x80",
        ];
        for &bytes in cases {
            assert_eq!(lossy(bytes), String::from_utf8_lossy(bytes), "{bytes:?}");
        }
    }

    #[test]
    fn success_bodies_decode() {
        let s: LikeState =
            decode(200, None, br#"{"count":3,"liked_by_me":true,"version":9}"#).unwrap();
        assert_eq!(
            s,
            LikeState {
                count: 3,
                liked_by_me: true,
                version: 9
            }
        );
    }

    #[test]
    fn malformed_or_truncated_success_bodies_are_invalid_responses() {
        for body in [
            "",
            "{",
            r#"{"count":3,"liked_by_me":tr"#,
            "<html>oops</html>",
            r#"{"count":-1,"liked_by_me":true,"version":1}"#,
            r#"{"liked_by_me":true}"#,
            "\u{0}\u{1}garbage",
        ] {
            let e = err(200, body);
            assert!(
                matches!(e, LikeError::InvalidResponse { .. }),
                "{body:?}: {e:?}"
            );
            assert!(e.is_transient());
        }
    }

    #[test]
    fn statuses_map_to_the_right_errors() {
        assert_eq!(
            err(404, NOT_FOUND),
            LikeError::NotFound {
                message: "no post 42".into()
            }
        );
        // any other 404 is the route's, not the post's
        assert_eq!(
            err(
                404,
                r#"{"error":{"code":"not_found","message":"no such route"}}"#
            ),
            LikeError::Rejected {
                status: 404,
                code: "not_found".into(),
                message: "no such route".into()
            }
        );
        assert_eq!(
            err(404, "<html>Not Found</html>"),
            LikeError::Rejected {
                status: 404,
                code: "http_404".into(),
                message: "<html>Not Found</html>".into()
            }
        );
        assert!(!err(404, "").is_transient());
        assert!(matches!(err(401, ""), LikeError::Unauthorized { .. }));
        assert!(matches!(err(403, ""), LikeError::Forbidden { .. }));
        assert_eq!(
            err(
                400,
                r#"{"error":{"code":"bad_post_id","message":"not a number"}}"#
            ),
            LikeError::Rejected {
                status: 400,
                code: "bad_post_id".into(),
                message: "not a number".into()
            }
        );
        assert_eq!(
            err(503, "upstream down"),
            LikeError::Server {
                status: 503,
                code: "http_503".into(),
                message: "upstream down".into()
            }
        );
        assert_eq!(
            err(500, ""),
            LikeError::Server {
                status: 500,
                code: "http_500".into(),
                message: "Internal Server Error".into()
            }
        );
        assert!(matches!(
            err(413, "{\"error\":"),
            LikeError::Rejected { status: 413, .. }
        ));
        let redirected = err(302, "");
        let LikeError::Rejected {
            status: 302,
            ref code,
            ref message,
        } = redirected
        else {
            panic!("{redirected:?}")
        };
        assert_eq!(code, "http_302");
        assert!(message.contains("302 Found"), "{message}");
        assert!(message.contains("base URL"), "{message}");
        assert!(!redirected.is_transient(), "a redirect is not retried");
        assert!(matches!(err(101, ""), LikeError::InvalidResponse { .. }));
        // a request the server gave up on may have been processed: retried
        for status in [408, 425] {
            let e = err(status, "");
            assert!(matches!(e, LikeError::Server { .. }), "{status}: {e:?}");
            assert!(e.is_transient() && e.may_have_applied(), "{status}");
            assert_eq!(e.status(), Some(status));
        }
        assert!(matches!(
            err(409, ""),
            LikeError::Rejected { status: 409, .. }
        ));
        assert_eq!(
            decode::<LikeState>(429, Some(1500), b"").unwrap_err(),
            LikeError::RateLimited {
                retry_after_ms: Some(1500)
            }
        );
        // the classes the machine relies on
        assert!(err(503, "").is_transient());
        assert!(!err(404, NOT_FOUND).is_transient());
    }

    #[test]
    fn retry_after_in_seconds() {
        assert_eq!(parse_retry_after("2"), Some(2000));
        assert_eq!(parse_retry_after(" 0.25 "), Some(250));
        assert_eq!(parse_retry_after("0"), Some(0));
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("NaN"), None);
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        for (value, ms) in [
            ("1.5", Some(1500)),
            (".5", Some(500)),
            ("5.", Some(5000)),
            ("\t3 ", Some(3000)),
            ("0.0004", Some(0)),
            ("0.0005", Some(1)),
            ("0.00049999", Some(0)),
            ("1.2345", Some(1235)),
            ("120", Some(120_000)),
            ("18446744073709551", Some(18_446_744_073_709_551_000)),
            ("99999999999999999999999", Some(u64::MAX)),
            ("", None),
            (".", None),
            ("1e3", None),
            ("+2", None),
            ("-0", None),
            ("1.2.3", None),
            ("inf", None),
            ("٣", None),
        ] {
            assert_eq!(parse_retry_after(value), ms, "{value:?}");
        }
    }

    /// The web package's tests check the same cases against the
    /// JavaScript `URL` (`bindings/wasm/tests/js/transport.test.mjs`), but
    /// for a user name or password, which only the native check refuses.
    #[test]
    fn base_urls_are_checked() {
        assert!(HttpTransport::new("http://127.0.0.1:8080/").is_ok());
        for (given, base) in [
            ("http://h/api/", "http://h/api"),
            (
                "HTTPS://Likes.Example.COM:443/v1//",
                "https://likes.example.com/v1",
            ),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("http://h/a b", "http://h/a%20b"),
            // an `@` in the path, an empty user info, IPv6, a Unicode name
            ("http://h/@me", "http://h/@me"),
            ("http://@h/", "http://h"),
            ("http://[::1]:8080/api", "http://[::1]:8080/api"),
            ("https://bücher.example/", "https://xn--bcher-kva.example"),
        ] {
            assert_eq!(HttpTransport::new(given).unwrap().base_url(), base);
        }
        for bad in [
            "",
            "localhost:8080",
            "ftp://h",
            "http://h/?x=1",
            "http://h/?",
            "http://h/#top",
            "mailto:a@b",
            "http://",
            "http://user@h",
            "https://user:secret@h/api",
            "https://:secret@h",
            "https://a:b@c@h/",
        ] {
            assert!(
                matches!(HttpTransport::new(bad), Err(LikeError::Config { .. })),
                "{bad}"
            );
        }
        // the password is not repeated where the error is shown or logged
        let refused = HttpTransport::new("https://ana:secret@h/api").unwrap_err();
        assert!(
            !format!("{refused} {refused:?}").contains("secret"),
            "{refused:?}"
        );
    }

    /// A renewal that never answers: the call fails with a timeout, and
    /// nothing is sent.
    #[tokio::test]
    async fn a_token_provider_that_hangs_times_out() {
        struct Hanging;
        impl AsyncTokenProvider for Hanging {
            fn token(&self, _refresh: bool) -> BoxFuture<'_, Option<String>> {
                Box::pin(std::future::pending())
            }
        }
        // Nothing listens there: a request that went out would fail as a
        // network error, not a timeout.
        let transport = HttpTransport::new("http://127.0.0.1:9")
            .unwrap()
            .with_async_token_provider(Arc::new(Hanging))
            .with_timeout(Duration::from_millis(50));
        let post = PostId::new(42).unwrap();
        let sent = tokio::time::timeout(Duration::from_secs(5), transport.send(post, Action::Like))
            .await
            .expect("the call ends");
        assert_eq!(sent, Err(LikeError::Timeout));
        let read = tokio::time::timeout(Duration::from_secs(5), transport.read(post))
            .await
            .expect("the read ends");
        assert_eq!(read, Err(LikeError::Timeout));
    }

    #[test]
    fn long_plain_error_bodies_are_cut() {
        let body = "x".repeat(10_000);
        let LikeError::Server { message, .. } = err(502, &body) else {
            panic!()
        };
        assert_eq!(message.len(), 200);
        // a body cut inside a multi-byte character does not panic
        let e = err(502, &"é".repeat(150));
        assert!(matches!(e, LikeError::Server { .. }));
    }
}
