//! The intent journal's decoder against any bytes at all.
//!
//! The first byte picks the viewer the journal is read for (its value
//! modulo the number of [`VIEWERS`]: `0` is Ana, `1` the empty key, `2` a
//! key outside ASCII, `3` one that needs escaping); the rest is the
//! journal. For every input:
//!
//! * `decode` returns, never panics, and a refusal is a
//!   `LikeError::Journal`;
//! * what it accepts holds valid post ids, each post once, and belongs to
//!   this viewer alone;
//! * `encode` of what it accepts (the journal the client would write
//!   next) reads back as the same intents.

#![no_main]

use libfuzzer_sys::fuzz_target;
use likekit_core::journal::{decode, encode};
use likekit_core::{LikeError, PostId};

/// The viewers a journal is read for.
const VIEWERS: [&str; 4] = ["ana", "", "Émile 🦀", "an\"a\\ \u{1}"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, journal)) = data.split_first() else {
        return;
    };
    let viewer = VIEWERS[usize::from(pick) % VIEWERS.len()];
    let intents = match decode(viewer, journal) {
        Ok(intents) => intents,
        Err(e) => {
            assert!(matches!(e, LikeError::Journal { .. }), "{e:?}");
            return;
        }
    };

    let mut posts = std::collections::HashSet::new();
    for intent in &intents {
        assert_eq!(PostId::checked(intent.post.get()), Some(intent.post));
        assert!(posts.insert(intent.post), "post {} twice", intent.post);
    }
    for other in VIEWERS.iter().filter(|other| **other != viewer) {
        assert!(decode(other, journal).is_err(), "read for {other:?} too");
    }

    let written = encode(viewer, &intents);
    let read = decode(viewer, &written);
    assert_eq!(read.as_ref().ok(), Some(&intents), "{read:?}");
});
