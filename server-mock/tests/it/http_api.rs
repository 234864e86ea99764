//! Every public route and every error, over HTTP against a real server.

#![allow(clippy::unwrap_used)]

use std::{num::NonZeroU32, time::Duration};

use crate::common::{self, TestServer, expect_error, ok_json, test_config};
use likekit_server::{
    Config, RateLimit,
    wire::{
        BatchLikes, LikeState, MAX_BATCH_POSTS, PostLikes,
        admin::{FaultAction, FaultPhase, FaultRoute, FaultRule, FaultRules},
    },
};
use likekit_testing::suite::p;
use reqwest::{Method, StatusCode, header};
use serde_json::{Value, json};

#[tokio::test]
async fn like_unlike_and_views() {
    let t = TestServer::start().await;
    t.setup(&[(1, "Ana")], &[42, 43]).await;

    let state: LikeState = ok_json(t.like(1, 42).await).await;
    assert_eq!(
        state,
        LikeState {
            count: 1,
            liked_by_me: true,
            version: 1
        }
    );
    let view: PostLikes = ok_json(t.view(1, 42).await).await;
    assert_eq!((view.count, view.liked_by_me, view.version), (1, true, 1));
    let view: PostLikes = ok_json(t.view(2, 42).await).await;
    assert_eq!((view.count, view.liked_by_me), (1, false));

    let batch: BatchLikes = ok_json(
        t.as_user(1, Method::GET, "/likes?posts=42,43,999,42")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        batch
            .posts
            .keys()
            .map(|post| post.get())
            .collect::<Vec<_>>(),
        [42, 43],
        "unknown posts are left out, duplicates read once"
    );
    assert!(batch.posts[&p(42)].liked_by_me);
    assert_eq!(batch.posts[&p(43)].count, 0);

    let state: LikeState = ok_json(t.unlike(1, 42).await).await;
    assert_eq!(
        state,
        LikeState {
            count: 0,
            liked_by_me: false,
            version: 2
        }
    );
    t.stop().await;
}

