// The web demo page in Debian's headless Chromium, driven by playwright-core,
// against a server started as `cargo xtask demo` starts it (demo seed,
// admin key, --web-root with the staged page). Run it with
// `cargo xtask test --only browser`, which passes LIKEKIT_DEMO_URL,
// LIKEKIT_ADMIN_KEY, LIKEKIT_NODE_MODULES (where playwright-core is) and
// LIKEKIT_CHROMIUM. Screenshots go to LIKEKIT_TEST_OUT (target/web-test).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import { LikeKitAdmin } from "likekit-wasm/testing";

const DEMO = process.env.LIKEKIT_DEMO_URL;
const ADMIN_KEY = process.env.LIKEKIT_ADMIN_KEY;
const MODULES = process.env.LIKEKIT_NODE_MODULES;
const CHROMIUM = process.env.LIKEKIT_CHROMIUM ?? "/usr/bin/chromium";
const OUT = process.env.LIKEKIT_TEST_OUT ?? tmpdir();
if (!DEMO || !ADMIN_KEY || !MODULES) {
  throw new Error("run with `cargo xtask test --only browser` (LIKEKIT_DEMO_URL, LIKEKIT_ADMIN_KEY, LIKEKIT_NODE_MODULES)");
}
const { chromium } = createRequire(path.join(MODULES, "noop.js"))("playwright-core");

/** Chromium's flags, the same for every browser test (`install::CHROMIUM_ARGS` in xtask). */
const FLAGS = JSON.parse(process.env.LIKEKIT_CHROMIUM_ARGS ?? "null");
if (!Array.isArray(FLAGS)) throw new Error("run under cargo xtask, which passes LIKEKIT_CHROMIUM_ARGS");
/** Upper bounds for waits; a test that hits one fails. */
const LONG = 30_000;

let profile;
let context;
let page;
const pageErrors = [];

const post = (id) => `.post[data-post-id="${id}"]`;
const text = (selector) => page.locator(selector).textContent();
const count = async (id) => Number((await text(`${post(id)} .count`)).replace(/,/g, ""));
const shot = (name) => page.screenshot({ path: path.join(OUT, name), fullPage: true });

/** The demo server's admin API, for faults the network panel cannot stage. */
const admin = new LikeKitAdmin(DEMO.replace(/\/$/, ""), ADMIN_KEY);
/** Seed user ids. */
const CLEO = 3;
const DEV = 4;

/** Every card as drawn: what a viewer sees and can tap. Runs in the page. */
function drawnCards() {
  return [...document.querySelectorAll(".post")].map((card) => ({
    post: card.dataset.postId,
    disabled: card.querySelector(".heart").disabled,
    pressed: card.querySelector(".heart").getAttribute("aria-pressed"),
    count: card.querySelector(".count").textContent,
    line: card.querySelector(".line").textContent,
  }));
}

/** Asserts every card shows no viewer's state: heart off and empty, no count, `line`. */
function assertNoViewerState(cards, line, when) {
  assert.equal(cards.length, 6, when);
  for (const card of cards) {
    assert.deepEqual(
      card,
      { post: card.post, disabled: true, pressed: "false", count: "…", line },
      `${when}: post ${card.post}`,
    );
  }
}

