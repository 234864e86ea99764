//! Starting and stopping a server: [`spawn`] and [`ServerHandle`].

use std::{convert::Infallible, fmt, net::SocketAddr, sync::Arc, time::Duration};

use likekit_proto::{
    PostId, UserId,
    admin::{FaultRule, FaultRules, Seed},
};
use tokio::{net::TcpListener, sync::watch, task::JoinHandle};

use crate::{auth::Tokens, config::Config, error::Error, state::App, store::Store};

/// Starts a server on the current tokio runtime with the store that
/// `config.database` names (SQLite, or PostgreSQL for a `postgres://` URL),
/// and returns once it accepts connections.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use std::time::Duration;
/// let server = likekit_server::spawn(likekit_server::Config::default()).await.unwrap();
/// use likekit_server::wire::{PostId, UserId};
/// server.create_post(PostId::new(42).unwrap()).await.unwrap();
/// let token = server.mint_token(UserId::new(7).unwrap(), Duration::from_secs(60));
/// assert!(server.base_url().starts_with("http://127.0.0.1:"));
/// // … point a client at server.base_url() with `Authorization: Bearer {token}` …
/// server.shutdown().await.unwrap();
/// # });
/// ```
pub async fn spawn(config: Config) -> Result<ServerHandle, Error> {
    match spawn_until(config, std::future::pending::<Infallible>()).await? {
        Ok(server) => Ok(server),
        Err(never) => match never {},
    }
}

/// Like [`spawn`], but the start is given up when `stop` completes first:
/// a stop signal while the start waits for a database that is not up yet
/// (`Config::db_start_wait`), for a key set, or while it loads the seed.
/// What the start had opened is closed before it returns `Ok(Err(…))`,
/// with `stop`'s output: the store (an in-memory one's temporary folder
/// removed; a seed being loaded commits whole or not at all), and no
/// listener is left bound. A SQLite store still being opened (waiting for
/// a file another process holds, at most 5 s) is closed as soon as its
/// opening ends; the runtime's shutdown waits for that.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let config = likekit_server::Config {
///     database: "postgres://likekit@127.0.0.1:1/likes".parse().unwrap(),
///     db_start_wait: std::time::Duration::from_secs(3600),
///     ..Default::default()
/// };
/// // Nothing answers on port 1: the start waits, and is stopped.
/// let stop = tokio::time::sleep(std::time::Duration::from_millis(100));
/// let started = likekit_server::spawn_until(config, stop).await.unwrap();
/// assert!(started.is_err(), "stopped before it served");
/// # });
/// ```
///
/// # Errors
///
/// As [`spawn`], when the start fails before `stop` completes.
pub async fn spawn_until<S: Future>(
    config: Config,
    stop: S,
) -> Result<Result<ServerHandle, S::Output>, Error> {
    let mut stop = std::pin::pin!(stop);
    let app = tokio::select! {
        opened = App::open(&config) => opened?,
        stopped = &mut stop => return Ok(Err(stopped)),
    };
    let store = app.store().clone();
    let started = tokio::select! {
        started = start(config, app) => started.map(Ok),
        stopped = &mut stop => Ok(Err(stopped)),
    };
    if !matches!(started, Ok(Ok(_))) {
        // A start that failed or was given up leaves nothing behind: the
        // store is closed (an in-memory one's temporary folder removed)
        // before the caller, maybe a process about to exit, goes on.
        let _ = store.close().await;
    }
    started
}

/// Like [`spawn`], but on a store of your choice (another backend, or one
/// shared with the test that starts the server). `config.database`,
/// `read_connections`, `max_group_commit`, `db_connections` and `hot_posts`
/// are not used.
pub async fn spawn_with_store(
    config: Config,
    store: Arc<dyn Store>,
) -> Result<ServerHandle, Error> {
    let app = App::new(&config, store)?;
    start(config, app).await
}

