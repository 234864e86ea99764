// The built web package in Node against the real likekit-server on
// loopback: the train scenarios. Run it with `cargo xtask test --only node`,
// which builds bindings/wasm/pkg, starts the server, links the package as
// node_modules/likekit-wasm and passes LIKEKIT_URL and LIKEKIT_ADMIN_KEY.

import { after, afterEach, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";

import init, { LikeClient, ScriptedServer } from "likekit-wasm";
import {
  AdminError,
  FAULT_ACTION_KINDS,
  FAULT_METHODS,
  FAULT_PHASES,
  FAULT_ROUTES,
  LikeKitAdmin,
  OPERATIONS,
  WRITE_RESULTS,
  decodeFaultRule,
  decodeFaultRules,
  decodeJournal,
  decodeJournalEntry,
  decodeRuleState,
  decodeSeed,
  decodeSeedPost,
  decodeSeedUser,
  decodeStoredPost,
  decodeStoredUser,
  encodeFaultRule,
  encodeFaultRules,
  encodeJournal,
  encodeJournalEntry,
  encodeRuleState,
  encodeSeed,
  encodeSeedPost,
  encodeSeedUser,
  encodeStoredPost,
  encodeStoredUser,
} from "likekit-wasm/testing";

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

const admin = new LikeKitAdmin(SERVER, ADMIN_KEY);

/** The server's request journal, oldest first, filtered by `filter` (`{ route: "like", post: 120 }`). */
const journal = async (filter) => (await admin.requests(filter)).entries;

/** Creates a post for one test (an existing post is kept as it is). */
async function newPost(id) {
  await admin.createPost(id);
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
  await init(); // in Node, reads the module from disk (once)
  await admin.createUser(USERS.ana, "Ana");
  await admin.createUser(USERS.ben, "Ben");
  await admin.createUser(USERS.cleo, "Cleo");
  await admin.setFriends(USERS.ana, [USERS.ben, USERS.cleo]);
  await admin.setFriends(USERS.ben, [USERS.ana]);
  for (let id = 100; id <= 112; id++) await admin.createPost(id);
  for (const [name, id] of Object.entries(USERS)) {
    tokens[name] = await admin.mintToken(id, 3600);
  }
});

afterEach(async () => {
  await admin.clearFaults();
  while (clients.length) {
    const client = clients.pop();
    await client.shutdown(2_000);
    client.free();
  }
});

after(() => admin.clearFaults());

test("a tap shows at once, while the call takes 2 s", async () => {
  const post = 101;
  const ana = clientFor("ana");
  const before = await ana.refresh(post);
  assert.equal(before.count, 0);
  await admin.setFaults([{ route: "like", latency_ms: 2000 }]);

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
  await admin.setFaults([{ route: "like", error_rate: 1.0, status: 503 }]);

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
  await admin.clearFaults();
  assert.equal((await clientFor("ben").refresh(post)).count, 0, "nothing was saved");
});

test("rapid taps coalesce: five taps, one call", async () => {
  const post = 103;
  const ana = clientFor("ana");
  await ana.refresh(post);
  await admin.setFaults([{ route: "*", latency_ms: 200 }]);

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
  await admin.setFaults([{ route: "*", latency_ms: 200 }]);

  for (let i = 0; i < 4; i++) ana.toggle(post); // like, unlike, like, unlike
  assert.equal(ana.view(post).liked, false);
  assert.equal(await ana.waitIdle(10_000), true);
  assert.equal(ana.stats().callsSent, 2, "the like that was out, then the unlike");
  assert.equal(ana.view(post).liked, false);
  assert.equal((await clientFor("cleo").refresh(post)).count, 0);
});

