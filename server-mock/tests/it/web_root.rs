//! `--web-root`: static files at `/` beside the API, API routes first, JSON
//! 404s for everything else.

#![allow(clippy::unwrap_used)]

use std::fs;

use crate::common::{ServerProcess, TestServer, client, expect_error, ok_json, test_config};
use likekit_server::{Config, wire::LikeState};
use reqwest::{Method, StatusCode, header};

/// A web root with a page, a module and a file the API shadows.
fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("index.html"),
        "<!doctype html><h1>Likes</h1>",
    )
    .unwrap();
    fs::create_dir(dir.path().join("pkg")).unwrap();
    fs::write(dir.path().join("pkg/app.js"), "export const x = 1;").unwrap();
    fs::write(dir.path().join("healthz"), "a file named like a route").unwrap();
    dir
}

#[tokio::test]
async fn files_are_served_and_the_api_still_wins() {
    let root = site();
    let t = TestServer::with(Config {
        web_root: Some(root.path().to_path_buf()),
        ..test_config()
    })
    .await;

    let page = t.http.get(t.url("/")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(
        page.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    assert!(page.text().await.unwrap().contains("<h1>Likes</h1>"));

    let module = t.http.get(t.url("/pkg/app.js")).send().await.unwrap();
    assert_eq!(module.status(), StatusCode::OK);
    let content_type = module.headers()[header::CONTENT_TYPE].to_str().unwrap();
    assert!(content_type.contains("javascript"), "{content_type}");

    // Routes take precedence over files of the same name.
    let health = t.http.get(t.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    assert!(health.text().await.unwrap().contains("\"status\""));

    // The API behaves as without a web root.
    t.setup(&[], &[42]).await;
    let state: LikeState = ok_json(t.like(7, 42).await).await;
    assert!(state.liked_by_me);
    let anonymous = t.http.get(t.url("/posts/42/likes")).send().await.unwrap();
    expect_error(anonymous, StatusCode::UNAUTHORIZED, "missing_token").await;
    let wrong_method = t
        .as_user(7, Method::PUT, "/posts/42/like")
        .send()
        .await
        .unwrap();
    expect_error(
        wrong_method,
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
    )
    .await;
    t.stop().await;
}

#[tokio::test]
async fn missing_files_and_escapes_get_the_json_404() {
    let root = site();
    let outside = root
        .path()
        .parent()
        .unwrap()
        .join("likekit-web-root-secret.txt");
    fs::write(&outside, "secret").unwrap();
    let t = TestServer::with(Config {
        web_root: Some(root.path().to_path_buf()),
        ..test_config()
    })
    .await;
    for path in [
        "/nothing-here.js",
        "/pkg/missing.wasm",
        "/posts/42/nope",
        "/../likekit-web-root-secret.txt",
        "/%2e%2e/likekit-web-root-secret.txt",
    ] {
        let r = t.http.get(t.url(path)).send().await.unwrap();
        let body = expect_error(r, StatusCode::NOT_FOUND, "not_found").await;
        assert!(!body.error.message.contains("secret"), "{path}");
    }
    let post = t.http.post(t.url("/nothing-here")).send().await.unwrap();
    expect_error(post, StatusCode::NOT_FOUND, "not_found").await;
    t.stop().await;
    fs::remove_file(outside).unwrap();
}

/// Hidden files and folders (`.env`, `.git/`) are never served, however
/// the path spells them; and a path that starts with `//` gets the JSON 404
/// rather than a folder's redirect to `//pkg/`, which a browser would
/// follow to the host `pkg` (an open redirect).
#[tokio::test]
async fn hidden_files_and_paths_starting_with_two_slashes_get_the_json_404() {
    let root = site();
    fs::write(root.path().join(".env"), "SECRET=1").unwrap();
    fs::create_dir(root.path().join(".git")).unwrap();
    fs::write(root.path().join(".git/config"), "[secret]").unwrap();
    fs::write(root.path().join("pkg/.gitignore"), "secret").unwrap();
    let t = TestServer::with(Config {
        web_root: Some(root.path().to_path_buf()),
        ..test_config()
    })
    .await;
    let http = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for path in [
        "/.env",
        "/.git/config",
        "/.git/",
        "/pkg/.gitignore",
        "/%2eenv",
        "/pkg%2f.gitignore",
        "//pkg",
        "///pkg",
        "//pkg/app.js",
    ] {
        let r = http.get(t.url(path)).send().await.unwrap();
        assert_eq!(r.headers().get(header::LOCATION), None, "{path}");
        let body = expect_error(r, StatusCode::NOT_FOUND, "not_found").await;
        assert!(!body.error.message.contains("secret"), "{path}");
    }
    // A folder named without its slash still gets a redirect, to a path
    // of this host.
    let folder = http.get(t.url("/pkg")).send().await.unwrap();
    assert_eq!(folder.status(), StatusCode::TEMPORARY_REDIRECT);
    assert_eq!(folder.headers()[header::LOCATION], "/pkg/");
    let module = http.get(t.url("/pkg/app.js")).send().await.unwrap();
    assert_eq!(module.status(), StatusCode::OK);
    t.stop().await;
}

#[tokio::test]
async fn a_web_root_that_is_not_a_folder_is_refused() {
    let root = site();
    let err = likekit_server::spawn(Config {
        web_root: Some(root.path().join("index.html")),
        ..test_config()
    })
    .await
    .unwrap_err();
    assert!(matches!(err, likekit_server::Error::Config(_)), "{err}");
    assert!(err.to_string().contains("index.html"), "{err}");
}

#[tokio::test]
async fn the_binary_serves_its_web_root() {
    let root = site();
    let log = root.path().join("server.log");
    let server = ServerProcess::start(
        &[
            "--db",
            ":memory:",
            "--web-root",
            root.path().to_str().unwrap(),
        ],
        &log,
    );
    let page = client().get(server.url("/")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.unwrap().contains("<h1>Likes</h1>"));
    let missing = client().get(server.url("/missing")).send().await.unwrap();
    expect_error(missing, StatusCode::NOT_FOUND, "not_found").await;
}

/// A symbolic link inside the web root that leads out of it (to a file,
/// to a folder, or a folder's `index.html`) is not followed: the JSON 404,
/// and nothing of what it points to. A link that stays inside is served.
#[cfg(unix)]
#[tokio::test]
async fn symlinks_out_of_the_web_root_are_not_followed() {
    let root = site();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    fs::write(outside.path().join("index.html"), "secret").unwrap();
    let link = |target: &std::path::Path, name: &str| {
        std::os::unix::fs::symlink(target, root.path().join(name)).unwrap();
    };
    link(&outside.path().join("secret.txt"), "secret.txt");
    link(outside.path(), "elsewhere");
    // A name with a `%` that is not an escape: read literally, as ServeDir
    // reads it.
    link(&outside.path().join("secret.txt"), "%zz");
    fs::create_dir(root.path().join("docs")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("index.html"),
        root.path().join("docs/index.html"),
    )
    .unwrap();
    link(&root.path().join("pkg/app.js"), "app.js");
    let t = TestServer::with(Config {
        web_root: Some(root.path().to_path_buf()),
        ..test_config()
    })
    .await;
    for path in [
        "/secret.txt",
        "/elsewhere/secret.txt",
        "/elsewhere/",
        "/docs/",
        "/docs/index.html",
        "/%73ecret.txt",
        "/%zz",
    ] {
        let r = t.http.get(t.url(path)).send().await.unwrap();
        let body = expect_error(r, StatusCode::NOT_FOUND, "not_found").await;
        assert!(!body.error.message.contains("secret"), "{path}");
    }
    let inside = t.http.get(t.url("/app.js")).send().await.unwrap();
    assert_eq!(inside.status(), StatusCode::OK);
    assert_eq!(inside.text().await.unwrap(), "export const x = 1;");
    t.stop().await;
}

/// Files carry `Last-Modified` and `ETag`, and conditional and range
/// requests are honoured; the refusals among them are JSON errors like
/// every other (`http_412`, `http_416`).
#[tokio::test]
async fn conditional_and_range_requests() {
    let root = site();
    let t = TestServer::with(Config {
        web_root: Some(root.path().to_path_buf()),
        ..test_config()
    })
    .await;
    let page = t.http.get(t.url("/index.html")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.headers().contains_key(header::LAST_MODIFIED));
    let etag = page.headers()[header::ETAG].clone();

    let same = t
        .http
        .get(t.url("/index.html"))
        .header(header::IF_NONE_MATCH, etag)
        .send()
        .await
        .unwrap();
    assert_eq!(same.status(), StatusCode::NOT_MODIFIED);
    let part = t
        .http
        .get(t.url("/index.html"))
        .header(header::RANGE, "bytes=0-4")
        .send()
        .await
        .unwrap();
    assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(part.text().await.unwrap(), "<!doc");

    let changed = t
        .http
        .get(t.url("/index.html"))
        .header(header::IF_MATCH, "\"another\"")
        .send()
        .await
        .unwrap();
    expect_error(changed, StatusCode::PRECONDITION_FAILED, "http_412").await;
    let past_the_end = t
        .http
        .get(t.url("/index.html"))
        .header(header::RANGE, "bytes=1000-2000")
        .send()
        .await
        .unwrap();
    expect_error(past_the_end, StatusCode::RANGE_NOT_SATISFIABLE, "http_416").await;
    t.stop().await;
}
