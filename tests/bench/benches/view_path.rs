//! The view path in process: `GET /posts/{id}/likes` through the server's
//! whole router (middleware, token check, caches, the viewer's row in
//! SQLite, the JSON body) with no network, beside the bare route through its
//! router. CPU per view, without the kernel and the load generator that
//! dominate a loopback measurement.
//!
//! Between the two, a ladder of routes that each add one part of the view
//! to the one before, all answering the bare route's fixed body, so that the
//! difference between two rungs is what that part costs:
//!
//! | rung | adds |
//! | --- | --- |
//! | `bare` | axum's router and a fixed JSON body |
//! | `middleware` | the server's layers ([`App::wrap`]): request id, metrics, timeout, body limit, panic catcher |
//! | `signed_in` | the [`Viewer`] and [`PathId`] extractors: the token check and the path's id |
//! | `own_row` | the viewer's own row read from the store, as every view reads it |
//! | `cached` | the real route: the post and friend caches and the JSON body |
//!
//! `cargo bench -p likekit-bench --bench view_path`

#![allow(clippy::unwrap_used, missing_docs)]

use std::{sync::Arc, time::Duration};

use axum::{
    Router,
    body::Body,
    extract::State,
    http::{HeaderValue, Request, StatusCode, header},
    response::Response,
    routing::get,
};
use criterion::{Criterion, criterion_group, criterion_main};
use likekit_bench::{
    data::{SeedParams, seed, view_mix},
    serve::{bare_router, fixed_json},
};
use likekit_server::{
    App, Config, Database, PathId, Viewer,
    store::{SqliteOptions, SqliteStore},
    wire::{PostId, UserId},
};
use tower::ServiceExt;

// The server's allocator, as in the binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A fifth of the full data set, with the same users and friend lists (so the
/// same share of each post's likers are friends).
const PARAMS: SeedParams = SeedParams {
    posts: 20_000,
    likes: 200_000,
    users: 10_000,
    friends: 300,
    rng_seed: 1,
};

struct Load {
    requests: Vec<(String, HeaderValue)>,
    next: usize,
}

impl Load {
    fn next(&mut self) -> Request<Body> {
        let (uri, auth) = &self.requests[self.next % self.requests.len()];
        self.next += 1;
        Request::builder()
            .uri(uri.as_str())
            .header(header::AUTHORIZATION, auth.clone())
            .body(Body::empty())
            .unwrap()
    }
}

async fn call(router: &Router, request: Request<Body>) -> usize {
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    axum::body::to_bytes(response.into_body(), 4096)
        .await
        .unwrap()
        .len()
}

/// The bare route's body, answered by every rung of the ladder.
const FIXED_VIEW: &str = r#"{"count":1204,"liked_by_me":false,"friends":["Ana K."],"version":9}"#;

/// The ladder's rungs below the real route, on `app`'s middleware, store
/// and tokens.
fn ladder(app: &App) -> [(&'static str, Router); 3] {
    async fn fixed() -> Response {
        fixed_json(FIXED_VIEW)
    }
    async fn signed_in(Viewer(_): Viewer, PathId(_): PathId<PostId>) -> Response {
        fixed_json(FIXED_VIEW)
    }
    async fn own_row(
        State(app): State<App>,
        Viewer(user): Viewer,
        PathId(post): PathId<PostId>,
    ) -> Response {
        let liked = app.store().liked(user, &[post]).await.unwrap();
        std::hint::black_box(liked);
        fixed_json(FIXED_VIEW)
    }
    let route = |handler| app.wrap(Router::new().route("/posts/{post_id}/likes", handler));
    [
        ("middleware", route(get(fixed))),
        ("signed_in", route(get(signed_in))),
        ("own_row", route(get(own_row))),
    ]
}

/// `cargo test` runs benchmarks once each as a check: a small data set then.
const CHECK_PARAMS: SeedParams = SeedParams {
    posts: 500,
    likes: 5_000,
    users: 500,
    friends: 30,
    rng_seed: 1,
};

fn views(c: &mut Criterion) {
    let benchmarking = std::env::args().any(|a| a == "--bench");
    let params = if benchmarking { PARAMS } else { CHECK_PARAMS };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    rt.block_on(seed(dir.path(), &params)).unwrap();
    let db = dir.path().join("likekit.db");

    let router_with_ttl = |ttl: Duration| {
        let store = SqliteStore::open(SqliteOptions {
            database: Database::File(db.clone()),
            ..SqliteOptions::default()
        })
        .unwrap();
        let config = Config {
            token_secret: Some("bench-secret".into()),
            cache_ttl: ttl,
            friends_ttl: Duration::from_secs(3600),
            ..Config::default()
        };
        App::new(&config, Arc::new(store)).unwrap()
    };
    let app = router_with_ttl(Duration::from_secs(3600));
    let (cached, tokens) = (app.router(), app.tokens().clone());
    let uncached = router_with_ttl(Duration::ZERO).router();
    let rungs = ladder(&app);
    let bare = bare_router();

    let posts = view_mix(&params, 4096);
    let load = || Load {
        requests: posts
            .iter()
            .enumerate()
            .map(|(i, post)| {
                let viewer = UserId::new((i as u64 * 7_919) % params.users + 1).unwrap();
                let token = tokens.mint(viewer, Duration::from_secs(3600));
                (
                    format!("/posts/{post}/likes"),
                    HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
                )
            })
            .collect(),
        next: 0,
    };

    // Warm the caches (tokens, friend sets, posts) with every request once.
    let mut warm = load();
    for _ in 0..warm.requests.len() {
        rt.block_on(call(&cached, warm.next()));
        rt.block_on(call(&uncached, warm.next()));
    }

    let mut group = c.benchmark_group("view_path");
    let mut l = load();
    group.bench_function("bare", |b| b.iter(|| rt.block_on(call(&bare, l.next()))));
    for (name, router) in &rungs {
        let mut l = load();
        group.bench_function(*name, |b| b.iter(|| rt.block_on(call(router, l.next()))));
    }
    let mut l = load();
    group.bench_function("cached", |b| {
        b.iter(|| rt.block_on(call(&cached, l.next())))
    });
    let mut l = load();
    group.bench_function("post_not_cached", |b| {
        b.iter(|| rt.block_on(call(&uncached, l.next())))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = views
}
criterion_main!(benches);
