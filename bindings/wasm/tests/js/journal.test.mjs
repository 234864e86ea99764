// The intent journal of the web package (`options.journal`, `restore()`),
// in Node, on a ScriptedServer and an in-memory Storage: what a page
// reload does in a browser (tests/js/demo-page.test.mjs does it for real
// in Chromium, on localStorage). Run with `cargo xtask test --only node`.

import { test } from "node:test";
import assert from "node:assert/strict";

import init, { LikeClient, ScriptedServer } from "likekit-wasm";

await init();

/** An in-memory `Storage`, as `options.journal.storage` takes one. */
class MemoryStorage {
  constructor(entries = {}) {
    this.items = new Map(Object.entries(entries));
    this.writes = 0;
  }
  getItem(key) {
    return this.items.has(key) ? this.items.get(key) : null;
  }
  setItem(key, value) {
    this.writes += 1;
    this.items.set(key, String(value));
  }
  removeItem(key) {
    this.items.delete(key);
  }
}

const KEY = (viewer) => `likekit-intents:${viewer}`;
const LIKES = { count: 10, likedByMe: false, version: 1 };
const SETTLE_MS = 2_000;

/** A client for `viewer` on `server`, its journal in `storage`. */
function clientFor(server, storage, viewer = "ana", options = {}) {
  return LikeClient.scripted(server, { journal: { viewer, storage }, ...options });
}

