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

/** How long a minted token lasts; the client asks for a new one after a 401. */
const TOKEN_TTL_SECS = 3600;

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
/**
 * The signed-in viewer: { user, client, unsubscribe[], ready }. `ready`
 * turns true when the viewer's first read lands; until then the cards show
 * no one's state and their hearts are off.
 */
let session = null;
/** Bumped on every sign-in, so a slow older one never wins. */
let generation = 0;
/**
 * Clients of earlier sign-ins still shutting down, by viewer id. A client
 * for the same viewer shares their journal, so it is made only once the
 * old one has finished (else the old one's last save would drop the new
 * one's taps).
 */
const closing = new Map();

function notice(text) {
  const box = $("#notice");
  box.textContent = text;
  box.hidden = !text;
}

/**
 * Why an admin call failed, in words. A 401 means the key in the URL is
 * not this server's: each run of `cargo xtask demo` makes a new one, so a
 * tab left open from an earlier run has a stale key.
 */
function adminProblem(err) {
  return err?.status === 401
    ? "the admin key in this page's URL is not the running server's (each `cargo xtask demo` " +
        "makes a new one): open the URL it printed last"
    : err?.message;
}

/** The feed will not load: says why in place of "Loading the feed…". */
function feedNotLoaded(text) {
  const loading = $("#feed .loading");
  if (loading) loading.textContent = text;
  $("#feed").setAttribute("aria-busy", "false");
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
      if (session?.ready) render(session.client.toggle(id));
    });
    feed.append(card);
  }
  feed.setAttribute("aria-busy", "false");
}

/**
 * Draws every card without a viewer's state: an empty heart that cannot be
 * tapped, no count, `text` in place of the line, no "didn't save".
 */
function drawUnknown(text) {
  for (const card of document.querySelectorAll(".post")) {
    card.dataset.state = "unknown";
    card.dataset.pending = "false";
    const heart = $(".heart", card);
    heart.disabled = true;
    heart.setAttribute("aria-pressed", "false");
    $(".count", card).textContent = "…";
    $(".line", card).textContent = text;
    const error = $(".error", card);
    error.hidden = true;
    error.textContent = "";
    delete card.dataset.failedWanted;
  }
}

/** Draws one post from a PostView. */
function render(view) {
  const card = document.querySelector(`.post[data-post-id="${view.postId}"]`);
  if (!card) return;
  card.dataset.state = "ready";
  const heart = $(".heart", card);
  heart.disabled = false;
  heart.setAttribute("aria-pressed", String(view.liked));
  card.dataset.pending = String(view.pending);
  $(".count", card).textContent = view.count.toLocaleString("en-US");
  $(".line", card).textContent = view.line || "No likes yet";
  const error = $(".error", card);
  error.hidden = !view.error;
  if (!view.error) delete card.dataset.failedWanted;
  // The failure event (which follows this change) says which tap failed;
  // until it comes, the intent that failed is taken to be the other one
  // than the heart shows after the rollback.
  const wanted = card.dataset.failedWanted ? card.dataset.failedWanted === "true" : !view.liked;
  error.textContent = view.error ? notSaved(wanted, view.liked) : "";
}

/**
 * The card's "didn't save" line. A tap tries again only when the heart
 * shows the other state than the one that failed: after unlike then like,
 * both failing, the heart is back to liked and the like is what failed.
 */
function notSaved(wanted, liked) {
  const what = wanted ? "like" : "unlike";
  return wanted === liked ? `Your ${what} didn't save.` : `Your ${what} didn't save. Tap to try again.`;
}

/** Words the card's "didn't save" line after the failure that `failure` tells. */
function showFailure(failure) {
  const card = document.querySelector(`.post[data-post-id="${failure.postId}"]`);
  if (!card) return;
  card.dataset.failedWanted = String(failure.wanted);
  const error = $(".error", card);
  const liked = $(".heart", card).getAttribute("aria-pressed") === "true";
  if (!error.hidden) error.textContent = notSaved(failure.wanted, liked);
}

/**
 * The listener every post of `me` (a session) is subscribed with. Changes
 * are drawn once the viewer's first read has landed (that read draws every
 * card from the client); failures are told at once.
 */