#[tokio::test]
async fn healthz_openapi_and_metrics() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;

    for probe in ["/healthz", "/livez", "/readyz"] {
        let health: Value = ok_json(t.http.get(t.url(probe)).send().await.unwrap()).await;
        assert_eq!(health, json!({"status": "ok"}), "{probe}");
    }

    let doc: Value = ok_json(t.http.get(t.url("/openapi.json")).send().await.unwrap()).await;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    for path in [
        "/posts/{post_id}/like",
        "/posts/{post_id}/likes",
        "/likes",
        "/admin/faults",
    ] {
        assert!(doc["paths"][path].is_object(), "{path} is documented");
    }

    ok_json::<LikeState>(t.like(5, 1).await).await;
    ok_json::<LikeState>(t.like(5, 1).await).await; // no change: not written again
    ok_json::<PostLikes>(t.view(5, 1).await).await;
    ok_json::<PostLikes>(t.view(5, 1).await).await;
    // Each probe is a route of its own (counted from here: the harness
    // may have probed the server already).
    let probes = |text: &str| -> Vec<f64> {
        ["livez", "readyz", "healthz"]
            .map(|route| {
                let series =
                    format!("likekit_http_requests_total{{route=\"{route}\",status=\"2xx\"}} ");
                text.lines()
                    .find_map(|line| line.strip_prefix(&series))
                    .map_or(0.0, |v| v.parse().unwrap())
            })
            .to_vec()
    };
    let metrics = t.http.get(t.url("/metrics")).send().await.unwrap();
    let before = probes(&metrics.text().await.unwrap());
    for (probe, times) in [("/livez", 1), ("/readyz", 2), ("/healthz", 3)] {
        for _ in 0..times {
            let response = t.http.get(t.url(probe)).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{probe}");
        }
    }
    let response = t.http.get(t.url("/metrics")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let text = response.text().await.unwrap();
    let value = |prefix: &str| -> f64 {
        text.lines()
            .find(|line| line.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in\n{text}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(
        value("likekit_http_requests_total{route=\"like\",status=\"2xx\"}"),
        2.0
    );
    assert_eq!(value("likekit_likes_written_total{op=\"like\"}"), 1.0);
    assert_eq!(
        value("likekit_http_request_duration_seconds_count{route=\"likes\"}"),
        2.0
    );
    let after = probes(&text);
    let counted: Vec<f64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    assert_eq!(counted, [1.0, 2.0, 3.0], "livez, readyz, healthz");
    // The buckets reach the request timeout.
    assert_eq!(
        value("likekit_http_request_duration_seconds_bucket{route=\"likes\",le=\"30\"}"),
        2.0
    );
    assert!(value("likekit_cache_requests_total{cache=\"post\",result=\"hit\"}") >= 1.0);
    assert!(value("likekit_cache_hit_ratio{cache=\"post\"}") > 0.0);
    assert!(text.contains("likekit_group_commit_writes"));
    // SQLite keeps no connection pool to report (PostgreSQL's are in
    // tests/store_postgres.rs).
    assert!(!text.contains("likekit_db_pool_"), "{text}");
    // The process's own series, as every Prometheus client exports them.
    if cfg!(target_os = "linux") {
        assert!(value("process_resident_memory_bytes") > 1_000_000.0);
        let open_fds = value("process_open_fds");
        assert!(open_fds >= 3.0, "{open_fds}");
        assert!(value("process_max_fds") >= open_fds);
        assert!(value("process_threads") >= 2.0);
        let started = value("process_start_time_seconds");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(
            started > now - 86_400.0 && started <= now + 1.0,
            "{started}"
        );
        // The CPU time in seconds with their fractions (not whole
        // seconds), under one HELP and one TYPE line.
        assert_eq!(
            text.matches("# TYPE process_cpu_seconds_total counter\n")
                .count(),
            1,
            "{text}"
        );
        assert_eq!(text.matches("# HELP process_cpu_seconds_total ").count(), 1);
        let cpu = text
            .lines()
            .find_map(|line| line.strip_prefix("process_cpu_seconds_total "))
            .expect("a CPU time");
        assert!(cpu.parse::<f64>().unwrap() > 0.0, "{cpu}");
    }
    t.stop().await;
}

#[tokio::test]
async fn bad_post_ids_are_400() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    for bad in [
        "abc",
        "0",
        "-1",
        "+1",
        "1.5",
        "1e3",
        "%20",
        "9223372036854775808",
        "18446744073709551616",
        "99999999999999999999999999",
        "%FF",
    ] {
        for method in [Method::POST, Method::DELETE] {
            let r = t
                .as_user(1, method.clone(), &format!("/posts/{bad}/like"))
                .send()
                .await
                .unwrap();
            expect_error(r, StatusCode::BAD_REQUEST, "bad_post_id").await;
        }
        let r = t
            .as_user(1, Method::GET, &format!("/posts/{bad}/likes"))
            .send()
            .await
            .unwrap();
        expect_error(r, StatusCode::BAD_REQUEST, "bad_post_id").await;
    }
    // The largest id is fine (and unknown here).
    let r = t.like(1, i64::MAX as u64).await;
    expect_error(r, StatusCode::NOT_FOUND, "post_not_found").await;
    t.stop().await;
}

#[tokio::test]
async fn unknown_posts_are_404() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    expect_error(t.like(1, 2).await, StatusCode::NOT_FOUND, "post_not_found").await;
    expect_error(
        t.unlike(1, 2).await,
        StatusCode::NOT_FOUND,
        "post_not_found",
    )
    .await;
    expect_error(t.view(1, 2).await, StatusCode::NOT_FOUND, "post_not_found").await;
    let audit = t.server.store().audit().await.unwrap();
    assert_eq!(audit.len(), 1, "no post appeared");
    t.stop().await;
}

