//! Fault rules, set and cleared over the admin API, as client tests use them.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use crate::common::{self, TestServer, expect_error, ok_json};
use likekit_server::wire::{
    LikeState, PostLikes,
    admin::{
        FaultPhase, FaultRoute, FaultRule, JournalEntry, JournalFault, RequestFilter, WriteResult,
    },
};
use reqwest::{Method, StatusCode, header};
use serde_json::{Value, json};

async fn set_rules(t: &TestServer, rules: Value) {
    let r = t
        .admin(
            Method::PUT,
            "/admin/faults",
            Some(json!({ "rules": rules })),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK, "{}", r.text().await.unwrap());
}

async fn count(t: &TestServer, post: u64) -> u64 {
    let audit = t.server.store().audit().await.unwrap();
    audit.iter().find(|p| p.post == post).unwrap().count
}

#[tokio::test]
async fn latency_delays_the_answer_without_blocking_others() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    set_rules(&t, json!([{"route": "like", "latency_ms": 700}])).await;

    {
        let started = Instant::now();
        let slow = t.like(1, 1);
        tokio::pin!(slow);
        // While the like waits out its latency, other routes answer.
        tokio::select! {
            _ = &mut slow => panic!("the like answered before its latency"),
            view = t.view(2, 1) => { ok_json::<PostLikes>(view).await; }
        }
        let state: LikeState = ok_json(slow.await).await;
        assert!(started.elapsed() >= Duration::from_millis(700));
        assert_eq!(state.count, 1, "a slow call still succeeds");
    }

    // Jitter on top of latency stays within bounds' lower end.
    set_rules(
        &t,
        json!([{"route": "*", "latency_ms": 200, "jitter_ms": 100}]),
    )
    .await;
    let started = Instant::now();
    ok_json::<PostLikes>(t.view(2, 1).await).await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    t.stop().await;
}

#[tokio::test]
async fn error_rate_one_always_fails_with_the_status() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    set_rules(
        &t,
        json!([{"route": "like", "error_rate": 1.0, "status": 503}]),
    )
    .await;
    for _ in 0..3 {
        expect_error(
            t.like(1, 1).await,
            StatusCode::SERVICE_UNAVAILABLE,
            "injected_fault",
        )
        .await;
    }
    assert_eq!(count(&t, 1).await, 0, "failed calls did not write");
    // Other routes are not affected.
    ok_json::<PostLikes>(t.view(1, 1).await).await;
    ok_json::<LikeState>(t.unlike(1, 1).await).await;

    // A 429 carries Retry-After, as a real one would.
    set_rules(
        &t,
        json!([{"route": "unlike", "error_rate": 1.0, "status": 429}]),
    )
    .await;
    let r = t.unlike(1, 1).await;
    assert!(r.headers().contains_key(header::RETRY_AFTER));
    expect_error(r, StatusCode::TOO_MANY_REQUESTS, "injected_fault").await;
    t.stop().await;
}

#[tokio::test]
async fn fail_next_fails_exactly_n() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    set_rules(
        &t,
        json!([{"route": "like", "fail_next": 3, "status": 500}]),
    )
    .await;
    let mut statuses = Vec::new();
    for _ in 0..5 {
        statuses.push(t.like(1, 1).await.status().as_u16());
    }
    assert_eq!(statuses, [500, 500, 500, 200, 200]);
    assert_eq!(count(&t, 1).await, 1);

    // "*" counts every public route together.
    set_rules(&t, json!([{"route": "*", "fail_next": 2, "status": 502}])).await;
    assert_eq!(t.view(1, 1).await.status(), StatusCode::BAD_GATEWAY);
    assert_eq!(t.unlike(1, 1).await.status(), StatusCode::BAD_GATEWAY);
    assert_eq!(t.unlike(1, 1).await.status(), StatusCode::OK);
    t.stop().await;
}

#[tokio::test]
async fn drop_gives_a_connection_error_not_an_answer() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    set_rules(&t, json!([{"route": "*", "drop_rate": 1.0}])).await;
    for path in ["/posts/1/like", "/posts/1/likes"] {
        let method = if path.ends_with("like") {
            Method::POST
        } else {
            Method::GET
        };
        let result = t.as_user(1, method, path).send().await;
        let err = result.expect_err("a dropped connection is not an HTTP answer");
        assert!(err.status().is_none(), "{err:?}");
        assert!(
            err.is_request() || err.is_connect() || err.is_body(),
            "{err:?}"
        );
    }
    assert_eq!(count(&t, 1).await, 0);

    // Faults never touch /healthz or /admin.
    let r = t.http.get(t.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = t.admin(Method::DELETE, "/admin/faults", None).await;
    let rules: Value = ok_json(r).await;
    assert_eq!(rules, json!({"rules": []}));
    ok_json::<LikeState>(t.like(1, 1).await).await;
    t.stop().await;
}

#[tokio::test]
async fn delete_clears_and_bad_rules_are_400() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    set_rules(
        &t,
        json!([
            {"route": "like", "error_rate": 1.0},
            {"route": "likes", "error_rate": 1.0, "status": 500}
        ]),
    )
    .await;
    expect_error(
        t.like(1, 1).await,
        StatusCode::SERVICE_UNAVAILABLE,
        "injected_fault",
    )
    .await;
    expect_error(
        t.view(1, 1).await,
        StatusCode::INTERNAL_SERVER_ERROR,
        "injected_fault",
    )
    .await;
    let r = t.admin(Method::DELETE, "/admin/faults", None).await;
    assert_eq!(r.status(), StatusCode::OK);
    ok_json::<LikeState>(t.like(1, 1).await).await;
    ok_json::<PostLikes>(t.view(1, 1).await).await;

    for (rules, code) in [
        (
            json!([{"route": "like", "error_rate": 2.0}]),
            "bad_fault_rules",
        ),
        (
            json!([{"route": "like", "drop_rate": -1}]),
            "bad_fault_rules",
        ),
        (json!([{"route": "like", "status": 200}]), "bad_fault_rules"),
        (
            json!([{"route": "like", "latency_ms": 3_600_000}]),
            "bad_fault_rules",
        ),
        (json!([{"route": "posts"}]), "bad_json"),
        (json!([{"route": "like", "latency": 5}]), "bad_json"),
        (json!([{}]), "bad_json"),
        // A rule's field put in an action without fields of its own: not
        // a drop on every call.
        (
            json!([{"route": "like", "action": {"kind": "drop", "after": 3}}]),
            "bad_json",
        ),
    ] {
        let r = t
            .admin(
                Method::PUT,
                "/admin/faults",
                Some(json!({ "rules": rules })),
            )
            .await;
        expect_error(r, StatusCode::BAD_REQUEST, code).await;
    }
    // A call condition of 0 would select no call (or divide by zero):
    // refused, the message naming the field.
    for field in ["nth", "every", "first"] {
        let r = t
            .admin(
                Method::PUT,
                "/admin/faults",
                Some(json!({"rules": [{"route": "like", field: 0}]})),
            )
            .await;
        let body = expect_error(r, StatusCode::BAD_REQUEST, "bad_fault_rules").await;
        assert_eq!(
            body.error.message,
            format!("rules[0].{field}: must be at least 1; got 0")
        );
    }
    // Every refusal names the field: the rule's own numbers by their path,
    // an action's (which serde reads from a copy of the object) in the
    // message after the action's path.
    for (rule, code, starts) in [
        (
            json!({"route": "like", "probability": 2}),
            "bad_fault_rules",
            "rules[0].probability: must be from 0 to 1; got 2",
        ),
        (
            json!({"route": "like", "jitter_ms": 700_000}),
            "bad_fault_rules",
            "rules[0].jitter_ms: must be at most 600000; got 700000",
        ),
        (
            json!({"route": "like", "action": {"kind": "status", "status": 99}}),
            "bad_fault_rules",
            "rules[0].action.status: must be from 200 to 599; got 99",
        ),
        (
            json!({"route": "like", "phase": "after",
                   "action": {"kind": "slow_body", "bytes": 0, "interval_ms": 5}}),
            "bad_fault_rules",
            "rules[0].action.bytes: must be at least 1; got 0",
        ),
        (
            json!({"route": "like", "phase": "after",
                   "action": {"kind": "slow_body", "bytes": 1, "interval_ms": -5}}),
            "bad_json",
            "rules[0].action: interval_ms: invalid value: integer `-5`",
        ),
        (
            json!({"route": "like", "phase": "after",
                   "action": {"kind": "truncate", "bytes": "12"}}),
            "bad_json",
            "rules[0].action: bytes: invalid type: string \"12\"",
        ),
        (
            json!({"route": "like",
                   "action": {"kind": "status", "status": 429, "retry_after_secs": 1.5}}),
            "bad_json",
            "rules[0].action: retry_after_secs: invalid value: floating point `1.5`",
        ),
        // Rules no request can meet: refused, not accepted and never fired.
        (
            json!({"route": "like", "method": "DELETE", "fail_next": 1}),
            "bad_fault_rules",
            "rules[0].method: route \"like\" is only ever POST, so a rule for DELETE never fires",
        ),
    ] {
        let r = t
            .admin(Method::PUT, "/admin/faults", Some(json!({"rules": [rule]})))
            .await;
        let body = expect_error(r, StatusCode::BAD_REQUEST, code).await;
        assert!(
            body.error.message.starts_with(starts),
            "{rule}: {}",
            body.error.message
        );
    }
    // A refused rule set leaves the previous one (none) in force.
    ok_json::<LikeState>(t.unlike(1, 1).await).await;
    t.stop().await;
}

