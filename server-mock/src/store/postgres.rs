//! The PostgreSQL backend: the production and scale-out store, on plain
//! PostgreSQL or on Citus.
//!
//! * **A like is one call, one transaction.** `likekit_like(post, user,
//!   row, at)` (see [`MIGRATIONS`], migration 2) inserts the like row and,
//!   only when one was really inserted, adds `+1` to the post's row (or to
//!   one shard row of a hot post) and moves the user to the front of its
//!   recent likers; it returns the count and version it left. An unlike is
//!   `likekit_unlike`, deleting the row and counting the `-1` only when one
//!   was deleted. Inside, plain statements that each name only the post and
//!   touch one table — two for a post that never was hot — so that Citus,
//!   which cannot send a data-modifying CTE to one shard, runs the whole
//!   call on the worker that holds the post once the functions are
//!   distributed ([`CITUS_LAYOUT`]). The row and the count never disagree,
//!   and each commit is durable before the answer (`synchronous_commit = on`
//!   on every connection). (On plain PostgreSQL the call also costs less
//!   than the single data-modifying statement it replaced: see the server
//!   README's Citus section for the figures.)
//! * **Exact answers.** For a post with no shard rows the count and version
//!   come from the updated row itself, under its row lock: concurrent likes
//!   of one post get the answers 1, 2, 3, … exactly. A write that changed
//!   nothing (a retry) reads the post again in a new statement, so it sees
//!   the write it duplicates.
//! * **Hot posts** (see [`hot`](super::hot)): the write goes to a random
//!   shard row and its answer adds the other rows as its statement saw them
//!   (every write committed before it, but not writes to other shard rows
//!   still in flight, so two concurrent writes may report the same count;
//!   the sums at rest are always exact). `posts.shard_rows` counts a post's
//!   shard rows, so writes to other posts skip them. Shard rows are kept
//!   after a post cools: with several servers writing, folding them back
//!   into the post's row would race their writes, and summing a few more
//!   rows on a cache miss costs little.
//! * **Pool.** Connections come from a deadpool pool with per-connection
//!   prepared-statement caches. Migrations run at start, under an advisory
//!   lock, so any number of servers may start at once.
//! * **Deadlines.** Nothing waits on the database without one (see
//!   [`POOL_WAIT`], [`BATCH_DEADLINE`], [`TCP_USER_TIMEOUT`],
//!   [`STATEMENT_TIMEOUT`], [`LOCK_TIMEOUT`]): waiting for a free
//!   connection, opening one, recycling one, a statement (PostgreSQL's
//!   `statement_timeout` and `lock_timeout` on every serving connection,
//!   and the store's own deadline a little past them, for a database that
//!   no longer answers at all), a batch of view lookups, unacknowledged
//!   data on a connection whose peer is gone, and closing the store. A
//!   lookup whose requester gave up is dropped before its batch is sent.
//!   Migrations, seeds, resets and audits run without a statement timeout
//!   (they may rightly take long); migrations with a lock timeout of their
//!   own, so that a migration waiting for a lock does not hold every like
//!   up behind it.
//! * **Failures that pass** (a timeout, a read-only or full database, a
//!   database restarting: [`passing`]) are [`StoreError::Unavailable`],
//!   which the server answers 503 with `Retry-After`; others are
//!   [`StoreError::Backend`]. A connection that finds its database
//!   read-only is closed, with every idle connection of its pool: after a
//!   failover they lead to the old primary, and new ones go where the URL
//!   leads now.
//! * **A share for reads.** Likes and unlikes hold at most three quarters
//!   of a pool's connections ([`Lane`]), so that writes queued on a locked
//!   row or a slow database leave connections to views, feeds and
//!   `/readyz`.
//! * **The view's reads, batched.** Every view reads the viewer's own
//!   (user, post) row, never cached, and a view whose post is not cached
//!   reads the post: on PostgreSQL a round trip each. A one-post `liked`
//!   and `post` go to a batcher instead, which answers every lookup of its
//!   kind waiting at that moment together ([`Layout`]): on plain PostgreSQL
//!   with one statement (`unnest` of the pairs probing the primary key;
//!   `= ANY` of the post ids); on Citus with one statement per post, each
//!   filtered by that post's id so that Citus sends it to that post's shard
//!   alone, all sent at once on one connection per worker. At most four
//!   batches (half the pool if that is fewer) run at once; lookups that
//!   arrive while they are busy queue and go together in the next. An idle
//!   server answers a lone lookup at once, alone, so batching adds no wait;
//!   a busy one makes far fewer statements. Each statement starts after its
//!   lookups were asked, so a viewer still sees their own committed writes,
//!   and a post's rows are read in one statement, as one consistent
//!   snapshot.
//! * **Straight to the worker** (Citus,
//!   [`PostgresOptions::direct_to_workers`], module `workers`): likes,
//!   unlikes and the one-post reads go to a pool per worker, chosen by the
//!   post id's hash and Citus's placement map, so the coordinator is not in
//!   their path; everything else goes to the node the URL names.
//!
//! The schema keys like rows, post rows and shard rows by post id first, so
//! on Citus one post's rows live on one worker and [`CITUS_STATEMENTS`] each
//! plan to a single task there (the calls sent straight to that worker run
//! there, no task at all).

