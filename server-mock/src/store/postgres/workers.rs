//! Straight to the worker (Citus): where each post's rows live, and a pool
//! of connections to each worker, so that a like, an unlike and a view's
//! one-post reads go to the worker that holds the post rather than through
//! the coordinator.
//!
//! Citus places a row by a hash of its distribution column — for the
//! `bigint` post id, PostgreSQL's `hashint8` ([`hashint8`]) — which falls in
//! one shard's `[shardminvalue, shardmaxvalue]` range in `pg_dist_shard`;
//! the shard's placement names its worker. [`Workers::connect`] reads that
//! map (every node holds Citus's metadata, so the store may be connected to
//! the coordinator or to a worker), and it is read again every
//! [`REFRESH`].
//!
//! A map gone stale costs speed, never correctness: a worker that is sent a
//! statement for a post it does not hold passes it on to the worker that
//! does, as Citus does for any query that reaches a worker (a like's or an
//! unlike's call runs where it is sent, each of its statements passed on).
//! A worker the server cannot reach (a connection to it cannot be opened:
//! refused, timed out, its name unknown, its TLS or sign-in refused) turns
//! direct routing off until the next refresh; everything then goes through
//! the store's own pool, as without this module. So does a cluster whose
//! `posts` is not distributed (yet): the map is empty until the layout is
//! applied, and the refresh that first finds shards starts direct routing.
//! A worker that is only busy (every connection of its pool taken past the
//! pool's wait) is not unreachable: that request fails as load (503, tried
//! again by its client), and every post keeps going straight to its worker
//! ([`unreachable()`]).
//!
//! A worker's connections are made as the store's own: the same user,
//! password, database, options, TLS mode and connector, channel binding
//! and timeouts; only host and port differ ([`worker_config`]).

use std::{
    collections::HashMap,
    sync::{Arc, RwLock, Weak},
    time::Duration,
};

use deadpool_postgres::{PoolError, TimeoutType};
use tokio_postgres::error::SqlState;

use super::{Held, Lane, PoolStatus, StoreError, Tls, connection_pool, pool_status};

/// How often the map is read again (a rebalance moves shards while
/// servers run).
pub(super) const REFRESH: Duration = Duration::from_secs(30);

/// The shard ranges of `posts` (its shards' placements are its co-located
/// tables' too) and the worker holding each. Only hash-distributed shards
/// have a range: a reference table's or a Citus local table's shard has
/// none (NULL) and places nothing, so the map stays empty.
const PLACEMENTS: &str = "
SELECT s.shardminvalue::integer, s.shardmaxvalue::integer, n.nodename, n.nodeport
FROM pg_dist_shard s
JOIN pg_dist_placement p ON p.shardid = s.shardid
JOIN pg_dist_node n ON n.groupid = p.groupid
WHERE s.logicalrelid = 'posts'::regclass AND n.noderole = 'primary' AND n.isactive
  AND s.shardminvalue IS NOT NULL AND s.shardmaxvalue IS NOT NULL
ORDER BY 1
";

/// PostgreSQL's `hashint8`: the hash by which Citus places a `bigint`
/// distribution column (its shards split the `i32` range).
///
/// ```text
/// SELECT hashint8(42) → 1509752520
/// ```
pub fn hashint8(value: i64) -> i32 {
    // The low word, folded with the high one so that values that fit in
    // 32 bits hash as `hashint4` does (PostgreSQL's cross-type rule).
    let low = value as u32;
    let high = (value >> 32) as u32;
    let folded = if value >= 0 { low ^ high } else { low ^ !high };
    hash_uint32(folded) as i32
}

/// PostgreSQL's `hash_bytes_uint32`: Bob Jenkins' lookup3 `final` mix of
/// one 32-bit word.
fn hash_uint32(k: u32) -> u32 {
    let start = 0x9e37_79b9_u32.wrapping_add(4).wrapping_add(3_923_095);
    let (mut a, mut b, mut c) = (start.wrapping_add(k), start, start);
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c.wrapping_sub(b.rotate_left(24))
}

