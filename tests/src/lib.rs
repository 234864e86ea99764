//! Cross-part tests: the SDK against the real reference server.