use std::{
    collections::{HashMap, HashSet},
    fmt,
    str::FromStr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use async_trait::async_trait;
use deadpool_postgres::{
    Hook, HookError, Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime,
};
use likekit_proto::{IdError, LikeState, PostId, UserId, admin::Seed};
use tokio::sync::{OwnedSemaphorePermit, RwLock, RwLockReadGuard, Semaphore, mpsc, oneshot};
use tokio_postgres::{NoTls, error::SqlState};

use crate::log_limit::limited;

use super::{
    HotPostOptions, HotPosts, PoolStatus, PostAudit, PostSnapshot, RECENT_LIKERS, Store,
    StoreError, Upsert, WriteOutcome,
    hot::{liked_at, merge_likers},
    postgres_url::{self, split_url},
    redact_url,
    rules::{check_friends, check_name, check_seed, unique},
};

mod tls;
mod workers;

pub use tls::{PgTls, SslMode};
use workers::Workers;
pub use workers::hashint8;

/// The TLS configuration of every connection (`None`: no TLS).
pub(crate) type Tls = Option<Arc<rustls::ClientConfig>>;

/// The schema, one migration per entry, applied in order at start and
/// recorded in `likekit_schema`. Never edit an applied migration; add one.
///
/// On Citus the tables and the write functions are then distributed once,
/// on the coordinator, with [`CITUS_LAYOUT`].
///
/// Every key of the three distributed tables starts with the post id, so a
/// post's row, its like rows and its shard rows live on the same worker, and
/// the write functions, distributed by their post argument, run there.
pub const MIGRATIONS: &[(i32, &str)] = &[
    (
        1,
        "
-- Users and who they follow: small and read by every view; on Citus,
-- reference tables (a copy on every worker).
CREATE TABLE users (
    id   bigint PRIMARY KEY,
    name text   NOT NULL
);
CREATE TABLE friends (
    user_id   bigint NOT NULL REFERENCES users (id),
    friend_id bigint NOT NULL REFERENCES users (id),
    PRIMARY KEY (user_id, friend_id)
);

-- Posts, their like rows and their count shards: distributed by post id and
-- co-located, so one like's statement stays on one shard.
--
-- A post's count (and version) is posts.count plus the count of each of its
-- post_count_shards rows; each real change adds to exactly one of them.
-- likers: the row's recent likers, newest first (at most 100), and
-- likers_at: when each of them liked (microseconds since the epoch), for
-- merging the rows' lists. A user is listed in at most one row.
CREATE TABLE posts (
    id        bigint   PRIMARY KEY,
    count     bigint   NOT NULL DEFAULT 0,
    version   bigint   NOT NULL DEFAULT 0,
    likers    bigint[] NOT NULL DEFAULT '{}',
    likers_at bigint[] NOT NULL DEFAULT '{}'
);
-- No foreign key to posts: the like statement checks the post exists (posts
-- are never deleted), and a key check would share-lock a hot post's row on
-- every like.
CREATE TABLE likes (
    post_id bigint NOT NULL,
    user_id bigint NOT NULL,
    PRIMARY KEY (post_id, user_id)
);
-- A hot post's count spread over rows picked at random per write. A single
-- row may go below zero (a like counted here, its unlike elsewhere).
CREATE TABLE post_count_shards (
    post_id   bigint   NOT NULL,
    shard     integer  NOT NULL,
    count     bigint   NOT NULL DEFAULT 0,
    version   bigint   NOT NULL DEFAULT 0,
    likers    bigint[] NOT NULL DEFAULT '{}',
    likers_at bigint[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (post_id, shard)
);
",
    ),
    (2, WRITE_FUNCTIONS),
];

/// The advisory lock taken while migrating (any constant both servers use).
const MIGRATION_LOCK: i64 = 0x4c69_6b65_4b69_7400; // "LikeKit\0"

/// Migration 2: `posts.shard_rows`, and a like and an unlike as functions,
/// `likekit_like(post, user, row, at)` and `likekit_unlike(post, user,
/// row)`.
///
/// `shard_rows` is how many `post_count_shards` rows the post has (0 unless
/// it was ever hot), kept in the transaction that makes a shard row, so a
/// write to a post that never was hot needs no read of the shard rows.
///
/// Each function is a few plain statements that name only its post (no
/// data-modifying CTE, no join, no subquery), run in the caller's one
/// transaction; a like or unlike of a post that never was hot is two. They
/// return what the store needs for its answer: whether a like row really
/// changed, the post's count and version after the write (summed over its
/// rows), the post row's recent likers when that row changed, and how many
/// shard rows the post has besides the one that changed.
///
/// On Citus, distributed by their post argument and co-located with `posts`
/// ([`CITUS_LAYOUT`]), a call is sent whole to the worker that holds the
/// post: one round trip from the coordinator, a one-phase commit on one
/// worker. There each statement is one table filtered by the post id —
/// Citus's fast path — so its plan is made once per shard and reused.
///
/// * `row` is where a real change counts: -1 for the post's own row, a shard
///   number for a hot post's shard row. An unlike counts on the row that
///   lists its user when one does (the post's own row first), so the user
///   leaves every list; otherwise on `row`.
/// * A like or unlike of a post that does not exist raises `P0002`
///   (`no_data_found`), which rolls back the like row it may have added.
/// * Each statement takes a new snapshot, so a write that changed nothing
///   reads the post after the write it duplicates (which its insert or
///   delete waited for), and a changed post row's count and version are
///   read under its row lock (also its `shard_rows`: a shard row made by a
///   concurrent write is counted in `shard_rows` under that same lock).
/// * `search_path` is the one the migration ran with, so the functions find
///   their tables wherever a Citus worker runs them.
/// * Every array slice in an `UPDATE … SET` value is wrapped in `coalesce`:
///   Citus 13.2 crashes deparsing a slice at the top of a SET value.
///
/// The `100`s are [`RECENT_LIKERS`].
const WRITE_FUNCTIONS: &str = "
-- On Citus with the tables already distributed, one connection per worker
-- for the whole migration: its functions go out after the UPDATE on the
-- same connections (a placeholder setting elsewhere).
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
ALTER TABLE posts ADD COLUMN shard_rows integer NOT NULL DEFAULT 0;
UPDATE posts p SET shard_rows = s.n
FROM (SELECT post_id, count(*)::integer AS n FROM post_count_shards GROUP BY post_id) s
WHERE p.id = s.post_id;

CREATE FUNCTION likekit_like(
    p_post bigint, p_user bigint, p_row integer, p_at bigint,
    OUT changed boolean, OUT post_count bigint, OUT post_version bigint,
    OUT post_likers bigint[], OUT other_rows bigint)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
    counted integer := -1;  -- the shard row that changed (-1: none)
    created boolean;        -- whether that shard row is new
    own_count bigint;
    own_version bigint;
    own_shards integer;
    shards_count bigint := 0;
    shards_version bigint := 0;
BEGIN
    INSERT INTO likes (post_id, user_id) VALUES (p_post, p_user) ON CONFLICT DO NOTHING;
    changed := FOUND;
    IF changed AND p_row < 0 THEN
        UPDATE posts SET
            count = count + 1,
            version = version + 1,
            likers = coalesce((ARRAY[p_user] || likers)[1:100], '{}'),
            likers_at = coalesce((ARRAY[p_at] || likers_at)[1:100], '{}')
        WHERE id = p_post
        RETURNING count, version, likers, shard_rows
        INTO own_count, own_version, post_likers, own_shards;
    ELSIF changed THEN
        counted := p_row;
        INSERT INTO post_count_shards AS s
            (post_id, shard, count, version, likers, likers_at)
        VALUES (p_post, p_row, 1, 1, ARRAY[p_user], ARRAY[p_at])
        ON CONFLICT (post_id, shard) DO UPDATE SET
            count = s.count + 1,
            version = s.version + 1,
            likers = coalesce((ARRAY[p_user] || s.likers)[1:100], '{}'),
            likers_at = coalesce((ARRAY[p_at] || s.likers_at)[1:100], '{}')
        RETURNING s.count, s.version, s.xmax = 0 INTO post_count, post_version, created;
        IF created THEN
            UPDATE posts SET shard_rows = shard_rows + 1 WHERE id = p_post
            RETURNING count, version, shard_rows INTO own_count, own_version, own_shards;
        ELSE
            SELECT count, version, shard_rows INTO own_count, own_version, own_shards
            FROM posts WHERE id = p_post;
        END IF;
    ELSE
        SELECT count, version, shard_rows INTO own_count, own_version, own_shards
        FROM posts WHERE id = p_post;
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no post %', p_post USING ERRCODE = 'P0002';
    END IF;
    other_rows := 0;
    IF own_shards > 0 THEN
        SELECT coalesce(sum(count), 0)::bigint, coalesce(sum(version), 0)::bigint, count(*)
        INTO shards_count, shards_version, other_rows
        FROM post_count_shards WHERE post_id = p_post AND shard <> counted;
    END IF;
    post_count := coalesce(post_count, 0) + own_count + shards_count;
    post_version := coalesce(post_version, 0) + own_version + shards_version;
END
$fn$;

CREATE FUNCTION likekit_unlike(
    p_post bigint, p_user bigint, p_row integer,
    OUT changed boolean, OUT post_count bigint, OUT post_version bigint,
    OUT post_likers bigint[], OUT other_rows bigint)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
    counted integer := -1;  -- the shard row that changed (-1: none)
    created boolean;        -- whether that shard row is new
    own_count bigint;
    own_version bigint;
    own_shards integer;
    shards_count bigint := 0;
    shards_version bigint := 0;
BEGIN
    DELETE FROM likes WHERE post_id = p_post AND user_id = p_user;
    changed := FOUND;
    IF changed THEN
        -- The post's own row counts the unlike when it lists the user, or
        -- when the post has no shard rows and p_row is the post's own row.
        UPDATE posts SET
            count = count - 1,
            version = version + 1,
            likers = array_remove(likers, p_user),
            likers_at = coalesce(CASE WHEN array_position(likers, p_user) IS NULL
                THEN likers_at
                ELSE likers_at[:array_position(likers, p_user) - 1]
                     || likers_at[array_position(likers, p_user) + 1:] END, '{}')
        WHERE id = p_post AND (p_user = ANY (likers) OR (shard_rows = 0 AND p_row < 0))
        RETURNING count, version, likers, shard_rows
        INTO own_count, own_version, post_likers, own_shards;
        IF NOT FOUND THEN
            -- Otherwise the shard row that lists the user, or p_row.
            SELECT min(shard) INTO counted
            FROM post_count_shards WHERE post_id = p_post AND p_user = ANY (likers);
            counted := coalesce(counted, p_row);
            IF counted < 0 THEN
                UPDATE posts SET
                    count = count - 1,
                    version = version + 1
                WHERE id = p_post
                RETURNING count, version, likers, shard_rows
                INTO own_count, own_version, post_likers, own_shards;
            ELSE
                INSERT INTO post_count_shards AS s (post_id, shard, count, version)
                VALUES (p_post, counted, -1, 1)
                ON CONFLICT (post_id, shard) DO UPDATE SET
                    count = s.count - 1,
                    version = s.version + 1,
                    likers = array_remove(s.likers, p_user),
                    likers_at = coalesce(CASE WHEN array_position(s.likers, p_user) IS NULL
                        THEN s.likers_at
                        ELSE s.likers_at[:array_position(s.likers, p_user) - 1]
                             || s.likers_at[array_position(s.likers, p_user) + 1:] END, '{}')
                RETURNING s.count, s.version, s.xmax = 0 INTO post_count, post_version, created;
                IF created THEN
                    UPDATE posts SET shard_rows = shard_rows + 1 WHERE id = p_post
                    RETURNING count, version, shard_rows INTO own_count, own_version, own_shards;
                ELSE
                    SELECT count, version, shard_rows INTO own_count, own_version, own_shards
                    FROM posts WHERE id = p_post;
                END IF;
            END IF;
        END IF;
    ELSE
        SELECT count, version, shard_rows INTO own_count, own_version, own_shards
        FROM posts WHERE id = p_post;
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no post %', p_post USING ERRCODE = 'P0002';
    END IF;
    other_rows := 0;
    IF own_shards > 0 THEN
        SELECT coalesce(sum(count), 0)::bigint, coalesce(sum(version), 0)::bigint, count(*)
        INTO shards_count, shards_version, other_rows
        FROM post_count_shards WHERE post_id = p_post AND shard <> counted;
    END IF;
    post_count := coalesce(post_count, 0) + own_count + shards_count;
    post_version := coalesce(post_version, 0) + own_version + shards_version;
END
$fn$;
";

/// The Citus layout: run once on the coordinator, in this order, after the
/// first server start has made the schema (while the tables are empty or
/// small). `users` and `friends`, small and read by every view, become
/// reference tables (a copy on every node); `posts`, `likes` and
/// `post_count_shards` are distributed by post id and co-located; the two
/// write functions are distributed by their post argument, co-located with
/// `posts`, so Citus sends each call to the worker holding the post; and
/// the migration record `likekit_schema` becomes a reference table too, so
/// that servers may also connect to the workers (which then see the schema
/// version and migrate nothing).
///
/// ```
/// assert!(likekit_server::store::CITUS_LAYOUT[2].contains("create_distributed_table('posts'"));
/// ```
pub const CITUS_LAYOUT: &[&str] = &[
    "SELECT create_reference_table('users')",
    "SELECT create_reference_table('friends')",
    "SELECT create_distributed_table('posts', 'id')",
    "SELECT create_distributed_table('likes', 'post_id', colocate_with => 'posts')",
    "SELECT create_distributed_table('post_count_shards', 'post_id', colocate_with => 'posts')",
    "SELECT create_distributed_function('likekit_like(bigint,bigint,integer,bigint)', \
     'p_post', colocate_with => 'posts')",
    "SELECT create_distributed_function('likekit_unlike(bigint,bigint,integer)', \
     'p_post', colocate_with => 'posts')",
    "SELECT create_reference_table('likekit_schema')",
];

/// Which parts of [`CITUS_LAYOUT`] are in place: whether `posts`, `likes`
/// and `post_count_shards` are distributed, and how many of the two write
/// functions are distributed by their post argument.
const CITUS_STATE: &str = "
SELECT
    EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'posts'::regclass
            AND partmethod = 'h'),
    EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'likes'::regclass
            AND partmethod = 'h'),
    EXISTS (SELECT 1 FROM pg_dist_partition
            WHERE logicalrelid = 'post_count_shards'::regclass AND partmethod = 'h'),
    (SELECT count(*) FROM pg_dist_object
     WHERE classid = 'pg_proc'::regclass AND distribution_argument_index IS NOT NULL
       AND objid IN ('likekit_like(bigint,bigint,integer,bigint)'::regprocedure,
                     'likekit_unlike(bigint,bigint,integer)'::regprocedure))
";

/// The own rows (shard -1) and shard rows of the posts `$1`.
const POSTS_ROWS: &str = "
SELECT id, -1, count, version, likers, likers_at FROM posts WHERE id = ANY ($1::bigint[])
UNION ALL
SELECT post_id, shard, count, version, likers, likers_at FROM post_count_shards
WHERE post_id = ANY ($1::bigint[])
";

const LIKED: &str =
    "SELECT post_id FROM likes WHERE user_id = $1::bigint AND post_id = ANY ($2::bigint[])";

/// Which of the (post, user) pairs `$1`, `$2` have a like row: the
/// 1-based positions of those that do (plain PostgreSQL: one probe of the
/// primary key per pair; Citus refuses the correlated subquery beside
/// `unnest`).
const LIKED_PAIRS: &str = "
SELECT k.n FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS k(post_id, user_id, n)
WHERE EXISTS (
    SELECT 1 FROM likes l WHERE l.post_id = k.post_id AND l.user_id = k.user_id
)
";

/// Which of the users `$2` have a like row for post `$1` (the Citus layout:
/// one table filtered by one post id, which Citus sends to that post's
/// shard as a single task and plans once).
const LIKED_BY_POST: &str =
    "SELECT user_id FROM likes WHERE post_id = $1::bigint AND user_id = ANY ($2::bigint[])";

/// The own row (shard -1) and shard rows of post `$1` (the Citus layout:
/// both tables filtered by the one post id, so Citus plans it to that
/// post's shard as a single task).
const POST_ROWS: &str = "
SELECT -1, count, version, likers, likers_at FROM posts WHERE id = $1::bigint
UNION ALL
SELECT shard, count, version, likers, likers_at FROM post_count_shards WHERE post_id = $1::bigint
";

/// A like through `likekit_like` ([`WRITE_FUNCTIONS`]): $1 post, $2 user,
/// $3 the row to count on, $4 when.
const LIKE_CALL: &str = "
SELECT changed, post_count, post_version, post_likers, other_rows
FROM likekit_like($1::bigint, $2::bigint, $3::integer, $4::bigint)
";

/// An unlike through `likekit_unlike`: $1 post, $2 user, $3 the row to
/// count on when no row lists the user.
const UNLIKE_CALL: &str = "
SELECT changed, post_count, post_version, post_likers, other_rows
FROM likekit_unlike($1::bigint, $2::bigint, $3::integer)
";

/// [`LIKE_CALL`] as sent straight to the worker holding the post (Citus,
/// `--citus-direct`): the call in a subquery (`OFFSET 0` keeps it one).
///
/// Citus plans a call it could delegate to another node (`SELECT … FROM
/// f($1, …)` of a distributed function) anew on every execution, with the
/// parameters' values, to see where it would go — on the node holding the
/// post, nowhere. It does not look for a call in a subquery, so this
/// statement's plan is made once per connection and reused: some 30 to
/// 50 µs of the worker's CPU per like, a tenth where Citus reuses the
/// plans of the call's own statements. The call runs on the node it is
/// sent to; when a stale placement map sends it to a worker that no longer
/// holds the post, each of its statements is sent on from there to the one
/// that does (still one transaction, still exact).
const LIKE_CALL_DIRECT: &str = "
SELECT changed, post_count, post_version, post_likers, other_rows
FROM (SELECT * FROM likekit_like($1::bigint, $2::bigint, $3::integer, $4::bigint) OFFSET 0) AS call
";

/// [`UNLIKE_CALL`] as sent straight to the worker holding the post (see
/// [`LIKE_CALL_DIRECT`]).
const UNLIKE_CALL_DIRECT: &str = "
SELECT changed, post_count, post_version, post_likers, other_rows
FROM (SELECT * FROM likekit_unlike($1::bigint, $2::bigint, $3::integer) OFFSET 0) AS call
";

/// What each like, unlike and view sends on Citus ([`Layout::Citus`]), by
/// name: `(what, SQL)`. For checking how a database plans them: the
/// Citus tests `EXPLAIN` each through the coordinator for one post and
/// expect a single task — all but the last two, the like and the unlike
/// as sent straight to the worker holding the post (`--citus-direct`),
/// which the tests run there and expect to send no command on and to plan
/// once per connection (the call sits in a subquery, which Citus does not
/// plan anew on every execution).
///
/// | what | parameters |
/// | --- | --- |
/// | `like` | post, user, row (`-1` or a shard), when (µs) |
/// | `unlike` | post, user, row |
/// | `view: own row` | post, users `bigint[]` |
/// | `view: post` | post |
/// | `view: friends` | user |
/// | `feed: own rows` | user, posts `bigint[]` |
/// | `like, straight to the worker` | as `like` |
/// | `unlike, straight to the worker` | as `unlike` |
pub const CITUS_STATEMENTS: &[(&str, &str)] = &[
    ("like", LIKE_CALL),
    ("unlike", UNLIKE_CALL),
    ("view: own row", LIKED_BY_POST),
    ("view: post", POST_ROWS),
    ("view: friends", FRIENDS),
    ("feed: own rows", LIKED),
    ("like, straight to the worker", LIKE_CALL_DIRECT),
    ("unlike, straight to the worker", UNLIKE_CALL_DIRECT),
];

