//! The web binding for LikeKit (filled by the web issue).
