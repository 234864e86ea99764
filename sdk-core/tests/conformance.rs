//! The conformance suite, `conformance/scenarios.json`, run twice here: on
//! the bare machine (timers fired at once) and on the client over a
//! [`ScriptedServer`]. The Kotlin, Python, JavaScript and Swift runners
//! replay the same file through their bindings.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use likekit_core::wire::{LikeState, PostLikes};
use likekit_core::{
    Action, CallId, Effect, LikeClient, LikeEvent, Machine, MachineConfig, PostId, PostView,
    RetryPolicy, ScriptedFailure, ScriptedServer,
};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Suite {
    format: u32,
    #[allow(dead_code)]
    about: Vec<String>,
    scenarios: Vec<Scenario>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Scenario {
    name: String,
    covers: Vec<String>,
    #[allow(dead_code)]
    about: String,
    #[serde(default)]
    max_retries: usize,
    steps: Vec<Step>,
}

#[derive(Deserialize, Clone)]
struct Step {
    #[serde(flatten)]
    act: Act,
    view: Value,
    events: Vec<Value>,
    calls: Vec<String>,
}

#[derive(Deserialize, Clone)]
#[serde(tag = "do", rename_all = "snake_case")]
enum Act {
    Read { post: u64, likes: Likes },
    Tap { post: u64, liked: bool },
    Answer { call: u64, state: State },
    Fail { call: u64, failure: Failure },
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Likes {
    count: u64,
    liked_by_me: bool,
    friends: Vec<String>,
    version: u64,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct State {
    count: u64,
    liked_by_me: bool,
    version: u64,
}

#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum Failure {
    Kind(String),
    Status {
        status: u16,
        #[serde(default)]
        retry_after_ms: Option<u64>,
        #[serde(default)]
        code: Option<String>,
    },
}

impl Failure {
    fn scripted(&self) -> ScriptedFailure {
        match self {
            Self::Kind(kind) => match kind.as_str() {
                "network" => ScriptedFailure::Network,
                "timeout" => ScriptedFailure::Timeout,
                "unreadable" => ScriptedFailure::Unreadable,
                other => panic!("unknown failure {other:?}"),
            },
            Self::Status {
                status,
                retry_after_ms,
                code,
            } => ScriptedFailure::Status {
                status: *status,
                retry_after_ms: *retry_after_ms,
                code: code.clone(),
            },
        }
    }
}

fn suite_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("conformance/scenarios.json")
}

fn suite() -> Suite {
    let text = std::fs::read_to_string(suite_path()).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn id(n: u64) -> PostId {
    PostId::new(n).unwrap()
}

fn likes(l: &Likes) -> PostLikes {
    PostLikes {
        count: l.count,
        liked_by_me: l.liked_by_me,
        friends: l.friends.clone(),
        version: l.version,
    }
}

fn state(s: &State) -> LikeState {
    LikeState {
        count: s.count,
        liked_by_me: s.liked_by_me,
        version: s.version,
    }
}

/// A view as the scenarios write it.
fn view_json(v: &PostView) -> Value {
    json!({
        "post": v.post_id.get(),
        "liked": v.liked,
        "count": v.count,
        "pending": v.pending,
        "line": v.line.to_string(),
        "error": v.error.as_ref().map(|e| e.code().to_owned()),
    })
}

fn event_json(e: &LikeEvent) -> Value {
    match e {
        LikeEvent::Changed(v) => json!({ "changed": view_json(v) }),
        LikeEvent::Failed(f) => json!({ "failed": {
            "post": f.post_id.get(),
            "wanted": f.wanted,
            "error": f.error.code(),
        }}),
    }
}

fn call_text(action: Action, post: PostId, id: u64) -> String {
    let verb = if action == Action::Like {
        "like"
    } else {
        "unlike"
    };
    format!("{verb} {post} #{id}")
}

/// What one step produced, to compare with what it expects.
struct Seen {
    view: Value,
    events: Vec<Value>,
    calls: Vec<String>,
}

/// Compares what step `index` produced with what it expects.
fn check(
    scenario: &Scenario,
    index: usize,
    step: &Step,
    view: &PostView,
    events: Vec<Value>,
    calls: Vec<String>,
) -> Result<(), String> {
    let seen = Seen {
        view: view_json(view),
        events,
        calls,
    };
    let mut wrong = Vec::new();
    if seen.view != step.view {
        wrong.push(format!("view: expected {} got {}", step.view, seen.view));
    }
    if seen.events != step.events {
        wrong.push(format!(
            "events: expected {} got {}",
            Value::from(step.events.clone()),
            Value::from(seen.events.clone())
        ));
    }
    if seen.calls != step.calls {
        wrong.push(format!(
            "calls: expected {:?} got {:?}",
            step.calls, seen.calls
        ));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "scenario {:?}, step {index}: {}",
            scenario.name,
            wrong.join("; ")
        ))
    }
}

