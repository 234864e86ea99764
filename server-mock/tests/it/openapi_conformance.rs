//! The OpenAPI document against the server it describes: real requests,
//! valid and invalid, are sent; every status the server answers must be
//! listed for that path and method in `/openapi.json`, and every JSON body
//! it answers must be valid against the schema listed for that status.
//! The typed admin client's operations are checked against the document
//! too.

#![allow(clippy::unwrap_used)]

use crate::common::{self, ADMIN_KEY, TestServer};
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
        case(M::GET, "/livez", "/livez"),
        case(M::GET, "/readyz", "/readyz"),
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
        case(M::POST, "/admin/faults", "/admin/faults")
            .admin()
            .json(json!({"rules": [{"route": "like", "tag": "a"}]})),
        // With the rule above, one too many.
        case(M::POST, "/admin/faults", "/admin/faults")
            .admin()
            .json(json!({"rules": vec![json!({"route": "likes"}); likekit_server::MAX_RULES]})),
        case(M::POST, "/admin/faults", "/admin/faults")
            .admin()
            .json(json!({"seed": 1, "rules": []})),
        case(M::POST, "/admin/faults", "/admin/faults")
            .admin()
            .json(json!({"rules": [{"route": "like", "tag": " "}]})),
        case(M::POST, "/admin/faults", "/admin/faults")
            .wrong_key()
            .json(json!({"rules": []})),
        case(M::POST, "/admin/faults", "/admin/faults")
            .admin()
            .raw(r#"{"rules": []}"#),
        case(M::GET, "/admin/faults", "/admin/faults").admin(),
        case(M::GET, "/admin/faults", "/admin/faults").wrong_key(),
        case(M::DELETE, "/admin/faults?tag=a", "/admin/faults").admin(),
        case(M::DELETE, "/admin/faults?tag=", "/admin/faults").admin(),
        case(M::DELETE, "/admin/faults?user=7", "/admin/faults").admin(),
        case(M::DELETE, "/admin/faults?tag=a", "/admin/faults").wrong_key(),
        case(M::DELETE, "/admin/faults", "/admin/faults").admin(),
        case(M::GET, "/admin/requests?route=like", "/admin/requests").admin(),
        case(M::GET, "/admin/requests?route=nope", "/admin/requests").admin(),
        case(M::GET, "/admin/requests?fault_tag=a", "/admin/requests").admin(),
        case(
            M::GET,
            "/admin/requests?fault_tag=two%20words",
            "/admin/requests",
        )
        .admin(),
        case(M::GET, "/admin/requests", "/admin/requests").wrong_key(),
        case(M::DELETE, "/admin/requests?user=7", "/admin/requests").admin(),
        case(M::DELETE, "/admin/requests?fault_tag=a", "/admin/requests").admin(),
        case(M::DELETE, "/admin/requests?fault_tag=", "/admin/requests").admin(),
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
        case(M::POST, "/admin/reset?post=42", "/admin/reset").admin(),
        case(M::POST, "/admin/reset", "/admin/reset").wrong_key(),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_status_the_server_answers_is_in_the_document() {
    let t = TestServer::start().await;
    t.setup(&[(7, "Ana"), (8, "Ben")], &[42]).await;
    let doc = served_document(&t).await;

    let (mut missing, mut invalid, mut validated) = (Vec::new(), Vec::new(), 0);
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
        let response = request.send().await.unwrap();
        let status = response.status();
        let json = response
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
        let text = response.text().await.unwrap();
        let method = c.method.as_str().to_lowercase();
        let responses = &doc["paths"][c.template][&method]["responses"];
        assert!(
            responses.is_object(),
            "{} {} is not in the document",
            c.method,
            c.template
        );
        seen.insert((c.template, method.clone(), status));
        let Some(listed) = responses.get(status.as_str()) else {
            missing.push(format!("{} {} → {status}", c.method, c.path));
            continue;
        };
        let schema = &listed["content"]["application/json"]["schema"];
        if schema.is_object() {
            assert!(json, "{} {} → {status}: not JSON: {text}", c.method, c.path);
            let body: Value = serde_json::from_str(&text).unwrap();
            if let Err(why) = against(&doc, schema).validate(&body) {
                invalid.push(format!(
                    "{} {} → {status}: {why}\n  {text}",
                    c.method, c.path
                ));
            }
            validated += 1;
        }
    }
    assert!(
        missing.is_empty(),
        "statuses the server answered that the document does not list:\n{}",
        missing.join("\n")
    );
    assert!(
        invalid.is_empty(),
        "answers that do not match the document's schema:\n{}",
        invalid.join("\n")
    );
    assert!(validated >= 40, "only {validated} answers had a schema");
    // The cases reach more than the happy path of each route.
    for (template, method) in [
        ("/posts/{post_id}/like", "post"),
        ("/admin/users", "post"),
        ("/admin/faults", "put"),
        ("/admin/faults", "post"),
        ("/admin/faults", "delete"),
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

/// A validator for `schema`, a schema of the document `doc` (its
/// `#/components/…` references resolve within it).
fn against(doc: &Value, schema: &Value) -> jsonschema::Validator {
    let mut root = schema.clone();
    root["components"] = doc["components"].clone();
    jsonschema::draft202012::new(&root)
        .unwrap_or_else(|e| panic!("the document's schema {schema} does not compile: {e}"))
}

/// The document as the server serves it.
async fn served_document(t: &TestServer) -> Value {
    t.http
        .get(t.url("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// The schema check above can fail: a wrong answer is caught.
#[tokio::test]
async fn the_schema_check_catches_a_wrong_answer() {
    let t = TestServer::start().await;
    let doc = served_document(&t).await;
    t.stop().await;
    let validator = against(&doc, &json!({"$ref": "#/components/schemas/PostLikes"}));
    let good = json!({"count": 3, "liked_by_me": true, "friends": ["Ana"], "version": 9});
    let checked = validator.validate(&good);
    assert!(checked.is_ok(), "{checked:?}");
    for wrong in [
        json!({"count": -1, "liked_by_me": true, "friends": [], "version": 9}),
        json!({"count": 3, "liked_by_me": "yes", "friends": [], "version": 9}),
        json!({"count": 3, "liked_by_me": true, "friends": [7], "version": 9}),
        json!({"liked_by_me": true, "friends": [], "version": 9}),
    ] {
        assert!(validator.validate(&wrong).is_err(), "accepted {wrong}");
    }
}

/// The typed admin client (`likekit_testing::admin`) sends exactly the
/// admin operations the document lists, by the same ids, methods and
/// paths.
#[tokio::test]
async fn the_admin_client_sends_every_admin_operation_of_the_document() {
    use std::collections::BTreeSet;

    let t = TestServer::start().await;
    let doc = served_document(&t).await;
    t.stop().await;
    let mut listed = BTreeSet::new();
    for (path, operations) in doc["paths"].as_object().unwrap() {
        if !path.starts_with("/admin/") {
            continue;
        }
        for (method, operation) in operations.as_object().unwrap() {
            let id = operation["operationId"].as_str().unwrap().to_owned();
            listed.insert((id, method.to_uppercase(), path.clone()));
        }
    }
    let client: BTreeSet<_> = likekit_testing::admin::OPERATIONS
        .iter()
        .map(|o| (o.id.to_owned(), o.method.to_owned(), o.path.to_owned()))
        .collect();
    assert_eq!(client, listed);
}

/// The admin client's errors carry the server's status and code, and a call
/// without an answer is `no_answer`, as in every language's client.
#[tokio::test]
async fn the_admin_client_reports_status_and_code() {
    use likekit_proto::UserId;
    use likekit_testing::admin::{AdminClient, AdminError};

    let t = TestServer::start().await;
    let admin = AdminClient::new(t.url(""), ADMIN_KEY).unwrap();
    let err = admin
        .create_user(UserId::new(7).unwrap(), "   ")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, AdminError::Api { status, .. } if *status == StatusCode::BAD_REQUEST),
        "{err:?}"
    );
    assert_eq!(err.code(), "bad_name");
    let wrong_key = AdminClient::new(t.url(""), "not-the-key").unwrap();
    let err = wrong_key.get_faults().await.unwrap_err();
    assert_eq!(err.code(), "bad_admin_key");
    let base_url = t.url("");
    t.stop().await;
    let gone = AdminClient::new(base_url, ADMIN_KEY).unwrap();
    let err = gone.reset().await.unwrap_err();
    assert!(matches!(err, AdminError::Http(_)), "{err:?}");
    // No answer: no status, as in every language's client.
    assert_eq!((err.status(), err.code()), (None, "no_answer"), "{err}");
}

/// `clear_faults` answers with the rules left in force (none), as every
/// language's admin client does.
#[tokio::test]
async fn the_admin_client_clears_faults_and_returns_what_is_left() {
    use likekit_proto::admin::{FaultRoute, FaultRule, FaultRules};
    use likekit_testing::admin::AdminClient;

    let t = TestServer::start().await;
    let admin = AdminClient::new(t.url(""), ADMIN_KEY).unwrap();
    let rule = FaultRule::new(FaultRoute::Likes);
    let set = admin
        .set_faults(&FaultRules::new(vec![rule]))
        .await
        .unwrap();
    assert_eq!(set.rules.len(), 1, "{set:?}");
    let left = admin.clear_faults().await.unwrap();
    assert!(left.rules.is_empty(), "{left:?}");
    assert!(admin.get_faults().await.unwrap().rules.is_empty());
    t.stop().await;
}

/// `add_faults` adds after the rules in force, keeping their counters
/// and the seed; `get_faults_tagged` reads one tag's rules;
/// `clear_faults_tagged` removes them and answers the rules left, as every
/// language's admin client does.
#[tokio::test]
async fn the_admin_client_adds_faults_and_clears_them_by_tag() {
    use likekit_proto::{
        UserId,
        admin::{FaultRoute, FaultRule, FaultRules, MAX_RULES},
    };
    use likekit_testing::admin::AdminClient;

    let t = TestServer::start().await;
    let admin = AdminClient::new(t.url(""), ADMIN_KEY).unwrap();
    let once_for = |user: u64, tag: &str| FaultRule {
        user: Some(UserId::new(user).unwrap()),
        fail_next: 1,
        tag: Some(tag.into()),
        ..FaultRule::new(FaultRoute::Likes)
    };
    let set = admin
        .set_faults(&FaultRules {
            seed: Some(4),
            ..FaultRules::new(vec![once_for(2, "b")])
        })
        .await
        .unwrap();
    assert_eq!(t.view(2, 1).await.status(), StatusCode::SERVICE_UNAVAILABLE);
    let added = admin
        .add_faults(&[once_for(1, "a"), once_for(3, "a")])
        .await
        .unwrap();
    assert_eq!(added.seed, set.seed);
    assert_eq!(
        added.rules,
        [once_for(2, "b"), once_for(1, "a"), once_for(3, "a")]
    );
    let used: Vec<_> = added.state.iter().map(|s| s.fail_next_left).collect();
    assert_eq!(used, [Some(0), Some(1), Some(1)], "b's rule stays used up");
    // One test reads its own rules, with what they have used up.
    let mine = admin.get_faults_tagged("b").await.unwrap();
    assert_eq!(mine.rules, [once_for(2, "b")]);
    assert_eq!((mine.seed, mine.state.len()), (set.seed, 1));
    assert_eq!(mine.state[0].fail_next_left, Some(0));
    assert!(admin.get_faults_tagged("c").await.unwrap().rules.is_empty());
    let err = admin.get_faults_tagged("").await.unwrap_err();
    assert_eq!(err.code(), "bad_query");
    let left = admin.clear_faults_tagged("a").await.unwrap();
    assert_eq!(left.rules, [once_for(2, "b")]);
    assert_eq!((left.seed, left.state[0].matched), (set.seed, 1));
    assert_eq!(admin.get_faults().await.unwrap(), left);
    // Refusals carry the server's codes; nothing changes.
    let err = admin.clear_faults_tagged("two words").await.unwrap_err();
    assert_eq!(err.code(), "bad_query");
    let err = admin
        .add_faults(&vec![once_for(1, "a"); MAX_RULES])
        .await
        .unwrap_err();
    assert_eq!(err.code(), "too_many_rules");
    assert!(
        matches!(&err, likekit_testing::admin::AdminError::Api { status, .. } if *status == StatusCode::CONFLICT),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains(&format!("1 are, and {MAX_RULES} more")),
        "{err}"
    );
    assert_eq!(admin.get_faults().await.unwrap(), left);
    t.stop().await;
}

/// The admin client removes one test's journal entries by filter; the
/// other test's stay, and a filter the server does not take is refused.
#[tokio::test]
async fn the_admin_client_clears_the_requests_a_filter_matches() {
    use likekit_proto::{
        UserId,
        admin::{FaultRoute, RequestFilter},
    };
    use likekit_testing::admin::AdminClient;

    let t = TestServer::start().await;
    let admin = AdminClient::new(t.url(""), ADMIN_KEY).unwrap();
    t.setup(&[], &[1]).await;
    assert_eq!(t.view(1, 1).await.status(), StatusCode::OK);
    assert_eq!(t.view(2, 1).await.status(), StatusCode::OK);
    assert_eq!(t.view(2, 1).await.status(), StatusCode::OK);
    let of = |user: u64| RequestFilter {
        user: Some(UserId::new(user).unwrap()),
        ..RequestFilter::default()
    };
    admin.clear_requests_matching(&of(2)).await.unwrap();
    let left = admin.requests(&RequestFilter::default()).await.unwrap();
    let users: Vec<_> = left.entries.iter().map(|e| e.user).collect();
    assert_eq!(users, [UserId::new(1).ok()], "{left:?}");
    admin
        .clear_requests_matching(&RequestFilter::route(FaultRoute::Likes))
        .await
        .unwrap();
    assert!(
        admin
            .requests(&RequestFilter::default())
            .await
            .unwrap()
            .entries
            .is_empty()
    );
    t.stop().await;
}

/// `wait_for_requests` holds its answer until the requests it waits for
/// are there and answered (`met: Some(true)`), or until its timeout
/// (`Some(false)`); either wait outlasts the client's own call timeout
/// (half a second here), and its parameters are the server's to refuse.
#[tokio::test]
async fn the_admin_client_waits_for_requests_on_the_server() {
    use std::time::{Duration, Instant};

    use likekit_proto::{
        UserId,
        admin::{FaultRoute, FaultRule, FaultRules, RequestFilter},
    };
    use likekit_testing::admin::AdminClient;

    let t = TestServer::start().await;
    t.setup(&[(7, "Ana")], &[42]).await;
    let held = FaultRule {
        latency_ms: 600,
        ..FaultRule::new(FaultRoute::Like)
    };
    t.admin_client
        .set_faults(&FaultRules::new(vec![held]))
        .await
        .unwrap();
    let quick = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let admin = AdminClient::with_client(quick, t.url(""), ADMIN_KEY);
    let likes = RequestFilter {
        user: Some(UserId::new(7).unwrap()),
        ..RequestFilter::route(FaultRoute::Like)
    };

    let mut wait = Box::pin(admin.wait_for_requests(&likes, 1, Duration::from_secs(10)));
    tokio::select! {
        page = &mut wait => panic!("answered before any like: {page:?}"),
        () = tokio::time::sleep(Duration::from_millis(200)) => {}
    }
    let sent = Instant::now();
    let like = tokio::spawn(t.as_user(7, Method::POST, "/posts/42/like").send());
    tokio::select! {
        page = &mut wait => panic!("answered while the like was in flight: {page:?}"),
        () = tokio::time::sleep(Duration::from_millis(300)) => {}
    }
    let page = wait.await.unwrap();
    assert!(sent.elapsed() >= Duration::from_millis(600), "{page:?}");
    assert_eq!(like.await.unwrap().unwrap().status(), StatusCode::OK);
    assert_eq!(page.met, Some(true));
    let answered: Vec<_> = page
        .entries
        .iter()
        .map(|e| (e.status, e.in_flight))
        .collect();
    assert_eq!(answered, [(Some(200), false)], "{page:?}");

    // Two likes asked for, one there: the wait runs out, past the client's
    // own 0.5 s.
    let started = Instant::now();
    let page = admin
        .wait_for_requests(&likes, 2, Duration::from_millis(800))
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(800));
    assert_eq!((page.met, page.entries.len()), (Some(false), 1));
    // A read that does not wait says nothing of `met`.
    assert_eq!(admin.requests(&likes).await.unwrap().met, None);

    for (count, timeout) in [(0, Duration::from_secs(1)), (1, Duration::from_secs(61))] {
        let err = admin
            .wait_for_requests(&likes, count, timeout)
            .await
            .unwrap_err();
        assert_eq!(
            (err.status(), err.code()),
            (Some(StatusCode::BAD_REQUEST), "bad_query"),
            "{err}"
        );
    }
    t.stop().await;
}

/// Every call checks its 2xx answer: a server that is not the mock (a
/// web page answering 200 to any path, say) makes each operation fail as
/// `unreadable` with the answer's status, never pass silently; and
/// `status()` and `message()` say what every language's client says.
#[tokio::test]
async fn the_admin_client_refuses_a_2xx_answer_that_is_not_the_operations() {
    use likekit_proto::{
        PostId, UserId,
        admin::{RequestFilter, Seed},
    };
    use likekit_testing::admin::AdminClient;

    for (page, what) in [
        ("<html>not the mock</html>", "a web page"),
        ("{}", "an empty object"),
        (r#"{"ok": false}"#, "a refusal as a 200"),
    ] {
        let stub = axum::Router::new().fallback(move || async move { page });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let served = tokio::spawn(async move { axum::serve(listener, stub).await });
        let admin = AdminClient::new(format!("http://{addr}"), ADMIN_KEY).unwrap();
        let (user, post) = (UserId::new(7).unwrap(), PostId::new(42).unwrap());
        let results = [
            (
                "create_user",
                admin.create_user(user, "Ana").await.map(drop),
            ),
            ("create_post", admin.create_post(post).await.map(drop)),
            ("set_friends", admin.set_friends(user, &[]).await),
            ("reset", admin.reset().await),
            ("clear_requests", admin.clear_requests().await),
            (
                "clear_requests",
                admin
                    .clear_requests_matching(&RequestFilter::default())
                    .await,
            ),
            ("seed", admin.seed(&Seed::default()).await),
        ];
        for (operation, result) in results {
            let err = result.expect_err(&format!("{operation} took {what}"));
            assert_eq!(
                (err.status(), err.code()),
                (Some(StatusCode::OK), "unreadable"),
                "{operation} given {what}: {err}"
            );
            assert!(!err.message().is_empty(), "{operation}: {err}");
        }
        served.abort();
    }
}

/// Any operation answers 413 to a body over `--max-body-bytes`, before its
/// handler (and, on admin routes, before the key is checked): each one
/// the document lists is sent such a body, and must list the 413.
#[tokio::test]
async fn every_operation_lists_the_413_it_answers_to_a_body_over_the_limit() {
    let t = TestServer::with(likekit_server::Config {
        max_body_bytes: 64,
        ..common::test_config()
    })
    .await;
    let doc = served_document(&t).await;
    let mut missing = Vec::new();
    let mut sent = 0;
    for (template, operations) in doc["paths"].as_object().unwrap() {
        let path = template.replace("{post_id}", "42").replace("{id}", "7");
        for (method, operation) in operations.as_object().unwrap() {
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let response = t
                .http
                .request(method.clone(), t.url(&path))
                .header("X-Admin-Key", ADMIN_KEY)
                .header("Content-Type", "application/json")
                .body(format!("{{\"padding\": \"{}\"}}", "x".repeat(100)))
                .send()
                .await
                .unwrap();
            assert_eq!(
                response.status(),
                StatusCode::PAYLOAD_TOO_LARGE,
                "{method} {path}"
            );
            if operation["responses"]["413"].is_null() {
                missing.push(format!("{method} {template}"));
            }
            sent += 1;
        }
    }
    assert!(sent >= 20, "{sent}");
    assert!(missing.is_empty(), "no 413 listed for: {missing:?}");
    t.stop().await;
}
