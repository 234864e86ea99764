//! The admin and test-control API, mounted under `/admin` only when the
//! server has an admin key, and guarded by `X-Admin-Key`.

use std::{sync::Arc, time::Duration};

use axum::{
    Json,
    extract::{Path, Request, State, rejection::PathRejection},
    http::StatusCode,
    middleware::Next,
    response::{IntoResponse, Response},
};
use likekit_core::wire::admin::{
    FaultRules, Friends, NewPost, NewUser, Seed, TokenRequest, TokenResponse,
};
use serde::Serialize;
use subtle::ConstantTimeEq;

use crate::{
    app::App,
    auth::parse_user_id,
    error::{ApiError, AppJson},
    faults,
    store::{MAX_ID, Upsert},
};

/// The longest token lifetime the admin API mints: one year.
pub const MAX_TOKEN_TTL_SECS: u64 = 365 * 24 * 3600;

/// `{"ok": true}`
#[derive(Debug, Serialize)]
pub(crate) struct Ack {
    ok: bool,
}

const ACK: Json<Ack> = Json(Ack { ok: true });

/// Refuses admin requests without the right `X-Admin-Key` (compared in
/// constant time).
pub(crate) async fn require_key(
    State(app): State<Arc<App>>,
    request: Request,
    next: Next,
) -> Response {
    let expected = app.admin_key.as_deref().unwrap_or_default().as_bytes();
    let given = request
        .headers()
        .get("x-admin-key")
        .map(|v| v.as_bytes())
        .unwrap_or_default();
    if expected.is_empty() || !bool::from(given.ct_eq(expected)) {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "bad_admin_key",
            "send the server's admin key in X-Admin-Key",
        )
        .into_response();
    }
    next.run(request).await
}

fn check_user_id(id: u64) -> Result<(), ApiError> {
    if (1..=MAX_ID).contains(&id) {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            "bad_user_id",
            format!("user ids are whole numbers from 1 to {MAX_ID}"),
        ))
    }
}

fn created(upsert: Upsert) -> StatusCode {
    match upsert {
        Upsert::Created => StatusCode::CREATED,
        Upsert::Updated => StatusCode::OK,
    }
}

/// Create a user (201), or rename an existing one (200).
#[utoipa::path(
    post,
    path = "/admin/users",
    tag = "admin",
    request_body = crate::openapi::NewUserDoc,
    security(("admin_key" = [])),
    responses(
        (status = 201, description = "Created", body = crate::openapi::NewUserDoc),
        (status = 200, description = "Existed; renamed", body = crate::openapi::NewUserDoc),
        (status = 400, description = "`bad_user_id`, `bad_name`, `bad_json`", body = crate::openapi::ErrorBodyDoc),
        (status = 401, description = "`bad_admin_key`", body = crate::openapi::ErrorBodyDoc),
        (status = 415, description = "`unsupported_media_type`", body = crate::openapi::ErrorBodyDoc),
    )
)]
pub(crate) async fn create_user(
    State(app): State<Arc<App>>,
    AppJson(user): AppJson<NewUser>,
) -> Result<(StatusCode, Json<NewUser>), ApiError> {
    check_user_id(user.id)?;
    if user.name.trim().is_empty() || user.name.chars().count() > 200 {
        return Err(ApiError::bad_request(
            "bad_name",
            "a name must have 1 to 200 characters and not be blank",
        ));
    }
    let upsert = app.store.put_user(user.id, &user.name).await?;
    if upsert == Upsert::Updated {
        // The name may appear in anyone's friends line.
        app.views.forget_all_friends();
    }
    Ok((created(upsert), Json(user)))
}

/// Create a post (201); an existing post is left as it is (200).
#[utoipa::path(
    post,
    path = "/admin/posts",
    tag = "admin",
    request_body = crate::openapi::NewPostDoc,
    security(("admin_key" = [])),
    responses(
        (status = 201, description = "Created", body = crate::openapi::NewPostDoc),
        (status = 200, description = "Already existed", body = crate::openapi::NewPostDoc),
        (status = 400, description = "`bad_post_id`, `bad_json`", body = crate::openapi::ErrorBodyDoc),
        (status = 401, description = "`bad_admin_key`", body = crate::openapi::ErrorBodyDoc),
    )
)]
pub(crate) async fn create_post(
    State(app): State<Arc<App>>,
    AppJson(post): AppJson<NewPost>,
) -> Result<(StatusCode, Json<NewPost>), ApiError> {
    if !(1..=MAX_ID).contains(&post.id) {
        return Err(ApiError::bad_request(
            "bad_post_id",
            format!("post ids are whole numbers from 1 to {MAX_ID}"),
        ));
    }
    let upsert = app.store.put_post(post.id).await?;
    Ok((created(upsert), Json(post)))
}