/// A server whose requests time out after one second.
async fn with_timeout_of_a_second() -> TestServer {
    TestServer::with(likekit_server::Config {
        request_timeout: Duration::from_secs(1),
        ..common::test_config()
    })
    .await
}

/// A `slow_body` pause must be shorter than the request timeout: the
/// server closes a connection whose answer moves nothing for longer, so a
/// longer pause is refused when the rules are set, not cut at run time.
#[tokio::test]
async fn a_slow_body_pause_must_be_shorter_than_the_request_timeout() {
    let t = with_timeout_of_a_second().await;
    let slow = |interval_ms: u64| {
        json!({"rules": [{"route": "likes", "phase": "after",
            "action": {"kind": "slow_body", "bytes": 16, "interval_ms": interval_ms}}]})
    };
    let r = t
        .admin(Method::PUT, "/admin/faults", Some(slow(1_000)))
        .await;
    expect_error(r, StatusCode::BAD_REQUEST, "bad_fault_rules").await;
    let r = t.admin(Method::PUT, "/admin/faults", Some(slow(999))).await;
    assert_eq!(r.status(), StatusCode::OK, "{}", r.text().await.unwrap());
    t.stop().await;
}

/// Every journal entry, oldest first.
async fn journal(t: &TestServer) -> Vec<JournalEntry> {
    t.admin_client
        .requests(&RequestFilter::default())
        .await
        .unwrap()
        .entries
}

/// `hang` never answers, however much of the request's time a latency (a
/// `before` rule's, or the handler and an `after` rule's) has already
/// taken: the connection is cut at the request timeout, never a 503.
#[tokio::test]
async fn hang_after_a_latency_cuts_the_connection_at_the_timeout() {
    let t = with_timeout_of_a_second().await;
    t.setup(&[], &[1]).await;
    for phase in ["before", "after"] {
        set_rules(
            &t,
            json!([{"route": "like", "phase": phase, "latency_ms": 300,
                    "action": {"kind": "hang"}}]),
        )
        .await;
        t.admin_client.clear_requests().await.unwrap();
        let started = Instant::now();
        let result = t.as_user(1, Method::POST, "/posts/1/like").send().await;
        let elapsed = started.elapsed();
        match result {
            Ok(answer) => panic!(
                "{phase}: a hung request was answered {}: {}",
                answer.status(),
                answer.text().await.unwrap()
            ),
            Err(err) => assert!(err.status().is_none(), "{phase}: {err:?}"),
        }
        assert!(
            elapsed >= Duration::from_millis(900),
            "{phase}: {elapsed:?}"
        );
        let [entry] = &journal(&t).await[..] else {
            panic!("{phase}: one like");
        };
        assert_eq!(entry.status, None, "{phase}: {entry:?}");
        assert_eq!(entry.fault, Some(JournalFault::Hang), "{phase}: {entry:?}");
    }
    t.stop().await;
}

/// A like `after` rules delay past the request timeout has committed: the
/// client gets the 503 `timeout`, and the journal says the write was
/// applied and which rule held it, not that it was refused. The act the
/// timeout cut short was never carried out: the rule's `acted` stays 0.
#[tokio::test]
async fn a_write_timed_out_by_an_after_rule_is_journaled_as_written() {
    let t = with_timeout_of_a_second().await;
    t.setup(&[], &[1]).await;
    // Each rule alone acts well within the timeout; stacked, they do not.
    set_rules(
        &t,
        json!([{"route": "like", "phase": "after", "latency_ms": 600},
               {"route": "like", "phase": "after", "latency_ms": 600,
                "action": {"kind": "status", "status": 500}}]),
    )
    .await;
    expect_error(
        t.like(1, 1).await,
        StatusCode::SERVICE_UNAVAILABLE,
        "timeout",
    )
    .await;
    assert_eq!(count(&t, 1).await, 1, "the like committed");
    let [entry] = &journal(&t).await[..] else {
        panic!("one like");
    };
    assert_eq!(
        (
            entry.status,
            entry.write,
            entry.fault_rule,
            entry.fault_phase,
            entry.fault
        ),
        (
            Some(503),
            Some(WriteResult::Applied),
            Some(1),
            Some(FaultPhase::After),
            Some(JournalFault::Status)
        ),
        "{entry:?}"
    );
    let read: Value = ok_json(t.admin(Method::GET, "/admin/faults", None).await).await;
    assert_eq!(
        read["state"],
        json!([
            {"matched": 1, "fired": 1, "acted": 0},
            {"matched": 1, "fired": 1, "acted": 0}
        ])
    );
    t.stop().await;
}

/// An action behind a latency the request timeout always cuts short is
/// refused, as a `slow_body` pause that long is. The first fault
/// language's acts behind such a latency are taken, as they always were:
/// the request times out, and nothing is spent (the `fail_next` failure
/// is still there for the next call).
#[tokio::test]
async fn an_action_the_timeout_always_cuts_short_is_refused() {
    let t = with_timeout_of_a_second().await;
    t.setup(&[], &[1]).await;
    for latency_ms in [1_000, 1_500] {
        let r = t
            .admin(
                Method::PUT,
                "/admin/faults",
                Some(json!({"rules": [{"route": "like", "latency_ms": latency_ms,
                    "action": {"kind": "drop"}}]})),
            )
            .await;
        let err = expect_error(r, StatusCode::BAD_REQUEST, "bad_fault_rules").await;
        assert_eq!(
            err.error.message,
            format!(
                "rules[0].latency_ms: with an action, must be below the server's request \
                 timeout (1000 ms), or the request always times out before the action; got \
                 {latency_ms}"
            )
        );
    }
    set_rules(
        &t,
        json!([{"route": "like", "latency_ms": 1_500, "fail_next": 1, "status": 500}]),
    )
    .await;
    expect_error(
        t.like(1, 1).await,
        StatusCode::SERVICE_UNAVAILABLE,
        "timeout",
    )
    .await;
    let read: Value = ok_json(t.admin(Method::GET, "/admin/faults", None).await).await;
    assert_eq!(
        read["state"],
        json!([{"matched": 1, "fired": 1, "acted": 0, "fail_next_left": 1}])
    );
    t.stop().await;
}