async fn start(config: Config, app: App) -> Result<ServerHandle, Error> {
    let limits = config.connections;
    limits.check()?;
    // No handler takes longer than the request timeout to produce an
    // answer's head; an answer that has not moved for that and the
    // header-read timeout more is not being read.
    let stall = config
        .request_timeout
        .checked_add(limits.header_read_timeout)
        .ok_or_else(|| {
            Error::Config(format!(
                "request_timeout ({:?}) plus the header-read timeout ({:?}) is too long",
                config.request_timeout, limits.header_read_timeout
            ))
        })?;
    if matches!(
        config.token_policy.as_ref().map(|p| &p.jwks),
        Some(crate::jwks::JwksSource::Url(_))
    ) {
        // The provider's keys before the first request: a set that cannot
        // be fetched or read stops the start (a server that answers 401 to
        // every token is not ready).
        app.load_keys().await?;
    }
    if let Some(sign_in) = app.sign_in() {
        tracing::info!("{sign_in}");
    }
    for warning in app.sign_in_warnings() {
        tracing::warn!("{warning}");
    }
    if let Some(warning) = admin_in_public(&config) {
        tracing::warn!(listen = %config.listen, "{warning}");
    }
    if let Some(seed) = &config.seed {
        app.seed(seed).await?;
        tracing::info!(
            users = seed.users.len(),
            posts = seed.posts.len(),
            "seed loaded"
        );
    }
    let router = app.router();

    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| Error::Bind {
            listener: "the public listener",
            addr: config.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| Error::Bind {
        listener: "the public listener",
        addr: config.listen,
        source,
    })?;

    let (stop, mut asked) = watch::channel(Stop::Running);
    let (drain, draining) = watch::channel(false);
    // The stop sequence: once a stop is asked (also when the handle is
    // dropped) `/readyz` answers 503; when the shutdown delay has passed,
    // or is skipped, the listeners stop accepting (`drain`).
    let delay = config.shutdown_delay;
    let stopping_app = app.clone();
    tokio::spawn(async move {
        let _ = asked.wait_for(|stop| *stop != Stop::Running).await;
        stopping_app
            .0
            .stopping
            .store(true, std::sync::atomic::Ordering::Relaxed);
        // A journal read waiting for requests answers now, rather than
        // holding the stop for its whole wait.
        stopping_app.0.journal.close_waits();
        if !delay.is_zero() {
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                Ok(_) = asked.wait_for(|stop| *stop == Stop::Now) => {}
            }
        }
        let _ = drain.send(true);
    });
    let stop_signal = |mut draining: watch::Receiver<bool>| async move {
        let _ = draining.wait_for(|drain| *drain).await;
    };

    // The operations listener, when asked for, bound before anything runs
    // so that a taken port fails the start.
    let ops = match config.ops_listen {
        Some(ops_addr) => {
            let ops_listener = TcpListener::bind(ops_addr)
                .await
                .map_err(|source| Error::Bind {
                    listener: "the operations listener",
                    addr: ops_addr,
                    source,
                })?;
            let bound = ops_listener.local_addr().map_err(|source| Error::Bind {
                listener: "the operations listener",
                addr: ops_addr,
                source,
            })?;
            Some((ops_listener, bound))
        }
        None => None,
    };
    let ops_addr = ops.as_ref().map(|(_, bound)| *bound);

    let housekeeping = tokio::spawn(app.clone().run_housekeeping());

    let serve_ops = ops.map(|(ops_listener, _)| {
        crate::net::serve_counted(
            ops_listener,
            app.ops_router(),
            limits,
            stall,
            stop_signal(draining.clone()),
            Some(app.0.metrics.ops_connections.clone()),
        )
    });
    let serve_public = crate::net::serve_counted(
        listener,
        router,
        limits,
        stall,
        stop_signal(draining.clone()),
        Some(app.0.metrics.public_connections.clone()),
    );
    // Both listeners drain together: a request in flight on either one
    // finishes (within the grace) before the store closes.
    let serve = async move {
        match serve_ops {
            Some(serve_ops) => {
                tokio::join!(serve_public, serve_ops);
            }
            None => serve_public.await,
        }
    };
    let grace = config.shutdown_grace;
    let forced = async move {
        stop_signal(draining).await;
        tokio::time::sleep(grace).await;
    };
    let store = app.store().clone();
    let task = tokio::spawn(async move {
        // Dropping `serve` when the grace runs out aborts the connections'
        // tasks (`net::serve_counted`), closing every connection left.
        tokio::select! {
            () = serve => {}
            () = forced => {
                tracing::warn!(?grace, "shutdown grace expired; dropping the remaining connections");
            }
        }
        housekeeping.abort();
        // Commit every write already handed to the store.
        store.close().await?;
        tracing::info!("server stopped");
        Ok(())
    });

    tracing::info!(
        %addr,
        ops_addr = ops_addr.map(|a| a.to_string()),
        admin_api = app.admin_key().is_some(),
        "likekit-server listening"
    );
    Ok(ServerHandle {
        addr,
        ops_addr,
        app,
        stop,
        task: Some(task),
    })
}

