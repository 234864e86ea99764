// The conformance suite (sdk-core/conformance/scenarios.json) replayed
// through the built web package: each scenario on a `LikeClient.scripted`
// over a `ScriptedServer`, the way sdk-core/tests/conformance.rs runs it on
// the Rust client. Run it with `cargo xtask test --only node`, which passes
// the file's path as LIKEKIT_CONFORMANCE.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";

import init, { LikeClient, ScriptedServer } from "likekit-wasm";

const SCENARIOS = process.env.LIKEKIT_CONFORMANCE;
if (!SCENARIOS) {
  throw new Error("run with `cargo xtask test --only node` (LIKEKIT_CONFORMANCE is unset)");
}

const suite = JSON.parse(readFileSync(SCENARIOS, "utf8"));
assert.equal(suite.format, 1, `${SCENARIOS}: unknown format`);

/** How long the runner waits for an expected view, event or call, in ms. */
const SETTLE_MS = 2_000;

/** Lets the event loop run: the client's answers, retries and events come on it. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

/** A post id as the scenarios write it: a number (their ids are small). */
function postNumber(id) {
  if (typeof id === "string" && Number.isSafeInteger(Number(id))) return Number(id);
  return id;
}

/** A view as the scenarios write it. */
function viewJson(view) {
  if (view === undefined || view === null) return null;
  return {
    post: postNumber(view.postId),
    liked: view.liked,
    count: view.count,
    pending: view.pending,
    line: view.line,
    error: view.error ? view.error.code : null,
  };
}

/** An event as the scenarios write it. */
function eventJson(event) {
  switch (event.kind) {
    case "changed":
      return { changed: viewJson(event.view) };
    case "failed":
      return {
        failed: {
          post: postNumber(event.failure.postId),
          wanted: event.failure.wanted,
          error: event.failure.error.code,
        },
      };
    default:
      return { unknown: event };
  }
}

/** A read's post, as `ScriptedServer.setPost` takes it. */
const scriptedLikes = (likes) => ({
  count: likes.count,
  likedByMe: likes.liked_by_me,
  friends: likes.friends,
  version: likes.version,
});

/** An answer's state, as `ScriptedServer.answer` takes it. */
const scriptedState = (state) => ({
  count: state.count,
  likedByMe: state.liked_by_me,
  version: state.version,
});

/** A failure, as `ScriptedServer.fail` takes it. */
function scriptedFailure(failure) {
  if (typeof failure === "string") return failure;
  const out = { status: failure.status };
  if (failure.retry_after_ms !== undefined) out.retryAfterMs = failure.retry_after_ms;
  if (failure.code !== undefined) out.code = failure.code;
  return out;
}

const show = (value) => JSON.stringify(value);

/** What one step produced against what it expects: throws naming every difference. */
function check(scenario, index, step, seen) {
  const wrong = [];
  if (!isDeepStrictEqual(seen.view, step.view)) {
    wrong.push(`view: expected ${show(step.view)} got ${show(seen.view)}`);
  }
  if (!isDeepStrictEqual(seen.events, step.events)) {
    wrong.push(`events: expected ${show(step.events)} got ${show(seen.events)}`);
  }
  if (!isDeepStrictEqual(seen.calls, step.calls)) {
    wrong.push(`calls: expected ${show(step.calls)} got ${show(seen.calls)}`);
  }
  if (wrong.length > 0) {
    throw new assert.AssertionError({
      message: `scenario ${show(scenario.name)}, step ${index}: ${wrong.join("; ")}`,
    });
  }
}

/** Waits until the post's view is `expected`, or SETTLE_MS. */
async function settleView(client, post, expected) {
  const deadline = Date.now() + SETTLE_MS;
  while (!isDeepStrictEqual(viewJson(client.view(post)), expected) && Date.now() < deadline) {
    await tick();
  }
}

const callTexts = (server) => server.calls().map((call) => call.text);