/// One reading of the placement map.
#[derive(Default)]
struct Map {
    /// (lowest hash, highest hash, index into `pools`), by lowest hash.
    shards: Vec<(i32, i32, usize)>,
    /// A pool per worker: (host, port, pool).
    pools: Vec<(String, u16, Lane)>,
}

impl Map {
    /// Which of `pools` holds `post`, if the map places it.
    fn worker(&self, post: i64) -> Option<usize> {
        let hash = hashint8(post);
        let at = self.shards.partition_point(|&(low, _, _)| low <= hash);
        let &(low, high, worker) = self.shards.get(at.checked_sub(1)?)?;
        (low..=high).contains(&hash).then_some(worker)
    }

    /// The pool of the worker holding `post`, if the map places it.
    fn lane(&self, post: i64) -> Option<&Lane> {
        self.worker(post).map(|worker| &self.pools[worker].2)
    }
}

/// Where each post lives, and a pool per worker.
pub(super) struct Workers {
    /// The store's own pool (coordinator or any node): it reads the map,
    /// and takes every statement when the map does not place a post.
    own: Lane,
    /// The store's connection settings; a worker's differ only in host
    /// and port.
    config: tokio_postgres::Config,
    /// Connections per worker.
    size: usize,
    /// The store's TLS, for the workers' connections too.
    tls: Tls,
    map: RwLock<Arc<Map>>,
}

impl Workers {
    /// Reads the map through `own` and makes a pool per worker (their
    /// connections open on first use), then reads it again every
    /// [`REFRESH`] while the store lives. `None` without Citus. When
    /// `posts` is not distributed yet (or the first reading fails) the map
    /// starts empty, everything goes through `own`, and a later reading
    /// that finds shards starts direct routing.
    pub(super) async fn connect(
        own: Lane,
        config: tokio_postgres::Config,
        size: usize,
        tls: Tls,
    ) -> Result<Option<Arc<Self>>, StoreError> {
        let citus: bool = own
            .pool
            .get()
            .await?
            .query_one(
                "SELECT to_regclass('pg_catalog.pg_dist_shard') IS NOT NULL",
                &[],
            )
            .await?
            .get(0);
        if !citus {
            return Ok(None);
        }
        let workers = Self {
            own,
            config,
            size,
            tls,
            map: RwLock::new(Arc::default()),
        };
        if let Err(e) = workers.refresh().await {
            tracing::warn!(
                error = %e,
                "Citus: reading the placement map failed; likes and views go through \
                 the store's own database URL until a reading succeeds (every {} s)",
                REFRESH.as_secs()
            );
        } else if workers.map().shards.is_empty() {
            tracing::info!(
                "Citus: posts is not distributed (yet); likes and views go through the \
                 store's own database URL, and straight to the workers once the placement \
                 map, read every {} s, places posts",
                REFRESH.as_secs()
            );
        }
        let workers = Arc::new(workers);
        tokio::spawn(refresh_every(Arc::downgrade(&workers)));
        Ok(Some(workers))
    }

