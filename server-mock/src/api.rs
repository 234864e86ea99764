//! The public routes: likes, views, health, metrics, the OpenAPI document.

use std::{sync::Arc, time::Instant};

use axum::{
    Json,
    extract::{FromRequestParts, Path, Query, Request, State, rejection::PathRejection},
    http::{HeaderValue, StatusCode, header, request::Parts},
    middleware::Next,
    response::{IntoResponse, Response},
};
use likekit_core::wire::{
    BatchLikes, LikeState, MAX_BATCH_POSTS, PostId, UserId, admin::FaultRoute,
};
use serde::Serialize;

use crate::{
    app::App,
    auth::{authenticate, parse_user_id},
    error::ApiError,
    faults::Decision,
    metrics::Route,
    net::ConnInfo,
};

/// Parses a post id from the path: digits only, `1..=i64::MAX`.
pub(crate) fn parse_post_id(raw: Result<Path<String>, PathRejection>) -> Result<PostId, ApiError> {
    let text = raw.map(|Path(text)| text).unwrap_or_default();
    parse_user_id(&text).ok_or_else(|| {
        ApiError::bad_request(
            "bad_post_id",
            format!(
                "post ids are whole numbers from 1 to {}; got {:?}",
                i64::MAX,
                truncate(&text)
            ),
        )
    })
}

fn truncate(text: &str) -> String {
    text.chars().take(40).collect()
}

/// The signed-in caller, from `Authorization: Bearer <token>` (read in
/// place, without copying the headers).
pub(crate) struct Viewer(pub(crate) UserId);

impl FromRequestParts<Arc<App>> for Viewer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, ApiError> {
        authenticate(&app.auth, parts.headers.get(header::AUTHORIZATION)).map(Viewer)
    }
}

/// Like a post (idempotent).
///
/// Inserts the caller's like if missing. The answer's count and version are
/// read in the write's own transaction, which is fsynced before the answer.
#[utoipa::path(
    post,
    path = "/posts/{post_id}/like",
    tag = "likes",
    params(("post_id" = u64, Path, description = "The post, 1..=9223372036854775807")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller likes the post", body = crate::openapi::LikeStateDoc),
        (status = 400, description = "`bad_post_id`", body = crate::openapi::ErrorBodyDoc),
        (status = 401, description = "`missing_token`, `invalid_token`, `token_expired`", body = crate::openapi::ErrorBodyDoc),
        (status = 404, description = "`post_not_found`", body = crate::openapi::ErrorBodyDoc),
        (status = 429, description = "`rate_limited`, with Retry-After", body = crate::openapi::ErrorBodyDoc),
    )
)]
pub(crate) async fn like(
    State(app): State<Arc<App>>,
    Viewer(user): Viewer,
    post: Result<Path<String>, PathRejection>,
) -> Result<Json<LikeState>, ApiError> {
    write(&app, user, post, true).await
}

/// Unlike a post (idempotent).
///
/// Deletes the caller's like if present. The answer's count and version are
/// read in the write's own transaction, which is fsynced before the answer.
#[utoipa::path(
    delete,
    path = "/posts/{post_id}/like",
    tag = "likes",
    params(("post_id" = u64, Path, description = "The post, 1..=9223372036854775807")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller does not like the post", body = crate::openapi::LikeStateDoc),
        (status = 400, description = "`bad_post_id`", body = crate::openapi::ErrorBodyDoc),
        (status = 401, description = "`missing_token`, `invalid_token`, `token_expired`", body = crate::openapi::ErrorBodyDoc),
        (status = 404, description = "`post_not_found`", body = crate::openapi::ErrorBodyDoc),
        (status = 429, description = "`rate_limited`, with Retry-After", body = crate::openapi::ErrorBodyDoc),
    )
)]
pub(crate) async fn unlike(
    State(app): State<Arc<App>>,
    Viewer(user): Viewer,
    post: Result<Path<String>, PathRejection>,
) -> Result<Json<LikeState>, ApiError> {
    write(&app, user, post, false).await
}

