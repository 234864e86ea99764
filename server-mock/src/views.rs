//! The read path: what one viewer sees of one post or a feed page.
//!
//! * count, version and recent likers come from a per-post cache kept for
//!   `cache_ttl` (about a second). A write on this server also offers the
//!   post's new snapshot to the cache when the store has one at hand
//!   (`WriteOutcome::snapshot`), and the cache keeps whichever is newer by
//!   version, so older reads never replace newer ones. SQLite's writes
//!   always have one, so this server's own writes show at once; on
//!   PostgreSQL a write to a post with count shard rows (one that was ever
//!   hot) has none, and such a post's views show this server's own writes
//!   within `cache_ttl`, as other servers' writes.
//! * `liked_by_me` is the viewer's own (user, post) row, read on every view
//!   (read-your-writes), never cached.
//! * friends = the viewer's friend set (cached per viewer, read once per
//!   request) ∩ the recent likers, as display names, newest first. The
//!   friend-set cache is bounded by bytes (each set weighed by
//!   [`SetBytes`]), not by viewers: one set is about a kilobyte with few
//!   friends and hundreds of kilobytes with thousands.
//! * Emptying a cache (an admin changed friends or names, a reset or seed)
//!   bumps that cache's generation; a value read from the store goes into
//!   the cache only if no emptying happened since its read began, so a read
//!   that raced the change cannot put the old value back for a whole TTL.
//!   A cache hit never looks at the generation.

use std::{
    cell::Cell,
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use likekit_proto::{BatchLikes, PostId, PostLikes, UserId};

use crate::{
    store::{PostSnapshot, Store, StoreError},
    ttl_cache::{TtlCache, Weigh},
};

/// Words in a friend set's filter: 64 × 64 = 4,096 bits.
const FILTER_WORDS: usize = 64;

/// A viewer's friends: id → display name, behind a bit filter.
///
/// A view checks each of a post's (up to 100) recent likers against the set.
/// The sets are many and each is read rarely, so a view meets its set cold
/// in the CPU's caches, and what a check costs is the cache lines it
/// touches. The set is laid out for that:
///
/// * **The filter**: 64 words of 64 bits. A user id picks one word and two
///   bits in it; most likers are not friends, and for them one word read
///   is the whole check. With 300 friends about 2 % of strangers get
///   through (one bit per friend let 7 % through).
/// * **The records beside each word**: each word also says where the
///   records of the friends that hash to it lie, one after another in one
///   buffer: the id, then the name as written and as a JSON string (quoted
///   and escaped once, when the set is read). A check the filter lets
///   through reads the few records of that word, names included, from
///   contiguous memory: about one cache miss, where a hash map cost three
///   (its control bytes, its slot, then the name elsewhere).
///
/// Compact, because a server keeps tens of thousands of these: two
/// allocations per set, 1 KiB of filter and 12 bytes per friend beside the
/// names (twice: as written and as JSON). What one takes of the friends
/// cache's byte budget is [`FriendSet::heap_size`].
#[derive(Debug, Default)]
pub(crate) struct FriendSet {
    /// [`FILTER_WORDS`] words, or none for a set without friends.
    words: Box<[Word]>,
    /// Records, grouped by word: id (8 bytes), name length and JSON length
    /// (2 bytes each), all little-endian, then the name and the JSON.
    records: Box<[u8]>,
    len: usize,
}

/// One filter word and where its friends' records are.
#[derive(Debug, Clone, Copy, Default)]
struct Word {
    bits: u64,
    start: u32,
    end: u32,
}

/// A record's fixed part: the id, the name's and the JSON's lengths.
const RECORD_HEAD: usize = 12;

/// A friend's display name, and the same as a JSON string, as the set
/// keeps them: UTF-8 (both were written from a `String`), not checked again
/// on each view — the JSON body takes the bytes as they are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Friend<'a> {
    name: &'a [u8],
    json: &'a [u8],
}

impl Friend<'_> {
    fn name(&self) -> String {
        String::from_utf8_lossy(self.name).into_owned()
    }
}

