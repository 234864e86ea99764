//! Kotlin, Swift and Python bindings for LikeKit (filled by the uniffi issue).
