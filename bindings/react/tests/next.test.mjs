// likekit-react and likekit-wasm in a Next.js app (tests/next, App Router),
// as the two ways of the likekit-wasm README's "Next.js and server
// rendering" have it: `next build` (production) by the runner, `next start`
// on a free loopback port by this file, likekit-server on another, the
// pages fetched as HTML and opened in Debian's headless Chromium.
// Run it with `cargo xtask test --only react`, which builds the app twice
// into tests/next/.next: `bundled` with no setting (way 1: the client is
// made in the browser), `external` with `serverExternalPackages:
// ["likekit-wasm"]` (way 2: clients made on the server too). It passes
// LIKEKIT_NEXT_APP (the app), LIKEKIT_NEXT (the `next` program) and the
// react runner's variables.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const SERVER = process.env.LIKEKIT_URL;
const ADMIN_KEY = process.env.LIKEKIT_ADMIN_KEY;
const PKG = process.env.LIKEKIT_PKG;
const MODULES = process.env.LIKEKIT_NODE_MODULES;
const APP = process.env.LIKEKIT_NEXT_APP;
const NEXT = process.env.LIKEKIT_NEXT;
const CHROMIUM = process.env.LIKEKIT_CHROMIUM ?? "/usr/bin/chromium";
const OUT = process.env.LIKEKIT_TEST_OUT ?? tmpdir();
if (!SERVER || !ADMIN_KEY || !PKG || !MODULES || !APP || !NEXT) {
  throw new Error(
    "run with `cargo xtask test --only react` (LIKEKIT_URL, LIKEKIT_ADMIN_KEY, LIKEKIT_PKG, LIKEKIT_NODE_MODULES, LIKEKIT_NEXT_APP, LIKEKIT_NEXT)",
  );
}
const { chromium } = createRequire(path.join(MODULES, "noop.js"))("playwright-core");
const { LikeKitAdmin } = await import(pathToFileURL(path.join(PKG, "testing.js")).href);

/** Chromium's flags, the same for every browser test (`install::CHROMIUM_ARGS` in xtask). */
const FLAGS = JSON.parse(process.env.LIKEKIT_CHROMIUM_ARGS ?? "null");
if (!Array.isArray(FLAGS)) throw new Error("run under cargo xtask, which passes LIKEKIT_CHROMIUM_ARGS");
/** Upper bound for waits; a test that hits one fails. */
const LONG = 30_000;

/** Users and posts of this file only: the server is the react test's too. */
const ANA = 201;
const BEN = 202;
const SITE = 203;
const DAN = 204;
const POSTS = { empty: 2001, liked: 2002, another: 2003, seeded: 2004, seededEmpty: 2005 };
const admin = new LikeKitAdmin(SERVER, ADMIN_KEY);
let anaToken;
let siteToken;

/** Every `next start` this file started, stopped when the process ends however it ends. */
const running = new Set();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/**
 * `next start` of build `build` ("bundled" or "external") on a free
 * loopback port, with `env` added; resolves once it is ready. Its output
 * goes to `<OUT>/next-<build>.log` and stays readable as `log()`.
 */
function startNext(build, env = {}) {
  const child = spawn(process.execPath, [NEXT, "start", "--hostname", "127.0.0.1", "--port", "0"], {
    cwd: APP,
    env: {
      ...process.env,
      NEXT_TELEMETRY_DISABLED: "1",
      LIKEKIT_NEXT_EXTERNAL: build === "external" ? "1" : "0",
      LIKEKIT_URL: SERVER,
      LIKEKIT_SERVER_TOKEN: siteToken,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let output = "";
  const logFile = path.join(OUT, `next-${build}.log`);
  const server = {
    pid: child.pid,
    url: null,
    log: () => output,
    async stop() {
      running.delete(child);
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill();
        await exited;
      }
      writeFileSync(logFile, output);
    },
  };
  return new Promise((resolve, reject) => {
    let ready = false;
    const fail = (why) => {
      if (ready) return;
      ready = true;
      writeFileSync(logFile, output);
      reject(new Error(`next start (${build}) ${why}; see ${logFile}`));
    };
    const timer = setTimeout(() => fail(`was not ready within ${LONG / 1000} s`), LONG);
    const take = (chunk) => {
      output += chunk;
      server.url ??= output.match(/Local:\s+(http:\/\/127\.0\.0\.1:\d+)/)?.[1] ?? null;
      if (!ready && server.url && /Ready in/.test(output)) {
        ready = true;
        clearTimeout(timer);
        resolve(server);
      }
    };
    child.stdout.setEncoding("utf8").on("data", take);
    child.stderr.setEncoding("utf8").on("data", take);
    child.once("exit", (code) => {
      clearTimeout(timer);
      fail(`exited with ${code}`);
    });
  });
}

/** A page's HTML as the server sends it, and its status. */
async function html(server, pathAndQuery) {
  const response = await fetch(new URL(pathAndQuery, server.url));
  return { status: response.status, body: await response.text() };
}

/** The `<article class="post">` elements of `body`, by post id. */
function cards(body) {
  const found = new Map();
  for (const [card, id] of body.matchAll(/<article class="post" data-post-id="(\d+)"[^]*?<\/article>/g)) {
    found.set(id, card);
  }
  return found;
}

let profile;
let browser;

/**
 * Opens `url` in a new tab of the shared Chromium, recording what would
 * say that hydration went wrong: uncaught errors and every console error.
 */
async function open(url) {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console error: ${message.text()}`);
  });
  await page.goto(url);
  return { page, errors };
}

const post = (id) => `.post[data-post-id="${id}"]`;

/** `promise`, or a failure naming `what` after LONG. */
function within(promise, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${LONG / 1000} s`)), LONG);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
/** The browser's client is made and post `id` shows its view, with no call out. */
const settled = (id) => `.likes[data-client="browser"] ${post(id)}[data-pending="false"]`;