impl FriendSet {
    fn new(friends: Vec<(UserId, String)>) -> Self {
        // (word, bits, id, name, JSON), grouped by word.
        let mut entries: Vec<(usize, u64, UserId, String, String)> = friends
            .into_iter()
            .filter_map(|(id, name)| {
                let json = serde_json::to_string(&name).unwrap_or_else(|_| "\"\"".into());
                // Names are at most 200 characters (`rules::check_name`),
                // far below a record's 64 KiB.
                if u16::try_from(name.len()).is_err() || u16::try_from(json.len()).is_err() {
                    tracing::warn!(user = id.get(), "a friend's name is too long to show");
                    return None;
                }
                let (word, bits) = Self::slot(id);
                Some((word, bits, id, name, json))
            })
            .collect();
        entries.sort_by_key(|entry| entry.0);
        let size = entries
            .iter()
            .map(|(.., name, json)| RECORD_HEAD + name.len() + json.len())
            .sum();
        // A set past 4 GiB of names is beyond any friend limit.
        if entries.is_empty() || u32::try_from(size).is_err() {
            return Self::default();
        }
        let mut words = vec![Word::default(); FILTER_WORDS].into_boxed_slice();
        let mut records = Vec::with_capacity(size);
        let mut len = 0;
        for (word, bits, id, name, json) in &entries {
            let at = records.len() as u32;
            let slot = &mut words[*word];
            if slot.bits == 0 {
                slot.start = at;
            }
            slot.bits |= bits;
            records.extend_from_slice(&id.get().to_le_bytes());
            records.extend_from_slice(&(name.len() as u16).to_le_bytes());
            records.extend_from_slice(&(json.len() as u16).to_le_bytes());
            records.extend_from_slice(name.as_bytes());
            records.extend_from_slice(json.as_bytes());
            slot.end = records.len() as u32;
            len += 1;
        }
        Self {
            words,
            records: records.into_boxed_slice(),
            len,
        }
    }

    /// The filter word of a user id and its two bits there (Fibonacci
    /// hashing: the top six bits pick the word, the next twelve the bits).
    #[inline]
    fn slot(id: UserId) -> (usize, u64) {
        let h = id.get().wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let word = (h >> 58) as usize % FILTER_WORDS;
        let bits = (1u64 << ((h >> 52) & 63)) | (1u64 << ((h >> 46) & 63));
        (word, bits)
    }

    /// The filter's answer: `false` means `id` is not a friend.
    #[cfg(test)]
    fn may_contain(&self, id: UserId) -> bool {
        let (word, bits) = Self::slot(id);
        self.words.get(word).is_some_and(|w| w.bits & bits == bits)
    }

    /// The friend, if `id` is a friend.
    #[inline]
    pub(crate) fn get(&self, id: UserId) -> Option<Friend<'_>> {
        let (word, bits) = Self::slot(id);
        let word = self.words.get(word)?;
        if word.bits & bits != bits {
            return None;
        }
        let mut rest = self.records.get(word.start as usize..word.end as usize)?;
        while let Some((head, body)) = rest.split_first_chunk::<RECORD_HEAD>() {
            let [i0, i1, i2, i3, i4, i5, i6, i7, n0, n1, j0, j1] = *head;
            let name_len = usize::from(u16::from_le_bytes([n0, n1]));
            let json_len = usize::from(u16::from_le_bytes([j0, j1]));
            let (text, next) = body.split_at_checked(name_len + json_len)?;
            if u64::from_le_bytes([i0, i1, i2, i3, i4, i5, i6, i7]) == id.get() {
                let (name, json) = text.split_at(name_len);
                return Some(Friend { name, json });
            }
            rest = next;
        }
        None
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes the set takes: its fields, the filter and the records.
    pub(crate) fn heap_size(&self) -> usize {
        size_of::<Self>() + size_of_val::<[Word]>(&self.words) + self.records.len()
    }
}

