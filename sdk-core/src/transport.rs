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
//! | 5xx | [`LikeError::Server`] |
//! | 429 (with `Retry-After: <seconds>`) | [`LikeError::RateLimited`] |
//! | 401 again after a fresh token, or no fresh token | [`LikeError::Unauthorized`] |
//! | 403 | [`LikeError::Forbidden`] |
//! | 404 | [`LikeError::NotFound`] |
//! | other 4xx | [`LikeError::Rejected`] |
//! | a body that is not the JSON expected, or cut short | [`LikeError::InvalidResponse`] |
//! | a body longer than the cap ([`HttpTransport::with_max_answer_bytes`]) | [`LikeError::InvalidResponse`] |
//!
//! Which certificates `https` trusts on each platform, and why a refused
//! certificate is a [`LikeError::Network`]: [`HttpTransport`], "TLS".

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;

use crate::runtime::{BoxFuture, SendOutsideWasm, SyncOutsideWasm};
use crate::wire::{BatchLikes, ErrorBody, LikeState, MAX_BATCH_POSTS, PostLikes};
use crate::{Action, LikeError, PostId};

/// Performs the calls the client needs. [`HttpTransport`] is the real one;
/// tests and apps with their own networking plug in others.
///
/// Methods return boxed futures so that the client can hold any transport
/// as `Arc<dyn Transport>`.
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
/// providers too.
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
/// request waits for the answer; the tap it carries has already returned.
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
    async fn token(&self, refresh: bool) -> Option<String> {
        match self {
            Self::Now(tokens) => tokens.token(refresh),
            Self::Awaited(tokens) => tokens.token(refresh).await,
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

/// The LikeKit wire protocol over HTTP, with reqwest (rustls natively, the
/// `fetch` API on wasm).
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
pub struct HttpTransport {
    http: reqwest::Client,
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
        #[cfg(not(target_arch = "wasm32"))]
        let http = native_client(RootStore::NATIVE, &[])?;
        #[cfg(target_arch = "wasm32")]
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| http_setup_error(&e))?;
        Ok(Self::with_client(http, base))
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
        let roots = parse_root_certificates(pem.as_ref())?;
        let http = native_client(RootStore::NATIVE, &roots)?;
        Ok(Self::with_client(http, base))
    }

    fn with_client(http: reqwest::Client, base: String) -> Self {
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

    /// Gives up on a request (and its answer) after `timeout`; the call
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
    /// its body is read. Natively the body is then read piece by piece and
    /// reading stops as soon as it passes the cap, so an oversized answer
    /// never takes more than the cap and one piece of memory; on wasm the
    /// body can only be read whole, and an answer without `Content-Length`
    /// is refused once read. A body refused with a `401` is held to the
    /// same cap.
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
    async fn call<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        url: String,
    ) -> Result<T, LikeError> {
        let mut token = self.tokens.token(false).await;
        let mut refreshed = false;
        loop {
            let mut request = self
                .http
                .request(method.clone(), &url)
                .timeout(self.timeout)
                .header(reqwest::header::ACCEPT, "application/json");
            if let Some(token) = &token {
                request = request.bearer_auth(token);
            }
            let response = request.send().await.map_err(|e| send_error(&e))?;
            let status = response.status().as_u16();
            if status == 401 && !refreshed {
                refreshed = true;
                if let Some(fresh) = self.tokens.token(true).await {
                    token = Some(fresh);
                    // Read the refusal to the end so the connection can be
                    // reused; one over the cap is dropped with its connection.
                    let _ = read_body(response, self.max_answer_bytes).await;
                    continue;
                }
            }
            let retry_after_ms = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_retry_after);
            let body = read_body(response, self.max_answer_bytes).await?;
            return decode(status, retry_after_ms, &body);
        }
    }
}

impl Transport for HttpTransport {
    fn send(&self, post: PostId, action: Action) -> BoxFuture<'_, Result<LikeState, LikeError>> {
        let method = match action {
            Action::Like => reqwest::Method::POST,
            Action::Unlike => reqwest::Method::DELETE,
        };
        let url = format!("{}/posts/{post}/like", self.base);
        Box::pin(self.call(method, url))
    }

    fn read(&self, post: PostId) -> BoxFuture<'_, Result<PostLikes, LikeError>> {
        let url = format!("{}/posts/{post}/likes", self.base);
        Box::pin(self.call(reqwest::Method::GET, url))
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
                let ids: Vec<String> = page.iter().map(ToString::to_string).collect();
                let url = format!("{}/likes?posts={}", self.base, ids.join(","));
                let got: BatchLikes = self.call(reqwest::Method::GET, url).await?;
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