/** Waits until `check()` holds, or fails naming `what`. */
async function waitFor(check, what) {
  const end = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A journal as a native client writes it, for `viewer`. */
const document = (viewer, intents) =>
  JSON.stringify({ format: 1, viewer, intents: intents.map(([post, liked, at]) => ({ post, liked, tapped_at_ms: at })) });

test("a tap is in the journal before its call is answered, and gone once it is", async () => {
  const server = new ScriptedServer();
  const storage = new MemoryStorage();
  const client = clientFor(server, storage);
  client.setLiked(42, true);
  await waitFor(() => server.calls().length === 1, "the like call");
  await waitFor(() => storage.getItem(KEY("ana")) !== null, "the journal to be written");
  const saved = JSON.parse(storage.getItem(KEY("ana")));
  assert.equal(saved.format, 1);
  assert.equal(saved.viewer, "ana");
  assert.equal(saved.intents.length, 1);
  assert.deepEqual([saved.intents[0].post, saved.intents[0].liked], [42, true]);
  assert.ok(Math.abs(saved.intents[0].tapped_at_ms - Date.now()) < 60_000, "tapped now");
  assert.doesNotMatch(storage.getItem(KEY("ana")), /token/i, "no token is written");

  server.answer(server.calls()[0].id, { count: 11, likedByMe: true, version: 2 });
  assert.ok(await client.waitIdle(SETTLE_MS));
  assert.equal(storage.getItem(KEY("ana")), null, "a confirmed tap leaves the journal");
  client.free();
});

test("a new client restores the tap at once, pending, and sends it once", async () => {
  const server = new ScriptedServer();
  const storage = new MemoryStorage();
  const first = clientFor(server, storage);
  first.setLiked(42, true);
  first.setLiked(42, false);
  first.setLiked(42, true); // like → unlike → like: only the last is kept
  await waitFor(() => storage.getItem(KEY("ana"))?.includes('"liked":true'), "the journal");
  first.free(); // the page goes away with its call unanswered

  const later = new ScriptedServer();
  later.setPost(42, LIKES);
  const client = clientFor(later, storage);
  const events = [];
  client.subscribeAll((event) => events.push(event));
  const report = client.restore();
  assert.equal(report.problem, null);
  assert.deepEqual(report.expired, []);
  assert.equal(report.restored.length, 1);
  const [view] = report.restored;
  assert.equal(view.postId, 42);
  assert.equal(view.liked, true);
  assert.equal(view.pending, true);
  assert.deepEqual(client.view(42), view, "the view shows it at once");

  await waitFor(() => later.calls().length === 1, "the restored call");
  assert.deepEqual(later.calls().map((c) => c.text), ["like 42 #0"]);
  later.answer(0, { count: 11, likedByMe: true, version: 2 });
  assert.ok(await client.waitIdle(SETTLE_MS));
  assert.deepEqual(later.calls(), [], "one call, no more");
  assert.equal(client.view(42).liked, true);
  assert.equal(client.view(42).pending, false);
  assert.equal(client.view(42).count, 11);
  assert.ok(!events.some((e) => e.kind === "failed"));
  assert.equal(storage.getItem(KEY("ana")), null);
  client.free();
});

test("a tap older than maxIntentAgeMs fails once, as expired, and sends nothing", async () => {
  const server = new ScriptedServer();
  const hourAgo = Date.now() - 3_600_000;
  const storage = new MemoryStorage({ [KEY("ana")]: document("ana", [[7, true, hourAgo], [8, false, Date.now()]]) });
  const client = clientFor(server, storage, "ana", { maxIntentAgeMs: 60_000 });
  const failures = [];
  client.subscribeAll((event) => event.kind === "failed" && failures.push(event.failure));
  const report = client.restore();
  assert.deepEqual(report.restored.map((v) => [v.postId, v.liked, v.pending]), [[8, false, true]]);
  assert.equal(report.expired.length, 1);
  assert.equal(report.expired[0].postId, 7);
  assert.equal(report.expired[0].wanted, true);
  assert.equal(report.expired[0].error.code, "expired");
  await waitFor(() => server.calls().length === 1, "the fresh tap's call");
  assert.deepEqual(server.calls().map((c) => c.text), ["unlike 8 #0"], "nothing for the old tap");
  await waitFor(() => failures.length === 1, "the expired tap's failure");
  assert.equal(failures[0].postId, 7);
  assert.equal(failures.length, 1);
  client.free();
});

test("another viewer's client sends nothing of Ana's", async () => {
  const server = new ScriptedServer();
  const storage = new MemoryStorage({ [KEY("ana")]: document("ana", [[42, true, Date.now()]]) });
  const ben = clientFor(server, storage, "ben");
  const report = ben.restore();
  assert.deepEqual(report.restored, []);
  assert.equal(report.problem, null);
  assert.ok(await ben.waitIdle(SETTLE_MS));
  assert.deepEqual(server.calls(), []);
  assert.ok(storage.getItem(KEY("ana")), "Ana's journal is left alone");

  // Ana's journal stored under Ben's key is refused, not sent.
  const swapped = new MemoryStorage({ [KEY("ben")]: document("ana", [[42, true, Date.now()]]) });
  const mixed = clientFor(server, swapped, "ben");
  const refused = mixed.restore();
  assert.deepEqual(refused.restored, []);
  assert.equal(refused.problem.code, "journal_damaged");
  assert.match(refused.problem.message, /another viewer/);
  assert.ok(await mixed.waitIdle(SETTLE_MS));
  assert.deepEqual(server.calls(), []);
  ben.free();
  mixed.free();
});

test("a damaged journal is reported once, the client starts empty, the next save replaces it", async () => {
  const cases = {
    truncated: document("ana", [[42, true, Date.now()]]).slice(0, 30),
    garbage: "\u0000not json at all",
    "a future format": JSON.stringify({ format: 99, viewer: "ana", intents: [] }),
  };
  for (const [what, text] of Object.entries(cases)) {
    const server = new ScriptedServer();
    const storage = new MemoryStorage({ [KEY("ana")]: text });
    const client = clientFor(server, storage);
    const report = client.restore();
    assert.equal(report.problem?.code, "journal_damaged", what);
    assert.deepEqual(report.restored, [], what);
    assert.equal(client.restore().problem, null, `${what}: reported once`);
    client.setLiked(5, true);
    await waitFor(() => storage.getItem(KEY("ana")) !== text, `${what}: the journal replaced`);
    const saved = JSON.parse(storage.getItem(KEY("ana")));
    assert.deepEqual(saved.intents.map((i) => [i.post, i.liked]), [[5, true]], what);
    client.free();
  }
});

test("storage that throws: a journal error at restore, and taps still go out", async () => {
  const locked = {
    getItem: () => {
      throw new Error("The operation is insecure.");
    },
    setItem: () => {},
    removeItem: () => {},
  };
  const unreadable = LikeClient.scripted(new ScriptedServer(), { journal: { viewer: "ana", storage: locked } });
  const problem = unreadable.restore().problem;
  assert.equal(problem.code, "journal_unreadable");
  assert.match(problem.message, /The operation is insecure/);
  unreadable.free();

  const server = new ScriptedServer();
  const full = {
    getItem: () => null,
    setItem: () => {
      throw new Error("QuotaExceededError");
    },
    removeItem: () => {},
  };
  const client = clientFor(server, full);
  const view = client.setLiked(9, true);
  assert.equal(view.pending, true);
  await waitFor(() => server.calls().length === 1, "the like call");
  server.answer(0, { count: 1, likedByMe: true, version: 2 });
  assert.ok(await client.waitIdle(SETTLE_MS));
  assert.equal(client.view(9).liked, true);
  client.free();

  assert.throws(
    () => LikeClient.scripted(server, { journal: { storage: new MemoryStorage() } }),
    (e) => e.name === "LikeError" && e.code === "config" && /viewer/.test(e.message),
  );
});

test("journalProblem(): a failed save is reported until a save works, and the save is tried again on its own", async () => {
  const server = new ScriptedServer();
  const storage = new MemoryStorage();
  let full = false;
  const quota = () => {
    if (full) throw new Error("QuotaExceededError: the quota has been exceeded");
  };
  const flaky = {
    getItem: (key) => storage.getItem(key),
    setItem: (key, value) => (quota(), storage.setItem(key, value)),
    removeItem: (key) => (quota(), storage.removeItem(key)),
  };
  const client = clientFor(server, flaky);
  try {
    assert.equal(client.restore().problem, null);
    assert.equal(client.journalProblem(), null, "nothing wrong yet");

    full = true;
    assert.equal(client.setLiked(9, true).pending, true);
    await waitFor(() => server.calls().length === 1, "the like call, sent all the same");
    await waitFor(() => client.journalProblem() !== null, "the failed save to be reported");
    const problem = client.journalProblem();
    assert.equal(problem.name, "LikeError");
    assert.equal(problem.code, "journal_unwritable");
    assert.equal(problem.transient, false);
    assert.match(problem.message, /QuotaExceededError/);
    assert.equal(storage.getItem(KEY("ana")), null, "nothing written while full");

    full = false; // space again: no tap needed, the timer saves it
    await waitFor(() => client.journalProblem() === null, "the save to be tried again");
    const saved = JSON.parse(storage.getItem(KEY("ana")));
    assert.deepEqual(saved.intents.map((i) => [i.post, i.liked]), [[9, true]]);
    server.answer(0, { count: 1, likedByMe: true, version: 2 });
    assert.ok(await client.waitIdle(SETTLE_MS));
    assert.equal(storage.getItem(KEY("ana")), null, "the confirmed tap leaves the journal");
    assert.equal(client.journalProblem(), null);
  } finally {
    full = false; // a save still failing would keep its retry timer, and Node, alive
    client.free();
  }

  // Without a journal there is nothing to report.
  const plain = LikeClient.scripted(new ScriptedServer());
  assert.equal(plain.journalProblem(), null);
  plain.free();
});

test("a save the full storage refuses removes the entry: a reload sends no tap the viewer has since changed", async () => {
  const server = new ScriptedServer();
  const storage = new MemoryStorage();
  let full = false;
  const quota = {
    getItem: (key) => storage.getItem(key),
    setItem: (key, value) => {
      if (full) throw new Error("QuotaExceededError: the quota has been exceeded");
      storage.setItem(key, value);
    },
    // Removing needs no room, in a browser too.
    removeItem: (key) => storage.removeItem(key),
  };
  const client = clientFor(server, quota);
  try {
    client.restore();
    client.setLiked(42, true);
    client.setLiked(43, true);
    await waitFor(() => storage.getItem(KEY("ana"))?.includes('"post":43'), "both taps saved");

    full = true;
    client.setLiked(42, false); // the viewer takes the like back
    await waitFor(() => client.journalProblem() !== null, "the refused save to be reported");
    assert.match(client.journalProblem().message, /QuotaExceededError/);
    // The entry listed 42 liked: a reload would have liked it again.
    assert.equal(storage.getItem(KEY("ana")), null, "the out-of-date entry is gone");
  } finally {
    full = false;
    client.free();
  }
  const reloaded = clientFor(new ScriptedServer(), storage);
  try {
    assert.deepEqual(reloaded.restore().restored, [], "nothing out of date restored");
  } finally {
    reloaded.free();
  }
});

test("journalProblem(): a save whose read of the entry throws is a failed save (journal_unwritable), tried again", async () => {
  const server = new ScriptedServer();
  const storage = new MemoryStorage();
  let locked = false;
  const flaky = {
    getItem: (key) => {
      if (locked) throw new Error("SecurityError: the storage is locked");
      return storage.getItem(key);
    },
    setItem: (key, value) => storage.setItem(key, value),
    removeItem: (key) => storage.removeItem(key),
  };
  const client = clientFor(server, flaky);
  try {
    assert.equal(client.restore().problem, null, "read fine at start");
    locked = true;
    assert.equal(client.setLiked(9, true).pending, true);
    await waitFor(() => client.journalProblem() !== null, "the failed save to be reported");
    const problem = client.journalProblem();
    assert.equal(problem.code, "journal_unwritable", "it is the save that failed");
    assert.match(problem.message, /the storage is locked/);
    assert.equal(storage.getItem(KEY("ana")), null, "nothing written while locked");
    await waitFor(() => server.calls().length === 1, "the like call, sent all the same");

    locked = false; // the timer tries the save again
    await waitFor(() => client.journalProblem() === null, "the save to be tried again");
    const saved = JSON.parse(storage.getItem(KEY("ana")));
    assert.deepEqual(saved.intents.map((i) => [i.post, i.liked]), [[9, true]]);
    server.answer(0, { count: 1, likedByMe: true, version: 2 });
    assert.ok(await client.waitIdle(SETTLE_MS));
  } finally {
    locked = false;
    client.free();
  }
});

test("journalProblem(): storage that cannot be read at start is reported for the client's life and left untouched", async () => {
  const server = new ScriptedServer();
  let writes = 0;
  const locked = {
    getItem: () => {
      throw new Error("The operation is insecure.");
    },
    setItem: () => void (writes += 1),
    removeItem: () => void (writes += 1),
  };
  const client = clientFor(server, locked);
  assert.equal(client.journalProblem()?.code, "journal_unreadable", "before restore");
  const report = client.restore();
  assert.equal(report.problem.code, "journal_unreadable");
  client.setLiked(5, true);
  await waitFor(() => server.calls().length === 1, "the like call");
  server.answer(0, { count: 1, likedByMe: true, version: 2 });
  assert.ok(await client.waitIdle(SETTLE_MS));
  assert.equal(client.view(5).liked, true, "the tap still saved on the server");
  const problem = client.journalProblem();
  assert.equal(problem?.code, "journal_unreadable", "still reported after restore and a tap");
  assert.match(problem.message, /The operation is insecure/);
  assert.equal(writes, 0, "the unreadable journal is never written");
  client.free();
});

/**
 * Runs `body` with `globalThis.localStorage` replaced by `descriptor`
 * (as a blocked or missing storage looks), then puts back what was there.
 */
async function withLocalStorage(descriptor, body) {
  const before = Object.getOwnPropertyDescriptor(globalThis, "localStorage");
  Object.defineProperty(globalThis, "localStorage", { configurable: true, ...descriptor });
  try {
    await body();
  } finally {
    if (before) Object.defineProperty(globalThis, "localStorage", before);
    else delete globalThis.localStorage;
  }
}

test("a localStorage that throws when read, or none at all: the client is made without a journal and says journal_unreadable", async () => {
  let reads = 0;
  const blocked = {
    get() {
      reads += 1;
      // What a browser throws with site data blocked, or in a sandboxed frame.
      throw new DOMException("The operation is insecure.", "SecurityError");
    },
  };
  await withLocalStorage(blocked, async () => {
    // The constructor as a page calls it: no storage given, so localStorage.
    const made = new LikeClient("http://127.0.0.1:9", { journal: { viewer: "ana" } });
    assert.equal(reads, 1, "localStorage was read");
    assert.equal(made.journalProblem()?.code, "journal_unreadable");
    assert.match(made.journalProblem().message, /The operation is insecure/);
    made.free();

    const server = new ScriptedServer();
    const client = LikeClient.scripted(server, { journal: { viewer: "ana" } });
    try {
      const { restored, expired, problem } = client.restore();
      assert.deepEqual([restored, expired], [[], []]);
      assert.equal(problem.name, "LikeError");
      assert.equal(problem.code, "journal_unreadable");
      assert.equal(problem.transient, false);
      assert.match(problem.message, /The operation is insecure/);
      assert.equal(client.setLiked(5, true).pending, true, "the heart fills all the same");
      await waitFor(() => server.calls().length === 1, "the like call");
      server.answer(0, { count: 1, likedByMe: true, version: 2 });
      assert.ok(await client.waitIdle(SETTLE_MS));
      assert.equal(client.view(5).liked, true, "the like saved on the server");
      assert.equal(client.journalProblem()?.code, "journal_unreadable", "still said after restore and a tap");
    } finally {
      client.free();
    }
  });

  await withLocalStorage({ value: undefined }, async () => {
    const server = new ScriptedServer();
    const client = LikeClient.scripted(server, { journal: { viewer: "ana" } });
    try {
      assert.equal(client.journalProblem()?.code, "journal_unreadable");
      assert.equal(client.restore().problem?.code, "journal_unreadable");
      client.setLiked(6, true);
      await waitFor(() => server.calls().length === 1, "the like call");
      server.answer(0, { count: 1, likedByMe: true, version: 2 });
      assert.ok(await client.waitIdle(SETTLE_MS));
      assert.equal(client.view(6).liked, true);
    } finally {
      client.free();
    }
  });
});

// Two tabs of one viewer share one entry in localStorage: each save reads
// it again and merges, so neither tab's save drops the other's taps.

/** The intents the entry holds now, as [post, liked]. */
const held = (storage, viewer = "ana") => {
  const text = storage.getItem(KEY(viewer));
  return text === null ? [] : JSON.parse(text).intents.map((i) => [i.post, i.liked]);
};

test("two tabs: one tab's answered tap does not take the other's unsaved tap out of the journal", async () => {
  const storage = new MemoryStorage();
  const [serverA, serverB] = [new ScriptedServer(), new ScriptedServer()];
  const tabA = clientFor(serverA, storage);
  const tabB = clientFor(serverB, storage);
  try {
    tabA.setLiked(1, true); // its call hangs
    await waitFor(() => held(storage).length === 1, "tab A's like in the journal");
    tabB.setLiked(2, true);
    await waitFor(() => held(storage).length === 2, "tab B's like beside it");
    // The entry's order is not part of the format: compared by post.
    assert.deepEqual(held(storage).sort((a, b) => a[0] - b[0]), [[1, true], [2, true]]);

    await waitFor(() => serverB.calls().length === 1, "tab B's call");
    serverB.answer(0, { count: 1, likedByMe: true, version: 2 });
    assert.ok(await tabB.waitIdle(SETTLE_MS));
    assert.deepEqual(held(storage), [[1, true]], "tab A's like, still out, is still kept");

    serverA.answer(0, { count: 1, likedByMe: true, version: 2 });
    assert.ok(await tabA.waitIdle(SETTLE_MS));
    assert.equal(storage.getItem(KEY("ana")), null, "each tab's confirmed tap left");
  } finally {
    tabA.free();
    tabB.free();
  }
});

test("two tabs: a tab that read another's tap at start does not write it back once that tab confirmed it", async () => {
  const storage = new MemoryStorage();
  const [serverA, serverB] = [new ScriptedServer(), new ScriptedServer()];
  const tabA = clientFor(serverA, storage);
  try {
    tabA.setLiked(1, true);
    await waitFor(() => held(storage).length === 1, "tab A's like in the journal");
    const tabB = clientFor(serverB, storage); // opened now: it reads tab A's like, and does not restore
    try {
      await waitFor(() => serverA.calls().length === 1, "tab A's call");
      serverA.answer(0, { count: 1, likedByMe: true, version: 2 });
      assert.ok(await tabA.waitIdle(SETTLE_MS));
      assert.deepEqual(held(storage), []);

      tabB.setLiked(2, true);
      await waitFor(() => held(storage).length === 1, "tab B's like in the journal");
      assert.deepEqual(held(storage), [[2, true]], "tab A's confirmed like does not come back");
      serverB.answer(0, { count: 1, likedByMe: true, version: 2 });
      assert.ok(await tabB.waitIdle(SETTLE_MS));
      assert.equal(storage.getItem(KEY("ana")), null);
    } finally {
      tabB.free();
    }
  } finally {
    tabA.free();
  }
});

test("two tabs: for a post both tapped, the later tap stays in the journal", async () => {
  const storage = new MemoryStorage();
  const [serverA, serverB] = [new ScriptedServer(), new ScriptedServer()];
  const tabA = clientFor(serverA, storage);
  const tabB = clientFor(serverB, storage);
  try {
    serverB.setPost(1, { count: 1, likedByMe: true, version: 1 }); // as tab B read it earlier
    await tabB.refresh(1);
    tabA.setLiked(1, true);
    await waitFor(() => held(storage).length === 1, "tab A's like in the journal");
    await new Promise((resolve) => setTimeout(resolve, 5)); // a later millisecond
    tabB.setLiked(1, false);
    await waitFor(() => held(storage)[0]?.[1] === false, "tab B's unlike in its place");

    // Tab A's like is answered first: tab B's later unlike, still out, stays.
    serverA.answer(0, { count: 1, likedByMe: true, version: 2 });
    assert.ok(await tabA.waitIdle(SETTLE_MS));
    assert.deepEqual(held(storage), [[1, false]]);

    await waitFor(() => serverB.calls().length === 1, "tab B's call");
    serverB.answer(0, { count: 0, likedByMe: false, version: 3 });
    assert.ok(await tabB.waitIdle(SETTLE_MS));
    assert.equal(storage.getItem(KEY("ana")), null);
  } finally {
    tabA.free();
    tabB.free();
  }
});