/// The friends cache's measure: a set's [`heap_size`](FriendSet::heap_size)
/// and its `Arc`'s two counts.
#[derive(Debug)]
pub(crate) struct SetBytes;

impl Weigh<Arc<FriendSet>> for SetBytes {
    fn weigh(set: &Arc<FriendSet>) -> usize {
        2 * size_of::<usize>() + set.heap_size()
    }
}

/// A counter bumped from every core: spread over padded slots (one per
/// thread, round robin) so the cores do not fight over one cache line.
#[derive(Debug, Default)]
pub(crate) struct Tally([PaddedCounter; TALLY_SLOTS]);

const TALLY_SLOTS: usize = 8;

#[derive(Debug, Default)]
#[repr(align(128))]
struct PaddedCounter(AtomicU64);

thread_local! {
    static TALLY_SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
}

static NEXT_TALLY_SLOT: AtomicUsize = AtomicUsize::new(0);

impl Tally {
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        let slot = TALLY_SLOT.with(|slot| {
            if slot.get() == usize::MAX {
                slot.set(NEXT_TALLY_SLOT.fetch_add(1, Ordering::Relaxed) % TALLY_SLOTS);
            }
            slot.get()
        });
        self.0[slot].0.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn sum(&self) -> u64 {
        self.0.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
    }
}

/// Hit and miss tallies of one cache.
#[derive(Debug, Default)]
pub(crate) struct CacheStats {
    pub(crate) hits: Tally,
    pub(crate) misses: Tally,
}

impl CacheStats {
    /// Hits ÷ lookups since start, or `None` before the first lookup.
    pub(crate) fn hit_ratio(&self) -> Option<f64> {
        let hits = self.hits.sum() as f64;
        let total = hits + self.misses.sum() as f64;
        (total > 0.0).then(|| hits / total)
    }
}

pub(crate) struct Views {
    store: Arc<dyn Store>,
    posts: TtlCache<PostId, Arc<PostSnapshot>>,
    /// Bounded by bytes ([`SetBytes`]).
    friends: TtlCache<UserId, Arc<FriendSet>, SetBytes>,
    /// Bumped before `posts` is emptied (see the module docs).
    post_generation: AtomicU64,
    /// Bumped before any friend set is dropped.
    friend_generation: AtomicU64,
    pub(crate) post_stats: CacheStats,
    pub(crate) friend_stats: CacheStats,
}

impl std::fmt::Debug for Views {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Views")
            .field("cached_posts", &self.posts.len())
            .field("cached_viewers", &self.friends.len())
            .field("cached_friend_bytes", &self.friends.weight())
            .finish_non_exhaustive()
    }
}

impl Views {
    /// Views over `store`: posts cached for `cache_ttl`, at most
    /// `cache_capacity` of them; friend sets for `friends_ttl`, at most
    /// `friends_bytes` of them together (by [`SetBytes`], and the cache's
    /// share of each entry).
    pub(crate) fn new(
        store: Arc<dyn Store>,
        (cache_ttl, cache_capacity): (Duration, usize),
        (friends_ttl, friends_bytes): (Duration, usize),
    ) -> Self {
        Self {
            store,
            posts: TtlCache::new(cache_ttl, cache_capacity),
            friends: TtlCache::weighed(friends_ttl, friends_bytes),
            post_generation: AtomicU64::new(0),
            friend_generation: AtomicU64::new(0),
            post_stats: CacheStats::default(),
            friend_stats: CacheStats::default(),
        }
    }

    /// The post cache's generation: take it before reading a post (or
    /// writing one) whose snapshot will be [offered](Self::offer).
    pub(crate) fn generation(&self) -> u64 {
        self.post_generation.load(Ordering::SeqCst)
    }

    /// Keeps `snapshot`, read (or written) since `generation`, unless the
    /// cache was emptied since then or already has this version or newer.
    pub(crate) fn offer(&self, generation: u64, post: PostId, snapshot: Arc<PostSnapshot>) {
        if self.generation() != generation {
            return;
        }
        self.posts
            .insert_if_newer(post, snapshot, |new, old| new.version > old.version);
        // Emptied between the check and the insert: the clear may have
        // missed the insert, so take it out again (at worst a miss).
        if self.generation() != generation {
            self.posts.remove(&post);
        }
    }