/// How far a stop has been asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Running,
    /// Stop, after the shutdown delay.
    AfterDelay,
    /// Stop accepting now: the rest of the delay is skipped.
    Now,
}

/// A running server. Dropping it starts a graceful shutdown in the
/// background; [`shutdown`](Self::shutdown) waits for it to finish. A test
/// should await `shutdown`: when the runtime or the process ends first, a
/// background shutdown does not finish, and an in-memory store's
/// temporary folder stays until the next in-memory store starts (which
/// removes those of processes that have ended).
pub struct ServerHandle {
    addr: SocketAddr,
    ops_addr: Option<SocketAddr>,
    app: App,
    stop: watch::Sender<Stop>,
    task: Option<JoinHandle<Result<(), Error>>>,
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle")
            .field("addr", &self.addr)
            .field("ops_addr", &self.ops_addr)
            .field("app", &self.app)
            .finish_non_exhaustive()
    }
}

impl ServerHandle {
    /// The address the server listens on (with the real port when `0` was
    /// asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://{addr}`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The operations listener's address, when `Config::ops_listen` asked
    /// for one.
    pub fn ops_addr(&self) -> Option<SocketAddr> {
        self.ops_addr
    }

    /// `http://{ops_addr}` (see [`ops_addr`](Self::ops_addr)), or the
    /// public [`base_url`](Self::base_url) when there is no operations
    /// listener: where `/metrics`, `/openapi.json` and `/admin/*` are.
    pub fn ops_url(&self) -> String {
        self.ops_addr
            .map_or_else(|| self.base_url(), |addr| format!("http://{addr}"))
    }

    /// The running server's [`App`]: its store, tokens and admin
    /// operations.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// A sign-in token for `user`, valid for `ttl` (HS256, signed with the
    /// server's token secret).
    ///
    /// With an identity provider ([`Config::token_policy`]) and no
    /// [`Config::token_secret`] the server refuses these tokens (401), as
    /// `POST /admin/tokens` then refuses to mint them (409): give a token
    /// secret as well, or sign with the provider's keys.
    /// [`App::takes_own_tokens`] tells which.
    pub fn mint_token(&self, user: UserId, ttl: Duration) -> String {
        self.app.tokens().mint(user, ttl)
    }

    /// The server's token minter and checker.
    pub fn tokens(&self) -> &Tokens {
        self.app.tokens()
    }

    /// The admin key, when the admin API is on.
    pub fn admin_key(&self) -> Option<&str> {
        self.app.admin_key()
    }

    /// The server's store, for checks such as [`Store::audit`].
    pub fn store(&self) -> Arc<dyn Store> {
        self.app.store().clone()
    }

