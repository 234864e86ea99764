//! The client's reading of the server's answers (the core's own JSON
//! reader, and the transport's `decode`: the value of a 2xx, the typed
//! error of anything else) against any bytes.
//!
//! The first byte picks the status (its value modulo the number of
//! [`STATUSES`]); the rest is the body. For every input:
//!
//! * reading never panics;
//! * a 2xx body is read as a `LikeState`, a `PostLikes`, a `BatchLikes`
//!   and an `ErrorBody` exactly as `serde_json::from_slice` reads it (the
//!   same value, or both refuse; a refusal is `InvalidResponse`) — as the
//!   reader's own property test holds it to — except where serde_json
//!   stops at its nesting limit (128), which the reader, skipping values
//!   without recursion, does not have;
//! * any other status gives the error of that status, with the code and
//!   message of the body when serde_json reads it as an `ErrorBody`, else
//!   `http_<status>` and a message that is not empty; a 429 carries the
//!   Retry-After it was given; a 3xx is refused (`Rejected`, redirects are
//!   not followed) with the body's message inside one that says to give
//!   the address it leads to as the base URL.

#![no_main]

use std::fmt::Debug;

use libfuzzer_sys::fuzz_target;
use likekit_core::LikeError;
use likekit_core::fuzzing::Answer;
use likekit_core::wire::{BatchLikes, ErrorBody, LikeState, PostLikes};
use serde::de::DeserializeOwned;

/// The statuses answers are read with: the success ones, each error the
/// client tells apart, and ones it does not expect.
const STATUSES: [u16; 16] = [
    200, 200, 200, 201, 204, 299, 400, 401, 403, 404, 409, 429, 500, 503, 302, 600,
];

/// The Retry-After given with every answer, in milliseconds.
const RETRY_AFTER_MS: Option<u64> = Some(1_500);

/// What serde_json reads `body` as, or `None` when it stopped at its
/// nesting limit (where the reader may go on).
fn serde_reads<T: DeserializeOwned>(body: &[u8]) -> Option<Result<T, ()>> {
    match serde_json::from_slice::<T>(body) {
        Ok(value) => Some(Ok(value)),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => None,
        Err(_) => Some(Err(())),
    }
}

/// A 2xx `body` read as a `T`, held to serde_json.
fn success<T: Answer + DeserializeOwned + PartialEq + Debug>(status: u16, body: &[u8]) {
    let ours = T::decode(status, RETRY_AFTER_MS, body);
    if let Err(e) = &ours {
        assert!(matches!(e, LikeError::InvalidResponse { .. }), "{e:?}");
    }
    if let Some(theirs) = serde_reads::<T>(body) {
        assert_eq!(
            ours.as_ref().ok(),
            theirs.as_ref().ok(),
            "{} as {}: ours {ours:?}",
            String::from_utf8_lossy(body),
            std::any::type_name::<T>(),
        );
    }
}

/// A non-2xx answer: the error of `status`, with the body's code and
/// message when it is an error body.
fn failure(status: u16, body: &[u8]) {
    let error = match LikeState::decode(status, RETRY_AFTER_MS, body) {
        Ok(value) => panic!("status {status} read as {value:?}"),
        Err(error) => error,
    };
    let Some(read) = serde_reads::<ErrorBody>(body) else {
        return;
    };
    let (code, message) = match &read {
        Ok(body) => (body.error.code.clone(), Some(body.error.message.as_str())),
        Err(()) => (format!("http_{status}"), None),
    };
    let said = |said: &str| match message {
        Some(message) => assert_eq!(said, message),
        None => assert!(!said.is_empty()),
    };
    match (status, &error) {
        (401, LikeError::Unauthorized { message }) | (403, LikeError::Forbidden { message }) => {
            said(message);
        }
        (404, LikeError::NotFound { message }) if code == "post_not_found" => said(message),
        (429, LikeError::RateLimited { retry_after_ms }) => {
            assert_eq!(*retry_after_ms, RETRY_AFTER_MS);
        }
        (
            400..=499,
            LikeError::Rejected {
                status: got,
                code: said_code,
                message,
            },
        )
        | (
            500..=599,
            LikeError::Server {
                status: got,
                code: said_code,
                message,
            },
        ) => {
            assert_eq!((*got, said_code.as_str()), (status, code.as_str()));
            said(message);
        }
        (
            300..=399,
            LikeError::Rejected {
                status: got,
                code: said_code,
                message: redirected,
            },
        ) => {
            assert_eq!((*got, said_code.as_str()), (status, code.as_str()));
            assert!(redirected.contains("base URL"), "{redirected}");
            if let Some(message) = message {
                assert!(redirected.contains(message), "{redirected}");
            }
        }
        (_, LikeError::InvalidResponse { .. }) if !(300..=599).contains(&status) => {}
        _ => panic!("status {status} gave {error:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let status = STATUSES[usize::from(pick) % STATUSES.len()];
    if (200..300).contains(&status) {
        success::<LikeState>(status, body);
        success::<PostLikes>(status, body);
        success::<BatchLikes>(status, body);
        success::<ErrorBody>(status, body);
    } else {
        failure(status, body);
    }
});
