// The LikeKit web demo: a feed of the demo posts for a signed-in viewer.
// Plain ES modules, no framework. `cargo xtask demo` serves this folder,
// the package under ./pkg/ and the demo seed from the reference server,
// and puts its admin key in the URL fragment (#admin=…): the page uses it,
// through the package's admin client (./pkg/testing.js), to sign viewers
// in (mint_token) and to set the network panel's fault rules (set_faults,
// clear_faults).

import init, { LikeClient } from "./pkg/likekit_wasm.js";
import { LikeKitAdmin } from "./pkg/testing.js";

/** What the posts show; the seed has only ids. */
const POSTS = {
  42: { caption: "Sunrise over the harbour, 6:12 am", tag: "sunrise", hue: 28 },
  1: { caption: "First loaf of sourdough that actually rose", tag: "sourdough", hue: 38 },
  2: { caption: "Trying a new route to work", tag: "by bike", hue: 200 },
  3: { caption: "The cat found the one sunny spot", tag: "cat nap", hue: 48 },
  4: { caption: "Rainy Sunday, good book", tag: "reading", hue: 220 },
  5: { caption: "Team picnic — everyone came!", tag: "picnic", hue: 120 },
};

/** Retries quickly so a failed like rolls back within a few seconds. */
const CLIENT_OPTIONS = {
  retry: { minDelayMs: 250, maxDelayMs: 1000, maxRetries: 2 },
  timeoutMs: 8000,
};

const $ = (selector, root = document) => root.querySelector(selector);
const adminKey = new URLSearchParams(location.hash.slice(1)).get("admin");
/** The demo server's admin API (the page is served by the server itself). */
const admin = adminKey ? new LikeKitAdmin(location.origin, adminKey) : null;

let users = [];
let posts = [];
/** The signed-in viewer: { user, client, unsubscribe[] }. */
let session = null;
/** Bumped on every sign-in, so a slow older one never wins. */
let generation = 0;

function notice(text) {
  const box = $("#notice");
  box.textContent = text;
  box.hidden = !text;
}

let toastTimer;
function toast(text) {
  const box = $("#toast");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.hidden = true), 6000);
}

// ------------------------------------------------------------------ the feed

function buildFeed() {
  const feed = $("#feed");
  feed.replaceChildren();
  const template = $("#post-template");
  for (const { id } of posts) {
    const meta = POSTS[id] ?? { caption: `Post #${id}`, tag: `post ${id}`, hue: (id * 47) % 360 };
    const card = template.content.firstElementChild.cloneNode(true);
    card.dataset.postId = id;
    card.style.setProperty("--hue", meta.hue);
    $(".tag", card).textContent = meta.tag;
    $(".caption", card).textContent = meta.caption;
    const heart = $(".heart", card);
    heart.setAttribute("aria-label", `Like “${meta.caption}”`);
    heart.addEventListener("click", () => {
      if (session) render(session.client.toggle(id));
    });
    feed.append(card);
  }
  feed.setAttribute("aria-busy", "false");
}

/** Draws one post from a PostView. */
function render(view) {
  const card = document.querySelector(`.post[data-post-id="${view.postId}"]`);
  if (!card) return;
  const heart = $(".heart", card);
  heart.setAttribute("aria-pressed", String(view.liked));
  card.dataset.pending = String(view.pending);
  $(".count", card).textContent = view.count.toLocaleString("en-US");
  $(".line", card).textContent = view.line || "No likes yet";
  const error = $(".error", card);
  error.hidden = !view.error;
  // After a rollback the heart shows the saved state, so the intent that
  // failed was the other one.
  const what = view.liked ? "unlike" : "like";
  error.textContent = view.error ? `Your ${what} didn't save. Tap to try again.` : "";
}

/** The listener every post is subscribed with. */
function onEvent(event) {
  if (event.kind === "changed") {
    render(event.view);
  } else {
    toast(`${event.failure.message}.`);
  }
}

// ------------------------------------------------------------------ viewers

function buildViewers() {
  const box = $("#viewers");
  for (const user of users) {
    const label = document.createElement("label");
    label.className = "viewer";
    const radio = document.createElement("input");
    radio.type = "radio";
    radio.name = "viewer";
    radio.value = user.id;
    radio.id = `viewer-${user.name.toLowerCase()}`;
    radio.addEventListener("change", () => signIn(user));
    const avatar = document.createElement("span");
    avatar.className = "avatar";
    avatar.setAttribute("aria-hidden", "true");
    avatar.style.setProperty("--hue", (user.id * 67) % 360);
    avatar.textContent = user.name[0];
    label.append(radio, avatar, document.createTextNode(user.name));
    box.append(label);
  }
}

