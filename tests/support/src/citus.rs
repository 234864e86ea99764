//! The Citus test mode: tests that run against a Citus coordinator someone
//! else runs, given by [`URL_VAR`] (`LIKEKIT_TEST_CITUS_URL`, a libpq URL
//! or `key=value` string), and are skipped with a plain message when it is
//! not set.
//!
//! ```no_run
//! use likekit_testing::citus::{self, Schema};
//!
//! let Some(coordinator) = citus::coordinator_or_skip("store_citus") else {
//!     return Ok(()); // printed: skipped, and why
//! };
//! let schema = Schema::create(&coordinator)?;
//! // … connect a store to `schema.url()` once (it creates its tables there) …
//! schema.distribute(&["SELECT create_distributed_table('posts', 'id')"], 8)?;
//! // … test against `schema.url()`; dropping `schema` drops everything in it …
//! # Ok::<(), likekit_testing::postgres::ClusterError>(())
//! ```
//!
//! **Isolation on a shared cluster**: every test works in a schema of its
//! own, `likekit_test_<pid>_<n>_<random>`, made on the coordinator. Its URL
//! ([`Schema::url`]) is the coordinator's with `search_path` set to that
//! schema, so the store creates its tables (and its migration record and
//! write functions) there; distributing them makes the schema and its shards
//! on every worker. Tests therefore never see each other's rows, may run at
//! the same time (also from several machines), and need nothing of the
//! cluster but a role that may create schemas and distribute tables. The
//! schema is dropped with everything in it (its shards on the workers
//! included) when the [`Schema`] is dropped, also when a test fails; a run
//! killed outright leaves `likekit_test_*` schemas behind, to drop by hand.
//!
//! Statements go through `psql` (PostgreSQL's client), found beside
//! `initdb` ([`find_bin`]) or on `PATH`.

use std::{
    io::Write as _,
    path::PathBuf,
    process::Command,
    sync::{
        Once,
        atomic::{AtomicU32, Ordering},
    },
    time::{SystemTime, UNIX_EPOCH},
};

use crate::postgres::{ClusterError, find_bin, is_executable, run};

/// The environment variable that names the coordinator.
pub const URL_VAR: &str = "LIKEKIT_TEST_CITUS_URL";

/// Every test schema's name starts with this.
pub const SCHEMA_PREFIX: &str = "likekit_test_";

/// The advisory lock held while a schema's tables are distributed, so
/// that tests distributing at the same time (in this process or another)
/// take turns (any constant all of them use).
const DISTRIBUTE_LOCK: i64 = 0x4c69_6b65_4369_7475; // "LikeCitu"

/// The coordinator's URL, when [`URL_VAR`] is set (and not blank).
pub fn coordinator_url() -> Option<String> {
    std::env::var(URL_VAR)
        .ok()
        .map(|url| url.trim().to_owned())
        .filter(|url| !url.is_empty())
}

/// The message a Citus test prints when it is skipped.
pub fn skip_message(suite: &str) -> String {
    format!(
        "{suite}: skipped, {URL_VAR} is not set (the Citus suites run against an external \
         Citus coordinator; see server-mock/README.md, \"Testing against Citus\")"
    )
}

/// The coordinator's URL; without one, prints [`skip_message`] (once per
/// test binary, straight to standard error so the test harness does not
/// swallow it) and returns `None`, for the test to return early.
pub fn coordinator_or_skip(suite: &str) -> Option<String> {
    static SAID: Once = Once::new();
    let url = coordinator_url();
    if url.is_none() {
        SAID.call_once(|| {
            let _ = writeln!(std::io::stderr(), "{}", skip_message(suite));
        });
    }
    url
}