    fn map(&self) -> Arc<Map> {
        self.map.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Reads the map again, keeping the pools of workers it still names.
    /// On an error the map in use is kept.
    async fn refresh(&self) -> Result<(), StoreError> {
        let rows = self.own.pool.get().await?.query(PLACEMENTS, &[]).await?;
        let old = self.map();
        let mut pools: Vec<(String, u16, Lane)> = Vec::new();
        let mut index: HashMap<(String, u16), usize> = HashMap::new();
        let mut shards = Vec::with_capacity(rows.len());
        for row in rows {
            let (low, high, host, port): (i32, i32, String, i32) = (
                row.try_get(0)?,
                row.try_get(1)?,
                row.try_get(2)?,
                row.try_get(3)?,
            );
            let port = u16::try_from(port)
                .map_err(|_| StoreError::Backend(format!("Citus node port {port}")))?;
            let key = (host, port);
            let at = match index.get(&key) {
                Some(&at) => at,
                None => {
                    let pool = match old
                        .pools
                        .iter()
                        .find(|(h, p, _)| (h, *p) == (&key.0, key.1))
                    {
                        Some((_, _, lane)) => lane.clone(),
                        None => Lane::new(
                            connection_pool(
                                worker_config(&self.config, &key.0, key.1),
                                self.size,
                                &self.tls,
                            )
                            .map_err(StoreError::Backend)?,
                        ),
                    };
                    pools.push((key.0.clone(), key.1, pool));
                    index.insert(key, pools.len() - 1);
                    pools.len() - 1
                }
            };
            shards.push((low, high, at));
        }
        let map = Arc::new(Map { shards, pools });
        *self.map.write().unwrap_or_else(|e| e.into_inner()) = map;
        Ok(())
    }

    /// A connection to the worker holding `post` (for a `write`, with a
    /// place among its pool's writes), or to the store's own node when the
    /// map does not place it, and whether it is the worker's. A worker that
    /// cannot be reached turns direct routing off until the next refresh;
    /// a worker whose connections are all busy fails this request only.
    pub(super) async fn connection(&self, post: i64, write: bool) -> Result<Held, StoreError> {
        let map = self.map();
        if let Some(lane) = map.lane(post) {
            let share = lane.share(write).await?;
            match lane.pool.get().await {
                Ok(client) => {
                    return Ok(Held {
                        client,
                        direct: true,
                        _share: share,
                    });
                }
                Err(e) if unreachable(&e) => self.give_up(&map, &e.to_string()),
                Err(e) => return Err(e.into()),
            }
        }
        self.own.held(write).await
    }

    /// The worker (host, port) that statements about `post` go to, if the
    /// map places it.
    pub(super) fn address(&self, post: i64) -> Option<(String, u16)> {
        let map = self.map();
        let (host, port, _) = &map.pools[map.worker(post)?];
        Some((host.clone(), *port))
    }

    /// `posts` grouped by the worker holding them (those the map does not
    /// place in one group of their own); a group's connection is
    /// [`Workers::connection`] of any of its posts.
    pub(super) fn group(&self, posts: impl IntoIterator<Item = i64>) -> Vec<Vec<i64>> {
        let map = self.map();
        let mut groups: Vec<Vec<i64>> = Vec::new();
        let mut by_worker: HashMap<Option<usize>, usize> = HashMap::new();
        for post in posts {
            let at = *by_worker.entry(map.worker(post)).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[at].push(post);
        }
        groups
    }

    /// The pools of the workers the map names now, each labelled
    /// [`pool_name`]. A worker the map no longer names, or every worker
    /// while direct routing is off, has no pool and is left out.
    pub(super) fn pools(&self) -> Vec<PoolStatus> {
        self.map()
            .pools
            .iter()
            .map(|(host, port, lane)| pool_status(pool_name(host, *port), &lane.pool))
            .collect()
    }

    /// After a worker's connection failed: off until the next refresh.
    fn give_up(&self, map: &Arc<Map>, error: &str) {
        let mut current = self.map.write().unwrap_or_else(|e| e.into_inner());
        if Arc::ptr_eq(&current, map) && !current.shards.is_empty() {
            tracing::warn!(
                error,
                "Citus: a worker could not be reached directly; likes and views go \
                 through {} until the placement map is read again (every {} s)",
                "the store's own database URL",
                REFRESH.as_secs()
            );
            *current = Arc::new(Map::default());
        }
    }
}

/// Whether `err`, from a worker's pool, says the worker cannot be reached:
/// a connection could not be opened (refused, timed out, a name not
/// found, TLS refused, closed at once) or its sign-in was refused. Not a
/// pool whose connections were all busy past its wait (load: the worker is
/// there), nor a statement's failure.
fn unreachable(err: &PoolError) -> bool {
    match err {
        PoolError::Timeout(TimeoutType::Create) | PoolError::PostCreateHook(_) => true,
        PoolError::Timeout(TimeoutType::Wait | TimeoutType::Recycle)
        | PoolError::Closed
        | PoolError::NoRuntimeSpecified => false,
        PoolError::Backend(e) => e
            .as_db_error()
            .is_none_or(|db| refused_at_connect(db.code())),
    }
}

/// Whether a database error met while connecting means the server cannot
/// be used from here: a connection exception (`08…`), a sign-in refused
/// (`28…`), no such database (`3D000`), or not taking connections now
/// (`57P03`: starting up, shutting down). Not `53300` (no connection to
/// spare: load).
fn refused_at_connect(code: &SqlState) -> bool {
    let code = code.code();
    code.starts_with("08") || code.starts_with("28") || code == "3D000" || code == "57P03"
}

/// A worker's pool as `/metrics` labels it: `worker:HOST:PORT`, as the
/// cluster lists the worker (an IPv6 address in brackets, so the port
/// stays apart).
fn pool_name(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("worker:[{host}]:{port}")
    } else {
        format!("worker:{host}:{port}")
    }
}

