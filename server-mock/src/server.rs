//! Starting and stopping a server: [`spawn`] and [`ServerHandle`].

use std::{fmt, net::SocketAddr, sync::Arc, time::Duration};

use likekit_core::wire::{
    PostId, UserId,
    admin::{FaultRules, Seed},
};
use tokio::{net::TcpListener, sync::watch, task::JoinHandle};

use crate::{
    app::{App, router},
    auth::Tokens,
    config::{Config, Database},
    error::Error,
    faults,
    metrics::Metrics,
    net::{ConnInfo, KillableListener},
    store::{PostgresOptions, PostgresStore, SqliteOptions, SqliteStore, Store},
};

/// Starts a server on the current tokio runtime with the store that
/// `config.database` names (SQLite, or PostgreSQL for a `postgres://` URL),
/// and returns once it accepts connections.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use std::time::Duration;
/// let server = likekit_server::spawn(likekit_server::Config::default()).await.unwrap();
/// server.create_post(42).await.unwrap();
/// let token = server.mint_token(7, Duration::from_secs(60));
/// assert!(server.base_url().starts_with("http://127.0.0.1:"));
/// // … point a client at server.base_url() with `Authorization: Bearer {token}` …
/// server.shutdown().await.unwrap();
/// # });
/// ```
pub async fn spawn(config: Config) -> Result<ServerHandle, Error> {
    let metrics = Metrics::new();
    let store: Arc<dyn Store> = match &config.database {
        Database::Postgres(url) => Arc::new(
            PostgresStore::connect(PostgresOptions {
                url: url.clone(),
                connections: config.db_connections,
                hot_posts: config.hot_posts,
            })
            .await?,
        ),
        Database::Memory | Database::File(_) => {
            let options = SqliteOptions {
                database: config.database.clone(),
                read_connections: config.read_connections,
                max_group_commit: config.max_group_commit,
                group_commit_sizes: Some(metrics.group_commit_size.clone()),
                hot_posts: config.hot_posts,
            };
            Arc::new(
                tokio::task::spawn_blocking(move || SqliteStore::open(options))
                    .await
                    .map_err(|e| Error::Task(e.to_string()))??,
            )
        }
    };
    start(config, store, metrics).await
}

/// Like [`spawn`], but on a store of your choice (another backend, or one
/// shared with the test that starts the server). `config.database`,
/// `read_connections`, `max_group_commit`, `db_connections` and `hot_posts`
/// are not used.
pub async fn spawn_with_store(
    config: Config,
    store: Arc<dyn Store>,
) -> Result<ServerHandle, Error> {
    start(config, store, Metrics::new()).await
}

