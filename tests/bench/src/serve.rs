//! Serving the bench's own routes: the bare route and the naive baseline,
//! on the same listener setup as the real server (Tokio's multi-threaded
//! runtime, axum, hyper, `TCP_NODELAY` on every connection, the same
//! allocator), each until SIGINT or SIGTERM. The first line on standard
//! output is `listening on http://ADDR`, as the real server prints it.

use std::{
    io::{self, Write as _},
    net::SocketAddr,
};

use axum::{
    Router,
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
    routing::{get, post},
    serve::ListenerExt,
};
use tokio::net::TcpListener;

const BARE_VIEW: &str = r#"{"count":1204,"liked_by_me":false,"friends":["Ana K."],"version":9}"#;
const BARE_WRITE: &str = r#"{"count":1204,"liked_by_me":true,"version":9}"#;

/// A fixed JSON body.
pub fn fixed_json(body: &'static str) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

/// The bare routes: the same paths and methods as the real API, each
/// answering a fixed body at once.
pub fn bare_router() -> Router {
    Router::new()
        .route(
            "/posts/{post_id}/likes",
            get(|| async { fixed_json(BARE_VIEW) }),
        )
        .route(
            "/posts/{post_id}/like",
            post(|| async { fixed_json(BARE_WRITE) }).delete(|| async { fixed_json(BARE_WRITE) }),
        )
        .route(
            "/healthz",
            get(|| async { fixed_json(r#"{"status":"ok"}"#) }),
        )
}

/// Serves `router` on `listen` until SIGINT or SIGTERM.
pub async fn serve(router: Router, listen: SocketAddr) -> Result<(), String> {
    let listener = TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let stop = stop_signal().map_err(|e| format!("cannot listen for signals: {e}"))?;
    let mut stdout = io::stdout();
    let _ = writeln!(stdout, "listening on http://{addr}");
    let _ = stdout.flush();
    axum::serve(listener, router)
        .with_graceful_shutdown(stop)
        .await
        .map_err(|e| e.to_string())
}

#[cfg(unix)]
fn stop_signal() -> io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

#[cfg(not(unix))]
fn stop_signal() -> io::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
