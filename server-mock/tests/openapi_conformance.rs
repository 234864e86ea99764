//! The OpenAPI document against the server it describes: real requests,
//! valid and invalid, are sent, and every status the server answers must be
//! listed for that path and method in `/openapi.json`.

#![allow(clippy::unwrap_used)]

mod common;

use common::{ADMIN_KEY, TestServer};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// One request: method, path, whether it carries the admin key, a body
/// (sent as JSON unless `raw`), a token's user, and the document's path
/// template it goes to.
struct Case {
    method: Method,
    path: &'static str,
    template: &'static str,
    admin_key: Option<&'static str>,
    token_for: Option<u64>,
    body: Option<Body>,
}

enum Body {
    Json(Value),
    /// Sent as is, with no `Content-Type`.
    Raw(&'static str),
}

fn case(method: Method, path: &'static str, template: &'static str) -> Case {
    Case {
        method,
        path,
        template,
        admin_key: None,
        token_for: None,
        body: None,
    }
}

impl Case {
    fn admin(mut self) -> Self {
        self.admin_key = Some(ADMIN_KEY);
        self
    }
    fn wrong_key(mut self) -> Self {
        self.admin_key = Some("not-the-key");
        self
    }
    fn signed_in(mut self, user: u64) -> Self {
        self.token_for = Some(user);
        self
    }
    fn json(mut self, body: Value) -> Self {
        self.body = Some(Body::Json(body));
        self
    }
    fn raw(mut self, body: &'static str) -> Self {
        self.body = Some(Body::Raw(body));
        self
    }
}

fn cases() -> Vec<Case> {
    use Method as M;
    let like = "/posts/{post_id}/like";
    let likes = "/posts/{post_id}/likes";
    vec![
        // The public routes.
        case(M::POST, "/posts/42/like", like).signed_in(7),
        case(M::POST, "/posts/42/like", like),
        case(M::POST, "/posts/0/like", like).signed_in(7),
        case(M::POST, "/posts/99/like", like).signed_in(7),
        case(M::DELETE, "/posts/42/like", like).signed_in(7),
        case(M::DELETE, "/posts/x/like", like).signed_in(7),
        case(M::GET, "/posts/42/likes", likes).signed_in(7),
        case(M::GET, "/posts/42/likes", likes),
        case(M::GET, "/posts/99/likes", likes).signed_in(7),
        case(M::GET, "/posts/-1/likes", likes).signed_in(7),
        case(M::GET, "/likes?posts=42,99", "/likes").signed_in(7),
        case(M::GET, "/likes?posts=", "/likes").signed_in(7),
        case(M::GET, "/likes", "/likes").signed_in(7),
        case(M::GET, "/likes?posts=42", "/likes"),
        case(M::GET, "/healthz", "/healthz"),
        case(M::GET, "/openapi.json", "/openapi.json"),
        case(M::GET, "/metrics", "/metrics"),
        // The admin routes: right key, wrong key, bad bodies, no
        // Content-Type.
        case(M::POST, "/admin/users", "/admin/users")
            .admin()
            .json(json!({"id": 8, "name": "Ben"})),
        case(M::POST, "/admin/users", "/admin/users")
            .admin()
            .json(json!({"id": 8, "name": " "})),
        case(M::POST, "/admin/users", "/admin/users")
            .wrong_key()
            .json(json!({"id": 8, "name": "Ben"})),
        case(M::POST, "/admin/users", "/admin/users")
            .admin()
            .raw(r#"{"id": 8, "name": "Ben"}"#),
        case(M::POST, "/admin/posts", "/admin/posts")
            .admin()
            .json(json!({"id": 43})),
        case(M::POST, "/admin/posts", "/admin/posts")
            .admin()
            .json(json!({"id": 0})),
        case(M::POST, "/admin/posts", "/admin/posts")
            .admin()
            .raw(r#"{"id": 44}"#),
        // An unknown field: the schema says additionalProperties: false.
        case(M::POST, "/admin/posts", "/admin/posts")
            .admin()
            .json(json!({"id": 45, "title": "x"})),
        case(
            M::PUT,
            "/admin/users/7/friends",
            "/admin/users/{id}/friends",
        )
        .admin()
        .json(json!({"friends": [8]})),
        case(
            M::PUT,
            "/admin/users/7/friends",
            "/admin/users/{id}/friends",
        )
        .admin()
        .json(json!({"friends": [12345]})),
        case(
            M::PUT,
            "/admin/users/7/friends",
            "/admin/users/{id}/friends",
        )
        .wrong_key()
        .json(json!({"friends": [8]})),
        case(
            M::PUT,
            "/admin/users/7/friends",
            "/admin/users/{id}/friends",
        )
        .admin()
        .raw(r#"{"friends": [8]}"#),
        case(M::POST, "/admin/tokens", "/admin/tokens")
            .admin()
            .json(json!({"user_id": 7})),
        case(M::POST, "/admin/tokens", "/admin/tokens")
            .admin()
            .json(json!({"user_id": 7, "ttl_secs": 0})),
        case(M::POST, "/admin/tokens", "/admin/tokens")
            .wrong_key()
            .json(json!({"user_id": 7})),
        case(M::POST, "/admin/tokens", "/admin/tokens")
            .admin()
            .raw(r#"{"user_id": 7}"#),
        case(M::PUT, "/admin/faults", "/admin/faults")
            .admin()
            .json(json!({"rules": []})),
        case(M::PUT, "/admin/faults", "/admin/faults")
            .admin()
            .json(json!({"rules": [{"route": "like", "probability": 2}]})),
        case(M::PUT, "/admin/faults", "/admin/faults")
            .wrong_key()
            .json(json!({"rules": []})),
        case(M::PUT, "/admin/faults", "/admin/faults")
            .admin()
            .raw(r#"{"rules": []}"#),
        case(M::GET, "/admin/faults", "/admin/faults").admin(),
        case(M::GET, "/admin/faults", "/admin/faults").wrong_key(),
        case(M::DELETE, "/admin/faults", "/admin/faults").admin(),
        case(M::GET, "/admin/requests?route=like", "/admin/requests").admin(),
        case(M::GET, "/admin/requests?route=nope", "/admin/requests").admin(),
        case(M::GET, "/admin/requests", "/admin/requests").wrong_key(),
        case(M::DELETE, "/admin/requests", "/admin/requests").admin(),
        case(M::POST, "/admin/seed", "/admin/seed")
            .admin()
            .json(json!({"users": [{"id": 9, "name": "Cleo"}]})),
        case(M::POST, "/admin/seed", "/admin/seed")
            .admin()
            .json(json!({"users": [{"id": 9, "name": "Cleo", "friends": [54321]}]})),
        case(M::POST, "/admin/seed", "/admin/seed")
            .admin()
            .raw(r#"{"users": []}"#),
        case(M::POST, "/admin/reset", "/admin/reset").admin(),
        case(M::POST, "/admin/reset", "/admin/reset").wrong_key(),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_status_the_server_answers_is_in_the_document() {
    let t = TestServer::start().await;
    t.setup(&[(7, "Ana"), (8, "Ben")], &[42]).await;
    let doc: Value = t
        .http
        .get(t.url("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();

    let mut missing = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for c in cases() {
        let mut request = t.http.request(c.method.clone(), t.url(c.path));
        if let Some(key) = c.admin_key {
            request = request.header("X-Admin-Key", key);
        }
        if let Some(user) = c.token_for {
            request = request.bearer_auth(t.token(user));
        }
        request = match c.body {
            Some(Body::Json(body)) => request.json(&body),
            Some(Body::Raw(text)) => request.body(text),
            None => request,
        };
        let status = request.send().await.unwrap().status();
        let method = c.method.as_str().to_lowercase();
        let responses = &doc["paths"][c.template][&method]["responses"];
        assert!(
            responses.is_object(),
            "{} {} is not in the document",
            c.method,
            c.template
        );
        seen.insert((c.template, method.clone(), status));
        if responses.get(status.as_str()).is_none() {
            missing.push(format!("{} {} → {status}", c.method, c.path));
        }
    }
    assert!(
        missing.is_empty(),
        "statuses the server answered that the document does not list:\n{}",
        missing.join("\n")
    );
    // The cases reach more than the happy path of each route.
    for (template, method) in [
        ("/posts/{post_id}/like", "post"),
        ("/admin/users", "post"),
        ("/admin/faults", "put"),
    ] {
        let statuses: Vec<StatusCode> = seen
            .iter()
            .filter(|(t, m, _)| *t == template && m == method)
            .map(|(_, _, s)| *s)
            .collect();
        assert!(statuses.len() >= 3, "{method} {template}: {statuses:?}");
    }
    t.stop().await;
}
