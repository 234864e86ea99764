//! The public routes: likes, views, health, metrics, and the JSON answers
//! to unknown routes and wrong methods.

use axum::{
    Extension, Json,
    extract::{Query, State},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use likekit_proto::{BatchLikes, ErrorBody, LikeState, PostId, UserId, code};
use serde::Serialize;
use utoipa::ToSchema;

use std::sync::Arc;

use crate::{
    error::ApiError,
    extract::{PathId, Viewer, parse_post_list},
    journal::Written,
    state::{App, Shared},
    store::StoreError,
};

/// Like a post (idempotent).
///
/// Inserts the caller's like if missing. The answer's count and version are
/// read in the write's own transaction, which is on disk before the answer
/// (a `:memory:` database is never fsynced).
#[utoipa::path(
    post,
    path = "/posts/{post_id}/like",
    tag = "likes",
    params(("post_id" = PostId, Path, description = "The post")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller likes the post", body = LikeState),
        (status = 400, description = "`bad_post_id`", body = ErrorBody),
        (status = 401, description = "`missing_token`, `invalid_token`, `token_expired`", body = ErrorBody),
        (status = 404, description = "`post_not_found`", body = ErrorBody),
        (status = 429, description = "`rate_limited`, with Retry-After", body = ErrorBody),
    )
)]
pub(crate) async fn like(
    State(App(app)): State<App>,
    Viewer(user): Viewer,
    PathId(post): PathId<PostId>,
) -> Result<(Extension<Written>, Json<LikeState>), ApiError> {
    write(app, user, post, true).await
}

/// Unlike a post (idempotent).
///
/// Deletes the caller's like if present. The answer's count and version are
/// read in the write's own transaction, which is on disk before the answer
/// (a `:memory:` database is never fsynced).
#[utoipa::path(
    delete,
    path = "/posts/{post_id}/like",
    tag = "likes",
    params(("post_id" = PostId, Path, description = "The post")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller does not like the post", body = LikeState),
        (status = 400, description = "`bad_post_id`", body = ErrorBody),
        (status = 401, description = "`missing_token`, `invalid_token`, `token_expired`", body = ErrorBody),
        (status = 404, description = "`post_not_found`", body = ErrorBody),
        (status = 429, description = "`rate_limited`, with Retry-After", body = ErrorBody),
    )
)]
pub(crate) async fn unlike(
    State(App(app)): State<App>,
    Viewer(user): Viewer,
    PathId(post): PathId<PostId>,
) -> Result<(Extension<Written>, Json<LikeState>), ApiError> {
    write(app, user, post, false).await
}

/// The write runs in a task of its own: once queued it commits even if the
/// request is dropped (a timeout, a lost connection), and then the post's
/// new snapshot must still reach the view cache and the metrics, or views
/// would show the old count for up to a TTL. What the task logs names the
/// request, as the request's own lines do.
async fn write(
    app: Arc<Shared>,
    user: UserId,
    post: PostId,
    like: bool,
) -> Result<(Extension<Written>, Json<LikeState>), ApiError> {
    app.check_rate(user)?;
    let done = tokio::spawn(crate::logs::in_current_request(async move {
        let generation = app.views.generation();
        let mut outcome = if like {
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
        if let Some(snapshot) = outcome.snapshot.take() {
            app.views.offer(generation, post, snapshot);
        }
        Ok::<_, StoreError>(outcome)
    }));
    let outcome = done
        .await
        .map_err(|e| StoreError::Backend(format!("the write's task failed: {e}")))??;
    let written = Written {
        changed: outcome.changed,
    };
    Ok((Extension(written), Json(outcome.state)))
}

/// One post as the caller sees it.
///
/// `count`, `version` and `friends` come from a cache kept about a second;
/// `liked_by_me` is always the caller's current state.
#[utoipa::path(
    get,
    path = "/posts/{post_id}/likes",
    tag = "likes",
    params(("post_id" = PostId, Path, description = "The post")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The post's likes", body = likekit_proto::PostLikes),
        (status = 400, description = "`bad_post_id`", body = ErrorBody),
        (status = 401, description = "`missing_token`, `invalid_token`, `token_expired`", body = ErrorBody),
        (status = 404, description = "`post_not_found`", body = ErrorBody),
    )
)]
pub(crate) async fn post_likes(
    State(App(app)): State<App>,
    Viewer(user): Viewer,
    PathId(post): PathId<PostId>,
) -> Result<Response, ApiError> {
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

/// A feed page in one read.
///
/// Every existing post of `posts` as the caller sees it, keyed by id;
/// unknown posts are left out. At most 100 ids, a repeat counted too.
#[utoipa::path(
    get,
    path = "/likes",
    tag = "likes",
    params((
        "posts" = Vec<PostId>,
        Query,
        style = Form,
        explode = false,
        // Checked against MAX_BATCH_POSTS by the OpenAPI tests.
        min_items = 1,
        max_items = 100,
        description = "Comma-separated post ids, e.g. `1,2,3`: 1 to 100 (a repeated id counts toward the 100 and is read once; repeated `posts=` parameters add up)"
    )),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The posts that exist", body = BatchLikes),
        (status = 400, description = "`bad_posts`, `too_many_posts`", body = ErrorBody),
        (status = 401, description = "`missing_token`, `invalid_token`, `token_expired`", body = ErrorBody),
    )
)]
pub(crate) async fn batch_likes(
    State(App(app)): State<App>,
    Viewer(user): Viewer,
    query: Result<Query<Vec<(String, String)>>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<BatchLikes>, ApiError> {
    let Query(pairs) = query?;
    let posts = parse_post_list(&pairs)?;
    Ok(Json(app.views.view_many(user, &posts).await?))
}

/// `{"status": "ok"}`
#[derive(Debug, Serialize, ToSchema)]
#[schema(examples(json!({"status": "ok"})))]
pub(crate) struct Health {
    /// Always `ok`.
    #[schema(example = "ok")]
    status: &'static str,
}

/// Liveness probe (the same as `/livez`, kept for existing checks).
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "ops",
    responses((status = 200, description = "The server is up", body = Health))
)]
pub(crate) async fn healthz() -> Json<Health> {
    livez().await
}