/// `url` with `search_path` set to `schema` (through libpq's `options`),
/// for a URL (`postgres://…`, `postgresql://…`) or a `key=value` string.
///
/// ```
/// use likekit_testing::citus::with_search_path;
/// assert_eq!(
///     with_search_path("postgres://ana@db:5432/likes", "t1").unwrap(),
///     "postgres://ana@db:5432/likes?options=-c%20search_path%3Dt1"
/// );
/// assert_eq!(
///     with_search_path("postgres://db/likes?sslmode=disable&options=-c%20work_mem%3D8MB", "t1")
///         .unwrap(),
///     "postgres://db/likes?sslmode=disable&options=-c%20work_mem%3D8MB%20-c%20search_path%3Dt1"
/// );
/// assert_eq!(
///     with_search_path("host=db dbname=likes", "t1").unwrap(),
///     "host=db dbname=likes options='-c search_path=t1'"
/// );
/// assert!(with_search_path("host=db options='-c x=1'", "t1").is_err());
/// ```
///
/// # Errors
///
/// A `key=value` string that already sets `options` (merging quoted values
/// is left to the caller).
pub fn with_search_path(url: &str, schema: &str) -> Result<String, ClusterError> {
    let encoded = format!("-c%20search_path%3D{schema}");
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let Some((base, query)) = url.split_once('?') else {
            return Ok(format!("{url}?options={encoded}"));
        };
        let mut found = false;
        let params: Vec<String> = query
            .split('&')
            .map(|pair| match pair.strip_prefix("options=") {
                Some(value) => {
                    found = true;
                    format!("options={value}%20{encoded}")
                }
                None => pair.to_owned(),
            })
            .collect();
        let mut query = params.join("&");
        if !found {
            query.push_str(&format!("&options={encoded}"));
        }
        return Ok(format!("{base}?{query}"));
    }
    if url
        .split_whitespace()
        .any(|pair| pair.trim_start().starts_with("options"))
    {
        return Err(ClusterError::Failed(format!(
            "{URL_VAR} already sets `options`; give it as a postgres:// URL instead"
        )));
    }
    Ok(format!("{url} options='-c search_path={schema}'"))
}

/// `url` (a coordinator's) pointed at `hosts` (`host:port` each) instead,
/// with `load_balance_hosts=random` so that each new connection picks one:
/// how servers connect to every worker of a Citus cluster ("query from
/// any node"). User, password, database and parameters stay.
///
/// ```
/// use likekit_testing::citus::with_hosts;
/// let hosts = ["w1:5432".to_owned(), "w2:5433".to_owned()];
/// assert_eq!(
///     with_hosts("postgres://ana:pw@coord:5432/likes?options=-c%20x%3D1", &hosts).unwrap(),
///     "postgres://ana:pw@w1:5432,w2:5433/likes?options=-c%20x%3D1&load_balance_hosts=random"
/// );
/// assert_eq!(
///     with_hosts("host=coord port=5432 dbname=likes", &hosts).unwrap(),
///     "dbname=likes host=w1,w2 port=5432,5433 load_balance_hosts=random"
/// );
/// ```
///
/// # Errors
///
/// A host without a port, or a URL that names no host.
pub fn with_hosts(url: &str, hosts: &[String]) -> Result<String, ClusterError> {
    let mut names = Vec::new();
    let mut ports = Vec::new();
    for host in hosts {
        let (name, port) = host
            .rsplit_once(':')
            .ok_or_else(|| ClusterError::Failed(format!("{host:?} has no port")))?;
        names.push(name);
        ports.push(port);
    }
    if let Some((scheme, rest)) = url.split_once("://") {
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let user = authority
            .rsplit_once('@')
            .map(|(user, _)| format!("{user}@"))
            .unwrap_or_default();
        let list = hosts.join(",");
        let joiner = if tail.contains('?') { '&' } else { '?' };
        return Ok(format!(
            "{scheme}://{user}{list}{tail}{joiner}load_balance_hosts=random"
        ));
    }
    let kept: Vec<&str> = url
        .split_whitespace()
        .filter(|pair| {
            !["host=", "hostaddr=", "port=", "load_balance_hosts="]
                .iter()
                .any(|key| pair.starts_with(key))
        })
        .collect();
    Ok(format!(
        "{} host={} port={} load_balance_hosts=random",
        kept.join(" "),
        names.join(","),
        ports.join(",")
    ))
}

/// `psql` beside PostgreSQL's server programs, or on `PATH`.
fn psql_program() -> PathBuf {
    find_bin()
        .map(|bin| bin.join("psql"))
        .ok()
        .filter(|psql| is_executable(psql))
        .unwrap_or_else(|| PathBuf::from("psql"))
}

/// Runs statements with `psql` on `url`, in one session, each `-c` in its
/// own transaction, stopping at the first error; returns what they print
/// (unaligned, tuples only).
///
/// # Errors
///
/// [`ClusterError::Failed`] with `psql`'s output when a statement fails or
/// `psql` cannot run.
pub fn psql(url: &str, statements: &[&str]) -> Result<String, ClusterError> {
    let mut cmd = Command::new(psql_program());
    cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
        .arg("-d")
        .arg(url);
    for sql in statements {
        cmd.arg("-c").arg(sql);
    }
    run(&mut cmd)
}