/** Polls `check` until it answers true; fails after LONG. */
async function until(check, what) {
  const end = Date.now() + LONG;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The server's journal of the feed reads (`likes` and `batch` routes) signed in as `user`. */
async function reads(user) {
  const [one, many] = await Promise.all([
    admin.requests({ route: "likes", user }),
    admin.requests({ route: "batch", user }),
  ]);
  return [...one.entries, ...many.entries];
}

async function network(latency, failures) {
  await page.selectOption("#latency", String(latency));
  await page.selectOption("#failures", String(failures));
  await page.waitForSelector(`#network-status[data-applied="${latency}/${failures}"]`, { timeout: LONG });
}

before(async () => {
  profile = mkdtempSync(path.join(tmpdir(), "likekit-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1180, height: 1000 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on("pageerror", (err) => pageErrors.push(err.message));
  page.on("console", (message) => {
    if (message.type() === "error") console.log(`# page console: ${message.text()}`);
  });
  await page.goto(`${DEMO}#admin=${ADMIN_KEY}`);
  await page.waitForSelector('body[data-ready="Ana"]', { timeout: LONG });
});

after(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test("the feed shows every demo post with a heart, a count and a line", async () => {
  assert.equal(await page.locator(".post").count(), 6);
  // Seed: Ana likes post 1 alone; she does not like post 42 (Ben, Cleo, Dev, Eve do).
  assert.equal(await page.getAttribute(`${post(1)} .heart`, "aria-pressed"), "true");
  assert.equal(await text(`${post(1)} .line`), "Liked by you");
  assert.equal(await page.getAttribute(`${post(42)} .heart`, "aria-pressed"), "false");
  assert.equal(await count(42), 4);
  assert.match(await text(`${post(42)} .line`), /^Liked by Cleo, Ben and 2 others$/);
  assert.equal(await page.getAttribute(`${post(42)} .heart`, "aria-label"), "Like “Sunrise over the harbour, 6:12 am”");
});

test("a click fills the heart and moves the count before the server answers", async () => {
  await network(2000, 0);
  const before = await count(42);
  // Click and read the card in one task of the page: no answer from the
  // network can be handled in between.
  const seen = await page.evaluate((selector) => {
    const card = document.querySelector(selector);
    card.querySelector(".heart").click();
    return {
      pressed: card.querySelector(".heart").getAttribute("aria-pressed"),
      count: card.querySelector(".count").textContent,
      pending: card.dataset.pending,
      line: card.querySelector(".line").textContent,
    };
  }, post(42));
  assert.equal(seen.pressed, "true");
  assert.equal(Number(seen.count), before + 1);
  assert.equal(seen.pending, "true", "the call is still out");
  assert.match(seen.line, /^Liked by you, /);
  await shot("demo-instant.png");

  // The answer arrives two seconds later and keeps it.
  await page.waitForSelector(`${post(42)}[data-pending="false"]`, { timeout: LONG });
  assert.equal(await page.getAttribute(`${post(42)} .heart`, "aria-pressed"), "true");
  assert.equal(await count(42), before + 1);
});

test("a heart is a keyboard-operable toggle button", async () => {
  await network(0, 0);
  const heart = page.locator(`${post(4)} .heart`);
  assert.equal(await heart.evaluate((el) => el.tagName), "BUTTON");
  await heart.focus();
  await page.keyboard.press("Space");
  assert.equal(await heart.getAttribute("aria-pressed"), "true");
  await page.keyboard.press("Enter");
  assert.equal(await heart.getAttribute("aria-pressed"), "false");
  await page.waitForSelector(`${post(4)}[data-pending="false"]`, { timeout: LONG });
  assert.equal(await heart.getAttribute("aria-pressed"), "false");
});

test("with every call failing, the heart empties again and says it didn't save", async () => {
  await network(2000, 1);
  const before = await count(2);
  await page.click(`${post(2)} .heart`);
  await page.waitForSelector(`${post(2)} .heart[aria-pressed="true"]`, { timeout: 1000 });
  assert.equal(await count(2), before + 1);

  // Three tries of two seconds each, then the rollback.
  await page.waitForSelector(`${post(2)} .heart[aria-pressed="false"]`, { timeout: LONG });
  await page.waitForSelector("#toast:not([hidden])", { timeout: LONG });
  assert.match(await text("#toast"), /Your like didn't save/);
  assert.equal(await text(`${post(2)} .error`), "Your like didn't save. Tap to try again.");
  assert.equal(await count(2), before);
  await shot("demo-rollback.png");

  await page.click("#reset-network");
  await page.waitForSelector('#network-status[data-applied="0/0"]', { timeout: LONG });
});

test("an unlike then a like, both failing: the card names the like, and offers no tap to retry what it shows", async () => {
  await network(300, 1);
  // Ana likes post 1 (the seed). Unlike, then like again while the unlike is out.
  assert.equal(await page.getAttribute(`${post(1)} .heart`, "aria-pressed"), "true");
  await page.click(`${post(1)} .heart`);
  await page.waitForSelector(`${post(1)} .heart[aria-pressed="false"]`, { timeout: 1000 });
  await page.click(`${post(1)} .heart`);
  await page.waitForSelector(`${post(1)} .heart[aria-pressed="true"]`, { timeout: 1000 });
  // The like's tries fail too; the heart rolls back to the saved state, liked.
  await page.waitForSelector(`${post(1)}[data-pending="false"] .error:not([hidden])`, { timeout: LONG });
  assert.equal(await page.getAttribute(`${post(1)} .heart`, "aria-pressed"), "true");
  assert.match(await text("#toast"), /Your like didn't save/);
  assert.equal(await text(`${post(1)} .error`), "Your like didn't save.");
  await shot("demo-both-failed.png");

  await page.click("#reset-network");
  await page.waitForSelector('#network-status[data-applied="0/0"]', { timeout: LONG });
});

test("without the admin key, or with another run's, the page says why and what to open", async () => {
  const other = await context.newPage();
  try {
    other.on("pageerror", (err) => pageErrors.push(err.message));
    await other.goto(DEMO);
    await other.waitForFunction(
      () => document.querySelector("#feed .loading")?.textContent === "No feed without the admin key.",
      null,
      { timeout: LONG },
    );
    assert.match(await other.locator("#notice").textContent(), /needs the admin key/);

    await other.goto(`${DEMO}#admin=not-this-runs-key`);
    await other.reload();
    await other.waitForSelector("#notice:not([hidden])", { timeout: LONG });
    assert.match(
      await other.locator("#notice").textContent(),
      /^Could not sign Ana in: the admin key in this page's URL is not the running server's .*open the URL it printed last$/,
    );
  } finally {
    await other.close();
  }
});

test("a like survives a page reload: the heart comes back pending, the like reaches the server once", async () => {
  const journal = () =>
    page.evaluate(() => localStorage.getItem("likekit-intents:1")); // Ana's
  // Nothing unsaved so far: the rolled-back like was dropped too.
  await page.waitForFunction(() => localStorage.getItem("likekit-intents:1") === null, null, { timeout: LONG });
  await network(5000, 0);
  const before = await count(4);
  await page.click(`${post(4)} .heart`);
  await page.waitForSelector(`${post(4)}[data-pending="true"] .heart[aria-pressed="true"]`, { timeout: 1000 });
  // The tap is in the journal before its call is answered.
  await page.waitForFunction(() => localStorage.getItem("likekit-intents:1") !== null, null, { timeout: LONG });
  assert.match(await journal(), /"post":4,"liked":true,"tapped_at_ms":\d+/);

  await page.reload();
  await page.waitForSelector('body[data-ready="Ana"]', { timeout: LONG });
  // Restored at once, as the page starts: the heart as tapped, pending.
  // (The page clears the network panel's faults as it starts, so the
  // restored call may well be answered by the time the feed is drawn.)
  assert.equal(await page.getAttribute("body", "data-restored"), "4:true:true");

  // The restored call gets through: saved once, and the journal is empty
  // again.
  await page.waitForSelector(`${post(4)}[data-pending="false"]`, { timeout: LONG });
  assert.equal(await page.getAttribute(`${post(4)} .heart`, "aria-pressed"), "true");
  assert.equal(await count(4), before + 1);
  await page.waitForFunction(() => localStorage.getItem("likekit-intents:1") === null, null, { timeout: LONG });
  await shot("demo-restored.png");

  await page.click("#reset-network");
  await page.waitForSelector('#network-status[data-applied="0/0"]', { timeout: LONG });
});

test("switching the viewer changes the Liked by line", async () => {
  const asAna = await text(`${post(42)} .line`);
  assert.match(asAna, /^Liked by you, /);

  await page.locator("label.viewer", { hasText: "Ben" }).click();
  await page.waitForSelector('body[data-ready="Ben"]', { timeout: LONG });
  // Ben's friends are Ana and Dev, and Ben liked post 42 in the seed.
  await page.waitForFunction(
    (selector) => document.querySelector(selector).textContent.includes("Ana"),
    `${post(42)} .line`,
    { timeout: LONG },
  );
  const asBen = await text(`${post(42)} .line`);
  assert.notEqual(asBen, asAna);
  assert.match(asBen, /^Liked by you, Ana, Dev and \d+ others$/);
  assert.equal(await page.getAttribute(`${post(42)} .heart`, "aria-pressed"), "true");
  assert.equal(await page.getAttribute(`${post(1)} .heart`, "aria-pressed"), "false");
  assert.equal(await text(`${post(1)} .line`), "Liked by Ana");
  await shot("demo-ben.png");
});

test("switching the viewer on a slow read: every heart is off and loading until the new viewer's read lands", async () => {
  // Signed in as Ben (the test before), who likes posts 42, 3 and 5;
  // Cleo likes 42 and 5, not 3. Her reads are held for three seconds.
  const held = { latency_ms: 3000, user: CLEO };
  await admin.setFaults([
    { route: "batch", ...held },
    { route: "likes", ...held },
  ]);
  await admin.clearRequests();
  assert.equal(await page.getAttribute(`${post(3)} .heart`, "aria-pressed"), "true");

  // Every card as drawn from the click until Cleo's read lands.
  await page.evaluate(`window.drawnCards = ${drawnCards};`);
  await page.evaluate(() => {
    const drawn = (window.drawnBeforeReady = []);
    new MutationObserver((_, observer) => {
      if (document.body.dataset.ready === "Cleo") observer.disconnect();
      else drawn.push(window.drawnCards());
    }).observe(document.querySelector("#feed"), {
      subtree: true,
      childList: true,
      attributes: true,
      characterData: true,
    });
  });
  // Sign Cleo in and read the cards in one task of the page.
  const atClick = await page.evaluate(() => {
    document.querySelector("#viewer-cleo").click();
    return window.drawnCards();
  });
  assertNoViewerState(atClick, "Loading likes…", "at the click");

  // While the server holds Cleo's read, nothing changes.
  await until(async () => (await reads(CLEO)).some((entry) => entry.in_flight), "Cleo's read on the wire");
  assertNoViewerState(await page.evaluate(drawnCards), "Loading likes…", "while the read is held");
  assert.equal(await page.getAttribute("#feed", "aria-busy"), "true");
  await shot("demo-loading.png");

  // The read lands: Cleo's own hearts, and they can be tapped.
  await page.waitForSelector('body[data-ready="Cleo"]', { timeout: LONG });
  const drawnBeforeReady = await page.evaluate(() => window.drawnBeforeReady);
  drawnBeforeReady.forEach((cards, i) => assertNoViewerState(cards, "Loading likes…", `drawing ${i} before the read landed`));
  assert.equal(await page.getAttribute("#feed", "aria-busy"), "false");
  assert.equal(await page.getAttribute(`${post(42)} .heart`, "aria-pressed"), "true");
  assert.equal(await page.getAttribute(`${post(5)} .heart`, "aria-pressed"), "true");
  assert.equal(await page.getAttribute(`${post(3)} .heart`, "aria-pressed"), "false");
  assert.equal(await page.getAttribute(`${post(1)} .heart`, "aria-pressed"), "false");
  assert.equal(await page.locator(".post .heart:disabled").count(), 0);
  // Cleo's friends are Ana, Ben and Eve.
  assert.match(await text(`${post(3)} .line`), /^Liked by (Ana|Ben)\b/);
  assert.doesNotMatch(await text(`${post(3)} .line`), /you/);

  await admin.clearFaults();
});

test("a failed read says so with a Try again button that reads again", async () => {
  // Every read signed in as Dev answers 503, however often the client tries.
  const refused = { error_rate: 1, status: 503, user: DEV };
  await admin.setFaults([
    { route: "batch", ...refused },
    { route: "likes", ...refused },
  ]);
  await admin.clearRequests();
  await page.locator("label.viewer", { hasText: "Dev" }).click();

  await page.waitForSelector("#read-failed:not([hidden])", { timeout: LONG });
  assert.match(await text("#read-failed-text"), /^Could not read the likes for Dev: ./);
  assert.equal(await page.locator("#retry-read").isVisible(), true);
  assert.equal(await text("#retry-read"), "Try again");
  // Neither loading nor worded as a failed sign-in.
  assert.equal(await page.getAttribute("#feed", "aria-busy"), "false");
  assert.equal(await page.locator("#notice").isHidden(), true);
  assert.equal(await page.getAttribute("body", "data-ready"), null);
  assertNoViewerState(await page.evaluate(drawnCards), "Likes not loaded", "after the failed read");
  const failed = await reads(DEV);
  assert.ok(failed.length >= 1, "Dev's feed was read");
  assert.deepEqual(new Set(failed.map((entry) => entry.status)), new Set([503]));
  await shot("demo-read-failed.png");

  // The server is fine again: Try again reads, and Dev's hearts show
  // (Dev likes posts 42, 3 and 5, not 1; his friend is Ben).
  await admin.clearFaults();
  await page.click("#retry-read");
  await page.waitForSelector('body[data-ready="Dev"]', { timeout: LONG });
  assert.equal(await page.locator("#read-failed").isHidden(), true);
  assert.equal(await page.getAttribute("#feed", "aria-busy"), "false");
  assert.equal(await page.locator(".post .heart:disabled").count(), 0);
  assert.equal(await page.getAttribute(`${post(42)} .heart`, "aria-pressed"), "true");
  assert.equal(await page.getAttribute(`${post(3)} .heart`, "aria-pressed"), "true");
  assert.equal(await page.getAttribute(`${post(1)} .heart`, "aria-pressed"), "false");
  assert.match(await text(`${post(3)} .line`), /^Liked by you, Ben\b/);
  assert.ok((await reads(DEV)).some((entry) => entry.status === 200), "the second read was answered");
});

test("with site data blocked (reading localStorage throws), the page signs in, says the journal is unreadable, and likes still reach the server", async () => {
  const blocked = await context.newPage();
  const errors = [];
  blocked.on("pageerror", (err) => errors.push(err.message));
  try {
    // As Chromium behaves with the site's data blocked, or in a sandboxed frame.
    await blocked.addInitScript(() => {
      Object.defineProperty(window, "localStorage", {
        configurable: true,
        get() {
          throw new DOMException("The operation is insecure.", "SecurityError");
        },
      });
    });
    await blocked.goto(`${DEMO}#admin=${ADMIN_KEY}`);
    await blocked.waitForSelector('body[data-ready="Ana"]', { timeout: LONG });
    const storage = await blocked.evaluate(() => {
      try {
        return typeof localStorage;
      } catch (e) {
        return e.name;
      }
    });
    assert.equal(storage, "SecurityError", "the page cannot read localStorage");
    // The client was made all the same; restore() said why nothing was restored.
    assert.match(await blocked.textContent("#toast"), /^Earlier taps could not be read: .*The operation is insecure/);

    const card = post(42);
    const heart = `${card} .heart`;
    const liked = (await blocked.getAttribute(heart, "aria-pressed")) === "true";
    const before = (await admin.getPost(42)).count;
    await blocked.click(heart);
    await blocked.waitForSelector(`${card}[data-pending="false"] .heart[aria-pressed="${!liked}"]`, { timeout: LONG });
    assert.equal((await admin.getPost(42)).count, before + (liked ? -1 : 1), "the tap reached the server");
    // And back, leaving the post as the other tests had it.
    await blocked.click(heart);
    await blocked.waitForSelector(`${card}[data-pending="false"] .heart[aria-pressed="${liked}"]`, { timeout: LONG });
    assert.equal((await admin.getPost(42)).count, before);
    assert.deepEqual(errors, []);
  } finally {
    await blocked.close();
    await page.bringToFront();
  }
});

test("the page raised no uncaught errors", () => {
  assert.deepEqual(pageErrors, []);
});