/// Liveness probe: the process answers. It touches nothing else, so a
/// slow or lost database never gets the process restarted.
#[utoipa::path(
    get,
    path = "/livez",
    tag = "ops",
    responses((status = 200, description = "The process answers", body = Health))
)]
pub(crate) async fn livez() -> Json<Health> {
    Json(Health { status: "ok" })
}

/// How long `/readyz` waits for the store's answer.
pub const READY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(2);

/// Readiness probe: the store answers a real query (one post's row, read
/// as a view reads it, past every cache) within 2 seconds, and the server
/// is not stopping.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "ops",
    responses(
        (status = 200, description = "The store answered", body = Health),
        (status = 503, description = "`not_ready`: the store failed or did not answer within 2 s, or the server is stopping", body = ErrorBody),
    )
)]
pub(crate) async fn readyz(State(App(app)): State<App>) -> Result<Json<Health>, ApiError> {
    if app.stopping.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            code::NOT_READY,
            "the server is stopping",
        ));
    }
    let probe = app.store.ready();
    // The store's own words (a database host, a user name, a file's path)
    // go to the log only: the probe answers on the public port too.
    let failure = match tokio::time::timeout(READY_DEADLINE, probe).await {
        Ok(Ok(_)) => None,
        Ok(Err(e)) => Some((
            format!("the store failed: {e}"),
            "the store failed (the server's log says why)",
        )),
        Err(_) => Some((
            "the store did not answer within 2 s".to_owned(),
            "the store did not answer within 2 s",
        )),
    };
    // Logged when readiness changes, not on every probe: one line when the
    // store stops answering, one when it is back.
    let was_failing = app
        .not_ready
        .swap(failure.is_some(), std::sync::atomic::Ordering::Relaxed);
    match failure {
        None => {
            if was_failing {
                tracing::info!("ready again: the store answers");
            }
            Ok(Json(Health { status: "ok" }))
        }
        Some((reason, answered)) => {
            if !was_failing {
                tracing::warn!(%reason, "not ready: /readyz answers 503 until the store answers again");
            }
            Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                code::NOT_READY,
                answered,
            ))
        }
    }
}

/// Prometheus metrics (text format).
///
/// Requests and latency by route, likes written, cache hit rate, group
/// commit sizes, rate-limited writes, injected faults, connections by
/// listener, and on PostgreSQL the database connection pools.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "ops",
    responses((status = 200, description = "Prometheus text exposition", content_type = "text/plain"))
)]
pub(crate) async fn metrics_text(State(App(app)): State<App>) -> Response {
    let text = app.metrics.render(
        &app.views.post_stats,
        &app.views.friend_stats,
        &app.store.pools(),
    );
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
    ApiError::new(StatusCode::NOT_FOUND, code::NOT_FOUND, "no such route")
}

/// Known routes, wrong method.
pub(crate) async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        code::METHOD_NOT_ALLOWED,
        "this route does not accept that method",
    )
}