/** Plays `scenario` on a scripted client; rejects at the first step that differs. */
async function runScenario(scenario) {
  const server = new ScriptedServer();
  const client = LikeClient.scripted(server, {
    retry: { minDelayMs: 1, maxDelayMs: 1, jitter: false, maxRetries: scenario.max_retries ?? 0 },
  });
  const heard = [];
  const unsubscribe = client.subscribeAll((event) => heard.push(eventJson(event)));
  // Scenario call number -> its post.
  const posts = new Map();
  let taken = 0;
  try {
    for (const [index, step] of scenario.steps.entries()) {
      let view;
      switch (step.do) {
        case "read":
          server.setPost(step.post, scriptedLikes(step.likes));
          view = viewJson(await client.refresh(step.post));
          break;
        case "tap":
          view = viewJson(client.setLiked(step.post, step.liked));
          break;
        case "answer":
        case "fail": {
          assert.ok(
            posts.has(step.call),
            `scenario ${show(scenario.name)}, step ${index}: call #${step.call} was never sent`,
          );
          const done =
            step.do === "answer"
              ? server.answer(step.call, scriptedState(step.state))
              : server.fail(step.call, scriptedFailure(step.failure));
          assert.ok(done, `scenario ${show(scenario.name)}, step ${index}: call #${step.call} is not waiting`);
          await settleView(client, posts.get(step.call), step.view);
          break;
        }
        default:
          throw new Error(`scenario ${show(scenario.name)}, step ${index}: unknown step ${show(step.do)}`);
      }
      // The expected events, or as many as come within SETTLE_MS; then the
      // expected calls, or what is out after SETTLE_MS.
      const deadline = Date.now() + SETTLE_MS;
      while (heard.length < taken + step.events.length && Date.now() < deadline) {
        await tick();
      }
      let calls;
      for (;;) {
        calls = callTexts(server);
        if (isDeepStrictEqual(calls, step.calls) || Date.now() >= deadline) break;
        await tick();
      }
      for (const call of server.calls()) posts.set(call.id, call.postId);
      if (calls.length === 0) {
        // Nothing is out: once idle, every event has been heard.
        await client.waitIdle(SETTLE_MS);
      }
      if (step.do === "answer" || step.do === "fail") {
        // The view once the step has settled, as the machine runner takes
        // it: right after the answer the view may still be the one before.
        view = viewJson(client.view(posts.get(step.call)));
      }
      const events = heard.slice(taken);
      taken += events.length;
      check(scenario, index, step, { view, events, calls });
    }
  } finally {
    unsubscribe();
    await client.shutdown(0);
    client.free();
    server.free();
  }
}

await init(); // in Node, reads the module from disk (once)

for (const scenario of suite.scenarios) {
  test(`conformance: ${scenario.name}`, () => runScenario(scenario));
}

/** The first scenario with the last expected count changed. */
function withAWrongCount() {
  const scenario = structuredClone(suite.scenarios[0]);
  const step = scenario.steps.findLast((s) => s.view && s.view.count !== undefined);
  assert.ok(step, "the first scenario has no view with a count");
  step.view.count += 1;
  return scenario;
}

test("conformance: the runner fails a changed expectation", async () => {
  const scenario = withAWrongCount();
  await assert.rejects(runScenario(scenario), (error) => {
    assert.match(error.message, /view: expected/);
    assert.ok(error.message.includes(JSON.stringify(scenario.name)), error.message);
    return true;
  });
});

test("ScriptedServer: a tap's call is listed once a microtask has run, as the class's docs show", async () => {
  const server = new ScriptedServer();
  const client = LikeClient.scripted(server, { retry: { maxRetries: 0 } });
  assert.equal(client.setLiked(42, true).pending, true);
  assert.deepEqual(server.calls(), [], "the call starts on the event loop");
  await Promise.resolve();
  assert.deepEqual(server.calls(), [{ id: 0, postId: 42, like: true, text: "like 42 #0" }]);
  assert.equal(server.answer(0, { count: 1, likedByMe: true, version: 2 }), true);
  client.free();
  server.free();
});

test("view(): a post only subscribed to is undefined until its first read, as its docs say", async () => {
  const server = new ScriptedServer();
  server.setPost(7, { count: 3, likedByMe: false, version: 1 });
  const client = LikeClient.scripted(server);
  const stop = client.subscribe(7, () => {});
  assert.equal(client.view(7), undefined);
  await client.refresh(7);
  assert.equal(client.view(7).count, 3);
  stop();
  client.free();
  server.free();
});
