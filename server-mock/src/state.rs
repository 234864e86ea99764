//! The state every handler shares: [`App`].
//!
//! Handlers import this module; the router ([`crate::routes`]) imports the
//! handlers. Nothing here knows a route.

use std::{fmt, path::PathBuf, sync::Arc, time::Duration};

use axum::http::{HeaderName, HeaderValue, Method, header};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter, clock::Clock};
use likekit_proto::{
    PostId, UserId,
    admin::{FaultRule, FaultRules, Seed},
};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::{
    auth::{Authenticator, Tokens},
    config::Config,
    error::{ApiError, Error},
    faults::{self, Faults},
    journal::Journal,
    metrics::Metrics,
    store::{Database, Store},
    views::Views,
};

/// The server's shared state — store, caches, sign-in, fault rules, rate
/// limit, metrics — and the source of its HTTP routes, without a listener.
///
/// [`spawn`](crate::spawn) builds one and serves [`App::router`]; build one
/// yourself to embed the API in your own axum application, to serve it on a
/// listener of your choice, or to drive requests in process:
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use likekit_server::{App, Config};
///
/// let config = Config { token_secret: Some("dev-secret".into()), ..Config::default() };
/// let app = App::open(&config).await.unwrap();          // the store config.database names
/// let router: axum::Router = app.router();               // every route, every middleware
/// tokio::spawn(app.clone().run_housekeeping());          // cache sweeps, once a second
/// let token = app.tokens().mint(likekit_server::wire::UserId::MIN, std::time::Duration::from_secs(60));
/// // … serve `router` (see `likekit_server::net`) or call it with `tower::ServiceExt::oneshot` …
/// # let _ = (router, token);
/// app.store().close().await.unwrap();                    // commit every accepted write
/// # });
/// ```
///
/// Cloning is cheap (one reference count); every clone is the same server.
#[derive(Clone)]
pub struct App(pub(crate) Arc<Shared>);

/// The shortest token secret taken without a warning: 256 bits, an
/// HS256 key's own size (RFC 7518, 3.2).
const MIN_SECRET_BYTES: usize = 32;

/// What an [`App`] holds.
pub(crate) struct Shared {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) views: Views,
    pub(crate) auth: Authenticator,
    pub(crate) faults: Faults,
    /// The request journal: on with an admin key (`journal_size` entries).
    pub(crate) journal: Journal,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) limiter: Option<DefaultKeyedRateLimiter<UserId>>,
    pub(crate) admin_key: Option<String>,
    pub(crate) request_timeout: Duration,
    pub(crate) max_body_bytes: usize,
    pub(crate) cors: Option<CorsLayer>,
    pub(crate) web_root: Option<PathBuf>,
    /// The operations routes are served on a listener of their own.
    pub(crate) ops_apart: bool,
    /// The last `/readyz` answer was 503 (its reason logged once, and its
    /// end logged when the store answers again).
    pub(crate) not_ready: std::sync::atomic::AtomicBool,
    /// Set once a stop is asked: `/readyz` answers 503 from then on.
    pub(crate) stopping: std::sync::atomic::AtomicBool,
    /// Whether the server takes the HS256 tokens it mints: without an
    /// identity provider always; with one only when a token secret was
    /// given.
    pub(crate) takes_own_tokens: bool,
    /// A token secret was given (not made at random).
    pub(crate) secret_given: bool,
    /// The token secret's length in bytes.
    pub(crate) secret_len: usize,
}

impl fmt::Debug for App {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("App")
            .field("store", &self.0.store)
            .field("views", &self.0.views)
            .field("admin", &self.0.admin_key.is_some())
            .finish_non_exhaustive()
    }
}