/// "Saved, but the answer was lost" is about a like that was saved. An
/// `after` rule acts only on an answer its handler gave 2xx: the likes
/// refused first (no token, an expired one; an unlike of a post that does
/// not exist) go out as they are and use nothing of the rule up, so its
/// `first: 1` is the first like that committed, and that is the one whose
/// answer is lost. The journal tells it.
#[tokio::test]
async fn an_after_rule_acts_only_on_an_answer_that_was_carried_out() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    set_rules(
        &t,
        json!([
            {"route": "like", "first": 1, "phase": "after",
             "action": {"kind": "drop"}, "tag": "lost"},
            {"route": "unlike", "nth": 1, "phase": "after",
             "action": {"kind": "status", "status": 500}, "tag": "failed"}
        ]),
    )
    .await;
    let no_token = t.http.post(t.url("/posts/1/like")).send().await.unwrap();
    expect_error(no_token, StatusCode::UNAUTHORIZED, "missing_token").await;
    let an_hour_ago = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 3600;
    let expired = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": "1", "exp": an_hour_ago}),
        &jsonwebtoken::EncodingKey::from_secret(common::TOKEN_SECRET.as_bytes()).unwrap(),
    )
    .unwrap();
    let expired = t
        .http
        .post(t.url("/posts/1/like"))
        .bearer_auth(expired)
        .send()
        .await
        .unwrap();
    expect_error(expired, StatusCode::UNAUTHORIZED, "token_expired").await;
    let lost = t.as_user(1, Method::POST, "/posts/1/like").send().await;
    let err = lost.expect_err("the committed like's answer is lost");
    assert!(err.status().is_none(), "{err:?}");
    assert_eq!(count(&t, 1).await, 1, "the like committed");
    ok_json::<LikeState>(t.like(1, 1).await).await;

    expect_error(
        t.unlike(1, 404).await,
        StatusCode::NOT_FOUND,
        "post_not_found",
    )
    .await;
    expect_error(
        t.unlike(1, 1).await,
        StatusCode::INTERNAL_SERVER_ERROR,
        "injected_fault",
    )
    .await;
    assert_eq!(count(&t, 1).await, 0, "the unlike committed");

    let entries: Vec<Value> = journal(&t)
        .await
        .iter()
        .map(|e| {
            json!([
                e.route,
                e.status,
                e.write,
                e.fault_tag,
                e.fault_phase,
                e.fault
            ])
        })
        .collect();
    assert_eq!(
        entries,
        [
            json!(["like", 401, "refused", null, null, null]),
            json!(["like", 401, "refused", null, null, null]),
            json!(["like", null, "applied", "lost", "after", "drop"]),
            json!(["like", 200, "unchanged", null, null, null]),
            json!(["unlike", 404, "refused", null, null, null]),
            json!(["unlike", 500, "applied", "failed", "after", "status"]),
        ]
    );
    let read: Value = ok_json(t.admin(Method::GET, "/admin/faults", None).await).await;
    assert_eq!(
        read["state"],
        json!([
            {"matched": 2, "fired": 1, "acted": 1, "first_left": 0},
            {"matched": 1, "fired": 1, "acted": 1}
        ])
    );
    t.stop().await;
}

/// Rule bodies of the first fault language stay valid, and behave as they
/// did: a latency rule with a `status` and no `error_rate` only delays,
/// and a `drop_rate` of 1 drops every call before `fail_next` or
/// `error_rate` act. A `status` that nothing answers beside an action is
/// refused: it reads as the action's, and would never be answered.
#[tokio::test]
async fn first_language_rule_bodies_stay_valid() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    set_rules(
        &t,
        json!([
            {"route": "*", "latency_ms": 20, "status": 500, "error_rate": 0},
            {"route": "like", "drop_rate": 1, "error_rate": 0.5, "status": 500},
            {"route": "unlike", "drop_rate": 1, "fail_next": 2}
        ]),
    )
    .await;
    ok_json::<PostLikes>(t.view(1, 1).await).await;
    let err = t
        .as_user(1, Method::POST, "/posts/1/like")
        .send()
        .await
        .expect_err("dropped");
    assert!(err.status().is_none(), "{err:?}");
    let err = t
        .as_user(1, Method::DELETE, "/posts/1/like")
        .send()
        .await
        .expect_err("dropped");
    assert!(err.status().is_none(), "{err:?}");
    let read: Value = ok_json(t.admin(Method::GET, "/admin/faults", None).await).await;
    assert_eq!(
        read["state"],
        json!([
            {"matched": 3, "fired": 3, "acted": 0},
            {"matched": 1, "fired": 1, "acted": 1},
            {"matched": 1, "fired": 1, "acted": 1, "fail_next_left": 2}
        ])
    );
    let r = t
        .admin(
            Method::PUT,
            "/admin/faults",
            Some(json!({"rules": [{"route": "like", "status": 500,
                "action": {"kind": "drop"}}]})),
        )
        .await;
    let err = expect_error(r, StatusCode::BAD_REQUEST, "bad_fault_rules").await;
    assert!(
        err.error
            .message
            .starts_with("rules[0].status: 500 is what error_rate and fail_next answer"),
        "{err:?}"
    );
    t.stop().await;
}

/// In process, `set_faults` answers the rules as stored, with the seed the
/// server picked, and `faults` (or `faults_tagged`) reads them back with
/// what each has used up: an embedded test puts the seed of a failing run
/// back to replay it.
#[tokio::test]
async fn in_process_the_rules_come_back_with_their_seed() {
    use likekit_server::wire::admin::{FaultRoute, FaultRules, RuleState};
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    let rules = vec![
        FaultRule {
            probability: 0.5,
            error_rate: 1.0,
            tag: Some("coin".into()),
            ..FaultRule::new(FaultRoute::Likes)
        },
        FaultRule::new(FaultRoute::Like),
    ];
    let stored = t.server.set_faults(FaultRules::new(rules.clone())).unwrap();
    let seed = stored.seed.expect("the server picks a seed");
    assert_eq!(stored.rules, rules);
    assert_eq!(stored.state, [RuleState::default(); 2]);
    let mut first = Vec::new();
    for _ in 0..8 {
        first.push(t.view(1, 1).await.status().as_u16());
    }
    let read = t.server.faults();
    assert_eq!((read.seed, &read.rules), (Some(seed), &rules));
    assert_eq!(read.state[0].matched, 8);
    let mine = t.server.faults_tagged("coin").unwrap();
    assert_eq!((mine.seed, &mine.rules[..]), (Some(seed), &rules[..1]));
    assert!(t.server.faults_tagged("two words").is_err());
    // The seed replays the run.
    let replay = t
        .server
        .set_faults(FaultRules {
            seed: Some(seed),
            ..FaultRules::new(rules)
        })
        .unwrap();
    assert_eq!(replay.seed, Some(seed));
    let mut again = Vec::new();
    for _ in 0..8 {
        again.push(t.view(1, 1).await.status().as_u16());
    }
    assert_eq!(first, again);
    t.stop().await;
}