/// `base_url` checked (absolute `http(s)`, no query or fragment), without
/// its trailing slash.
fn checked_base_url(base_url: &str) -> Result<String, LikeError> {
    let url = reqwest::Url::parse(base_url).map_err(|e| LikeError::Config {
        message: format!("bad base URL {base_url:?}: {e}"),
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.cannot_be_a_base() {
        return Err(LikeError::Config {
            message: format!("base URL {base_url:?} is not an http(s) URL"),
        });
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(LikeError::Config {
            message: format!("base URL {base_url:?} must not have a query or fragment"),
        });
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

fn http_setup_error(error: &reqwest::Error) -> LikeError {
    LikeError::Config {
        message: format!("could not set up HTTP: {}", chain(error)),
    }
}

/// Where a native client's trusted roots come from (see "TLS" on
/// [`HttpTransport`]). Each platform has one; tests build both here.
#[cfg(not(target_arch = "wasm32"))]
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

#[cfg(not(target_arch = "wasm32"))]
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
#[cfg(not(target_arch = "wasm32"))]
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
        .connect_timeout(DEFAULT_REQUEST_TIMEOUT);
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
#[cfg(not(target_arch = "wasm32"))]
fn parse_root_certificates(
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
#[cfg(not(target_arch = "wasm32"))]
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

/// An answer's body, at most `limit` bytes of it: a longer one is
/// [`LikeError::InvalidResponse`].
///
/// reqwest's `fetch` backend only gives the body whole, so the cap is
/// checked from `Content-Length` before reading and on the length after.
#[cfg(target_arch = "wasm32")]
async fn read_body(response: reqwest::Response, limit: usize) -> Result<Vec<u8>, LikeError> {
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(too_large(limit));
    }
    let body = response.bytes().await.map_err(|e| body_error(&e))?;
    if body.len() > limit {
        return Err(too_large(limit));
    }
    Ok(Vec::from(body))
}

/// The answer was longer than the cap.
fn too_large(limit: usize) -> LikeError {
    LikeError::InvalidResponse {
        message: format!("answer larger than {limit} bytes"),
    }
}

/// `Retry-After` in delay-seconds (whole or fractional), as milliseconds.
/// An HTTP date is not understood (`None`): the machine's own backoff
/// applies then.
fn parse_retry_after(value: &str) -> Option<u64> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| (secs * 1000.0).round().min(u64::MAX as f64) as u64)
}

/// Turns a status and body into the value or the typed error.
fn decode<T: DeserializeOwned>(
    status: u16,
    retry_after_ms: Option<u64>,
    body: &[u8],
) -> Result<T, LikeError> {
    if (200..300).contains(&status) {
        serde_json::from_slice(body).map_err(|e| LikeError::InvalidResponse {
            message: format!("status {status}, unreadable body: {e}"),
        })
    } else {
        Err(error_for(status, retry_after_ms, body))
    }
}

/// The typed error for a non-2xx answer, with the code and message of its
/// JSON error body when it has one.
pub(crate) fn error_for(status: u16, retry_after_ms: Option<u64>, body: &[u8]) -> LikeError {
    let (code, message) = match serde_json::from_slice::<ErrorBody>(body) {
        Ok(body) => (body.error.code, body.error.message),
        Err(_) => (format!("http_{status}"), plain_message(status, body)),
    };
    match status {
        401 => LikeError::Unauthorized { message },
        403 => LikeError::Forbidden { message },
        404 => LikeError::NotFound { message },
        429 => LikeError::RateLimited { retry_after_ms },
        500..=599 => LikeError::Server {
            status,
            code,
            message,
        },
        400..=499 => LikeError::Rejected {
            status,
            code,
            message,
        },
        _ => LikeError::InvalidResponse {
            message: format!("unexpected status {status}: {message}"),
        },
    }
}

/// A message for an error answer without a JSON body: its start, or the
/// status's reason phrase.
fn plain_message(status: u16, body: &[u8]) -> String {
    const MAX: usize = 200;
    let text = String::from_utf8_lossy(&body[..body.len().min(MAX)]);
    let text = text.trim();
    if text.is_empty() {
        reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("no message")
            .to_owned()
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn id(n: u64) -> PostId {
        PostId::new(n).unwrap()
    }

    fn err(status: u16, body: &str) -> LikeError {
        decode::<LikeState>(status, None, body.as_bytes()).unwrap_err()
    }

    const NOT_FOUND: &str = r#"{"error":{"code":"post_not_found","message":"no post 42"}}"#;

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
        assert!(matches!(err(302, ""), LikeError::InvalidResponse { .. }));
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
    }

    #[test]
    fn base_urls_are_checked() {
        assert!(HttpTransport::new("http://127.0.0.1:8080/").is_ok());
        assert_eq!(
            HttpTransport::new("http://h/api/").unwrap().base_url(),
            "http://h/api"
        );
        for bad in [
            "",
            "localhost:8080",
            "ftp://h",
            "http://h/?x=1",
            "mailto:a@b",
        ] {
            assert!(
                matches!(HttpTransport::new(bad), Err(LikeError::Config { .. })),
                "{bad}"
            );
        }
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
            HttpTransport::with_client(native_client(roots, &extra).unwrap(), front.url())
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
