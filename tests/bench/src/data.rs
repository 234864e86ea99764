//! The bench's data set: deterministic, built straight into a store,
//! with sign-in tokens in bulk and the exact-count audit.
//!
//! [`SeedParams`] names the size (by default 100,000 posts, 1,000,000 like
//! rows, 10,000 users with 300 friends each). [`generate`] turns it into a
//! [`Seed`] with a seeded random generator, so the same parameters always
//! give the same data:
//!
//! * Like counts follow a Zipf law (the post of rank *r* gets about *C / r*
//!   likes), capped at the number of users because a user likes a post at
//!   most once; the total is exactly `likes`. With the defaults the ten most
//!   popular posts are liked by every user and most posts have a handful.
//! * Each post's likers are distinct users in a random order (the order of
//!   the likes, oldest first), so the recent likers are a random sample.
//! * Every user has exactly `friends` distinct friends (a directed list).
//! * [`view_mix`] draws post ids for the view load in proportion to
//!   popularity (`likes + 1`): popular posts are viewed more, in line with
//!   the design's one like per twenty views.
//!
//! The data goes in through [`Store::seed`], the same path as the server's
//! `--seed`, so counts, versions and recent likers obey the store's own
//! rules and [`Store::audit`] agrees with them.

use std::{
    collections::HashSet,
    fmt::Write as _,
    fs,
    io::{self, Write as _},
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

use clap::Args;
use likekit_server::{
    Database, Tokens,
    store::{
        HotPostOptions, Layout, MAX_FRIENDS, PostgresOptions, PostgresStore, SqliteOptions,
        SqliteStore, Store,
    },
    wire::{
        PostId, UserId,
        admin::{Seed, SeedPost, SeedUser},
    },
};

/// Bumped whenever [`generate`] changes what it makes, so cached data sets
/// built by an older generator are rebuilt.
pub const GENERATOR_VERSION: u32 = 1;

/// The size and random seed of a benchmark data set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Args)]
pub struct SeedParams {
    /// Posts, with ids 1..=posts (id = popularity rank).
    #[arg(long, default_value_t = 100_000)]
    pub posts: u64,
    /// Like rows in all.
    #[arg(long, default_value_t = 1_000_000)]
    pub likes: u64,
    /// Users, with ids 1..=users; every one is a viewer.
    #[arg(long, default_value_t = 10_000)]
    pub users: u64,
    /// Friends per user.
    #[arg(long, default_value_t = 300)]
    pub friends: u64,
    /// The random generator's seed.
    #[arg(long = "rng-seed", default_value_t = 1)]
    pub rng_seed: u64,
}

impl Default for SeedParams {
    fn default() -> Self {
        Self {
            posts: 100_000,
            likes: 1_000_000,
            users: 10_000,
            friends: 300,
            rng_seed: 1,
        }
    }
}

impl SeedParams {
    /// Refuses sizes that cannot be built.
    pub fn check(&self) -> Result<(), String> {
        if self.posts == 0 || self.users == 0 {
            return Err("there must be at least one post and one user".into());
        }
        if self.posts > 10_000_000 || self.users > 10_000_000 {
            return Err("at most 10,000,000 posts and users".into());
        }
        if self.likes > self.posts.saturating_mul(self.users) {
            return Err(format!(
                "{} likes do not fit: each of {} users can like each of {} posts once",
                self.likes, self.users, self.posts
            ));
        }
        if self.likes > 100_000_000 {
            return Err("at most 100,000,000 likes".into());
        }
        if self.friends >= self.users || self.friends > MAX_FRIENDS as u64 {
            return Err(format!(
                "friends per user must be below the number of users ({}) and at most {}",
                self.users, MAX_FRIENDS
            ));
        }
        Ok(())
    }

    /// One line naming everything that decides the data, for the marker
    /// file of a cached data set.
    pub fn describe(&self) -> String {
        format!(
            "generator={GENERATOR_VERSION} posts={} likes={} users={} friends={} rng-seed={}",
            self.posts, self.likes, self.users, self.friends, self.rng_seed
        )
    }
}

/// A user id of the data set (1..=users, checked by [`SeedParams::check`]).
fn user_id(id: u64) -> UserId {
    UserId::new(id).expect("user ids 1..=users are in range")
}

/// SplitMix64: tiny, fast and fixed forever, so data sets never change
/// under a dependency upgrade.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// `k` distinct numbers from `1..=n`, ascending (Floyd's algorithm, or its
/// complement when `k` is more than half of `n`).
fn distinct(rng: &mut Rng, n: u64, k: u64) -> Vec<u64> {
    debug_assert!(k <= n);
    let floyd = |rng: &mut Rng, k: u64| {
        let mut chosen = HashSet::with_capacity(k as usize);
        for j in n - k..n {
            let t = rng.below(j + 1) + 1;
            if !chosen.insert(t) {
                chosen.insert(j + 1);
            }
        }
        chosen
    };
    let mut out: Vec<u64> = if 2 * k <= n {
        floyd(rng, k).into_iter().collect()
    } else {
        let left_out = floyd(rng, n - k);
        (1..=n).filter(|x| !left_out.contains(x)).collect()
    };
    out.sort_unstable();
    out
}

/// Each post's like count (index 0 is post 1): `min(users, C / rank)` with
/// `C` chosen so the counts add up to exactly `likes`.
pub fn like_counts(params: &SeedParams) -> Vec<u64> {
    let (posts, users) = (params.posts, params.users as f64);
    let total = |c: f64| -> f64 { (1..=posts).map(|r| (c / r as f64).min(users)).sum() };
    let (mut low, mut high) = (0.0_f64, users * posts as f64);
    for _ in 0..200 {
        let mid = (low + high) / 2.0;
        if total(mid) > params.likes as f64 {
            high = mid;
        } else {
            low = mid;
        }
    }
    let mut counts: Vec<u64> = (1..=posts)
        .map(|r| (low / r as f64).min(users).floor() as u64)
        .collect();
    let mut missing = params.likes.saturating_sub(counts.iter().sum());
    // Flooring loses less than one like per post: hand them out from the top.
    for count in counts.iter_mut() {
        if missing == 0 {
            break;
        }
        if *count < params.users {
            *count += 1;
            missing -= 1;
        }
    }
    counts
}

const FIRST_NAMES: [&str; 40] = [
    "Ana", "Ben", "Chloé", "Dev", "Emeka", "Fatima", "Gus", "Hana", "Ivan", "Jia", "Kofi", "Lena",
    "Mateo", "Nia", "Omar", "Priya", "Quinn", "Rosa", "Sami", "Tariq", "Uma", "Vik", "Wen",
    "Ximena", "Yusuf", "Zoe", "Aiko", "Bruno", "Carmen", "Dmitri", "Elif", "Finn", "Greta", "Hugo",
    "Ines", "Jonas", "Kira", "Luca", "Maya", "Noor",
];

/// The whole data set for `params` (which must pass [`SeedParams::check`]).
pub fn generate(params: &SeedParams) -> Seed {
    let mut rng = Rng::new(params.rng_seed);
    let users = (1..=params.users)
        .map(|id| {
            let first = FIRST_NAMES[rng.below(FIRST_NAMES.len() as u64) as usize];
            let initial = char::from(b'A' + rng.below(26) as u8);
            // Friends are drawn from the other users: 1..=users-1, skipping `id`.
            let friends = distinct(&mut rng, params.users - 1, params.friends)
                .into_iter()
                .map(|f| user_id(if f >= id { f + 1 } else { f }))
                .collect();
            SeedUser {
                id: user_id(id),
                name: format!("{first} {initial}."),
                friends,
            }
        })
        .collect();
    let posts = like_counts(params)
        .into_iter()
        .zip(1..)
        .map(|(count, id)| {
            let mut likers = distinct(&mut rng, params.users, count);
            rng.shuffle(&mut likers);
            SeedPost {
                id: PostId::new(id).expect("post ids 1..=posts are in range"),
                likers: likers.into_iter().map(user_id).collect(),
            }
        })
        .collect();
    Seed { users, posts }
}

/// `n` post ids drawn in proportion to `likes + 1`: what the view load asks
/// for.
pub fn view_mix(params: &SeedParams, n: usize) -> Vec<u64> {
    let mut cumulative = Vec::with_capacity(params.posts as usize);
    let mut sum = 0u64;
    for count in like_counts(params) {
        sum += count + 1;
        cumulative.push(sum);
    }
    let mut rng = Rng::new(params.rng_seed ^ 0x5649_4557_5321);
    (0..n)
        .map(|_| {
            let x = rng.below(sum);
            cumulative.partition_point(|&c| c <= x) as u64 + 1
        })
        .collect()
}

/// The post the hot-post load hammers: the least popular one, so nearly
/// every like it gets is new.
pub fn hot_post(params: &SeedParams) -> u64 {
    params.posts
}

fn remove_database(path: &Path) -> Result<(), String> {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let file = PathBuf::from(format!("{}{suffix}", path.display()));
        match fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove {}: {e}", file.display())),
        }
    }
    Ok(())
}