    /// Creates a user (or renames one), like `POST /admin/users`.
    ///
    /// # Errors
    ///
    /// As [`App::create_user`].
    pub async fn create_user(&self, user: UserId, name: &str) -> Result<(), Error> {
        self.app.create_user(user, name).await
    }

    /// Creates a post, like `POST /admin/posts`.
    ///
    /// # Errors
    ///
    /// As [`App::create_post`].
    pub async fn create_post(&self, post: PostId) -> Result<(), Error> {
        self.app.create_post(post).await
    }

    /// Replaces a user's friend list, like `PUT /admin/users/{id}/friends`.
    ///
    /// # Errors
    ///
    /// As [`App::set_friends`].
    pub async fn set_friends(&self, user: UserId, friends: &[UserId]) -> Result<(), Error> {
        self.app.set_friends(user, friends).await
    }

    /// Loads a seed document, like `--seed FILE`.
    ///
    /// # Errors
    ///
    /// As [`App::seed`].
    pub async fn seed(&self, seed: &Seed) -> Result<(), Error> {
        self.app.seed(seed).await
    }

    /// Drops every like, like `POST /admin/reset`.
    ///
    /// # Errors
    ///
    /// As [`App::reset`].
    pub async fn reset(&self) -> Result<(), Error> {
        self.app.reset().await
    }

    /// Replaces the fault rules, like `PUT /admin/faults`; returns them as
    /// stored, with the seed in use (put it in a failing test to replay
    /// it). As [`App::set_faults`].
    ///
    /// # Errors
    ///
    /// As [`App::set_faults`].
    pub fn set_faults(&self, rules: FaultRules) -> Result<FaultRules, Error> {
        self.app.set_faults(rules)
    }

    /// The fault rules in force, with their seed and what each has used
    /// up, like `GET /admin/faults`. As [`App::faults`].
    pub fn faults(&self) -> FaultRules {
        self.app.faults()
    }

    /// The fault rules in force tagged `tag`, like
    /// `GET /admin/faults?tag=…`.
    ///
    /// # Errors
    ///
    /// As [`App::faults_tagged`].
    pub fn faults_tagged(&self, tag: &str) -> Result<FaultRules, Error> {
        self.app.faults_tagged(tag)
    }

    /// Adds fault rules after those in force, like `POST /admin/faults`.
    ///
    /// # Errors
    ///
    /// As [`App::add_faults`].
    pub fn add_faults(&self, rules: Vec<FaultRule>) -> Result<FaultRules, Error> {
        self.app.add_faults(rules)
    }

    /// Removes every fault rule, like `DELETE /admin/faults`.
    pub fn clear_faults(&self) {
        self.app.clear_faults();
    }

    /// Removes the fault rules tagged `tag`, like
    /// `DELETE /admin/faults?tag=…`; returns the rules left.
    ///
    /// # Errors
    ///
    /// As [`App::clear_faults_tagged`].
    pub fn clear_faults_tagged(&self, tag: &str) -> Result<FaultRules, Error> {
        self.app.clear_faults_tagged(tag)
    }

    /// The request journal's entries `filter` matches, like
    /// `GET /admin/requests`: what the client *sent*. As [`App::requests`].
    pub fn requests(
        &self,
        filter: &likekit_proto::admin::RequestFilter,
    ) -> likekit_proto::admin::Journal {
        self.app.requests(filter)
    }

    /// Removes the journal's entries `filter` matches, like
    /// `DELETE /admin/requests`. As [`App::clear_requests`].
    pub fn clear_requests(&self, filter: &likekit_proto::admin::RequestFilter) -> usize {
        self.app.clear_requests(filter)
    }

