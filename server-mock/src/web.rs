//! Static files next to the API (`--web-root DIR`): the web demo page and
//! the wasm package, served from the same origin as the API so the page
//! needs no CORS.
//!
//! API routes always win: the files are only the router's fallback. A
//! path with no file behind it still gets the API's JSON 404, so a client
//! that mistypes a route never receives an HTML page.
//!
//! tower-http's `ServeDir` keeps a path's text inside the root (no `..`),
//! but follows symbolic links wherever they lead; a path whose file (or,
//! for a folder, its `index.html`) resolves outside the root is answered
//! the JSON 404 here first. So are two kinds of path `ServeDir` would
//! answer: one that names a hidden file or folder (`.env`, `.git/config`:
//! a web root that is a build's output or a checkout holds such; but for
//! `/.well-known/`, whose files are meant to be served), and one
//! that starts with `//`, whose folder `ServeDir` redirects to the path
//! with a `/` added: `Location: //pkg/`, which a browser reads as another
//! host's address (an open redirect).

use std::{
    convert::Infallible,
    path::{Path, PathBuf},
    sync::Arc,
};

use axum::{
    Router,
    extract::Request,
    handler::HandlerWithoutStateExt,
    response::{IntoResponse, Response},
};
use tower::ServiceExt as _;
use tower_http::services::ServeDir;

use crate::api;

/// Makes `router` serve the files under `root` for every path no route
/// matches (`/` is `index.html`). [`App::new`](crate::App::new) checks that
/// `root` is a folder.
pub(crate) fn serve_files<S>(router: Router<S>, root: &Path) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let root: Arc<Path> = root
        .canonicalize()
        .unwrap_or_else(|_| root.to_path_buf())
        .into();
    let files = ServeDir::new(&*root)
        .append_index_html_on_directories(true)
        // POST /nothing-here is a 404 like any unknown route, not a 405.
        .call_fallback_on_method_not_allowed(true)
        .fallback(api::not_found.into_service());
    let service = tower::service_fn(move |request: Request| {
        let files = files.clone();
        let root = Arc::clone(&root);
        async move {
            if !servable(request.uri().path()) {
                return Ok::<Response, Infallible>(api::not_found().await.into_response());
            }
            let inside = match file_under(&root, request.uri().path()) {
                Some(file) => tokio::task::spawn_blocking(move || resolves_inside(&root, &file))
                    .await
                    .unwrap_or(false),
                // `ServeDir` refuses it too.
                None => true,
            };
            if !inside {
                return Ok::<Response, Infallible>(api::not_found().await.into_response());
            }
            let Ok(answer) = files.oneshot(request).await;
            Ok(answer.into_response())
        }
    });
    router.fallback_service(service)
}

/// Whether a path may name a file at all: not one that starts with `//`
/// (a folder's redirect would be `Location: //…/`, another host), and not
/// one with a hidden segment (`.env`, `/.git/config`, `%2egit`), decoded
/// as [`file_under`] decodes it. `.` and `..` are left to `ServeDir`, and
/// `/.well-known/` (RFC 8615: Android's app links and Apple's universal
/// links read their files there) is served as any folder.
fn servable(path: &str) -> bool {
    if path.starts_with("//") {
        return false;
    }
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    let under_well_known = decoded.strip_prefix("/.well-known/");
    !under_well_known
        .unwrap_or(&decoded)
        .split('/')
        .any(|segment| segment.starts_with('.') && segment != "." && segment != "..")
}

/// The file a request's path names under `root`, read as `ServeDir` reads
/// it; `None` for a path it refuses (`..`, a backslash, escapes that are
/// not UTF-8). A `%` not followed by two hex digits stays as it is, as
/// there.
fn file_under(root: &Path, path: &str) -> Option<PathBuf> {
    let decoded = percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .ok()?;
    let mut file = root.to_path_buf();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => return None,
            _ if segment.contains('\\') => return None,
            _ => file.push(segment),
        }
    }
    Some(file)
}

/// Whether `file` (and, for a folder, its `index.html`) is inside `root`
/// once every symbolic link is followed. A file that does not exist is:
/// `ServeDir` answers it the 404.
fn resolves_inside(root: &Path, file: &Path) -> bool {
    let Ok(real) = file.canonicalize() else {
        return true;
    };
    if !real.starts_with(root) {
        return false;
    }
    if real.is_dir() {
        return match real.join("index.html").canonicalize() {
            Ok(index) => index.starts_with(root),
            Err(_) => true,
        };
    }
    true
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_read_as_serve_dir_reads_them() {
        let root = Path::new("/srv/web");
        assert_eq!(
            file_under(root, "/pkg/app%20one.js"),
            Some(PathBuf::from("/srv/web/pkg/app one.js"))
        );
        assert_eq!(file_under(root, "/"), Some(PathBuf::from("/srv/web")));
        assert_eq!(file_under(root, "/%2e%2e/secret"), None);
        assert_eq!(file_under(root, "/a/../b"), None);
        // A `%` not followed by two hex digits is a literal `%`, as
        // `ServeDir` reads it (so a file of that name is checked too).
        assert_eq!(
            file_under(root, "/%zz"),
            Some(PathBuf::from("/srv/web/%zz"))
        );
        assert_eq!(
            file_under(root, "/100%"),
            Some(PathBuf::from("/srv/web/100%"))
        );
        assert_eq!(file_under(root, "/%ff"), None, "not UTF-8");
    }

    #[test]
    fn hidden_files_and_paths_starting_with_two_slashes_are_not_servable() {
        for path in [
            "/",
            "/index.html",
            "/pkg/app.js",
            "/a.b/c.",
            "/./x",
            "/../x",
            "/.well-known/assetlinks.json",
            "/.well-known/apple-app-site-association",
        ] {
            assert!(servable(path), "{path}");
        }
        for path in [
            "/.env",
            "/.git/config",
            "/pkg/.gitignore",
            "/%2egit/config",
            "/pkg%2f.env",
            "/..env",
            "/.well-known/.secret",
            "/.well-knownx/a",
            "//pkg",
            "///pkg",
            "//",
        ] {
            assert!(!servable(path), "{path}");
        }
    }
}