    async fn post(&self, post: PostId) -> Result<Option<Arc<PostSnapshot>>, StoreError> {
        if let Some(snapshot) = self.posts.get(&post) {
            self.post_stats.hits.add(1);
            return Ok(Some(snapshot));
        }
        self.post_stats.misses.add(1);
        let generation = self.generation();
        let Some(snapshot) = self.store.post(post).await? else {
            return Ok(None);
        };
        Ok(Some(self.remember(generation, post, snapshot)))
    }

    /// Offers a snapshot read from the store since `generation` to the
    /// cache, and returns it.
    fn remember(&self, generation: u64, post: PostId, snapshot: PostSnapshot) -> Arc<PostSnapshot> {
        let snapshot = Arc::new(snapshot);
        self.offer(generation, post, snapshot.clone());
        snapshot
    }

    async fn friend_set(&self, viewer: UserId) -> Result<Arc<FriendSet>, StoreError> {
        if let Some(set) = self.friends.get(&viewer) {
            self.friend_stats.hits.add(1);
            return Ok(set);
        }
        self.friend_stats.misses.add(1);
        let generation = self.friend_generation.load(Ordering::SeqCst);
        let set = Arc::new(FriendSet::new(self.store.friends(viewer).await?));
        // Kept only when no friend set was dropped since the read began
        // (checked again after the insert, as in `offer`).
        if self.friend_generation.load(Ordering::SeqCst) == generation {
            self.friends.insert(viewer, set.clone());
            if self.friend_generation.load(Ordering::SeqCst) != generation {
                self.friends.remove(&viewer);
            }
        }
        Ok(set)
    }

