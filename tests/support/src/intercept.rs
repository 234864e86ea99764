//! A store that passes every call to a real one, with hooks before and
//! after each: how a test makes a chosen call fail, wait at a gate, or
//! meet others at a barrier, without writing out the whole [`Store`]
//! trait again. A new store method is forwarded here once, for every such
//! test.
//!
//! ```no_run
//! use async_trait::async_trait;
//! use likekit_server::store::{SqliteOptions, SqliteStore, StoreError};
//! use likekit_testing::intercept::{Call, Hooks, Intercepted};
//!
//! /// Likes commit, then their answer is an error.
//! #[derive(Debug)]
//! struct CommitThenFail;
//!
//! #[async_trait]
//! impl Hooks for CommitThenFail {
//!     async fn after(&self, call: Call, ok: bool) -> Result<(), StoreError> {
//!         match call {
//!             Call::Like { .. } if ok => Err(StoreError::Backend("the answer was lost".into())),
//!             _ => Ok(()),
//!         }
//!     }
//! }
//!
//! let store = Intercepted::new(SqliteStore::open(SqliteOptions::default())?, CommitThenFail);
//! # Ok::<(), StoreError>(())
//! ```

use std::{fmt, future::Future};

use async_trait::async_trait;
use likekit_proto::{PostId, UserId, admin::Seed};
use likekit_server::store::{
    HotPosts, PoolStatus, PostAudit, PostSnapshot, Store, StoreError, Upsert, WriteOutcome,
};

/// One call to the store, as the hooks see it: the method and the ids it
/// names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Call {
    /// [`Store::like`].
    Like {
        /// Who likes.
        user: UserId,
        /// What.
        post: PostId,
    },
    /// [`Store::unlike`].
    Unlike {
        /// Who unlikes.
        user: UserId,
        /// What.
        post: PostId,
    },
    /// [`Store::post`].
    Post {
        /// The post read.
        post: PostId,
    },
    /// [`Store::liked`].
    Liked {
        /// Whose rows are read.
        user: UserId,
    },
    /// [`Store::post_seen_by`].
    PostSeenBy {
        /// The viewer.
        user: UserId,
        /// The post read.
        post: PostId,
    },
    /// [`Store::friends`].
    Friends {
        /// Whose friend list.
        user: UserId,
    },
    /// [`Store::user_name`].
    UserName {
        /// Whose name.
        user: UserId,
    },
    /// [`Store::put_user`].
    PutUser {
        /// The user created or renamed.
        user: UserId,
    },
    /// [`Store::put_post`].
    PutPost {
        /// The post created.
        post: PostId,
    },
    /// [`Store::set_friends`].
    SetFriends {
        /// Whose friend list.
        user: UserId,
    },
    /// [`Store::seed`].
    Seed,
    /// [`Store::reset`].
    Reset,
    /// [`Store::audit`].
    Audit,
    /// [`Store::ready`].
    Ready,
    /// [`Store::close`].
    Close,
}

/// What an [`Intercepted`] store does around each call. Both hooks do
/// nothing by default.
#[async_trait]
pub trait Hooks: Send + Sync + fmt::Debug + 'static {
    /// Runs before `call` reaches the store; an error answers the call in
    /// its place (the store never sees it).
    async fn before(&self, call: Call) -> Result<(), StoreError> {
        let _ = call;
        Ok(())
    }

    /// Runs after the store answered `call` (`ok`: whether it answered
    /// `Ok`); an error replaces the store's answer (what the store did
    /// stays done).
    async fn after(&self, call: Call, ok: bool) -> Result<(), StoreError> {
        let _ = (call, ok);
        Ok(())
    }
}

/// `store`, with `hooks` around every call.
#[derive(Debug)]
pub struct Intercepted<S, H> {
    /// The real store.
    pub store: S,
    /// What runs around its calls.
    pub hooks: H,
}

impl<S: Store, H: Hooks> Intercepted<S, H> {
    /// `store` with `hooks`.
    pub fn new(store: S, hooks: H) -> Self {
        Self { store, hooks }
    }

    async fn around<T>(
        &self,
        call: Call,
        work: impl Future<Output = Result<T, StoreError>> + Send,
    ) -> Result<T, StoreError> {
        self.hooks.before(call).await?;
        let answer = work.await;
        self.hooks.after(call, answer.is_ok()).await?;
        answer
    }
}

#[async_trait]
impl<S: Store, H: Hooks> Store for Intercepted<S, H> {
    async fn like(&self, user: UserId, post: PostId) -> Result<WriteOutcome, StoreError> {
        let call = Call::Like { user, post };
        self.around(call, self.store.like(user, post)).await
    }

    async fn unlike(&self, user: UserId, post: PostId) -> Result<WriteOutcome, StoreError> {
        let call = Call::Unlike { user, post };
        self.around(call, self.store.unlike(user, post)).await
    }

    async fn post(&self, post: PostId) -> Result<Option<PostSnapshot>, StoreError> {
        self.around(Call::Post { post }, self.store.post(post))
            .await
    }

    async fn liked(&self, user: UserId, posts: &[PostId]) -> Result<Vec<bool>, StoreError> {
        self.around(Call::Liked { user }, self.store.liked(user, posts))
            .await
    }

    async fn post_seen_by(
        &self,
        user: UserId,
        post: PostId,
    ) -> Result<Option<(PostSnapshot, bool)>, StoreError> {
        let call = Call::PostSeenBy { user, post };
        self.around(call, self.store.post_seen_by(user, post)).await
    }

    async fn friends(&self, user: UserId) -> Result<Vec<(UserId, String)>, StoreError> {
        self.around(Call::Friends { user }, self.store.friends(user))
            .await
    }

    async fn user_name(&self, user: UserId) -> Result<Option<String>, StoreError> {
        self.around(Call::UserName { user }, self.store.user_name(user))
            .await
    }

    async fn put_user(&self, user: UserId, name: &str) -> Result<Upsert, StoreError> {
        self.around(Call::PutUser { user }, self.store.put_user(user, name))
            .await
    }

    async fn put_post(&self, post: PostId) -> Result<Upsert, StoreError> {
        self.around(Call::PutPost { post }, self.store.put_post(post))
            .await
    }

    async fn set_friends(&self, user: UserId, friends: &[UserId]) -> Result<(), StoreError> {
        let call = Call::SetFriends { user };
        self.around(call, self.store.set_friends(user, friends))
            .await
    }

    async fn seed(&self, seed: &Seed) -> Result<(), StoreError> {
        self.around(Call::Seed, self.store.seed(seed)).await
    }

    async fn reset(&self) -> Result<(), StoreError> {
        self.around(Call::Reset, self.store.reset()).await
    }

    async fn audit(&self) -> Result<Vec<PostAudit>, StoreError> {
        self.around(Call::Audit, self.store.audit()).await
    }

    async fn ready(&self) -> Result<(), StoreError> {
        self.around(Call::Ready, self.store.ready()).await
    }

    async fn close(&self) -> Result<(), StoreError> {
        self.around(Call::Close, self.store.close()).await
    }

    fn hot_posts(&self) -> Option<&HotPosts> {
        self.store.hot_posts()
    }

    fn pools(&self) -> Vec<PoolStatus> {
        self.store.pools()
    }
}
