//! Extractors the handlers share: the signed-in [`Viewer`] and an id from
//! the path ([`PathId`]). Both reject with a JSON [`ApiError`].

use std::str::FromStr;

use axum::{
    extract::{FromRequestParts, Path},
    http::{HeaderMap, HeaderValue, request::Parts},
};
use likekit_proto::{IdError, MAX_BATCH_POSTS, PostId, UserId, code};

use crate::{auth::authenticate, error::ApiError, state::App};

/// A header that may be sent once: `Ok(None)` when absent, `Err(())` when
/// sent more than once (a credential sent twice is refused rather than
/// one of them picked).
pub(crate) fn single_header(
    headers: &HeaderMap,
    name: impl axum::http::header::AsHeaderName,
) -> Result<Option<&HeaderValue>, ()> {
    let mut values = headers.get_all(name).into_iter();
    let first = values.next();
    match values.next() {
        None => Ok(first),
        Some(_) => Err(()),
    }
}

/// The signed-in caller, from `Authorization: Bearer <token>` (read in
/// place, without copying the headers). Rejects with 401 `missing_token`,
/// `invalid_token` or `token_expired` and a `WWW-Authenticate` challenge.
///
/// For handlers on the [`App`] state, such as routes added with
/// [`App::wrap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Viewer(pub UserId);

impl FromRequestParts<App> for Viewer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, ApiError> {
        authenticate(&app.0.auth, &parts.headers).map(Viewer)
    }
}

/// A route that takes no query: any query is refused with 400 `bad_query`
/// rather than ignored (a test's `PUT /admin/faults?tag=mine` would
/// replace every test's rules, not only its own).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NoQuery;

impl<S: Send + Sync> FromRequestParts<S> for NoQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        match parts.uri.query().filter(|query| !query.is_empty()) {
            None => Ok(Self),
            Some(query) => {
                // The path as sent: inside the nested admin router the
                // request's own is without its `/admin` prefix.
                let path = parts
                    .extensions
                    .get::<axum::extract::OriginalUri>()
                    .map_or(parts.uri.path(), |original| original.path());
                Err(ApiError::bad_request(
                    code::BAD_QUERY,
                    format!(
                        "{} {path} takes no query; got {}",
                        parts.method,
                        likekit_proto::quoted(query)
                    ),
                ))
            }
        }
    }
}

/// The one id of the route's path (`{post_id}`, `{id}`), parsed by the id
/// type's own [`FromStr`] — [`PostId`] or
/// [`UserId`]. Rejects with 400 `bad_post_id` or `bad_user_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathId<T>(pub T);

impl<S, T> FromRequestParts<S> for PathId<T>
where
    S: Send + Sync,
    T: FromStr<Err = IdError> + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        // A path that does not decode (bad percent-encoding) is text that
        // is not an id, and gets the same answer.
        let text = Path::<String>::from_request_parts(parts, state)
            .await
            .map(|Path(text)| text)
            .unwrap_or_default();
        text.parse()
            .map(PathId)
            .map_err(|e: IdError| ApiError::from(e))
    }
}

/// Parses `posts=1,2,3`: 1 to [`MAX_BATCH_POSTS`] ids, each a valid post
/// id. Every id named counts toward the limit, a repeat too (so that the
/// OpenAPI document's `maxItems` is the rule); a repeat is read once.
pub fn parse_post_list(pairs: &[(String, String)]) -> Result<Vec<PostId>, ApiError> {
    let mut lists = pairs
        .iter()
        .filter(|(key, _)| key == "posts")
        .map(|(_, value)| value.as_str())
        .peekable();
    if lists.peek().is_none() {
        return Err(ApiError::bad_request(
            code::BAD_POSTS,
            "name the posts to read: /likes?posts=1,2,3",
        ));
    }
    let mut posts = Vec::new();
    for (named, item) in lists.flat_map(|list| list.split(',')).enumerate() {
        let item = item.trim();
        let post: PostId = item.parse().map_err(|e: likekit_proto::IdError| {
            ApiError::bad_request(
                code::BAD_POSTS,
                format!("posts must be a comma-separated list of post ids: {e}"),
            )
        })?;
        if named == MAX_BATCH_POSTS {
            return Err(ApiError::bad_request(
                code::TOO_MANY_POSTS,
                format!("at most {MAX_BATCH_POSTS} posts per read (a repeated id counts too)"),
            ));
        }
        if !posts.contains(&post) {
            posts.push(post);
        }
    }
    Ok(posts)
}
