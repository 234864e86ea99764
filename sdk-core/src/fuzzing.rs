//! Not a stable API: the answers' reader, for the fuzz targets of `fuzz/`
//! (which read bodies without a network). Hidden from the documentation;
//! it may change or go in any release.

use crate::LikeError;
use crate::wire::{BatchLikes, ErrorBody, LikeState, PostLikes};

/// A body the client reads from the server.
pub trait Answer: Sized {
    /// An answer with `status`, `Retry-After` (in milliseconds) and `body`
    /// as the HTTP transport reads it: the value for a 2xx, else the typed
    /// error (with the code and message of an [`ErrorBody`], read by the
    /// same reader).
    fn decode(status: u16, retry_after_ms: Option<u64>, body: &[u8]) -> Result<Self, LikeError>;
}

macro_rules! answer {
    ($($name:ty),*) => {$(
        impl Answer for $name {
            fn decode(status: u16, retry_after_ms: Option<u64>, body: &[u8]) -> Result<Self, LikeError> {
                crate::transport::decode(status, retry_after_ms, body)
            }
        }
    )*};
}

answer!(LikeState, PostLikes, BatchLikes, ErrorBody);