function listener(me) {
  return (event) => {
    if (session !== me) return;
    if (event.kind === "changed") {
      if (me.ready) render(event.view);
    } else {
      toast(`${event.failure.message}.`);
      if (me.ready) showFailure(event.failure);
    }
  };
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

/** Ends a session: no more drawing from it; calls out get 3 s, then it is freed. */
function signOut(old) {
  old.unsubscribe.forEach((stop) => stop());
  const viewer = old.user.id;
  const done = old.client
    .shutdown(3000)
    .catch(() => {})
    .finally(() => {
      old.client.free();
      if (closing.get(viewer) === done) closing.delete(viewer);
    });
  closing.set(viewer, done);
}

async function signIn(user) {
  const mine = ++generation;
  const previous = session;
  session = null;
  if (previous) signOut(previous);
  document.body.dataset.viewer = user.name;
  delete document.body.dataset.ready;
  notice("");
  showReadFailure(null);
  $("#toast").hidden = true;
  // Nothing of the previous viewer stays on the cards while this one loads.
  drawUnknown("Loading likes…");
  $("#feed").setAttribute("aria-busy", "true");
  let client;
  try {
    let token = await admin.mintToken(user.id, TOKEN_TTL_SECS);
    // The same viewer's previous client must be gone before this one
    // opens their journal.
    await closing.get(user.id);
    if (mine !== generation) return;
    // The viewer's taps not yet saved are kept in localStorage, so a like
    // made just before the page closes is sent after it opens again.
    // After a 401 the client asks with `refresh` true: mint a new token.
    client = new LikeClient(location.origin, {
      ...CLIENT_OPTIONS,
      token: async (refresh) =>
        refresh ? (token = await admin.mintToken(user.id, TOKEN_TTL_SECS)) : token,
      journal: { viewer: String(user.id) },
    });
  } catch (err) {
    if (mine !== generation) return;
    notice(`Could not sign ${user.name} in: ${adminProblem(err)}`);
    drawUnknown("Not signed in");
    $("#feed").setAttribute("aria-busy", "false");
    return;
  }
  const me = { user, client, unsubscribe: [], ready: false };
  session = me;
  me.unsubscribe = posts.map(({ id }) => client.subscribe(id, listener(me)));
  // Taps from before the page was (re)loaded are pending again and their
  // calls go out; the read below draws them. Too old ones fail once (the
  // listener toasts them).
  const restored = client.restore();
  // What came back, for the browser tests: "post:liked:pending,…".
  document.body.dataset.restored = restored.restored
    .map((view) => `${view.postId}:${view.liked}:${view.pending}`)
    .join(",");
  if (restored.problem) toast(`Earlier taps could not be read: ${restored.problem.message}`);
  await readFeed(me);
}

/** Reads the viewer's feed; when it lands, draws every card from the client. */
async function readFeed(me) {
  showReadFailure(null);
  drawUnknown("Loading likes…");
  $("#feed").setAttribute("aria-busy", "true");
  try {
    await me.client.refreshMany(posts.map(({ id }) => id));
    if (session !== me) return;
    me.ready = true;
    // What the client holds now: the read, with any tap still out on top.
    for (const { id } of posts) {
      const view = me.client.view(id);
      if (view) render(view);
    }
    document.body.dataset.ready = me.user.name;
  } catch (err) {
    if (session !== me) return;
    drawUnknown("Likes not loaded");
    showReadFailure(`Could not read the likes for ${me.user.name}: ${err.message}`, () => readFeed(me));
  } finally {
    if (session === me) $("#feed").setAttribute("aria-busy", "false");
  }
}

/** Shows why the feed could not be read, with a button that reads it again; null hides it. */
function showReadFailure(text, retry) {
  const box = $("#read-failed");
  box.hidden = !text;
  $("#read-failed-text").textContent = text ?? "";
  $("#retry-read").onclick = retry ?? null;
}

// ------------------------------------------------------------------ network panel

function describeNetwork(latency, failures) {
  const slow = latency > 0 ? `every call takes ${latency / 1000} s` : "";
  const flaky =
    failures >= 1
      ? "every like and unlike fails"
      : failures > 0
        ? "one in three tries of a like or unlike fails"
        : "";
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
    status.textContent =
      err?.status === 401
        ? "Could not change the network: the admin key was refused."
        : `Could not change the network: ${err.message}`;
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

// Back online, as the browser tells it: the viewer's calls waiting out a
// retry's backoff go out now rather than at the end of their delay.
addEventListener("online", () => {
  try {
    session?.client.retryNow();
  } catch {
    // A client let go during a viewer switch: nothing of it to retry.
  }
});

// The network panel sticks just below the header, which grows when its
// viewers wrap onto a second line.
new ResizeObserver(([entry]) =>
  document.documentElement.style.setProperty("--top-height", `${entry.target.offsetHeight}px`),
).observe($(".top"));

async function main() {
  if (!adminKey) {
    notice(
      "This page needs the admin key the demo server was started with: open the URL " +
        "that `cargo xtask demo` printed (it ends in #admin=…).",
    );
    feedNotLoaded("No feed without the admin key.");
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

main().catch((err) => {
  notice(`The demo could not start: ${err.message}`);
  feedNotLoaded("The feed could not load.");
});
