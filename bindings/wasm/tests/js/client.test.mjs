// The built web package in Node against the real likekit-server on
// loopback: the train scenarios. Run it with `cargo xtask test --only node`,
// which builds bindings/wasm/pkg, starts the server, links the package as
// node_modules/likekit-wasm and passes LIKEKIT_URL and LIKEKIT_ADMIN_KEY.

import { after, afterEach, before, test } from "node:test";
import assert from "node:assert/strict";

import init, { LikeClient } from "likekit-wasm";

const SERVER = process.env.LIKEKIT_URL;
const ADMIN_KEY = process.env.LIKEKIT_ADMIN_KEY;
if (!SERVER || !ADMIN_KEY) {
  throw new Error("run with `cargo xtask test --only node` (LIKEKIT_URL and LIKEKIT_ADMIN_KEY are unset)");
}

/** Retries quickly, so a rollback takes milliseconds, not seconds. */
const FAST_RETRY = { minDelayMs: 10, maxDelayMs: 40, maxRetries: 2, jitter: false };

const USERS = { ana: 1, ben: 2, cleo: 3 };
const tokens = {};
const clients = [];

async function admin(method, path, body) {
  const response = await fetch(SERVER + path, {
    method,
    headers: { "X-Admin-Key": ADMIN_KEY, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const faults = (rules) => admin("PUT", "/admin/faults", { rules });

/** The server's request journal, oldest first, filtered by `query` (`route=like&post=120`). */
const journal = async (query) => (await admin("GET", `/admin/requests?${query}`)).entries;

/** Creates a post for one test (an existing post is kept as it is). */
async function newPost(id) {
  await admin("POST", "/admin/posts", { id });
  return id;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A client for one viewer; shut down after each test. */
function clientFor(viewer, options = {}) {
  const client = new LikeClient(SERVER, { token: () => tokens[viewer], ...options });
  clients.push(client);
  return client;
}

/** Waits until `check()` is truthy; fails after `ms` (a bound, not a speed target). */
async function waitFor(check, what, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

before(async () => {
  await init(); // a no-op in Node, where the module loads on import
  await admin("POST", "/admin/users", { id: USERS.ana, name: "Ana" });
  await admin("POST", "/admin/users", { id: USERS.ben, name: "Ben" });
  await admin("POST", "/admin/users", { id: USERS.cleo, name: "Cleo" });
  await admin("PUT", `/admin/users/${USERS.ana}/friends`, { friends: [USERS.ben, USERS.cleo] });
  await admin("PUT", `/admin/users/${USERS.ben}/friends`, { friends: [USERS.ana] });
  for (let id = 100; id <= 112; id++) await admin("POST", "/admin/posts", { id });
  for (const [name, id] of Object.entries(USERS)) {
    tokens[name] = (await admin("POST", "/admin/tokens", { user_id: id, ttl_secs: 3600 })).token;
  }
});

afterEach(async () => {
  await admin("DELETE", "/admin/faults");
  while (clients.length) {
    const client = clients.pop();
    await client.shutdown(2_000);
    client.free();
  }
});

after(() => admin("DELETE", "/admin/faults"));

test("a tap shows at once, while the call takes 2 s", async () => {
  const post = 101;
  const ana = clientFor("ana");
  const before = await ana.refresh(post);
  assert.equal(before.count, 0);
  await faults([{ route: "like", latency_ms: 2000 }]);

  const events = [];
  const unsubscribe = ana.subscribe(post, (event) => events.push(event));
  const view = ana.toggle(post);
  // Checked before anything is awaited: the call cannot have answered yet.
  assert.equal(view.liked, true);
  assert.equal(view.count, 1);
  assert.equal(view.pending, true);
  assert.equal(view.line, "Liked by you");
  assert.deepEqual(view.lineParts, { you: true, friends: [], others: 0, total: 1 });
  assert.equal(view.error, null);
  assert.equal(ana.view(post).liked, true);
  assert.equal(events[0]?.kind, "changed", "the tap's own change is delivered at once");
  assert.equal(events[0].view.liked, true);

  await waitFor(() => !ana.view(post).pending, "the server's answer");
  const confirmed = ana.view(post);
  assert.equal(confirmed.liked, true);
  assert.equal(confirmed.count, 1);
  assert.equal(events.at(-1).view.pending, false);
  unsubscribe();

  // Ben (Ana's friend) sees Ana's like.
  const ben = clientFor("ben");
  const seenByBen = await ben.refresh(post);
  assert.equal(seenByBen.count, 1);
  assert.equal(seenByBen.liked, false);
  assert.equal(seenByBen.line, "Liked by Ana");
});

test("a like that keeps failing rolls back and reports one failure", async () => {
  const post = 102;
  const ana = clientFor("ana", { retry: FAST_RETRY });
  await ana.refresh(post);
  await faults([{ route: "like", error_rate: 1.0, status: 503 }]);

  const changes = [];
  const failures = [];
  ana.subscribe(post, {
    onChange: (view) => changes.push(view),
    onFailure: (failure) => failures.push(failure),
  });
  const tapped = ana.setLiked(post, true);
  assert.equal(tapped.liked, true);
  assert.equal(tapped.count, 1);

  await waitFor(() => failures.length > 0, "the failure callback");
  assert.equal(await ana.waitIdle(10_000), true);
  assert.equal(failures.length, 1);
  const [failure] = failures;
  assert.equal(failure.postId, post);
  assert.equal(failure.wanted, true);
  assert.match(failure.message, /^Your like didn't save: /);
  assert.ok(failure.error instanceof Error);
  assert.equal(failure.error.name, "LikeError");
  assert.equal(failure.error.code, "injected_fault");
  assert.equal(failure.error.status, 503);
  assert.equal(failure.error.transient, true);

  const rolledBack = ana.view(post);
  assert.equal(rolledBack.liked, false);
  assert.equal(rolledBack.count, 0);
  assert.equal(rolledBack.pending, false);
  assert.equal(rolledBack.error.code, "injected_fault");
  assert.equal(changes.at(-1).liked, false);

  const stats = ana.stats();
  assert.equal(stats.retries, 2);
  assert.equal(stats.rollbacks, 1);
  await admin("DELETE", "/admin/faults");
  assert.equal((await clientFor("ben").refresh(post)).count, 0, "nothing was saved");
});

test("rapid taps coalesce: five taps, one call", async () => {
  const post = 103;
  const ana = clientFor("ana");
  await ana.refresh(post);
  await faults([{ route: "*", latency_ms: 200 }]);

  for (let i = 0; i < 5; i++) ana.toggle(post); // like, unlike, like, unlike, like
  assert.equal(ana.view(post).liked, true);
  assert.equal(await ana.waitIdle(10_000), true);

  const stats = ana.stats();
  assert.equal(stats.taps, 5);
  assert.equal(stats.callsSent, 1, "the call already out carried the final state");
  assert.equal(stats.coalesced, 4);
  assert.equal(ana.view(post).liked, true);
  assert.equal(ana.view(post).count, 1);
  assert.equal((await clientFor("cleo").refresh(post)).count, 1);
});

test("rapid taps ending in an unlike send exactly one more call", async () => {
  const post = 104;
  const ana = clientFor("ana");
  await ana.refresh(post);
  await faults([{ route: "*", latency_ms: 200 }]);

  for (let i = 0; i < 4; i++) ana.toggle(post); // like, unlike, like, unlike
  assert.equal(ana.view(post).liked, false);
  assert.equal(await ana.waitIdle(10_000), true);
  assert.equal(ana.stats().callsSent, 2, "the like that was out, then the unlike");
  assert.equal(ana.view(post).liked, false);
  assert.equal((await clientFor("cleo").refresh(post)).count, 0);
});

test("refresh reads others' likes and friends; a feed page in one call", async () => {
  const post = 105;
  for (const viewer of ["ben", "cleo"]) {
    const client = clientFor(viewer);
    client.setLiked(post, true);
    assert.equal(await client.waitIdle(10_000), true);
  }
  const ana = clientFor("ana");
  const view = await ana.refresh(post);
  assert.equal(view.postId, post);
  assert.equal(view.count, 2);
  assert.equal(view.liked, false);
  assert.deepEqual(view.friends, ["Cleo", "Ben"], "newest first");
  assert.equal(view.line, "Liked by Cleo and Ben");
  assert.deepEqual(view.lineParts, { you: false, friends: ["Cleo", "Ben"], others: 0, total: 2 });

  const page = await ana.refreshMany([post, 999_999, 106]);
  assert.deepEqual(page.map((v) => v.postId), [post, 106]);

  // A read that lands while a tap is pending does not flip the heart.
  await faults([{ route: "like", latency_ms: 1500 }]);
  const tapped = ana.toggle(post);
  assert.equal(tapped.line, "Liked by you, Cleo and Ben");
  const read = await ana.refresh(post);
  assert.equal(read.liked, true);
  assert.equal(read.count, 3);
  assert.equal(await ana.waitIdle(10_000), true);
  assert.equal(ana.view(post).count, 3);

  await assert.rejects(ana.refresh(999_999), (err) => {
    assert.ok(err instanceof Error);
    assert.equal(err.code, "post_not_found");
    assert.equal(err.transient, false);
    return true;
  });
});

test("the token callback is asked again with refresh = true after a 401", async () => {
  const asked = [];
  const client = new LikeClient(SERVER, {
    token: (refresh) => {
      asked.push(refresh);
      return refresh ? tokens.ana : "not-a-valid-token";
    },
  });
  clients.push(client);
  const view = await client.refresh(107);
  assert.equal(view.postId, 107);
  assert.deepEqual(asked, [false, true]);

  const signedOut = new LikeClient(SERVER, { token: () => null });
  clients.push(signedOut);
  await assert.rejects(signedOut.refresh(107), { name: "LikeError", code: "unauthorized" });
});

test("network errors, timeouts, bad arguments and shutdown are LikeErrors", async () => {
  const nowhere = new LikeClient("http://127.0.0.1:9", { retry: { maxRetries: 0 } });
  clients.push(nowhere);
  await assert.rejects(nowhere.refresh(1), { code: "network", transient: true });

  await faults([{ route: "likes", latency_ms: 3000 }]);
  const impatient = clientFor("ana", { timeoutMs: 200 });
  await assert.rejects(impatient.refresh(108), { code: "timeout" });

  assert.throws(() => impatient.toggle(1.5), { name: "LikeError", code: "bad_post_id" });
  assert.throws(() => impatient.toggle(true), { name: "LikeError", code: "invalid_argument" });
  assert.throws(() => new LikeClient("ftp://x"), { code: "config" });
  assert.throws(() => new LikeClient(SERVER, { retry: { maxRetries: -1 } }), { code: "config" });

  assert.equal(await impatient.shutdown(1000), true);
  assert.equal(impatient.isShutDown(), true);
  await assert.rejects(impatient.refresh(108), { code: "shutdown" });
});

/** Every method that takes a post id, called with `id`. */
const takesAnId = {
  toggle: (c, id) => c.toggle(id),
  setLiked: (c, id) => c.setLiked(id, true),
  view: (c, id) => c.view(id),
  refresh: (c, id) => c.refresh(id),
  subscribe: (c, id) => c.subscribe(id, () => {}),
  refreshMany: (c, id) => c.refreshMany([100, id]),
};

test("0, -1 and ids past 2^63 − 1 are refused with bad_post_id before anything is sent", async () => {
  const ana = clientFor("ana");
  const notIds = [0, -1, "0", "-1", 0n, -1n, 2n ** 63n, "9223372036854775808", 1.5, NaN, "", "42 "];
  for (const bad of notIds) {
    for (const [method, call] of Object.entries(takesAnId)) {
      assert.throws(
        () => call(ana, bad),
        { name: "LikeError", code: "bad_post_id", transient: false },
        `${method}(${typeof bad === "bigint" ? `${bad}n` : JSON.stringify(bad)})`,
      );
    }
  }
  assert.throws(() => ana.toggle(-1), {
    message: "post ids are whole numbers from 1 to 9223372036854775807; got -1",
  });
  assert.throws(() => ana.toggle(2n ** 63n), {
    message: "post ids are whole numbers from 1 to 9223372036854775807; got 9223372036854775808",
  });
  const stats = ana.stats();
  assert.equal(stats.taps, 0);
  assert.equal(stats.callsSent, 0);

  // The server answers the same code for the same ids.
  for (const bad of ["0", "-1", "9223372036854775808"]) {
    const response = await fetch(`${SERVER}/posts/${bad}/like`, {
      method: "POST",
      headers: { Authorization: `Bearer ${tokens.ana}` },
    });
    assert.equal(response.status, 400, `POST /posts/${bad}/like`);
    assert.equal((await response.json()).error.code, "bad_post_id");
  }
});

test("numbers past Number.MAX_SAFE_INTEGER are refused as inexact; wrong types are invalid_argument", () => {
  const ana = clientFor("ana");
  for (const inexact of [2 ** 53, 2 ** 53 + 1, 2 ** 62]) {
    for (const call of Object.values(takesAnId)) {
      assert.throws(() => call(ana, inexact), (err) => {
        assert.equal(err.name, "LikeError");
        assert.equal(err.code, "invalid_argument");
        assert.match(err.message, /decimal string .* or a BigInt/);
        return true;
      });
    }
  }
  for (const wrong of [true, null, undefined, {}, [42]]) {
    for (const call of Object.values(takesAnId)) {
      assert.throws(() => call(ana, wrong), { name: "LikeError", code: "invalid_argument" });
    }
  }
  assert.equal(ana.stats().taps, 0);
});

test("ids past Number.MAX_SAFE_INTEGER travel as strings or BigInts, end to end", async () => {
  const largest = "9223372036854775807"; // 2^63 − 1
  const pastSafe = "9007199254740993"; // 2^53 + 1, which no number holds
  for (const id of [largest, pastSafe]) {
    // Raw JSON: JSON.stringify would round the id.
    const response = await fetch(`${SERVER}/admin/posts`, {
      method: "POST",
      headers: { "X-Admin-Key": ADMIN_KEY, "Content-Type": "application/json" },
      body: `{"id": ${id}}`,
    });
    assert.ok(response.ok, `creating post ${id}: ${response.status} ${await response.text()}`);
  }
  const ana = clientFor("ana");
  const tapped = ana.setLiked(largest, true);
  assert.equal(tapped.postId, largest);
  assert.equal(tapped.liked, true);
  const bigTap = ana.toggle(BigInt(pastSafe));
  assert.equal(bigTap.postId, pastSafe);
  assert.equal(await ana.waitIdle(10_000), true);

  const read = await clientFor("ben").refresh(BigInt(largest));
  assert.equal(read.postId, largest);
  assert.equal(read.count, 1);
  const [other] = await clientFor("cleo").refreshMany([pastSafe]);
  assert.equal(other.postId, pastSafe);
  assert.equal(other.count, 1);
  assert.equal(ana.view(largest).pending, false);
  assert.equal(ana.view(BigInt(largest)).count, 1);
  // Ids up to Number.MAX_SAFE_INTEGER stay numbers.
  assert.equal((await ana.refresh("100")).postId, 100);
});

// ---- faults that spoil answers, read back from the server's request journal

test("a like saved but its answer lost is retried, sticks and counts once", async () => {
  const post = await newPost(120);
  const ana = clientFor("ana", { retry: FAST_RETRY });
  await ana.refresh(post);
  await faults([{ route: "like", post, nth: 1, phase: "after", action: { kind: "drop" } }]);
  const failures = [];
  ana.subscribe(post, { onFailure: (failure) => failures.push(failure) });

  ana.toggle(post);
  await waitFor(() => !ana.view(post).pending, "the like to be confirmed");

  const view = ana.view(post);
  assert.equal(view.liked, true);
  assert.equal(view.count, 1);
  assert.equal(view.error, null);
  assert.deepEqual(failures, []);
  assert.equal(ana.stats().callsSent, 2, "the lost answer was retried");
  assert.equal((await clientFor("ben").refresh(post)).count, 1, "counted once");

  // Applied, answer lost; the retry changed nothing and was answered.
  const likes = await journal(`route=like&post=${post}`);
  assert.deepEqual(
    likes.map((e) => [e.write, e.status, e.fault, e.fault_phase]),
    [
      ["applied", null, "drop", "after"],
      ["unchanged", 200, null, null],
    ],
  );
  for (const entry of likes) {
    assert.equal(entry.method, "POST");
    assert.equal(entry.user, USERS.ana);
  }
});

/** 200 answers a client cannot read, and what the journal shows for a like's first call. */
const BROKEN_ANSWERS = [
  { what: "truncated", phase: "after", action: { kind: "truncate", bytes: 12 }, firstWrite: "applied" },
  { what: "malformed", phase: "before", action: { kind: "malformed" }, firstWrite: null },
  { what: "oversized", phase: "before", action: { kind: "oversized", bytes: 3 << 20 }, firstWrite: null },
];

test("truncated, malformed and oversized 200 answers are invalid_response, and the client recovers", async () => {
  let nextPost = 121;
  for (const { what, phase, action, firstWrite } of BROKEN_ANSWERS) {
    const read = await newPost(nextPost++);
    const tapped = await newPost(nextPost++);
    const ana = clientFor("ana", { retry: FAST_RETRY });

    // A read is not retried: the refresh rejects with the error itself.
    await faults([{ route: "likes", post: read, nth: 1, phase, action }]);
    await assert.rejects(ana.refresh(read), (err) => {
      assert.ok(err instanceof Error, what);
      assert.equal(err.name, "LikeError", what);
      assert.equal(err.code, "invalid_response", `${what}: ${err.message}`);
      assert.equal(err.transient, true, what);
      return true;
    });
    const reread = await ana.refresh(read);
    assert.equal(reread.postId, read, what);
    assert.equal(reread.count, 0, what);

    // A like whose first answer is broken is retried and sticks.
    await faults([{ route: "like", post: tapped, nth: 1, phase, action }]);
    const failures = [];
    ana.subscribe(tapped, { onFailure: (failure) => failures.push(failure) });
    ana.setLiked(tapped, true);
    assert.equal(await ana.waitIdle(10_000), true, what);
    const view = ana.view(tapped);
    assert.equal(view.liked, true, what);
    assert.equal(view.pending, false, what);
    assert.equal(view.count, 1, what);
    assert.equal(view.error, null, what);
    assert.deepEqual(failures, [], what);
    assert.equal(ana.stats().retries, 1, what);
    assert.equal((await clientFor("ben").refresh(tapped)).count, 1, `${what}: counted once`);

    const likes = await journal(`route=like&post=${tapped}`);
    assert.deepEqual(
      likes.map((e) => [e.status, e.write, e.fault, e.fault_phase]),
      [
        [200, firstWrite, action.kind, phase],
        [200, firstWrite === "applied" ? "unchanged" : "applied", null, null],
      ],
      what,
    );
  }
});

test("five taps within 50 ms go out as at most two calls, and no DELETE when the burst ends liked", async () => {
  const post = await newPost(127);
  const ana = clientFor("ana");
  await ana.refresh(post);
  // Slow answers, so that the taps land while the first call is out.
  await faults([{ route: "*", latency_ms: 100 }]);
  await admin("DELETE", "/admin/requests");
  assert.deepEqual(await journal(`post=${post}`), [], "the journal was emptied");

  const started = Date.now();
  for (let i = 0; i < 5; i++) {
    if (i > 0) await sleep(10);
    ana.toggle(post); // like, unlike, like, unlike, like
  }
  const burst = Date.now() - started;
  assert.equal(ana.view(post).liked, true);
  assert.equal(await ana.waitIdle(10_000), true);

  const calls = (await journal(`post=${post}`)).map((e) => e.method);
  assert.ok(calls.length >= 1 && calls.length <= 2, `five taps in ${burst} ms, calls: ${calls}`);
  assert.equal(calls[0], "POST");
  assert.deepEqual(
    await journal(`post=${post}&method=DELETE`),
    [],
    `the burst ends liked, as its first call: no unlike is sent (calls: ${calls})`,
  );
  assert.equal(ana.stats().taps, 5);
  assert.equal(ana.view(post).count, 1);
  assert.equal((await clientFor("cleo").refresh(post)).count, 1);
});

test("a like refused with 429 and Retry-After: 1 is retried no sooner than a second later", async () => {
  const post = await newPost(128);
  await faults([
    { route: "like", post, nth: 1, action: { kind: "status", status: 429, retry_after_secs: 1 } },
  ]);
  // Its own backoff alone would retry after 10 ms.
  const ana = clientFor("ana", { retry: FAST_RETRY });
  const failures = [];
  ana.subscribe(post, { onFailure: (failure) => failures.push(failure) });

  ana.setLiked(post, true);
  await waitFor(() => !ana.view(post).pending, "the like to be confirmed");
  assert.equal(ana.view(post).liked, true);
  assert.equal(ana.view(post).count, 1);
  assert.deepEqual(failures, []);
  assert.equal(ana.stats().retries, 1);

  const likes = await journal(`route=like&post=${post}`);
  assert.deepEqual(
    likes.map((e) => [e.status, e.write, e.fault]),
    [
      [429, null, "status"],
      [200, "applied", null],
    ],
    "refused before the handler, then saved",
  );
  const [refused, retry] = likes;
  const waited = retry.at_ms - (refused.at_ms + refused.duration_ms);
  assert.ok(waited >= 1000, `the retry came ${waited} ms after the 429`);
});