#[tokio::test]
async fn bad_post_lists_are_400() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    let get = |query: String| {
        let t = &t;
        async move {
            t.as_user(1, Method::GET, &format!("/likes{query}"))
                .send()
                .await
                .unwrap()
        }
    };
    for (query, code) in [
        ("".to_string(), "bad_posts"),
        ("?".to_string(), "bad_posts"),
        ("?other=1".to_string(), "bad_posts"),
        ("?posts=".to_string(), "bad_posts"),
        ("?posts=1,,2".to_string(), "bad_posts"),
        ("?posts=1,".to_string(), "bad_posts"),
        ("?posts=a".to_string(), "bad_posts"),
        ("?posts=0".to_string(), "bad_posts"),
        ("?posts=-3".to_string(), "bad_posts"),
        ("?posts=9223372036854775808".to_string(), "bad_posts"),
        (
            format!(
                "?posts={}",
                (1..=MAX_BATCH_POSTS as u64 + 1)
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            "too_many_posts",
        ),
        // A repeated id counts toward the limit, as `maxItems` says.
        (
            format!("?posts={}", vec!["1"; MAX_BATCH_POSTS + 1].join(",")),
            "too_many_posts",
        ),
    ] {
        expect_error(get(query.clone()).await, StatusCode::BAD_REQUEST, code).await;
    }
    // Exactly the maximum is fine, and a repeated id is read once.
    let full = (1..MAX_BATCH_POSTS as u64)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let batch: BatchLikes = ok_json(get(format!("?posts={full},1")).await).await;
    assert_eq!(batch.posts.len(), 1, "only post 1 exists");
    t.stop().await;
}