/// A request with a method its route does not take is answered 405 and is
/// not a like, unlike or read: no rule sees it (a `GET` rule's
/// `fail_next` is left for the next read) and the journal does not list
/// it. A batch read's posts are the handler's: decoded and trimmed.
#[tokio::test]
async fn wrong_methods_are_not_reads_and_batch_posts_are_the_handlers() {
    let t = TestServer::start().await;
    t.setup(&[], &[1, 2]).await;
    set_rules(
        &t,
        json!([{"route": "*", "method": "GET", "fail_next": 1, "status": 502}]),
    )
    .await;
    for (method, path) in [
        (Method::PUT, "/posts/1/likes"),
        (Method::PATCH, "/likes?posts=1"),
        (Method::PUT, "/posts/1/like"),
    ] {
        let r = t.as_user(1, method.clone(), path).send().await.unwrap();
        expect_error(r, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed").await;
    }
    assert_eq!(journal(&t).await, [], "405s are not journaled");
    assert_eq!(t.view(1, 1).await.status(), StatusCode::BAD_GATEWAY);

    // `posts=1,+2` is posts 1 and 2 to the handler, so to the rules and
    // the journal too.
    set_rules(
        &t,
        json!([{"route": "batch", "post": 2, "fail_next": 1, "status": 500}]),
    )
    .await;
    t.admin_client.clear_requests().await.unwrap();
    for query in ["posts=1,+2", "posts=1%2C%202"] {
        let path = format!("/likes?{query}");
        let _ = t.as_user(1, Method::GET, &path).send().await.unwrap();
    }
    let seen: Vec<_> = journal(&t)
        .await
        .into_iter()
        .map(|e| {
            (
                e.posts.iter().map(|p| p.get()).collect::<Vec<_>>(),
                e.status,
            )
        })
        .collect();
    assert_eq!(
        seen,
        [(vec![1, 2], Some(500)), (vec![1, 2], Some(200))],
        "the rule for post 2 fired on the first read"
    );
    t.stop().await;
}

/// The journal keeps a request's path and query whole up to 4 KiB (a
/// batch read of 100 of the longest ids among them), and only their first
/// 4 KiB past that, so that nobody can fill the server's memory through it.
#[tokio::test]
async fn the_journal_keeps_at_most_4_kib_of_a_path() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    t.admin_client.clear_requests().await.unwrap();
    let longest = vec![i64::MAX.to_string(); 100].join("%2C");
    let batch = format!("/likes?posts={longest}");
    let long = format!("/posts/1/likes?x={}", "a".repeat(60_000));
    for path in [&batch, &long] {
        // Answered or not (400, 401): journaled either way.
        let _ = t.as_user(1, Method::GET, path).send().await.unwrap();
        let _ = t.http.get(t.url(path)).send().await.unwrap();
    }
    let paths: Vec<String> = journal(&t).await.into_iter().map(|e| e.path).collect();
    assert_eq!(paths.len(), 4, "{paths:?}");
    assert_eq!(
        paths[0], batch,
        "a batch read of 100 long ids is kept whole"
    );
    assert_eq!(paths[1], batch);
    for cut in &paths[2..] {
        assert_eq!(cut.len(), 4096, "cut to 4 KiB");
        assert!(
            cut.starts_with("/posts/1/likes?x=aaa") && cut.ends_with("a…"),
            "{cut:.40}"
        );
    }
    t.stop().await;
}

/// Reads one answer's head (through the blank line) from `tcp`, and
/// nothing after it.
async fn read_head(tcp: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt as _;
    let mut head = Vec::new();
    let mut byte = [0_u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut byte))
            .await
            .expect("an answer's head")
            .unwrap();
        assert_eq!(n, 1, "closed after {}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap().to_ascii_lowercase()
}

/// A staged 204, 205 or 304 carries no body and no header that announces
/// one (a `Content-Length` of the error body's size on a 204 is invalid
/// HTTP, which OkHttp refuses), and the kept-alive connection goes on with
/// the next answer right after the head.
#[tokio::test]
async fn a_staged_status_without_a_body_sends_none() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    let staged = |nth: u64, status: u16| json!({"route": "likes", "nth": nth, "action": {"kind": "status", "status": status}});
    set_rules(&t, json!([staged(1, 204), staged(2, 304), staged(3, 205)])).await;
    let mut tcp = tokio::net::TcpStream::connect(t.server.addr())
        .await
        .unwrap();
    let request = format!(
        "GET /posts/1/likes HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {}\r\n\r\n",
        t.token(1)
    );
    for status in ["204", "304", "205"] {
        tcp.write_all(request.as_bytes()).await.unwrap();
        let head = read_head(&mut tcp).await;
        assert!(head.starts_with(&format!("http/1.1 {status} ")), "{head}");
        assert!(!head.contains("content-type:"), "{head}");
        if status == "205" {
            // RFC 9110 15.3.6: no content, which a length of 0 may say.
            assert!(head.contains("content-length: 0\r\n"), "{head}");
        } else {
            assert!(!head.contains("content-length:"), "{head}");
        }
        assert!(head.contains("x-request-id:"), "{head}");
    }
    // The next answer starts right after the last head: no stray body.
    tcp.write_all(request.as_bytes()).await.unwrap();
    let head = read_head(&mut tcp).await;
    assert!(head.starts_with("http/1.1 200 "), "{head}");
    let length: usize = head
        .split("content-length: ")
        .nth(1)
        .and_then(|rest| rest.split("\r\n").next())
        .unwrap()
        .parse()
        .unwrap();
    let mut body = vec![0; length];
    tcp.read_exact(&mut body).await.unwrap();
    serde_json::from_slice::<PostLikes>(&body).unwrap();

    // A body for such a status is refused, not dropped unsaid.
    let r = t
        .admin(
            Method::PUT,
            "/admin/faults",
            Some(json!({"rules": [{"route": "likes",
                "action": {"kind": "status", "status": 204, "body": {"ok": true}}}]})),
        )
        .await;
    let refusal = expect_error(r, StatusCode::BAD_REQUEST, "bad_fault_rules").await;
    assert!(refusal.error.message.contains("204"), "{refusal:?}");
    t.stop().await;
}

/// A rule that only delays a request is named in its journal entry
/// (`fault: "latency"`), from the moment the delay begins: also when its
/// delay ran into the request timeout, so that a tester can tell an
/// injected timeout from a real one.
#[tokio::test]
async fn a_latency_rule_is_named_in_the_journal() {
    let t = with_timeout_of_a_second().await;
    t.setup(&[], &[1]).await;
    set_rules(
        &t,
        json!([{"route": "likes", "post": 9, "action": {"kind": "drop"}},
               {"route": "likes", "nth": 1, "latency_ms": 1500},
               {"route": "like", "phase": "after", "latency_ms": 600}]),
    )
    .await;
    let slow = tokio::spawn({
        let like = t.as_user(1, Method::POST, "/posts/1/like").send();
        async move { like.await.unwrap() }
    });
    // While it waits, the entry in flight names the rule already.
    let entry = common::eventually(Duration::from_secs(5), "the like in flight", || async {
        journal(&t)
            .await
            .into_iter()
            .find(|e| e.in_flight && e.fault.is_some())
    })
    .await;
    assert_eq!(
        (entry.fault_rule, entry.fault_phase, entry.fault),
        (
            Some(2),
            Some(FaultPhase::After),
            Some(JournalFault::Latency)
        ),
        "{entry:?}"
    );
    ok_json::<LikeState>(slow.await.unwrap()).await;
    expect_error(
        t.view(1, 1).await,
        StatusCode::SERVICE_UNAVAILABLE,
        "timeout",
    )
    .await;
    let entries = journal(&t).await;
    let noted: Vec<_> = entries
        .iter()
        .map(|e| (e.status, e.write, e.fault_rule, e.fault_phase, e.fault))
        .collect();
    assert_eq!(
        noted,
        [
            (
                Some(200),
                Some(WriteResult::Applied),
                Some(2),
                Some(FaultPhase::After),
                Some(JournalFault::Latency)
            ),
            (
                Some(503),
                None,
                Some(1),
                Some(FaultPhase::Before),
                Some(JournalFault::Latency)
            ),
        ],
        "{entries:?}"
    );
    t.stop().await;
}

