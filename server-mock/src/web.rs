//! Static files next to the API (`--web-root DIR`): the web demo page and
//! the wasm package, served from the same origin as the API so the page
//! needs no CORS.
//!
//! API routes always win: the files are only the router's fallback. A
//! path with no file behind it still gets the API's JSON 404, so a client
//! that mistypes a route never receives an HTML page.

use std::path::Path;

use axum::{Router, handler::HandlerWithoutStateExt};
use tower_http::services::ServeDir;

use crate::api;

/// Makes `router` serve the files under `root` for every path no route
/// matches (`/` is `index.html`). [`App::new`](crate::App::new) checks that
/// `root` is a folder.
pub(crate) fn serve_files<S>(router: Router<S>, root: &Path) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let files = ServeDir::new(root)
        .append_index_html_on_directories(true)
        // POST /nothing-here is a 404 like any unknown route, not a 405.
        .call_fallback_on_method_not_allowed(true)
        .fallback(api::not_found.into_service());
    router.fallback_service(files)
}