/// The store's connection settings `given` with a worker's host and port:
/// everything else as the store connects — the TLS mode above all, so a
/// worker is never reached in the clear when the store requires TLS (the
/// pool uses the store's TLS connector too).
fn worker_config(given: &tokio_postgres::Config, host: &str, port: u16) -> tokio_postgres::Config {
    let mut config = tokio_postgres::Config::new();
    config.host(host).port(port);
    if let Some(user) = given.get_user() {
        config.user(user);
    }
    if let Some(password) = given.get_password() {
        config.password(password);
    }
    if let Some(dbname) = given.get_dbname() {
        config.dbname(dbname);
    }
    if let Some(options) = given.get_options() {
        config.options(options);
    }
    if let Some(name) = given.get_application_name() {
        config.application_name(name);
    }
    if let Some(timeout) = given.get_connect_timeout() {
        config.connect_timeout(*timeout);
    }
    if let Some(timeout) = given.get_tcp_user_timeout() {
        config.tcp_user_timeout(*timeout);
    }
    if let Some(interval) = given.get_keepalives_interval() {
        config.keepalives_interval(interval);
    }
    if let Some(retries) = given.get_keepalives_retries() {
        config.keepalives_retries(retries);
    }
    config
        .ssl_mode(given.get_ssl_mode())
        .ssl_negotiation(given.get_ssl_negotiation())
        .channel_binding(given.get_channel_binding())
        .keepalives(given.get_keepalives())
        .keepalives_idle(given.get_keepalives_idle());
    config
}

