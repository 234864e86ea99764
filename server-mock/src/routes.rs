//! The router: which handler answers which route, and the middleware
//! around them. It imports the handlers; no handler imports it.

use axum::{
    Router,
    extract::DefaultBodyLimit,
    middleware,
    routing::{get, post, put},
};
use tower::Layer as _;

use crate::{admin, api, middleware::ObserveLayer, openapi, state::App, web};

impl App {
    /// Every route of the server — the public API, `/healthz`,
    /// `/openapi.json`, `/metrics`, the admin API when there is an admin
    /// key, the web root's files when there is one — with all its
    /// middleware: what [`spawn`](crate::spawn) serves. Nest or merge it
    /// into your own axum application, or serve it with
    /// [`net::Listener`](crate::net::Listener) so that fault rules can drop
    /// connections.
    pub fn router(&self) -> Router {
        router(self)
    }

    /// Your own routes with the server's middleware, in place of the
    /// server's routes: every unknown route and wrong method answered with
    /// the JSON 404 and 405, the body limit, fault rules (by the matched
    /// path: a route at `/posts/{post_id}/likes` counts as the `likes`
    /// route), metrics, the request timeout, CORS, and a JSON 500 for a
    /// handler that panics. Handlers get the [`App`] as state, and sign
    /// users in with the [`Viewer`](crate::Viewer) extractor.
    ///
    /// ```
    /// use axum::{Json, routing::get};
    /// use likekit_server::{App, Config, Viewer};
    ///
    /// async fn me(Viewer(user): Viewer) -> Json<u64> {
    ///     Json(user.get())
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let app = App::open(&Config::default()).await.unwrap();
    /// let router = app.wrap(axum::Router::new().route("/me", get(me)));
    /// # let _ = router;
    /// # });
    /// ```
    pub fn wrap(&self, routes: Router<App>) -> Router {
        wrap(self, routes)
    }

    /// The operations routes alone — `/metrics`, `/openapi.json`, the
    /// admin API, the probes — with the same middleware: what
    /// [`spawn`](crate::spawn) serves on `Config::ops_listen`. With
    /// `ops_listen` set, [`router`](Self::router) leaves them out.
    pub fn ops_router(&self) -> Router {
        ops_router(self)
    }
}

fn router(app: &App) -> Router {
    let mut routes = public_routes();
    if !app.0.ops_apart {
        routes = routes.merge(ops_routes(app));
    }
    let routes = match &app.0.web_root {
        Some(root) => web::serve_files(routes, root),
        None => routes.fallback(api::not_found),
    };
    layers(app, routes)
}

/// The routes of the operations listener (`ops_listen`): `/metrics`,
/// `/openapi.json`, the admin API and the probes.
fn ops_router(app: &App) -> Router {
    let routes = ops_routes(app).merge(probes());
    layers(app, routes.fallback(api::not_found))
}

/// The like button's routes, and the probes.
fn public_routes() -> Router<App> {
    Router::new()
        .route("/posts/{post_id}/like", post(api::like).delete(api::unlike))
        .route("/posts/{post_id}/likes", get(api::post_likes))
        .route("/likes", get(api::batch_likes))
        .merge(probes())
}

fn probes() -> Router<App> {
    Router::new()
        .route("/healthz", get(api::healthz))
        .route("/livez", get(api::livez))
        .route("/readyz", get(api::readyz))
}

/// `/openapi.json`, `/metrics`, and the admin API when there is a key.
fn ops_routes(app: &App) -> Router<App> {
    let mut routes = Router::new()
        .route("/openapi.json", get(openapi::openapi_json))
        .route("/metrics", get(api::metrics_text));
    if app.0.admin_key.is_some() {
        let admin = Router::new()
            .route("/users", post(admin::create_user))
            .route("/users/{id}", get(admin::get_user))
            .route("/users/{id}/friends", put(admin::set_friends))
            .route("/posts", post(admin::create_post))
            .route("/posts/{id}", get(admin::get_post))
            .route("/tokens", post(admin::mint_token))
            .route(
                "/faults",
                put(admin::set_faults)
                    .post(admin::add_faults)
                    .get(admin::get_faults)
                    .delete(admin::clear_faults),
            )
            .route(
                "/requests",
                get(admin::requests).delete(admin::clear_requests),
            )
            .route("/reset", post(admin::reset))
            .route("/seed", post(admin::seed))
            .method_not_allowed_fallback(api::method_not_allowed)
            .fallback(api::not_found)
            .with_state(app.clone());
        // The key is checked before the admin routes are looked at: without
        // it, a wrong method or path under `/admin` is the key's 401, not a
        // 405 whose `Allow` lists what the admin API takes (axum adds that
        // header outside any layer of the route itself).
        let admin = middleware::from_fn_with_state(app.clone(), admin::require_key).layer(admin);
        routes = routes.nest_service("/admin", admin);
    }
    routes
}

/// `routes` with the server's middleware: JSON 404 and 405 answers, the
/// body limit, fault rules, metrics and the request timeout, CORS, and a
/// JSON 500 for a handler that panics.
fn wrap(app: &App, routes: Router<App>) -> Router {
    layers(app, routes.fallback(api::not_found))
}

/// The body limit axum's extractors apply when no layer sets one.
const AXUM_BODY_LIMIT: usize = 2 * 1024 * 1024;

fn layers(app: &App, routes: Router<App>) -> Router {
    let mut routes = routes.method_not_allowed_fallback(api::method_not_allowed);
    // The middleware reads every body through the server's limit; only a
    // limit above axum's own needs axum's extractors told (a layer every
    // request would otherwise pass through).
    if app.0.max_body_bytes > AXUM_BODY_LIMIT {
        routes = routes.layer(DefaultBodyLimit::max(app.0.max_body_bytes));
    }
    let mut router = routes.layer(ObserveLayer(app.clone()));
    // CORS outermost, so that every answer the middleware makes itself (a
    // fault rule's, a timeout, a 413, a panic's 500) carries its headers
    // and a browser can read it. The price: tower-http answers every
    // OPTIONS request itself, before the middleware (no request id, no
    // metrics, no journal, no fault rules), which the README says.
    if let Some(cors) = app.0.cors.clone() {
        router = router.layer(cors);
    }
    router.with_state(app.clone())
}