    /// Starts a graceful stop without waiting for it: `/readyz` answers 503
    /// from now on and the listeners stop accepting after
    /// [`Config::shutdown_delay`]. [`shutdown`](Self::shutdown) (which
    /// starts it too) waits for the end; asking twice changes nothing.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use std::time::Duration;
    /// let config = likekit_server::Config {
    ///     shutdown_delay: Duration::from_secs(60),
    ///     ..Default::default()
    /// };
    /// let server = likekit_server::spawn(config).await.unwrap();
    /// server.begin_shutdown();      // readiness fails, serving goes on…
    /// server.skip_shutdown_delay(); // …until now (a second SIGTERM)
    /// server.shutdown().await.unwrap();
    /// # });
    /// ```
    pub fn begin_shutdown(&self) {
        self.stop.send_if_modified(|stop| {
            let asked = *stop == Stop::Running;
            if asked {
                *stop = Stop::AfterDelay;
            }
            asked
        });
    }

    /// Stops accepting at once, skipping what is left of
    /// [`Config::shutdown_delay`] (a stop that was not begun begins);
    /// in-flight requests still have [`Config::shutdown_grace`]. See
    /// [`begin_shutdown`](Self::begin_shutdown) for an example.
    pub fn skip_shutdown_delay(&self) {
        self.stop.send_replace(Stop::Now);
    }

    /// Marks the server as stopping (`/readyz` answers 503), keeps serving
    /// for [`Config::shutdown_delay`], then stops accepting connections,
    /// lets in-flight requests finish (up to [`Config::shutdown_grace`]),
    /// commits every accepted write, and waits until all of that is done.
    pub async fn shutdown(mut self) -> Result<(), Error> {
        self.begin_shutdown();
        match self.task.take() {
            Some(task) => task.await.map_err(|e| Error::Task(e.to_string()))?,
            None => Ok(()),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.begin_shutdown();
    }
}

/// The warning for an admin API served on a public listener that is not
/// loopback, if the configuration asks for one.
fn admin_in_public(config: &Config) -> Option<&'static str> {
    let key = config
        .admin_key
        .as_deref()
        .is_some_and(|key| !key.is_empty());
    (key && config.ops_listen.is_none() && !config.listen.ip().is_loopback()).then_some(
        "the admin API (with /metrics and /openapi.json) is on the public listener, \
         guarded by the admin key alone: give --ops-listen an address only operators \
         reach (and no admin key to a server that is not a test mock)",
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The admin API on a listener other hosts reach, without an
    /// operations listener, is warned of; on loopback, apart, or off, not.
    #[test]
    fn an_admin_api_on_a_public_listener_is_warned_of() {
        let config = |listen: &str, admin_key: Option<&str>, ops: Option<&str>| Config {
            listen: listen.parse().unwrap(),
            admin_key: admin_key.map(str::to_owned),
            ops_listen: ops.map(|ops| ops.parse().unwrap()),
            ..Config::default()
        };
        assert!(admin_in_public(&config("0.0.0.0:8080", Some("k"), None)).is_some());
        assert!(admin_in_public(&config("[::]:8080", Some("k"), None)).is_some());
        assert!(admin_in_public(&config("10.0.0.5:8080", Some("k"), None)).is_some());
        for quiet in [
            config("127.0.0.1:8080", Some("k"), None),
            config("[::1]:8080", Some("k"), None),
            config("0.0.0.0:8080", Some("k"), Some("127.0.0.1:9090")),
            config("0.0.0.0:8080", None, None),
            config("0.0.0.0:8080", Some(""), None),
        ] {
            assert_eq!(admin_in_public(&quiet), None, "{:?}", quiet.listen);
        }
    }

    /// A library caller's huge timeouts are a configuration error, not an
    /// overflow panic.
    #[tokio::test]
    async fn timeouts_too_long_to_add_are_a_config_error() {
        let config = Config {
            request_timeout: Duration::MAX,
            ..Config::default()
        };
        let err = spawn(config).await.unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{err}");
        assert!(err.to_string().contains("too long"), "{err}");
    }
}
