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

const DEMO = process.env.LIKEKIT_DEMO_URL;
const ADMIN_KEY = process.env.LIKEKIT_ADMIN_KEY;
const MODULES = process.env.LIKEKIT_NODE_MODULES;
const CHROMIUM = process.env.LIKEKIT_CHROMIUM ?? "/usr/bin/chromium";
const OUT = process.env.LIKEKIT_TEST_OUT ?? tmpdir();
if (!DEMO || !ADMIN_KEY || !MODULES) {
  throw new Error("run with `cargo xtask test --only browser` (LIKEKIT_DEMO_URL, LIKEKIT_ADMIN_KEY, LIKEKIT_NODE_MODULES)");
}
const { chromium } = createRequire(path.join(MODULES, "noop.js"))("playwright-core");

/** Flags for Chromium on a machine with no network beyond loopback. */
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
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

test("the page raised no uncaught errors", () => {
  assert.deepEqual(pageErrors, []);
});