/// How long a caller waits for a free connection before failing: well
/// under the 30 s request timeout, so a saturated or lost database is a
/// quick error (and `/readyz` 503) rather than requests piling up.
const POOL_WAIT: Duration = Duration::from_secs(5);

/// `connect_timeout` when the URL gives none: per host, for the TCP
/// connection alone.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Added to the connect timeout for opening a pooled connection whole (TLS
/// handshake, authentication, the session's settings), which
/// `connect_timeout` does not cover.
const HANDSHAKE: Duration = Duration::from_secs(5);

/// Recycling a pooled connection (only checking it is open, here).
const POOL_RECYCLE: Duration = Duration::from_secs(5);

/// How long one batch of view lookups may take, connection included. Each
/// is a handful of primary-key reads that take milliseconds; past this the
/// database or the network is stuck, and the lookups' requesters (views,
/// cut at the 30 s request timeout) get an error and the batch's slot is
/// freed for the next. A statement cut here may still be running on its
/// connection; the connection goes back to the pool, and one whose peer is
/// gone is closed by [`TCP_USER_TIMEOUT`] and then discarded.
const BATCH_DEADLINE: Duration = Duration::from_secs(10);

/// `tcp_user_timeout` when the URL gives none: a connection whose sent
/// data stays unacknowledged this long is closed (Linux), so a statement
/// sent to a database that vanished from the network (a failover, a
/// dropped route) fails in 30 s instead of the kernel's ~15 minutes of
/// retransmissions. It never cuts a slow statement: a live server
/// acknowledges at once.
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(30);

/// `statement_timeout` of every serving connection, unless the URL's
/// `options` set one (`options=-c statement_timeout=10s`): a like, a view's
/// read or a friends lookup takes milliseconds, so one past this is stuck
/// (behind a lock, on a database out of resources) and is better an error
/// the client retries than a connection held until the request timeout.
/// Well under the 30 s request timeout.
const STATEMENT_TIMEOUT: &str = "5s";

/// `lock_timeout` of every serving connection, unless the URL's `options`
/// set one: a like waits this long at most for a row or table lock (a
/// long transaction holding a post's row, a migration's `ALTER TABLE`
/// waiting in the lock queue), then fails, freeing its connection.
const LOCK_TIMEOUT: &str = "2s";

/// The store's own deadline on a statement's answer is the connections'
/// `statement_timeout` plus this: past it the database is not answering
/// at all (its cancel did not come back), and the connection is closed
/// rather than reused with a statement still in flight. None when the
/// statement timeout is off (`0`).
const ANSWER_MARGIN: Duration = Duration::from_secs(2);

/// `lock_timeout` of a migration's statements: past it the migration
/// fails (the start tries again while `--db-wait-secs` lasts) rather than
/// keep every like waiting behind its place in the lock queue.
const MIGRATION_LOCK_TIMEOUT: &str = "2s";

/// How long closing the store waits for the writes in flight (each bounded
/// by the deadlines above) before it closes anyway.
const CLOSE_WAIT: Duration = Duration::from_secs(10);

/// The most lookups one batched statement answers.
const MAX_BATCH: usize = 512;

/// The most batched statements in flight (half the pool when that is
/// fewer). A few keep the database busy while the next lookups queue up;
/// more would only make each batch smaller and the database switch
/// between more of them (measured on 2 cores: a pool of 32 with 16 in
/// flight served well under half the views of 4 in flight).
const MAX_BATCHES: usize = 4;

const FRIENDS: &str = "SELECT f.friend_id, u.name FROM friends f \
     JOIN users u ON u.id = f.friend_id WHERE f.user_id = $1::bigint";
const USER_NAME: &str = "SELECT name FROM users WHERE id = $1::bigint";

/// The first of `$1` (in order) that is not a user.
const FIRST_MISSING_USER: &str = "
SELECT t.id FROM unnest($1::bigint[]) WITH ORDINALITY AS t(id, n)
WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = t.id)
ORDER BY t.n LIMIT 1
";

const UPSERT_USERS: &str = "
INSERT INTO users (id, name) SELECT * FROM unnest($1::bigint[], $2::text[])
ON CONFLICT (id) DO UPDATE SET name = excluded.name
";

const INSERT_FRIENDS: &str = "
INSERT INTO friends (user_id, friend_id) SELECT * FROM unnest($1::bigint[], $2::bigint[])
ON CONFLICT DO NOTHING
";

/// From this many friend rows on, a friend-list change drops the table's
/// foreign keys and adds them back after the insert (see
/// `replace_friends`): one join instead of two checks per row. It locks
/// `friends` against readers until the commit, so only large seeds do it.
const BULK_FRIENDS: usize = 50_000;

/// The foreign keys of `friends` as the first migration names them, one
/// constraint per `ALTER TABLE` (Citus takes no other subcommand beside an
/// `ADD CONSTRAINT`).
const DROP_FRIEND_KEYS: &[&str] = &[
    "ALTER TABLE friends DROP CONSTRAINT friends_user_id_fkey",
    "ALTER TABLE friends DROP CONSTRAINT friends_friend_id_fkey",
];
const ADD_FRIEND_KEYS: &[&str] = &[
    "ALTER TABLE friends ADD CONSTRAINT friends_user_id_fkey \
     FOREIGN KEY (user_id) REFERENCES users (id)",
    "ALTER TABLE friends ADD CONSTRAINT friends_friend_id_fkey \
     FOREIGN KEY (friend_id) REFERENCES users (id)",
];

/// A seed's new likes, added to the posts' rows: $1 the posts, $2 how many
/// new like rows each got; $3..$6 their newest likers (post, user, when,
/// position from newest), at most 100 per post. The `100`s are
/// [`RECENT_LIKERS`]. Returns the posts it updated.
const SEED_COUNTS: &str = "
UPDATE posts p SET
    count = p.count + c.n,
    version = p.version + c.n,
    likers = coalesce((c.likers || p.likers)[1:100], '{}'),
    likers_at = coalesce((c.likers_at || p.likers_at)[1:100], '{}')
FROM (
    SELECT t.id, t.n, l.likers, l.likers_at
    FROM unnest($1::bigint[], $2::bigint[]) AS t(id, n)
    JOIN (
        SELECT f.post, array_agg(f.user_id ORDER BY f.pos) AS likers,
               array_agg(f.at ORDER BY f.pos) AS likers_at
        FROM unnest($3::bigint[], $4::bigint[], $5::bigint[], $6::integer[])
             AS f(post, user_id, at, pos)
        GROUP BY f.post
    ) l ON l.post = t.id
) c
WHERE p.id = c.id
RETURNING p.id
";

const AUDIT: &str = "
SELECT p.id,
       p.count + coalesce(s.count, 0),
       p.version + coalesce(s.version, 0),
       coalesce(l.rows, 0),
       coalesce(s.rows, 0)
FROM posts p
LEFT JOIN (
    SELECT post_id, sum(count)::bigint AS count, sum(version)::bigint AS version,
           count(*) AS rows
    FROM post_count_shards GROUP BY post_id
) s ON s.post_id = p.id
LEFT JOIN (SELECT post_id, count(*) AS rows FROM likes GROUP BY post_id) l
    ON l.post_id = p.id
ORDER BY p.id
";

/// How to connect a [`PostgresStore`].
#[derive(Clone)]
pub struct PostgresOptions {
    /// A libpq-style URL, `postgres://user:password@host:port/database`
    /// (key/value strings work too).
    pub url: String,
    /// Connections in the pool; 0 picks `max(8, 4 × CPUs)`.
    pub connections: usize,
    /// When posts count as hot and how far their counts spread.
    pub hot_posts: HotPostOptions,
    /// How the database is laid out (plain or Citus).
    pub layout: Layout,
    /// On Citus: send a like, an unlike and a view's one-post reads straight
    /// to the worker holding the post (read from Citus's placement map; a
    /// pool of `connections` per worker) rather than through the node the
    /// URL names. On by default; off when the server cannot reach the
    /// workers' addresses as the cluster lists them.
    pub direct_to_workers: bool,
    /// CA certificates (PEM) for `sslmode=verify-ca` / `verify-full`, in
    /// place of the URL's `sslrootcert` (see [`PgTls`]).
    pub ca_file: Option<std::path::PathBuf>,
}

impl fmt::Debug for PostgresOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresOptions")
            .field("url", &redact_url(&self.url))
            .field("connections", &self.connections)
            .field("hot_posts", &self.hot_posts)
            .field("layout", &self.layout)
            .field("direct_to_workers", &self.direct_to_workers)
            .field("ca_file", &self.ca_file)
            .finish()
    }
}

impl PostgresOptions {
    /// Options for `url` with the default pool size, hot-post settings and
    /// layout.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            connections: 0,
            hot_posts: HotPostOptions::default(),
            layout: Layout::Auto,
            direct_to_workers: true,
            ca_file: None,
        }
    }
}

/// How the database is laid out, which decides how a view's one-post reads
/// are sent (likes and unlikes are the same calls either way).
///
/// ```
/// use likekit_server::store::Layout;
/// assert_eq!(Layout::default(), Layout::Auto);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// [`Layout::Citus`] when the database has the `citus` extension,
    /// [`Layout::Plain`] otherwise (decided when the store connects).
    #[default]
    Auto,
    /// One PostgreSQL server: the one-post reads waiting at one moment go
    /// as one statement (`unnest` of the pairs probing the primary key).
    Plain,
    /// Distributed by post id (Citus): every statement names one post, so
    /// Citus sends it to that post's shard alone; the one-post reads waiting
    /// at one moment go as one statement per post, all at once on one
    /// connection.
    Citus,
}

/// A pool of up to `size` connections made from `config`, over TLS when
/// `tls` is given ([`PgTls`]), each connection running the session
/// settings as it opens (the URL's `options` among them:
/// [`session_settings`]), with deadlines: [`POOL_WAIT`] for a free
/// connection, the connect timeout plus [`HANDSHAKE`] to open one,
/// [`POOL_RECYCLE`] to recycle one.
pub(crate) fn connection_pool(
    config: tokio_postgres::Config,
    size: usize,
    tls: &Tls,
) -> Result<Pool, String> {
    let create = config
        .get_connect_timeout()
        .copied()
        .unwrap_or(CONNECT_TIMEOUT)
        + HANDSHAKE;
    let manager_config = ManagerConfig {
        recycling_method: RecyclingMethod::Fast,
    };
    let settings: Arc<str> = session_settings(config.get_options())?.into();
    let config = without_options(&config);
    let manager = match tls {
        Some(tls) => Manager::from_config(
            config,
            tokio_postgres_rustls::MakeRustlsConnect::new((**tls).clone()),
            manager_config,
        ),
        None => Manager::from_config(config, NoTls, manager_config),
    };
    Pool::builder(manager)
        .max_size(size)
        .wait_timeout(Some(POOL_WAIT))
        .create_timeout(Some(create))
        .recycle_timeout(Some(POOL_RECYCLE))
        .post_create(Hook::async_fn(move |client, _| {
            let settings = settings.clone();
            Box::pin(async move {
                client
                    .batch_execute(&settings)
                    .await
                    .map_err(HookError::Backend)
            })
        }))
        .runtime(Runtime::Tokio1)
        .build()
        .map_err(|e| format!("PostgreSQL connection pool: {e}"))
}

/// A pool, and the share of it that likes and unlikes may hold at once:
/// all of it but a quarter (at least one connection, unless the pool has
/// only one), kept for views, feeds and `/readyz`, so that writes waiting
/// on a locked row or a slow database cannot take every connection from
/// the reads.
#[derive(Clone)]
pub(crate) struct Lane {
    pub(crate) pool: Pool,
    writes: Arc<Semaphore>,
    /// How many writes may hold a connection at once.
    write_share: usize,
}

impl Lane {
    pub(crate) fn new(pool: Pool) -> Self {
        let size = pool.status().max_size;
        let write_share = size.saturating_sub((size / 4).max(1)).max(1);
        Self {
            pool,
            writes: Arc::new(Semaphore::new(write_share)),
            write_share,
        }
    }

