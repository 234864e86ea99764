// Two tabs of one viewer in Debian's headless Chromium, sharing the web
// journal (localStorage) and the Web Locks of one origin: the race that
// bindings/wasm/README.md describes under "What two tabs still get wrong",
// and the recipe it gives against it, run as the README shows it.
//
// The pages are one small page, served on the demo server's origin by the
// test itself (Playwright answers its URL; the package under ./pkg/ comes
// from the server), so every tab shares the origin's localStorage and
// locks. The server holds a tab's like with a fault rule (a latency) and
// its request journal (`GET /admin/requests`) says what every tab sent.
// Run it with `cargo xtask test --only browser`, which passes
// LIKEKIT_DEMO_URL, LIKEKIT_ADMIN_KEY, LIKEKIT_NODE_MODULES and
// LIKEKIT_CHROMIUM.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import { LikeKitAdmin } from "likekit-wasm/testing";

const DEMO = process.env.LIKEKIT_DEMO_URL;
const ADMIN_KEY = process.env.LIKEKIT_ADMIN_KEY;
const MODULES = process.env.LIKEKIT_NODE_MODULES;
const CHROMIUM = process.env.LIKEKIT_CHROMIUM ?? "/usr/bin/chromium";
if (!DEMO || !ADMIN_KEY || !MODULES) {
  throw new Error("run with `cargo xtask test --only browser` (LIKEKIT_DEMO_URL, LIKEKIT_ADMIN_KEY, LIKEKIT_NODE_MODULES)");
}
const { chromium } = createRequire(path.join(MODULES, "noop.js"))("playwright-core");

/** Chromium's flags, the same for every browser test (`install::CHROMIUM_ARGS` in xtask). */
const FLAGS = JSON.parse(process.env.LIKEKIT_CHROMIUM_ARGS ?? "null");
if (!Array.isArray(FLAGS)) throw new Error("run under cargo xtask, which passes LIKEKIT_CHROMIUM_ARGS");
/** Upper bound for a wait; a test that reaches it fails. */
const LONG = 30_000;
/**
 * How long the server holds the first tab's like. Long enough for a second
 * tab to open and start while it is out; each test checks that it still
 * was, and fails when it was not (a machine too slow for this bound).
 */
const HELD_MS = 6_000;

const admin = new LikeKitAdmin(DEMO.replace(/\/$/, ""), ADMIN_KEY);
/** The tab page's address: on the demo server's origin, answered by the test. */
const PAGE = new URL("likekit-tabs.html", DEMO).href;

/**
 * The tab page: a client for the viewer named in its fragment (with the
 * token there), its journal in localStorage. With `recipe=1` it restores as the README's
 * recipe does (a Web Lock per viewer, `restore()` only in the tab that got
 * it); without, at once, as a single-tab page does. `window.tab` shows the
 * test what the page did: its client, the views it drew, the report of
 * `restore()` when it was called, and `lock: "not granted"` once the
 * recipe's callback ran without the lock.
 */
const PAGE_HTML = `<!doctype html>
<meta charset="utf-8">
<title>LikeKit tab</title>
<script type="module">
import init, { LikeClient } from "./pkg/likekit_wasm.js";

const args = new URLSearchParams(location.hash.slice(1));
const viewer = args.get("viewer");
await init();
const tab = { views: {}, report: null, lock: null };
const render = (view) => (tab.views[view.postId] = view);
const onEvent = (event) => event.kind === "changed" && render(event.view);

const client = new LikeClient(location.origin, {
  token: args.get("token"),
  timeoutMs: ${LONG},
  journal: { viewer },
});
// What restore() answered, for the test; the page calls it as any page does.
const restore = client.restore.bind(client);
client.restore = () => (tab.report = restore());
tab.client = client;
client.subscribeAll(onEvent);

if (args.get("recipe") === "1") {
  tab.lock = "asked";
  // The recipe of bindings/wasm/README.md ("What two tabs still get wrong"), as written there.
  const asked =
  navigator.locks.request(\`likekit-intents:\${viewer}\`, { ifAvailable: true }, (lock) => {
    if (!lock) return; // another tab restores; this one keeps its own taps only
    client.restore().restored.forEach(render);
    return new Promise(() => {}); // held until the tab goes
  });
  // Settles only when the callback returned without the lock.
  asked.then(() => (tab.lock = "not granted"));
} else {
  client.restore().restored.forEach(render);
}
window.tab = tab;
</script>
`;

