// The `web` bench suite's browser half: the like button on LikeKit
// (likekit/) and on TanStack Query (tanstack/), both built by Vite in
// production mode, in Debian's headless Chromium driven by playwright-core,
// against likekit-server on loopback, which serves the apps too (same
// origin). `cargo xtask bench --only web` builds everything, starts the
// server and runs this with LIKEKIT_URL, LIKEKIT_ADMIN_KEY, LIKEKIT_PKG (the
// wasm package, for its admin client), LIKEKIT_NODE_MODULES (where
// playwright-core is), LIKEKIT_CHROMIUM and LIKEKIT_BENCH_QUICK (1: fewer
// clicks, loads and bursts, for trying the bench itself).
//
// Every figure is printed as a `likekit-metric name=value` line; lines
// starting with `#` say more about each. Nothing here is a test: a figure
// is what it is, and only a page that breaks (an error, a click that
// changes nothing, a state that never settles) stops the run.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const SERVER = process.env.LIKEKIT_URL;
const ADMIN_KEY = process.env.LIKEKIT_ADMIN_KEY;
const PKG = process.env.LIKEKIT_PKG;
const MODULES = process.env.LIKEKIT_NODE_MODULES;
const CHROMIUM = process.env.LIKEKIT_CHROMIUM ?? "/usr/bin/chromium";
const QUICK = process.env.LIKEKIT_BENCH_QUICK === "1";
if (!SERVER || !ADMIN_KEY || !PKG || !MODULES) {
  throw new Error(
    "run with `cargo xtask bench --only web` (LIKEKIT_URL, LIKEKIT_ADMIN_KEY, LIKEKIT_PKG, LIKEKIT_NODE_MODULES)",
  );
}
const { chromium } = createRequire(path.join(MODULES, "noop.js"))("playwright-core");
const { LikeKitAdmin } = await import(pathToFileURL(path.join(PKG, "testing.js")).href);
const PROBE = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), "probe.js"), "utf8");

/** Chromium's flags, the same for every browser test (`install::CHROMIUM_ARGS` in xtask). */
const FLAGS = JSON.parse(process.env.LIKEKIT_CHROMIUM_ARGS ?? "null");
if (!Array.isArray(FLAGS)) throw new Error("run under cargo xtask, which passes LIKEKIT_CHROMIUM_ARGS");
/** Upper bound for any wait; a page that needs longer is broken. */
const LONG = 30_000;
/** Clicks measured per app, after WARMUP clicks that are not. */
const CLICKS = QUICK ? 40 : 200;
const WARMUP = 10;
/** Page loads for the init() figures. */
const LOADS = QUICK ? 5 : 20;
/** Bursts per app and answer delay, each on a post of its own. */
const BURSTS = QUICK ? 2 : 10;
/** A burst: TAPS taps spread evenly over SPAN_MS. */
const TAPS = 5;
const SPAN_MS = 50;
/** Answer delays the bursts run under: loopback as it is, and a slow network's (the server's latency fault). */
const DELAYS = [
  { ms: 0, suffix: "" },
  { ms: 100, suffix: "_slow" },
];

const APPS = [
  { app: "likekit", name: "LikeKit", firstPost: 1000 },
  { app: "tanstack", name: "TanStack Query", firstPost: 2000 },
];
/** React alone with the same button and no network: the floor for click → DOM change. */
const FLOOR = { app: "floor", name: "React alone", firstPost: 3000, metric: "react_floor" };
const ANA = 1;

const admin = new LikeKitAdmin(SERVER, ADMIN_KEY);

/** `likekit-metric name=value`, for xtask. */
const metric = (name, value) => console.log(`likekit-metric ${name}=${value}`);
const note = (text) => console.log(`# ${text}`);

/** The value at rank ⌈q·n⌉ of the sorted values (nearest rank). */
function percentile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}
const ms = (value) => `${value.toFixed(2)} ms`;

/** The posts each app uses: one for the clicks, then one per burst. */
const clickPost = ({ firstPost }) => firstPost;
const burstPosts = ({ firstPost }, delayIndex) =>
  Array.from({ length: BURSTS }, (_, i) => firstPost + 1 + delayIndex * BURSTS + i);

await admin.seed({
  users: [
    { id: ANA, name: "Ana", friends: [2, 3] },
    { id: 2, name: "Ben" },
    { id: 3, name: "Cleo" },
  ],
  posts: APPS.flatMap((app) => [clickPost(app), ...DELAYS.flatMap((_, i) => burstPosts(app, i))]).map(
    (id) => ({ id, likers: [2, 3] }),
  ),
});
const token = await admin.mintToken(ANA, 3600);

/** What the server says about a post, for Ana. */
async function serverView(postId) {
  const response = await fetch(`${SERVER}/posts/${postId}/likes`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (!response.ok) throw new Error(`GET /posts/${postId}/likes answered ${response.status}`);
  return response.json();
}

/** Uncaught errors of any page: the run fails with them. */
const pageErrors = [];

const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });

