//! The LikeKit reference server.