    /// A place among the writes, within [`POOL_WAIT`] (`None` for a
    /// read, which needs none).
    pub(crate) async fn share(
        &self,
        write: bool,
    ) -> Result<Option<OwnedSemaphorePermit>, StoreError> {
        if !write {
            return Ok(None);
        }
        match tokio::time::timeout(POOL_WAIT, self.writes.clone().acquire_owned()).await {
            Ok(Ok(permit)) => Ok(Some(permit)),
            // The semaphore is never closed.
            Ok(Err(_)) => Err(StoreError::Closed),
            Err(_) => Err(StoreError::Unavailable(format!(
                "the {} connections likes and unlikes may hold (of {}) stayed busy for {} s",
                self.write_share,
                self.pool.status().max_size,
                POOL_WAIT.as_secs()
            ))),
        }
    }

    /// A connection, with a place among the writes for a write.
    async fn held(&self, write: bool) -> Result<Held, StoreError> {
        let share = self.share(write).await?;
        Ok(Held {
            client: self.pool.get().await?,
            direct: false,
            _share: share,
        })
    }
}

/// A connection held for statements about one post: whether it goes
/// straight to the worker holding the post (Citus), and for a write its
/// place among the writes of its pool ([`Lane`]), given back with it.
pub(crate) struct Held {
    pub(crate) client: Object,
    pub(crate) direct: bool,
    pub(crate) _share: Option<OwnedSemaphorePermit>,
}

/// `pool` as `/metrics` reports it, under the label `name`.
fn pool_status(name: String, pool: &Pool) -> PoolStatus {
    let status = pool.status();
    PoolStatus {
        name,
        max: status.max_size,
        size: status.size,
        idle: status.available,
        waiting: status.waiting,
    }
}

/// Where a statement about one post goes on Citus: straight to the worker
/// holding the post ([`workers`]), or to the store's pool.
#[derive(Clone)]
struct Route {
    lane: Lane,
    workers: Option<Arc<Workers>>,
}

impl Route {
    /// A connection for reads about `post`.
    async fn client(&self, post: i64) -> Result<Object, StoreError> {
        Ok(self.held(post, false).await?.client)
    }

    /// A connection for statements about `post` (with a place among the
    /// writes for a `write`), and whether it goes straight to the worker
    /// that holds the post (`false`: the node the store's URL names).
    async fn held(&self, post: i64, write: bool) -> Result<Held, StoreError> {
        match &self.workers {
            Some(workers) => workers.connection(post, write).await,
            None => self.lane.held(write).await,
        }
    }

    /// `posts` grouped so that each group's statements can share one
    /// connection ([`Route::client`] of any of them).
    fn groups(&self, posts: Vec<i64>) -> Vec<Vec<i64>> {
        match &self.workers {
            Some(workers) => workers.group(posts),
            None if posts.is_empty() => Vec::new(),
            None => vec![posts],
        }
    }
}

/// A lookup waiting for its batch, and where its answer goes.
type Waiting<K, V> = (K, oneshot::Sender<Result<V, StoreError>>);

/// Gathers one-key lookups into batched statements (see the module docs):
/// `answer` gets every key waiting when a slot is free (at most
/// [`MAX_BATCH`]) and returns one answer per key, in order, within
/// [`BATCH_DEADLINE`]. Lookups whose requester is gone (a view cut by its
/// timeout) are dropped, not sent. `slots` bounds the statements in
/// flight, shared by every batcher of the store. The task ends when the
/// store (the sender) is dropped.
fn spawn_batcher<C, K, V, F, Fut>(
    pool: C,
    slots: Arc<Semaphore>,
    answer: F,
) -> mpsc::UnboundedSender<Waiting<K, V>>
where
    C: Clone + Send + 'static,
    K: Send + 'static,
    V: Clone + Send + 'static,
    F: Fn(C, Vec<K>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<V>, StoreError>> + Send + 'static,
{
    let (sender, mut queue) = mpsc::unbounded_channel::<Waiting<K, V>>();
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        while let Some(first) = queue.recv().await {
            // Waiting for a free slot is when the next batch fills up.
            let Ok(slot) = slots.clone().acquire_owned().await else {
                return;
            };
            let mut batch = Vec::new();
            let mut next = Some(first);
            while let Some(waiting) = next.take() {
                if !waiting.1.is_closed() {
                    batch.push(waiting);
                }
                if batch.len() < MAX_BATCH {
                    next = queue.try_recv().ok();
                }
            }
            if batch.is_empty() {
                continue;
            }
            let (pool, answer) = (pool.clone(), answer.clone());
            tokio::spawn(async move {
                let (keys, senders): (Vec<K>, Vec<_>) = batch.into_iter().unzip();
                let answers = tokio::time::timeout(BATCH_DEADLINE, answer(pool, keys))
                    .await
                    .unwrap_or_else(|_| {
                        Err(StoreError::Backend(format!(
                            "PostgreSQL did not answer a batch of view lookups within {} s",
                            BATCH_DEADLINE.as_secs()
                        )))
                    });
                drop(slot);
                match answers {
                    Ok(answers) => {
                        for (sender, value) in senders.into_iter().zip(answers) {
                            let _ = sender.send(Ok(value));
                        }
                    }
                    Err(e) => {
                        for sender in senders {
                            let _ = sender.send(Err(e.clone()));
                        }
                    }
                }
            });
        }
    });
    sender
}

/// Asks a batcher; `None` when it is gone (its runtime shut down), for the
/// caller to ask directly.
async fn ask<K, V>(
    batcher: &mpsc::UnboundedSender<Waiting<K, V>>,
    key: K,
) -> Option<Result<V, StoreError>> {
    let (sender, answer) = oneshot::channel();
    batcher.send((key, sender)).ok()?;
    answer.await.ok()
}

/// Whether each (post, user) pair has a like row.
async fn liked_pairs(pool: Pool, pairs: Vec<(i64, i64)>) -> Result<Vec<bool>, StoreError> {
    let (posts, users): (Vec<i64>, Vec<i64>) = pairs.iter().copied().unzip();
    let client = pool.get().await?;
    let statement = client.prepare_cached(LIKED_PAIRS).await?;
    let mut liked = vec![false; pairs.len()];
    for row in client.query(&statement, &[&posts, &users]).await? {
        let n: i64 = row.get(0);
        if let Some(slot) = usize::try_from(n - 1).ok().and_then(|i| liked.get_mut(i)) {
            *slot = true;
        }
    }
    Ok(liked)
}

/// Whether each (post, user) pair has a like row, for the Citus layout: one
/// statement per post among the pairs (each names that post only), sent at
/// once on one connection per worker holding them ([`Route`]).
async fn liked_by_post(route: Route, pairs: Vec<(i64, i64)>) -> Result<Vec<bool>, StoreError> {
    let mut by_post: HashMap<i64, Vec<i64>> = HashMap::new();
    for &(post, user) in &pairs {
        by_post.entry(post).or_default().push(user);
    }
    let groups = route.groups(by_post.keys().copied().collect());
    let lookups = groups.iter().map(|posts| {
        let (route, by_post) = (&route, &by_post);
        async move {
            let client = route.client(posts[0]).await?;
            let statement = client.prepare_cached(LIKED_BY_POST).await?;
            let found = futures_util::future::try_join_all(posts.iter().map(|post| {
                let (client, statement) = (&client, &statement);
                async move {
                    let rows = client.query(statement, &[post, &by_post[post]]).await?;
                    Ok::<_, StoreError>(
                        rows.iter()
                            .map(|row| (*post, row.get(0)))
                            .collect::<Vec<_>>(),
                    )
                }
            }))
            .await?;
            Ok::<_, StoreError>(found.into_iter().flatten().collect::<Vec<(i64, i64)>>())
        }
    });
    let mut liked: HashSet<(i64, i64)> = HashSet::new();
    for found in futures_util::future::try_join_all(lookups).await? {
        liked.extend(found);
    }
    Ok(pairs.iter().map(|pair| liked.contains(pair)).collect())
}

/// Each post's snapshot (`None` for a post that does not exist), for the
/// Citus layout: one statement per post, sent at once on one connection per
/// worker holding them ([`Route`]).
async fn read_posts_one_by_one(
    route: Route,
    posts: Vec<i64>,
) -> Result<Vec<Option<Arc<PostSnapshot>>>, StoreError> {
    let mut wanted = posts.clone();
    wanted.sort_unstable();
    wanted.dedup();
    let groups = route.groups(wanted);
    let reads = groups.iter().map(|group| {
        let route = &route;
        async move {
            let client = route.client(group[0]).await?;
            let statement = client.prepare_cached(POST_ROWS).await?;
            futures_util::future::try_join_all(group.iter().map(|post| {
                let (client, statement) = (&client, &statement);
                async move {
                    let rows = client.query(statement, &[post]).await?;
                    let rows = rows
                        .iter()
                        .map(|row| {
                            (
                                row.get(0),
                                CounterRow {
                                    count: row.get(1),
                                    version: row.get(2),
                                    likers: row.get(3),
                                    likers_at: row.get(4),
                                },
                            )
                        })
                        .collect();
                    Ok::<_, StoreError>((*post, snapshot(rows).map(Arc::new)))
                }
            }))
            .await
        }
    });
    let snapshots: HashMap<i64, Option<Arc<PostSnapshot>>> =
        futures_util::future::try_join_all(reads)
            .await?
            .into_iter()
            .flatten()
            .collect();
    Ok(posts
        .iter()
        .map(|post| snapshots.get(post).cloned().flatten())
        .collect())
}

/// Each post's snapshot (`None` for a post that does not exist), all read
/// in one statement.
async fn read_posts(
    pool: Pool,
    posts: Vec<i64>,
) -> Result<Vec<Option<Arc<PostSnapshot>>>, StoreError> {
    let client = pool.get().await?;
    let statement = client.prepare_cached(POSTS_ROWS).await?;
    let mut wanted = posts.clone();
    wanted.sort_unstable();
    wanted.dedup();
    let mut rows: HashMap<i64, Vec<(i32, CounterRow)>> = HashMap::with_capacity(wanted.len());
    for row in client.query(&statement, &[&wanted]).await? {
        rows.entry(row.get(0)).or_default().push((
            row.get(1),
            CounterRow {
                count: row.get(2),
                version: row.get(3),
                likers: row.get(4),
                likers_at: row.get(5),
            },
        ));
    }
    let snapshots: HashMap<i64, Arc<PostSnapshot>> = rows
        .into_iter()
        .filter_map(|(post, rows)| Some((post, Arc::new(snapshot(rows)?))))
        .collect();
    Ok(posts
        .iter()
        .map(|post| snapshots.get(post).cloned())
        .collect())
}

/// A post from its own row (shard -1) and shard rows; `None` without its
/// own row.
fn snapshot(mut rows: Vec<(i32, CounterRow)>) -> Option<PostSnapshot> {
    if !rows.iter().any(|(shard, _)| *shard < 0) {
        return None;
    }
    let count: i64 = rows.iter().map(|(_, row)| row.count).sum();
    let version: i64 = rows.iter().map(|(_, row)| row.version).sum();
    // The post's own row first, so equal times keep its order.
    rows.sort_by_key(|(shard, _)| *shard);
    let recent_likers = if rows.len() == 1 {
        ids_from_sql(&rows[0].1.likers)
    } else {
        let ids: Vec<Vec<UserId>> = rows
            .iter()
            .map(|(_, row)| ids_from_sql(&row.likers))
            .collect();
        merge_likers(
            ids.iter()
                .zip(&rows)
                .map(|(ids, (_, row))| (ids.as_slice(), row.likers_at.as_slice())),
        )
    };
    Some(PostSnapshot {
        count: to_count(count),
        version: to_count(version),
        recent_likers,
    })
}

type LikedBatcher = mpsc::UnboundedSender<Waiting<(i64, i64), bool>>;
type PostBatcher = mpsc::UnboundedSender<Waiting<i64, Option<Arc<PostSnapshot>>>>;

/// The PostgreSQL [`Store`]. See the module docs for how it works.
pub struct PostgresStore {
    pool: Pool,
    /// One-post `liked` lookups, batched.
    liked_batcher: LikedBatcher,
    /// One-post `post` reads, batched.
    post_batcher: PostBatcher,
    /// Set by `close`: new writes are refused.
    closing: AtomicBool,
    /// Writes hold it shared; `close` takes it exclusively, so it waits
    /// (up to [`CLOSE_WAIT`]) for the writes in flight.
    gate: RwLock<()>,
    /// The store's own deadline on a statement's answer: the connections'
    /// `statement_timeout` plus [`ANSWER_MARGIN`] (`None` when it is off).
    answer_deadline: Option<Duration>,
    hot: HotPosts,
    /// [`Layout::Plain`] or [`Layout::Citus`].
    layout: Layout,
    /// Where likes and unlikes go: the store's pool, or on Citus straight
    /// to the worker holding the post.
    route: Route,
    url: String,
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore")
            .field("url", &redact_url(&self.url))
            .field("pool", &self.pool.status())
            .finish_non_exhaustive()
    }
}