/** The README's recipe: the code block that takes the lock. */
function readmeRecipe() {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const blocks = [...readme.matchAll(/^( *)```js\n([\s\S]*?)^\1```$/gm)];
  const recipe = blocks.filter(([, , code]) => code.includes("navigator.locks.request"));
  assert.equal(recipe.length, 1, "one code block of the README takes the lock");
  const [, indent, code] = recipe[0];
  return code.split("\n").map((line) => line.slice(indent.length));
}

let profile;
let context;
const pageErrors = [];

before(async () => {
  profile = mkdtempSync(path.join(tmpdir(), "likekit-chromium-tabs-"));
  // One profile: every page of the context shares the origin's storage and locks.
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
  });
  await context.route(
    (url) => url.href.split("#")[0] === PAGE,
    (route) => route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: PAGE_HTML }),
  );
});

after(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** Polls `check` until it answers true; fails after LONG. */
async function until(check, what) {
  const end = Date.now() + LONG;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * A viewer and a post of the test's own (ids no other test uses), a token
 * for the viewer, a tag for its fault rules and `open`, which opens a tab
 * of the viewer ({@link openTab}). When `body` ends, its tabs still open
 * are closed and its rules and journal entries removed.
 */
async function withViewer(id, body) {
  await admin.createUser(id, `Tabs ${id}`);
  await admin.createPost(id);
  const tabs = [];
  const who = { viewer: id, post: id, token: await admin.mintToken(id), tag: `tabs-${id}` };
  who.open = (options) => openTab(who, tabs, options);
  try {
    await body(who);
  } finally {
    for (const page of tabs) await page.close();
    await admin.clearFaults({ tag: who.tag });
    await admin.clearRequests({ user: id });
  }
}

/**
 * Opens the tab page for `viewer` in a new page of the shared context (and
 * adds it to `tabs`): with the README's recipe when `recipe`; `route` sets
 * the page's routes before it loads.
 */
async function openTab({ viewer, token }, tabs, { recipe, route } = {}) {
  const page = await context.newPage();
  tabs.push(page);
  page.on("pageerror", (err) => pageErrors.push(err.message));
  page.on("console", (message) => {
    if (message.type() === "error") console.log(`# page console: ${message.text()}`);
  });
  if (route) await route(page);
  const fragment = new URLSearchParams({ viewer: String(viewer), token, recipe: recipe ? "1" : "0" });
  await page.goto(`${PAGE}#${fragment}`);
  await page.waitForFunction(() => window.tab?.client, null, { timeout: LONG });
  return page;
}

/** What the page's `restore()` answered, or null when the page did not call it. */
const report = (page) =>
  page.evaluate(() =>
    window.tab.report && {
      restored: window.tab.report.restored.map(({ postId, liked, pending }) => ({ postId, liked, pending })),
      expired: window.tab.report.expired.length,
      problem: window.tab.report.problem?.message ?? null,
    },
  );
/** The client's view of `post` in the page: liked and pending. */
const viewOf = (page, post) =>
  page.evaluate((post) => {
    const view = window.tab.client.view(post);
    return view && { liked: view.liked, pending: view.pending };
  }, post);
const waitIdle = async (page) =>
  assert.equal(await page.evaluate((ms) => window.tab.client.waitIdle(ms), LONG), true, "the client went idle");
const stats = (page) => page.evaluate(() => window.tab.client.stats());
const journalEntry = (page, viewer) => page.evaluate((key) => localStorage.getItem(key), `likekit-intents:${viewer}`);

/** The server's journal of the viewer's likes (`POST`) and unlikes (`DELETE`) of the post. */
async function sent({ viewer, post }) {
  const [likes, unlikes] = await Promise.all([
    admin.requests({ route: "like", user: viewer, post }),
    admin.requests({ route: "unlike", user: viewer, post }),
  ]);
  return [...likes.entries, ...unlikes.entries].sort((a, b) => (a.seq < b.seq ? -1 : 1));
}
const posts = async (who) => (await sent(who)).filter((entry) => entry.method === "POST");

/** Holds the viewer's like, the first of the post, `HELD_MS` on the server. */
async function holdFirstLike({ viewer, post, tag }) {
  await admin.addFaults([{ route: "like", user: viewer, post, nth: 1, latency_ms: HELD_MS, tag }]);
}

/** Taps like in tab A and waits until its call is on the server, held there. */
async function likeHeld(page, who) {
  const view = await page.evaluate((post) => {
    const { liked, pending } = window.tab.client.setLiked(post, true);
    return { liked, pending };
  }, who.post);
  assert.deepEqual(view, { liked: true, pending: true });
  await until(async () => (await posts(who)).some((entry) => entry.in_flight), "tab A's like held on the server");
  assert.match(await journalEntry(page, who.viewer), new RegExp(`"post":${who.post},"liked":true`));
}

test("the tab page runs the README's recipe as written there", () => {
  const recipe = readmeRecipe().filter((line) => line !== "");
  const page = PAGE_HTML.split("\n");
  const at = page.findIndex((line) => line.trimStart() === recipe[0]);
  assert.ok(at >= 0, `the page has the recipe's first line: ${recipe[0]}`);
  // The same lines, indented alike.
  const indent = page[at].length - recipe[0].length;
  assert.deepEqual(
    page.slice(at, at + recipe.length).map((line) => line.slice(indent)),
    recipe,
  );
});

test("without the lock, a tab opened while another's like is out sends it again, and it can land after the unlike that followed", async () => {
  await withViewer(9101, async (who) => {
    await holdFirstLike(who);
    const a = await who.open();
    await likeHeld(a, who);

    // Tab B opens while A's like is out; its like of the post is held in
    // the browser until the test lets it go.
    const heldInB = [];
    const b = await who.open({
      route: (page) =>
        page.route(`**/posts/${who.post}/like`, (route) =>
          route.request().method() === "POST" ? heldInB.push(route) : route.continue(),
        ),
    });
    assert.deepEqual(await report(b), {
      restored: [{ postId: who.post, liked: true, pending: true }],
      expired: 0,
      problem: null,
    }, "tab B restored tab A's tap: A's like was still out when B opened");
    await until(() => heldInB.length === 1, "tab B's like of A's tap");
    assert.deepEqual((await posts(who)).map((entry) => entry.in_flight), [true], "A's like still held on the server");

    // A's viewer unlikes: A's unlike goes out once A's like is answered.
    assert.deepEqual(await a.evaluate((post) => {
      const { liked, pending } = window.tab.client.setLiked(post, false);
      return { liked, pending };
    }, who.post), { liked: false, pending: true });
    const unlikes = await admin.waitForRequests(
      { route: "unlike", user: who.viewer, post: who.post },
      1,
      { timeoutMs: LONG },
    );
    assert.equal(unlikes.met, true, "tab A's unlike answered");
    assert.deepEqual(unlikes.entries.map((entry) => entry.status), [200]);
    await waitIdle(a);

    // B's like lands only now, after A's unlike.
    heldInB[0].continue();
    await waitIdle(b);
    const journal = await sent(who);
    assert.deepEqual(
      journal.map(({ method, status, write }) => ({ method, status, write })),
      [
        { method: "POST", status: 200, write: "applied" }, // A's like
        { method: "DELETE", status: 200, write: "applied" }, // A's unlike
        { method: "POST", status: 200, write: "applied" }, // B's second like of A's tap
      ],
    );
    assert.equal((await stats(b)).callsSent, 1);

    // The viewer's last tap was an unlike; the post ends liked.
    const stored = await admin.getPost(who.post);
    assert.equal(stored.count, 1);
    assert.deepEqual(stored.recent_likers, [who.viewer]);
    assert.deepEqual(await viewOf(a, who.post), { liked: false, pending: false }, "A shows its unlike");
    assert.deepEqual(await viewOf(b, who.post), { liked: true, pending: false }, "B shows the like it sent");
    assert.equal(await journalEntry(a, who.viewer), null, "nothing left to restore");
  });
});

test("with the README's lock, a tab opened while another lives restores nothing; once that tab is closed, the next one restores its tap and sends it once", async () => {
  await withViewer(9102, async (who) => {
    await holdFirstLike(who);
    const a = await who.open({ recipe: true });
    // A is the only tab: it gets the lock and restores (nothing yet).
    await until(async () => (await report(a)) !== null, "tab A's restore()");
    assert.deepEqual(await report(a), { restored: [], expired: 0, problem: null });
    await likeHeld(a, who);

    // B opens while A lives and its like is out: no lock, no restore, no call.
    const b = await who.open({ recipe: true });
    await until(async () => (await b.evaluate(() => window.tab.lock)) === "not granted", "tab B's lock callback");
    await waitIdle(b);
    assert.equal(await report(b), null, "B did not restore");
    assert.equal(await viewOf(b, who.post), undefined, "B shows nothing of A's tap");
    assert.equal((await stats(b)).callsSent, 0);
    assert.deepEqual((await posts(who)).map((entry) => entry.in_flight), [true], "A's like alone, still held");

    // A's page goes with its like still out: the tap stays in the journal.
    assert.equal(await a.evaluate(() => window.tab.client.hasPendingCalls()), true);
    await a.close();
    assert.match(await journalEntry(b, who.viewer), new RegExp(`"post":${who.post},"liked":true`));
    // Closing the page let the lock go.
    const lockName = `likekit-intents:${who.viewer}`;
    await until(
      async () => !(await b.evaluate(() => navigator.locks.query())).held.some((lock) => lock.name === lockName),
      "tab A's lock released",
    );
    const [first] = await posts(who);

    // A tab opened now gets the lock and restores A's tap.
    const c = await who.open({ recipe: true });
    await until(async () => (await report(c)) !== null, "tab C's restore()");
    assert.deepEqual(await report(c), {
      restored: [{ postId: who.post, liked: true, pending: true }],
      expired: 0,
      problem: null,
    });
    await waitIdle(c);
    assert.deepEqual(await viewOf(c, who.post), { liked: true, pending: false });
    assert.equal(await journalEntry(c, who.viewer), null, "the restored tap left the journal once confirmed");

    // Sent once more after A went, by C alone; B still sent nothing.
    const since = (await posts(who)).filter((entry) => entry.seq > first.seq);
    assert.deepEqual(since.map(({ status }) => status), [200]);
    assert.equal((await stats(c)).callsSent, 1);
    assert.equal((await stats(b)).callsSent, 0);
    assert.equal(await b.evaluate(() => window.tab.lock), "not granted");
    const stored = await admin.getPost(who.post);
    assert.equal(stored.count, 1);
    assert.deepEqual(stored.recent_likers, [who.viewer]);
  });
});

test("with the README's lock, a reloaded tab gets the lock again and restores its own tap", async () => {
  await withViewer(9103, async (who) => {
    await holdFirstLike(who);
    const a = await who.open({ recipe: true });
    await until(async () => (await report(a)) !== null, "the tab's restore()");
    await likeHeld(a, who);

    await a.reload();
    await a.waitForFunction(() => window.tab?.client, null, { timeout: LONG });
    await until(async () => (await report(a)) !== null, "the reloaded tab's restore()");
    assert.deepEqual(await report(a), {
      restored: [{ postId: who.post, liked: true, pending: true }],
      expired: 0,
      problem: null,
    });
    await waitIdle(a);
    assert.deepEqual(await viewOf(a, who.post), { liked: true, pending: false });
    assert.equal(await journalEntry(a, who.viewer), null);
    const likes = await posts(who);
    assert.equal(likes.length, 2, "the like before the reload and the restored one");
    assert.equal(likes[1].status, 200);
    assert.equal((await admin.getPost(who.post)).count, 1);
  });
});

test("the tab pages raised no uncaught errors", () => {
  assert.deepEqual(pageErrors, []);
});
