//! Cross-part tests: the SDK against the real reference server.
//!
//! [`World`] starts a `likekit-server` in-process on a loopback port (an
//! in-memory database, the admin API on) and hands out [`LikeClient`]s
//! signed in as its users. Fault rules go through the admin HTTP API
//! (`PUT /admin/faults`), the same surface the terminal demo uses; the
//! server's truth (rows, counts, who likes what) is read from its store.
//!
//! "Eventually" checks poll with a deadline ([`eventually`]); nothing here
//! asserts on speed.

#![allow(clippy::unwrap_used)]

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use likekit_core::{
    self as core, HttpTransport, LikeClient, LikeClientBuilder, LikeError, LikeEvent, LikeFailure,
    PostId, PostView, RetryPolicy, StaticToken, Subscription, UserId,
};
pub use likekit_server::{self as server, Config, RateLimit, ServerHandle};

use likekit_core::wire::PostLikes;
use likekit_proto::admin::{FaultRule, FaultRules};
use likekit_server::store::PostAudit;
use likekit_testing::admin::AdminClient;

/// The admin key every test server runs with.
pub const ADMIN_KEY: &str = "likekit-tests-admin";

/// How long any "eventually" in these tests may take before it fails.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// The server settings the tests start from: admin API on, no write rate
/// limit, a short view cache.
pub fn test_config() -> Config {
    Config {
        admin_key: Some(ADMIN_KEY.into()),
        write_rate_limit: None,
        cache_ttl: Duration::from_millis(50),
        ..Config::default()
    }
}

/// Quick retries for tests: 10 ms growing to 100 ms, three retries,
/// jittered.
pub fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        min_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(100),
        max_retries: 3,
        ..RetryPolicy::default()
    }
}

/// A running server and a way to look behind it.
#[derive(Debug)]
pub struct World {
    /// The server.
    pub server: ServerHandle,
    /// The server's admin API (fault rules).
    pub admin: AdminClient,
    http: reqwest::Client,
}

impl World {
    /// A server with [`test_config`].
    pub async fn start() -> Self {
        Self::with(test_config()).await
    }

    /// A server with `config` (its admin key is set to [`ADMIN_KEY`]).
    pub async fn with(config: Config) -> Self {
        let server = likekit_server::spawn(Config {
            admin_key: Some(ADMIN_KEY.into()),
            ..config
        })
        .await
        .unwrap();
        Self::around(server)
    }