before(async () => {
  await admin.seed({
    users: [
      { id: ANA, name: "Ana", friends: [BEN] },
      { id: BEN, name: "Ben" },
      { id: SITE, name: "The site" },
      { id: DAN, name: "Dan" },
    ],
    posts: [
      { id: POSTS.empty },
      { id: POSTS.liked, likers: [BEN] },
      { id: POSTS.another, likers: [BEN, SITE] },
      { id: POSTS.seeded, likers: [SITE, BEN] },
      { id: POSTS.seededEmpty },
    ],
  });
  anaToken = await admin.mintToken(ANA, 3600);
  siteToken = await admin.mintToken(SITE, 3600);
  profile = mkdtempSync(path.join(tmpdir(), "likekit-next-chromium-"));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
  });
});

after(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe("way 1: the client made in the browser, in an effect (no next.config setting)", () => {
  let next;
  before(async () => {
    next = await startNext("bundled");
  });
  after(() => next?.stop());

  test("the server's HTML has the placeholder: a disabled, empty heart and no count", async () => {
    const { status, body } = await html(next, `/?token=${anaToken}&posts=${POSTS.empty},${POSTS.liked}`);
    assert.equal(status, 200);
    assert.match(body, /<section class="likes" data-client="none" data-server-client="false">/);
    const found = cards(body);
    assert.deepEqual([...found.keys()], [String(POSTS.empty), String(POSTS.liked)]);
    for (const card of found.values()) {
      assert.match(card, /data-pending="unknown"/);
      assert.match(card, /<button type="button" class="heart" aria-pressed="false" disabled="">/);
      assert.match(card, /<span class="count">…<\/span>/);
    }
  });

  test("the page hydrates without an error, and a tap fills the heart and reaches the server", async () => {
    const { page, errors } = await open(`${next.url}/?token=${anaToken}&posts=${POSTS.empty},${POSTS.liked}`);
    try {
      await page.waitForSelector(settled(POSTS.liked), { timeout: LONG });
      await page.waitForSelector(settled(POSTS.empty), { timeout: LONG });
      assert.equal(await page.textContent(`${post(POSTS.liked)} .count`), "1", "Ben's like, from the server");
      assert.equal(await page.textContent(`${post(POSTS.empty)} .count`), "0");

      const heart = `${post(POSTS.empty)} .heart`;
      assert.equal(await page.getAttribute(heart, "aria-pressed"), "false");
      await page.click(heart);
      assert.equal(await page.getAttribute(heart, "aria-pressed"), "true", "the heart filled");
      assert.equal(await page.textContent(`${post(POSTS.empty)} .count`), "1");
      await page.waitForSelector(settled(POSTS.empty), { timeout: LONG });
      const stored = await admin.getPost(POSTS.empty);
      assert.equal(stored.count, 1, "the like reached the server");
      assert.deepEqual(stored.recent_likers, [ANA]);
      await page.screenshot({ path: path.join(OUT, "next-way1.png") });
      assert.deepEqual(errors, [], "no hydration error, no error at all");
    } finally {
      await page.close();
    }
  });

  test("a server component may render the provider itself (the package is a client module)", async () => {
    const { status, body } = await html(next, `/provider-in-server?posts=${POSTS.empty},${POSTS.liked}`);
    assert.equal(status, 200);
    assert.match(body, /<section class="plain-likes">/);
    const found = cards(body);
    assert.deepEqual([...found.keys()], [String(POSTS.empty), String(POSTS.liked)]);
    for (const card of found.values()) {
      assert.match(card, /<button type="button" class="heart" aria-pressed="false" disabled="">/);
      assert.match(card, /<span class="count">…<\/span>/);
    }
  });

  test("initialViews from a server component's read: the HTML has each post's heart, count and line", async () => {
    const { status, body } = await html(next, `/seeded?token=${anaToken}&posts=${POSTS.seeded},${POSTS.seededEmpty}`);
    assert.equal(status, 200);
    const found = cards(body);
    assert.deepEqual([...found.keys()], [String(POSTS.seeded), String(POSTS.seededEmpty)]);
    for (const card of found.values()) {
      assert.match(card, /data-pending="false" data-seeded="true">/);
      // The heart shows the viewer's state, and waits for the browser's client.
      assert.match(card, /<button type="button" class="heart" aria-pressed="false" disabled="">/);
    }
    assert.match(found.get(String(POSTS.seeded)), /<span class="count">2<\/span><p class="line">Liked by Ben and 1 other<\/p>/);
    assert.match(found.get(String(POSTS.seededEmpty)), /<span class="count">0<\/span><\/article>/);
  });

  test("the seeded page hydrates without an error, keeps the seeds until the browser's client has read the posts, then shows its views", async () => {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(`console error: ${message.text()}`);
    });
    // The browser's reads of the LikeKit server wait until the test lets them go.
    const server = new URL(SERVER).origin;
    const held = [];
    let holding = true;
    let firstHeld;
    const aReadIsHeld = new Promise((resolve) => {
      firstHeld = resolve;
    });
    await page.route(
      (url) => url.origin === server && /^\/(likes|posts\/\d+\/likes)$/.test(url.pathname),
      (route) => {
        if (!holding || route.request().method() !== "GET") return route.continue();
        held.push(route);
        firstHeld();
      },
    );
    const card = (id) => `.likes[data-client="browser"] ${post(id)}`;
    try {
      await page.goto(`${next.url}/seeded?token=${anaToken}&posts=${POSTS.seeded},${POSTS.seededEmpty}`);
      await within(aReadIsHeld, "the browser's client read the posts");
      // Hydrated, the client made, its read out: the seeds still show.
      await page.waitForSelector(`${card(POSTS.seeded)}[data-seeded="true"]`, { timeout: LONG });
      assert.equal(await page.textContent(`${post(POSTS.seeded)} .count`), "2");
      assert.equal(await page.textContent(`${post(POSTS.seeded)} .line`), "Liked by Ben and 1 other");
      assert.equal(await page.getAttribute(`${post(POSTS.seeded)} .heart`, "disabled"), "");

      // Dan likes the post meanwhile: the client's read is newer than the seed.
      await admin.seed({ posts: [{ id: POSTS.seeded, likers: [DAN] }] });
      holding = false;
      for (const route of held) await route.continue();
      await page.waitForSelector(`${card(POSTS.seeded)}:not([data-seeded])[data-pending="false"]`, { timeout: LONG });
      await page.waitForSelector(`${card(POSTS.seededEmpty)}:not([data-seeded])[data-pending="false"]`, { timeout: LONG });
      assert.equal(await page.textContent(`${post(POSTS.seeded)} .count`), "3");
      assert.equal(await page.textContent(`${post(POSTS.seeded)} .line`), "Liked by Ben and 2 others");
      assert.equal(await page.getAttribute(`${post(POSTS.seeded)} .heart`, "disabled"), null);
      await page.screenshot({ path: path.join(OUT, "next-seeded.png") });
      assert.deepEqual(errors, [], "no hydration error, no error at all");
    } finally {
      await page.close();
    }
  });

  test("without serverExternalPackages, a client made on the server fails with the package's advice", async () => {
    const { status } = await html(next, `/server-view?posts=${POSTS.liked}`);
    assert.equal(status, 500);
    assert.match(next.log(), /likekit-wasm: could not read its WebAssembly module .* serverExternalPackages: \["likekit-wasm"\]/);
  });
});