async fn write(
    app: &App,
    user: UserId,
    post: Result<Path<String>, PathRejection>,
    like: bool,
) -> Result<Json<LikeState>, ApiError> {
    let post = parse_post_id(post)?;
    app.check_rate(user)?;
    let outcome = if like {
        app.store.like(user, post).await?
    } else {
        app.store.unlike(user, post).await?
    };
    if outcome.changed {
        if like {
            app.metrics.likes_written.increment(1);
        } else {
            app.metrics.unlikes_written.increment(1);
        }
    }
    if let Some(snapshot) = outcome.snapshot {
        app.views.offer(post, snapshot);
    }
    Ok(Json(outcome.state))
}

/// One post as the caller sees it.
///
/// `count`, `version` and `friends` come from a cache kept about a second;
/// `liked_by_me` is always the caller's current state.
#[utoipa::path(
    get,
    path = "/posts/{post_id}/likes",
    tag = "likes",
    params(("post_id" = u64, Path, description = "The post, 1..=9223372036854775807")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The post's likes", body = crate::openapi::PostLikesDoc),
        (status = 400, description = "`bad_post_id`", body = crate::openapi::ErrorBodyDoc),
        (status = 401, description = "`missing_token`, `invalid_token`, `token_expired`", body = crate::openapi::ErrorBodyDoc),
        (status = 404, description = "`post_not_found`", body = crate::openapi::ErrorBodyDoc),
    )
)]
pub(crate) async fn post_likes(
    State(app): State<Arc<App>>,
    Viewer(user): Viewer,
    post: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let post = parse_post_id(post)?;
    match app.views.view_json(user, post).await? {
        // The body of a `PostLikes`, written by the view path itself.
        Some(json) => Ok((
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            json,
        )
            .into_response()),
        None => Err(ApiError::post_not_found(post)),
    }
}

/// Parses `posts=1,2,3`: at least one id, at most [`MAX_BATCH_POSTS`]
/// distinct ones, each a valid post id; duplicates are read once.
pub(crate) fn parse_post_list(pairs: &[(String, String)]) -> Result<Vec<PostId>, ApiError> {
    let mut lists = pairs
        .iter()
        .filter(|(key, _)| key == "posts")
        .map(|(_, value)| value.as_str())
        .peekable();
    if lists.peek().is_none() {
        return Err(ApiError::bad_request(
            "bad_posts",
            "name the posts to read: /likes?posts=1,2,3",
        ));
    }
    let mut posts = Vec::new();
    for item in lists.flat_map(|list| list.split(',')) {
        let item = item.trim();
        let Some(post) = parse_user_id(item) else {
            return Err(ApiError::bad_request(
                "bad_posts",
                format!(
                    "posts must be a comma-separated list of ids from 1 to {}; got {:?}",
                    i64::MAX,
                    truncate(item)
                ),
            ));
        };
        if !posts.contains(&post) {
            if posts.len() == MAX_BATCH_POSTS {
                return Err(ApiError::bad_request(
                    "too_many_posts",
                    format!("at most {MAX_BATCH_POSTS} posts per read"),
                ));
            }
            posts.push(post);
        }
    }
    Ok(posts)
}

/// A feed page in one read.
///
/// Every existing post of `posts` as the caller sees it, keyed by id;
/// unknown posts are left out. At most 100 distinct posts.
#[utoipa::path(
    get,
    path = "/likes",
    tag = "likes",
    params(("posts" = String, Query, description = "Comma-separated post ids, e.g. `1,2,3` (1 to 100)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The posts that exist", body = crate::openapi::BatchLikesDoc),
        (status = 400, description = "`bad_posts`, `too_many_posts`, `bad_query`", body = crate::openapi::ErrorBodyDoc),
        (status = 401, description = "`missing_token`, `invalid_token`, `token_expired`", body = crate::openapi::ErrorBodyDoc),
    )
)]
pub(crate) async fn batch_likes(
    State(app): State<Arc<App>>,
    Viewer(user): Viewer,
    query: Result<Query<Vec<(String, String)>>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<BatchLikes>, ApiError> {
    let Query(pairs) = query?;
    let posts = parse_post_list(&pairs)?;
    Ok(Json(app.views.view_many(user, &posts).await?))
}

#[derive(Serialize)]
pub(crate) struct Health {
    status: &'static str,
}

/// Liveness probe.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "ops",
    responses((status = 200, description = "The server is up", body = crate::openapi::HealthDoc))
)]
pub(crate) async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