#[tokio::test]
async fn wrong_methods_are_405_and_unknown_routes_404() {
    let t = TestServer::start().await;
    for (method, path) in [
        (Method::PUT, "/posts/1/like"),
        (Method::GET, "/posts/1/like"),
        (Method::POST, "/posts/1/likes"),
        (Method::DELETE, "/likes"),
        (Method::POST, "/healthz"),
        (Method::GET, "/admin/users"),
        (Method::PATCH, "/admin/faults"),
    ] {
        let r = t
            .as_user(1, method.clone(), path)
            .header("X-Admin-Key", common::ADMIN_KEY)
            .send()
            .await
            .unwrap();
        assert!(r.headers().contains_key(header::ALLOW), "{method} {path}");
        expect_error(r, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed").await;
    }
    for path in [
        "/",
        "/posts",
        "/posts/1",
        "/posts/1/like/extra",
        "/admin",
        "/admin/nope",
        "/nope",
    ] {
        // (Under `/admin`, without the key, the key's 401 comes first.)
        let r = t
            .as_user(1, Method::GET, path)
            .header("X-Admin-Key", common::ADMIN_KEY)
            .send()
            .await
            .unwrap();
        expect_error(r, StatusCode::NOT_FOUND, "not_found").await;
    }
    t.stop().await;
}

#[tokio::test]
async fn oversize_bodies_are_413() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    // Past the default limit (`DEFAULT_MAX_BODY_BYTES`).
    let big = "x".repeat(likekit_server::DEFAULT_MAX_BODY_BYTES + 1);
    let r = t
        .http
        .post(t.url("/admin/users"))
        .header("X-Admin-Key", common::ADMIN_KEY)
        .header(header::CONTENT_TYPE, "application/json")
        .body(format!(r#"{{"id": 1, "name": "{big}"}}"#))
        .send()
        .await
        .unwrap();
    expect_error(r, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large").await;
    let r = t
        .as_user(1, Method::POST, "/posts/1/like")
        .body(big.clone())
        .send()
        .await
        .unwrap();
    expect_error(r, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large").await;
    t.stop().await;
}

#[tokio::test]
async fn a_body_limit_above_axums_own_is_honoured() {
    // 3 MiB allowed: a 2.5 MiB body reaches the handler (which refuses the
    // name for its length), where axum alone would stop at 2 MiB.
    let t = TestServer::with(Config {
        max_body_bytes: 3 * 1024 * 1024,
        ..test_config()
    })
    .await;
    for (name_bytes, status, code) in [
        (5 * 512 * 1024, StatusCode::BAD_REQUEST, "bad_name"),
        (
            3 * 1024 * 1024,
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
        ),
    ] {
        let name = "x".repeat(name_bytes);
        let r = t
            .admin(
                Method::POST,
                "/admin/users",
                Some(json!({"id": 1, "name": name})),
            )
            .await;
        expect_error(r, status, code).await;
    }
    t.stop().await;
}

#[tokio::test]
async fn a_streamed_body_past_the_limit_is_413() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    // No Content-Length: the body comes in chunks, and the limit is met
    // while it is read.
    let t = TestServer::start().await;
    let mut tcp = tokio::net::TcpStream::connect(t.server.addr())
        .await
        .unwrap();
    let chunk = "x".repeat(8 * 1024);
    let mut request = String::from("POST /admin/users HTTP/1.1\r\nHost: t\r\nX-Admin-Key: ");
    request.push_str(common::ADMIN_KEY);
    request.push_str(
        "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
    );
    let opening = r#"{"id": 1, "name": ""#;
    request.push_str(&format!("{:x}\r\n{opening}\r\n", opening.len()));
    for _ in 0..16 {
        request.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
    }
    request.push_str("2\r\n\"}\r\n0\r\n\r\n");
    // The server may answer and close before it has read everything.
    let _ = tcp.write_all(request.as_bytes()).await;
    let mut answer = Vec::new();
    let _ = tcp.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("application/json"), "{answer}");
    assert!(answer.contains("payload_too_large"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("x-request-id:"),
        "{answer}"
    );
    t.stop().await;
}

/// Sends `method path` with `headers` and a chunked body of `bytes` bytes
/// (no `Content-Length`), and reads the whole answer.
async fn send_chunked(
    t: &TestServer,
    method: &str,
    path: &str,
    headers: &str,
    bytes: usize,
) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut tcp = tokio::net::TcpStream::connect(t.server.addr())
        .await
        .unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: t\r\n{headers}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    let mut left = bytes;
    while left > 0 {
        let n = left.min(8 * 1024);
        request.push_str(&format!("{n:x}\r\n{}\r\n", "x".repeat(n)));
        left -= n;
    }
    request.push_str("0\r\n\r\n");
    // The server may answer and close before it has read everything.
    let _ = tcp.write_all(request.as_bytes()).await;
    let mut answer = Vec::new();
    let _ = tcp.read_to_end(&mut answer).await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// A chunked body past the limit is a 413 on every route, also on the
/// public ones whose handlers read no body: the like is not made, the
/// reset not done, and the journal lists the refused like with its 413.
/// A chunked body within the limit changes nothing.
#[tokio::test]
async fn a_chunked_body_past_the_limit_is_413_on_every_route() {
    let t = TestServer::start().await;
    t.setup(&[], &[1, 2]).await;
    ok_json::<LikeState>(t.like(2, 2).await).await;
    let bearer = format!("Authorization: Bearer {}\r\n", t.token(1));
    let admin = format!("X-Admin-Key: {}\r\n", common::ADMIN_KEY);
    let too_big = 2 * 1024 * 1024;
    for (method, path, headers) in [
        ("POST", "/posts/1/like", &bearer),
        (
            "DELETE",
            "/posts/2/like",
            &format!("Authorization: Bearer {}\r\n", t.token(2)),
        ),
        ("GET", "/posts/1/likes", &bearer),
        ("GET", "/likes?posts=1,2", &bearer),
        ("POST", "/admin/reset", &admin),
        ("GET", "/healthz", &String::new()),
    ] {
        let answer = send_chunked(&t, method, path, headers, too_big).await;
        assert!(
            answer.starts_with("HTTP/1.1 413"),
            "{method} {path}: {answer}"
        );
        assert!(
            answer.contains("payload_too_large"),
            "{method} {path}: {answer}"
        );
    }
    let state: PostLikes = ok_json(t.view(1, 1).await).await;
    assert_eq!((state.count, state.liked_by_me), (0, false), "no like made");
    let state: PostLikes = ok_json(t.view(2, 2).await).await;
    assert_eq!(
        (state.count, state.liked_by_me),
        (1, true),
        "no unlike, no reset"
    );
    let journal = t
        .admin_client
        .requests(&likekit_server::wire::admin::RequestFilter::default())
        .await
        .unwrap()
        .entries;
    let like = journal
        .iter()
        .find(|e| e.route == FaultRoute::Like && e.path == "/posts/1/like")
        .unwrap();
    assert_eq!(
        (like.status, like.write),
        (
            Some(413),
            Some(likekit_server::wire::admin::WriteResult::Refused)
        ),
        "{like:?}"
    );

    // Within the limit, a chunked body is read and the request goes on.
    let answer = send_chunked(&t, "POST", "/posts/1/like", &bearer, 1000).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(ok_json::<PostLikes>(t.view(1, 1).await).await.count, 1);
    t.stop().await;
}

#[tokio::test]
async fn a_handler_that_panics_answers_a_json_500_with_its_request_id() {
    use axum::routing::get;
    let app = likekit_server::App::open(&test_config()).await.unwrap();
    async fn boom() -> &'static str {
        panic!("boom")
    }
    let router = app.wrap(axum::Router::new().route("/boom", get(boom)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = tokio::spawn(async move { axum::serve(listener, router).await });
    let r = common::client()
        .get(format!("http://{addr}/boom"))
        .header("X-Request-Id", "panic-7")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["x-request-id"], "panic-7");
    expect_error(r, StatusCode::INTERNAL_SERVER_ERROR, "internal").await;
    // The server goes on answering.
    let r = common::client()
        .get(format!("http://{addr}/boom"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::INTERNAL_SERVER_ERROR);
    served.abort();
}

#[tokio::test]
async fn admin_json_errors() {
    let t = TestServer::start().await;
    let post = |content_type: &'static str, body: &'static str| {
        let t = &t;
        async move {
            t.http
                .post(t.url("/admin/users"))
                .header("X-Admin-Key", common::ADMIN_KEY)
                .header(header::CONTENT_TYPE, content_type)
                .body(body)
                .send()
                .await
                .unwrap()
        }
    };
    expect_error(
        post("text/plain", r#"{"id": 1, "name": "Ana"}"#).await,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    )
    .await;
    let r = t
        .http
        .post(t.url("/admin/posts"))
        .header("X-Admin-Key", common::ADMIN_KEY)
        .body(r#"{"id": 1}"#)
        .send()
        .await
        .unwrap();
    expect_error(
        r,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    )
    .await;
    for body in [
        "{",
        "",
        "[]",
        r#"{"id": "one", "name": "Ana"}"#,
        r#"{"name": "Ana"}"#,
        r#"{"id": -1, "name": "Ana"}"#,
        r#"{"id": 18446744073709551616, "name": "Ana"}"#,
    ] {
        expect_error(
            post("application/json", body).await,
            StatusCode::BAD_REQUEST,
            "bad_json",
        )
        .await;
    }
    expect_error(
        post("application/json", r#"{"id": 0, "name": "Ana"}"#).await,
        StatusCode::BAD_REQUEST,
        "bad_user_id",
    )
    .await;
    expect_error(
        post(
            "application/json",
            r#"{"id": 9223372036854775808, "name": "Ana"}"#,
        )
        .await,
        StatusCode::BAD_REQUEST,
        "bad_user_id",
    )
    .await;
    expect_error(
        post("application/json", r#"{"id": 1, "name": "  "}"#).await,
        StatusCode::BAD_REQUEST,
        "bad_name",
    )
    .await;
    t.stop().await;
}

#[tokio::test]
async fn writes_over_the_rate_limit_get_429_with_retry_after() {
    let t = TestServer::with(Config {
        write_rate_limit: Some(RateLimit {
            per_second: NonZeroU32::new(1).unwrap(),
            burst: NonZeroU32::new(3).unwrap(),
        }),
        ..test_config()
    })
    .await;
    t.setup(&[], &[1]).await;
    for _ in 0..3 {
        ok_json::<LikeState>(t.like(7, 1).await).await;
    }
    let r = t.unlike(7, 1).await;
    let retry_after: u64 = r.headers()[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&retry_after), "Retry-After {retry_after}");
    expect_error(r, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    // The refused unlike was not applied; other users and reads are not limited.
    let view: PostLikes = ok_json(t.view(7, 1).await).await;
    assert!(view.liked_by_me);
    ok_json::<LikeState>(t.like(8, 1).await).await;
    t.stop().await;
}

/// In process as over HTTP: a `slow_body` pause the server would take for
/// a stalled answer is refused, and the rules in force stay.
#[tokio::test]
async fn in_process_fault_rules_refuse_a_pause_past_the_request_timeout() {
    let t = TestServer::with(Config {
        request_timeout: Duration::from_millis(300),
        ..test_config()
    })
    .await;
    let slow = |interval_ms| {
        FaultRules::new(vec![FaultRule {
            phase: FaultPhase::After,
            action: Some(FaultAction::SlowBody {
                bytes: 1,
                interval_ms,
            }),
            ..FaultRule::new(FaultRoute::Likes)
        }])
    };
    t.server.set_faults(slow(100)).unwrap();
    let refused = t.server.set_faults(slow(300)).unwrap_err().to_string();
    assert!(
        refused.contains("rules[0].action.interval_ms") && refused.contains("request timeout"),
        "{refused}"
    );
    let in_force = t
        .http
        .get(t.url("/admin/faults"))
        .header("x-admin-key", common::ADMIN_KEY)
        .send()
        .await
        .unwrap();
    let in_force: Value = ok_json(in_force).await;
    assert_eq!(
        in_force["rules"][0]["action"]["interval_ms"], 100,
        "{in_force}"
    );
    t.stop().await;
}

/// In process as over HTTP: rules added after those in force leave those
/// as they were (a used-up `fail_next` stays used up), and removing one
/// tag's rules keeps the others'.
#[tokio::test]
async fn in_process_fault_rules_are_added_and_removed_by_tag() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    let once_for = |user: u64, tag: &str| FaultRule {
        user: Some(likekit_server::wire::UserId::new(user).unwrap()),
        fail_next: 1,
        tag: Some(tag.into()),
        ..FaultRule::new(FaultRoute::Likes)
    };
    let first = t.server.add_faults(vec![once_for(2, "b")]).unwrap();
    assert_eq!(t.view(2, 1).await.status(), StatusCode::SERVICE_UNAVAILABLE);
    let added = t.server.add_faults(vec![once_for(3, "a")]).unwrap();
    assert_eq!(added.seed, first.seed, "the seed stays");
    let left: Vec<_> = added.state.iter().map(|s| s.fail_next_left).collect();
    assert_eq!(left, [Some(0), Some(1)], "b's rule stays used up");
    assert_eq!(t.view(2, 1).await.status(), StatusCode::OK);
    let kept = t.server.clear_faults_tagged("a").unwrap();
    assert_eq!(kept.rules, [once_for(2, "b")]);
    assert_eq!(kept.state[0].matched, 2, "b's counters go on");
    assert_eq!(
        t.view(3, 1).await.status(),
        StatusCode::OK,
        "a's rule is gone"
    );
    let refused = t.server.clear_faults_tagged("two words").unwrap_err();
    assert!(refused.to_string().contains("tag:"), "{refused}");
    let too_many = t
        .server
        .add_faults(vec![once_for(4, "c"); likekit_server::MAX_RULES])
        .unwrap_err();
    assert!(
        too_many
            .to_string()
            .contains(&format!("at most {} rules", likekit_server::MAX_RULES)),
        "{too_many}"
    );
    // The request journal, in process too: what each user's reads were
    // answered, read and cleared by filter.
    let mine = likekit_server::wire::admin::RequestFilter {
        user: Some(likekit_server::wire::UserId::new(2).unwrap()),
        ..Default::default()
    };
    let statuses: Vec<_> = t
        .server
        .requests(&mine)
        .entries
        .iter()
        .map(|e| (e.status, e.fault_tag.clone()))
        .collect();
    assert_eq!(
        statuses,
        [(Some(503), Some("b".to_owned())), (Some(200), None)]
    );
    assert_eq!(t.server.clear_requests(&mine), 2);
    assert_eq!(t.server.requests(&mine).entries, []);
    let everyone = t.server.requests(&Default::default()).entries.len();
    assert_eq!(everyone, 1, "user 3's read stays");
    t.stop().await;
}

#[tokio::test]
async fn slow_requests_time_out_with_json() {
    let t = TestServer::with(Config {
        request_timeout: Duration::from_millis(300),
        ..test_config()
    })
    .await;
    t.setup(&[], &[1]).await;
    t.server
        .set_faults(FaultRules::new(vec![FaultRule {
            latency_ms: 5_000,
            ..FaultRule::new(FaultRoute::Likes)
        }]))
        .unwrap();
    expect_error(
        t.view(1, 1).await,
        StatusCode::SERVICE_UNAVAILABLE,
        "timeout",
    )
    .await;
    t.stop().await;
}

#[tokio::test]
async fn cors_only_for_configured_origins() {
    let preflight = |t: &TestServer, origin: &'static str| {
        t.http
            .request(Method::OPTIONS, t.url("/posts/1/like"))
            .header(header::ORIGIN, origin)
            .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
            .header(header::ACCESS_CONTROL_REQUEST_HEADERS, "authorization")
            .send()
    };

    let t = TestServer::with(Config {
        cors_origins: vec!["http://app.example".into()],
        ..test_config()
    })
    .await;
    t.setup(&[], &[1]).await;
    let r = preflight(&t, "http://app.example").await.unwrap();
    assert!(r.status().is_success());
    assert_eq!(
        r.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "http://app.example"
    );
    // A browser may send its own request id, and read the one answered.
    let allowed = r.headers()[header::ACCESS_CONTROL_ALLOW_HEADERS]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    for name in [
        "authorization",
        "content-type",
        "x-admin-key",
        "x-request-id",
    ] {
        assert!(
            allowed.split(',').any(|h| h.trim() == name),
            "{name} not in {allowed}"
        );
    }
    let r = preflight(&t, "http://evil.example").await.unwrap();
    assert!(
        !r.headers()
            .contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN)
    );
    let r = t
        .as_user(1, Method::POST, "/posts/1/like")
        .header(header::ORIGIN, "http://app.example")
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "http://app.example"
    );
    let exposed = r.headers()[header::ACCESS_CONTROL_EXPOSE_HEADERS]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(exposed.contains("x-request-id"), "{exposed}");
    t.stop().await;

    // None by default.
    let t = TestServer::start().await;
    let r = t
        .http
        .get(t.url("/healthz"))
        .header(header::ORIGIN, "http://app.example")
        .send()
        .await
        .unwrap();
    assert!(
        !r.headers()
            .contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN)
    );
    t.stop().await;
}