    /// The viewer's friends among the post's recent likers, newest first.
    fn friend_names<'a>(
        snapshot: &'a PostSnapshot,
        friends: &'a FriendSet,
    ) -> impl Iterator<Item = Friend<'a>> + 'a {
        let likers: &[UserId] = if friends.is_empty() {
            &[]
        } else {
            &snapshot.recent_likers
        };
        likers.iter().filter_map(|&liker| friends.get(liker))
    }

    fn render(snapshot: &PostSnapshot, liked_by_me: bool, friends: &FriendSet) -> PostLikes {
        PostLikes {
            count: snapshot.count,
            liked_by_me,
            friends: Self::friend_names(snapshot, friends)
                .map(|friend| friend.name())
                .collect(),
            version: snapshot.version,
        }
    }

    /// The JSON body of [`render`](Self::render), written straight into one
    /// buffer: the same bytes `serde_json` makes of a [`PostLikes`], without
    /// building one (no string per friend, no intermediate value).
    fn render_json(snapshot: &PostSnapshot, liked_by_me: bool, friends: &FriendSet) -> Vec<u8> {
        Self::render_json_with_heart(snapshot, liked_by_me, friends).0
    }

    /// [`render_json`](Self::render_json), and where the heart's value
    /// (`true` or `false`) starts in it.
    fn render_json_with_heart(
        snapshot: &PostSnapshot,
        liked_by_me: bool,
        friends: &FriendSet,
    ) -> (Vec<u8>, usize) {
        let mut out = Vec::with_capacity(96);
        out.extend_from_slice(b"{\"count\":");
        push_u64(&mut out, snapshot.count);
        out.extend_from_slice(b",\"liked_by_me\":");
        let heart = out.len();
        out.extend_from_slice(if liked_by_me { b"true" } else { b"false" });
        out.extend_from_slice(b",\"friends\":[");
        for (i, friend) in Self::friend_names(snapshot, friends).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(friend.json);
        }
        out.extend_from_slice(b"],\"version\":");
        push_u64(&mut out, snapshot.version);
        out.push(b'}');
        (out, heart)
    }

    /// Turns the empty heart of a body written without it into a full one:
    /// `false`, at `heart`, becomes `true`.
    fn fill_heart(json: &mut Vec<u8>, heart: usize) {
        debug_assert_eq!(json.get(heart..heart + 5), Some(&b"false"[..]));
        json.splice(heart..heart + b"false".len(), *b"true");
    }

    /// One post as `viewer` sees it, as the JSON body of a [`PostLikes`];
    /// `None` if the post does not exist.
    ///
    /// When the post and the viewer's friends are both cached, the answer
    /// is written from the cached values in place, in one lookup of each
    /// cache — nothing is cloned, no reference count is touched, so readers
    /// on every core share them freely — with the heart empty; then the
    /// viewer's own row is read (always from the store) and fills it.
    pub(crate) async fn view_json(
        &self,
        viewer: UserId,
        post: PostId,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let own_row = async {
            Ok::<_, StoreError>(
                self.store
                    .liked(viewer, &[post])
                    .await?
                    .first()
                    .copied()
                    .unwrap_or(false),
            )
        };
        let cached = self.posts.read(&post, |snapshot| {
            self.friends.read(&viewer, |friends| {
                Self::render_json_with_heart(snapshot, false, friends)
            })
        });
        match cached {
            Some(Some((mut json, heart))) => {
                self.post_stats.hits.add(1);
                self.friend_stats.hits.add(1);
                if own_row.await? {
                    Self::fill_heart(&mut json, heart);
                }
                Ok(Some(json))
            }
            Some(None) => {
                // The post is cached, the viewer's friends are not.
                let liked = own_row.await?;
                let Some(snapshot) = self.post(post).await? else {
                    return Ok(None);
                };
                let friends = self.friend_set(viewer).await?;
                Ok(Some(Self::render_json(&snapshot, liked, &friends)))
            }
            None => {
                // A cache miss: the post's row and the viewer's own row in
                // one read where the store can (one SQLite statement), else
                // both at once (on PostgreSQL one round trip's wait instead
                // of two).
                self.post_stats.misses.add(1);
                let generation = self.generation();
                let Some((snapshot, liked)) = self.store.post_seen_by(viewer, post).await? else {
                    return Ok(None);
                };
                let snapshot = self.remember(generation, post, snapshot);
                let friends = self.friend_set(viewer).await?;
                Ok(Some(Self::render_json(&snapshot, liked, &friends)))
            }
        }
    }

    /// A feed page: every existing post of `posts` as `viewer` sees it.
    ///
    /// The posts missing from the cache are read all at once (PostgreSQL's
    /// batcher sends them together); the first failure fails the page.
    pub(crate) async fn view_many(
        &self,
        viewer: UserId,
        posts: &[PostId],
    ) -> Result<BatchLikes, StoreError> {
        let snapshots =
            futures_util::future::try_join_all(posts.iter().map(|&post| self.post(post))).await?;
        let found: Vec<(PostId, Arc<PostSnapshot>)> = posts
            .iter()
            .zip(snapshots)
            .filter_map(|(&post, snapshot)| Some((post, snapshot?)))
            .collect();
        let ids: Vec<PostId> = found.iter().map(|(post, _)| *post).collect();
        let liked = self.store.liked(viewer, &ids).await?;
        let friends = self.friend_set(viewer).await?;
        let posts: BTreeMap<PostId, PostLikes> = found
            .iter()
            .zip(liked)
            .map(|((post, snapshot), liked)| (*post, Self::render(snapshot, liked, &friends)))
            .collect();
        Ok(BatchLikes { posts })
    }

    /// Forgets `user`'s cached friend set.
    pub(crate) fn forget_friends_of(&self, user: UserId) {
        self.friend_generation.fetch_add(1, Ordering::SeqCst);
        self.friends.remove(&user);
    }

    /// Forgets every cached friend set (a user was renamed).
    pub(crate) fn forget_all_friends(&self) {
        self.friend_generation.fetch_add(1, Ordering::SeqCst);
        self.friends.clear();
    }

    /// Forgets everything (after a reset or seed).
    pub(crate) fn clear(&self) {
        self.post_generation.fetch_add(1, Ordering::SeqCst);
        self.posts.clear();
        self.forget_all_friends();
    }

    /// Drops expired cache entries.
    pub(crate) fn sweep(&self) {
        self.posts.sweep();
        self.friends.sweep();
    }
}