/// Reads the map every [`REFRESH`] while the store lives.
async fn refresh_every(workers: Weak<Workers>) {
    loop {
        tokio::time::sleep(REFRESH).await;
        let Some(workers) = workers.upgrade() else {
            return;
        };
        if let Err(e) = workers.refresh().await {
            tracing::warn!(error = %e, "Citus: reading the placement map failed; keeping the last one");
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn hashint8_gives_postgresql_s_values() {
        // From PostgreSQL 15: SELECT hashint8(v) (the store_postgres tests
        // compare many more against a live server).
        let known = [
            (1, -1_905_060_026),
            (2, 1_134_484_726),
            (42, 1_509_752_520),
            (100_000, 1_001_413_960),
            (1 << 31, -1_524_351_049),
            ((1 << 40) + 7, 2_004_417_530),
            (i64::MAX, -1_524_351_049),
            (-1, 385_747_274),
            (-5, 1_412_886_042),
        ];
        for (value, hash) in known {
            assert_eq!(hashint8(value), hash, "hashint8({value})");
        }
    }

    fn map(shards: Vec<(i32, i32, usize)>) -> Map {
        Map {
            shards,
            pools: Vec::new(),
        }
    }

    #[test]
    fn a_worker_is_reached_as_the_store_is_but_for_host_and_port() {
        use tokio_postgres::config::{ChannelBinding, Host, SslMode};
        let mut given: tokio_postgres::Config =
            "postgres://ana:pw@coordinator:5432/likes?options=-c%20search_path%3Ds"
                .parse()
                .unwrap();
        given
            .ssl_mode(SslMode::Require)
            .channel_binding(ChannelBinding::Require)
            .application_name("likekit-server")
            .connect_timeout(Duration::from_secs(10))
            .tcp_user_timeout(Duration::from_secs(30))
            .keepalives_idle(Duration::from_secs(60))
            .keepalives_interval(Duration::from_secs(5))
            .keepalives_retries(3);
        let worker = worker_config(&given, "worker1", 6432);
        assert_eq!(worker.get_hosts(), [Host::Tcp("worker1".to_owned())]);
        assert_eq!(worker.get_ports(), [6432]);
        assert_eq!(
            worker.get_ssl_mode(),
            SslMode::Require,
            "never in the clear"
        );
        assert_eq!(worker.get_channel_binding(), ChannelBinding::Require);
        assert_eq!(worker.get_user(), Some("ana"));
        assert_eq!(worker.get_password(), Some(&b"pw"[..]));
        assert_eq!(worker.get_dbname(), Some("likes"));
        assert_eq!(worker.get_options(), Some("-c search_path=s"));
        assert_eq!(worker.get_application_name(), Some("likekit-server"));
        assert_eq!(worker.get_connect_timeout(), Some(&Duration::from_secs(10)));
        assert_eq!(
            worker.get_tcp_user_timeout(),
            Some(&Duration::from_secs(30))
        );
        assert_eq!(worker.get_keepalives_idle(), Duration::from_secs(60));
        assert_eq!(
            worker.get_keepalives_interval(),
            Some(Duration::from_secs(5))
        );
        assert_eq!(worker.get_keepalives_retries(), Some(3));
        // And without TLS, none.
        given.ssl_mode(SslMode::Disable);
        assert_eq!(
            worker_config(&given, "worker1", 6432).get_ssl_mode(),
            SslMode::Disable
        );
    }

    #[test]
    fn worker_pools_are_named_by_host_and_port() {
        assert_eq!(pool_name("worker-1", 5432), "worker:worker-1:5432");
        assert_eq!(pool_name("10.0.0.7", 6432), "worker:10.0.0.7:6432");
        assert_eq!(pool_name("fd00::7", 5432), "worker:[fd00::7]:5432");
    }

    #[test]
    fn a_post_goes_to_the_shard_whose_range_holds_its_hash() {
        // Two shards splitting the range, as Citus makes them.
        let two = map(vec![(i32::MIN, -1, 0), (0, i32::MAX, 1)]);
        assert_eq!(two.worker(1), Some(0)); // hash -1,905,060,026
        assert_eq!(two.worker(42), Some(1)); // hash 1,509,752,520
        // A gap (a shard being moved, say) places nothing there.
        let gap = map(vec![(i32::MIN, -2_000_000_000, 0), (0, i32::MAX, 1)]);
        assert_eq!(gap.worker(1), None);
        assert_eq!(gap.worker(42), Some(1));
        assert_eq!(Map::default().worker(42), None);
    }

    /// Only a worker that cannot be reached turns direct routing off; a
    /// pool busy past its wait is load, not a lost worker.
    #[test]
    fn only_an_unreachable_worker_turns_direct_routing_off() {
        assert!(!unreachable(&PoolError::Timeout(TimeoutType::Wait)));
        assert!(!unreachable(&PoolError::Timeout(TimeoutType::Recycle)));
        assert!(!unreachable(&PoolError::Closed));
        assert!(unreachable(&PoolError::Timeout(TimeoutType::Create)));
        for (code, lost) in [
            (SqlState::CONNECTION_FAILURE, true),
            (SqlState::SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION, true),
            (SqlState::INVALID_PASSWORD, true),
            (SqlState::INVALID_AUTHORIZATION_SPECIFICATION, true),
            (SqlState::INVALID_CATALOG_NAME, true),
            (SqlState::CANNOT_CONNECT_NOW, true),
            (SqlState::TOO_MANY_CONNECTIONS, false),
            (SqlState::QUERY_CANCELED, false),
            (SqlState::LOCK_NOT_AVAILABLE, false),
        ] {
            assert_eq!(refused_at_connect(&code), lost, "{}", code.code());
        }
    }

    /// A connection refused (nothing listens on the port) is a worker
    /// that cannot be reached.
    #[tokio::test]
    async fn a_refused_connection_is_an_unreachable_worker() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut config = tokio_postgres::Config::new();
        config.host("127.0.0.1").port(port).user("likekit");
        let pool = connection_pool(config, 1, &None).unwrap();
        let err = pool.get().await.unwrap_err();
        assert!(unreachable(&err), "{err}");
    }
}