/** Opens `app` showing `posts` in `context`, with the probe, and waits until every post shows. */
async function open(context, app, posts) {
  const page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(`${app}: ${error.message}`));
  await page.addInitScript(PROBE);
  await page.goto(`${SERVER}/${app}/?posts=${posts.join(",")}#token=${token}`);
  await page.waitForSelector('body[data-ready="true"]', { state: "attached", timeout: LONG });
  for (const id of posts) {
    await page.waitForSelector(`.post[data-post-id="${id}"][data-known="true"]`, { timeout: LONG });
  }
  return page;
}

/** Waits until the app says nothing is being read or written, and the page has no call unanswered. */
async function settle(page, what) {
  const settled = await page.evaluate(async (timeout) => {
    const end = performance.now() + timeout;
    if (!(await window.bench.settled(timeout))) return false;
    while (window.probe.inFlight() > 0) {
      if (performance.now() > end) return false;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return true;
  }, LONG);
  if (!settled) throw new Error(`${what}: the page did not settle within ${LONG} ms`);
}

/** What a card shows. */
const shown = (page, postId) =>
  page.evaluate((id) => {
    const card = document.querySelector(`.post[data-post-id="${id}"]`);
    return {
      liked: card.querySelector(".heart").getAttribute("aria-pressed") === "true",
      count: Number(card.querySelector(".count").textContent.replaceAll(",", "")),
    };
  }, postId);

// ------------------------------------------------------------ init()

/**
 * LikeKit's `init()` (fetch, compile and instantiate the .wasm), timed in
 * the page: on LOADS first visits (a new browser context each, so no
 * cache), then on LOADS reloads of one page (the HTTP cache and V8's code
 * cache warm).
 */
async function measureInit() {
  const cold = [];
  for (let i = 0; i < LOADS; i++) {
    const context = await browser.newContext();
    const page = await open(context, "likekit", []);
    cold.push(await page.evaluate(() => window.bench.initMs));
    await context.close();
  }
  const warm = [];
  const context = await browser.newContext();
  const page = await open(context, "likekit", []);
  for (let i = 0; i < LOADS; i++) {
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]', { state: "attached", timeout: LONG });
    warm.push(await page.evaluate(() => window.bench.initMs));
  }
  await context.close();
  metric("web_likekit_init_ms", percentile(cold, 0.5).toFixed(2));
  metric("web_likekit_init_warm_ms", percentile(warm, 0.5).toFixed(2));
  note(
    `LikeKit init() over ${LOADS} first visits: median ${ms(percentile(cold, 0.5))}, max ${ms(Math.max(...cold))}; ` +
      `over ${LOADS} reloads: median ${ms(percentile(warm, 0.5))}, max ${ms(Math.max(...warm))}`,
  );
}

// ------------------------------------------------------------ click → DOM

/**
 * Clicks the heart of one post WARMUP + CLICKS times with real input
 * events (playwright's mouse, through the DevTools protocol), waiting after
 * each until the app has settled, so every click starts from a quiet page;
 * the probe times each click to its DOM change.
 */
async function measureClicks(entry) {
  const { app, name, metric: label = app } = entry;
  const postId = clickPost(entry);
  const context = await browser.newContext({ viewport: { width: 900, height: 700 } });
  const page = await open(context, app, [postId]);
  const box = await page.locator(`.post[data-post-id="${postId}"] .heart`).boundingBox();
  const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
  const first = await shown(page, postId);

  const samples = [];
  for (let i = 0; i < WARMUP + CLICKS; i++) {
    // Waiting is asked for before the click, so nothing of ours runs in the page between the click and its change.
    const changed = page.evaluate(([n, timeout]) => window.probe.changed(n, timeout), [i, LONG]);
    await page.mouse.click(x, y);
    await changed;
    await settle(page, `${name}, click ${i}`);
    if (i >= WARMUP) samples.push(await page.evaluate((n) => window.probe.clicks[n], i));
  }
  for (const [i, sample] of samples.entries()) {
    if (!sample.trusted || sample.after.pressed === sample.before.pressed) {
      throw new Error(`${name}, click ${WARMUP + i}: ${JSON.stringify(sample)}`);
    }
  }
  // An even number of clicks: back where it started, on the server too.
  const last = await shown(page, postId);
  const server = entry === FLOOR ? { liked_by_me: last.liked, count: last.count } : await serverView(postId);
  if (last.liked !== first.liked || server.liked_by_me !== first.liked || server.count !== last.count) {
    throw new Error(
      `${name}: after ${WARMUP + CLICKS} clicks the page shows ${JSON.stringify(last)} and the server ${JSON.stringify(server)}, from ${JSON.stringify(first)}`,
    );
  }
  await context.close();

  const times = samples.map((sample) => sample.ms);
  const sameTask = samples.filter((sample) => sample.sameTask).length;
  const nextFrame = samples.filter((sample) => sample.nextFrame).length;
  metric(`web_${label}_click_ms`, percentile(times, 0.5).toFixed(3));
  metric(`web_${label}_click_p99_ms`, percentile(times, 0.99).toFixed(3));
  metric(`web_${label}_click_next_frame`, (nextFrame / CLICKS).toFixed(3));
  note(
    `${name}: click → DOM change over ${CLICKS} clicks: median ${ms(percentile(times, 0.5))}, ` +
      `p99 ${ms(percentile(times, 0.99))}, max ${ms(Math.max(...times))}; ` +
      `${sameTask} of ${CLICKS} within the click's own task, ${nextFrame} before the next frame`,
  );
}