/**
 * Counts the likekit-react post records in a V8 heap snapshot: objects
 * with all of a record's own fields (the class's name is minified in
 * Next.js's server build, its fields are not).
 */
function countRecords(file) {
  const snapshot = JSON.parse(readFileSync(file, "utf8"));
  const { node_fields, edge_fields, node_types, edge_types } = snapshot.snapshot.meta;
  const typeOfNode = node_fields.indexOf("type");
  const edgeCount = node_fields.indexOf("edge_count");
  const selfSize = node_fields.indexOf("self_size");
  const typeOfEdge = edge_fields.indexOf("type");
  const nameOfEdge = edge_fields.indexOf("name_or_index");
  const object = node_types[typeOfNode].indexOf("object");
  const property = edge_types[typeOfEdge].indexOf("property");
  const fields = ["store", "postId", "key", "listeners", "stop", "snapshot", "known"].map((name) =>
    snapshot.strings.indexOf(name),
  );
  const { nodes, edges } = snapshot;
  let records = 0;
  let bytes = 0;
  let edge = 0;
  for (let node = 0; node < nodes.length; node += node_fields.length) {
    const count = nodes[node + edgeCount];
    bytes += nodes[node + selfSize];
    if (nodes[node + typeOfNode] === object && !fields.includes(-1)) {
      const names = new Set();
      for (let i = edge; i < edge + count * edge_fields.length; i += edge_fields.length) {
        if (edges[i + typeOfEdge] === property) names.add(edges[i + nameOfEdge]);
      }
      if (fields.every((name) => names.has(name))) records += 1;
    }
    edge += count * edge_fields.length;
  }
  return { records, bytes };
}