/// How [`StoreError::Unavailable`] for a read-only database begins
/// ([`read_only`] looks for it).
const READ_ONLY: &str = "PostgreSQL is read-only";

/// What a failure with SQLSTATE `code` means when it passes with time:
/// the database is busy, read-only, full or restarting, and nothing of the
/// failed statement was kept (a write cut by a shutdown may have
/// committed, and likes are idempotent), so trying again later is safe.
/// `None` for every other failure.
pub(crate) fn passing(code: &SqlState) -> Option<&'static str> {
    Some(match code.code() {
        "57014" => "a statement ran past statement_timeout, or was canceled",
        "55P03" => "a lock was not granted within lock_timeout",
        "40001" => "a serialization failure",
        "40P01" => "a deadlock, broken by rolling this statement back",
        "25006" => READ_ONLY,
        "53100" => "PostgreSQL is out of disk space",
        "53200" => "PostgreSQL is out of memory",
        "53300" => "PostgreSQL has no connection to spare",
        "57P01" => "PostgreSQL is shutting down (an administrator's shutdown)",
        "57P02" => "PostgreSQL is restarting after a crash",
        "57P03" => "PostgreSQL cannot take connections now (starting up or shutting down)",
        _ => return None,
    })
}

/// Whether `err` says the database is read-only (SQLSTATE 25006, or the
/// readiness check found it so).
fn read_only(err: &StoreError) -> bool {
    matches!(err, StoreError::Unavailable(message) if message.starts_with(READ_ONLY))
}

fn pg_error(err: tokio_postgres::Error) -> StoreError {
    match err.as_db_error() {
        Some(db) => {
            let mut text = format!(
                "PostgreSQL {} ({}): {}",
                db.severity(),
                db.code().code(),
                db.message()
            );
            if *db.code() == SqlState::INVALID_SQL_STATEMENT_NAME {
                // The store prepares its statements once per connection; a
                // pooler that hands the server connection to another client
                // between transactions loses them.
                text.push_str(
                    " (a connection pooler in transaction or statement mode between the \
                     server and PostgreSQL? The store needs session mode: PgBouncer's \
                     pool_mode = session)",
                );
            }
            match passing(db.code()) {
                Some(why) => StoreError::Unavailable(format!("{why}: {text}")),
                None => StoreError::Backend(text),
            }
        }
        None if unreachable(&err) => StoreError::Unavailable(format!(
            "PostgreSQL cannot be reached (down, restarting or cut off): {}",
            crate::error::with_causes(&err)
        )),
        None => {
            // The causes too: "error performing TLS handshake: invalid peer
            // certificate: UnknownIssuer" says what to fix.
            StoreError::Backend(format!("PostgreSQL: {}", crate::error::with_causes(&err)))
        }
    }
}

/// Whether `err` is the database out of reach, which passes as a restart
/// does (503 with `Retry-After`, not 500): the connection closed, or
/// refused, reset or timed out on the way. A TLS or authentication
/// failure is not: it needs the configuration mended.
fn unreachable(err: &tokio_postgres::Error) -> bool {
    use std::io::ErrorKind::{
        BrokenPipe, ConnectionAborted, ConnectionRefused, ConnectionReset, HostUnreachable,
        NetworkUnreachable, NotConnected, TimedOut, UnexpectedEof,
    };
    if err.is_closed() {
        return true;
    }
    let mut cause = std::error::Error::source(err);
    while let Some(e) = cause {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                ConnectionRefused
                    | ConnectionReset
                    | ConnectionAborted
                    | NotConnected
                    | BrokenPipe
                    | UnexpectedEof
                    | TimedOut
                    | HostUnreachable
                    | NetworkUnreachable
            );
        }
        cause = e.source();
    }
    false
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(err: tokio_postgres::Error) -> Self {
        pg_error(err)
    }
}

impl From<deadpool_postgres::PoolError> for StoreError {
    fn from(err: deadpool_postgres::PoolError) -> Self {
        match err {
            // A connection that failed its session settings failed as
            // any statement would (a database going away, a role refused).
            deadpool_postgres::PoolError::Backend(err)
            | deadpool_postgres::PoolError::PostCreateHook(HookError::Backend(err)) => {
                pg_error(err)
            }
            // Load: every connection stayed busy (see POOL_WAIT).
            deadpool_postgres::PoolError::Timeout(deadpool_postgres::TimeoutType::Wait) => {
                StoreError::Unavailable(format!(
                    "every connection of the pool stayed busy for {} s (PostgreSQL \
                     connection pool: {err})",
                    POOL_WAIT.as_secs()
                ))
            }
            other => StoreError::Backend(format!("PostgreSQL connection pool: {other}")),
        }
    }
}

/// `work` (statements on one connection) within `limit` (without one: as
/// long as it takes); `None` when the limit passed first.
async fn bounded<T>(
    limit: Option<Duration>,
    work: impl Future<Output = Result<T, StoreError>>,
) -> Option<Result<T, StoreError>> {
    match limit {
        Some(limit) => tokio::time::timeout(limit, work).await.ok(),
        None => Some(work.await),
    }
}

/// The outcome of `what` on `client` (`None`: the store's deadline,
/// `limit`, passed first), and what becomes of the connection: one cut at
/// the deadline may still have a statement in flight, whose answer would
/// come first to the next user, and is closed; one that found its database
/// read-only is closed with every idle connection of its pool
/// ([`forget_pool`]). Any other goes back to the pool.
fn settle<T>(
    client: Object,
    done: Option<Result<T, StoreError>>,
    what: &str,
    limit: Option<Duration>,
) -> Result<T, StoreError> {
    match done {
        None => {
            drop(Object::take(client));
            Err(StoreError::Unavailable(format!(
                "PostgreSQL did not answer {what} within {} s (its statement_timeout and \
                 a margin): it is not answering at all, and the connection was closed (a \
                 write so cut may or may not have been applied; sending it again is safe)",
                limit.unwrap_or_default().as_secs()
            )))
        }
        Some(Err(err)) if read_only(&err) => {
            forget_pool(client);
            Err(err)
        }
        Some(done) => done,
    }
}

/// Closes `client` and every idle connection of its pool: they were opened
/// to a database that is read-only now — after a failover, most likely the
/// old primary, now a standby, whose reads would miss the new primary's
/// writes. New connections go where the URL leads now (a moved address, or
/// with several hosts and `target_session_attrs=read-write`, the primary).
fn forget_pool(client: Object) {
    let pool = Object::pool(&client);
    drop(Object::take(client));
    if let Some(pool) = pool {
        let closed = pool.retain(|_, _| false).removed.len();
        // Every write that meets a database still read-only comes here: at
        // most a line a second (`log_limit`).
        limited!(
            tracing::Level::WARN,
            idle_connections_closed = closed,
            "PostgreSQL answered that it is read-only: the connection and every idle \
             one of its pool are closed, and new ones are opened as needed"
        );
    }
}

/// A count or version sum read back from SQL (never below zero at rest).
fn to_count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// An id read back from SQL (only valid ids are ever stored).
fn id_from_sql<T: TryFrom<i64, Error = IdError>>(value: i64) -> Result<T, StoreError> {
    T::try_from(value).map_err(|e| StoreError::Backend(format!("a stored id is invalid: {e}")))
}

/// A list of ids read back from SQL; anything invalid is skipped.
fn ids_from_sql(values: &[i64]) -> Vec<UserId> {
    values
        .iter()
        .filter_map(|&id| UserId::try_from(id).ok())
        .collect()
}

/// Where `url` points, for the start-up log: `host:port/database as
/// user`, never the password (the URL as shown in logs when it does not
/// parse).
pub(crate) fn target(url: &str) -> String {
    let parsed = split_url(url)
        .ok()
        .and_then(|(url, _)| tokio_postgres::Config::from_str(&url).ok());
    let Some(config) = parsed else {
        return redact_url(url);
    };
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(at, host)| {
            let port = ports.get(at).or(ports.first()).copied().unwrap_or(5432);
            match host {
                tokio_postgres::config::Host::Tcp(name) => format!("{name}:{port}"),
                tokio_postgres::config::Host::Unix(path) => format!("{}:{port}", path.display()),
            }
        })
        .collect();
    let user = config.get_user().unwrap_or("?");
    let database = config.get_dbname().unwrap_or(user);
    format!("{}/{database} as {user}", hosts.join(","))
}

/// `split_url` takes every `sslmode` it finds out of the URL; one that
/// tokio-postgres still sees in what is left was read differently by the
/// two, and is refused rather than overridden (overriding `require` with
/// "disable" would send the password in the clear).
fn refuse_unread_sslmode(config: &tokio_postgres::Config, shown: &str) -> Result<(), StoreError> {
    if config.get_ssl_mode() == tokio_postgres::config::SslMode::Prefer {
        return Ok(());
    }
    Err(StoreError::Backend(format!(
        "bad PostgreSQL URL {shown}: its sslmode could not be read with certainty; \
         percent-encode the reserved characters (@ : / ? & =) in the user name and password"
    )))
}

impl PostgresStore {
    /// Connects, creates the pool and brings the schema up to date.
    ///
    /// Every connection runs with `synchronous_commit = on`, so a write is
    /// on disk (and on synchronous standbys, if any) before it is answered,
    /// and with `statement_timeout = 5s` and `lock_timeout = 2s` unless the
    /// URL's `options` set them (`options=-c%20statement_timeout%3D10s`;
    /// `0` turns one off): set once connected, the URL's `options` with
    /// them, never in the startup packet, so that a connection pooler
    /// (PgBouncer in session mode) passes them on.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] for a URL that cannot be read (`options`
    /// holding anything but settings among it), a database that cannot be
    /// reached or refuses a setting, or a failed migration.
    pub async fn connect(options: PostgresOptions) -> Result<Self, StoreError> {
        let shown = redact_url(&options.url);
        let (url, mut tls) = split_url(&options.url)
            .map_err(|e| StoreError::Backend(format!("bad PostgreSQL URL {shown}: {e}")))?;
        if options.ca_file.is_some() {
            tls.ca_file.clone_from(&options.ca_file);
        }
        let mut config = tokio_postgres::Config::from_str(&url)
            .map_err(|e| StoreError::Backend(format!("bad PostgreSQL URL {shown}: {e}")))?;
        refuse_unread_sslmode(&config, &shown)?;
        config.ssl_mode(if tls.mode == SslMode::Disable {
            tokio_postgres::config::SslMode::Disable
        } else {
            tokio_postgres::config::SslMode::Require
        });
        let tls: Tls = tls::client_config(&tls)
            .map_err(StoreError::Backend)?
            .map(Arc::new);
        if config.get_application_name().is_none() {
            config.application_name("likekit-server");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_tcp_user_timeout().is_none() {
            config.tcp_user_timeout(TCP_USER_TIMEOUT);
        }
        let connections = if options.connections == 0 {
            std::thread::available_parallelism()
                .map(|n| n.get() * 4)
                .unwrap_or(8)
                .max(8)
        } else {
            options.connections
        };
        let pool =
            connection_pool(config.clone(), connections, &tls).map_err(StoreError::Backend)?;
        let failed = |e: StoreError| StoreError::Backend(format!("{shown}: {e}"));
        migrate(&pool).await.map_err(failed)?;
        let layout = match options.layout {
            Layout::Auto if check_citus(&pool).await.map_err(failed)? => Layout::Citus,
            Layout::Auto => Layout::Plain,
            given => given,
        };
        let answer_deadline = answer_deadline(&pool).await.map_err(failed)?;
        let slots = Arc::new(Semaphore::new((connections / 2).clamp(1, MAX_BATCHES)));
        let lane = Lane::new(pool.clone());
        let workers = if layout == Layout::Citus && options.direct_to_workers {
            Workers::connect(lane.clone(), config, connections, tls)
                .await
                .map_err(failed)?
        } else {
            None
        };
        let route = Route { lane, workers };
        let (liked_batcher, post_batcher) = if layout == Layout::Citus {
            (
                spawn_batcher(route.clone(), slots.clone(), liked_by_post),
                spawn_batcher(route.clone(), slots, read_posts_one_by_one),
            )
        } else {
            (
                spawn_batcher(pool.clone(), slots.clone(), liked_pairs),
                spawn_batcher(pool.clone(), slots, read_posts),
            )
        };
        Ok(Self {
            liked_batcher,
            post_batcher,
            pool,
            closing: AtomicBool::new(false),
            gate: RwLock::new(()),
            answer_deadline,
            hot: HotPosts::new(options.hot_posts),
            layout,
            route,
            url: options.url,
        })
    }

    /// On Citus with [`PostgresOptions::direct_to_workers`]: the worker
    /// (host, port, as the cluster lists it) that likes, unlikes and
    /// one-post reads of `post` are sent to. `None` elsewhere, or while
    /// direct routing is off (a worker could not be reached).
    pub fn citus_worker(&self, post: PostId) -> Option<(String, u16)> {
        self.route.workers.as_ref()?.address(post.as_i64())
    }

    /// The layout in use: [`Layout::Plain`] or [`Layout::Citus`]
    /// ([`Layout::Auto`] is decided at connect).
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The schema version of the database (the last migration applied).
    pub async fn schema_version(&self) -> Result<i32, StoreError> {
        let client = self.pool.get().await?;
        Ok(client
            .query_one("SELECT coalesce(max(version), 0) FROM likekit_schema", &[])
            .await?
            .get(0))
    }

    /// The gate, held by a write while it runs; refused once the store is
    /// closing.
    async fn enter(&self) -> Result<RwLockReadGuard<'_, ()>, StoreError> {
        if self.closing.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        let gate = self.gate.read().await;
        if self.closing.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        Ok(gate)
    }