/// The scenario on the bare machine: each step's effects collected, every
/// wait over at once.
fn run_on_machine(scenario: &Scenario) -> Result<(), String> {
    let mut m = Machine::new(MachineConfig {
        retry: RetryPolicy {
            max_retries: scenario.max_retries,
            jitter: false,
            ..RetryPolicy::default()
        },
        ..MachineConfig::default()
    });
    // Scenario call number -> the machine's call.
    let mut sent: Vec<(PostId, CallId, Action)> = Vec::new();
    let mut waiting: Vec<u64> = Vec::new();
    for (index, step) in scenario.steps.iter().enumerate() {
        let mut events = Vec::new();
        let returned = match &step.act {
            Act::Read { post, likes: l } => Some(m.snapshot(id(*post), likes(l))),
            Act::Tap { post, liked } => Some(m.tap(id(*post), *liked)),
            Act::Answer { call, state: s } => {
                let (post, call_id, _) = sent[usize::try_from(*call).unwrap()];
                assert!(waiting.contains(call), "call #{call} is not waiting");
                waiting.retain(|c| c != call);
                m.response(post, call_id, Ok(state(s)));
                None
            }
            Act::Fail { call, failure } => {
                let (post, call_id, _) = sent[usize::try_from(*call).unwrap()];
                assert!(waiting.contains(call), "call #{call} is not waiting");
                waiting.retain(|c| c != call);
                m.response(post, call_id, Err(failure.scripted().into_error()));
                None
            }
        };
        loop {
            let mut timers = Vec::new();
            for effect in m.drain_effects().collect::<Vec<_>>() {
                match effect {
                    Effect::Send { post, call, action } => {
                        waiting.push(sent.len() as u64);
                        sent.push((post, call, action));
                    }
                    Effect::Wait { post, call, .. } => timers.push((post, call)),
                    Effect::Changed(view) => events.push(event_json(&LikeEvent::Changed(view))),
                    // What a journal keeps is no event.
                    Effect::Intent { .. } => {}
                    Effect::Failed {
                        post,
                        wanted,
                        error,
                    } => events.push(event_json(&LikeEvent::Failed(likekit_core::LikeFailure {
                        post_id: post,
                        wanted,
                        error,
                    }))),
                }
            }
            if timers.is_empty() {
                break;
            }
            for (post, call) in timers {
                m.timer(post, call);
            }
        }
        let view = match (&step.act, returned) {
            (_, Some(view)) => view,
            (Act::Answer { call, .. } | Act::Fail { call, .. }, None) => {
                let post = sent[usize::try_from(*call).unwrap()].0;
                m.view(post).unwrap()
            }
            _ => unreachable!(),
        };
        let calls = waiting
            .iter()
            .map(|&c| {
                let (post, _, action) = sent[usize::try_from(c).unwrap()];
                call_text(action, post, c)
            })
            .collect();
        check(scenario, index, step, &view, events, calls)?;
    }
    Ok(())
}

/// How long the client runner waits for an expected event or call.
const SETTLE: Duration = Duration::from_secs(2);