test("liveSubscriptions counts the subscriptions not yet ended", () => {
  const ana = clientFor("ana");
  assert.equal(ana.liveSubscriptions(), 0);
  const one = ana.subscribe(105, () => {});
  const two = ana.subscribe(105, { onChange() {} });
  const all = ana.subscribeAll(() => {});
  assert.equal(ana.liveSubscriptions(), 3);
  two();
  assert.equal(ana.liveSubscriptions(), 2);
  two(); // a second call ends nothing more
  assert.equal(ana.liveSubscriptions(), 2);
  one();
  all();
  assert.equal(ana.liveSubscriptions(), 0);
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
  await admin.setFaults([{ route: "like", latency_ms: 1500 }]);
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

test("an async token callback is awaited, and renews after a 401: the like saves", async () => {
  const post = await newPost(140);
  const asked = [];
  // Issued two hours ago for an hour: the server answers 401 token_expired.
  const expired = await admin.mintToken(USERS.ana, 3600, -7200);
  const client = new LikeClient(SERVER, {
    retry: FAST_RETRY,
    token: async (refresh) => {
      asked.push(refresh);
      await sleep(5); // as a sign-in SDK renewing over the network would
      return refresh ? tokens.ana : expired;
    },
  });
  clients.push(client);
  const view = client.setLiked(post, true);
  assert.equal(view.liked, true, "the tap shows at once, before any token is awaited");
  assert.equal(await client.waitIdle(10_000), true);
  const saved = client.view(post);
  assert.equal(saved.liked && !saved.pending && saved.error === null, true, JSON.stringify(saved));
  assert.deepEqual(asked.slice(0, 2), [false, true]);
  const likes = await journal({ route: "like", post });
  assert.deepEqual(likes.map((e) => e.status), [401, 200]);
});

test("a token callback whose promise rejects gives no token: the read is unauthorized", async () => {
  const client = new LikeClient(SERVER, {
    token: () => Promise.reject(new Error("the sign-in SDK is offline")),
  });
  clients.push(client);
  await assert.rejects(client.refresh(107), { name: "LikeError", code: "unauthorized" });
  const resolvesNothing = new LikeClient(SERVER, { token: async () => null });
  clients.push(resolvesNothing);
  await assert.rejects(resolvesNothing.refresh(107), { name: "LikeError", code: "unauthorized" });
});

test("network errors, timeouts, bad arguments and shutdown are LikeErrors", async () => {
  const nowhere = new LikeClient("http://127.0.0.1:9", { retry: { maxRetries: 0 } });
  clients.push(nowhere);
  await assert.rejects(nowhere.refresh(1), { code: "network", transient: true });

  await admin.setFaults([{ route: "likes", latency_ms: 3000 }]);
  const impatient = clientFor("ana", { timeoutMs: 200 });
  await assert.rejects(impatient.refresh(108), { code: "timeout" });

  assert.throws(() => impatient.toggle(1.5), { name: "LikeError", code: "bad_post_id" });
  assert.throws(() => impatient.toggle(true), { name: "LikeError", code: "invalid_argument" });
  assert.throws(() => new LikeClient("ftp://x"), { code: "config" });
  assert.throws(() => new LikeClient(SERVER, { retry: { maxRetries: -1 } }), { code: "config" });

  // Shutdown begins at the call, not a microtask later: a tap made before
  // its promise is awaited changes nothing and sends nothing.
  const stopping = impatient.shutdown(1000);
  assert.equal(impatient.isShutDown(), true);
  const late = impatient.setLiked(109, true);
  assert.equal(late.error?.code, "shutdown");
  assert.equal(await stopping, true);
  assert.equal(impatient.isShutDown(), true);
  await assert.rejects(impatient.refresh(108), { code: "shutdown" });
});

test("an unknown option key is refused with config, naming the key, at every level", () => {
  // Plain JavaScript has no type checker: a misspelt `token` would build a
  // client that sends no token and only fails later, as unauthorized.
  for (const [options, named] of [
    [{ tokn: "x" }, "options: unknown field `tokn`"],
    [{ token: "x", retry: { maxRetries: 1, jiter: false } }, "options.retry: unknown field `jiter`"],
    [{ journal: { viewer: "ana", store: {} } }, "options.journal: unknown field `store`"],
  ]) {
    assert.throws(
      () => new LikeClient(SERVER, options),
      (e) => e.name === "LikeError" && e.code === "config" && e.message.includes(named),
      JSON.stringify(options),
    );
  }
  // Every documented key is known.
  const full = new LikeClient(SERVER, {
    token: () => null,
    retry: { minDelayMs: 10, maxDelayMs: 20, factor: 2, maxRetries: 1, jitter: false, seed: 1 },
    timeoutMs: 1000,
    maxPosts: 10,
    maxAnswerBytes: 1024,
    maxIntentAgeMs: 60_000,
    keepWhileOfflineMs: 1000,
  });
  full.free();
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

test("retryNow sends a retry waiting out its backoff at once (the window's online event)", async () => {
  const post = await newPost(260);
  // The first like fails (503, no Retry-After); its retry would wait a minute.
  await admin.addFaults([{ route: "like", post, fail_next: 1, tag: "retry-now" }]);
  try {
    const client = clientFor("ana", { retry: { minDelayMs: 60_000, maxDelayMs: 60_000, maxRetries: 3, jitter: false } });
    client.setLiked(post, true);
    const failed = await admin.waitForRequests({ route: "like", post }, 1, { timeoutMs: 10_000 });
    assert.equal(failed.met, true, "the first like was answered");
    assert.equal(client.hasPendingCalls(), true, "its retry waits");
    // Whether its failure is taken in yet or not: the wait it starts ends.
    client.retryNow();
    // Well within the minute: a bound for a retry never sent, not a speed target.
    assert.equal(await client.waitIdle(20_000), true, "the retry went out at retryNow");
    const view = client.view(post);
    assert.equal(view.liked && !view.pending && view.error === null, true, JSON.stringify(view));
    assert.deepEqual((await journal({ route: "like", post })).map((e) => e.status), [503, 200]);
  } finally {
    await admin.clearFaults({ tag: "retry-now" });
  }
});

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
    // Raw HTTP with the id written out: JSON.stringify would round it, and
    // ids past 2^53 − 1 are out of scope for the admin client.
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
  await admin.setFaults([{ route: "like", post, nth: 1, phase: "after", action: { kind: "drop" } }]);
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
  const likes = await journal({ route: "like", post });
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
    await admin.setFaults([{ route: "likes", post: read, nth: 1, phase, action }]);
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
    await admin.setFaults([{ route: "like", post: tapped, nth: 1, phase, action }]);
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

    const likes = await journal({ route: "like", post: tapped });
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
  await admin.setFaults([{ route: "*", latency_ms: 100 }]);
  await admin.clearRequests();
  assert.deepEqual(await journal({ post }), [], "the journal was emptied");

  const started = Date.now();
  for (let i = 0; i < 5; i++) {
    if (i > 0) await sleep(10);
    ana.toggle(post); // like, unlike, like, unlike, like
  }
  const burst = Date.now() - started;
  assert.equal(ana.view(post).liked, true);
  assert.equal(await ana.waitIdle(10_000), true);

  const calls = (await journal({ post })).map((e) => e.method);
  assert.ok(calls.length >= 1 && calls.length <= 2, `five taps in ${burst} ms, calls: ${calls}`);
  assert.equal(calls[0], "POST");
  assert.deepEqual(
    await journal({ post, method: "DELETE" }),
    [],
    `the burst ends liked, as its first call: no unlike is sent (calls: ${calls})`,
  );
  assert.equal(ana.stats().taps, 5);
  assert.equal(ana.view(post).count, 1);
  assert.equal((await clientFor("cleo").refresh(post)).count, 1);
});

test("a like refused with 429 and Retry-After: 1 is retried no sooner than a second later", async () => {
  const post = await newPost(128);
  await admin.setFaults([
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

  const likes = await journal({ route: "like", post });
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

// ---- the admin client (likekit-wasm/testing) against the server's own description

let openApiDocument;
/** The server's OpenAPI document, fetched once. */
async function openApi() {
  openApiDocument ??= await (await fetch(`${SERVER}/openapi.json`)).json();
  return openApiDocument;
}

const HTTP_METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

test("the admin client's OPERATIONS are exactly the /admin/ operations of /openapi.json", async () => {
  const { paths } = await openApi();
  const described = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith("/admin/")) continue;
    for (const [method, operation] of Object.entries(item)) {
      if (HTTP_METHODS.includes(method)) described.push([operation.operationId, method.toUpperCase(), path]);
    }
  }
  assert.ok(described.length > 0, "the document describes admin operations");
  const ours = Object.entries(OPERATIONS).map(([id, { method, path }]) => [id, method, path]);
  const byId = (a, b) => a[0].localeCompare(b[0]);
  assert.deepEqual(ours.sort(byId), described.sort(byId));
  assert.ok(Object.isFrozen(OPERATIONS));
  assert.equal(LikeKitAdmin.OPERATIONS, OPERATIONS);
});

/** The admin bodies' codecs, by schema name. */
const CODECS = {
  FaultRule: [decodeFaultRule, encodeFaultRule],
  FaultRules: [decodeFaultRules, encodeFaultRules],
  RuleState: [decodeRuleState, encodeRuleState],
  Journal: [decodeJournal, encodeJournal],
  JournalEntry: [decodeJournalEntry, encodeJournalEntry],
  Seed: [decodeSeed, encodeSeed],
  SeedUser: [decodeSeedUser, encodeSeedUser],
  SeedPost: [decodeSeedPost, encodeSeedPost],
  StoredUser: [decodeStoredUser, encodeStoredUser],
  StoredPost: [decodeStoredPost, encodeStoredPost],
};

/** Every key of `example` is in `encoded`, with the same value (recursively). */
function assertComesBack(example, encoded, where) {
  if (Array.isArray(example)) {
    assert.ok(Array.isArray(encoded), `${where}: not an array`);
    assert.equal(encoded.length, example.length, `${where}: length`);
    example.forEach((item, i) => assertComesBack(item, encoded[i], `${where}[${i}]`));
  } else if (example !== null && typeof example === "object") {
    assert.ok(encoded !== null && typeof encoded === "object", `${where}: not an object`);
    for (const [key, value] of Object.entries(example)) {
      assert.ok(Object.hasOwn(encoded, key), `${where}.${key} was left out`);
      assertComesBack(value, encoded[key], `${where}.${key}`);
    }
  } else {
    assert.equal(encoded, example, where);
  }
}

/** Every key the client wrote in `value` is a property of `schema` (recursively, through $ref, oneOf and items). */
function assertDescribedKeys(value, schema, schemas, where) {
  while (schema?.$ref) schema = schemas[schema.$ref.split("/").pop()];
  assert.ok(schema, `${where}: no schema`);
  if (value === null || typeof value !== "object") return;
  if (schema.oneOf) {
    // An Option (the type or null), or FaultAction's variants tagged by `kind`.
    const resolve = (branch) => (branch.$ref ? schemas[branch.$ref.split("/").pop()] : branch);
    const branches = schema.oneOf.map(resolve).filter((branch) => branch.type !== "null");
    const branch =
      branches.length === 1
        ? branches[0]
        : branches.find((b) => b.properties?.kind?.enum?.includes(value.kind));
    assert.ok(branch, `${where}: no branch of the schema for ${JSON.stringify(value)}`);
    assertDescribedKeys(value, branch, schemas, where);
  } else if (Array.isArray(value)) {
    assert.ok(schema.items, `${where}: an array where the schema has none`);
    value.forEach((item, i) => assertDescribedKeys(item, schema.items, schemas, `${where}[${i}]`));
  } else if (schema.properties) {
    for (const [key, field] of Object.entries(value)) {
      assert.ok(
        Object.hasOwn(schema.properties, key),
        `${where}: the client wrote ${key}, which the schema does not have`,
      );
      assertDescribedKeys(field, schema.properties[key], schemas, `${where}.${key}`);
    }
  }
}

test("every example of the admin bodies' schemas decodes, and encodes back to itself with the schema's fields only", async () => {
  const { schemas } = (await openApi()).components;
  for (const [name, [decode, encode]] of Object.entries(CODECS)) {
    const examples = schemas[name]?.examples;
    assert.ok(examples?.length > 0, `${name} has examples`);
    for (const example of examples) {
      const value = decode(example);
      const encoded = encode(value);
      assertComesBack(example, encoded, name);
      assertDescribedKeys(encoded, schemas[name], schemas, name);
      assert.deepEqual(decode(encoded), value, `${name}: decoding what was encoded gives the same value`);
    }
  }
});

test("the admin client's enum values are the schemas' enums", async () => {
  const { schemas } = (await openApi()).components;
  assert.deepEqual(FAULT_ROUTES, schemas.FaultRoute.enum);
  assert.deepEqual(FAULT_METHODS, schemas.FaultMethod.enum);
  assert.deepEqual(FAULT_PHASES, schemas.FaultPhase.enum);
  assert.deepEqual(WRITE_RESULTS, schemas.WriteResult.enum);
  const kinds = schemas.FaultAction.oneOf.flatMap((variant) => variant.properties.kind.enum);
  assert.deepEqual(FAULT_ACTION_KINDS, kinds);
});

/** A value of a query parameter's `schema`, to send: an enum's first value, 1, or a tag-shaped string. */
function sampleOf(schema, schemas) {
  while (schema.$ref) schema = schemas[schema.$ref.split("/").pop()];
  if (schema.enum) return schema.enum[0];
  return schema.type === "integer" ? 1 : "t";
}

test("the admin client's filters are the query parameters /openapi.json declares, by their names", async () => {
  const { paths, components } = await openApi();
  const stub = await stubServer(({ method, url }) => {
    if (url.startsWith("/admin/faults")) return [200, '{"rules":[]}'];
    return method === "GET" ? [200, '{"entries":[],"capacity":1,"dropped":0}'] : [200, '{"ok":true}'];
  });
  try {
    const stubAdmin = new LikeKitAdmin(stub.url, "stub-key");
    const withFilter = {
      get_faults: (filter) => stubAdmin.getFaults(filter),
      clear_faults: (filter) => stubAdmin.clearFaults(filter),
      requests: (filter) => stubAdmin.requests(filter),
      clear_requests: (filter) => stubAdmin.clearRequests(filter),
    };
    // GET /admin/requests also takes the wait of waitForRequests; DELETE waits for nothing.
    const wait = ["wait_for", "timeout_ms"];
    const sentKeys = () => [...new URL(stub.seen.at(-1).url, stub.url).searchParams.keys()].sort();
    for (const [operation, call] of Object.entries(withFilter)) {
      const { method, path } = OPERATIONS[operation];
      const parameters = paths[path][method.toLowerCase()].parameters ?? [];
      const waits = parameters.map((p) => p.name).filter((name) => wait.includes(name));
      assert.deepEqual(waits, operation === "requests" ? wait : [], `${operation}: the wait's parameters`);
      const filters = parameters.filter((p) => !wait.includes(p.name));
      const filter = Object.fromEntries(filters.map((p) => [p.name, sampleOf(p.schema, components.schemas)]));
      assert.ok(Object.keys(filter).length > 0, `${operation} takes a query`);
      await call(filter);
      assert.deepEqual(sentKeys(), Object.keys(filter).sort(), `${operation} sends every filter`);
      if (operation === "requests") {
        await stubAdmin.waitForRequests(filter, 1, { timeoutMs: 1 });
        const every = parameters.map((p) => p.name).sort();
        assert.deepEqual(sentKeys(), every, "waitForRequests sends every filter and the wait");
      }
    }
    assert.equal(stub.seen.length, Object.keys(withFilter).length + 1);
  } finally {
    await stub.close();
  }
});

test("the admin decoders refuse values of the wrong shape; the encoders refuse unknown fields and inexact ids", async () => {
  const entry = decodeJournal((await openApi()).components.schemas.Journal.examples[0]).entries[0];
  const wrongShapes = [
    [decodeJournal, null],
    [decodeJournal, { entries: {}, capacity: 1, dropped: 0 }],
    [decodeJournal, { entries: [{ ...entry, route: "nowhere" }], capacity: 1, dropped: 0 }],
    [decodeJournalEntry, { ...entry, seq: "1" }],
    [decodeJournalEntry, { ...entry, in_flight: undefined }],
    [decodeJournalEntry, { ...entry, posts: [2 ** 53] }],
    [decodeJournalEntry, { ...entry, request_id: undefined }],
    [decodeJournalEntry, { ...entry, request_id: 7 }],
    // `*` is for rules and filters; an entry names the request's own route.
    [decodeJournalEntry, { ...entry, route: "*" }],
    [decodeJournalEntry, { ...entry, fault: "explode" }],
    [decodeFaultRules, { rules: [], state: { matched: 1 } }],
    [decodeRuleState, { matched: 1, fired: 1 }],
    [decodeRuleState, { matched: -1, fired: 0, acted: 0 }],
    // A seed is only ever written by a test: a field it does not have is refused, as the server refuses it.
    [decodeSeed, { users: [], post: [] }],
    [decodeSeedUser, { id: 1, name: "Ana", freinds: [2] }],
    [decodeSeedPost, { id: 1, likes: [2] }],
    [decodeFaultRules, { seed: -1, rules: [] }],
    [decodeFaultRule, { route: "like", action: { kind: "explode" } }],
    [decodeFaultRule, { route: "like", action: { kind: "truncate" } }],
    [decodeFaultRule, { route: "like", latency_ms: 1.5 }],
    [decodeSeed, { users: [{ id: 0, name: "Nobody" }] }],
    [decodeSeedPost, { id: 1, likers: "1" }],
    [decodeSeedUser, { id: 1 }],
    [decodeStoredUser, { id: 1, name: "Ana" }],
    [decodeStoredUser, { id: 1, name: "Ana", friends: ["Ben"] }],
    [decodeStoredPost, { id: 1, count: -1, version: 0, recent_likers: [] }],
    [decodeStoredPost, { id: 1, count: 0, version: 0 }],
  ];
  // An entry's `fault` is an action's kind, or `latency`.
  for (const fault of [...FAULT_ACTION_KINDS, "latency", null]) {
    assert.equal(decodeJournalEntry({ ...entry, fault }).fault, fault);
  }
  for (const [decode, json] of wrongShapes) {
    assert.throws(
      () => decode(json),
      (err) => err instanceof AdminError && err.code === "unreadable" && err.status === null,
      `${decode.name}(${JSON.stringify(json)})`,
    );
  }
  assert.throws(() => encodeFaultRule({ route: "like", latncy_ms: 100 }), {
    name: "TypeError",
    message: /latncy_ms/,
  });
  assert.throws(() => encodeFaultRule({ route: "like", post: 2 ** 53 }), { name: "TypeError" });
  assert.throws(() => encodeSeed({ users: [{ id: 1 }] }), { name: "TypeError", message: /name/ });
  // Defaults are filled in when decoding and left out when encoding.
  const rule = decodeFaultRule({ route: "*" });
  assert.deepEqual(
    [rule.probability, rule.phase, rule.status, rule.latency_ms, rule.action],
    [1, "before", 503, 0, undefined],
  );
  assert.deepEqual(encodeFaultRule({ route: "like", probability: 1, phase: "before", method: null }), {
    route: "like",
  });
});

test("the admin decoders read a newer server's answer: unknown fields are ignored, a wrong type or a missing field is still unreadable", async () => {
  const newer = {
    seed: 7,
    rules: [{ route: "like", nth: 2, shadow: true, action: { kind: "truncate", bytes: 3, chunked: 1 } }],
    state: [{ matched: 1, fired: 1, acted: 0, skipped: 0 }],
    generation: 4,
  };
  const expected = {
    seed: 7,
    rules: [
      {
        route: "like",
        nth: 2,
        probability: 1,
        phase: "before",
        latency_ms: 0,
        jitter_ms: 0,
        error_rate: 0,
        status: 503,
        drop_rate: 0,
        fail_next: 0,
        action: { kind: "truncate", bytes: 3 },
      },
    ],
    state: [{ matched: 1, fired: 1, acted: 0 }],
  };
  assert.deepEqual(decodeFaultRules(newer), expected);
  const entry = decodeJournal((await openApi()).components.schemas.Journal.examples[0]).entries[0];
  const journalAnswer = { entries: [{ ...entry, region: "eu" }], capacity: 10, dropped: 0, oldest_seq: 1 };
  const stub = await stubServer(({ url }) => {
    if (url === "/admin/faults") return [200, JSON.stringify(newer)];
    if (url === "/admin/requests") return [200, JSON.stringify(journalAnswer)];
    if (url === "/admin/posts/1") return [200, '{"id":1,"count":2,"version":3,"recent_likers":[4],"hot":true}'];
    return [200, '{"rules":[{"route":"like","nth":"2","shadow":true}]}'];
  });
  try {
    const stubAdmin = new LikeKitAdmin(stub.url, "stub-key");
    assert.deepEqual(await stubAdmin.getFaults(), expected);
    assert.deepEqual((await stubAdmin.requests()).entries, [entry]);
    assert.deepEqual(await stubAdmin.getPost(1), { id: 1, count: 2, version: 3, recent_likers: [4] });
    // A known field of the wrong type is still refused, whatever else the answer holds.
    await assert.rejects(stubAdmin.clearFaults({ tag: "t" }), { name: "AdminError", status: 200, code: "unreadable" });
  } finally {
    await stub.close();
  }
  assert.throws(() => decodeFaultRules({ rules: [{ shadow: true }] }), { name: "AdminError", code: "unreadable" });
});

test("a filter key given as undefined or null is a TypeError, never every rule or entry; nothing is sent", async () => {
  const stub = await stubServer(({ url }) => (url.startsWith("/admin/faults") ? [200, '{"rules":[]}'] : [200, '{"ok":true}']));
  try {
    const stubAdmin = new LikeKitAdmin(stub.url, "stub-key");
    let unset;
    const calls = [
      ["getFaults", () => stubAdmin.getFaults({ tag: unset }), /FaultFilter\.tag is undefined/],
      ["clearFaults", () => stubAdmin.clearFaults({ tag: unset }), /FaultFilter\.tag is undefined/],
      ["clearFaults", () => stubAdmin.clearFaults({ tag: null }), /FaultFilter\.tag is null/],
      ["requests", () => stubAdmin.requests({ post: 42, user: unset }), /RequestFilter\.user is undefined/],
      ["clearRequests", () => stubAdmin.clearRequests({ user: unset }), /RequestFilter\.user is undefined/],
      ["clearRequests", () => stubAdmin.clearRequests({ fault_tag: null }), /RequestFilter\.fault_tag is null/],
      ["clearRequests", () => stubAdmin.clearRequests({ post: 42, since: unset }), /RequestFilter\.since is undefined/],
    ];
    for (const [name, call, message] of calls) {
      await assert.rejects(call(), { name: "TypeError", message }, name);
    }
    assert.deepEqual(stub.seen, [], "nothing was sent");
    // Left out, a filter selects everything, as before.
    await stubAdmin.clearFaults();
    await stubAdmin.clearRequests({});
    assert.deepEqual(
      stub.seen.map(({ method, url }) => `${method} ${url}`),
      ["DELETE /admin/faults", "DELETE /admin/requests"],
    );
  } finally {
    await stub.close();
  }
});

/** A stand-in admin server on loopback: records each request and answers what `answer` says (nothing for undefined). */
async function stubServer(answer) {
  const seen = [];
  const server = createServer(async (request, response) => {
    let text = "";
    for await (const chunk of request) text += chunk;
    seen.push({
      method: request.method,
      url: request.url,
      key: request.headers["x-admin-key"],
      type: request.headers["content-type"] ?? null,
      text,
    });
    const reply = answer(request);
    if (!reply) return; // held: never answered
    response.writeHead(reply[0], { "Content-Type": "application/json", ...reply[2] });
    response.end(reply[1]);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

test("the admin client follows no redirect: an AdminError naming where it led, and the key goes nowhere else", async () => {
  const elsewhere = await stubServer(() => [200, '{"ok":true}']);
  const moved = await stubServer(({ url }) => [302, "", { Location: `${elsewhere.url}${url}` }]);
  try {
    const movedAdmin = new LikeKitAdmin(moved.url, "stub-key");
    await assert.rejects(movedAdmin.reset(), {
      name: "AdminError",
      status: 302,
      code: "unreadable",
      operation: "reset",
      message: new RegExp(`redirected to ${elsewhere.url}/admin/reset.*give that address as the URL`),
    });
    await assert.rejects(movedAdmin.getFaults(), { name: "AdminError", status: 302, code: "unreadable" });
    assert.deepEqual(moved.seen.map((r) => `${r.method} ${r.url} ${r.key}`), ["POST /admin/reset stub-key", "GET /admin/faults stub-key"]);
    assert.deepEqual(elsewhere.seen, [], "nothing reached the address it was redirected to");
  } finally {
    await moved.close();
    await elsewhere.close();
  }
});

test("every admin method sends its operation's method and path, the key, and exactly the fields set", async () => {
  const journalExample = JSON.stringify((await openApi()).components.schemas.Journal.examples[0]);
  // A seed of 2^64 − 1, which no number holds.
  const rules =
    '{"seed":18446744073709551615,"rules":[{"route":"like","latency_ms":5,"jitter_ms":0,"error_rate":0.0,"status":503,"drop_rate":0.0,"fail_next":0}]}';
  const stub = await stubServer(({ method, url }) => {
    const path = url.split("?")[0];
    if (path === "/admin/users") return [201, '{"id":7,"name":"Ana"}'];
    if (path === "/admin/users/7") return [200, '{"id":7,"name":"Ana","friends":[1,2]}'];
    if (path === "/admin/posts") return [200, '{"id":42}'];
    if (path === "/admin/posts/42") return [200, '{"id":42,"count":3,"version":5,"recent_likers":[7,3,1]}'];
    if (path === "/admin/tokens") return [200, '{"token":"t0ken"}'];
    if (path.endsWith("/friends")) return [200, '{"friends":[1,2]}'];
    if (path === "/admin/faults") return [200, method === "DELETE" ? '{"rules":[]}' : rules];
    if (path === "/admin/requests" && method === "GET") return [200, journalExample];
    return [200, '{"ok":true}'];
  });
  try {
    const stubAdmin = new LikeKitAdmin(`${stub.url}/`, "stub-key");
    const seed = 2n ** 64n - 1n;
    const calls = [
      [
        "create_user",
        "/admin/users",
        () => stubAdmin.createUser(7, "Ana"),
        '{"id":7,"name":"Ana"}',
        "created",
      ],
      [
        "get_user",
        "/admin/users/7",
        () => stubAdmin.getUser(7),
        "",
        (answer) => answer.name === "Ana" && answer.friends.join() === "1,2",
      ],
      ["create_post", "/admin/posts", () => stubAdmin.createPost(42), '{"id":42}', "existed"],
      [
        "get_post",
        "/admin/posts/42",
        () => stubAdmin.getPost(42),
        "",
        (answer) => answer.count === 3 && answer.version === 5 && answer.recent_likers.join() === "7,3,1",
      ],
      [
        "set_friends",
        "/admin/users/7/friends",
        () => stubAdmin.setFriends(7, [1, 2]),
        '{"friends":[1,2]}',
        undefined,
      ],
      ["mint_token", "/admin/tokens", () => stubAdmin.mintToken(7), '{"user_id":7,"ttl_secs":3600,"valid_from_secs":0}', "t0ken"],
      [
        "set_faults",
        "/admin/faults",
        () =>
          stubAdmin.setFaults({
            seed,
            rules: [
              {
                route: "like",
                nth: 2,
                probability: 1,
                phase: "after",
                action: { kind: "status", status: 429, retry_after_secs: 1 },
              },
            ],
          }),
        '{"seed":18446744073709551615,"rules":[{"route":"like","nth":2,"phase":"after","action":{"kind":"status","status":429,"retry_after_secs":1}}]}',
        (answer) =>
          answer.seed === seed && answer.rules[0].latency_ms === 5 && answer.rules[0].probability === 1,
      ],
      [
        "set_faults",
        "/admin/faults",
        () => stubAdmin.setFaults([{ route: "likes", post: 42, latency_ms: 5 }], { seed: 42 }),
        '{"seed":42,"rules":[{"route":"likes","post":42,"latency_ms":5}]}',
        (answer) => answer.seed === seed,
      ],
      [
        "set_faults",
        "/admin/faults",
        () => stubAdmin.setFaults([{ route: "likes" }]),
        '{"rules":[{"route":"likes"}]}',
        (answer) => answer.seed === seed,
      ],
      ["get_faults", "/admin/faults", () => stubAdmin.getFaults(), "", (answer) => answer.seed === seed],
      [
        "get_faults",
        "/admin/faults?tag=checkout-7",
        () => stubAdmin.getFaults({ tag: "checkout-7" }),
        "",
        (answer) => answer.seed === seed,
      ],
      [
        "clear_faults",
        "/admin/faults",
        () => stubAdmin.clearFaults(),
        "",
        (answer) => answer.rules.length === 0,
      ],
      [
        "requests",
        "/admin/requests?route=like&method=POST&post=42&user=7&since=3&request_id=checkout+7f3a&fault_tag=checkout-7",
        () =>
          stubAdmin.requests({
            fault_tag: "checkout-7",
            since: 3,
            user: 7,
            post: 42,
            method: "POST",
            route: "like",
            request_id: "checkout 7f3a",
          }),
        "",
        (answer) => answer.entries[0].path === "/posts/42/like",
      ],
      ["requests", "/admin/requests", () => stubAdmin.requests(), "", (answer) => answer.capacity === 10000],
      ["clear_requests", "/admin/requests", () => stubAdmin.clearRequests(), "", undefined],
      [
        "clear_requests",
        "/admin/requests?fault_tag=checkout-7",
        () => stubAdmin.clearRequests({ fault_tag: "checkout-7" }),
        "",
        undefined,
      ],
      ["reset", "/admin/reset", () => stubAdmin.reset(), "", undefined],
      [
        "seed",
        "/admin/seed",
        () => stubAdmin.seed({ users: [{ id: 1, name: "Ana" }], posts: [{ id: 42, likers: [1] }] }),
        '{"users":[{"id":1,"name":"Ana"}],"posts":[{"id":42,"likers":[1]}]}',
        undefined,
      ],
    ];
    for (const [operation, url, call, body, expected] of calls) {
      const answer = await call();
      if (typeof expected === "function")
        assert.ok(
          expected(answer),
          `${operation} answered ${JSON.stringify(answer, (_, v) => (typeof v === "bigint" ? `${v}n` : v))}`,
        );
      else assert.equal(answer, expected, operation);
      const request = stub.seen.at(-1);
      assert.deepEqual(
        [request.method, request.url, request.key, request.type, request.text],
        [OPERATIONS[operation].method, url, "stub-key", body ? "application/json" : null, body],
        operation,
      );
    }
    assert.equal(stub.seen.length, calls.length);

    // Arguments of the wrong type are refused before anything is sent.
    await assert.rejects(stubAdmin.createPost(2 ** 53), { name: "TypeError" });
    await assert.rejects(stubAdmin.createUser(0, "Zero"), { name: "TypeError" });
    await assert.rejects(stubAdmin.getPost(0), { name: "TypeError" });
    await assert.rejects(stubAdmin.getUser("7"), { name: "TypeError" });
    await assert.rejects(stubAdmin.requests({ post: 42, bogus: 1 }), { name: "TypeError", message: /bogus/ });
    // The filters take the wire's names, as the server does: `fault_tag`, not `faultTag`.
    await assert.rejects(stubAdmin.requests({ faultTag: "checkout-7" }), { name: "TypeError", message: /faultTag/ });
    await assert.rejects(stubAdmin.getFaults({ tg: "checkout-7" }), { name: "TypeError", message: /tg/ });
    await assert.rejects(stubAdmin.getFaults({ tag: 7 }), { name: "TypeError" });
    await assert.rejects(stubAdmin.setFaults([{ route: "everywhere" }]), { name: "TypeError" });
    await assert.rejects(stubAdmin.setFaults([], { sed: 42 }), { name: "TypeError", message: /sed/ });
    await assert.rejects(stubAdmin.setFaults({ rules: [] }, { seed: 42 }), { name: "TypeError", message: /not both/ });
    assert.equal(stub.seen.length, calls.length, "nothing more was sent");
  } finally {
    await stub.close();
  }
});

test("an unreadable answer, an error body that is not one, and no answer at all are AdminErrors", async () => {
  const stub = await stubServer(({ url }) => {
    if (url === "/admin/faults") return [200, '{"rules":"none"}'];
    if (url === "/admin/tokens") return [200, "not json"];
    if (url === "/admin/reset") return [502, "upstream down"];
    if (url === "/admin/posts") return [404, '{"error":{"code":"nope","message":"no such thing"}}'];
    return undefined; // /admin/requests: held until the client gives up
  });
  try {
    const stubAdmin = new LikeKitAdmin(stub.url, "stub-key", { timeoutMs: 300 });
    await assert.rejects(stubAdmin.getFaults(), (err) => {
      assert.ok(err instanceof AdminError);
      assert.deepEqual([err.status, err.code, err.operation], [200, "unreadable", "get_faults"]);
      assert.match(err.message, /FaultRules\.rules/);
      return true;
    });
    await assert.rejects(stubAdmin.mintToken(7), { name: "AdminError", status: 200, code: "unreadable" });
    await assert.rejects(stubAdmin.reset(), {
      name: "AdminError",
      status: 502,
      code: "unreadable",
      message: /upstream down/,
    });
    await assert.rejects(stubAdmin.createPost(42), {
      name: "AdminError",
      status: 404,
      code: "nope",
      message: "no such thing",
    });
    const started = Date.now();
    await assert.rejects(stubAdmin.requests(), {
      name: "AdminError",
      status: null,
      code: "no_answer",
      operation: "requests",
    });
    const waited = Date.now() - started;
    assert.ok(waited >= 250 && waited < 10_000, `gave up after ${waited} ms`);
  } finally {
    await stub.close();
  }
});

test("every call checks its 2xx answer: a page from another server is unreadable, never a silent success", async () => {
  for (const page of ["<html>not the mock</html>", "{}", '{"ok":false}']) {
    const stub = await stubServer(() => [200, page]);
    try {
      const stubAdmin = new LikeKitAdmin(stub.url, "stub-key");
      const calls = {
        create_user: () => stubAdmin.createUser(7, "Ana"),
        create_post: () => stubAdmin.createPost(42),
        set_friends: () => stubAdmin.setFriends(7, []),
        reset: () => stubAdmin.reset(),
        clear_requests: () => stubAdmin.clearRequests(),
        seed: () => stubAdmin.seed({}),
      };
      for (const [operation, call] of Object.entries(calls)) {
        await assert.rejects(call(), (err) => {
          assert.ok(err instanceof AdminError, `${operation} given ${page}: ${err}`);
          assert.deepEqual([err.status, err.code, err.operation], [200, "unreadable", operation], page);
          return true;
        });
      }
    } finally {
      await stub.close();
    }
  }
});

test("an error answer of the server throws AdminError with its status and code", async () => {
  await assert.rejects(admin.createUser(60, "   "), (err) => {
    assert.ok(err instanceof AdminError);
    assert.ok(err instanceof Error);
    assert.equal(err.name, "AdminError");
    assert.equal(err.status, 400);
    assert.equal(err.code, "bad_name");
    assert.equal(err.operation, "create_user");
    assert.match(err.message, /blank/);
    return true;
  });
  // A wrong key is the server's own 401 and message, for a call with a body as for one without.
  const wrongKey = new LikeKitAdmin(SERVER, `${ADMIN_KEY}-not-it`);
  const nobodysRule = [{ route: "likes", post: 999_996 }];
  const refused = {
    get_faults: () => wrongKey.getFaults(),
    reset: () => wrongKey.reset(),
    create_user: () => wrongKey.createUser(999_995, "Ana"),
    create_post: () => wrongKey.createPost(999_996),
    set_friends: () => wrongKey.setFriends(999_995, []),
    mint_token: () => wrongKey.mintToken(999_995),
    set_faults: () => wrongKey.setFaults(nobodysRule),
    add_faults: () => wrongKey.addFaults(nobodysRule),
    seed: () => wrongKey.seed({ posts: [{ id: 999_996 }] }),
  };
  for (const [operation, call] of Object.entries(refused)) {
    await assert.rejects(call(), { name: "AdminError", status: 401, code: "bad_admin_key", operation, message: /X-Admin-Key/ });
  }
  await assert.rejects(admin.mintToken(USERS.ana, 0), { name: "AdminError", status: 400, code: "bad_ttl" });
  await assert.rejects(admin.mintToken(USERS.ana, 3600, 31_536_001), {
    name: "AdminError",
    status: 400,
    code: "bad_valid_from",
    message: /valid_from_secs/,
  });
  await assert.rejects(admin.mintToken(USERS.ana, 3600, -1.5), { name: "TypeError", message: /validFromSecs/ });
  await assert.rejects(admin.setFriends(999_998, [USERS.ana]), {
    name: "AdminError",
    status: 404,
    code: "user_not_found",
  });
  const nowhere = new LikeKitAdmin("http://127.0.0.1:9", ADMIN_KEY);
  await assert.rejects(nowhere.reset(), { name: "AdminError", status: null, code: "no_answer" });
});

test("createUser and createPost say whether they created; a seed the server picks comes back exact", async () => {
  assert.equal(await admin.createUser(50, "Xia"), "created");
  assert.equal(await admin.createUser(50, "Xia Li"), "existed");
  assert.equal(await admin.createPost(190), "created");
  assert.equal(await admin.createPost(190), "existed");

  const rules = [{ route: "batch", post: 190, latency_ms: 1 }];
  const set = await admin.setFaults(rules);
  assert.ok(typeof set.seed === "bigint" || Number.isSafeInteger(set.seed), `seed ${set.seed}`);
  assert.deepEqual(
    set.rules.map((r) => [r.route, r.post, r.latency_ms, r.status, r.probability, r.phase]),
    [["batch", 190, 1, 503, 1, "before"]],
  );
  assert.deepEqual(await admin.getFaults(), set);
  const replay = await admin.setFaults({ seed: set.seed, rules });
  assert.equal(replay.seed, set.seed, "the seed went back exactly");
  const asOption = await admin.setFaults(rules, { seed: set.seed });
  assert.deepEqual(asOption, replay, "the same seed given as an option");
  assert.deepEqual(await admin.clearFaults(), { rules: [] });
  assert.deepEqual((await admin.getFaults()).rules, []);
});

test("getFaults says what each rule has used up, and its answer can be set again as it is", async () => {
  const post = await newPost(195);
  const read = () =>
    fetch(`${SERVER}/posts/${post}/likes`, { headers: { Authorization: `Bearer ${tokens.ana}` } });
  await admin.setFaults([
    { route: "likes", post, fail_next: 2 },
    { route: "likes", post, first: 5, latency_ms: 1 },
  ]);
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await read()).status);
  assert.deepEqual(statuses, [503, 503, 200]);
  const used = await admin.getFaults();
  assert.deepEqual(
    used.rules.map((r) => r.fail_next),
    [2, 0],
    "the rules as they were set",
  );
  assert.deepEqual(used.state, [
    { matched: 3, fired: 3, acted: 2, fail_next_left: 0 },
    // The two failed reads are counted, not fired on: the rule before acted.
    { matched: 3, fired: 1, acted: 0, first_left: 2 },
  ]);
  const again = await admin.setFaults(used);
  assert.deepEqual(again.rules, used.rules);
  assert.deepEqual(again.state, [
    { matched: 0, fired: 0, acted: 0, fail_next_left: 2 },
    { matched: 0, fired: 0, acted: 0, first_left: 5 },
  ]);
  assert.equal((await read()).status, 503, "the counters started over");
});

test("tests sharing the server add rules with addFaults and remove theirs by tag; a used-up rule stays used up", async () => {
  const [ana, ben] = [70, 71];
  const [anaPost, benPost] = [await newPost(200), await newPost(201)];
  await admin.createUser(ana, "Ana");
  await admin.createUser(ben, "Ben");
  const [anaToken, benToken] = [await admin.mintToken(ana), await admin.mintToken(ben)];
  const write = async (method, token, post) =>
    (await fetch(`${SERVER}/posts/${post}/like`, { method, headers: { Authorization: `Bearer ${token}` } }))
      .status;
  // Other tests' rules, if any, come first and stay.
  const others = (await admin.getFaults()).rules.length;
  try {
    // Test B: Ben's first like of his post fails once.
    const b = await admin.addFaults([
      { route: "like", user: ben, post: benPost, fail_next: 1, status: 500, tag: "sharing-b" },
    ]);
    const benRule = b.rules.at(-1);
    assert.equal(benRule.tag, "sharing-b");
    assert.ok(b.seed !== undefined, "the rules in force have a seed");
    assert.equal(await write("POST", benToken, benPost), 500, "B's first like");

    // Test A adds its own rule meanwhile.
    const a = await admin.addFaults([
      { route: "like", user: ana, post: anaPost, fail_next: 1, status: 500, tag: "sharing-a" },
    ]);
    assert.equal(a.seed, b.seed, "the seed stays");
    assert.deepEqual(
      a.rules.slice(others).map((rule) => rule.tag),
      ["sharing-b", "sharing-a"],
      "A's rule comes last",
    );
    assert.deepEqual(a.state.slice(others), [
      { matched: 1, fired: 1, acted: 1, fail_next_left: 0 }, // B's stays used up
      { matched: 0, fired: 0, acted: 0, fail_next_left: 1 },
    ]);
    assert.equal(await write("POST", benToken, benPost), 200, "B's next like goes through");
    assert.equal(await write("POST", anaToken, anaPost), 500, "A's first like");

    // A is done: only its rule goes; B's keeps its counters and the seed stays.
    const left = await admin.clearFaults({ tag: "sharing-a" });
    assert.equal(left.seed, b.seed);
    assert.deepEqual(left.rules.slice(others), [benRule]);
    assert.deepEqual(left.state.slice(others), [{ matched: 2, fired: 2, acted: 1, fail_next_left: 0 }]);
    // The journal names each test's fault by its rule's tag, which stays
    // when a removal moves the rules.
    const faulted = [];
    for (const post of [anaPost, benPost]) {
      const entries = await journal({ route: "like", post });
      faulted.push(entries.filter((e) => e.fault !== null).map((e) => [e.fault_tag, e.fault_rule]));
    }
    assert.deepEqual(faulted, [[["sharing-a", others + 1]], [["sharing-b", others]]]);
    assert.equal(await write("POST", anaToken, anaPost), 200, "A's rule is gone");
    assert.equal(await write("DELETE", benToken, benPost), 200, "B unlikes");
    assert.equal(await write("POST", benToken, benPost), 200, "B's rule is still used up");

    assert.deepEqual(
      (await admin.clearFaults({ tag: "sharing-a" })).rules,
      left.rules,
      "an unused tag removes nothing",
    );
    await assert.rejects(admin.clearFaults({ tag: "two words" }), {
      name: "AdminError",
      status: 400,
      code: "bad_query",
      operation: "clear_faults",
    });
    await assert.rejects(admin.clearFaults("sharing-b"), TypeError);
    const none = await admin.clearFaults({ tag: "sharing-b" });
    assert.deepEqual(none.rules.slice(others), []);
    assert.equal(none.seed, b.seed, "a removal by tag keeps the seed");
  } finally {
    await admin.clearFaults({ tag: "sharing-a" });
    await admin.clearFaults({ tag: "sharing-b" });
  }
  assert.equal((await admin.getFaults()).rules.length, others);
});

test("a test sharing the server reads its own rules with getFaults({ tag }) and what they did with requests({ fault_tag })", async () => {
  const [ana, ben] = [74, 75];
  const post = await newPost(204);
  await admin.createUser(ana, "Ana");
  await admin.createUser(ben, "Ben");
  const tokenOf = { [ana]: await admin.mintToken(ana), [ben]: await admin.mintToken(ben) };
  const read = async (user) =>
    (await fetch(`${SERVER}/posts/${post}/likes`, { headers: { Authorization: `Bearer ${tokenOf[user]}` } }))
      .status;
  /** [user, status, fault_tag, fault] of the entries `filter` selects. */
  const seen = async (filter) =>
    (await journal(filter)).map((e) => [e.user, e.status, e.fault_tag, e.fault]);
  const others = (await admin.getFaults()).rules.length;
  try {
    // A's rule fails Ana's first read; B's only delays Ben's.
    const inForce = await admin.addFaults([
      { route: "likes", user: ana, post, fail_next: 1, status: 500, tag: "by-tag-a" },
      { route: "likes", user: ben, post, latency_ms: 1, tag: "by-tag-b" },
    ]);
    const [ruleA, ruleB] = inForce.rules.slice(others);
    assert.equal(await read(ana), 500, "A's rule acts on Ana's first read");
    assert.equal(await read(ana), 200, "then it is used up");
    assert.equal(await read(ben), 200, "B's rule delays Ben's read");

    // Each test reads its own rules, with what each has used up, and the seed.
    const mine = await admin.getFaults({ tag: "by-tag-a" });
    assert.deepEqual(mine.rules, [ruleA]);
    assert.deepEqual(mine.state, [{ matched: 2, fired: 2, acted: 1, fail_next_left: 0 }]);
    assert.equal(mine.seed, inForce.seed);
    assert.deepEqual((await admin.getFaults({ tag: "by-tag-b" })).rules, [ruleB]);
    assert.deepEqual((await admin.getFaults({ tag: "by-tag-c" })).rules, [], "a tag no rule has");

    // And what its rules did, by their tag.
    assert.deepEqual(await seen({ fault_tag: "by-tag-a" }), [[ana, 500, "by-tag-a", "status"]]);
    assert.deepEqual(await seen({ fault_tag: "by-tag-b" }), [[ben, 200, "by-tag-b", "latency"]]);
    assert.deepEqual(await seen({ fault_tag: "by-tag-a", user: ben }), [], "both filters must match");

    // A bad tag is the server's bad_query, and removes nothing.
    const refused = [
      ["get_faults", () => admin.getFaults({ tag: "two words" })],
      ["requests", () => admin.requests({ fault_tag: "two words" })],
      ["clear_requests", () => admin.clearRequests({ fault_tag: "" })],
    ];
    for (const [operation, call] of refused) {
      await assert.rejects(call(), (err) => {
        assert.ok(err instanceof AdminError);
        assert.deepEqual([err.status, err.code, err.operation], [400, "bad_query", operation]);
        assert.match(err.message, operation === "get_faults" ? /^tag: / : /^fault_tag: /);
        return true;
      });
    }
    const all = await seen({ post });
    assert.deepEqual(all, [
      [ana, 500, "by-tag-a", "status"],
      [ana, 200, null, null],
      [ben, 200, "by-tag-b", "latency"],
    ]);

    // A is done: the entries its rule acted on go; B's and the untouched one stay.
    await admin.clearRequests({ fault_tag: "by-tag-a" });
    assert.deepEqual(await seen({ post }), all.slice(1));
  } finally {
    await admin.clearFaults({ tag: "by-tag-a" });
    await admin.clearFaults({ tag: "by-tag-b" });
    await admin.clearRequests({ post });
  }
  assert.equal((await admin.getFaults()).rules.length, others);
});

test("addFaults past 256 rules in force is too_many_rules (409), and adds nothing", async () => {
  const post = 202; // never requested: the rules act on nothing
  const others = (await admin.getFaults()).rules.length;
  try {
    const rule = { route: "likes", post, tag: "full-house" };
    const full = await admin.addFaults(Array.from({ length: 256 - others }, () => rule));
    assert.equal(full.rules.length, 256);
    await assert.rejects(admin.addFaults([{ route: "likes", post, tag: "one-too-many" }]), (err) => {
      assert.ok(err instanceof AdminError);
      assert.deepEqual([err.status, err.code, err.operation], [409, "too_many_rules", "add_faults"]);
      assert.match(err.message, /256/);
      return true;
    });
    assert.deepEqual(await admin.getFaults(), full, "nothing was added");
    await assert.rejects(admin.addFaults([{ route: "likes", post, tag: 7 }]), TypeError);
  } finally {
    await admin.clearFaults({ tag: "full-house" });
  }
  assert.equal((await admin.getFaults()).rules.length, others);
});

test("waitForRequests answers once the requests are there and answered (met), or when its wait runs out (not met), past the client's own timeout", async () => {
  const ana = 76;
  const post = await newPost(205);
  await admin.createUser(ana, "Ana");
  const token = await admin.mintToken(ana);
  const likes = { route: "like", post };
  const tag = "wait-for-requests";
  // Each wait below outlasts this client's own half second.
  const quick = new LikeKitAdmin(SERVER, ADMIN_KEY, { timeoutMs: 500 });
  await admin.addFaults([{ route: "like", post, latency_ms: 600, tag }]);
  try {
    let answered = null;
    const waiting = quick.waitForRequests(likes, 1, { timeoutMs: 10_000 }).then((journal) => (answered = journal));
    waiting.catch(() => {}); // awaited below
    await sleep(200);
    assert.equal(answered, null, "answered before any like");
    const sent = performance.now();
    const liked = fetch(`${SERVER}/posts/${post}/like`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}` },
    });
    await sleep(300);
    assert.equal(answered, null, "answered while the like was in flight");
    const journal = await waiting;
    const waited = performance.now() - sent;
    assert.ok(waited >= 600, `answered ${waited} ms after the like was sent, before its 600 ms latency`);
    assert.equal((await liked).status, 200);
    assert.equal(journal.met, true);
    assert.deepEqual(
      journal.entries.map((e) => [e.status, e.in_flight]),
      [[200, false]],
    );

    // Two asked for, one there: the wait runs out and says so.
    const started = performance.now();
    const short = await quick.waitForRequests(likes, 2, { timeoutMs: 800 });
    assert.ok(performance.now() - started >= 800, "answered before the wait's 800 ms");
    assert.deepEqual([short.met, short.entries.length], [false, 1]);
    assert.equal(Object.hasOwn(await admin.requests(likes), "met"), false, "a read that does not wait");

    for (const [count, options] of [[0, {}], [1, { timeoutMs: 60_001 }]]) {
      await assert.rejects(admin.waitForRequests(likes, count, options), (err) => {
        assert.ok(err instanceof AdminError);
        assert.deepEqual([err.status, err.code, err.operation], [400, "bad_query", "requests"]);
        return true;
      });
    }
    for (const call of [
      () => admin.waitForRequests(likes, -1),
      () => admin.waitForRequests(likes, 1.5),
      () => admin.waitForRequests(likes, 1, { timeout: 5 }),
      () => admin.waitForRequests(likes, 1, { timeoutMs: "5" }),
      () => admin.waitForRequests({ post: undefined }, 1),
      () => admin.waitForRequests(undefined, 1),
    ]) {
      await assert.rejects(call(), TypeError);
    }
  } finally {
    await admin.clearFaults({ tag });
    await admin.clearRequests({ post });
  }

  // `met` is read, and written back, only when there is one; `last_seq`
  // is 0 from a server older than the field.
  const waited = { entries: [], capacity: 10, dropped: 0, last_seq: 7, met: true };
  assert.deepEqual(decodeJournal(waited), waited);
  assert.deepEqual(encodeJournal(decodeJournal(waited)), waited);
  assert.equal(Object.hasOwn(encodeJournal({ entries: [], capacity: 10, dropped: 0, last_seq: 0 }), "met"), false);
  assert.equal(decodeJournal({ entries: [], capacity: 10, dropped: 0 }).last_seq, 0);
  assert.throws(() => decodeJournal({ ...waited, met: "yes" }), { name: "AdminError", message: /Journal\.met/ });
});

test("clearRequests with a filter removes only the entries it matches; another user's stay", async () => {
  const [ana, ben] = [72, 73];
  const post = await newPost(203);
  await admin.createUser(ana, "Ana");
  await admin.createUser(ben, "Ben");
  const tokenOf = { [ana]: await admin.mintToken(ana), [ben]: await admin.mintToken(ben) };
  for (const user of [ana, ben, ana]) {
    const response = await fetch(`${SERVER}/posts/${post}/likes`, {
      headers: { Authorization: `Bearer ${tokenOf[user]}` },
    });
    assert.equal(response.status, 200, `user ${user} reads post ${post}`);
  }
  assert.deepEqual(
    (await journal({ post })).map((entry) => entry.user),
    [ana, ben, ana],
  );
  await admin.clearRequests({ user: ana, post });
  const left = await journal({ post });
  assert.deepEqual(
    left.map((entry) => entry.user),
    [ben],
    "Ben's read stays",
  );
  await admin.clearRequests({ user: ana });
  assert.deepEqual(await journal({ post }), left, "nothing more of Ana's to remove");
  await assert.rejects(admin.clearRequests({ usr: ana }), TypeError);
  await admin.clearRequests({ post });
  assert.deepEqual(await journal({ post }), []);
});

test("the journal names each request by its X-Request-Id and finds it by that id", async () => {
  const post = await newPost(196);
  const headers = { Authorization: `Bearer ${tokens.ana}` };
  const given = await fetch(`${SERVER}/posts/${post}/likes`, {
    headers: { ...headers, "X-Request-Id": "checkout-7f3a" },
  });
  assert.equal(given.headers.get("x-request-id"), "checkout-7f3a");
  const made = (await fetch(`${SERVER}/posts/${post}/likes`, { headers })).headers.get("x-request-id");
  const entries = await journal({ post });
  assert.deepEqual(
    entries.map((e) => e.request_id),
    ["checkout-7f3a", made],
  );
  assert.deepEqual(await journal({ request_id: "checkout-7f3a" }), [entries[0]]);
  assert.deepEqual(await journal({ request_id: made, post }), [entries[1]]);
  assert.deepEqual(await journal({ request_id: made, route: "like" }), []);
});

test("getUser and getPost read back what the store holds; unknown ones are user_not_found and post_not_found", async () => {
  const [yara, zack, cy] = [53, 54, 55];
  await admin.createUser(yara, "Yara");
  await admin.createUser(zack, "Zack");
  await admin.createUser(cy, "Cy");
  await admin.setFriends(zack, [cy, yara]);
  assert.deepEqual(await admin.getUser(zack), { id: zack, name: "Zack", friends: [yara, cy] });
  assert.deepEqual(await admin.getUser(cy), { id: cy, name: "Cy", friends: [] });

  const post = await newPost(197);
  assert.deepEqual(await admin.getPost(post), { id: post, count: 0, version: 0, recent_likers: [] });
  const write = async (method, user) => {
    const token = await admin.mintToken(user);
    const response = await fetch(`${SERVER}/posts/${post}/like`, {
      method,
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.equal(response.status, 200, `${method} by user ${user}: ${await response.text()}`);
  };
  for (const user of [yara, cy, zack]) await write("POST", user);
  // A like that changes nothing moves nothing; an unlike moves the count back.
  await write("POST", cy);
  await write("DELETE", cy);
  assert.deepEqual(await admin.getPost(post), {
    id: post,
    count: 2,
    version: 4,
    recent_likers: [zack, yara],
  });

  await assert.rejects(admin.getUser(999_997), {
    name: "AdminError",
    status: 404,
    code: "user_not_found",
    operation: "get_user",
  });
  await assert.rejects(admin.getPost(999_997), {
    name: "AdminError",
    status: 404,
    code: "post_not_found",
    operation: "get_post",
  });
});

// Last: reset drops the likes every test before it made.
test("seed loads users, friends and likes; the journal filters by since; reset drops every like", async () => {
  const post = 191;
  const document = {
    users: [
      { id: 51, name: "Yan", friends: [52] },
      { id: 52, name: "Zoe" },
    ],
    posts: [{ id: post, likers: [52] }],
  };
  await admin.seed(document);
  await admin.seed(document); // loading it again changes nothing
  assert.equal(await admin.createUser(52, "Zoe"), "existed");

  const token = await admin.mintToken(51);
  /** A new client for Yan: one that saw a count keeps it over an older version of the post. */
  const yanClient = () => {
    const client = new LikeClient(SERVER, { token: () => token });
    clients.push(client);
    return client;
  };
  const seen = await yanClient().refresh(post);
  assert.equal(seen.count, 1);
  assert.equal(seen.line, "Liked by Zoe");

  const reads = await journal({ post, user: 51 });
  assert.equal(reads.length, 1);
  const [read] = reads;
  assert.deepEqual(
    [read.method, read.posts, read.user, read.status, read.write, read.in_flight],
    ["GET", [post], 51, 200, null, false],
  );
  assert.deepEqual(await journal({ post, since: read.seq }), []);

  await admin.reset();
  assert.equal((await yanClient().refresh(post)).count, 0);
  const later = await journal({ post, since: read.seq });
  assert.equal(later.length, 1);
  assert.ok(later[0].seq > read.seq);
});

test("releasing twice is harmless: free() and [Symbol.dispose] again, shutdown() after free(); any other call on a freed client still throws", async () => {
  const server = new ScriptedServer();
  const client = LikeClient.scripted(server, { retry: { maxRetries: 0 } });
  client.setLiked(42, true);
  await Promise.resolve();
  assert.equal(server.calls().length, 1);
  client.free();
  // A cleanup that runs twice (React 18's effects during a hot reload).
  client.free();
  if (Symbol.dispose) client[Symbol.dispose]();
  assert.equal(await client.shutdown(100), true);
  assert.throws(() => client.toggle(42), /null pointer passed to rust/);
  assert.throws(() => client.view(42), /null pointer passed to rust/);
  server.free();
  server.free();
  assert.throws(() => server.calls(), /null pointer passed to rust/);
});