/// Replace a user's own (directed) friend list.
#[utoipa::path(
    put,
    path = "/admin/users/{id}/friends",
    tag = "admin",
    params(("id" = u64, Path, description = "The user")),
    request_body = crate::openapi::FriendsDoc,
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "Replaced", body = crate::openapi::FriendsDoc),
        (status = 400, description = "`bad_user_id`, `too_many_friends`, `bad_json`", body = crate::openapi::ErrorBodyDoc),
        (status = 404, description = "`user_not_found` (the user or a friend)", body = crate::openapi::ErrorBodyDoc),
    )
)]
pub(crate) async fn set_friends(
    State(app): State<Arc<App>>,
    id: Result<Path<String>, PathRejection>,
    AppJson(friends): AppJson<Friends>,
) -> Result<Json<Friends>, ApiError> {
    let text = id.map(|Path(text)| text).unwrap_or_default();
    let user = parse_user_id(&text).ok_or_else(|| {
        ApiError::bad_request(
            "bad_user_id",
            format!("user ids are whole numbers from 1 to {MAX_ID}"),
        )
    })?;
    friends.friends.iter().try_for_each(|&f| check_user_id(f))?;
    if friends.friends.len() > crate::store::MAX_FRIENDS {
        return Err(ApiError::bad_request(
            "too_many_friends",
            format!("at most {} friends per user", crate::store::MAX_FRIENDS),
        ));
    }
    app.store.set_friends(user, &friends.friends).await?;
    app.views.forget_friends_of(user);
    Ok(Json(friends))
}

/// Mint a sign-in token for any user id.
#[utoipa::path(
    post,
    path = "/admin/tokens",
    tag = "admin",
    request_body = crate::openapi::TokenRequestDoc,
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "A signed token", body = crate::openapi::TokenResponseDoc),
        (status = 400, description = "`bad_user_id`, `bad_ttl`, `bad_json`", body = crate::openapi::ErrorBodyDoc),
    )
)]
pub(crate) async fn mint_token(
    State(app): State<Arc<App>>,
    AppJson(request): AppJson<TokenRequest>,
) -> Result<Json<TokenResponse>, ApiError> {
    check_user_id(request.user_id)?;
    if !(1..=MAX_TOKEN_TTL_SECS).contains(&request.ttl_secs) {
        return Err(ApiError::bad_request(
            "bad_ttl",
            format!("ttl_secs must be from 1 to {MAX_TOKEN_TTL_SECS}"),
        ));
    }
    let token = app
        .auth
        .tokens()
        .mint(request.user_id, Duration::from_secs(request.ttl_secs));
    Ok(Json(TokenResponse { token }))
}

/// Replace every fault rule.
#[utoipa::path(
    put,
    path = "/admin/faults",
    tag = "admin",
    request_body = crate::openapi::FaultRulesDoc,
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "The rules now in force", body = crate::openapi::FaultRulesDoc),
        (status = 400, description = "`bad_fault_rules`, `bad_json`", body = crate::openapi::ErrorBodyDoc),
    )
)]
pub(crate) async fn set_faults(
    State(app): State<Arc<App>>,
    AppJson(rules): AppJson<FaultRules>,
) -> Result<Json<FaultRules>, ApiError> {
    faults::validate(&rules).map_err(|msg| ApiError::bad_request("bad_fault_rules", msg))?;
    app.faults.set(rules.clone());
    tracing::info!(rules = rules.rules.len(), "fault rules set");
    Ok(Json(rules))
}

/// Remove every fault rule.
#[utoipa::path(
    delete,
    path = "/admin/faults",
    tag = "admin",
    security(("admin_key" = [])),
    responses((status = 200, description = "No rules are in force", body = crate::openapi::FaultRulesDoc))
)]
pub(crate) async fn clear_faults(State(app): State<Arc<App>>) -> Json<FaultRules> {
    app.faults.clear();
    tracing::info!("fault rules cleared");
    Json(FaultRules::default())
}

/// Drop every like; keep users, friendships and posts.
///
/// Counts and versions go back to 0 and the caches are emptied.
#[utoipa::path(
    post,
    path = "/admin/reset",
    tag = "admin",
    security(("admin_key" = [])),
    responses((status = 200, description = "Reset", body = crate::openapi::AckDoc))
)]
pub(crate) async fn reset(State(app): State<Arc<App>>) -> Result<Json<Ack>, ApiError> {
    app.store.reset().await?;
    app.views.clear();
    tracing::info!("likes reset");
    Ok(ACK)
}

/// Load a seed document (the `--seed FILE` format); idempotent.
#[utoipa::path(
    post,
    path = "/admin/seed",
    tag = "admin",
    request_body = crate::openapi::SeedDoc,
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "Loaded", body = crate::openapi::AckDoc),
        (status = 400, description = "`bad_request`, `bad_json`", body = crate::openapi::ErrorBodyDoc),
        (status = 404, description = "`user_not_found` (a friend that is not a user)", body = crate::openapi::ErrorBodyDoc),
    )
)]
pub(crate) async fn seed(
    State(app): State<Arc<App>>,
    AppJson(seed): AppJson<Seed>,
) -> Result<Json<Ack>, ApiError> {
    app.store.seed(&seed).await?;
    app.views.clear();
    Ok(ACK)
}
