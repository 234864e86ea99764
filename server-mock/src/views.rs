//! The read path: what one viewer sees of one post or a feed page.
//!
//! * count, version and recent likers come from a per-post cache kept for
//!   `cache_ttl` (about a second). Each write on this server also offers the
//!   post's new snapshot to the cache, which keeps whichever is newer by
//!   version, so this server's own writes show at once and older reads never
//!   replace newer ones.
//! * `liked_by_me` is the viewer's own (user, post) row, read on every view
//!   (read-your-writes), never cached.
//! * friends = the viewer's friend set (cached per viewer, read once per
//!   request) ∩ the recent likers, as display names, newest first.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use likekit_core::wire::{BatchLikes, PostId, PostLikes, UserId};

use crate::{
    metrics::Metrics,
    store::{PostSnapshot, Store, StoreError},
    ttl_cache::TtlCache,
};

/// A viewer's friends: id → display name. Up to 100 lookups per post view,
/// so a fast hasher.
type FriendSet = HashMap<UserId, Arc<str>, foldhash::fast::RandomState>;

/// Hit and miss tallies of one cache.
#[derive(Debug, Default)]
pub(crate) struct CacheStats {
    pub(crate) hits: AtomicU64,
    pub(crate) misses: AtomicU64,
}

impl CacheStats {
    /// Hits ÷ lookups since start, or `None` before the first lookup.
    pub(crate) fn hit_ratio(&self) -> Option<f64> {
        let hits = self.hits.load(Ordering::Relaxed) as f64;
        let total = hits + self.misses.load(Ordering::Relaxed) as f64;
        (total > 0.0).then(|| hits / total)
    }
}

pub(crate) struct Views {
    store: Arc<dyn Store>,
    posts: TtlCache<PostId, Arc<PostSnapshot>>,
    friends: TtlCache<UserId, Arc<FriendSet>>,
    pub(crate) post_stats: CacheStats,
    pub(crate) friend_stats: CacheStats,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Views {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Views")
            .field("cached_posts", &self.posts.len())
            .field("cached_viewers", &self.friends.len())
            .finish_non_exhaustive()
    }
}

impl Views {
    pub(crate) fn new(
        store: Arc<dyn Store>,
        (cache_ttl, cache_capacity): (Duration, usize),
        (friends_ttl, friends_capacity): (Duration, usize),
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            store,
            posts: TtlCache::new(cache_ttl, cache_capacity),
            friends: TtlCache::new(friends_ttl, friends_capacity),
            post_stats: CacheStats::default(),
            friend_stats: CacheStats::default(),
            metrics,
        }
    }

    /// Keeps `snapshot` unless the cache already has this version or newer.
    pub(crate) fn offer(&self, post: PostId, snapshot: Arc<PostSnapshot>) {
        self.posts
            .insert_if_newer(post, snapshot, |new, old| new.version > old.version);
    }

    async fn post(&self, post: PostId) -> Result<Option<Arc<PostSnapshot>>, StoreError> {
        if let Some(snapshot) = self.posts.get(&post) {
            self.post_stats.hits.fetch_add(1, Ordering::Relaxed);
            self.metrics.cache_post_hit.increment(1);
            return Ok(Some(snapshot));
        }
        self.post_stats.misses.fetch_add(1, Ordering::Relaxed);
        self.metrics.cache_post_miss.increment(1);
        let Some(snapshot) = self.store.post(post).await? else {
            return Ok(None);
        };
        let snapshot = Arc::new(snapshot);
        self.offer(post, snapshot.clone());
        Ok(Some(snapshot))
    }

    async fn friend_set(&self, viewer: UserId) -> Result<Arc<FriendSet>, StoreError> {
        if let Some(set) = self.friends.get(&viewer) {
            self.friend_stats.hits.fetch_add(1, Ordering::Relaxed);
            self.metrics.cache_friends_hit.increment(1);
            return Ok(set);
        }
        self.friend_stats.misses.fetch_add(1, Ordering::Relaxed);
        self.metrics.cache_friends_miss.increment(1);
        let set: FriendSet = self
            .store
            .friends(viewer)
            .await?
            .into_iter()
            .map(|(id, name)| (id, Arc::from(name)))
            .collect();
        let set = Arc::new(set);
        self.friends.insert(viewer, set.clone());
        Ok(set)
    }

    fn render(snapshot: &PostSnapshot, liked_by_me: bool, friends: &FriendSet) -> PostLikes {
        let friends = if friends.is_empty() {
            Vec::new()
        } else {
            snapshot
                .recent_likers
                .iter()
                .filter_map(|liker| friends.get(liker).map(|name| name.to_string()))
                .collect()
        };
        PostLikes {
            count: snapshot.count,
            liked_by_me,
            friends,
            version: snapshot.version,
        }
    }

    /// One post as `viewer` sees it; `None` if the post does not exist.
    pub(crate) async fn view(
        &self,
        viewer: UserId,
        post: PostId,
    ) -> Result<Option<PostLikes>, StoreError> {
        let Some(snapshot) = self.post(post).await? else {
            return Ok(None);
        };
        let liked = self.store.liked(viewer, &[post]).await?;
        let friends = self.friend_set(viewer).await?;
        Ok(Some(Self::render(
            &snapshot,
            liked.first().copied().unwrap_or(false),
            &friends,
        )))
    }

    /// A feed page: every existing post of `posts` as `viewer` sees it.
    pub(crate) async fn view_many(
        &self,
        viewer: UserId,
        posts: &[PostId],
    ) -> Result<BatchLikes, StoreError> {
        let mut found = Vec::with_capacity(posts.len());
        for &post in posts {
            if let Some(snapshot) = self.post(post).await? {
                found.push((post, snapshot));
            }
        }
        let ids: Vec<PostId> = found.iter().map(|(post, _)| *post).collect();
        let liked = self.store.liked(viewer, &ids).await?;
        let friends = self.friend_set(viewer).await?;
        let posts: BTreeMap<String, PostLikes> = found
            .iter()
            .zip(liked)
            .map(|((post, snapshot), liked)| {
                (post.to_string(), Self::render(snapshot, liked, &friends))
            })
            .collect();
        Ok(BatchLikes { posts })
    }

    /// Forgets `user`'s cached friend set.
    pub(crate) fn forget_friends_of(&self, user: UserId) {
        self.friends.remove(&user);
    }

    /// Forgets every cached friend set (a user was renamed).
    pub(crate) fn forget_all_friends(&self) {
        self.friends.clear();
    }

    /// Forgets everything (after a reset or seed).
    pub(crate) fn clear(&self) {
        self.posts.clear();
        self.friends.clear();
    }

    /// Drops expired cache entries.
    pub(crate) fn sweep(&self) {
        self.posts.sweep();
        self.friends.sweep();
    }
}