/// A server keeping no journal (`--journal-size 0`) answers 409
/// `journal_off` to reading or clearing it: its empty list would pass a
/// test asserting that no request was sent, without testing anything.
#[tokio::test]
async fn a_journal_that_is_off_is_409_not_an_empty_list() {
    let t = TestServer::with(likekit_server::Config {
        journal_size: 0,
        ..common::test_config()
    })
    .await;
    t.setup(&[], &[1]).await;
    assert_eq!(t.like(1, 1).await.status(), StatusCode::OK);
    for method in [Method::GET, Method::DELETE] {
        let r = t.admin(method.clone(), "/admin/requests", None).await;
        let body = expect_error(r, StatusCode::CONFLICT, "journal_off").await;
        assert!(
            body.error.message.contains("--journal-size"),
            "{method}: {body:?}"
        );
    }
    // A bad filter is still the first thing said.
    let r = t.admin(Method::GET, "/admin/requests?nope=1", None).await;
    expect_error(r, StatusCode::BAD_REQUEST, "bad_query").await;
    t.stop().await;
}

/// Every journal entry names its request's id, the one its answer carries
/// in `X-Request-Id` (the client's own, or one the server made), from its
/// arrival on; `request_id=` finds it.
#[tokio::test]
async fn the_journal_names_each_request_by_its_id() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    set_rules(&t, json!([{"route": "like", "latency_ms": 400}])).await;
    t.admin_client.clear_requests().await.unwrap();
    let slow = tokio::spawn({
        let like = t
            .as_user(1, Method::POST, "/posts/1/like")
            .header("x-request-id", "checkout-7f3a")
            .send();
        async move { like.await.unwrap() }
    });
    let in_flight = common::eventually(Duration::from_secs(5), "the like in flight", || async {
        journal(&t).await.into_iter().find(|e| e.in_flight)
    })
    .await;
    assert_eq!(in_flight.request_id, "checkout-7f3a", "{in_flight:?}");
    let liked = slow.await.unwrap();
    assert_eq!(liked.headers()["x-request-id"], "checkout-7f3a");
    // Without an id of its own, the request gets the server's.
    let viewed = t.view(1, 1).await;
    let made = viewed.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let ids: Vec<(String, bool)> = journal(&t)
        .await
        .into_iter()
        .map(|e| (e.request_id, e.in_flight))
        .collect();
    assert_eq!(
        ids,
        [("checkout-7f3a".to_owned(), false), (made.clone(), false)]
    );
    for (id, route, found) in [
        ("checkout-7f3a", "", 1),
        (made.as_str(), "", 1),
        (made.as_str(), "&route=like", 0),
        ("nobody", "", 0),
    ] {
        let r = t
            .admin(
                Method::GET,
                &format!("/admin/requests?request_id={id}{route}"),
                None,
            )
            .await;
        let page: likekit_server::wire::admin::Journal = ok_json(r).await;
        assert_eq!(page.entries.len(), found, "{id}{route}");
        assert!(page.entries.iter().all(|e| e.request_id == id));
    }
    t.stop().await;
}

/// `GET /admin/faults` reads the rules back as put, with what each has
/// used up beside them in `state`; the answer can be put back as it is,
/// and starts the counters over.
#[tokio::test]
async fn get_faults_says_what_each_rule_has_used_up() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    let rules = json!([
        {"route": "likes", "fail_next": 2},
        {"route": "*", "first": 5, "latency_ms": 1},
        {"route": "like", "nth": 1, "action": {"kind": "status", "status": 500}}
    ]);
    set_rules(&t, rules.clone()).await;
    async fn read(t: &TestServer) -> Value {
        ok_json(t.admin(Method::GET, "/admin/faults", None).await).await
    }
    let as_rules = |v: &Value| serde_json::from_value::<Vec<FaultRule>>(v.clone()).unwrap();
    let before = read(&t).await;
    assert_eq!(as_rules(&before["rules"]), as_rules(&rules));
    assert_eq!(
        before["state"],
        json!([
            {"matched": 0, "fired": 0, "acted": 0, "fail_next_left": 2},
            {"matched": 0, "fired": 0, "acted": 0, "first_left": 5},
            {"matched": 0, "fired": 0, "acted": 0}
        ])
    );
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(t.view(1, 1).await.status().as_u16());
    }
    statuses.push(t.like(1, 1).await.status().as_u16());
    assert_eq!(statuses, [503, 503, 200, 500]);
    let after = read(&t).await;
    assert_eq!(
        as_rules(&after["rules"]),
        as_rules(&rules),
        "the rules as put"
    );
    assert_eq!(
        after["state"],
        json!([
            {"matched": 3, "fired": 3, "acted": 2, "fail_next_left": 0},
            // The two failed reads: counted, but not fired on (an earlier
            // rule acted).
            {"matched": 4, "fired": 2, "acted": 0, "first_left": 1},
            {"matched": 1, "fired": 1, "acted": 1}
        ])
    );
    // The answer put back as it is: accepted, the counters start over.
    let r = t.admin(Method::PUT, "/admin/faults", Some(after)).await;
    let put: Value = ok_json(r).await;
    assert_eq!(put["state"], before["state"]);
    assert_eq!(t.view(1, 1).await.status(), StatusCode::SERVICE_UNAVAILABLE);
    // Cleared, there is nothing to report.
    t.admin(Method::DELETE, "/admin/faults", None).await;
    assert_eq!(read(&t).await, json!({"rules": []}));
    t.stop().await;
}

