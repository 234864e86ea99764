//! The admin API: off without a key, 401 with a wrong one, and each route.

#![allow(clippy::unwrap_used)]

use crate::common::{self, ADMIN_KEY, TestServer, expect_error, ok_json, test_config};
use likekit_server::{
    Config,
    wire::{
        LikeState, PostLikes,
        admin::{MAX_FRIENDS, TokenResponse},
    },
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[tokio::test]
async fn admin_is_off_without_a_key() {
    let t = TestServer::with(Config {
        admin_key: None,
        ..test_config()
    })
    .await;
    for (method, path) in [
        (Method::POST, "/admin/users"),
        (Method::POST, "/admin/posts"),
        (Method::GET, "/admin/posts/1"),
        (Method::GET, "/admin/users/1"),
        (Method::PUT, "/admin/users/1/friends"),
        (Method::POST, "/admin/tokens"),
        (Method::PUT, "/admin/faults"),
        (Method::DELETE, "/admin/faults"),
        (Method::POST, "/admin/reset"),
    ] {
        let r = t
            .admin(method.clone(), path, Some(json!({"id": 1, "name": "A"})))
            .await;
        expect_error(r, StatusCode::NOT_FOUND, "not_found").await;
    }
    // An empty key does not turn it on either.
    let t2 = TestServer::with(Config {
        admin_key: Some(String::new()),
        ..test_config()
    })
    .await;
    let r = t2.http.post(t2.url("/admin/reset")).send().await.unwrap();
    expect_error(r, StatusCode::NOT_FOUND, "not_found").await;

    // The OpenAPI document describes the server as it is: without a key,
    // no admin path, tag or security scheme; with one, all of them.
    let with_key = TestServer::start().await;
    let admin_parts = |doc: &Value| {
        let paths = doc["paths"].as_object().unwrap();
        let tags = doc["tags"].as_array().unwrap();
        (
            paths.keys().filter(|p| p.starts_with("/admin/")).count(),
            tags.iter().any(|tag| tag["name"] == "admin"),
            doc["components"]["securitySchemes"]
                .get("admin_key")
                .is_some(),
            paths.contains_key("/posts/{post_id}/like"),
        )
    };
    for (server, admin) in [(&t, false), (&t2, false), (&with_key, true)] {
        let r = server.http.get(server.url("/openapi.json")).send().await;
        let doc: Value = ok_json(r.unwrap()).await;
        let (paths, tag, scheme, public) = admin_parts(&doc);
        assert_eq!(
            (paths > 0, tag, scheme, public),
            (admin, admin, admin, true)
        );
    }
    t.stop().await;
    t2.stop().await;
    with_key.stop().await;
}

#[tokio::test]
async fn wrong_or_missing_key_is_401() {
    let t = TestServer::start().await;
    for key in [
        None,
        Some(""),
        Some("wrong"),
        Some("test-admin-ke"),
        Some("test-admin-keyy"),
        Some("TEST-ADMIN-KEY"),
    ] {
        let mut request = t.http.post(t.url("/admin/reset"));
        if let Some(key) = key {
            request = request.header("X-Admin-Key", key);
        }
        let r = request.send().await.unwrap();
        assert_admin_challenge(&r);
        expect_error(r, StatusCode::UNAUTHORIZED, "bad_admin_key").await;
    }
    // A user's token is not an admin key.
    let r = t
        .as_user(1, Method::POST, "/admin/reset")
        .send()
        .await
        .unwrap();
    assert_admin_challenge(&r);
    expect_error(r, StatusCode::UNAUTHORIZED, "bad_admin_key").await;
    // The right key sent twice, or beside a wrong one in either order, is
    // refused: no copy is picked over the other.
    for keys in [
        [ADMIN_KEY, ADMIN_KEY],
        [ADMIN_KEY, "wrong"],
        ["wrong", ADMIN_KEY],
    ] {
        let r = t
            .http
            .post(t.url("/admin/reset"))
            .header("X-Admin-Key", keys[0])
            .header("X-Admin-Key", keys[1])
            .send()
            .await
            .unwrap();
        assert_admin_challenge(&r);
        expect_error(r, StatusCode::UNAUTHORIZED, "bad_admin_key").await;
    }
    let r = t
        .http
        .post(t.url("/admin/reset"))
        .header("X-Admin-Key", ADMIN_KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    t.stop().await;
}

/// Without the key, a wrong method on an admin route, or a path under
/// `/admin` that is no route, is the key's 401, not a 405 whose `Allow`
/// lists what the admin API takes, or a 404 telling routes from others;
/// with it, the 405 or the 404.
#[tokio::test]
async fn a_wrong_method_or_path_under_admin_needs_the_key_first() {
    let t = TestServer::start().await;
    let r = t.http.get(t.url("/admin/nope")).send().await.unwrap();
    expect_error(r, StatusCode::UNAUTHORIZED, "bad_admin_key").await;
    let r = t.admin(Method::GET, "/admin/nope", None).await;
    expect_error(r, StatusCode::NOT_FOUND, "not_found").await;
    for (method, path) in [
        (Method::DELETE, "/admin/users/7"),
        (Method::PATCH, "/admin/faults"),
        (Method::GET, "/admin/reset"),
    ] {
        let r = t
            .http
            .request(method.clone(), t.url(path))
            .send()
            .await
            .unwrap();
        assert!(r.headers().get(reqwest::header::ALLOW).is_none(), "{path}");
        assert_admin_challenge(&r);
        expect_error(r, StatusCode::UNAUTHORIZED, "bad_admin_key").await;
        let r = t.admin(method, path, None).await;
        expect_error(r, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed").await;
    }
    t.stop().await;
}

/// An admin route that takes no query refuses one (400 `bad_query`) and
/// does nothing, rather than ignoring it: `PUT /admin/faults?tag=mine`
/// replaced every test's rules, and `POST /admin/tokens?ttl_secs=5` made
/// an hour's token.
#[tokio::test]
async fn admin_routes_that_take_no_query_refuse_one() {
    let t = TestServer::start().await;
    t.setup(&[(7, "Ana")], &[42]).await;
    let theirs = json!({"rules": [{"route": "like", "user": 8, "tag": "theirs",
        "action": {"kind": "status", "status": 503}}]});
    let r = t.admin(Method::POST, "/admin/faults", Some(theirs)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mine = json!({"rules": [{"route": "like", "user": 7, "tag": "mine",
        "action": {"kind": "status", "status": 503}}]});
    for (method, path, body) in [
        (Method::PUT, "/admin/faults?tag=mine", Some(mine.clone())),
        (Method::POST, "/admin/faults?tag=mine", Some(mine)),
        (
            Method::POST,
            "/admin/tokens?ttl_secs=5",
            Some(json!({"user_id": 7})),
        ),
        (
            Method::POST,
            "/admin/users?x=1",
            Some(json!({"id": 9, "name": "Cy"})),
        ),
        (Method::POST, "/admin/posts?x=1", Some(json!({"id": 43}))),
        (Method::GET, "/admin/users/7?x", None),
        (Method::GET, "/admin/posts/42?x", None),
        (
            Method::PUT,
            "/admin/users/7/friends?x=1",
            Some(json!({"friends": []})),
        ),
        (
            Method::POST,
            "/admin/seed?post=42",
            Some(json!({"posts": [{"id": 44}]})),
        ),
    ] {
        let r = t.admin(method.clone(), path, body).await;
        let body = expect_error(r, StatusCode::BAD_REQUEST, "bad_query").await;
        // The message names the route as sent, its `/admin` included.
        let (route, query) = path.split_once('?').unwrap();
        assert!(
            body.error
                .message
                .starts_with(&format!("{method} {route} takes no query; got \"{query}\"")),
            "{method} {path}: {}",
            body.error.message
        );
    }
    // Nothing was done: the other test's rule alone is in force, and no
    // user 9 or post 43 or 44 was made.
    let rules: Value = ok_json(t.admin(Method::GET, "/admin/faults", None).await).await;
    let tags: Vec<&str> = rules["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rule| rule["tag"].as_str().unwrap())
        .collect();
    assert_eq!(tags, ["theirs"]);
    for path in ["/admin/users/9", "/admin/posts/43", "/admin/posts/44"] {
        let r = t.admin(Method::GET, path, None).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{path}");
    }
    // An empty query is no query.
    let r = t.admin(Method::GET, "/admin/users/7?", None).await;
    assert_eq!(r.status(), StatusCode::OK);
    t.stop().await;
}

/// A 401 `bad_admin_key` carries a challenge (RFC 9110 asks one of every
/// 401) naming the header the key goes in.
fn assert_admin_challenge(response: &reqwest::Response) {
    let challenge = response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .map(|value| value.to_str().unwrap());
    assert_eq!(challenge, Some(r#"X-Admin-Key realm="likekit-admin""#));
}

/// `PUT /admin/users/{id}/friends` answers the list as stored, as `GET
/// /admin/users/{id}` reads it back: each id once, in ascending order.
#[tokio::test]
async fn friends_are_answered_as_stored() {
    let t = TestServer::start().await;
    common::http_friends_answered_as_stored(&t).await;
    t.stop().await;
}

#[tokio::test]
async fn users_posts_friends_and_tokens() {
    let t = TestServer::start().await;
    let post_json = |path: &'static str, body: Value| {
        let t = &t;
        async move { t.admin(Method::POST, path, Some(body)).await }
    };

    let r = post_json("/admin/users", json!({"id": 7, "name": "Ana"})).await;
    assert_eq!(r.status(), StatusCode::CREATED);
    assert_eq!(
        r.json::<Value>().await.unwrap(),
        json!({"id": 7, "name": "Ana"})
    );
    let r = post_json("/admin/users", json!({"id": 7, "name": "Ana B"})).await;
    assert_eq!(r.status(), StatusCode::OK, "existing user: renamed");
    let r = post_json("/admin/users", json!({"id": 8, "name": "Ben"})).await;
    assert_eq!(r.status(), StatusCode::CREATED);

    let r = post_json("/admin/posts", json!({"id": 42})).await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let r = post_json("/admin/posts", json!({"id": 42})).await;
    assert_eq!(r.status(), StatusCode::OK, "existing post: untouched");
    expect_error(
        post_json("/admin/posts", json!({"id": 0})).await,
        StatusCode::BAD_REQUEST,
        "bad_post_id",
    )
    .await;

    let put_friends = |user: &'static str, body: Value| {
        let t = &t;
        async move {
            t.admin(
                Method::PUT,
                &format!("/admin/users/{user}/friends"),
                Some(body),
            )
            .await
        }
    };
    let r = put_friends("8", json!({"friends": [7]})).await;
    assert_eq!(ok_json::<Value>(r).await, json!({"friends": [7]}));
    expect_error(
        put_friends("8", json!({"friends": [99]})).await,
        StatusCode::NOT_FOUND,
        "user_not_found",
    )
    .await;
    expect_error(
        put_friends("99", json!({"friends": [7]})).await,
        StatusCode::NOT_FOUND,
        "user_not_found",
    )
    .await;
    expect_error(
        put_friends("abc", json!({"friends": [7]})).await,
        StatusCode::BAD_REQUEST,
        "bad_user_id",
    )
    .await;
    expect_error(
        put_friends("8", json!({"friends": [0]})).await,
        StatusCode::BAD_REQUEST,
        "bad_user_id",
    )
    .await;
    expect_error(
        put_friends("8", json!({"friends": "7"})).await,
        StatusCode::BAD_REQUEST,
        "bad_json",
    )
    .await;

    // A minted token works on the public API.
    let r = post_json("/admin/tokens", json!({"user_id": 7, "ttl_secs": 60})).await;
    let token = ok_json::<TokenResponse>(r).await.token;
    let r = t
        .http
        .post(t.url("/posts/42/like"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(ok_json::<LikeState>(r).await.count, 1);
    // ttl_secs defaults to an hour.
    let r = post_json("/admin/tokens", json!({"user_id": 8})).await;
    assert!(!ok_json::<TokenResponse>(r).await.token.is_empty());
    for (body, code) in [
        (json!({"user_id": 0}), "bad_user_id"),
        (json!({"user_id": 7, "ttl_secs": 0}), "bad_ttl"),
        (
            json!({"user_id": 7, "ttl_secs": 999_999_999_999u64}),
            "bad_ttl",
        ),
        (json!({"ttl_secs": 60}), "bad_json"),
    ] {
        expect_error(
            post_json("/admin/tokens", body).await,
            StatusCode::BAD_REQUEST,
            code,
        )
        .await;
    }

    // Ben's friends line shows the renamed Ana.
    let view: PostLikes = ok_json(t.view(8, 42).await).await;
    assert_eq!(view.friends, ["Ana B"]);
    t.stop().await;
}

/// `valid_from_secs` mints the tokens a client's renewal is tested with,
/// with no wait: one already expired (401 `token_expired`, the code a
/// client renews on) and one not valid yet (401 `invalid_token`).
#[tokio::test]
async fn minted_tokens_may_start_in_the_past_or_the_future() {
    let t = TestServer::start().await;
    t.setup(&[(7, "Ana")], &[42]).await;
    let mint = |body: Value| {
        let t = &t;
        async move { t.admin(Method::POST, "/admin/tokens", Some(body)).await }
    };
    let like_with = |token: String| {
        let t = &t;
        async move {
            t.http
                .post(t.url("/posts/42/like"))
                .bearer_auth(token)
                .send()
                .await
                .unwrap()
        }
    };

    // Two hours back, an hour's lifetime: expired an hour ago.
    let expired = mint(json!({"user_id": 7, "valid_from_secs": -7200})).await;
    let expired = ok_json::<TokenResponse>(expired).await.token;
    let r = like_with(expired).await;
    assert!(r.headers().contains_key("www-authenticate"), "{r:?}");
    expect_error(r, StatusCode::UNAUTHORIZED, "token_expired").await;
    // A minute ahead: refused until then.
    let early = mint(json!({"user_id": 7, "valid_from_secs": 60})).await;
    let early = ok_json::<TokenResponse>(early).await.token;
    let e = expect_error(
        like_with(early).await,
        StatusCode::UNAUTHORIZED,
        "invalid_token",
    )
    .await;
    assert!(e.error.message.contains("nbf"), "{e:?}");
    // Ten minutes back (and a fraction-free float): valid for fifty more.
    let r = mint(json!({"user_id": 7, "valid_from_secs": -600.0, "ttl_secs": 3600})).await;
    let token = ok_json::<TokenResponse>(r).await.token;
    assert_eq!(ok_json::<LikeState>(like_with(token).await).await.count, 1);

    for (body, code) in [
        (
            json!({"user_id": 7, "valid_from_secs": -31_536_001}),
            "bad_valid_from",
        ),
        (
            json!({"user_id": 7, "valid_from_secs": 31_536_001}),
            "bad_valid_from",
        ),
        (
            json!({"user_id": 7, "valid_from_secs": i64::MIN}),
            "bad_valid_from",
        ),
        (json!({"user_id": 7, "valid_from_secs": -1.5}), "bad_json"),
        (json!({"user_id": 7, "valid_from_secs": "-60"}), "bad_json"),
        (
            json!({"user_id": 7, "valid_from_secs": 9_223_372_036_854_775_808u64}),
            "bad_json",
        ),
    ] {
        let e = expect_error(mint(body.clone()).await, StatusCode::BAD_REQUEST, code).await;
        assert!(e.error.message.contains("valid_from_secs"), "{body}: {e:?}");
    }
    // The range's ends are taken.
    for valid_from in [-31_536_000, 31_536_000] {
        let r = mint(json!({"user_id": 7, "valid_from_secs": valid_from})).await;
        assert_eq!(r.status(), StatusCode::OK, "{valid_from}");
    }
    t.stop().await;
}

/// The default body limit holds the longest friend list the schema allows
/// (5,000 ids of 19 digits, with `", "` between them): it is read and
/// checked (404: those users do not exist), not refused as too large; one
/// id more is `too_many_friends`, still not 413.
#[tokio::test]
async fn the_default_body_limit_holds_the_longest_friend_list() {
    let t = TestServer::start().await;
    t.setup(&[(1, "Ana")], &[]).await;
    for (n, code, status) in [
        (MAX_FRIENDS, "user_not_found", StatusCode::NOT_FOUND),
        (MAX_FRIENDS + 1, "too_many_friends", StatusCode::BAD_REQUEST),
    ] {
        let ids = vec!["9223372036854775807"; n].join(", ");
        let body = format!("{{\"friends\": [{ids}]}}");
        assert!(body.len() > 100_000, "{}", body.len());
        let r = t
            .http
            .put(t.url("/admin/users/1/friends"))
            .header("X-Admin-Key", ADMIN_KEY)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        expect_error(r, status, code).await;
    }
    t.stop().await;
}

/// `GET /admin/users/{id}` and `GET /admin/posts/{id}` read back what the
/// store holds: names, friend lists in ascending order, counts, versions
/// and the most recent likers, newest first.
#[tokio::test]
async fn users_and_posts_read_back_as_stored() {
    let t = TestServer::start().await;
    t.setup(&[(1, "Ana"), (2, "Ben"), (3, "Cy")], &[42]).await;
    let r = t
        .admin(
            Method::PUT,
            "/admin/users/2/friends",
            Some(json!({"friends": [3, 1]})),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let r = t.admin(Method::GET, "/admin/users/2", None).await;
    assert_eq!(
        ok_json::<Value>(r).await,
        json!({"id": 2, "name": "Ben", "friends": [1, 3]})
    );
    let r = t.admin(Method::GET, "/admin/users/3", None).await;
    assert_eq!(
        ok_json::<Value>(r).await,
        json!({"id": 3, "name": "Cy", "friends": []})
    );

    let r = t.admin(Method::GET, "/admin/posts/42", None).await;
    assert_eq!(
        ok_json::<Value>(r).await,
        json!({"id": 42, "count": 0, "version": 0, "recent_likers": []})
    );
    for user in [1, 3, 2] {
        ok_json::<LikeState>(t.like(user, 42).await).await;
    }
    // A like that changes nothing moves nothing.
    ok_json::<LikeState>(t.like(3, 42).await).await;
    ok_json::<LikeState>(t.unlike(3, 42).await).await;
    let r = t.admin(Method::GET, "/admin/posts/42", None).await;
    assert_eq!(
        ok_json::<Value>(r).await,
        json!({"id": 42, "count": 2, "version": 4, "recent_likers": [2, 1]})
    );

    // The typed client reads the same.
    let admin = &t.admin_client;
    let post = admin
        .get_post(likekit_server::wire::PostId::new(42).unwrap())
        .await
        .unwrap();
    assert_eq!((post.count, post.version), (2, 4));
    let ben = admin
        .get_user(likekit_server::wire::UserId::new(2).unwrap())
        .await
        .unwrap();
    assert_eq!((ben.name.as_str(), ben.friends.len()), ("Ben", 2));

    for (path, status, code) in [
        ("/admin/users/99", StatusCode::NOT_FOUND, "user_not_found"),
        ("/admin/users/0", StatusCode::BAD_REQUEST, "bad_user_id"),
        ("/admin/users/ana", StatusCode::BAD_REQUEST, "bad_user_id"),
        ("/admin/posts/99", StatusCode::NOT_FOUND, "post_not_found"),
        ("/admin/posts/0", StatusCode::BAD_REQUEST, "bad_post_id"),
        (
            "/admin/posts/9223372036854775808",
            StatusCode::BAD_REQUEST,
            "bad_post_id",
        ),
    ] {
        expect_error(t.admin(Method::GET, path, None).await, status, code).await;
    }
    let err = admin
        .get_post(likekit_server::wire::PostId::new(99).unwrap())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "post_not_found");
    // Without the key, nothing is read.
    let r = t.http.get(t.url("/admin/posts/42")).send().await.unwrap();
    expect_error(r, StatusCode::UNAUTHORIZED, "bad_admin_key").await;
    t.stop().await;
}

#[tokio::test]
async fn reset_drops_likes_but_keeps_users_posts_and_friends() {
    let t = TestServer::start().await;
    t.setup(&[(1, "Ana"), (2, "Ben")], &[10, 11]).await;
    let r = t
        .admin(
            Method::PUT,
            "/admin/users/2/friends",
            Some(json!({"friends": [1]})),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    for post in [10, 11] {
        ok_json::<LikeState>(t.like(1, post).await).await;
    }
    let r = t.admin(Method::POST, "/admin/reset", None).await;
    assert_eq!(ok_json::<Value>(r).await, json!({"ok": true}));

    for post in t.server.store().audit().await.unwrap() {
        assert_eq!((post.count, post.rows, post.version), (0, 0, 0));
    }
    let view: PostLikes = ok_json(t.view(1, 10).await).await;
    assert_eq!((view.count, view.liked_by_me, view.version), (0, false, 0));
    // Friends survive: a new like shows in Ben's line.
    ok_json::<LikeState>(t.like(1, 10).await).await;
    let view: PostLikes = ok_json(t.view(2, 10).await).await;
    assert_eq!((view.count, view.friends), (1, vec!["Ana".to_string()]));
    t.stop().await;
}

#[tokio::test]
async fn seed_over_http() {
    let t = TestServer::start().await;
    let seed = json!({
        "users": [{"id": 1, "name": "Ana", "friends": [2]}, {"id": 2, "name": "Ben"}],
        "posts": [{"id": 5, "likers": [2, 1]}]
    });
    let r = t
        .admin(Method::POST, "/admin/seed", Some(seed.clone()))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let r = t.admin(Method::POST, "/admin/seed", Some(seed)).await;
    assert_eq!(r.status(), StatusCode::OK, "seeding twice is fine");
    let view: PostLikes = ok_json(t.view(1, 5).await).await;
    assert_eq!(
        (view.count, view.liked_by_me, view.friends),
        (2, true, vec!["Ben".into()])
    );
    let r = t
        .admin(
            Method::POST,
            "/admin/seed",
            Some(json!({"users": [{"id": 3, "name": "Cy", "friends": [77]}]})),
        )
        .await;
    expect_error(r, StatusCode::NOT_FOUND, "user_not_found").await;
    let r = t
        .admin(Method::POST, "/admin/seed", Some(json!({"bogus": []})))
        .await;
    expect_error(r, StatusCode::BAD_REQUEST, "bad_json").await;
    // A broken rule is answered with the rule's own code, as by the other
    // admin routes, and nothing of the document is loaded.
    // The message names the entry, for a long seed file.
    let blank = json!({"users": [{"id": 5, "name": "Ed"}, {"id": 4, "name": " "}]});
    let r = t.admin(Method::POST, "/admin/seed", Some(blank)).await;
    let err = expect_error(r, StatusCode::BAD_REQUEST, "bad_name").await;
    assert!(
        err.error.message.starts_with("users[1] (user 4): "),
        "{err:?}"
    );
    let crowd: Vec<u64> = vec![1; likekit_server::store::rules::MAX_FRIENDS + 1];
    let crowded = json!({"users": [{"id": 4, "name": "Di", "friends": crowd}]});
    let r = t.admin(Method::POST, "/admin/seed", Some(crowded)).await;
    let err = expect_error(r, StatusCode::BAD_REQUEST, "too_many_friends").await;
    assert!(
        err.error.message.starts_with("users[0] (user 4): "),
        "{err:?}"
    );
    let r = t
        .admin(
            Method::PUT,
            "/admin/users/4/friends",
            Some(json!({"friends": []})),
        )
        .await;
    expect_error(r, StatusCode::NOT_FOUND, "user_not_found").await;
    t.stop().await;
}

/// Bodies are read as the OpenAPI document (JSON Schema) reads them: a
/// whole number may carry a zero fraction, and an object is an object,
/// never an array serde would also have taken.
#[tokio::test]
async fn bodies_are_read_as_the_document_describes_them() {
    let t = TestServer::start().await;
    let r = t
        .admin(
            Method::POST,
            "/admin/users",
            Some(json!({"id": 4202.0, "name": "Zed"})),
        )
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    assert_eq!(
        r.json::<Value>().await.unwrap(),
        json!({"id": 4202, "name": "Zed"})
    );
    let rules = json!({"seed": 7.0, "rules": [{
        "route": "like",
        "latency_ms": 5.0,
        "status": 503.0,
        "action": {"kind": "oversized", "bytes": 10.0}
    }]});
    let r = t.admin(Method::PUT, "/admin/faults", Some(rules)).await;
    let back: Value = ok_json(r).await;
    assert_eq!(back["seed"], json!(7));
    assert_eq!(back["rules"][0]["latency_ms"], json!(5));
    assert_eq!(back["rules"][0]["action"]["bytes"], json!(10));
    t.admin(Method::DELETE, "/admin/faults", None).await;
    for (path, body, code) in [
        (
            "/admin/users",
            json!({"id": 4202.5, "name": "Zed"}),
            "bad_json",
        ),
        (
            "/admin/users",
            json!({"id": 0.0, "name": "Zed"}),
            "bad_user_id",
        ),
        (
            "/admin/tokens",
            json!({"user_id": 7, "ttl_secs": 60.5}),
            "bad_json",
        ),
        ("/admin/users", json!([4203, "Yan"]), "bad_json"),
        ("/admin/seed", json!([]), "bad_json"),
        (
            "/admin/seed",
            json!({"users": [[4204, "Xi", []]]}),
            "bad_json",
        ),
    ] {
        let r = t.admin(Method::POST, path, Some(body.clone())).await;
        expect_error(r, StatusCode::BAD_REQUEST, code).await;
    }
    // Nothing of the refused bodies was written.
    let r = t
        .admin(
            Method::PUT,
            "/admin/users/4203/friends",
            Some(json!({"friends": []})),
        )
        .await;
    expect_error(r, StatusCode::NOT_FOUND, "user_not_found").await;
    // The journal's filters: `since` is an `int64` like every other
    // number the document gives that format.
    for (query, status) in [
        ("since=0&post=42", StatusCode::OK),
        ("since=9223372036854775807", StatusCode::OK),
        ("since=9223372036854775808", StatusCode::BAD_REQUEST),
        ("since=1.0", StatusCode::BAD_REQUEST),
    ] {
        let r = t
            .admin(Method::GET, &format!("/admin/requests?{query}"), None)
            .await;
        assert_eq!(r.status(), status, "{query}");
    }
    t.stop().await;
}

/// `ops_listen`: `/metrics`, `/openapi.json` and `/admin/*` move to a port
/// of their own and leave the public one, which keeps the like button's
/// routes; the probes answer on both.
#[tokio::test]
async fn the_operations_routes_move_to_their_own_listener() {
    let t = TestServer::with(Config {
        ops_listen: Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0))),
        ..test_config()
    })
    .await;
    let public = t.server.base_url();
    let ops = t.server.ops_url();
    assert_ne!(public, ops);
    // The admin client speaks to the operations port.
    t.setup(&[(1, "Ana")], &[42]).await;
    assert_eq!(t.like(1, 42).await.status(), StatusCode::OK);

    let get = |base: &str, path: &str| t.http.get(format!("{base}{path}")).send();
    for path in ["/metrics", "/openapi.json", "/admin/faults"] {
        let on_public = get(&public, path).await.unwrap();
        assert_eq!(
            on_public.status(),
            StatusCode::NOT_FOUND,
            "{path} on the public port"
        );
    }
    assert_eq!(
        get(&ops, "/metrics").await.unwrap().status(),
        StatusCode::OK
    );
    assert_eq!(
        get(&ops, "/openapi.json").await.unwrap().status(),
        StatusCode::OK
    );
    let faults = t
        .http
        .get(format!("{ops}/admin/faults"))
        .header("x-admin-key", ADMIN_KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(faults.status(), StatusCode::OK);
    // The like button's routes are not on the operations port.
    let token = t.token(1);
    let view = t
        .http
        .get(format!("{ops}/posts/42/likes"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(view.status(), StatusCode::NOT_FOUND);
    for base in [&public, &ops] {
        for probe in ["/livez", "/readyz"] {
            assert_eq!(
                get(base, probe).await.unwrap().status(),
                StatusCode::OK,
                "{base}{probe}"
            );
        }
    }
    t.stop().await;
}

/// Found by `cargo xtask fuzz server_json_bodies`: a number with more
/// digits than a float holds was read one unit in the last place away from
/// its nearest float, so the rules the server wrote back read as other
/// rules. The server now reads every number to its nearest float
/// (serde_json's `float_roundtrip`). Test builds get that feature from a
/// test-only dependency too, so the fuzz target's corpus keeps the input
/// that failed (`regression-long-float.seed`) for the build without them.
#[tokio::test]
async fn fault_rules_read_back_exactly_as_they_were_sent() {
    let t = TestServer::start().await;
    let long = format!("0.{}", "7".repeat(60));
    let huge = format!("7{}", "7".repeat(127));
    for probability in [long, huge] {
        let body = format!(
            r#"{{"seed":1,"rules":[{{"route":"*","probability":{probability},"action":{{"kind":"drop"}}}}]}}"#
        );
        // As the handler reads it.
        let axum::Json(read) =
            axum::Json::<likekit_server::wire::admin::FaultRules>::from_bytes(body.as_bytes())
                .unwrap();
        let nearest: f64 = probability.parse().unwrap();
        assert_eq!(read.rules[0].probability, nearest, "{probability}");
        let written = serde_json::to_vec(&read).unwrap();
        let axum::Json(again) =
            axum::Json::<likekit_server::wire::admin::FaultRules>::from_bytes(&written).unwrap();
        assert_eq!(again, read);
        // And through the admin API: what is in force reads back the same.
        if nearest <= 1.0 {
            let r = t
                .admin(
                    Method::PUT,
                    "/admin/faults",
                    Some(serde_json::from_str(&body).unwrap()),
                )
                .await;
            assert_eq!(r.status(), StatusCode::OK);
            let r = t.admin(Method::GET, "/admin/faults", None).await;
            let rules: Value = ok_json(r).await;
            assert_eq!(rules["rules"][0]["probability"].as_f64(), Some(nearest));
        }
    }
    t.stop().await;
}