/// This document.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "ops",
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json"))
)]
pub(crate) async fn openapi_json(State(app): State<Arc<App>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        app.openapi.clone(),
    )
        .into_response()
}

/// Prometheus metrics (text format).
///
/// Requests and latency by route, likes written, cache hit rate, group
/// commit sizes, rate-limited writes and injected faults.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "ops",
    responses((status = 200, description = "Prometheus text exposition", content_type = "text/plain"))
)]
pub(crate) async fn metrics_text(State(app): State<Arc<App>>) -> Response {
    let text = app
        .metrics
        .render(&app.views.post_stats, &app.views.friend_stats);
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        text,
    )
        .into_response()
}

/// Unknown routes.
pub(crate) async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route")
}

/// Known routes, wrong method.
pub(crate) async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not accept that method",
    )
}

/// The public routes fault rules apply to.
fn fault_route(route: Route) -> Option<FaultRoute> {
    match route {
        Route::Like => Some(FaultRoute::Like),
        Route::Unlike => Some(FaultRoute::Unlike),
        Route::Likes => Some(FaultRoute::Likes),
        Route::Batch => Some(FaultRoute::Batch),
        _ => None,
    }
}

/// The fault rules' verdict on a request to a public route: `None` to
/// handle it, or the answer to give instead (an injected error, or a cut
/// connection).
async fn injected_fault(
    app: &App,
    route: FaultRoute,
    connection: Option<ConnInfo>,
) -> Option<Response> {
    match app.faults.decide(route).await {
        Decision::Pass => None,
        Decision::Fail(status) => {
            app.metrics.faults_injected.increment(1);
            let mut error = ApiError::new(
                status,
                "injected_fault",
                format!("fault rule: answering {}", status.as_u16()),
            );
            if status == StatusCode::TOO_MANY_REQUESTS {
                error.retry_after_secs = Some(1);
            }
            Some(error.into_response())
        }
        Decision::Drop => {
            app.metrics.faults_injected.increment(1);
            match connection {
                Some(info) => {
                    tracing::debug!(remote = %info.remote, "fault rule: dropping the connection");
                    info.kill.trigger();
                }
                None => tracing::warn!("fault rule: cannot drop a connection served elsewhere"),
            }
            // Never written when the connection was cut.
            Some(
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "connection_dropped",
                    "fault rule: connection dropped",
                )
                .into_response(),
            )
        }
    }
}

/// Applies the fault rules to the public like/view routes, records metrics
/// and a log line, bounds the time a request may take (injected latency
/// included), and turns any error answer that is not JSON (axum's built-in
/// rejections) into an `{"error": …}` body. One layer for all of it, so a
/// request pays for one middleware, not two.
pub(crate) async fn observe(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let route = Route::of(
        &method,
        request
            .extensions()
            .get::<axum::extract::MatchedPath>()
            .map(|p| p.as_str()),
    );
    let handle = async {
        if let Some(fault_route) = fault_route(route)
            && !app.faults.is_empty()
        {
            let connection = request
                .extensions()
                .get::<axum::extract::ConnectInfo<ConnInfo>>()
                .map(|info| info.0.clone());
            if let Some(answer) = injected_fault(&app, fault_route, connection).await {
                return answer;
            }
        }
        next.run(request).await
    };
    let mut response = match tokio::time::timeout(app.request_timeout, handle).await {
        Ok(response) => response,
        Err(_) => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            "the request took too long",
        )
        .into_response(),
    };
    let status = response.status();
    if status.is_client_error() || status.is_server_error() {
        let is_json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if !is_json {
            let mut json = ApiError::for_status(status).into_response();
            for (name, value) in response.headers() {
                if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
                    json.headers_mut().append(name.clone(), value.clone());
                }
            }
            response = json;
        }
    }
    let elapsed = started.elapsed();
    app.metrics.observe(route, status, elapsed.as_secs_f64());
    tracing::debug!(%method, ?route, status = status.as_u16(), ?elapsed, "request");
    response
}