    /// Looks after an already running server (started with [`ADMIN_KEY`]).
    pub fn around(server: ServerHandle) -> Self {
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let admin = AdminClient::with_client(http.clone(), server.base_url(), ADMIN_KEY);
        Self {
            server,
            admin,
            http,
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// Creates users `(id, name)` and posts.
    pub async fn setup(&self, users: &[(UserId, &str)], posts: &[PostId]) {
        for &(id, name) in users {
            self.server.create_user(id, name).await.unwrap();
        }
        for &post in posts {
            self.server.create_post(post).await.unwrap();
        }
    }

    /// A token for `user`, valid for an hour.
    pub fn token(&self, user: UserId) -> String {
        self.server.mint_token(user, Duration::from_secs(3600))
    }

    /// A client builder for `user`: this server, a token, fast retries.
    pub fn builder(&self, user: UserId) -> LikeClientBuilder {
        LikeClient::builder()
            .base_url(self.base_url())
            .token_provider(StaticToken::new(self.token(user)))
            .retry_policy(fast_retries())
            .request_timeout(Duration::from_secs(15))
    }

    /// A client signed in as `user`, with fast retries.
    pub fn client(&self, user: UserId) -> LikeClient {
        self.builder(user).build().unwrap()
    }

    /// The SDK's HTTP transport signed in as `user`: the exact calls a
    /// client sends, one at a time.
    pub fn transport(&self, user: UserId) -> HttpTransport {
        HttpTransport::new(&self.base_url())
            .unwrap()
            .with_token_provider(StaticToken::new(self.token(user)))
    }

    /// Replaces the server's fault rules through `PUT /admin/faults`.
    pub async fn faults(&self, rules: Vec<FaultRule>) {
        self.admin
            .set_faults(&FaultRules::new(rules))
            .await
            .unwrap();
    }

    /// Removes every fault rule through `DELETE /admin/faults`.
    pub async fn clear_faults(&self) {
        self.admin.clear_faults().await.unwrap();
    }

    /// Every post's stored count beside its like rows; panics if any
    /// differ.
    pub async fn audit(&self) -> Vec<PostAudit> {
        let audit = self.server.store().audit().await.unwrap();
        for post in &audit {
            assert_eq!(post.count, post.rows, "post {} count != rows", post.post);
        }
        audit
    }

    /// The post's exact count on the server (checked against its rows).
    pub async fn count(&self, post: PostId) -> u64 {
        self.audit()
            .await
            .into_iter()
            .find(|a| a.post == post)
            .map(|a| a.count)
            .unwrap_or_else(|| panic!("no post {post} on the server"))
    }

    /// Whether `user` likes `post` on the server (their row).
    pub async fn liked(&self, user: UserId, post: PostId) -> bool {
        self.server.store().liked(user, &[post]).await.unwrap()[0]
    }

    /// What `GET /posts/{post}/likes` says to `user` now.
    pub async fn read_as(&self, user: UserId, post: PostId) -> PostLikes {
        self.http
            .get(format!("{}/posts/{post}/likes", self.base_url()))
            .bearer_auth(self.token(user))
            .send()
            .await
            .unwrap()
            .error_for_status()
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Requests the server answered on a public route (`like`, `unlike`,
    /// `likes`, `batch`), every status, from its `/metrics`.
    pub async fn requests(&self, route: &str) -> u64 {
        let text = self
            .http
            .get(format!("{}/metrics", self.base_url()))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let label = format!("route=\"{route}\"");
        text.lines()
            .filter(|l| l.starts_with("likekit_http_requests_total{") && l.contains(&label))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>() as u64
    }

    /// Stops the server.
    pub async fn stop(self) {
        self.server.shutdown().await.unwrap();
    }
}

/// Every event a subscription heard, in order.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    events: Arc<Mutex<Vec<LikeEvent>>>,
}

impl Recorder {
    /// Records every event of `post` on `client`; keep the subscription.
    pub fn on(client: &LikeClient, post: PostId) -> (Self, Subscription) {
        let recorder = Self::default();
        let sink = Arc::clone(&recorder.events);
        let sub = client.subscribe(post, move |e: &LikeEvent| {
            sink.lock().unwrap().push(e.clone())
        });
        (recorder, sub)
    }

    /// The events so far.
    pub fn events(&self) -> Vec<LikeEvent> {
        self.events.lock().unwrap().clone()
    }

    /// The failures so far.
    pub fn failures(&self) -> Vec<LikeFailure> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                LikeEvent::Failed(f) => Some(f),
                LikeEvent::Changed(_) => None,
            })
            .collect()
    }

    /// The views so far.
    pub fn views(&self) -> Vec<PostView> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                LikeEvent::Changed(v) => Some(v),
                LikeEvent::Failed(_) => None,
            })
            .collect()
    }
}

/// Polls `check` until it returns `true`, failing with `what` after
/// [`PATIENCE`].
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + PATIENCE;
    loop {
        if check().await {
            return;
        }
        assert!(Instant::now() < deadline, "never happened: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until the client has no call in flight or waiting to be retried.
pub async fn settle(client: &LikeClient) {
    assert!(
        client.wait_idle(PATIENCE).await,
        "the client still has calls pending after {PATIENCE:?}"
    );
}

/// Post `n`; panics if `n` is not a post id (tests only use valid ones).
pub fn post(n: u64) -> PostId {
    PostId::new(n).unwrap()
}

/// User `n`; panics if `n` is not a user id.
pub fn user(n: u64) -> UserId {
    UserId::new(n).unwrap()
}
