//! The state every handler shares, and the router built on it.

use std::{any::Any, sync::Arc, time::Duration};

use axum::{
    Router,
    extract::DefaultBodyLimit,
    http::{HeaderName, HeaderValue, Method, header},
    middleware,
    response::{IntoResponse, Response},
    routing::{get, post, put},
};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter, clock::Clock};
use likekit_core::wire::UserId;
use tower_http::{
    catch_panic::CatchPanicLayer,
    cors::{AllowOrigin, CorsLayer},
    limit::RequestBodyLimitLayer,
};

use crate::{
    admin, api,
    auth::{Authenticator, Tokens},
    config::Config,
    error::ApiError,
    error::Error,
    faults::Faults,
    metrics::Metrics,
    naive::{self, NaiveViews},
    store::Store,
    views::Views,
};

pub(crate) struct App {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) views: Views,
    pub(crate) auth: Authenticator,
    pub(crate) faults: Faults,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) limiter: Option<DefaultKeyedRateLimiter<UserId>>,
    pub(crate) admin_key: Option<String>,
    pub(crate) openapi: String,
    pub(crate) request_timeout: Duration,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("store", &self.store)
            .field("views", &self.views)
            .field("admin", &self.admin_key.is_some())
            .finish_non_exhaustive()
    }
}

impl App {
    pub(crate) fn new(
        config: &Config,
        store: Arc<dyn Store>,
        tokens: Tokens,
        metrics: Arc<Metrics>,
    ) -> Self {
        let limiter = config.write_rate_limit.map(|limit| {
            RateLimiter::keyed(Quota::per_second(limit.per_second).allow_burst(limit.burst))
        });
        Self {
            views: Views::new(
                store.clone(),
                (config.cache_ttl, config.cache_capacity),
                (config.friends_ttl, config.friends_capacity),
            ),
            store,
            auth: Authenticator::new(tokens),
            faults: Faults::default(),
            metrics,
            limiter,
            admin_key: config.admin_key.clone().filter(|k| !k.is_empty()),
            openapi: crate::openapi::document(),
            request_timeout: config.request_timeout,
        }
    }

    /// Takes one write from `user`'s allowance, or says when to come back.
    pub(crate) fn check_rate(&self, user: UserId) -> Result<(), ApiError> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        limiter.check_key(&user).map_err(|not_until| {
            self.metrics.rate_limited.increment(1);
            let wait = not_until.wait_time_from(limiter.clock().now());
            ApiError::rate_limited(wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
        })
    }

    /// Drops expired cache entries; call every second or so.
    pub(crate) fn sweep_caches(&self) {
        self.views.sweep();
        self.auth.sweep();
    }

    /// Forgets rate-limit state of users who are back to a full allowance.
    pub(crate) fn housekeeping(&self) {
        if let Some(limiter) = &self.limiter {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        self.metrics.upkeep();
    }
}

fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response {
    let detail = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("unknown panic");
    tracing::error!(panic = detail, "a handler panicked");
    ApiError::internal("internal server error").into_response()
}

fn cors_layer(origins: &[String]) -> Result<Option<CorsLayer>, Error> {
    if origins.is_empty() {
        return Ok(None);
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        let values = origins
            .iter()
            .map(|origin| {
                HeaderValue::from_str(origin.trim_end_matches('/'))
                    .map_err(|_| Error::Config(format!("bad CORS origin {origin:?}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        AllowOrigin::list(values)
    };
    Ok(Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([Method::GET, Method::POST, Method::PUT, Method::DELETE])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                HeaderName::from_static("x-admin-key"),
            ])
            .expose_headers([header::RETRY_AFTER, header::WWW_AUTHENTICATE])
            .max_age(Duration::from_secs(600)),
    ))
}

/// Every route, with JSON errors everywhere.
pub(crate) fn router(app: Arc<App>, config: &Config) -> Result<Router, Error> {
    let view = if config.naive_views {
        let naive = Arc::new(NaiveViews::open(
            &config.database,
            config.read_connections.max(4),
        )?);
        tracing::warn!(
            "naive views: every view is computed from the like rows (benchmark baseline)"
        );
        get(move |state, viewer, post| naive::post_likes(naive.clone(), state, viewer, post))
    } else {
        get(api::post_likes)
    };
    let public = Router::new()
        .route("/posts/{post_id}/like", post(api::like).delete(api::unlike))
        .route("/posts/{post_id}/likes", view)
        .route("/likes", get(api::batch_likes));

    let mut router = public
        .route("/healthz", get(api::healthz))
        .route("/openapi.json", get(api::openapi_json))
        .route("/metrics", get(api::metrics_text));

    if app.admin_key.is_some() {
        let admin = Router::new()
            .route("/users", post(admin::create_user))
            .route("/users/{id}/friends", put(admin::set_friends))
            .route("/posts", post(admin::create_post))
            .route("/tokens", post(admin::mint_token))
            .route(
                "/faults",
                put(admin::set_faults).delete(admin::clear_faults),
            )
            .route("/reset", post(admin::reset))
            .route("/seed", post(admin::seed))
            .route_layer(middleware::from_fn_with_state(
                app.clone(),
                admin::require_key,
            ));
        router = router.nest("/admin", admin);
    }
    let router = match &config.web_root {
        Some(root) => crate::web::serve_files(router, root)?,
        None => router.fallback(api::not_found),
    };
    let mut router = router
        .method_not_allowed_fallback(api::method_not_allowed)
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(RequestBodyLimitLayer::new(config.max_body_bytes))
        .layer(middleware::from_fn_with_state(app.clone(), api::observe));
    if let Some(cors) = cors_layer(&config.cors_origins)? {
        router = router.layer(cors);
    }
    Ok(router
        .layer(CatchPanicLayer::custom(panic_response))
        .with_state(app))
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;

    use super::*;

    #[tokio::test]
    async fn a_panic_becomes_a_json_500() {
        let response = panic_response(Box::new("boom"));
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        let body = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .expect("body");
        let body: likekit_core::wire::ErrorBody =
            serde_json::from_slice(&body).expect("an error body");
        assert_eq!(body.error.code, "internal");
    }

    #[test]
    fn cors_origins_must_be_header_values() {
        assert!(cors_layer(&[]).expect("no origins").is_none());
        assert!(
            cors_layer(&["http://a.example".into()])
                .expect("one")
                .is_some()
        );
        assert!(cors_layer(&["*".into()]).expect("any").is_some());
        assert!(cors_layer(&["bad\norigin".into()]).is_err());
    }
}