/// A schema of one test on the coordinator, dropped (with everything in it,
/// on every node) when this is dropped. See the module docs.
#[derive(Debug)]
pub struct Schema {
    coordinator: String,
    name: String,
    url: String,
}

impl Schema {
    /// Makes a new, empty schema on the coordinator.
    ///
    /// # Errors
    ///
    /// [`ClusterError::Failed`] when the coordinator cannot be reached or
    /// refuses `CREATE SCHEMA`.
    pub fn create(coordinator: &str) -> Result<Schema, ClusterError> {
        Self::create_prefixed(coordinator, SCHEMA_PREFIX)
    }

    /// Like [`Schema::create`], with a name that starts with `prefix`
    /// (lower-case letters, digits and `_`) instead of [`SCHEMA_PREFIX`].
    ///
    /// # Errors
    ///
    /// As [`Schema::create`], and for a prefix that is not a plain name.
    pub fn create_prefixed(coordinator: &str, prefix: &str) -> Result<Schema, ClusterError> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        if prefix.is_empty()
            || !prefix
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(ClusterError::Failed(format!(
                "a schema prefix is lower-case letters, digits and _, not {prefix:?}"
            )));
        }
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "{prefix}{}_{}_{nanos:x}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        psql(coordinator, &[&format!("CREATE SCHEMA {name}")])?;
        Ok(Schema {
            url: with_search_path(coordinator, &name)?,
            coordinator: coordinator.to_owned(),
            name,
        })
    }

    /// The schema's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The coordinator's URL with `search_path` set to this schema.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// This schema's URL on every active primary worker instead of the
    /// coordinator, as the coordinator names them (see [`with_hosts`]).
    ///
    /// # Errors
    ///
    /// As [`psql`], or when the cluster has no workers.
    pub fn workers_url(&self) -> Result<String, ClusterError> {
        let listed = self.psql(&["SELECT nodename || ':' || nodeport FROM pg_dist_node \
             WHERE groupid <> 0 AND noderole = 'primary' AND isactive ORDER BY nodeid"])?;
        let hosts: Vec<String> = listed.lines().map(|line| line.trim().to_owned()).collect();
        if hosts.is_empty() {
            return Err(ClusterError::Failed("the cluster has no workers".into()));
        }
        with_hosts(&self.url, &hosts)
    }

    /// Runs statements in this schema (see [`psql`]).
    ///
    /// # Errors
    ///
    /// As [`psql`].
    pub fn psql(&self, statements: &[&str]) -> Result<String, ClusterError> {
        psql(&self.url, statements)
    }

    /// Runs `layout` (distribution statements such as
    /// `likekit_server::store::CITUS_LAYOUT`) in this schema, making
    /// `shard_count` shards per distributed table, with the other tests'
    /// distributions waiting their turn.
    ///
    /// # Errors
    ///
    /// As [`psql`].
    pub fn distribute(&self, layout: &[&str], shard_count: u32) -> Result<(), ClusterError> {
        let lock = format!("SELECT pg_advisory_lock({DISTRIBUTE_LOCK})");
        let shards = format!("SET citus.shard_count = {shard_count}");
        let unlock = format!("SELECT pg_advisory_unlock({DISTRIBUTE_LOCK})");
        let mut statements = vec![lock.as_str(), shards.as_str()];
        statements.extend_from_slice(layout);
        statements.push(&unlock);
        self.psql(&statements).map(drop)
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        if let Err(e) = psql(
            &self.coordinator,
            &[&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name)],
        ) {
            let _ = writeln!(
                std::io::stderr(),
                "could not drop the test schema {} (drop it by hand): {e}",
                self.name
            );
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_skip_message_names_the_variable_and_the_docs() {
        let message = skip_message("store_citus");
        assert!(message.starts_with("store_citus: skipped"), "{message}");
        assert!(message.contains(URL_VAR), "{message}");
        assert!(message.contains("server-mock/README.md"), "{message}");
    }

    #[test]
    fn search_paths_go_into_every_url_form() {
        assert_eq!(
            with_search_path("postgresql://db/likes?sslmode=disable", "s").unwrap(),
            "postgresql://db/likes?sslmode=disable&options=-c%20search_path%3Ds"
        );
        assert_eq!(
            with_search_path("postgres://db", "s").unwrap(),
            "postgres://db?options=-c%20search_path%3Ds"
        );
        assert_eq!(
            with_search_path("host=db port=5432", "s").unwrap(),
            "host=db port=5432 options='-c search_path=s'"
        );
    }
}