describe("way 2: serverExternalPackages, clients made on the server too", () => {
  let next;
  const snapshots = path.join(OUT, "next-heap");
  before(async () => {
    rmSync(snapshots, { recursive: true, force: true });
    mkdirSync(snapshots, { recursive: true });
    next = await startNext("external", {
      NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapshots}`,
    });
  });
  after(() => next?.stop());

  /**
   * A heap snapshot of the Next.js server (taken after a full collection).
   * Node writes it on its main thread once SIGUSR2 arrives: a request
   * answered after the file appeared was answered after it was written.
   */
  async function heapOfNext() {
    const before = new Set(readdirSync(snapshots));
    process.kill(next.pid, "SIGUSR2");
    const deadline = Date.now() + LONG;
    let file;
    while (!file) {
      assert.ok(Date.now() < deadline, `no heap snapshot in ${snapshots} within ${LONG / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      file = readdirSync(snapshots).find((name) => !before.has(name));
    }
    await html(next, "/?posts=");
    const counted = countRecords(path.join(snapshots, file));
    rmSync(path.join(snapshots, file));
    return counted;
  }

  test("the HTML has the server's view of the posts, and the page hydrates as in way 1", async () => {
    const ids = [POSTS.empty, POSTS.liked, POSTS.another];
    const expected = await Promise.all(ids.map(async (id) => (await admin.getPost(id)).count));
    const { status, body } = await html(next, `/server-view?token=${anaToken}&posts=${ids}`);
    assert.equal(status, 200, next.log());
    const counts = [...body.matchAll(/<li data-post-id="(\d+)" data-count="(\d+)">/g)].map(([, id, count]) => [
      Number(id),
      Number(count),
    ]);
    assert.deepEqual(counts, ids.map((id, i) => [id, expected[i]]));
    // The buttons below had the server's client in their provider: the placeholder still.
    assert.match(body, /<section class="likes" data-client="none" data-server-client="true">/);
    for (const card of cards(body).values()) assert.match(card, /<span class="count">…<\/span>/);

    const { page, errors } = await open(`${next.url}/server-view?token=${anaToken}&posts=${ids}`);
    try {
      for (const [i, id] of ids.entries()) {
        await page.waitForSelector(settled(id), { timeout: LONG });
        assert.equal(Number(await page.textContent(`${post(id)} .count`)), expected[i]);
      }
      assert.deepEqual(errors, [], "no hydration error, no error at all");
    } finally {
      await page.close();
    }
  });

  test("a long-lived client on the server: the provider keeps no record of the posts it rendered", async (t) => {
    const start = await heapOfNext();
    const pages = 10;
    const perPage = 500;
    for (let i = 0; i < pages; i++) {
      const ids = Array.from({ length: perPage }, (_, j) => 100_000 + i * perPage + j);
      const { status, body } = await html(next, `/server-view?posts=${ids}`);
      assert.equal(status, 200, next.log());
      assert.match(body, /data-server-client="true"/, "rendered with the server's client in the provider");
      assert.equal(cards(body).size, perPage);
    }
    const end = await heapOfNext();
    const figure =
      `Next.js server heap after rendering ${pages * perPage} distinct posts with the process's client: ` +
      `${start.records} → ${end.records} post records, ${(start.bytes / 1e6).toFixed(1)} → ${(end.bytes / 1e6).toFixed(1)} MB`;
    t.diagnostic(figure);
    console.log(`# ${figure}`);
    assert.equal(end.records, 0, "no post record outlives the request that rendered it");
  });
});