pub fn open_sqlite(path: &Path) -> Result<SqliteStore, String> {
    SqliteStore::open(SqliteOptions {
        database: Database::File(path.to_path_buf()),
        ..SqliteOptions::default()
    })
    .map_err(|e| format!("cannot open {}: {e}", path.display()))
}

/// Opens the store `db` names: a SQLite file or a PostgreSQL URL.
pub async fn open_store(db: &str) -> Result<Arc<dyn Store>, String> {
    match db.parse::<Database>() {
        Ok(Database::File(path)) if path.is_file() => Ok(Arc::new(open_sqlite(&path)?)),
        Ok(Database::Postgres(url)) => Ok(Arc::new(
            PostgresStore::connect(PostgresOptions {
                url,
                connections: 4,
                hot_posts: HotPostOptions::default(),
                layout: Layout::Auto,
                direct_to_workers: true,
                ca_file: None,
            })
            .await
            .map_err(|e| format!("cannot connect to {db}: {e}"))?,
        )),
        _ => Err(format!("{db} is not a database file or a PostgreSQL URL")),
    }
}

/// Writes the view mix and the marker of a data set into `dir`.
fn write_mix(dir: &Path, params: &SeedParams) -> Result<(), String> {
    let mut text = String::new();
    for post in view_mix(params, 1 << 16) {
        let _ = writeln!(text, "{post}");
    }
    let views = dir.join("views.txt");
    fs::write(&views, text).map_err(|e| format!("cannot write {}: {e}", views.display()))?;
    let marker = dir.join("seed.txt");
    fs::write(&marker, marker_text(params))
        .map_err(|e| format!("cannot write {}: {e}", marker.display()))
}