    async fn write(
        &self,
        user: UserId,
        post: PostId,
        like: bool,
    ) -> Result<WriteOutcome, StoreError> {
        let _gate = self.enter().await?;
        let shard = self.hot.on_write(post).map_or(-1, i32::from);
        let (post_sql, user_sql) = (post.as_i64(), user.as_i64());
        let Held {
            client,
            direct,
            _share,
        } = self.route.held(post_sql, true).await?;
        let at = liked_at();
        let (sql, params): (&str, &[&(dyn tokio_postgres::types::ToSql + Sync)]) = if like {
            let sql = if direct { LIKE_CALL_DIRECT } else { LIKE_CALL };
            (sql, &[&post_sql, &user_sql, &shard, &at])
        } else {
            let sql = if direct {
                UNLIKE_CALL_DIRECT
            } else {
                UNLIKE_CALL
            };
            (sql, &[&post_sql, &user_sql, &shard])
        };
        let done = bounded(self.answer_deadline, async {
            let statement = client.prepare_cached(sql).await?;
            match client.query_one(&statement, params).await {
                Ok(row) => Ok(outcome(like, &row)),
                Err(e) if e.code() == Some(&SqlState::NO_DATA_FOUND) => {
                    Err(StoreError::PostNotFound(post))
                }
                Err(e) => Err(e.into()),
            }
        })
        .await;
        settle(
            client,
            done,
            if like { "a like" } else { "an unlike" },
            self.answer_deadline,
        )
    }

    /// A connection for an admin change, with the gate held (refused once
    /// the store is closing).
    async fn admin(
        &self,
    ) -> Result<(RwLockReadGuard<'_, ()>, deadpool_postgres::Object), StoreError> {
        let gate = self.enter().await?;
        Ok((gate, self.pool.get().await?))
    }

    /// One statement on a connection of the store's pool, within the
    /// store's deadline ([`settle`]).
    async fn read<T>(
        &self,
        what: &str,
        work: impl AsyncFnOnce(&Object) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let client = self.pool.get().await?;
        let done = bounded(self.answer_deadline, work(&client)).await;
        settle(client, done, what, self.answer_deadline)
    }
}

/// What every serving connection runs once, when its pool opens it (see
/// [`postgres_url::session_settings`]): `statement_timeout` and
/// `lock_timeout` at [`STATEMENT_TIMEOUT`] and [`LOCK_TIMEOUT`] unless the
/// URL's `options` (`given`) set them, then the URL's own settings, then
/// `synchronous_commit = on`. Set once connected, rather than in the
/// startup packet's `options`, which connection poolers refuse (PgBouncer:
/// "unsupported startup parameter: options"); so the URL's `options` are
/// taken out of what is sent ([`without_options`]).
fn session_settings(given: Option<&str>) -> Result<String, String> {
    postgres_url::session_settings(
        given,
        &[
            ("statement_timeout", STATEMENT_TIMEOUT),
            ("lock_timeout", LOCK_TIMEOUT),
        ],
    )
}

/// `given` without its `options`: everything else as given. The options go
/// as `set_config` calls instead ([`session_settings`]).
fn without_options(given: &tokio_postgres::Config) -> tokio_postgres::Config {
    use tokio_postgres::config::Host;
    let mut config = tokio_postgres::Config::new();
    if let Some(user) = given.get_user() {
        config.user(user);
    }
    if let Some(password) = given.get_password() {
        config.password(password);
    }
    if let Some(dbname) = given.get_dbname() {
        config.dbname(dbname);
    }
    if let Some(name) = given.get_application_name() {
        config.application_name(name);
    }
    for host in given.get_hosts() {
        match host {
            Host::Tcp(host) => config.host(host),
            #[cfg(unix)]
            Host::Unix(path) => config.host_path(path),
        };
    }
    for address in given.get_hostaddrs() {
        config.hostaddr(*address);
    }
    for port in given.get_ports() {
        config.port(*port);
    }
    if let Some(timeout) = given.get_connect_timeout() {
        config.connect_timeout(*timeout);
    }
    if let Some(timeout) = given.get_tcp_user_timeout() {
        config.tcp_user_timeout(*timeout);
    }
    config
        .ssl_mode(given.get_ssl_mode())
        .ssl_negotiation(given.get_ssl_negotiation())
        .keepalives(given.get_keepalives())
        .keepalives_idle(given.get_keepalives_idle())
        .target_session_attrs(given.get_target_session_attrs())
        .channel_binding(given.get_channel_binding())
        .load_balance_hosts(given.get_load_balance_hosts());
    if let Some(interval) = given.get_keepalives_interval() {
        config.keepalives_interval(interval);
    }
    if let Some(retries) = given.get_keepalives_retries() {
        config.keepalives_retries(retries);
    }
    config
}

/// The store's own deadline on a statement's answer: the connections'
/// `statement_timeout` as the database has it (the URL's `options` may
/// set it) plus [`ANSWER_MARGIN`]; `None` when it is off.
async fn answer_deadline(pool: &Pool) -> Result<Option<Duration>, StoreError> {
    let ms: i64 = pool
        .get()
        .await?
        .query_one(
            "SELECT setting::bigint FROM pg_settings WHERE name = 'statement_timeout'",
            &[],
        )
        .await?
        .get(0);
    Ok(u64::try_from(ms)
        .ok()
        .filter(|&ms| ms > 0)
        .map(|ms| Duration::from_millis(ms) + ANSWER_MARGIN))
}

/// Applies the migrations this database lacks, in one transaction under
/// an advisory lock (servers starting together wait for each other).
///
/// The transaction is read committed whatever the database's default
/// (`default_transaction_isolation`): under repeatable read or
/// serializable its snapshot would be taken by the lock statement, before
/// the lock is granted, and a server that waited for another would not see
/// the migrations that one applied, and apply them again.
///
/// No statement timeout (a migration may rightly take long) and none for
/// the advisory lock (another server's migration); but each migration's
/// statements wait at most [`MIGRATION_LOCK_TIMEOUT`] for a lock: an
/// `ALTER TABLE` waiting in the lock queue behind a long transaction would
/// hold every like up behind it. Past that the start fails, saying so
/// (its "lock timeout" is one of the failures the start tries again while
/// `--db-wait-secs` lasts). An already migrated database is left alone:
/// nothing is created there, so a role without `CREATE` on the schema can
/// serve it.
async fn migrate(pool: &Pool) -> Result<(), StoreError> {
    let mut client = pool.get().await?;
    let tx = client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::ReadCommitted)
        .start()
        .await?;
    tx.batch_execute("SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0")
        .await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(&format!(
        "SET LOCAL lock_timeout = '{MIGRATION_LOCK_TIMEOUT}'"
    ))
    .await?;
    let recorded: bool = tx
        .query_one("SELECT to_regclass('likekit_schema') IS NOT NULL", &[])
        .await?
        .get(0);
    if !recorded {
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS likekit_schema (
                 version    integer     PRIMARY KEY,
                 applied_at timestamptz NOT NULL DEFAULT now()
             )",
        )
        .await?;
    }
    let applied: i32 = tx
        .query_one("SELECT coalesce(max(version), 0) FROM likekit_schema", &[])
        .await?
        .get(0);
    let latest = MIGRATIONS.last().map_or(0, |(version, _)| *version);
    if applied > latest {
        return Err(StoreError::Backend(format!(
            "the database schema is at version {applied}, newer than this server knows ({latest})"
        )));
    }
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > applied) {
        let applied = async {
            tx.batch_execute(sql).await?;
            tx.execute(
                "INSERT INTO likekit_schema (version) VALUES ($1)",
                &[version],
            )
            .await
        };
        applied.await.map_err(|e| match e.code() {
            Some(code) if *code == SqlState::LOCK_NOT_AVAILABLE => {
                StoreError::Unavailable(format!(
                    "migration {version} gave up waiting {MIGRATION_LOCK_TIMEOUT} for a \
                     lock another session holds on its tables (lock timeout), rather than \
                     hold every like up behind it: {}",
                    e.as_db_error().map_or_else(
                        || e.to_string(),
                        |db| format!("{} ({})", db.message(), db.code().code())
                    )
                ))
            }
            _ => pg_error(e),
        })?;
        tracing::info!(version, "PostgreSQL schema migrated");
    }
    tx.commit().await?;
    Ok(())
}

/// Whether the database has Citus; if so, says in the log how the
/// tables and write functions are laid out, and warns when the layout
/// would send a like over more than one round trip.
async fn check_citus(pool: &Pool) -> Result<bool, StoreError> {
    let client = pool.get().await?;
    let citus: bool = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')",
            &[],
        )
        .await?
        .get(0);
    if !citus {
        return Ok(false);
    }
    let row = client.query_one(CITUS_STATE, &[]).await?;
    let (posts, likes, shards, functions): (bool, bool, bool, i64) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    if posts && likes && shards && functions == 2 {
        tracing::info!(
            "Citus: posts, likes and post_count_shards distributed by post id; \
             likes and unlikes run whole on the worker holding the post"
        );
    } else if posts || likes || shards {
        tracing::warn!(
            posts,
            likes,
            post_count_shards = shards,
            distributed_write_functions = functions,
            "Citus: the layout is incomplete, so likes may take several round trips \
             or fail; run every statement of the server README's Citus section"
        );
    } else {
        tracing::info!(
            "Citus: the tables are not distributed yet; run the server README's \
             Citus statements on the coordinator"
        );
    }
    Ok(true)
}

/// Whether the node behind `client` takes writes: neither its sessions'
/// `transaction_read_only` on (`default_transaction_read_only`, or a
/// standby) nor in recovery. A connection that finds it read-only is closed
/// with every idle one of its pool ([`settle`]).
async fn writable(client: Object) -> Result<(), StoreError> {
    let done = async {
        let statement = client
            .prepare_cached(
                "SELECT current_setting('transaction_read_only') = 'on', pg_is_in_recovery()",
            )
            .await?;
        let row = client.query_one(&statement, &[]).await?;
        let (read_only, recovery): (bool, bool) = (row.get(0), row.get(1));
        match (read_only, recovery) {
            (_, true) => Err(StoreError::Unavailable(format!(
                "{READ_ONLY}: it is a standby (in recovery), so it takes no likes"
            ))),
            (true, false) => Err(StoreError::Unavailable(format!(
                "{READ_ONLY}: its sessions are read-only (default_transaction_read_only), \
                 so it takes no likes"
            ))),
            (false, false) => Ok(()),
        }
    }
    .await;
    settle(client, Some(done), "the readiness check", None)
}

/// A write's outcome from its row: whether a like row changed, the post's
/// count and version after the write, the post row's recent likers when
/// that row changed, and how many other shard rows the post has.
fn outcome(like: bool, row: &tokio_postgres::Row) -> WriteOutcome {
    let changed: bool = row.get(0);
    let count = to_count(row.get(1));
    let version = to_count(row.get(2));
    let state = LikeState {
        count,
        liked_by_me: like,
        version,
    };
    let base_likers: Option<Vec<i64>> = row.get(3);
    let other_shard_rows: Option<i64> = row.get(4);
    // The post's own row changed and it has no shard rows: the answer is the
    // whole post, fit for the view cache.
    let snapshot = base_likers
        .filter(|_| changed && other_shard_rows == Some(0))
        .map(|likers| {
            Arc::new(PostSnapshot {
                count,
                version,
                recent_likers: ids_from_sql(&likers),
            })
        });
    WriteOutcome {
        state,
        changed,
        snapshot,
    }
}