fn random_secret() -> Result<String, Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| Error::Config(format!("no randomness for a token secret: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The store `config.database` names, its group-commit sizes reported to
/// `metrics`; the log says which store it is, once.
async fn open_store(config: &Config, metrics: &Metrics) -> Result<Arc<dyn Store>, Error> {
    let store = open_store_quietly(config, metrics).await?;
    match &config.database {
        Database::Memory => tracing::info!(
            "store: SQLite in memory (a temporary folder, deleted when the server stops)"
        ),
        Database::File(path) => {
            let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            tracing::info!("store: SQLite file {}", path.display());
        }
        #[cfg(feature = "postgres")]
        Database::Postgres(url) => {
            tracing::info!("store: PostgreSQL {}", crate::store::postgres_target(url));
        }
        #[allow(unreachable_patterns)]
        _ => {}
    }
    Ok(store)
}

async fn open_store_quietly(config: &Config, metrics: &Metrics) -> Result<Arc<dyn Store>, Error> {
    match &config.database {
        #[cfg(feature = "postgres")]
        Database::Postgres(url) => Ok(Arc::new(connect_postgres(config, url).await?)),
        #[cfg(feature = "sqlite")]
        Database::Memory | Database::File(_) => {
            let options = crate::store::SqliteOptions {
                database: config.database.clone(),
                read_connections: config.read_connections,
                max_group_commit: config.max_group_commit,
                group_commit_sizes: Some(metrics.group_commit_sizes()),
                hot_posts: config.hot_posts,
            };
            // A start given up meanwhile (`spawn_until`) no longer waits
            // for the store: it is closed here once it is open, on the
            // blocking thread, which the runtime's shutdown waits for.
            let (opened, taken) = tokio::sync::oneshot::channel();
            let runtime = tokio::runtime::Handle::current();
            tokio::task::spawn_blocking(move || {
                let store = crate::store::SqliteStore::open(options);
                if let Err(Ok(store)) = opened.send(store) {
                    let _ = runtime.block_on(store.close());
                }
            });
            Ok(Arc::new(taken.await.map_err(|_| {
                Error::Task("the SQLite store's opening ended without an answer".into())
            })??))
        }
        #[allow(unreachable_patterns)]
        other => {
            let _ = metrics;
            Err(Error::Config(format!(
                "this server was built without the store for {other} \
                 (cargo features `sqlite`, `postgres`)"
            )))
        }
    }
}

/// Whether a failure to connect to PostgreSQL may pass if the start waits:
/// the server is not there yet (refused, timed out, its name not known
/// yet) or is starting up. Other failures (a password, TLS, a missing
/// database) will not.
#[cfg(feature = "postgres")]
fn not_up_yet(err: &crate::store::StoreError) -> bool {
    let text = err.to_string().to_ascii_lowercase();
    [
        "connection refused",
        "timed out",
        "timeout",
        "starting up",
        "lookup address",
        "no route to host",
        "network is unreachable",
    ]
    .iter()
    .any(|sign| text.contains(sign))
}

/// The PostgreSQL store, tried again while the server is not up yet, up to
/// `config.db_start_wait`, with a growing pause (0.25 s, doubling to 3 s,
/// plus up to as much again at random) and a log line per try.
#[cfg(feature = "postgres")]
async fn connect_postgres(
    config: &Config,
    url: &str,
) -> Result<crate::store::PostgresStore, Error> {
    use backon::BackoffBuilder as _;
    let connect = || {
        crate::store::PostgresStore::connect(crate::store::PostgresOptions {
            url: url.to_owned(),
            connections: config.db_connections,
            hot_posts: config.hot_posts,
            layout: crate::store::Layout::Auto,
            direct_to_workers: config.citus_direct,
            ca_file: config.db_ca_file.clone(),
        })
    };
    let wait = config.db_start_wait;
    let deadline = tokio::time::Instant::now() + wait;
    let mut pauses = backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(250))
        .with_max_delay(Duration::from_secs(3))
        .with_jitter()
        .without_max_times()
        .build();
    let mut tries = 1_u32;
    loop {
        let err = match connect().await {
            Ok(store) => return Ok(store),
            Err(err) => err,
        };
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if wait.is_zero() || !not_up_yet(&err) {
            return Err(err.into());
        }
        if left.is_zero() {
            return Err(Error::Store(crate::store::StoreError::Backend(format!(
                "PostgreSQL was not up after waiting {}s ({tries} tries): {err}",
                wait.as_secs()
            ))));
        }
        let pause = pauses.next().unwrap_or(Duration::from_secs(5)).min(left);
        tracing::warn!(
            tries,
            "PostgreSQL is not up yet ({err}); trying again in {:.1}s \
             (waiting up to {}s in all, {}s left)",
            pause.as_secs_f64(),
            wait.as_secs(),
            left.as_secs()
        );
        tokio::time::sleep(pause).await;
        tries += 1;
    }
}

fn cors_layer(origins: &[String]) -> Result<Option<CorsLayer>, Error> {
    if origins.is_empty() {
        return Ok(None);
    }
    let origins = origins
        .iter()
        .map(|origin| {
            crate::config::cors_origin(origin)
                .map_err(|why| Error::Config(format!("bad CORS origin: {why}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    tracing::info!("CORS: browser origins allowed: {}", origins.join(", "));
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        let values = origins
            .iter()
            .map(|origin| {
                HeaderValue::from_str(origin)
                    .map_err(|_| Error::Config(format!("bad CORS origin {origin:?}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        AllowOrigin::list(values)
    };
    Ok(Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([Method::GET, Method::POST, Method::PUT, Method::DELETE])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                HeaderName::from_static("x-admin-key"),
                crate::logs::REQUEST_ID.clone(),
            ])
            .expose_headers([
                header::RETRY_AFTER,
                header::WWW_AUTHENTICATE,
                crate::logs::REQUEST_ID.clone(),
            ])
            .max_age(Duration::from_secs(600)),
    ))
}

impl App {
    /// Opens the store `config.database` names (SQLite, or PostgreSQL for a
    /// `postgres://` URL; created or migrated as needed) and builds the app
    /// on it. Does not load `config.seed` (see [`App::seed`]).
    ///
    /// # Errors
    ///
    /// [`Error::Store`] when the database cannot be opened;
    /// [`Error::Config`] as for [`App::new`], or for a database kind this
    /// build leaves out (the `sqlite` and `postgres` features).
    pub async fn open(config: &Config) -> Result<Self, Error> {
        let metrics = Metrics::new();
        let store = open_store(config, &metrics).await?;
        match Self::with_metrics(config, store.clone(), metrics) {
            Ok(app) => Ok(app),
            Err(err) => {
                // Closed before it is dropped: an in-memory store's
                // temporary folder is gone before the caller (maybe a
                // process about to exit) sees the error.
                let _ = store.close().await;
                Err(err)
            }
        }
    }

    /// Builds the app on a store of your choice (another backend, or one
    /// shared with a test). `config.database`, `read_connections`,
    /// `max_group_commit`, `db_connections` and `hot_posts` are not used;
    /// without `config.token_secret` a random secret is made (and the log
    /// says so).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a CORS origin that is not a header value, a
    /// web root that is not a folder, or no randomness for a secret.
    pub fn new(config: &Config, store: Arc<dyn Store>) -> Result<Self, Error> {
        Self::with_metrics(config, store, Metrics::new())
    }

    fn with_metrics(
        config: &Config,
        store: Arc<dyn Store>,
        metrics: Arc<Metrics>,
    ) -> Result<Self, Error> {
        let secret = match config.token_secret.clone().filter(|s| !s.is_empty()) {
            Some(secret) => secret,
            // With an identity provider and no secret, HS256 is off: the
            // random secret signs nothing the server takes.
            None if config.token_policy.is_some() => random_secret()?,
            None => {
                tracing::warn!(
                    "sign-in: HS256 tokens, no token secret given: using a random one \
                     for this run; tokens minted by other runs will be refused"
                );
                random_secret()?
            }
        };
        let tokens = Tokens::new(secret.as_bytes())?;
        let secret_given = config
            .token_secret
            .as_deref()
            .is_some_and(|s| !s.is_empty());
        let takes_own_tokens = config.token_policy.is_none() || secret_given;
        if let Some(root) = &config.web_root
            && !root.is_dir()
        {
            return Err(Error::Config(format!(
                "the web root {} is not a folder",
                root.display()
            )));
        }
        let limiter = config.write_rate_limit.map(|limit| {
            RateLimiter::keyed(Quota::per_second(limit.per_second).allow_burst(limit.burst))
        });
        Ok(Self(Arc::new(Shared {
            views: Views::new(
                store.clone(),
                (config.cache_ttl, config.cache_capacity),
                (config.friends_ttl, config.friends_cache_bytes),
            ),
            store,
            auth: match &config.token_policy {
                Some(policy) => Authenticator::with_jwks(
                    tokens,
                    crate::jwks::Jwks::open(policy.clone())?,
                    takes_own_tokens,
                ),
                None => Authenticator::new(tokens),
            },
            faults: Faults::default(),
            journal: Journal::new(
                if config.admin_key.as_deref().is_some_and(|k| !k.is_empty()) {
                    config.journal_size
                } else {
                    0
                },
            ),
            metrics,
            limiter,
            admin_key: config.admin_key.clone().filter(|k| !k.is_empty()),
            request_timeout: config.request_timeout,
            max_body_bytes: config.max_body_bytes,
            cors: cors_layer(&config.cors_origins)?,
            web_root: config.web_root.clone(),
            ops_apart: config.ops_listen.is_some(),
            not_ready: std::sync::atomic::AtomicBool::new(false),
            stopping: std::sync::atomic::AtomicBool::new(false),
            takes_own_tokens,
            secret_given,
            secret_len: secret.len(),
        })))
    }

    /// The token minter and checker this app signs users in with.
    ///
    /// With an identity provider (`config.token_policy`) and no
    /// `config.token_secret`, the app refuses the HS256 tokens this mints
    /// (see [`takes_own_tokens`](Self::takes_own_tokens)).
    pub fn tokens(&self) -> &Tokens {
        self.0.auth.tokens()
    }

    /// The store behind the app. Close it ([`Store::close`]) when you stop
    /// serving, so every accepted write is committed.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.0.store
    }

    /// The admin key, when the admin API is on.
    pub fn admin_key(&self) -> Option<&str> {
        self.0.admin_key.as_deref()
    }

    /// Whether the app takes the HS256 tokens [`tokens`](Self::tokens)
    /// mints: always without an identity provider; with one
    /// (`config.token_policy`) only when `config.token_secret` was given.
    pub fn takes_own_tokens(&self) -> bool {
        self.0.takes_own_tokens
    }

    /// Reads the identity provider's key set now (when there is one), puts
    /// it in force, and forgets the tokens remembered as verified if it
    /// changed. [`spawn`](crate::spawn) calls it before it listens, so a
    /// key set at a URL is in force for the first request; an embedding
    /// application with a URL key set should call it before it serves.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the set cannot be fetched or read, or is not
    /// a usable key set; the keys in force (if any) stay.
    pub async fn load_keys(&self) -> Result<(), Error> {
        let Some(jwks) = &self.0.auth.jwks else {
            return Ok(());
        };
        let changed = jwks
            .refresh()
            .await
            .map_err(|e| Error::Config(format!("the key set: {e}")))?;
        if changed {
            self.0.auth.forget();
            tracing::info!(?jwks, "the key set changed");
        }
        Ok(())
    }

    /// The sign-in in use, said once at start by [`spawn`](crate::spawn):
    /// the identity provider's key set (source, keys, issuer, audience)
    /// and whether HS256 tokens are taken too; or HS256 alone. `None` for
    /// HS256 with a random secret, which [`App::new`] already warned of.
    pub(crate) fn sign_in(&self) -> Option<String> {
        let hs256 = if self.0.takes_own_tokens {
            "HS256 tokens signed with the token secret are taken too"
        } else {
            "HS256 tokens are refused (no token secret)"
        };
        match &self.0.auth.jwks {
            Some(jwks) => {
                let policy = jwks.policy();
                let source = &policy.jwks;
                let keys = jwks.key_count();
                Some(format!(
                    "sign-in: tokens signed by the key set {source} ({keys} key{}, read \
                     again every {}s), issuer {}, audience {}; {hs256}",
                    if keys == 1 { "" } else { "s" },
                    policy.refresh.as_secs(),
                    policy.issuer.as_deref().unwrap_or("not checked"),
                    policy.audience.as_deref().unwrap_or("not checked"),
                ))
            }
            None if self.0.secret_given => {
                Some("sign-in: HS256 tokens signed with the token secret".into())
            }
            None => None,
        }
    }

    /// What the sign-in in use leaves open, said as warnings at start: a
    /// key set whose tokens are taken for any audience (a token the
    /// provider issued to another of its applications signs its user in
    /// here), and a token secret too short to resist a guess from any
    /// token it signed.
    pub(crate) fn sign_in_warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if let Some(jwks) = &self.0.auth.jwks
            && jwks.policy().audience.is_none()
        {
            warnings.push(
                "sign-in: tokens are taken whatever their audience (aud): any token the \
                 key set's provider signed for another application signs its user in \
                 here; give --token-audience"
                    .to_owned(),
            );
        }
        if self.0.secret_given && self.0.secret_len < MIN_SECRET_BYTES {
            let len = self.0.secret_len;
            warnings.push(format!(
                "sign-in: the token secret is {len} byte{}; an HS256 secret shorter than \
                 {MIN_SECRET_BYTES} bytes can be found from any token it signed (use at \
                 least {MIN_SECRET_BYTES} random bytes, or an identity provider)",
                if len == 1 { "" } else { "s" }
            ));
        }
        warnings
    }

    /// Reads the identity provider's key set again (when there is one),
    /// and forgets the tokens remembered as verified if it changed; when
    /// it cannot be read, the keys in force stay (and the log says so).
    pub async fn refresh_keys(&self) {
        if let Err(err) = self.load_keys().await {
            tracing::warn!(error = %err, "the key set could not be read again; the keys in force stay");
        }
    }

    /// Sweeps expired cache entries every second, reads the identity
    /// provider's key set again when it is due, and trims rate-limit and
    /// metrics state every ten; never returns. [`spawn`](crate::spawn) runs
    /// it; an embedding application should spawn it beside its server
    /// (without it, full caches stop taking new entries).
    pub async fn run_housekeeping(self) {
        let mut every = tokio::time::interval(Duration::from_secs(1));
        for tick in 0u64.. {
            every.tick().await;
            if self
                .0
                .auth
                .jwks
                .as_ref()
                .is_some_and(crate::jwks::Jwks::due)
            {
                let app = self.clone();
                tokio::spawn(async move { app.refresh_keys().await });
            }
            self.0.views.sweep();
            self.0.auth.sweep();
            if tick % 10 == 0 {
                if let Some(limiter) = &self.0.limiter {
                    limiter.retain_recent();
                    limiter.shrink_to_fit();
                }
                self.0.metrics.upkeep();
            }
        }
    }

    /// Creates a user (or renames one), like `POST /admin/users`.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] for a bad name or a database failure.
    pub async fn create_user(&self, user: UserId, name: &str) -> Result<(), Error> {
        self.0.store.put_user(user, name).await?;
        self.0.views.forget_all_friends();
        Ok(())
    }

    /// Creates a post, like `POST /admin/posts`.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] for a database failure.
    pub async fn create_post(&self, post: PostId) -> Result<(), Error> {
        self.0.store.put_post(post).await?;
        Ok(())
    }

    /// Replaces a user's friend list, like `PUT /admin/users/{id}/friends`.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] when the user or a friend does not exist, or the
    /// list is too long.
    pub async fn set_friends(&self, user: UserId, friends: &[UserId]) -> Result<(), Error> {
        self.0.store.set_friends(user, friends).await?;
        self.0.views.forget_friends_of(user);
        Ok(())
    }

    /// Loads a seed document, like `--seed FILE` (idempotent).
    ///
    /// # Errors
    ///
    /// [`Error::Store`] for a broken rule or a friend that is not a user.
    pub async fn seed(&self, seed: &Seed) -> Result<(), Error> {
        self.0.store.seed(seed).await?;
        self.0.views.clear();
        Ok(())
    }

    /// Drops every like, like `POST /admin/reset`.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] for a database failure.
    pub async fn reset(&self) -> Result<(), Error> {
        self.0.store.reset().await?;
        self.0.views.clear();
        Ok(())
    }

    /// Replaces the fault rules, like `PUT /admin/faults`, and returns
    /// them as stored, as `PUT` answers: with the seed in use (the one
    /// given, or the one picked now, to replay a failing run with) and
    /// every counter at 0.
    ///
    /// ```
    /// use likekit_server::{App, Config, wire::admin::{FaultRoute, FaultRule, FaultRules}};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let app = App::open(&Config::default()).await.unwrap();
    /// let train = FaultRules::new(vec![FaultRule {
    ///     probability: 0.2,
    ///     error_rate: 1.0,
    ///     ..FaultRule::new(FaultRoute::All)
    /// }]);
    /// let seed = app.set_faults(train.clone()).unwrap().seed;
    /// // A failing run is replayed with its seed.
    /// let replay = FaultRules { seed, ..train };
    /// assert_eq!(app.set_faults(replay).unwrap().seed, seed);
    /// assert_eq!(app.faults().seed, seed);
    /// # app.store().close().await.unwrap();
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a rule out of range, as `PUT` refuses it (a
    /// `slow_body` pause, or an action's latency, at or above the request
    /// timeout among them).
    pub fn set_faults(&self, rules: FaultRules) -> Result<FaultRules, Error> {
        self.0.check_fault_rules(&rules).map_err(Error::Config)?;
        Ok(self.0.faults.set(rules))
    }

    /// The fault rules in force, like `GET /admin/faults`: as they were
    /// put, with their seed and what each has used up (`state`).
    pub fn faults(&self) -> FaultRules {
        self.0.faults.get()
    }

    /// The fault rules in force tagged `tag`, like
    /// `GET /admin/faults?tag=…`: a test sharing the server reads its own,
    /// with what each has used up, and the seed.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a tag that is not 1 to 64 visible ASCII
    /// characters.
    pub fn faults_tagged(&self, tag: &str) -> Result<FaultRules, Error> {
        likekit_proto::admin::check_tag(tag)
            .map_err(|rule| Error::Config(format!("tag: {rule}")))?;
        Ok(self.0.faults.get_tagged(tag))
    }

    /// Adds `rules` after those in force, like `POST /admin/faults`: the
    /// rules in force keep their counters, their draws and the seed.
    /// Returns every rule now in force, the added ones last.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the rules in force and these would be more
    /// than [`MAX_RULES`](crate::faults::MAX_RULES) (checked first, as
    /// `POST` does), or for a rule out of range, as `POST` refuses it;
    /// nothing is added.
    pub fn add_faults(&self, rules: Vec<FaultRule>) -> Result<FaultRules, Error> {
        self.0
            .faults
            .check_room(rules.len())
            .map_err(|too_many| Error::Config(too_many.to_string()))?;
        let rules = FaultRules::new(rules);
        self.0.check_fault_rules(&rules).map_err(Error::Config)?;
        self.0
            .faults
            .add(rules.rules)
            .map_err(|too_many| Error::Config(too_many.to_string()))
    }

    /// Removes every fault rule, like `DELETE /admin/faults`.
    pub fn clear_faults(&self) {
        self.0.faults.clear();
    }

    /// Removes the fault rules tagged `tag`, like
    /// `DELETE /admin/faults?tag=…`; the others keep their counters, their
    /// draws and the seed. Returns the rules left.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a tag that is not 1 to 64 visible ASCII
    /// characters.
    pub fn clear_faults_tagged(&self, tag: &str) -> Result<FaultRules, Error> {
        likekit_proto::admin::check_tag(tag)
            .map_err(|rule| Error::Config(format!("tag: {rule}")))?;
        Ok(self.0.faults.remove_tagged(tag).1)
    }

    /// The request journal's entries `filter` matches, oldest first, like
    /// `GET /admin/requests`. The journal is on with an admin key (and a
    /// `journal_size` above 0); off, it holds nothing.
    pub fn requests(
        &self,
        filter: &likekit_proto::admin::RequestFilter,
    ) -> likekit_proto::admin::Journal {
        self.0.journal.read(filter)
    }

    /// Removes the journal's entries `filter` matches, like
    /// `DELETE /admin/requests`: a test sharing the server removes its own;
    /// the default filter empties the journal. Returns how many went.
    pub fn clear_requests(&self, filter: &likekit_proto::admin::RequestFilter) -> usize {
        self.0.journal.remove(filter)
    }
}

impl Shared {
    /// What `PUT` and `POST /admin/faults` (and their in-process twins)
    /// check of fault rules: their ranges, tags and actions, and a
    /// `slow_body` pause, or an action's latency, below this server's
    /// request timeout.
    pub(crate) fn check_fault_rules(&self, rules: &FaultRules) -> Result<(), String> {
        faults::validate(rules).and_then(|()| faults::check_pauses(rules, self.request_timeout))
    }

    /// Takes one write from `user`'s allowance, or says when to come back.
    pub(crate) fn check_rate(&self, user: UserId) -> Result<(), ApiError> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        limiter.check_key(&user).map_err(|not_until| {
            self.metrics.rate_limited.increment(1);
            let wait = not_until.wait_time_from(limiter.clock().now());
            ApiError::rate_limited(wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn cors_origins_must_be_header_values() {
        assert!(cors_layer(&[]).unwrap().is_none());
        assert!(cors_layer(&["http://a.example".into()]).unwrap().is_some());
        assert!(cors_layer(&["*".into()]).unwrap().is_some());
        assert!(cors_layer(&["bad\norigin".into()]).is_err());
    }
}