fn marker_text(params: &SeedParams) -> String {
    format!("{}\nhot_post={}\n", params.describe(), hot_post(params))
}

/// Seeds a database that is not a file in `dir` (PostgreSQL), always anew,
/// and writes the view mix and marker into `dir`.
pub async fn seed_database(db: &str, dir: &Path, params: &SeedParams) -> Result<(), String> {
    params.check()?;
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let started = Instant::now();
    let store = open_store(db).await?;
    store
        .seed(&generate(params))
        .await
        .map_err(|e| format!("seeding failed: {e}"))?;
    store.close().await.map_err(|e| e.to_string())?;
    write_mix(dir, params)?;
    eprintln!(
        "bench seed: seeded {} in {:.1} s: {}",
        Database::Postgres(db.to_owned()),
        started.elapsed().as_secs_f64(),
        params.describe()
    );
    Ok(())
}

/// Builds the data set into `dir` (`likekit.db`, `views.txt`, `seed.txt`)
/// unless it is there already.
pub async fn seed(dir: &Path, params: &SeedParams) -> Result<(), String> {
    params.check()?;
    let marker = dir.join("seed.txt");
    let db = dir.join("likekit.db");
    let views = dir.join("views.txt");
    let wanted = marker_text(params);
    if fs::read_to_string(&marker).is_ok_and(|m| m == wanted) && db.is_file() && views.is_file() {
        eprintln!(
            "bench seed: reusing {} ({})",
            dir.display(),
            params.describe()
        );
        return Ok(());
    }
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let _ = fs::remove_file(&marker);
    let building = dir.join("building.db");
    remove_database(&building)?;
    remove_database(&db)?;

    let started = Instant::now();
    let data = generate(params);
    let generated = started.elapsed();
    let store = open_sqlite(&building)?;
    store
        .seed(&data)
        .await
        .map_err(|e| format!("seeding failed: {e}"))?;
    store.close().await.map_err(|e| e.to_string())?;
    // Dropping the store closes every connection; the last one checkpoints
    // the WAL into the file and removes it.
    drop(store);
    drop(data);
    fs::rename(&building, &db).map_err(|e| format!("cannot rename into {}: {e}", db.display()))?;
    remove_database(&building)?;

    write_mix(dir, params)?;
    eprintln!(
        "bench seed: built {} in {:.1} s (generating {:.1} s): {}",
        db.display(),
        started.elapsed().as_secs_f64(),
        generated.as_secs_f64(),
        params.describe()
    );
    Ok(())
}