/// One post's row or shard row as read.
struct CounterRow {
    count: i64,
    version: i64,
    likers: Vec<i64>,
    likers_at: Vec<i64>,
}

async fn replace_friends(
    tx: &deadpool_postgres::Transaction<'_>,
    users: &[(UserId, Vec<UserId>)],
) -> Result<(), StoreError> {
    // Every user and every friend must exist; the first missing one (in
    // order) is the error. Each id is checked once.
    let mut distinct = HashSet::new();
    let wanted: Vec<i64> = users
        .iter()
        .flat_map(|(user, friends)| std::iter::once(user).chain(friends))
        .filter(|&&id| distinct.insert(id))
        .map(|&id| id.as_i64())
        .collect();
    let missing = tx.prepare_cached(FIRST_MISSING_USER).await?;
    if let Some(row) = tx.query_opt(&missing, &[&wanted]).await? {
        return Err(StoreError::UserNotFound(id_from_sql(row.get(0))?));
    }
    let owners: Vec<i64> = users.iter().map(|(user, _)| user.as_i64()).collect();
    tx.execute(
        "DELETE FROM friends WHERE user_id = ANY ($1::bigint[])",
        &[&owners],
    )
    .await?;
    let (mut from, mut to) = (Vec::new(), Vec::new());
    for (user, friends) in users {
        for friend in friends {
            from.push(user.as_i64());
            to.push(friend.as_i64());
        }
    }
    if from.len() >= BULK_FRIENDS {
        // Every id was checked above, so the per-row foreign-key checks
        // (a lookup and a row lock on `users` for each side of each row,
        // most of a large seed's time) are replaced by one validating join
        // when the keys are added back, all in this transaction.
        for sql in DROP_FRIEND_KEYS {
            tx.batch_execute(sql).await?;
        }
        tx.execute(INSERT_FRIENDS, &[&from, &to]).await?;
        for sql in ADD_FRIEND_KEYS {
            tx.batch_execute(sql).await?;
        }
    } else if !from.is_empty() {
        tx.execute(INSERT_FRIENDS, &[&from, &to]).await?;
    }
    Ok(())
}

async fn apply_seed(client: &mut deadpool_postgres::Object, seed: &Seed) -> Result<(), StoreError> {
    check_seed(seed)?;
    let tx = client.transaction().await?;
    // A large seed may rightly take long, and may wait for its locks.
    tx.batch_execute("SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0")
        .await?;

    // Users (a later entry for the same id wins, as with one upsert each).
    let mut names: HashMap<UserId, &str> = HashMap::new();
    let mut order = Vec::new();
    for user in &seed.users {
        if names.insert(user.id, &user.name).is_none() {
            order.push(user.id);
        }
    }
    let ids: Vec<i64> = order.iter().map(|&id| id.as_i64()).collect();
    let texts: Vec<&str> = order.iter().map(|id| names[id]).collect();
    if !ids.is_empty() {
        tx.execute(UPSERT_USERS, &[&ids, &texts]).await?;
    }
    let mut lists: HashMap<UserId, Vec<UserId>> = HashMap::new();
    for user in &seed.users {
        lists.insert(user.id, unique(&user.friends));
    }
    let lists: Vec<(UserId, Vec<UserId>)> = order
        .iter()
        .filter_map(|id| lists.remove(id).map(|friends| (*id, friends)))
        .collect();
    replace_friends(&tx, &lists).await?;

    // Posts, then likes in the order given (oldest first).
    let post_ids: Vec<i64> = seed.posts.iter().map(|p| p.id.as_i64()).collect();
    if !post_ids.is_empty() {
        tx.execute(
            "INSERT INTO posts (id) SELECT unnest($1::bigint[]) ON CONFLICT DO NOTHING",
            &[&post_ids],
        )
        .await?;
    }
    let mut seen = HashSet::new();
    let (mut like_posts, mut like_users) = (Vec::new(), Vec::new());
    for post in &seed.posts {
        for &user in &post.likers {
            if seen.insert((post.id, user)) {
                like_posts.push(post.id.as_i64());
                like_users.push(user.as_i64());
            }
        }
    }
    if like_posts.is_empty() {
        tx.commit().await?;
        return Ok(());
    }
    let inserted: HashSet<(i64, i64)> = tx
        .query(
            "INSERT INTO likes (post_id, user_id) \
             SELECT * FROM unnest($1::bigint[], $2::bigint[]) \
             ON CONFLICT DO NOTHING RETURNING post_id, user_id",
            &[&like_posts, &like_users],
        )
        .await?
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    if inserted.is_empty() {
        tx.commit().await?;
        return Ok(());
    }

    // Each touched post's count and version go up by its new like rows and
    // its newest likers go in front of its list, in one statement that adds
    // to each row under that row's lock: nothing is locked beforehand (Citus
    // refuses `FOR UPDATE` over posts on several shards) and a concurrent
    // like is never lost.
    let mut added: HashMap<i64, (i64, Vec<(i64, i64)>)> = HashMap::new();
    for (&post, &user) in like_posts.iter().zip(&like_users) {
        if inserted.contains(&(post, user)) {
            let (n, likers) = added.entry(post).or_default();
            *n += 1;
            likers.push((user, liked_at()));
        }
    }
    let (mut ids, mut counts) = (Vec::new(), Vec::new());
    let (mut flat_post, mut flat_user, mut flat_at, mut flat_pos) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (&post, (n, likers)) in &added {
        ids.push(post);
        counts.push(*n);
        // Newest first (the seed lists likes oldest first), at most 100.
        for (pos, &(user, at)) in likers.iter().rev().take(RECENT_LIKERS).enumerate() {
            flat_post.push(post);
            flat_user.push(user);
            flat_at.push(at);
            flat_pos.push(i32::try_from(pos).unwrap_or(i32::MAX));
        }
    }
    let updated: HashSet<i64> = tx
        .query(
            SEED_COUNTS,
            &[&ids, &counts, &flat_post, &flat_user, &flat_at, &flat_pos],
        )
        .await?
        .iter()
        .map(|row| row.get(0))
        .collect();
    if let Some(&missing) = ids.iter().find(|id| !updated.contains(id)) {
        // Like rows for a post that is not there (the seed's posts were
        // inserted above, so only a concurrent change could do this).
        return Err(match id_from_sql(missing) {
            Ok(post) => StoreError::PostNotFound(post),
            Err(e) => e,
        });
    }
    tx.commit().await?;
    Ok(())
}

#[async_trait]
impl Store for PostgresStore {
    async fn like(&self, user: UserId, post: PostId) -> Result<WriteOutcome, StoreError> {
        self.write(user, post, true).await
    }

    async fn unlike(&self, user: UserId, post: PostId) -> Result<WriteOutcome, StoreError> {
        self.write(user, post, false).await
    }

    async fn post(&self, post: PostId) -> Result<Option<PostSnapshot>, StoreError> {
        let found = match ask(&self.post_batcher, post.as_i64()).await {
            Some(found) => found?,
            None => read_posts(self.pool.clone(), vec![post.as_i64()])
                .await?
                .pop()
                .flatten(),
        };
        Ok(found.map(Arc::unwrap_or_clone))
    }

    async fn liked(&self, user: UserId, posts: &[PostId]) -> Result<Vec<bool>, StoreError> {
        if posts.is_empty() {
            return Ok(vec![false; posts.len()]);
        }
        if let [post] = posts {
            // One view's own row: batched with the others waiting now.
            if let Some(liked) = ask(&self.liked_batcher, (post.as_i64(), user.as_i64())).await {
                return Ok(vec![liked?]);
            }
            // The batcher is gone (its runtime shut down): ask directly.
        }
        let ids: Vec<i64> = posts.iter().map(|&post| post.as_i64()).collect();
        let liked: HashSet<i64> = self
            .read("a feed's own rows", async |client| {
                let statement = client.prepare_cached(LIKED).await?;
                Ok(client
                    .query(&statement, &[&user.as_i64(), &ids])
                    .await?
                    .iter()
                    .map(|row| row.get(0))
                    .collect())
            })
            .await?;
        Ok(posts
            .iter()
            .map(|&post| liked.contains(&post.as_i64()))
            .collect())
    }

    async fn friends(&self, user: UserId) -> Result<Vec<(UserId, String)>, StoreError> {
        self.read("a friends lookup", async |client| {
            let statement = client.prepare_cached(FRIENDS).await?;
            Ok(client
                .query(&statement, &[&user.as_i64()])
                .await?
                .iter()
                .filter_map(|row| Some((UserId::try_from(row.get::<_, i64>(0)).ok()?, row.get(1))))
                .collect())
        })
        .await
    }

    async fn user_name(&self, user: UserId) -> Result<Option<String>, StoreError> {
        self.read("a user's name", async |client| {
            let statement = client.prepare_cached(USER_NAME).await?;
            Ok(client
                .query_opt(&statement, &[&user.as_i64()])
                .await?
                .map(|row| row.get(0)))
        })
        .await
    }

    async fn put_user(&self, user: UserId, name: &str) -> Result<Upsert, StoreError> {
        check_name(name)?;
        let (_gate, client) = self.admin().await?;
        let done = bounded(self.answer_deadline, async {
            // xmax is 0 on a freshly inserted row version.
            let row = client
                .query_one(
                    "INSERT INTO users (id, name) VALUES ($1, $2) \
                     ON CONFLICT (id) DO UPDATE SET name = excluded.name \
                     RETURNING xmax = 0",
                    &[&user.as_i64(), &name],
                )
                .await?;
            Ok(if row.get(0) {
                Upsert::Created
            } else {
                Upsert::Updated
            })
        })
        .await;
        settle(client, done, "a user's change", self.answer_deadline)
    }

    async fn put_post(&self, post: PostId) -> Result<Upsert, StoreError> {
        let (_gate, client) = self.admin().await?;
        let done = bounded(self.answer_deadline, async {
            let inserted = client
                .execute(
                    "INSERT INTO posts (id) VALUES ($1) ON CONFLICT DO NOTHING",
                    &[&post.as_i64()],
                )
                .await?;
            Ok(if inserted == 1 {
                Upsert::Created
            } else {
                Upsert::Updated
            })
        })
        .await;
        settle(client, done, "a new post", self.answer_deadline)
    }

    async fn set_friends(&self, user: UserId, friends: &[UserId]) -> Result<(), StoreError> {
        check_friends(friends)?;
        let friends = unique(friends);
        let (_gate, mut client) = self.admin().await?;
        let done = bounded(self.answer_deadline, async {
            let tx = client.transaction().await?;
            replace_friends(&tx, &[(user, friends)]).await?;
            tx.commit().await?;
            Ok(())
        })
        .await;
        settle(client, done, "a friend list's change", self.answer_deadline)
    }

    async fn seed(&self, seed: &Seed) -> Result<(), StoreError> {
        let (_gate, mut client) = self.admin().await?;
        let done = apply_seed(&mut client, seed).await;
        settle(client, Some(done), "a seed", None)
    }

    /// Without a statement timeout (every post's row is written), with the
    /// lock timeout: `TRUNCATE` waits for every reader, and likes would
    /// queue behind it.
    async fn reset(&self) -> Result<(), StoreError> {
        let (_gate, mut client) = self.admin().await?;
        let done = async {
            let tx = client.transaction().await?;
            tx.batch_execute(
                "SET LOCAL statement_timeout = 0; \
                 TRUNCATE likes, post_count_shards; \
                 UPDATE posts SET count = 0, version = 0, likers = '{}', likers_at = '{}', \
                     shard_rows = 0 \
                 WHERE count <> 0 OR version <> 0 OR likers <> '{}' OR shard_rows <> 0;",
            )
            .await?;
            tx.commit().await?;
            Ok(())
        }
        .await;
        settle(client, Some(done), "a reset", None)
    }