/// Appends the decimal digits of `n`.
fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn user(id: u64) -> UserId {
        UserId::new(id).unwrap()
    }

    fn users(ids: impl IntoIterator<Item = u64>) -> Vec<UserId> {
        ids.into_iter().map(user).collect()
    }

    fn friends(list: &[(u64, &str)]) -> FriendSet {
        FriendSet::new(
            list.iter()
                .map(|(id, n)| (user(*id), (*n).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn numbers_are_written_in_full() {
        for n in [0, 7, 10, 1204, 99_999, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            push_u64(&mut out, n);
            assert_eq!(out, n.to_string().as_bytes());
        }
    }

    #[test]
    fn the_friend_filter_never_hides_a_friend() {
        let list: Vec<(UserId, String)> = (1..=3000u64)
            .map(|i| {
                (
                    user(i.wrapping_mul(7_919) % 1_000_003 + 1),
                    format!("user {i}"),
                )
            })
            .collect();
        let set = FriendSet::new(list.clone());
        for (id, name) in &list {
            assert_eq!(set.get(*id).map(|f| f.name()), Some(name.clone()));
        }
        let strangers = (2_000_000..2_010_000u64)
            .filter(|id| set.get(user(*id)).is_some())
            .count();
        assert_eq!(strangers, 0);
        assert!(FriendSet::default().get(user(5)).is_none(), "empty filter");
    }

    #[test]
    fn the_filter_lets_few_strangers_through() {
        // 300 friends among 10,000 users, as in the bench's data set.
        let list: Vec<(UserId, String)> = (0..300u64)
            .map(|i| (user(i * 31 + 7), String::new()))
            .collect();
        let set = FriendSet::new(list);
        let strangers = (20_000..120_000u64).map(user);
        let through = strangers.filter(|&id| set.may_contain(id)).count();
        // Two bits in one word: about 2 % (one bit let about 7 % through).
        assert!(
            through < 3_000,
            "{through} of 100,000 strangers got through"
        );
    }

    #[test]
    fn the_json_body_is_what_serde_makes_of_the_view() {
        let set = friends(&[
            (2, "Ana"),
            (3, "Ben \"the Tall\""),
            (5, "Chloé\\Zoë"),
            (7, "tab\there\u{1}"),
            (11, "日本"),
        ]);
        let cases = [
            PostSnapshot::default(),
            PostSnapshot {
                count: 1204,
                version: 9,
                recent_likers: users([11, 4, 2, 3, 99, 7, 5]),
            },
            PostSnapshot {
                count: u64::MAX,
                version: u64::MAX - 1,
                recent_likers: users((1..=100).rev()),
            },
        ];
        for snapshot in &cases {
            for liked in [false, true] {
                for set in [&set, &FriendSet::default()] {
                    let fast = Views::render_json(snapshot, liked, set);
                    let slow = serde_json::to_vec(&Views::render(snapshot, liked, set))
                        .expect("serialise");
                    assert_eq!(
                        String::from_utf8(fast).expect("utf-8"),
                        String::from_utf8(slow).expect("utf-8")
                    );
                    // A cached view writes the body with the heart empty,
                    // then fills it once the viewer's own row says so.
                    let (mut body, heart) = Views::render_json_with_heart(snapshot, false, set);
                    if liked {
                        Views::fill_heart(&mut body, heart);
                    }
                    assert_eq!(body, Views::render_json(snapshot, liked, set));
                }
            }
        }
        let view = Views::render(&cases[1], true, &set);
        assert_eq!(
            view.friends,
            [
                "日本",
                "Ana",
                "Ben \"the Tall\"",
                "tab\there\u{1}",
                "Chloé\\Zoë"
            ]
        );
    }

    #[test]
    fn a_friend_set_weighs_its_filter_and_records() {
        assert_eq!(FriendSet::default().heap_size(), size_of::<FriendSet>());
        let list: Vec<(UserId, String)> = (1..=5_000u64)
            .map(|i| (user(i), format!("user \"{i}\"")))
            .collect();
        // Per friend: the record's head, the name, and the name as JSON
        // (quoted, its quotes escaped).
        let records: usize = list
            .iter()
            .map(|(_, name)| RECORD_HEAD + name.len() + name.len() + 4)
            .sum();
        let set = FriendSet::new(list);
        assert_eq!(
            set.heap_size(),
            size_of::<FriendSet>() + FILTER_WORDS * size_of::<Word>() + records
        );
        assert_eq!(
            SetBytes::weigh(&Arc::new(set)),
            2 * size_of::<usize>() + size_of::<FriendSet>() + 1024 + records
        );
    }

    /// The friends cache holds the sets that fit its byte budget and no
    /// more, however many viewers it could hold, and gives back the bytes
    /// of the sets it drops.
    #[cfg(feature = "sqlite")]
    #[tokio::test]
    async fn the_friends_cache_holds_the_sets_that_fit_its_byte_budget() {
        use likekit_proto::admin::{Seed, SeedPost, SeedUser};

        use crate::store::{SqliteOptions, SqliteStore};

        let store = Arc::new(SqliteStore::open(SqliteOptions::default()).unwrap());
        // Users 1 to 500, each the friend of viewers 1001 to 1008.
        let friends = users(1..=500);
        let mut seed_users: Vec<SeedUser> = friends
            .iter()
            .map(|&id| SeedUser {
                id,
                name: format!("friend number {}", id.get()),
                friends: Vec::new(),
            })
            .collect();
        seed_users.extend((1001..=1008).map(|id| SeedUser {
            id: user(id),
            name: format!("viewer {id}"),
            friends: friends.clone(),
        }));
        let post = PostId::new(1).unwrap();
        store
            .seed(&Seed {
                users: seed_users,
                posts: vec![SeedPost {
                    id: post,
                    likers: Vec::new(),
                }],
            })
            .await
            .unwrap();
        // What one viewer's set takes of the budget (all are alike).
        let set = Arc::new(FriendSet::new(store.friends(user(1001)).await.unwrap()));
        let one = SetBytes::weigh(&set) + TtlCache::<UserId, Arc<FriendSet>, SetBytes>::ENTRY_BYTES;
        assert!(one > 500 * 40, "{one} bytes for 500 friends");
        // Room for three sets and half of a fourth.
        let views = Views::new(
            store.clone(),
            (Duration::from_secs(60), 1_000),
            (Duration::from_secs(60), 3 * one + one / 2),
        );

        for viewer in 1001..=1006 {
            let body = views.view_json(user(viewer), post).await.unwrap();
            assert!(body.is_some(), "viewer {viewer}");
        }
        assert_eq!(views.friends.len(), 3);
        assert_eq!(views.friends.weight(), 3 * one);
        // The first three came first and stayed; the others were not kept.
        for viewer in 1001..=1003 {
            assert!(views.friends.get(&user(viewer)).is_some(), "{viewer}");
        }

        // A set dropped gives its bytes back, and the next viewer's fits.
        views.forget_friends_of(user(1001));
        assert_eq!(views.friends.weight(), 2 * one);
        views.view_json(user(1007), post).await.unwrap();
        assert!(views.friends.get(&user(1007)).is_some());
        assert_eq!((views.friends.len(), views.friends.weight()), (3, 3 * one));

        views.forget_all_friends();
        assert_eq!((views.friends.len(), views.friends.weight()), (0, 0));
        store.close().await.unwrap();
    }

    #[test]
    fn tallies_add_up_across_threads() {
        let tally = Arc::new(Tally::default());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let tally = tally.clone();
                std::thread::spawn(move || (0..1000).for_each(|_| tally.add(1)))
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert_eq!(tally.sum(), 4000);
    }
}
