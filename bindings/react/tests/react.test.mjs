// likekit-react in a React app built with Vite (tests/app), in Debian's
// headless Chromium driven by playwright-core, against likekit-server on
// loopback; and the same screens rendered by react-dom/server in Node.
// Run it with `cargo xtask test --only react`, which builds the wasm
// package and the app (for the browser, and `--ssr` for Node) once with
// React 19 and once with React 18, serves each with a server's
// --web-root, runs this file against each and passes LIKEKIT_URL,
// LIKEKIT_ADMIN_KEY, LIKEKIT_PKG (the wasm package, for its admin client),
// LIKEKIT_REACT_SSR (the server bundle), LIKEKIT_REACT_VERSION (the React
// the app was built with), LIKEKIT_NODE_MODULES (where playwright-core is)
// and LIKEKIT_CHROMIUM. Screenshots go to LIKEKIT_TEST_OUT.
//
// Speeds are reported, never asserted: a click's DOM change is checked to
// land within the click's own task, and its time is printed.

import { after, afterEach, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

const SERVER = process.env.LIKEKIT_URL;
const ADMIN_KEY = process.env.LIKEKIT_ADMIN_KEY;
const PKG = process.env.LIKEKIT_PKG;
const SSR = process.env.LIKEKIT_REACT_SSR;
const REACT_VERSION = process.env.LIKEKIT_REACT_VERSION;
const MODULES = process.env.LIKEKIT_NODE_MODULES;
const CHROMIUM = process.env.LIKEKIT_CHROMIUM ?? "/usr/bin/chromium";
const OUT = process.env.LIKEKIT_TEST_OUT ?? tmpdir();
if (!SERVER || !ADMIN_KEY || !PKG || !SSR || !REACT_VERSION || !MODULES) {
  throw new Error(
    "run with `cargo xtask test --only react` (LIKEKIT_URL, LIKEKIT_ADMIN_KEY, LIKEKIT_PKG, LIKEKIT_REACT_SSR, LIKEKIT_REACT_VERSION, LIKEKIT_NODE_MODULES)",
  );
}
const { chromium } = createRequire(path.join(MODULES, "noop.js"))("playwright-core");
const { LikeKitAdmin } = await import(pathToFileURL(path.join(PKG, "testing.js")).href);
const { LikeClient, ScriptedServer } = await import(pathToFileURL(path.join(PKG, "node.js")).href);
const { render, renderHolding, renderViews, reactVersion } = await import(pathToFileURL(SSR).href);

/** Chromium's flags, the same for every browser test (`install::CHROMIUM_ARGS` in xtask). */
const FLAGS = JSON.parse(process.env.LIKEKIT_CHROMIUM_ARGS ?? "null");
if (!Array.isArray(FLAGS)) throw new Error("run under cargo xtask, which passes LIKEKIT_CHROMIUM_ARGS");
/** Upper bound for waits; a test that hits one fails. */
const LONG = 30_000;
/** Clicks measured for the click → DOM figure. */
const CLICKS = 20;

const USERS = { ana: 1, ben: 2, cleo: 3 };
const admin = new LikeKitAdmin(SERVER, ADMIN_KEY);
let anaToken;
let benToken;

let profile;
let context;
/** The app with React's development build (StrictMode checks, warnings): most tests. */
let page;
const pageErrors = [];
const consoleErrors = [];
/** Every error answer the page got: "METHOD /path status". */
const errorAnswers = [];

const post = (id) => `.post[data-post-id="${id}"]`;
const text = (selector, on = page) => on.locator(selector).textContent();
const harness = (fn, arg, on = page) => on.evaluate(fn, arg);

/** Signs Ana in with a new client, which knows no post yet. */
const freshClient = (on = page) => harness((token) => window.harness.signIn(token), anaToken, on);

/** Mounts a screen of scenes.jsx and waits until `ready` (a selector) shows. */
async function mount(name, props, { strict = false, ready, on = page, initialViews, nested = false } = {}) {
  await harness(([n, p, s, v, i]) => window.harness.mount(n, p, s, v, i), [name, props, strict, initialViews, nested], on);
  if (ready) await on.waitForSelector(ready, { timeout: LONG });
}

/** A card that shows a view (the client knows its post). */
const loaded = (id) => `${post(id)}:not([data-pending="unknown"])`;
const settled = (id) => `${post(id)}[data-pending="false"]`;

/** Clicks `selector` for real and waits for the probe of that click to see the DOM change. */
async function clickAndProbe(selector, on = page) {
  const index = await harness(() => window.harness.probes.length, undefined, on);
  await on.click(selector);
  await on.waitForFunction((i) => window.harness.probes[i]?.after != null, index, { timeout: LONG });
  return harness((i) => window.harness.probes[i], index, on);
}

/** Opens the app at `url`, watching its errors, with Ana signed in. */
async function open(on, url) {
  on.on("pageerror", (err) => pageErrors.push(err.message));
  on.on("console", (message) => {
    if (message.type() !== "error") return;
    console.log(`# page console: ${message.text()}`);
    // Chromium logs every error answer; those are checked below instead.
    if (!message.text().startsWith("Failed to load resource")) consoleErrors.push(message.text());
  });
  on.on("response", (response) => {
    if (response.status() >= 400) {
      errorAnswers.push(`${response.request().method()} ${new URL(response.url()).pathname} ${response.status()}`);
    }
  });
  await on.goto(url);
  await on.waitForSelector('body[data-ready="true"]', { state: "attached", timeout: LONG });
  await freshClient(on);
}

const live = () => harness(() => window.harness.liveSubscriptions());

before(async () => {
  await admin.seed({
    users: [
      { id: USERS.ana, name: "Ana", friends: [USERS.ben, USERS.cleo] },
      { id: USERS.ben, name: "Ben", friends: [USERS.ana] },
      { id: USERS.cleo, name: "Cleo" },
    ],
    posts: [
      ...[10, 11, 12, 13, 22, 23, 24, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39].map((id) => ({ id })),
      ...[40, 41, 42, 43, 44, 45, 46, 47].map((id) => ({ id })),
      ...[50, 51, 52, 53, 54].map((id) => ({ id })),
      ...[25, 26, 27].map((id) => ({ id, likers: [USERS.cleo] })),
      // Seeded: liked by Ben, then Cleo (Ana's friends: "Liked by Cleo and Ben").
      ...[60, 61, 62, 63, 64, 65].map((id) => ({ id, likers: [USERS.ben, USERS.cleo] })),
      { id: 20, likers: [USERS.ben, USERS.cleo] },
      { id: 21, likers: [USERS.ben] },
    ],
  });
  anaToken = await admin.mintToken(USERS.ana, 3600);
  benToken = await admin.mintToken(USERS.ben, 3600);

  profile = mkdtempSync(path.join(tmpdir(), "likekit-react-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 900, height: 700 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  await open(page, `${SERVER}/`);
  // The React the runner built the app and the server bundle with.
  assert.equal(await harness(() => window.harness.reactVersion), REACT_VERSION);
  assert.equal(reactVersion, REACT_VERSION);
});

afterEach(async () => {
  await admin.clearFaults();
  await harness(async () => {
    window.harness.unmount();
    await window.harness.waitIdle(10_000);
  });
});

after(async () => {
  await admin.clearFaults();
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/**
 * Clicks post `id`'s heart CLICKS times on `on`: each click must change
 * the heart and the count within its own task. Returns the figure.
 */
async function measureClicks(on, id, build) {
  await mount("button", { postId: id }, { ready: loaded(id), on });
  const first = Number(await text(`${post(id)} .count`, on));
  const timings = [];
  for (let i = 0; i < CLICKS; i++) {
    const probe = await clickAndProbe(`${post(id)} .heart`, on);
    assert.equal(probe.sameTask, true, `${build}, click ${i}: the DOM changed within the click's task`);
    assert.equal(probe.beforeFrame, true, `${build}, click ${i}: the DOM changed before the next frame`);
    assert.notEqual(probe.after.pressed, probe.before.pressed, `${build}, click ${i}: the heart flipped`);
    const step = probe.after.pressed === "true" ? 1 : -1;
    assert.equal(Number(probe.after.count), Number(probe.before.count) + step, `${build}, click ${i}: the count moved`);
    timings.push(probe.ms);
  }
  // The page draws frames (a hidden one would not), so "before the next frame" meant something.
  const last = (await harness(() => window.harness.probes.length, undefined, on)) - 1;
  await on.waitForFunction((i) => window.harness.probes[i].framed, last, { timeout: LONG });
  // An even number of taps: back where it started, on the server too.
  await on.waitForSelector(settled(id), { timeout: LONG });
  assert.equal(Number(await text(`${post(id)} .count`, on)), first);
  const server = await harness((p) => window.harness.refresh(p), id, on);
  assert.equal(server.count, first);
  await harness(() => window.harness.unmount(), undefined, on);

  timings.sort((a, b) => a - b);
  const median = timings[Math.floor(timings.length / 2)];
  return `${build}: median ${median.toFixed(1)} ms, max ${timings.at(-1).toFixed(1)} ms`;
}

test("a click fills the heart and moves the count within the click's own task", async (t) => {
  // One page at a time in front: a page behind another draws no frames and has its timers slowed.
  const shipped = await context.newPage();
  let shippedFigure;
  try {
    await open(shipped, `${SERVER}/production/`);
    shippedFigure = await measureClicks(shipped, 13, "React production build");
  } finally {
    await shipped.close();
    await page.bringToFront();
  }
  const devFigure = await measureClicks(page, 10, "development build");
  const figure = `click → DOM change in Chromium over ${CLICKS} clicks, every one within the click's task: ${shippedFigure}; ${devFigure}`;
  t.diagnostic(figure);
  console.log(`# ${figure}`);
});

test("the heart stays filled through a 1.5 s answer", async () => {
  await mount("button", { postId: 11 }, { ready: loaded(11) });
  const before = Number(await text(`${post(11)} .count`));
  await admin.setFaults([{ route: "like", latency_ms: 1500 }]);

  const probe = await clickAndProbe(`${post(11)} .heart`);
  assert.equal(probe.sameTask, true);
  assert.equal(probe.after.pressed, "true");
  assert.equal(Number(probe.after.count), before + 1);
  assert.match(probe.after.line, /^Liked by you/);
  assert.equal(probe.after.pending, "true", "the answer is still on its way");
  await page.screenshot({ path: path.join(OUT, "react-pending.png") });

  await page.waitForSelector(settled(11), { timeout: LONG });
  assert.equal(await page.getAttribute(`${post(11)} .heart`, "aria-pressed"), "true");
  assert.equal(Number(await text(`${post(11)} .count`)), before + 1);
  assert.equal(await page.locator(`${post(11)} .failure`).count(), 0);
  const server = await harness(() => window.harness.refresh(11));
  assert.deepEqual([server.liked, server.count], [true, before + 1]);
});

test("when the calls fail the heart rolls back with the failure message, and the next tap clears it", async () => {
  await mount("button", { postId: 12 }, { ready: loaded(12) });
  const before = Number(await text(`${post(12)} .count`));
  const failing = { error_rate: 1, status: 503 };
  await admin.setFaults([
    { route: "like", ...failing },
    { route: "unlike", ...failing },
  ]);

  const probe = await clickAndProbe(`${post(12)} .heart`);
  assert.equal(probe.sameTask, true);
  assert.equal(probe.after.pressed, "true");

  // One try and one retry, then the rollback.
  await page.waitForSelector(`${post(12)} .failure`, { timeout: LONG });
  assert.match(await text(`${post(12)} .failure`), /^Your like didn't save/);
  assert.equal(await page.getAttribute(`${post(12)} .heart`, "aria-pressed"), "false");
  assert.equal(Number(await text(`${post(12)} .count`)), before);
  await page.screenshot({ path: path.join(OUT, "react-rollback.png") });

  await admin.clearFaults();
  const retry = await clickAndProbe(`${post(12)} .heart`);
  assert.equal(retry.sameTask, true);
  assert.equal(retry.before.failure !== null, true, "the failure showed until the tap");
  assert.equal(retry.after.failure, null, "the tap cleared it in the same change");
  assert.equal(retry.after.pressed, "true");
  await page.waitForSelector(settled(12), { timeout: LONG });
  assert.equal(Number(await text(`${post(12)} .count`)), before + 1);
});

test("switching postId shows the new post's view at once, never the old post's", async () => {
  await harness(() => window.harness.refreshMany([20, 21]));
  await mount("switcher", { ids: [20, 21, 23] }, { ready: loaded(20) });
  assert.equal(await text(`${post(20)} .count`), "2");
  assert.equal(await text(`${post(20)} .line`), "Liked by Cleo and Ben");

  // A post the client knows: its view in the same task as the click.
  const known = await clickAndProbe("#next");
  assert.equal(known.sameTask, true);
  assert.deepEqual(
    [known.after.postId, known.after.count, known.after.line],
    ["21", "1", "Liked by Ben"],
  );

  // A post it does not know yet: nothing shown rather than the old post, then its own view.
  const unknown = await clickAndProbe("#next");
  assert.equal(unknown.sameTask, true);
  assert.deepEqual([unknown.after.postId, unknown.after.count], ["23", "…"]);
  await page.waitForSelector(loaded(23), { timeout: LONG });
  assert.equal(await text(`${post(23)} .count`), "0");

  const renders = await harness(() =>
    window.harness.renders.map(({ postId, viewPostId }) => ({ postId, viewPostId })),
  );
  const stale = renders.filter(({ postId, viewPostId }) => viewPostId !== null && viewPostId !== postId);
  assert.deepEqual(stale, [], "no render drew another post's view");
  assert.equal(await live(), 1, "one subscription: the post on screen");
});

test("StrictMode: one client subscription per post on screen, none after unmount", async () => {
  assert.equal(await live(), 0);
  await mount("feed", { ids: [30, 31, 32, 30] }, { strict: true, ready: '.feed[data-known="4"]' });
  assert.equal(await live(), 3, "posts 30, 31 and 32 once each, despite the double mount and the repeat");
  await harness(() => window.harness.unmount());
  assert.equal(await live(), 0);

  await mount("switcher", { ids: [30, 31] }, { strict: true, ready: loaded(30) });
  await clickAndProbe("#next");
  await clickAndProbe("#next");
  assert.equal(await live(), 1);
  await harness(() => window.harness.unmount());
  assert.equal(await live(), 0);
});

test("useLikes reads a feed page in one request, under StrictMode too", async () => {
  await freshClient();
  await admin.clearRequests();
  const ids = [33, 34, 35, 36, 37];
  // Post 22 is shown beside the page, by useLike alone.
  await mount("feed", { ids, extra: 22 }, { strict: true, ready: '.feed[data-known="5"][data-refreshing="false"]' });
  await page.waitForSelector(loaded(22), { timeout: LONG });
  const batches = (await admin.requests({ route: "batch" })).entries;
  const singles = (await admin.requests({ route: "likes" })).entries;
  assert.deepEqual(
    // Two requests at once may reach the server in either order.
    batches.map((entry) => entry.posts).sort((a, b) => b.length - a.length),
    [ids, [22]],
    "one GET /likes?posts=… for the page, one for the post beside it",
  );
  assert.equal(singles.length, 0, "no read per post");

  await page.click("#refresh");
  await page.waitForSelector('.feed[data-refreshed="1"]', { timeout: LONG });
  assert.equal((await admin.requests({ route: "batch" })).entries.length, 3, "refresh() is one more read");
});

test("a view keeps its identity until its post changes", async () => {
  // Known before the mount: the first render reads the client, the
  // subscription reads it again, and both give the same object.
  await harness(() => window.harness.refreshMany([38, 39]));
  await mount("feed", { ids: [38, 39] }, { ready: '.feed[data-known="2"][data-refreshing="false"]' });
  await clickAndProbe(`${post(38)} .heart`);
  await page.waitForSelector(settled(38), { timeout: LONG });
  // A read that finds post 39 as it was changes nothing either.
  await harness(() => window.harness.refresh(39));
  await page.click("#refresh");
  await page.waitForSelector('.feed[data-refreshed="1"]', { timeout: LONG });

  const identities = await harness(() => {
    const of = (id) => window.harness.renders.filter((r) => r.postId === id).map((r) => r.view);
    return {
      rendered39: of("39").length,
      views39: new Set(of("39")).size,
      views38: new Set(of("38")).size,
    };
  });
  assert.ok(identities.rendered39 > 0, "post 39 re-rendered with the feed");
  assert.equal(identities.views39, 1, "post 39's view stayed the same object");
  assert.ok(identities.views38 >= 2, "post 38's view changed with its tap and its answer");
});

test("a post the client forgot (past maxPosts) is read again on the next mount, never shown as 0 likes", async () => {
  await harness((token) => window.harness.signIn(token, { maxPosts: 1 }), anaToken);
  try {
    await mount("button", { postId: 20 }, { ready: loaded(20) });
    assert.equal(await text(`${post(20)} .count`), "2");
    await harness(() => window.harness.unmount());
    // Post 20 is idle now; reading another post makes the client forget it.
    await harness(() => window.harness.refresh(21));
    assert.equal(await harness(() => window.harness.view(20)), undefined, "the client forgot post 20");

    await admin.clearRequests();
    await mount("button", { postId: 20 }, { ready: loaded(20) });
    assert.equal(await text(`${post(20)} .count`), "2");
    assert.equal(await page.getAttribute(`${post(20)} .heart`, "aria-pressed"), "false");
    const zeros = await harness(() => window.harness.renders.filter((r) => r.view && r.view.count === 0).length);
    assert.equal(zeros, 0, "no render showed the client's zero placeholder");
    const batches = (await admin.requests({ route: "batch" })).entries.map((entry) => entry.posts);
    assert.deepEqual(batches, [[20]], "the post was read again");
  } finally {
    await freshClient();
  }
});

test("a failed read shows as useLike's error, and reload() or the next mount reads again", async () => {
  await freshClient();
  const failing = [
    { route: "batch", error_rate: 1, status: 503 },
    { route: "likes", error_rate: 1, status: 503 },
  ];

  // A button of its own.
  await admin.setFaults(failing);
  await mount("button", { postId: 25 }, { ready: `${post(25)} .read-error` });
  assert.equal(await page.getAttribute(`${post(25)} .read-error`, "data-code"), "injected_fault");
  assert.equal(await page.getAttribute(`${post(25)} .heart`, "disabled"), "", "no view, no tap");
  await admin.clearFaults();
  await page.click(`${post(25)} .reload`);
  await page.waitForSelector(loaded(25), { timeout: LONG });
  assert.equal(await text(`${post(25)} .count`), "1");
  assert.equal(await page.locator(`${post(25)} .read-error`).count(), 0, "the error went with the read that succeeded");

  // The buttons of a page whose read failed, then the next mount.
  await admin.setFaults(failing);
  await mount("feed", { ids: [26, 27] }, { ready: '.feed[data-error]:not([data-error=""])' });
  await page.waitForSelector(`${post(26)} .read-error`, { timeout: LONG });
  await page.waitForSelector(`${post(27)} .read-error`, { timeout: LONG });
  await admin.clearFaults();
  await mount("button", { postId: 26 }, { ready: loaded(26) });
  assert.equal(await text(`${post(26)} .count`), "1");
});

test("overlapping reads of a post: the one sent last decides its error, whichever ends first", async () => {
  const held = () => harness(() => window.harness.heldReads());
  const letRead = (ids, outcome) => harness(([i, o]) => window.harness.letRead(i, o), [ids, outcome]);
  /** The read error the post's button drew last, by code. */
  const drawnError = (id) =>
    harness((p) => window.harness.renders.filter((r) => r.postId === p).at(-1)?.error?.code ?? null, String(id));
  try {
    // A page of 51 and 52 and a page of 51 alone: two reads of 51, the
    // two-post page's sent first (its effect runs first).
    await harness((token) => window.harness.signInHeld(token), anaToken);
    await mount("feeds", { pages: [[51, 52], [51]] });
    await page.waitForFunction(() => window.harness.heldReads().length === 2, undefined, { timeout: LONG });
    assert.deepEqual(await held(), ["51,52", "51"]);
    // The newer read succeeds, then the older one fails.
    await letRead("51", "answer");
    await page.waitForSelector(loaded(51), { timeout: LONG });
    await letRead("51,52", "fail");
    await page.waitForSelector('.feed[data-error="http_503"]', { timeout: LONG });
    assert.equal(await drawnError(52), "http_503", "52's only read failed");
    assert.equal(await drawnError(51), null, "51's newer read succeeded: the older one's failure is not shown");

    // The other way round, on a client that knows no post: the newer read
    // fails, then the older one succeeds.
    await harness((token) => window.harness.signInHeld(token), anaToken);
    await mount("feeds", { pages: [[53, 54], [53]] });
    await page.waitForFunction(() => window.harness.heldReads().length === 2, undefined, { timeout: LONG });
    assert.deepEqual(await held(), ["53,54", "53"]);
    await letRead("53", "fail");
    await page.waitForSelector('.feed[data-error="http_503"]', { timeout: LONG });
    await letRead("53,54", "answer");
    await page.waitForSelector(loaded(54), { timeout: LONG });
    await page.waitForSelector(loaded(53), { timeout: LONG });
    assert.equal(await drawnError(54), null);
    assert.equal(await drawnError(53), "http_503", "53's newer read failed: the older one's success does not clear it");
  } finally {
    await freshClient();
  }
});

test("42, \"042\", \"42\" and 42n are one post: one record, one subscription, one read", async () => {
  await freshClient();
  await admin.clearRequests();
  await mount("buttons", { ids: ["024", 24, "24"], bigints: ["24"] }, { strict: true });
  const cards = page.locator(".buttons .post");
  await page.waitForFunction(() => {
    const all = [...document.querySelectorAll(".buttons .post")];
    return all.length === 4 && all.every((card) => card.dataset.pending !== "unknown");
  }, undefined, { timeout: LONG });
  assert.equal(await live(), 1, "one client subscription for the four buttons");
  const batches = (await admin.requests({ route: "batch" })).entries.map((entry) => entry.posts);
  assert.deepEqual(batches, [[24]], "one read");

  await cards.nth(0).locator(".heart").click();
  for (let i = 0; i < 4; i++) {
    assert.equal(await cards.nth(i).locator(".heart").getAttribute("aria-pressed"), "true", `button ${i}`);
    assert.equal(await cards.nth(i).locator(".count").textContent(), "1", `button ${i}`);
  }
  await cards.nth(3).locator(".heart").click();
  await page.waitForFunction(() =>
    [...document.querySelectorAll(".buttons .post")].every((card) => card.dataset.pending === "false"),
  undefined, { timeout: LONG });
  assert.equal(await cards.nth(1).locator(".count").textContent(), "0");
});

test("a post the server does not have shows as useLike's post_not_found error, as client.refresh rejects with", async () => {
  await freshClient();
  await mount("button", { postId: 99 }, { ready: `${post(99)} .read-error` });
  assert.equal(await page.getAttribute(`${post(99)} .read-error`, "data-code"), "post_not_found");
  const shown = await harness(() => window.harness.errorFields(window.harness.renders.findLast((r) => r.error).error));
  const thrown = await harness(() => window.harness.refresh(99).then(() => null, window.harness.errorFields));
  const { message: shownMessage, ...shownFields } = shown;
  const { message: thrownMessage, ...thrownFields } = thrown;
  assert.deepEqual(shownFields, thrownFields);
  assert.deepEqual(shownFields, { isError: true, name: "LikeError", code: "post_not_found", status: 404, transient: false });
  assert.match(shownMessage, /^post not found: .*99/);
  assert.match(thrownMessage, /^post not found: /);

  // reload() asks again, and the answer is the same.
  await admin.clearRequests();
  await page.click(`${post(99)} .reload`);
  await page.waitForFunction(() => window.harness.renders.filter((r) => r.error).length >= 2, undefined, { timeout: LONG });
  assert.deepEqual((await admin.requests({ route: "batch" })).entries.map((entry) => entry.posts), [[99]]);
  assert.equal(await page.getAttribute(`${post(99)} .read-error`, "data-code"), "post_not_found");

  // In a page: the posts that exist show, the one that does not has the error, the page has none.
  await mount("page", { ids: [40, 99] }, { ready: `${post(99)} .read-error` });
  await page.waitForSelector(loaded(40), { timeout: LONG });
  assert.equal(await page.getAttribute(`${post(99)} .read-error`, "data-code"), "post_not_found");
  assert.equal(await page.locator(`${post(40)} .read-error`).count(), 0);
  assert.equal(await page.getAttribute(".page", "data-error"), "");
});

test("a page that reads no views re-renders for its read, not for each post's change", async () => {
  await freshClient();
  const ids = [40, 41, 42, 43, 44, 45, 46, 47];
  await mount("page", { ids }, { ready: '.page[data-refreshing="false"]' });
  await page.waitForFunction(
    () => [...document.querySelectorAll(".page .post")].every((card) => card.dataset.pending === "false"),
    undefined,
    { timeout: LONG },
  );
  const pageRenders = () => harness(() => window.harness.pageRenders.map(({ refreshing }) => refreshing));
  // The first render, then the read going out and coming back: never a render per post.
  assert.deepEqual(await pageRenders(), [false, true, false]);

  const buttonRenders = await harness(() => window.harness.renders.length);
  await clickAndProbe(`${post(41)} .heart`);
  await page.waitForSelector(settled(41), { timeout: LONG });
  assert.deepEqual(await pageRenders(), [false, true, false], "the tap and its answer did not re-render the page");
  const since = await harness((from) => window.harness.renders.slice(from).map((r) => r.postId), buttonRenders);
  assert.ok(since.length >= 2, "post 41's button re-rendered for the tap and its answer");
  assert.deepEqual([...new Set(since)], ["41"], "no other button re-rendered");
});

test("a page of 1,100 posts with a button each has one client subscription per post", async () => {
  await freshClient();
  const ids = Array.from({ length: 1100 }, (_, i) => 5000 + i);
  await mount("feed", { ids }, { ready: post(ids.at(-1)) });
  await page.waitForFunction(() => window.harness.liveSubscriptions() >= 1100, undefined, { timeout: LONG });
  assert.equal(await live(), 1100);
  await harness(() => window.harness.unmount());
  assert.equal(await live(), 0);
});

test("the likekit-wasm README's useBrowserLikeClient: a client per viewer, the old one shut down and freed once not drawn", async () => {
  const show = (props) => harness((p) => window.harness.readmeClient(p), props);
  const clients = () => harness(() => window.harness.readmeClients.length);
  const freed = (i) => page.waitForFunction((n) => window.harness.readmeFreed(n), i, { timeout: LONG });
  const card = (viewer) => `.readme-client[data-viewer="${viewer}"][data-client="made"] ${post(50)}`;
  const first = await clients();

  // Ana: her client is made in an effect, and her like reaches the server.
  await show({ viewer: "ana", token: anaToken, postId: 50 });
  await page.waitForSelector(`${card("ana")}:not([data-pending="unknown"])`, { timeout: LONG });
  assert.equal(await text(`${post(50)} .count`), "0");
  await page.click(`${post(50)} .heart`);
  await page.waitForSelector(`${card("ana")}[data-pending="false"] .heart[aria-pressed="true"]`, { timeout: LONG });
  // A parent's new render gives a new token function: no new client.
  await show({ viewer: "ana", token: anaToken, postId: 50 });
  assert.equal(await clients(), first + 1, "one client for Ana, whatever the renders");

  // Ben signs in: a new client with his token; Ana's is shut down and freed.
  await show({ viewer: "ben", token: benToken, postId: 50 });
  await page.waitForSelector(`${card("ben")}[data-pending="false"]`, { timeout: LONG });
  assert.equal(await clients(), first + 2);
  assert.equal(await page.getAttribute(`${post(50)} .heart`, "aria-pressed"), "false", "Ben's own view");
  assert.equal(await text(`${post(50)} .count`), "1");
  await freed(first);
  await page.click(`${post(50)} .heart`);
  await page.waitForSelector(`${card("ben")}[data-pending="false"] .heart[aria-pressed="true"]`, { timeout: LONG });
  const stored = await admin.getPost(50);
  assert.equal(stored.count, 2);
  assert.deepEqual(stored.recent_likers, [USERS.ben, USERS.ana], "Ben's like went with Ben's token");

  // The screen goes: Ben's client is shut down and freed too.
  await harness(() => window.harness.unmount());
  await freed(first + 1);

  // A client that cannot be made is the hook's error, not an unhandled rejection.
  await show({ url: "not a url", viewer: "ana", token: anaToken, postId: 50 });
  await page.waitForSelector('.readme-client[data-error="config"][data-client="none"]', { timeout: LONG });
  assert.equal(await clients(), first + 2);
});

test("the likekit-wasm README's useBrowserLikeClient: the last viewer's retry, due after the switch, never goes with the next viewer's token", async () => {
  const show = (props) => harness((p) => window.harness.readmeClient(p), props);
  const clients = () => harness(() => window.harness.readmeClients.length);
  const card = (viewer) => `.readme-client[data-viewer="${viewer}"][data-client="made"] ${post(51)}`;
  const ana = await clients();
  // Her like's one retry comes 600 ms after its failure: after the switch
  // to Ben, within the second her client's shutdown gives its calls. The
  // token function gives the signed-in viewer's token whoever is asked
  // about, so only the hook keeps Ben's token from that retry.
  const options = { retry: { minDelayMs: 600, maxDelayMs: 600, maxRetries: 1, jitter: false } };
  const screen = { postId: 51, options, ignoresViewer: true };

  await show({ ...screen, viewer: "ana", token: anaToken });
  await page.waitForSelector(`${card("ana")}:not([data-pending="unknown"])`, { timeout: LONG });
  await admin.setFaults([{ route: "like", post: 51, status: 503, fail_next: 1 }]);
  const refused = page.waitForResponse((r) => r.url().endsWith("/posts/51/like") && r.status() === 503, {
    timeout: LONG,
  });
  await page.click(`${post(51)} .heart`);
  await refused;
  // Ben signs in before her retry is due; her client is shut down, then freed.
  await show({ ...screen, viewer: "ben", token: benToken });
  await page.waitForFunction((n) => window.harness.readmeFreed(n), ana, { timeout: LONG });

  const stored = await admin.getPost(51);
  assert.ok(!stored.recent_likers.includes(USERS.ben), `Ana's retry made Ben a liker: ${JSON.stringify(stored)}`);
  assert.equal(stored.count, 0, "no like from Ben (nor from Ana, whose retry had no token)");
  // The retry did come after the switch, and went without a token.
  const likes = (await admin.requests({ route: "like", post: 51 })).entries;
  assert.deepEqual(
    likes.map((entry) => [entry.user, entry.status]),
    [
      [USERS.ana, 503],
      [null, 401],
    ],
  );
});

test("server rendering with react-dom/server renders without touching the client", () => {
  const touched = [];
  const client = new Proxy(
    {},
    {
      get(_, key) {
        touched.push(`get ${String(key)}`);
        return undefined;
      },
      has(_, key) {
        touched.push(`has ${String(key)}`);
        return false;
      },
    },
  );
  const button = render(client, "button", { postId: 20 });
  const feed = render(client, "feed", { ids: [20, 21] });
  const switcher = render(client, "switcher", { ids: [20, 21] });
  assert.deepEqual(touched, [], "getServerSnapshot: the client was not read");
  assert.match(button, /<article class="post" data-post-id="20" data-pending="unknown">/);
  assert.match(button, /aria-pressed="false" disabled=""/);
  assert.match(button, /<span class="count">…<\/span>/);
  assert.match(feed, /data-known="0" data-refreshing="false"/);
  assert.equal((feed.match(/<article/g) ?? []).length, 2);
  assert.match(switcher, /data-post-id="20"/);
  // No client at all (none can be made on the server) renders the same.
  assert.equal(render(null, "button", { postId: 20 }), button);
});

test("server rendering with a long-lived client keeps no record of the posts it rendered", async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  // One client for the whole server process, as a module-wide one is.
  const client = new LikeClient(SERVER, { token: () => anaToken });
  const held = [];
  for (let page = 0; page < 4; page++) {
    held.push(...renderHolding(client, Array.from({ length: 500 }, (_, i) => 9000 + page * 500 + i)));
  }
  assert.equal(held.length, 2000);
  // A WeakRef's target is kept until the task that made it ends.
  await new Promise((resolve) => setTimeout(resolve, 0));
  gc();
  const kept = held.filter((ref) => ref.deref() !== undefined).length;
  assert.equal(kept, 0, "records of the posts rendered, kept after the renders");
  assert.equal(client.liveSubscriptions(), 0);
  client.free();
});

test("the server's HTML hydrates without a mismatch, then shows the client's view", async () => {
  const html = render(null, "button", { postId: 20 });
  await harness((h) => window.harness.hydrate(h, "button", { postId: 20 }), html);
  await page.waitForSelector(loaded(20), { timeout: LONG });
  assert.equal(await text(`${post(20)} .count`), "2");
  assert.equal(await page.getAttribute(`${post(20)} .heart`, "disabled"), null);
  const errors = await harness(() => window.harness.hydrationErrors);
  assert.deepEqual(errors, [], "React reported no hydration error");
  const first = await harness(() => window.harness.renders[0]);
  assert.equal(first.viewPostId, null, "the hydrating render drew the server's snapshot");
});

/** A client that records every touch: the server renders must make none. */
function watchedClient() {
  const touched = [];
  const client = new Proxy(
    {},
    {
      get(_, key) {
        touched.push(`get ${String(key)}`);
        return undefined;
      },
      has(_, key) {
        touched.push(`has ${String(key)}`);
        return false;
      },
    },
  );
  return { client, touched };
}

/** The `<article class="post">` of post `id` in `html`. */
function card(html, id) {
  const found = html.match(new RegExp(`<article class="post" data-post-id="${id}"[^]*?</article>`));
  assert.ok(found, `no card for post ${id} in ${html}`);
  return found[0];
}

test("server rendering with initialViews: the HTML has each seeded post's heart, count and line, and the client is not touched", () => {
  const { client, touched } = watchedClient();
  const initialViews = {
    20: { count: 1204, liked_by_me: true, friends: ["Ana", "Ben", "Cleo"], version: 9 },
    "021": { count: 0, liked_by_me: false, friends: [], version: 0 },
  };
  const button = render(client, "button", { postId: 20 }, initialViews);
  assert.match(button, /<article class="post" data-post-id="20" data-pending="false" data-seeded="true">/);
  assert.match(button, /aria-pressed="true" disabled=""/, "the viewer's like shows; the heart waits for the client");
  assert.match(button, /<span class="count">1,204<\/span>/);
  assert.match(button, /<p class="line">Liked by you, Ana, Ben and 1,201 others<\/p>/);

  const feed = render(client, "feed", { ids: [20, 21, 22] }, initialViews);
  assert.match(feed, /data-known="2"/, "useLikes gives the seeds as its views");
  assert.match(feed, /data-counts="1204,0,"/);
  assert.match(card(feed, 21), /<span class="count">0<\/span><p class="line">No likes yet<\/p>/);
  assert.match(card(feed, 22), /data-pending="unknown">/, "a post without a seed shows the placeholder");
  assert.match(card(feed, 22), /<span class="count">…<\/span>/);
  assert.deepEqual(touched, [], "getServerSnapshot: the client was not read");
  // No client at all renders the same.
  assert.equal(render(null, "button", { postId: 20 }, initialViews), button);
});

test("a seed is the view the client makes of the same answer: the server's JSON as it comes, and every form of the line", async () => {
  // What an app's server code reads with the viewer's token: a feed page.
  const ids = [20, 21, 25, 60, 99];
  const answer = await fetch(`${SERVER}/likes?posts=${ids}`, { headers: { authorization: `Bearer ${anaToken}` } });
  assert.equal(answer.status, 200);
  const { posts } = await answer.json();
  const client = new LikeClient(SERVER, { token: () => anaToken });
  try {
    const live = await client.refreshMany(ids);
    const expected = ids.map((id) => live.find((view) => view.postId === id));
    assert.equal(expected.filter(Boolean).length, 4, "99 is no post");
    const { buttons, page: views } = renderViews(posts, ids);
    assert.deepEqual(
      buttons.map(({ view }) => view),
      expected,
    );
    assert.deepEqual(views, expected, "useLikes");
    assert.deepEqual(
      buttons.map(({ seeded }) => seeded),
      expected.map((view) => view !== undefined),
    );
  } finally {
    client.free();
  }

  // Every branch of the line: no friend to three, you or not, thousands,
  // a count behind the names it gives (the server's cache lags), the
  // largest post id (a string).
  const server = new ScriptedServer();
  const scripted = LikeClient.scripted(server);
  try {
    const likes = new Map();
    let id = 1;
    for (const count of [0, 1, 2, 3, 999, 1000, 1204, 1234567, Number.MAX_SAFE_INTEGER]) {
      for (const liked of [false, true]) {
        for (const friends of [[], ["Ana"], ["Ana", "Ben"], ["Ana", "Ben", "Cleo"]]) {
          likes.set(String(id++), { count, liked_by_me: liked, friends, version: 7 });
        }
      }
    }
    likes.set("9223372036854775807", { count: 3, liked_by_me: true, friends: ["Ana"], version: 1 });
    for (const [postId, { count, liked_by_me, friends, version }] of likes) {
      server.setPost(postId, { count, likedByMe: liked_by_me, friends, version });
    }
    const all = [...likes.keys()];
    const views = await scripted.refreshMany(all);
    assert.equal(views.length, all.length);
    const { buttons } = renderViews(Object.fromEntries(likes), all);
    assert.deepEqual(
      buttons.map(({ view }) => view),
      views,
    );
  } finally {
    scripted.free();
    server.free();
  }
});

test("a malformed seed is left out: rendering never throws, and its post shows what it shows without one", () => {
  const good = { count: 2, liked_by_me: false, friends: ["Cleo"], version: 1 };
  const initialViews = {
    20: { count: "12", liked_by_me: false },
    21: null,
    22: { count: 5, liked_by_me: "no" },
    23: { count: 5, liked_by_me: false, friends: "Ana" },
    24: { count: -1, liked_by_me: false, version: 1 },
    0: good,
    abc: good,
    posts: { 25: good },
    25: good,
  };
  // What they warn (outside production builds) is checked in the browser.
  const quiet = console.warn;
  console.warn = () => {};
  let html;
  let plain;
  const bads = [];
  try {
    html = render(null, "buttons", { ids: [20, 21, 22, 23, 24, 25] }, initialViews);
    plain = render(null, "button", { postId: 25 });
    for (const bad of ["25", 25, [good], true]) bads.push([bad, render(null, "button", { postId: 25 }, bad)]);
  } finally {
    console.warn = quiet;
  }
  for (const id of [20, 21, 22, 23, 24]) {
    assert.match(card(html, id), /data-pending="unknown">/, `post ${id}`);
    assert.match(card(html, id), /<span class="count">…<\/span>/, `post ${id}`);
  }
  assert.match(card(html, 25), /<span class="count">2<\/span><p class="line">Liked by Cleo and 1 other<\/p>/);
  for (const [bad, shown] of bads) assert.equal(shown, plain, `initialViews=${JSON.stringify(bad)}`);
});

test("a seeded page hydrates without a mismatch, keeps the seed until the client has a view of its own, then shows it", async () => {
  // Read a while ago: Cleo has liked the post since.
  const initialViews = { 60: { count: 1, liked_by_me: false, friends: ["Ben"], version: 1 } };
  const html = render(null, "button", { postId: 60 }, initialViews);
  assert.match(html, /<span class="count">1<\/span><p class="line">Liked by Ben<\/p>/);

  await freshClient();
  // Hydrated before the client is made, as a page is while its .wasm loads.
  await harness(([h, v]) => window.harness.hydrate(h, "button", { postId: 60 }, { initialViews: v, withClient: false }), [
    html,
    initialViews,
  ]);
  await page.waitForFunction(() => window.harness.renders.length > 0, undefined, { timeout: LONG });
  await harness(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  assert.deepEqual(await harness(() => window.harness.hydrationErrors), [], "React reported no hydration error");
  assert.equal(await text(`${post(60)} .count`), "1", "the seed stays after hydration");
  assert.equal(await text(`${post(60)} .line`), "Liked by Ben");
  assert.equal(await page.getAttribute(`${post(60)} .heart`, "disabled"), "", "taps wait for the client's view");

  // The client comes, reads the post, and its view takes over.
  await harness(() => window.harness.rerender());
  await page.waitForSelector(`${post(60)}:not([data-seeded])[data-pending="false"]`, { timeout: LONG });
  assert.equal(await text(`${post(60)} .count`), "2");
  assert.equal(await text(`${post(60)} .line`), "Liked by Cleo and Ben");
  assert.equal(await page.getAttribute(`${post(60)} .heart`, "disabled"), null);
  const drawn = await harness(() => window.harness.renders.map((r) => (r.view ? [r.view.count, r.seeded] : null)));
  assert.deepEqual(drawn[0], [1, true], "the hydrating render drew the seed");
  assert.ok(!drawn.includes(null), `the placeholder never showed between the seed and the live view: ${JSON.stringify(drawn)}`);
  assert.deepEqual(drawn.at(-1), [2, false]);

  // The same seed again, in a new object: the client's view stays.
  await harness((v) => window.harness.rerender(v), { 60: { ...initialViews[60] } });
  assert.equal(await text(`${post(60)} .count`), "2");
  assert.equal(await page.getAttribute(`${post(60)}`, "data-seeded"), null);
});

test("a seed older than the client's view never moves the count back", async () => {
  await freshClient();
  await harness(() => window.harness.refreshMany([61]));
  const stale = { 61: { count: 1, liked_by_me: false, friends: ["Ben"], version: 1 } };
  await mount("button", { postId: 61 }, { initialViews: stale, ready: loaded(61) });
  const counts = () => harness(() => window.harness.renders.map((r) => [r.view?.count ?? null, r.seeded]));
  assert.ok((await counts()).every(([count, seeded]) => count === 2 && !seeded), "the client's view from the first render on");
  assert.equal(await text(`${post(61)} .line`), "Liked by Cleo and Ben");

  // A tap moves it; the stale seed given again (a new object) does not.
  const probe = await clickAndProbe(`${post(61)} .heart`);
  assert.equal(Number(probe.after.count), 3);
  await page.waitForSelector(settled(61), { timeout: LONG });
  await harness((v) => window.harness.rerender(v), { 61: { ...stale[61] } });
  assert.equal(await text(`${post(61)} .count`), "3");
  assert.ok((await counts()).every(([count, seeded]) => count >= 2 && !seeded), "never the seed's count");

  // A page's views too.
  await mount("feed", { ids: [61] }, { initialViews: stale, ready: loaded(61) });
  assert.equal(await text(`${post(61)} .count`), "3");
  assert.equal(await page.getAttribute(".feed", "data-counts"), "3", "useLikes's view is the client's");
  assert.ok((await counts()).every(([count]) => count === 3));
});

test("a seed the client's view replaced does not come back when the client forgets the post (past maxPosts)", async () => {
  await harness((token) => window.harness.signIn(token, { maxPosts: 1 }), anaToken);
  try {
    const stale = { 65: { count: 1, liked_by_me: false, friends: ["Ben"], version: 1 } };
    await mount("button", { postId: 65 }, { initialViews: stale, ready: `${post(65)}:not([data-seeded])[data-pending="false"]` });
    assert.equal(await text(`${post(65)} .count`), "2");
    await harness(() => window.harness.unmount());
    // Post 65 is idle now; reading another post makes the client forget it.
    await harness(() => window.harness.refresh(21));
    assert.equal(await harness(() => window.harness.view(65)), undefined, "the client forgot post 65");

    await mount("button", { postId: 65 }, { initialViews: stale, ready: loaded(65) });
    assert.equal(await text(`${post(65)} .count`), "2");
    const drawn = await harness(() => window.harness.renders.map((r) => (r.view ? [r.view.count, r.seeded] : null)));
    assert.deepEqual(drawn[0], null, "the placeholder while the client reads the post again");
    assert.ok(drawn.every((shown) => shown === null || (shown[0] === 2 && !shown[1])), `never the seed: ${JSON.stringify(drawn)}`);
  } finally {
    await freshClient();
  }
});

test("once the client is taken away (a sign-out), the seeds do not come back: no view, never the seed", async () => {
  await freshClient();
  try {
    const seeds = { 63: { count: 1, liked_by_me: true, friends: ["Ben"], version: 1 } };
    await mount("button", { postId: 63 }, { initialViews: seeds, ready: `${post(63)}:not([data-seeded])[data-pending="false"]` });
    assert.equal(await text(`${post(63)} .count`), "2");
    await harness(() => window.harness.signedOut());
    const shown = await page.$eval(post(63), (card) => [card.dataset.seeded ?? null, card.dataset.pending]);
    assert.deepEqual(shown, [null, "unknown"], "no view, not the seed (its count, its 'Liked by you')");
    // The same seeds given to the next client (the next viewer's) stay spent.
    await harness(() => window.harness.rerender());
    await page.waitForSelector(`${post(63)}[data-pending="false"]`, { timeout: LONG });
    assert.ok(
      (await harness(() => window.harness.renders.map((r) => r.seeded))).slice(-3).every((seeded) => !seeded),
      "the seed never came back",
    );
  } finally {
    await freshClient();
  }
});

test("a provider given no initialViews shows the seeds of the provider above it", async () => {
  await harness((t) => window.harness.signInHeld(t), anaToken);
  try {
    const seeds = { 64: { count: 2, liked_by_me: false, friends: ["Cleo", "Ben"], version: 2 } };
    await mount("button", { postId: 64 }, { initialViews: seeds, nested: true, ready: `${post(64)}[data-seeded="true"]` });
    assert.equal(await text(`${post(64)} .count`), "2");
    assert.equal(await text(`${post(64)} .line`), "Liked by Cleo and Ben");
    await harness(() => window.harness.letRead("64", "answer"));
    await page.waitForSelector(`${post(64)}:not([data-seeded])[data-pending="false"]`, { timeout: LONG });
  } finally {
    await freshClient();
  }
});

test("the window's online event sends a retry waiting out its backoff (the provider calls retryNow)", async () => {
  await harness(
    (token) => window.harness.signIn(token, { retry: { minDelayMs: 60_000, maxDelayMs: 60_000, maxRetries: 3, jitter: false } }),
    anaToken,
  );
  try {
    await admin.addFaults([{ route: "like", post: 54, fail_next: 1, tag: "react-online" }]);
    await mount("button", { postId: 54 }, { ready: loaded(54) });
    await page.click(`${post(54)} .heart`);
    const failed = await admin.waitForRequests({ route: "like", post: 54 }, 1, { timeoutMs: 10_000 });
    assert.equal(failed.met, true, "the first like was answered (503)");
    assert.equal(await page.getAttribute(post(54), "data-pending"), "true", "its retry waits its minute");
    await page.evaluate(() => window.dispatchEvent(new Event("online")));
    // Well within the minute: a bound for a retry never sent, not a speed target.
    await page.waitForSelector(`${settled(54)} .heart[aria-pressed="true"]`, { timeout: 20_000 });
    assert.deepEqual((await admin.requests({ route: "like", post: 54 })).entries.map((e) => e.status), [503, 200]);
  } finally {
    await admin.clearFaults({ tag: "react-online" });
    await freshClient();
  }
});

test("taps do nothing while the seed shows, and go through the client once its view is in", async () => {
  await harness((t) => window.harness.signInHeld(t), anaToken);
  try {
    const initialViews = { 62: { count: 2, liked_by_me: false, friends: ["Cleo", "Ben"], version: 2 } };
    await mount("button", { postId: 62 }, { initialViews, ready: `${post(62)}[data-seeded="true"]` });
    await page.waitForFunction(() => window.harness.heldReads().length === 1, undefined, { timeout: LONG });
    assert.equal(await text(`${post(62)} .count`), "2");
    const taps = await harness(() => window.harness.taps());
    assert.equal(await harness(() => window.harness.tap(62)), null, "toggle returned no view");
    assert.equal(await harness(() => window.harness.tap(62, true)), null, "setLiked returned no view");
    assert.equal(await harness(() => window.harness.taps()), taps, "the client saw no tap");
    assert.equal(await text(`${post(62)} .count`), "2");

    await harness(() => window.harness.letRead("62", "answer"));
    await page.waitForSelector(`${post(62)}:not([data-seeded])`, { timeout: LONG });
    assert.deepEqual(await harness(() => window.harness.tap(62)), { liked: true, count: 3 });
    await page.waitForSelector(`${settled(62)} .heart[aria-pressed="true"]`, { timeout: LONG });
    assert.equal((await admin.getPost(62)).count, 3, "the like reached the server");
  } finally {
    await freshClient();
  }
});

test("a malformed seed is left out with one console warning (development build), and the page draws", async () => {
  await freshClient();
  const before = await harness(() => window.harness.warnings.length);
  const initialViews = {
    63: { count: -1, liked_by_me: false },
    64: { count: 2, liked_by_me: false, friends: ["Cleo", "Ben"], version: 2 },
    abc: { count: 1, liked_by_me: false },
  };
  await mount("buttons", { ids: [63, 64] }, { initialViews });
  const first = await harness(() => window.harness.renders.slice(0, 2).map((r) => [r.postId, r.view?.count ?? null]));
  assert.deepEqual(first, [
    ["63", null],
    ["64", 2],
  ]);
  await page.waitForSelector(loaded(63), { timeout: LONG });
  await page.waitForSelector(`${post(64)}:not([data-seeded])`, { timeout: LONG });
  assert.deepEqual((await harness(() => window.harness.warnings)).slice(before), [
    'likekit-react: initialViews["63"] is ignored: "count" must be a whole number from 0, not -1',
    'likekit-react: initialViews: "abc" is no post id, its entry is ignored',
  ]);
  // The same seeds again: no new warning.
  await mount("buttons", { ids: [63, 64] }, { initialViews });
  assert.equal(await harness(() => window.harness.warnings.length), before + 2);
});

test("the page raised no uncaught errors, logged no errors and got only the injected failures", () => {
  assert.deepEqual(pageErrors, []);
  assert.deepEqual(consoleErrors, []);
  // The faults set (post 54's, before its retry at the online event), a
  // post the server does not have, and the 401 of Ana's retry, sent
  // without a token after the switch to Ben.
  assert.deepEqual(
    new Set(errorAnswers),
    new Set([
      "POST /posts/12/like 503",
      "GET /likes 503",
      "GET /posts/99/likes 404",
      "POST /posts/51/like 503",
      "POST /posts/51/like 401",
      "POST /posts/54/like 503",
    ]),
  );
});
