//! The query string of `GET /likes?posts=1,2,3` against any bytes, read
//! as the server reads it: axum's `Query` of key–value pairs (from the
//! request's URI), then the server's `parse_post_list`.
//!
//! The input is the query (after `?`); when it is not a valid URI query
//! as it is, its bytes that cannot stand in one are percent-encoded, as a
//! client would send them. For every input:
//!
//! * nothing panics, and a refusal is a 400 `bad_query` (the pairs could
//!   not be read), `bad_posts` or `too_many_posts` — the codes the API
//!   documents for this route;
//! * `bad_posts` when there is no `posts=`; otherwise, reading the items
//!   of the lists (split on `,`, trimmed) in order, `bad_posts` at the
//!   first one that is not a post id and `too_many_posts` at item
//!   `MAX_BATCH_POSTS` + 1 (a repeated id counts), whichever comes first;
//! * when neither comes, the list read is the ids, each once, in the
//!   order first named: 1 to `MAX_BATCH_POSTS` valid ids.

#![no_main]

use axum::extract::Query;
use axum::http::{StatusCode, Uri};
use libfuzzer_sys::fuzz_target;
use likekit_server::ApiError;
use likekit_server::fuzzing::parse_post_list;
use likekit_server::wire::{MAX_BATCH_POSTS, PostId};

/// `/likes?` and `query`, as it is if that is a valid URI, else with the
/// bytes a query cannot hold as they are percent-encoded.
fn uri(query: &[u8]) -> Uri {
    let mut path = b"/likes?".to_vec();
    path.extend_from_slice(query);
    if let Ok(uri) = Uri::try_from(path) {
        return uri;
    }
    let mut path = String::from("/likes?");
    for &b in query {
        // RFC 3986's unreserved characters, sub-delimiters and the rest
        // a query may hold as they are.
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?".contains(&b) {
            path.push(char::from(b));
        } else {
            path.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::try_from(path).expect("a percent-encoded query is valid")
}

/// What the server must read from `pairs`, worked out apart from it.
fn expected(pairs: &[(String, String)]) -> Result<Vec<PostId>, &'static str> {
    let lists: Vec<&str> = pairs
        .iter()
        .filter(|(key, _)| key == "posts")
        .map(|(_, value)| value.as_str())
        .collect();
    if lists.is_empty() {
        return Err("bad_posts");
    }
    let mut distinct: Vec<PostId> = Vec::new();
    for (i, item) in lists.iter().flat_map(|list| list.split(',')).enumerate() {
        let Ok(id) = item.trim().parse::<PostId>() else {
            return Err("bad_posts");
        };
        if i == MAX_BATCH_POSTS {
            return Err("too_many_posts");
        }
        if !distinct.contains(&id) {
            distinct.push(id);
        }
    }
    Ok(distinct)
}

fuzz_target!(|data: &[u8]| {
    let uri = uri(data);
    let pairs = match Query::<Vec<(String, String)>>::try_from_uri(&uri) {
        Ok(Query(pairs)) => pairs,
        Err(rejection) => {
            let answer = ApiError::from(rejection);
            assert_eq!(
                (answer.status(), answer.code()),
                (StatusCode::BAD_REQUEST, "bad_query"),
                "{uri}"
            );
            return;
        }
    };
    let read = parse_post_list(&pairs);
    if let Err(refusal) = &read {
        assert_eq!(refusal.status(), StatusCode::BAD_REQUEST, "{uri}");
    }
    let read = read.map_err(|refusal| refusal.code().to_owned());
    let want = expected(&pairs).map_err(str::to_owned);
    assert_eq!(read, want, "{uri}: {pairs:?}");
    if let Ok(posts) = read {
        assert!((1..=MAX_BATCH_POSTS).contains(&posts.len()), "{uri}");
    }
});