/// A `PUT` passes over a `state` whatever it is (read-only, and every
/// `PUT` starts the counters over): one missing fields, with unknown ones,
/// of another type, or `null`. The rest of the body is read as before:
/// an unknown field is still refused, naming `state` among those known.
#[tokio::test]
async fn put_ignores_any_state() {
    let t = TestServer::start().await;
    let rules = json!([{"route": "likes", "fail_next": 1}]);
    for state in [
        json!([{"matched": 5}]),
        json!([{"matched": 5, "fired": 5, "acted": 5, "bogus": 1}]),
        json!([{"matched": -1, "fired": "x", "acted": 1.5}]),
        json!([[5, 5, 5], 7, null]),
        json!({"matched": 5}),
        json!("used up"),
        json!(5),
        json!(null),
    ] {
        let r = t
            .admin(
                Method::PUT,
                "/admin/faults",
                Some(json!({"seed": 3, "rules": rules, "state": state})),
            )
            .await;
        let put: Value = ok_json(r).await;
        assert_eq!(put["seed"], json!(3), "{state}");
        assert_eq!(
            put["state"],
            json!([{"matched": 0, "fired": 0, "acted": 0, "fail_next_left": 1}]),
            "{state}"
        );
    }
    // A state given twice, before the rules: passed over too.
    let r = t
        .http
        .put(format!("{}/admin/faults", t.server.ops_url()))
        .header("X-Admin-Key", common::ADMIN_KEY)
        .header(header::CONTENT_TYPE, "application/json")
        .body(r#"{"state": 1, "state": [2], "rules": [{"route": "like"}]}"#)
        .send()
        .await
        .unwrap();
    let put: Value = ok_json(r).await;
    let put: Vec<FaultRule> = serde_json::from_value(put["rules"].clone()).unwrap();
    assert_eq!(put, [FaultRule::new(FaultRoute::Like)]);
    let r = t
        .admin(
            Method::PUT,
            "/admin/faults",
            Some(json!({"rules": rules, "state": [], "bogus": 1})),
        )
        .await;
    let refused = expect_error(r, StatusCode::BAD_REQUEST, "bad_json").await;
    assert!(
        refused
            .error
            .message
            .starts_with("bogus: unknown field `bogus`, expected one of `seed`, `rules`, `state`"),
        "{}",
        refused.error.message
    );
    let r = t
        .admin(
            Method::PUT,
            "/admin/faults",
            Some(json!({"seed": -1, "rules": rules, "state": 5})),
        )
        .await;
    let refused = expect_error(r, StatusCode::BAD_REQUEST, "bad_json").await;
    assert!(
        refused.error.message.starts_with("seed: invalid value"),
        "{}",
        refused.error.message
    );
    let r = t
        .admin(
            Method::PUT,
            "/admin/faults",
            Some(json!({"state": 5, "rules": [{"route": "like", "latency": 1}]})),
        )
        .await;
    let refused = expect_error(r, StatusCode::BAD_REQUEST, "bad_json").await;
    assert!(
        refused
            .error
            .message
            .starts_with("rules[0].latency: unknown field"),
        "{}",
        refused.error.message
    );
    t.stop().await;
}

/// `oversized` answers 200 with a JSON object of exactly the size asked,
/// down to 2 bytes (`{}`); below that it is refused, naming the field.
#[tokio::test]
async fn oversized_answers_exactly_the_size_asked() {
    let t = TestServer::start().await;
    t.setup(&[], &[1]).await;
    for bytes in [2_u64, 3, 13, 14, 15, 1000] {
        set_rules(
            &t,
            json!([{"route": "likes", "action": {"kind": "oversized", "bytes": bytes}}]),
        )
        .await;
        let r = t.view(1, 1).await;
        assert_eq!(r.status(), StatusCode::OK, "{bytes}");
        let body = r.bytes().await.unwrap();
        assert_eq!(body.len() as u64, bytes, "{bytes}: {body:?}");
        let json: Value = serde_json::from_slice(&body).unwrap();
        assert!(json.is_object(), "{bytes}: {json}");
    }
    for bytes in [0, 1] {
        let r = t
            .admin(
                Method::PUT,
                "/admin/faults",
                Some(json!({"rules": [{"route": "likes",
                    "action": {"kind": "oversized", "bytes": bytes}}]})),
            )
            .await;
        let refused = expect_error(r, StatusCode::BAD_REQUEST, "bad_fault_rules").await;
        assert!(
            refused
                .error
                .message
                .starts_with("rules[0].action.bytes: must be at least 2 "),
            "{}",
            refused.error.message
        );
        assert!(
            refused.error.message.ends_with(&format!("got {bytes}")),
            "{}",
            refused.error.message
        );
    }
    t.stop().await;
}

/// Two tests share one server. B's `fail_next: 1` rule fails B's first
/// like; A then adds a rule of its own with `POST`. B's rule stays used up
/// (B's next like goes through), and the seed stays; each test removes its
/// own rules by tag, the other's keeping their counters.
#[tokio::test]
async fn tests_sharing_a_server_add_and_remove_their_own_rules() {
    let t = TestServer::start().await;
    t.setup(&[], &[1, 2]).await;
    async fn add(t: &TestServer, rules: Value) -> Value {
        let r = t
            .admin(
                Method::POST,
                "/admin/faults",
                Some(json!({ "rules": rules })),
            )
            .await;
        ok_json(r).await
    }
    let b = add(
        &t,
        json!([{"route": "like", "user": 2, "post": 2, "fail_next": 1, "status": 500, "tag": "b"}]),
    )
    .await;
    let seed = b["seed"].as_u64().expect("a seed is picked");
    assert_eq!(
        t.like(2, 2).await.status(),
        StatusCode::INTERNAL_SERVER_ERROR
    );
    let a = add(
        &t,
        json!([{"route": "like", "user": 1, "post": 1, "fail_next": 1, "status": 500, "tag": "a"}]),
    )
    .await;
    assert_eq!(a["seed"], json!(seed), "the seed stays");
    let tags: Vec<&Value> = a["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["tag"])
        .collect();
    assert_eq!(tags, [&json!("b"), &json!("a")], "A's rule comes last");
    assert_eq!(
        a["state"],
        json!([
            {"matched": 1, "fired": 1, "acted": 1, "fail_next_left": 0},
            {"matched": 0, "fired": 0, "acted": 0, "fail_next_left": 1}
        ])
    );
    ok_json::<LikeState>(t.like(2, 2).await).await;
    assert_eq!(
        t.like(1, 1).await.status(),
        StatusCode::INTERNAL_SERVER_ERROR
    );
    ok_json::<LikeState>(t.like(1, 1).await).await;
    // A is done: only its rule goes, B's keeps what it used up.
    let r = t.admin(Method::DELETE, "/admin/faults?tag=a", None).await;
    let left: Value = ok_json(r).await;
    assert_eq!(left["seed"], json!(seed));
    assert_eq!(left["rules"].as_array().unwrap().len(), 1);
    assert_eq!(left["rules"][0]["tag"], "b");
    assert_eq!(
        left["state"],
        json!([{"matched": 2, "fired": 2, "acted": 1, "fail_next_left": 0}])
    );
    // The journal names each test's failed like by its rule's tag too,
    // which stays when a removal changes the rules' places.
    let r = t
        .admin(Method::GET, "/admin/requests?route=like", None)
        .await;
    let journal: Value = ok_json(r).await;
    let faulted: Vec<Value> = journal["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| !e["fault"].is_null())
        .map(|e| json!([e["user"], e["fault_rule"], e["fault_tag"]]))
        .collect();
    assert_eq!(faulted, [json!([2, 0, "b"]), json!([1, 1, "a"])]);
    ok_json::<LikeState>(t.unlike(2, 2).await).await;
    ok_json::<LikeState>(t.like(2, 2).await).await;
    // A tag no rule has removes nothing.
    let r = t.admin(Method::DELETE, "/admin/faults?tag=a", None).await;
    assert_eq!(
        ok_json::<Value>(r).await["rules"].as_array().unwrap().len(),
        1
    );
    let r = t.admin(Method::DELETE, "/admin/faults?tag=b", None).await;
    assert_eq!(
        ok_json::<Value>(r).await,
        json!({"seed": seed, "rules": []})
    );
    // Without a query, every rule and the seed go, as before.
    let r = t.admin(Method::DELETE, "/admin/faults", None).await;
    assert_eq!(ok_json::<Value>(r).await, json!({"rules": []}));
    t.stop().await;
}

/// A `POST` adds rules alone: a seed (the whole set's, for `PUT`), a
/// `state` (either even when null or empty) or a bad tag is refused,
/// naming its field, and one rule too many is a conflict; nothing is
/// added.
#[tokio::test]
async fn adding_refuses_a_seed_a_state_a_bad_tag_and_too_many_rules() {
    let t = TestServer::start().await;
    let put: Value = ok_json(
        t.admin(
            Method::PUT,
            "/admin/faults",
            Some(json!({"seed": 11, "rules": vec![json!({"route": "likes"}); 254]})),
        )
        .await,
    )
    .await;
    let like = json!({"route": "like"});
    for (body, code, starts) in [
        (
            json!({"seed": 7, "rules": [like]}),
            "bad_fault_rules",
            "seed: the seed belongs to the whole rule set; set it with PUT /admin/faults",
        ),
        // Even empty: the document's NewFaultRules has neither field.
        (
            json!({"seed": null, "rules": [like]}),
            "bad_fault_rules",
            "seed: the seed belongs to the whole rule set; set it with PUT /admin/faults",
        ),
        (
            json!({"rules": [like], "state": [{"matched": 0, "fired": 0, "acted": 0}]}),
            "bad_fault_rules",
            "state: read-only",
        ),
        (
            json!({"rules": [like], "state": []}),
            "bad_fault_rules",
            "state: read-only",
        ),
        (
            json!({"rules": [like, {"route": "like", "tag": "two words"}]}),
            "bad_fault_rules",
            "rules[1].tag: must be 1 to 64 visible ASCII characters (! to ~); got \"two words\"",
        ),
        (
            json!({"rules": [{"route": "like", "tag": ""}]}),
            "bad_fault_rules",
            "rules[0].tag: must be 1 to 64 visible ASCII characters (! to ~); got \"\"",
        ),
        (
            json!({"rules": [{"route": "like", "tag": "t".repeat(65)}]}),
            "bad_fault_rules",
            "rules[0].tag: must be 1 to 64",
        ),
        (
            json!({"rules": [{"route": "like", "tag": 5}]}),
            "bad_json",
            "rules[0].tag: invalid type",
        ),
    ] {
        let r = t
            .admin(Method::POST, "/admin/faults", Some(body.clone()))
            .await;
        let err = expect_error(r, StatusCode::BAD_REQUEST, code).await;
        assert!(
            err.error.message.starts_with(starts),
            "{body}: {}",
            err.error.message
        );
    }
    // Rules that are fine, but one too many for the set: a conflict.
    let r = t
        .admin(
            Method::POST,
            "/admin/faults",
            Some(json!({"rules": [like, like, like]})),
        )
        .await;
    let err = expect_error(r, StatusCode::CONFLICT, "too_many_rules").await;
    assert!(
        err.error.message.starts_with(
            "rules: at most 256 rules in force; 254 are, and 3 more would make 257 (the most: "
        ),
        "{}",
        err.error.message
    );
    let now: Value = ok_json(t.admin(Method::GET, "/admin/faults", None).await).await;
    assert_eq!(now, put, "nothing was added");
    // The count is checked first: rules that are wrong as well are still
    // too many.
    let r = t
        .admin(
            Method::POST,
            "/admin/faults",
            Some(json!({"rules": [like, {"route": "like", "probability": 2}, like]})),
        )
        .await;
    expect_error(r, StatusCode::CONFLICT, "too_many_rules").await;
    // A PUT refuses a bad tag the same way.
    let r = t
        .admin(
            Method::PUT,
            "/admin/faults",
            Some(json!({"rules": [{"route": "like", "tag": "é"}]})),
        )
        .await;
    let err = expect_error(r, StatusCode::BAD_REQUEST, "bad_fault_rules").await;
    assert!(err.error.message.starts_with("rules[0].tag: "), "{err:?}");
    // Up to 256 in all is fine.
    let r = t
        .admin(
            Method::POST,
            "/admin/faults",
            Some(json!({"rules": [like, like]})),
        )
        .await;
    let full: Value = ok_json(r).await;
    assert_eq!(full["rules"].as_array().unwrap().len(), 256);
    assert_eq!(full["seed"], json!(11));
    t.stop().await;
}

/// `GET /admin/faults?tag=…` reads one test's rules and what each has used
/// up, in their order, with the seed; another key, or a tag no rule could
/// have, is refused with the field named.
#[tokio::test]
async fn reading_faults_by_tag_answers_that_tags_rules_only() {
    let t = TestServer::start().await;
    set_rules(
        &t,
        json!([
            {"route": "like", "tag": "a", "fail_next": 1},
            {"route": "likes", "tag": "b"},
            {"route": "unlike", "tag": "a"}
        ]),
    )
    .await;
    let all: Value = ok_json(t.admin(Method::GET, "/admin/faults", None).await).await;
    let mine: Value = ok_json(t.admin(Method::GET, "/admin/faults?tag=a", None).await).await;
    assert_eq!(mine["seed"], all["seed"]);
    assert_eq!(mine["rules"], json!([all["rules"][0], all["rules"][2]]));
    assert_eq!(mine["state"], json!([all["state"][0], all["state"][2]]));
    let none: Value = ok_json(t.admin(Method::GET, "/admin/faults?tag=c", None).await).await;
    assert_eq!(none["rules"], json!([]), "{none}");
    assert_eq!(none["state"].as_array().map_or(0, Vec::len), 0, "{none}");
    for query in ["?bogus=1", "?tag=a&user=7", "?tag=", "?tag=two%20words"] {
        let r = t
            .admin(Method::GET, &format!("/admin/faults{query}"), None)
            .await;
        let err = expect_error(r, StatusCode::BAD_REQUEST, "bad_query").await;
        if query == "?bogus=1" {
            assert_eq!(
                err.error.message,
                "bogus: unknown field `bogus`, expected `tag`"
            );
        }
    }
    t.stop().await;
}

/// `DELETE /admin/faults` takes `tag` and nothing else: another key, or a
/// tag no rule could have, is refused and removes nothing.
#[tokio::test]
async fn removing_faults_takes_a_tag_and_nothing_else() {
    let t = TestServer::start().await;
    set_rules(
        &t,
        json!([{"route": "like", "tag": "a"}, {"route": "likes"}]),
    )
    .await;
    for query in [
        "?bogus=1",
        "?tag=a&user=7",
        "?tag=",
        "?tag=two%20words",
        "?tag=%C3%A9",
    ] {
        let r = t
            .admin(Method::DELETE, &format!("/admin/faults{query}"), None)
            .await;
        let err = expect_error(r, StatusCode::BAD_REQUEST, "bad_query").await;
        if query.starts_with("?tag=") && !query.contains('&') {
            assert!(
                err.error.message.starts_with("tag: must be 1 to 64"),
                "{err:?}"
            );
        }
    }
    let now: Value = ok_json(t.admin(Method::GET, "/admin/faults", None).await).await;
    assert_eq!(now["rules"].as_array().unwrap().len(), 2, "{now}");
    t.stop().await;
}

/// A test sharing the server reads and removes the journal entries its
/// own tagged rules acted on (or delayed) with `fault_tag=…`: another
/// tag's entries, and those no rule touched, stay. A `fault_tag` no rule
/// could have is refused as `/admin/faults` refuses such a `tag`, naming
/// the key, and removes nothing.
#[tokio::test]
async fn the_journal_reads_and_removes_by_the_rules_tag() {
    let t = TestServer::start().await;
    t.setup(&[], &[1, 2]).await;
    set_rules(
        &t,
        json!([
            {"route": "like", "user": 1, "fail_next": 1, "status": 500, "tag": "a"},
            {"route": "likes", "user": 2, "latency_ms": 1, "tag": "b"}
        ]),
    )
    .await;
    expect_error(
        t.like(1, 1).await,
        StatusCode::INTERNAL_SERVER_ERROR,
        "injected_fault",
    )
    .await;
    ok_json::<LikeState>(t.like(1, 1).await).await;
    ok_json::<PostLikes>(t.view(2, 2).await).await;
    ok_json::<LikeState>(t.like(3, 2).await).await;
    // [user, status, fault_tag, fault] of each entry `query` selects.
    let read = |query: &'static str| {
        let t = &t;
        async move {
            let r = t
                .admin(Method::GET, &format!("/admin/requests{query}"), None)
                .await;
            let journal: Value = ok_json(r).await;
            let entries = journal["entries"].as_array().expect("entries").iter();
            Value::from_iter(
                entries.map(|e| json!([e["user"], e["status"], e["fault_tag"], e["fault"]])),
            )
        }
    };
    let a = json!([1, 500, "a", "status"]);
    let b = json!([2, 200, "b", "latency"]);
    let (untouched_1, untouched_3) = (json!([1, 200, null, null]), json!([3, 200, null, null]));
    assert_eq!(read("?fault_tag=a").await, json!([a]));
    assert_eq!(read("?fault_tag=b").await, json!([b]));
    assert_eq!(read("?fault_tag=a&route=like&user=1").await, json!([a]));
    assert_eq!(read("?fault_tag=a&user=2").await, json!([]));
    assert_eq!(read("?fault_tag=c").await, json!([]), "a tag no rule has");
    let too_long = format!("?fault_tag={}", "t".repeat(65));
    for query in [
        "?fault_tag=",
        "?fault_tag=two%20words",
        "?fault_tag=%C3%A9",
        &too_long,
    ] {
        for method in [Method::GET, Method::DELETE] {
            let r = t
                .admin(method.clone(), &format!("/admin/requests{query}"), None)
                .await;
            let err = expect_error(r, StatusCode::BAD_REQUEST, "bad_query").await;
            assert!(
                err.error.message.starts_with(
                    "fault_tag: must be 1 to 64 visible ASCII characters (! to ~); got \""
                ),
                "{method} {query}: {}",
                err.error.message
            );
        }
    }
    let r = t
        .admin(Method::GET, "/admin/requests?fault_tag=two%20words", None)
        .await;
    let err = expect_error(r, StatusCode::BAD_REQUEST, "bad_query").await;
    assert_eq!(
        err.error.message,
        "fault_tag: must be 1 to 64 visible ASCII characters (! to ~); got \"two words\""
    );
    assert_eq!(
        read("").await,
        json!([a, untouched_1, b, untouched_3]),
        "a refused removal removes nothing"
    );
    // A is done: its entries go; B's, and the untouched ones, stay.
    let r = t
        .admin(Method::DELETE, "/admin/requests?fault_tag=a", None)
        .await;
    assert_eq!(ok_json::<Value>(r).await, json!({"ok": true}));
    assert_eq!(read("").await, json!([untouched_1, b, untouched_3]));
    assert_eq!(read("?fault_tag=a").await, json!([]));
    assert_eq!(read("?fault_tag=b").await, json!([b]));
    t.stop().await;
}

/// `POST /admin/reset` takes no query: one is refused, not read as
/// "everything". `DELETE /admin/requests` takes the journal's filters and
/// removes only what they match; an unknown one is refused.
#[tokio::test]
async fn reset_refuses_a_query_and_emptying_the_journal_takes_its_filters() {
    let t = TestServer::start().await;
    t.setup(&[], &[42, 43]).await;
    ok_json::<LikeState>(t.like(7, 42).await).await;
    ok_json::<LikeState>(t.like(7, 43).await).await;
    ok_json::<LikeState>(t.like(8, 42).await).await;
    let r = t.admin(Method::POST, "/admin/reset?post=42", None).await;
    let err = expect_error(r, StatusCode::BAD_REQUEST, "bad_query").await;
    assert_eq!(
        err.error.message,
        "POST /admin/reset takes no query: it drops the likes of every post; got \"post=42\""
    );
    assert_eq!(
        (count(&t, 42).await, count(&t, 43).await),
        (2, 1),
        "nothing was reset"
    );
    for query in ["?bogus=1", "?user=0", "?route=toggle"] {
        let r = t
            .admin(Method::DELETE, &format!("/admin/requests{query}"), None)
            .await;
        expect_error(r, StatusCode::BAD_REQUEST, "bad_query").await;
    }
    assert_eq!(journal(&t).await.len(), 3, "nothing was removed");
    // One test's entries go; the other's stay.
    let r = t
        .admin(Method::DELETE, "/admin/requests?user=8", None)
        .await;
    assert_eq!(ok_json::<Value>(r).await, json!({"ok": true}));
    let left = journal(&t).await;
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(
        left.iter().all(|e| e.user.map(|u| u.get()) == Some(7)),
        "{left:?}"
    );
    let r = t
        .admin(Method::DELETE, "/admin/requests?user=7&post=43", None)
        .await;
    assert_eq!(ok_json::<Value>(r).await, json!({"ok": true}));
    let left = journal(&t).await;
    assert_eq!(left.len(), 1, "{left:?}");
    let posts: Vec<u64> = left[0].posts.iter().map(|p| p.get()).collect();
    assert_eq!(posts, [42], "{left:?}");
    let r = t.admin(Method::DELETE, "/admin/requests", None).await;
    assert_eq!(ok_json::<Value>(r).await, json!({"ok": true}));
    assert!(journal(&t).await.is_empty());
    let r = t.admin(Method::POST, "/admin/reset", None).await;
    assert_eq!(ok_json::<Value>(r).await, json!({"ok": true}));
    assert_eq!((count(&t, 42).await, count(&t, 43).await), (0, 0));
    t.stop().await;
}

/// The served OpenAPI document says of a rule what the server refuses:
/// each of these bodies is valid by the document's `FaultRules` schema
/// exactly when `PUT /admin/faults` takes it. A contract test sends what
/// the document allows, and must see it taken.
#[tokio::test]
async fn the_document_allows_exactly_the_rules_the_server_takes() {
    let t = with_timeout_of_a_second().await;
    let doc: Value = t
        .http
        .get(t.url("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut root = json!({"$ref": "#/components/schemas/FaultRules"});
    root["components"] = doc["components"].clone();
    let schema = jsonschema::draft202012::new(&root).unwrap();
    let drop = json!({"kind": "drop"});
    let bodies = [
        // The first language's fields among themselves.
        json!({"route": "*", "latency_ms": 2000, "status": 500, "error_rate": 0}),
        json!({"route": "like", "drop_rate": 1, "error_rate": 0.5, "status": 500}),
        json!({"route": "like", "drop_rate": 1, "fail_next": 2}),
        json!({"route": "like", "drop_rate": 0.2, "status": 502}),
        json!({"route": "like", "jitter_ms": 5, "status": 429}),
        json!({"route": "like", "latency_ms": 5_000, "error_rate": 1}),
        json!({"route": "like"}),
        // A status nothing answers, on a rule that does nothing else:
        // a first-language body, taken.
        json!({"route": "like", "status": 500}),
        json!({"route": "like", "status": 500, "error_rate": 0}),
        json!({"route": "like", "status": 500, "action": {"kind": "status", "status": 500}}),
        json!({"route": "like", "status": 503, "action": drop}),
        // A status beside an action reads as the action's.
        json!({"route": "like", "status": 500, "latency_ms": 5, "action": drop}),
        json!({"route": "like", "status": 500, "fail_next": 1, "action": drop}),
        // An action behind a drop or an error on every call.
        json!({"route": "like", "drop_rate": 1, "action": drop}),
        json!({"route": "like", "error_rate": 1, "action": drop}),
        json!({"route": "like", "drop_rate": 1, "action": null}),
        // An action behind the request timeout (one second here).
        json!({"route": "like", "latency_ms": 999, "action": drop}),
        json!({"route": "like", "latency_ms": 1_000, "action": drop}),
        json!({"route": "like", "latency_ms": 999, "jitter_ms": 5_000, "action": drop}),
        json!({"route": "like", "latency_ms": 1_000, "action": null}),
        // The smallest JSON object is `{}`.
        json!({"route": "like", "action": {"kind": "oversized", "bytes": 0}}),
        json!({"route": "like", "action": {"kind": "oversized", "bytes": 1}}),
        json!({"route": "like", "action": {"kind": "oversized", "bytes": 2}}),
    ];
    for rule in bodies {
        let body = json!({"rules": [rule]});
        let allowed = schema.is_valid(&body);
        let r = t
            .admin(Method::PUT, "/admin/faults", Some(body.clone()))
            .await;
        let status = r.status();
        let answer = r.text().await.unwrap();
        assert_eq!(
            status.is_success(),
            allowed,
            "{body}: the document {} it, the server answered {status} {answer}",
            if allowed { "allows" } else { "refuses" }
        );
    }
    t.stop().await;
}