/// Writes sign-in tokens for users `1..=users`, one per line, signed with
/// `secret` and valid for `ttl`.
pub fn write_tokens(secret: &str, users: u64, ttl: Duration, out: &Path) -> Result<(), String> {
    let tokens = Tokens::new(secret.as_bytes()).map_err(|e| e.to_string())?;
    let file =
        fs::File::create(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut writer = io::BufWriter::new(file);
    for user in 1..=users {
        writeln!(writer, "{}", tokens.mint(user_id(user), ttl))
            .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    }
    writer
        .flush()
        .map_err(|e| format!("cannot write {}: {e}", out.display()))
}

/// Checks every post's count against its like rows: prints `exact: yes|no`
/// with the totals (and the first posts that differ) and returns whether
/// every count is exact.
pub async fn audit(db: &str) -> Result<bool, String> {
    let store = open_store(db).await?;
    let started = Instant::now();
    let posts = store.audit().await.map_err(|e| e.to_string())?;
    store.close().await.map_err(|e| e.to_string())?;
    let rows: u64 = posts.iter().map(|p| p.rows).sum();
    let count: u64 = posts.iter().map(|p| p.count).sum();
    let wrong: Vec<_> = posts.iter().filter(|p| p.count != p.rows).collect();
    println!(
        "exact: {} ({} posts, {count} likes counted, {rows} like rows, {} posts differ; {:.1} s)",
        if wrong.is_empty() { "yes" } else { "no" },
        posts.len(),
        wrong.len(),
        started.elapsed().as_secs_f64()
    );
    for p in wrong.iter().take(10) {
        println!("  post {}: count {} but {} rows", p.post, p.count, p.rows);
    }
    Ok(wrong.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> SeedParams {
        SeedParams {
            posts: 200,
            likes: 3_000,
            users: 50,
            friends: 10,
            rng_seed: 7,
        }
    }

    #[test]
    fn counts_add_up_and_respect_the_user_cap() {
        for params in [small(), SeedParams::default()] {
            let counts = like_counts(&params);
            assert_eq!(counts.len() as u64, params.posts);
            assert_eq!(counts.iter().sum::<u64>(), params.likes);
            assert!(counts.iter().all(|&c| c <= params.users));
            assert!(counts.windows(2).all(|w| w[0] >= w[1]), "popular first");
        }
    }

    #[test]
    fn generated_data_is_deterministic_and_consistent() {
        let params = small();
        let seed = generate(&params);
        assert_eq!(seed, generate(&params), "same parameters, same data");
        assert_ne!(
            seed,
            generate(&SeedParams {
                rng_seed: 8,
                ..params
            })
        );
        assert_eq!(seed.users.len() as u64, params.users);
        for user in &seed.users {
            assert_eq!(user.friends.len() as u64, params.friends);
            assert!(!user.friends.contains(&user.id), "no self-friendship");
            assert!(
                user.friends
                    .iter()
                    .all(|f| (1..=params.users).contains(&f.get()))
            );
            let unique: HashSet<_> = user.friends.iter().collect();
            assert_eq!(unique.len(), user.friends.len());
        }
        let likes: usize = seed.posts.iter().map(|p| p.likers.len()).sum();
        assert_eq!(likes as u64, params.likes);
        for post in &seed.posts {
            let unique: HashSet<_> = post.likers.iter().collect();
            assert_eq!(unique.len(), post.likers.len(), "one like per user");
        }
    }

    #[test]
    fn view_mix_favours_popular_posts() {
        let params = small();
        let mix = view_mix(&params, 10_000);
        assert!(mix.iter().all(|&p| (1..=params.posts).contains(&p)));
        let top = mix.iter().filter(|&&p| p == 1).count();
        let last = mix.iter().filter(|&&p| p == params.posts).count();
        assert!(top > 5 * last.max(1), "top {top}, last {last}");
    }

    #[tokio::test]
    async fn a_seeded_store_passes_its_audit() {
        let dir = tempfile::tempdir().expect("temp dir");
        let params = small();
        seed(dir.path(), &params).await.expect("seed");
        let db = dir.path().join("likekit.db");
        assert!(!PathBuf::from(format!("{}-wal", db.display())).exists());
        let store = open_sqlite(&db).expect("open");
        let audit = store.audit().await.expect("audit");
        assert_eq!(audit.len() as u64, params.posts);
        let counts = like_counts(&params);
        for (post, count) in audit.iter().zip(counts) {
            assert_eq!((post.count, post.rows, post.version), (count, count, count));
        }
        let top = store
            .post(PostId::new(1).expect("in range"))
            .await
            .expect("read")
            .expect("post 1");
        let seeded = generate(&params);
        let mut newest: Vec<_> = seeded.posts[0].likers.iter().rev().copied().collect();
        newest.truncate(likekit_server::store::RECENT_LIKERS);
        assert_eq!(top.recent_likers, newest, "newest first");
        assert_eq!(
            store.friends(user_id(3)).await.expect("friends").len() as u64,
            params.friends
        );
        store.close().await.expect("close");
        drop(store);
        // The second call reuses the folder.
        let modified = fs::metadata(&db).and_then(|m| m.modified()).expect("mtime");
        seed(dir.path(), &params).await.expect("reuse");
        assert_eq!(
            fs::metadata(&db).and_then(|m| m.modified()).expect("mtime"),
            modified
        );
        audit_ok(&db).await;
    }

    async fn audit_ok(db: &Path) {
        assert!(
            audit(&db.display().to_string()).await.expect("audit"),
            "exact"
        );
    }
}
