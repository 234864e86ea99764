//! The one middleware around every route: fault rules, metrics, a log
//! line, the request timeout, and JSON for every error answer.

use std::time::Instant;

use axum::{
    extract::{Request, State},
    http::{StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use likekit_proto::admin::FaultRoute;

use crate::{
    error::ApiError,
    faults::Decision,
    metrics::Route,
    net::ConnInfo,
    state::{App, Shared},
};

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
    app: &Shared,
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
pub(crate) async fn observe(State(App(app)): State<App>, request: Request, next: Next) -> Response {
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