fn random_secret() -> Result<String, Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| Error::Config(format!("no randomness for a token secret: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

async fn start(
    config: Config,
    store: Arc<dyn Store>,
    metrics: Arc<Metrics>,
) -> Result<ServerHandle, Error> {
    let secret = match config.token_secret.clone().filter(|s| !s.is_empty()) {
        Some(secret) => secret,
        None => {
            tracing::warn!(
                "no token secret given: using a random one for this run; \
                 tokens minted by other runs will be refused"
            );
            random_secret()?
        }
    };
    let tokens = Tokens::new(secret.as_bytes())?;

    if let Some(seed) = &config.seed {
        store.seed(seed).await?;
        tracing::info!(
            users = seed.users.len(),
            posts = seed.posts.len(),
            "seed loaded"
        );
    }

    let app = Arc::new(App::new(&config, store.clone(), tokens, metrics));
    let router = router(app.clone(), &config)?;

    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| Error::Bind {
            addr: config.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| Error::Bind {
        addr: config.listen,
        source,
    })?;

    let (stop, stopped) = watch::channel(false);
    let stop_signal = |mut stopped: watch::Receiver<bool>| async move {
        // Also fires when the handle is dropped.
        let _ = stopped.wait_for(|stop| *stop).await;
    };

    let housekeeping = {
        let app = app.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(1));
            for tick in 0u64.. {
                every.tick().await;
                app.sweep_caches();
                if tick % 10 == 0 {
                    app.housekeeping();
                }
            }
        })
    };

    let serve = axum::serve(
        KillableListener(listener),
        router.into_make_service_with_connect_info::<ConnInfo>(),
    )
    .with_graceful_shutdown(stop_signal(stopped.clone()));
    let grace = config.shutdown_grace;
    let forced = {
        let stopped = stopped.clone();
        async move {
            stop_signal(stopped).await;
            tokio::time::sleep(grace).await;
        }
    };
    let task = tokio::spawn(async move {
        tokio::select! {
            result = serve => {
                if let Err(err) = result {
                    tracing::error!(error = %err, "server failed");
                }
            }
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
        database = %config.database,
        admin_api = app.admin_key.is_some(),
        "likekit-server listening"
    );
    Ok(ServerHandle {
        addr,
        app,
        stop,
        task: Some(task),
    })
}

/// A running server. Dropping it starts a graceful shutdown in the
/// background; [`shutdown`](Self::shutdown) waits for it to finish.
pub struct ServerHandle {
    addr: SocketAddr,
    app: Arc<App>,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<Result<(), Error>>>,
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle")
            .field("addr", &self.addr)
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

    /// A sign-in token for `user`, valid for `ttl`.
    pub fn mint_token(&self, user: UserId, ttl: Duration) -> String {
        self.app.auth.tokens().mint(user, ttl)
    }

    /// The server's token minter and checker.
    pub fn tokens(&self) -> &Tokens {
        self.app.auth.tokens()
    }

    /// The admin key, when the admin API is on.
    pub fn admin_key(&self) -> Option<&str> {
        self.app.admin_key.as_deref()
    }

    /// The server's store, for checks such as [`Store::audit`].
    pub fn store(&self) -> Arc<dyn Store> {
        self.app.store.clone()
    }

    /// Creates a user (or renames one), like `POST /admin/users`.
    pub async fn create_user(&self, user: UserId, name: &str) -> Result<(), Error> {
        self.app.store.put_user(user, name).await?;
        self.app.views.forget_all_friends();
        Ok(())
    }

    /// Creates a post, like `POST /admin/posts`.
    pub async fn create_post(&self, post: PostId) -> Result<(), Error> {
        self.app.store.put_post(post).await?;
        Ok(())
    }

    /// Replaces a user's friend list, like `PUT /admin/users/{id}/friends`.
    pub async fn set_friends(&self, user: UserId, friends: &[UserId]) -> Result<(), Error> {
        self.app.store.set_friends(user, friends).await?;
        self.app.views.forget_friends_of(user);
        Ok(())
    }

    /// Loads a seed document, like `--seed FILE`.
    pub async fn seed(&self, seed: &Seed) -> Result<(), Error> {
        self.app.store.seed(seed).await?;
        self.app.views.clear();
        Ok(())
    }

    /// Drops every like, like `POST /admin/reset`.
    pub async fn reset(&self) -> Result<(), Error> {
        self.app.store.reset().await?;
        self.app.views.clear();
        Ok(())
    }

    /// Replaces the fault rules, like `PUT /admin/faults`.
    pub fn set_faults(&self, rules: FaultRules) -> Result<(), Error> {
        faults::validate(&rules).map_err(Error::Config)?;
        self.app.faults.set(rules);
        Ok(())
    }

    /// Removes every fault rule, like `DELETE /admin/faults`.
    pub fn clear_faults(&self) {
        self.app.faults.clear();
    }

    /// Stops accepting connections, lets in-flight requests finish (up to
    /// [`Config::shutdown_grace`]), commits every accepted write, and waits
    /// until all of that is done.
    pub async fn shutdown(mut self) -> Result<(), Error> {
        self.stop.send_replace(true);
        match self.task.take() {
            Some(task) => task.await.map_err(|e| Error::Task(e.to_string()))?,
            None => Ok(()),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}