    /// Every post and every like row: without a statement timeout.
    async fn audit(&self) -> Result<Vec<PostAudit>, StoreError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        tx.batch_execute("SET LOCAL statement_timeout = 0").await?;
        let rows = tx.query(AUDIT, &[]).await?;
        tx.commit().await?;
        rows.iter()
            .map(|row| {
                let post = id_from_sql(row.get(0))?;
                let rows = to_count(row.get(3));
                Ok(PostAudit {
                    post,
                    count: super::audited(post, "count", row.get(1), rows)?,
                    version: super::audited(post, "version", row.get(2), rows)?,
                    rows,
                    shard_rows: to_count(row.get(4)),
                })
            })
            .collect()
    }

    /// Refuses new writes at once, then waits for the writes in flight
    /// (each bounded by the store's deadlines) for up to 10 s (`CLOSE_WAIT`); a
    /// database that does not answer them by then does not hold the
    /// shutdown up: they are left to end on their own (each commits whole
    /// or not at all, and its client, answered or not, may send it again).
    async fn close(&self) -> Result<(), StoreError> {
        self.closing.store(true, Ordering::Release);
        if tokio::time::timeout(CLOSE_WAIT, self.gate.write())
            .await
            .is_err()
        {
            tracing::warn!(
                "closing the PostgreSQL store: writes still waited on the database after \
                 {} s; it closes without them",
                CLOSE_WAIT.as_secs()
            );
        }
        Ok(())
    }

    /// One post's row, read as a view reads it, and whether the node that
    /// post's likes go to takes writes (`transaction_read_only` off, not in
    /// recovery): a standby after a failover, or a database set read-only,
    /// answers reads but refuses every like. With direct routing on Citus
    /// the post's node is a worker, so the node `--db` names (users,
    /// friends, feeds and admin go there) is asked too.
    async fn ready(&self) -> Result<(), StoreError> {
        let post = async { self.post(PostId::MIN).await.map(drop) };
        let writes = async {
            let client = self.route.client(PostId::MIN.as_i64()).await?;
            writable(client).await
        };
        if self.route.workers.is_none() {
            return tokio::try_join!(post, writes).map(drop);
        }
        let own = async { writable(self.pool.get().await?).await };
        tokio::try_join!(post, writes, own).map(drop)
    }

    fn hot_posts(&self) -> Option<&HotPosts> {
        Some(&self.hot)
    }

    /// The store's own pool, `main`, and on Citus with direct routing one
    /// per worker the placement map names now, `worker:HOST:PORT` (none
    /// while direct routing is off). A mutex taken briefly per pool; no
    /// I/O.
    fn pools(&self) -> Vec<PoolStatus> {
        let mut pools = vec![pool_status("main".to_owned(), &self.pool)];
        if let Some(workers) = &self.route.workers {
            pools.extend(workers.pools());
        }
        pools
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `sslmode` the URL's reading missed but tokio-postgres would take
    /// is refused, never overridden; none left is fine.
    #[test]
    fn an_sslmode_read_two_ways_is_refused() {
        let missed = tokio_postgres::Config::from_str("host=db sslmode=require").expect("parsed");
        let refused = refuse_unread_sslmode(&missed, "host=db").expect_err("refused");
        assert!(
            refused.to_string().contains("sslmode could not be read"),
            "{refused}"
        );
        let (url, tls) = split_url("postgres://ana:pa?ss@db/likes?sslmode=require").expect("split");
        let config = tokio_postgres::Config::from_str(&url).expect("parsed");
        assert_eq!(tls.mode, SslMode::Require);
        assert_eq!(config.get_password(), Some(&b"pa?ss"[..]));
        refuse_unread_sslmode(&config, &url).expect("read alike");
    }

    /// Whatever visible ASCII character a password holds, once or twice,
    /// unencoded: the server reads `sslmode=require` from the URL and leaves
    /// none for tokio-postgres, which reads the password back as given
    /// (percent-decoded); and the logs never show it. (`@` ends the
    /// credentials for tokio-postgres, so a password with one only has to
    /// stay hidden.)
    #[test]
    fn no_password_turns_tls_off_or_shows_in_the_logs() {
        for byte in b' '..=b'~' {
            let c = char::from(byte);
            for password in [format!("pa{c}ss"), format!("{c}pass{c}word{c}")] {
                let url = format!(
                    "postgres://ana:{password}@db:5432/likes?sslmode=require&application_name=t"
                );
                let shown = redact_url(&url);
                assert!(!shown.contains(&password), "{url} shown as {shown}");
                if c == '@' {
                    continue;
                }
                let (left, tls) = split_url(&url).expect("taken");
                assert_eq!(tls.mode, SslMode::Require, "{url}");
                assert!(!left.contains("sslmode"), "{url} left as {left}");
                let Ok(config) = tokio_postgres::Config::from_str(&left) else {
                    // `%` not followed by two hex digits: tokio-postgres
                    // refuses the URL, so it is never used without TLS.
                    assert!(password.contains('%'), "{url}");
                    continue;
                };
                refuse_unread_sslmode(&config, &left).expect("no sslmode left");
                let read: Vec<u8> = percent_encoding::percent_decode_str(&password).collect();
                assert_eq!(config.get_password(), Some(&read[..]), "{url}");
            }
        }
    }

    /// Serving connections get a statement and a lock timeout unless the
    /// URL's `options` set them (then the URL's hold), then the URL's own
    /// settings, and durability last, which the URL cannot turn off; as
    /// `set_config` calls, which a connection pooler passes on (it refuses
    /// startup `options`).
    #[test]
    fn serving_connections_get_timeouts_unless_the_url_sets_them() {
        let set = |given: Option<&str>| session_settings(given).expect("settings");
        assert_eq!(
            set(None),
            "SELECT set_config(E'statement_timeout', E'5s', false), \
             set_config(E'lock_timeout', E'2s', false), \
             set_config(E'synchronous_commit', E'on', false)"
        );
        assert_eq!(set(Some("  ")), set(None));
        assert_eq!(
            set(Some("-c statement_timeout=0")),
            "SELECT set_config(E'lock_timeout', E'2s', false), \
             set_config(E'statement_timeout', E'0', false), \
             set_config(E'synchronous_commit', E'on', false)"
        );
        assert_eq!(
            set(Some("--lock-timeout=1s -c search_path=a,b")),
            "SELECT set_config(E'statement_timeout', E'5s', false), \
             set_config(E'lock_timeout', E'1s', false), \
             set_config(E'search_path', E'a,b', false), \
             set_config(E'synchronous_commit', E'on', false)"
        );
        assert_eq!(
            set(Some("-cstatement_timeout=1s\t-c deadlock_timeout=1s")),
            "SELECT set_config(E'lock_timeout', E'2s', false), \
             set_config(E'statement_timeout', E'1s', false), \
             set_config(E'deadlock_timeout', E'1s', false), \
             set_config(E'synchronous_commit', E'on', false)"
        );
        assert!(
            set(Some("-c synchronous_commit=off")).ends_with(
                "set_config(E'synchronous_commit', E'off', false), \
                 set_config(E'synchronous_commit', E'on', false)"
            ),
            "the URL cannot turn durability off"
        );
        // PostgreSQL's escapes: `\ ` a space within a value; quotes and
        // backslashes reach the database as they were meant.
        assert!(
            set(Some(r"-c application_name=it's\ a\\b"))
                .contains(r"set_config(E'application_name', E'it''s a\\b', false)")
        );
        for refused in [
            "-B 100",
            "statement_timeout=1s",
            "-c",
            "-c statement_timeout",
            "-c =1",
            "-c bad;name=1",
            "--x'y=1",
        ] {
            let err = session_settings(Some(refused)).expect_err(refused);
            assert!(err.contains("the URL's options"), "{refused}: {err}");
        }
    }

    /// The pool connects with everything the URL said but its `options`
    /// (sent as `set_config` calls instead): a field left behind would show
    /// in the two configurations' `Debug`.
    #[test]
    fn the_startup_packet_carries_everything_but_the_options() {
        let given = tokio_postgres::Config::from_str(
            "postgres://ana:pw@db1:5433,db2/likes?options=-c%20search_path%3Ds\
             &application_name=x&connect_timeout=3&tcp_user_timeout=4000\
             &keepalives=0&keepalives_idle=9&target_session_attrs=read-write\
             &channel_binding=require&load_balance_hosts=random&hostaddr=10.0.0.1,10.0.0.2",
        )
        .expect("a URL tokio-postgres reads");
        let copy = without_options(&given);
        assert_eq!(copy.get_options(), None);
        assert_eq!(
            format!("{copy:?}"),
            format!("{given:?}").replace(r#"options: Some("-c search_path=s")"#, "options: None")
        );
        assert_eq!(copy.get_password(), given.get_password());
        assert_eq!(copy.get_ssl_negotiation(), given.get_ssl_negotiation());
    }

    /// Timeouts, a read-only, full or restarting database: failures that
    /// pass (503 with `Retry-After`); a bad statement or a missing table
    /// is not one.
    #[test]
    fn failures_that_pass_are_told_apart() {
        for code in [
            SqlState::QUERY_CANCELED,
            SqlState::LOCK_NOT_AVAILABLE,
            SqlState::READ_ONLY_SQL_TRANSACTION,
            SqlState::DISK_FULL,
            SqlState::ADMIN_SHUTDOWN,
            SqlState::CRASH_SHUTDOWN,
            SqlState::CANNOT_CONNECT_NOW,
            SqlState::T_R_SERIALIZATION_FAILURE,
            SqlState::T_R_DEADLOCK_DETECTED,
        ] {
            assert!(passing(&code).is_some(), "{}", code.code());
        }
        for code in [
            SqlState::UNIQUE_VIOLATION,
            SqlState::SYNTAX_ERROR,
            SqlState::UNDEFINED_TABLE,
            SqlState::INSUFFICIENT_PRIVILEGE,
            SqlState::NO_DATA_FOUND,
        ] {
            assert_eq!(passing(&code), None, "{}", code.code());
        }
        let read_only_answer = passing(&SqlState::READ_ONLY_SQL_TRANSACTION).expect("passes");
        assert!(read_only(&StoreError::Unavailable(format!(
            "{read_only_answer}: PostgreSQL ERROR (25006): …"
        ))));
        assert!(!read_only(&StoreError::Unavailable(
            passing(&SqlState::LOCK_NOT_AVAILABLE)
                .expect("passes")
                .to_owned()
        )));
        assert!(!read_only(&StoreError::Backend(READ_ONLY.to_owned())));
    }

    /// A password that is no UTF-8 once percent-decoded is never shown: in
    /// a parameter tokio-postgres refuses it, in the credentials it takes
    /// it as bytes (here nothing listens on the port).
    #[tokio::test]
    async fn a_password_that_is_no_utf8_is_never_shown() {
        for (url, refusal) in [
            (
                "postgres://ana@127.0.0.1:1/likes?password=%FF%FEs3cret&sslmode=disable",
                "bad PostgreSQL URL",
            ),
            (
                "postgres://ana:%FFs3cret@127.0.0.1:1/likes",
                "Connection refused",
            ),
        ] {
            let err = PostgresStore::connect(PostgresOptions::new(url))
                .await
                .expect_err("refused")
                .to_string();
            assert!(err.contains(refusal), "{err}");
            assert!(!err.contains("s3cret"), "{err}");
            assert!(!err.contains("%FF"), "{err}");
        }
    }

    #[test]
    fn the_sql_keeps_as_many_likers_as_the_store() {
        // The statements spell the limit out as 100.
        assert_eq!(RECENT_LIKERS, 100);
        for sql in [WRITE_FUNCTIONS, SEED_COUNTS] {
            assert!(sql.contains("[1:100]"));
        }
    }

    #[test]
    fn what_citus_runs_avoids_what_it_cannot_route_or_deparse() {
        // No data-modifying CTE (Citus plans one as several subplans).
        for (what, sql) in CITUS_STATEMENTS {
            assert!(!sql.contains("WITH "), "{what}");
        }
        assert!(!WRITE_FUNCTIONS.contains("WITH "));
        // Citus 13.2 crashes deparsing an array slice at the top of an
        // UPDATE SET value: every slice there is wrapped.
        for sql in [WRITE_FUNCTIONS, SEED_COUNTS] {
            for line in sql.lines().filter(|line| line.contains("[1:100]")) {
                assert!(line.contains("coalesce(("), "{line}");
            }
        }
        // One constraint per ALTER TABLE; no row locks across shards.
        for sql in DROP_FRIEND_KEYS.iter().chain(ADD_FRIEND_KEYS) {
            assert_eq!(sql.matches("CONSTRAINT").count(), 1, "{sql}");
        }
        assert!(!SEED_COUNTS.contains("FOR UPDATE"));
    }

    #[test]
    fn migrations_are_numbered_in_order() {
        let versions: Vec<i32> = MIGRATIONS.iter().map(|(v, _)| *v).collect();
        let expected: Vec<i32> = (1..=MIGRATIONS.len() as i32).collect();
        assert_eq!(versions, expected);
    }
}