// ------------------------------------------------------------ bursts

/**
 * TAPS taps on one heart within SPAN_MS, on BURSTS posts one after the
 * other, with the server's answers delayed by `delay.ms`. The taps are
 * `click()`s from a timer in the page (the same for both apps). Counts
 * what reached the server about the post from the first tap until the app
 * settled (the request journal); answers how many bursts left the server
 * and the page both where the taps left the heart.
 */
async function measureBursts(entry, delay, delayIndex) {
  const { app, name } = entry;
  const posts = burstPosts(entry, delayIndex);
  const context = await browser.newContext({ viewport: { width: 900, height: 700 } });
  const page = await open(context, app, posts);
  if (delay.ms > 0) await admin.setFaults([{ route: "*", latency_ms: delay.ms }]);
  const calls = [];
  const writes = [];
  const sent = [];
  let abandoned = 0;
  let exact = 0;
  try {
    for (const postId of posts) {
      const first = await shown(page, postId);
      const known = (await admin.requests({ post: postId })).entries.length;
      const pageCalls = await page.evaluate(() => window.probe.calls.length);
      const span = await page.evaluate(
        async ({ id, taps, spanMs }) => {
          const heart = document.querySelector(`.post[data-post-id="${id}"] .heart`);
          const start = performance.now();
          for (let i = 0; i < taps; i++) {
            const wait = start + (i * spanMs) / (taps - 1) - performance.now();
            if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
            heart.click();
          }
          return performance.now() - start;
        },
        { id: postId, taps: TAPS, spanMs: SPAN_MS },
      );
      // Settled, then still settled once a late refetch would have started.
      await settle(page, `${name}, burst on post ${postId}`);
      await page.waitForTimeout(300 + delay.ms);
      await settle(page, `${name}, burst on post ${postId}`);

      const entries = (await admin.requests({ post: postId })).entries.slice(known);
      // The page has nothing in flight, so a call the server still lists
      // as unanswered is one the page gave up on (TanStack Query's
      // cancelQueries aborts reads): it reached the server all the same.
      abandoned += entries.filter((e) => e.in_flight).length;
      calls.push(entries.length);
      writes.push(entries.filter((e) => e.route === "like" || e.route === "unlike").length);
      sent.push(
        (await page.evaluate((n) => window.probe.calls.slice(n), pageCalls)).join(", ") + ` (taps over ${span.toFixed(1)} ms)`,
      );
      const wanted = TAPS % 2 === 1 ? !first.liked : first.liked;
      const last = await shown(page, postId);
      const server = await serverView(postId);
      if (server.liked_by_me === wanted && last.liked === wanted && last.count === server.count) {
        exact += 1;
      } else {
        note(
          `${name}, post ${postId}${delay.ms ? `, answers ${delay.ms} ms late` : ""}: ${TAPS} taps from ${JSON.stringify(first)} ` +
            `left the page at ${JSON.stringify(last)} and the server at liked ${server.liked_by_me}, count ${server.count}; ` +
            `the writes in the order they reached the server: ${entries
              .filter((e) => e.route === "like" || e.route === "unlike")
              .map((e) => `${e.method} (${e.write ?? "no answer"})`)
              .join(", ")}`,
        );
      }
    }
  } finally {
    if (delay.ms > 0) await admin.clearFaults();
  }
  await context.close();

  metric(`web_${app}_burst_calls${delay.suffix}`, percentile(calls, 0.5));
  note(
    `${name}: ${TAPS} taps in ${SPAN_MS} ms${delay.ms ? `, answers ${delay.ms} ms late` : " on loopback"}: ` +
      `calls per burst ${calls.join(", ")} (writes ${writes.join(", ")}; ${abandoned} reads abandoned by the page); ` +
      `the page asked for: ${sent.join(" | ")}`,
  );
  return exact;
}

try {
  await measureInit();
  for (const entry of [...APPS, FLOOR]) await measureClicks(entry);
  for (const entry of APPS) {
    let exact = 0;
    for (const [i, delay] of DELAYS.entries()) exact += await measureBursts(entry, delay, i);
    metric(`web_${entry.app}_burst_exact`, (exact / (BURSTS * DELAYS.length)).toFixed(3));
  }
} finally {
  await browser.close();
}
if (pageErrors.length > 0) throw new Error(`uncaught errors in the pages: ${pageErrors.join("; ")}`);