/// The scenario on the client, over a [`ScriptedServer`]: as the bindings'
/// runners do it.
async fn run_on_client(scenario: &Scenario) -> Result<(), String> {
    let server = ScriptedServer::new();
    let client = LikeClient::builder()
        .transport(server.clone())
        .retry_policy(RetryPolicy {
            min_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
            max_retries: scenario.max_retries,
            jitter: false,
            ..RetryPolicy::default()
        })
        .build()
        .unwrap();
    let heard: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = Arc::clone(&heard);
    let _all = client.subscribe_all(move |e: &LikeEvent| sink.lock().unwrap().push(event_json(e)));
    let mut posts: HashMap<u64, PostId> = HashMap::new();
    let mut taken = 0;
    for (index, step) in scenario.steps.iter().enumerate() {
        let view = match &step.act {
            Act::Read { post, likes: l } => {
                server.set_post(id(*post), likes(l));
                client.refresh(id(*post)).await.unwrap()
            }
            Act::Tap { post, liked } => client.set_liked(id(*post), *liked),
            Act::Answer { call, state: s } => {
                let post = posts[call];
                assert!(
                    server.answer(*call, Ok(state(s))),
                    "call #{call} is not waiting"
                );
                settle_view(&client, post, &step.view).await
            }
            Act::Fail { call, failure } => {
                let post = posts[call];
                assert!(
                    server.fail(*call, failure.scripted()),
                    "call #{call} is not waiting"
                );
                settle_view(&client, post, &step.view).await
            }
        };
        // The expected events, or as many as come within SETTLE; then the
        // expected calls, or what is out after SETTLE.
        let deadline = Instant::now() + SETTLE;
        while heard.lock().unwrap().len() < taken + step.events.len() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let calls = loop {
            let calls: Vec<String> = server.calls().iter().map(ToString::to_string).collect();
            if calls == step.calls || Instant::now() >= deadline {
                break calls;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        for call in server.calls() {
            posts.insert(call.id, call.post);
        }
        if calls.is_empty() {
            // Nothing is out: once idle, every event has been heard.
            client.wait_idle(SETTLE).await;
        }
        let events: Vec<Value> = heard.lock().unwrap()[taken..].to_vec();
        taken += events.len();
        // An answer's view once everything settled: the first look may
        // still be the view from before the answer.
        let view = match &step.act {
            Act::Answer { call, .. } | Act::Fail { call, .. } => client.view(posts[call]).unwrap(),
            Act::Read { .. } | Act::Tap { .. } => view,
        };
        check(scenario, index, step, &view, events, calls)?;
    }
    Ok(())
}

/// The post's view once it is `expected`, or as it is after SETTLE.
async fn settle_view(client: &LikeClient, post: PostId, expected: &Value) -> PostView {
    let deadline = Instant::now() + SETTLE;
    loop {
        let view = client.view(post).unwrap();
        if view_json(&view) == *expected || Instant::now() >= deadline {
            return view;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

#[test]
fn the_file_is_well_formed_and_covers_the_required_cases() {
    let suite = suite();
    assert_eq!(suite.format, 1);
    let mut names = std::collections::HashSet::new();
    for s in &suite.scenarios {
        assert!(
            names.insert(s.name.clone()),
            "two scenarios named {:?}",
            s.name
        );
        assert!(!s.steps.is_empty(), "{:?} has no steps", s.name);
    }
    let covered: std::collections::HashSet<&str> = suite
        .scenarios
        .iter()
        .flat_map(|s| s.covers.iter().map(String::as_str))
        .collect();
    for case in [
        "seed_table",
        "train",
        "rapid_taps",
        "refresh_during_pending",
        "stale_read",
        "rollback_once",
        "unread_post",
    ] {
        assert!(covered.contains(case), "no scenario covers {case}");
    }
}

/// Every scenario's mismatch, one per line; empty when all held.
fn mismatches(results: impl IntoIterator<Item = Result<(), String>>) -> String {
    let failed: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    failed.join("\n")
}

/// Every scenario on a client, on the runtime the test runs on.
async fn mismatches_on_the_client() -> String {
    let mut results = Vec::new();
    for scenario in suite().scenarios {
        results.push(run_on_client(&scenario).await);
    }
    mismatches(results)
}

#[test]
fn every_scenario_holds_on_the_machine() {
    let failed = mismatches(suite().scenarios.iter().map(run_on_machine));
    assert!(failed.is_empty(), "{failed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_holds_on_the_client() {
    let failed = mismatches_on_the_client().await;
    assert!(failed.is_empty(), "{failed}");
}

/// The first scenario with one expected count changed.
fn with_a_wrong_count() -> Scenario {
    let mut scenario = suite().scenarios.remove(0);
    let step = scenario
        .steps
        .iter_mut()
        .rev()
        .find(|s| s.view.get("count").is_some())
        .unwrap();
    let count = step.view["count"].as_u64().unwrap();
    step.view["count"] = json!(count + 1);
    scenario
}

#[test]
fn the_machine_runner_fails_a_changed_expectation() {
    let error = run_on_machine(&with_a_wrong_count()).unwrap_err();
    assert!(error.contains("view: expected"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_runner_fails_a_changed_expectation() {
    let error = run_on_client(&with_a_wrong_count()).await.unwrap_err();
    assert!(error.contains("view: expected"), "{error}");
}

/// The first scenario with its last answer expected to leave the view
/// pending: the view from before the answer, which a runner that looked
/// only once, too early, would accept.
fn expecting_the_view_before_the_answer() -> Scenario {
    let mut scenario = suite().scenarios.remove(0);
    let step = scenario
        .steps
        .iter_mut()
        .rev()
        .find(|s| matches!(s.act, Act::Answer { .. }))
        .unwrap();
    assert_eq!(step.view["pending"], json!(false));
    step.view["pending"] = json!(true);
    scenario
}

/// On one thread the client takes an answer in only when the runner waits,
/// so a runner that took the first view it saw would pass this scenario.
#[tokio::test(flavor = "current_thread")]
async fn the_client_runner_looks_at_an_answers_view_once_it_settled() {
    let error = run_on_client(&expecting_the_view_before_the_answer())
        .await
        .unwrap_err();
    assert!(error.contains("view: expected"), "{error}");
    let error = run_on_machine(&expecting_the_view_before_the_answer()).unwrap_err();
    assert!(error.contains("view: expected"), "{error}");
}

#[tokio::test(flavor = "current_thread")]
async fn every_scenario_holds_on_a_one_thread_client() {
    let failed = mismatches_on_the_client().await;
    assert!(failed.is_empty(), "{failed}");
}