async function signIn(user) {
  const mine = ++generation;
  const previous = session;
  session = null;
  if (previous) {
    previous.unsubscribe.forEach((stop) => stop());
    // Calls already out may finish; then the old client is freed.
    previous.client.shutdown(3000).finally(() => previous.client.free());
  }
  document.body.dataset.viewer = user.name;
  $("#toast").hidden = true;
  $("#feed").setAttribute("aria-busy", "true");
  try {
    const token = await admin.mintToken(user.id, 3600);
    if (mine !== generation) return;
    // The viewer's taps not yet saved are kept in localStorage, so a like
    // made just before the page closes is sent after it opens again.
    const client = new LikeClient(location.origin, {
      ...CLIENT_OPTIONS,
      token: () => token,
      journal: { viewer: String(user.id) },
    });
    const unsubscribe = posts.map(({ id }) => client.subscribe(id, onEvent));
    session = { user, client, unsubscribe };
    // Taps from before the page was (re)loaded show again, pending, and
    // their calls go out; too old ones fail once (onEvent toasts them).
    const restored = client.restore();
    restored.restored.forEach(render);
    // What came back, for the browser tests: "post:liked:pending,…".
    document.body.dataset.restored = restored.restored
      .map((view) => `${view.postId}:${view.liked}:${view.pending}`)
      .join(",");
    if (restored.problem) toast(`Earlier taps could not be read: ${restored.problem.message}`);
    const views = await client.refreshMany(posts.map(({ id }) => id));
    if (mine !== generation) return;
    views.forEach(render);
    $("#feed").setAttribute("aria-busy", "false");
    document.body.dataset.ready = user.name;
  } catch (err) {
    if (mine === generation) notice(`Could not sign ${user.name} in: ${err.message}`);
  }
}

// ------------------------------------------------------------------ network panel

function describeNetwork(latency, failures) {
  const slow = latency > 0 ? `every call takes ${latency / 1000} s` : "";
  const flaky =
    failures >= 1 ? "every like fails" : failures > 0 ? "one in three likes fails" : "";
  const parts = [slow, flaky].filter(Boolean);
  return parts.length ? `Now: ${parts.join(", ")}.` : "Normal network.";
}

async function applyNetwork() {
  const latency = Number($("#latency").value);
  const failures = Number($("#failures").value);
  const status = $("#network-status");
  try {
    if (latency === 0 && failures === 0) {
      await admin.clearFaults();
    } else {
      const write = { latency_ms: latency, error_rate: failures, status: 503 };
      await admin.setFaults([
        { route: "like", ...write },
        { route: "unlike", ...write },
        { route: "likes", latency_ms: latency },
        { route: "batch", latency_ms: latency },
      ]);
    }
    status.textContent = describeNetwork(latency, failures);
    status.dataset.applied = `${latency}/${failures}`;
  } catch (err) {
    status.textContent = `Could not change the network: ${err.message}`;
  }
}

function buildNetworkPanel() {
  for (const id of ["latency", "failures", "reset-network"]) $(`#${id}`).disabled = false;
  $("#latency").addEventListener("change", applyNetwork);
  $("#failures").addEventListener("change", applyNetwork);
  $("#reset-network").addEventListener("click", () => {
    $("#latency").value = "0";
    $("#failures").value = "0";
    applyNetwork();
  });
}

// ------------------------------------------------------------------ start

async function main() {
  if (!adminKey) {
    notice(
      "This page needs the admin key the demo server was started with: open the URL " +
        "that `cargo xtask demo` printed (it ends in #admin=…).",
    );
    return;
  }
  await init();
  const seed = await (await fetch("demo-seed.json")).json();
  users = seed.users;
  posts = seed.posts;
  buildFeed();
  buildViewers();
  buildNetworkPanel();
  $("#viewers").disabled = false;
  const first = $("#viewers input");
  first.checked = true;
  await applyNetwork();
  await signIn(users[0]);
}

main().catch((err) => notice(`The demo could not start: ${err.message}`));
