//! The JSON bodies of the LikeKit wire protocol, from `likekit-proto` — the
//! crate the reference server shares, so neither side redefines them.
//!
//! ```text
//! POST   /posts/{post_id}/like   -> 200 LikeState
//! DELETE /posts/{post_id}/like   -> 200 LikeState
//! GET    /posts/{post_id}/likes  -> 200 PostLikes
//! GET    /likes?posts=1,2,3      -> 200 BatchLikes
//! any error                      -> 4xx/5xx ErrorBody
//! ```
//!
//! The admin, fault and seed bodies of the reference server are not here:
//! no app needs them (they are `likekit_proto::admin`).

pub use likekit_proto::{
    BatchLikes, ErrorBody, ErrorDetail, IdError, IdKind, LikeState, MAX_BATCH_POSTS, MAX_ID,
    PostId, PostLikes, RECENT_LIKERS, UserId, code, quoted,
};
