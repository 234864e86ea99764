//! What a post's heart, count and line show right now.

use crate::{LikeError, LikeLine, PostId};

/// Everything the UI needs to draw one post's like button, for the viewer.
///
/// It is the *displayed* state: the last state the server confirmed plus the
/// viewer's pending intent. A tap changes it at once.
///
/// ```
/// # let post = likekit_core::PostId::new(42).unwrap();
/// use likekit_core::{Machine, MachineConfig};
/// let mut m = Machine::new(MachineConfig::default());
/// let view = m.tap(post, true);
/// assert!(view.liked && view.pending);
/// assert_eq!(view.count, 1);
/// assert_eq!(view.line.to_string(), "Liked by you");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostView {
    /// The post.
    pub post_id: PostId,
    /// Whether the heart is filled.
    pub liked: bool,
    /// The count to show under the heart.
    pub count: u64,
    /// The viewer's friends among the post's recent likers, newest first.
    pub friends: Vec<String>,
    /// The structured "Liked by …" line; `line.to_string()` is the English.
    pub line: LikeLine,
    /// A like or unlike is on its way (or waiting to be retried).
    pub pending: bool,
    /// The reason the viewer's last intent did not save, until the next tap
    /// or the next confirmed state.
    pub error: Option<LikeError>,
}

impl PostView {
    /// The view of a post the client knows nothing about yet: an empty
    /// heart, no count, no line.
    ///
    /// ```
    /// let view = likekit_core::PostView::unknown(likekit_core::PostId::MIN);
    /// assert!(!view.liked && !view.pending);
    /// assert_eq!((view.count, view.line.to_string()), (0, String::new()));
    /// ```
    pub fn unknown(post: PostId) -> Self {
        Self {
            post_id: post,
            liked: false,
            count: 0,
            friends: Vec::new(),
            line: LikeLine::default(),
            pending: false,
            error: None,
        }
    }
}
