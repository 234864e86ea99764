// The browser side of the likekit-react tests: loads the .wasm, and hands
// the test (playwright-core, bindings/react/tests/react.test.mjs) a small
// harness on `window.harness` to make a client and mount screens.

import { StrictMode, version } from "react";
import { createRoot, hydrateRoot } from "react-dom/client";
import { flushSync } from "react-dom";
import init, { LikeClient } from "likekit-wasm";
import { LikeKitProvider } from "likekit-react";

import { pageRenders, renders, scene, taps } from "./scenes.jsx";
import { ReadmeClient, readmeClients } from "./readme-client.jsx";

/** Retries quickly, so a rollback comes within a second. */
const OPTIONS = { retry: { minDelayMs: 50, maxDelayMs: 100, maxRetries: 1, jitter: false } };

let client = null;
let root = null;
/** The root shows the README hook's screen (`readmeClient`). */
let readmeShown = false;
/** The reads a held client (`signInHeld`) has not let go yet. */
let held = [];
const container = document.getElementById("root");
/** What the root shows (`mount`, `hydrate`), for `giveClient` to render again. */
let screen = null;

/** likekit-react's warnings (`console.warn`), in order. */
const warnings = [];
const consoleWarn = console.warn.bind(console);
console.warn = (...args) => {
  if (typeof args[0] === "string" && args[0].startsWith("likekit-react:")) warnings.push(args.join(" "));
  consoleWarn(...args);
};

/**
 * What a click on a heart or on "Next post" changed, and when: `ms` from
 * the click event (a capturing listener, before React's) to the first DOM
 * mutation that changed what the card shows; `sameTask`: it came before a
 * task posted at the click, so within the click's own task; `beforeFrame`:
 * before the next animation frame (`framed`: that frame came, so the page
 * is drawing). `before` and `after` are what the card showed.
 */
const probes = [];

const text = (root, selector) => root.querySelector(selector)?.textContent ?? null;

/** What a card shows, for the probes. */
function shown(post) {
  return {
    postId: post.dataset.postId,
    pending: post.dataset.pending,
    pressed: post.querySelector(".heart")?.getAttribute("aria-pressed") ?? null,
    count: text(post, ".count"),
    line: text(post, ".line"),
    failure: text(post, ".failure"),
  };
}

/** The clicks the probes watch, and the element whose content they follow. */
const WATCHED = [
  { selector: ".heart", around: (target) => target.closest(".post"), read: shown },
  {
    selector: "#next",
    around: (target) => target.closest(".switcher"),
    read: (section) => shown(section.querySelector(".post")),
  },
];

window.addEventListener(
  "click",
  (event) => {
    if (!(event.target instanceof Element)) return;
    const watch = WATCHED.find(({ selector }) => event.target.closest(selector));
    if (!watch) return;
    const around = watch.around(event.target);
    const before = watch.read(around);
    const probe = { before, after: null, ms: null, sameTask: null, beforeFrame: null, framed: false };
    probes.push(probe);
    const start = performance.now();
    let taskEnded = false;
    let framed = false;
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      taskEnded = true;
      channel.port1.close();
    };
    channel.port2.postMessage(null);
    requestAnimationFrame(() => {
      framed = true;
      probe.framed = true;
    });
    const observer = new MutationObserver(() => {
      const now = watch.read(around);
      if (JSON.stringify(now) === JSON.stringify(before)) return;
      probe.ms = performance.now() - start;
      probe.sameTask = !taskEnded;
      probe.beforeFrame = !framed;
      probe.after = now;
      observer.disconnect();
    });
    observer.observe(around, { subtree: true, childList: true, attributes: true, characterData: true });
  },
  { capture: true },
);

/**
 * Screen `name` under a provider with the client (none with `withClient`
 * false) and `initialViews` as its seeds.
 */
function element({ name, props, strict = false, initialViews, withClient = true, nested = false }) {
  // `nested`: the seeds on an outer provider without a client (as a server
  // component renders it), the client on an inner one given no seeds.
  const inner = (
    <LikeKitProvider client={withClient ? client : null} initialViews={nested ? undefined : initialViews}>
      {scene(name, props)}
    </LikeKitProvider>
  );
  const app = nested ? (
    <LikeKitProvider client={null} initialViews={initialViews}>
      {inner}
    </LikeKitProvider>
  ) : (
    inner
  );
  return strict ? <StrictMode>{app}</StrictMode> : app;
}

window.harness = {
  /** The React the app was built with. */
  reactVersion: version,
  probes,
  renders,
  pageRenders,
  warnings,
  /** Calls the `toggle` or `setLiked(liked)` post `postId`'s button last got, and says what it returned. */
  tap(postId, liked) {
    const { toggle, setLiked } = taps.get(String(postId));
    const view = liked === undefined ? toggle() : setLiked(liked);
    return view === undefined ? null : { liked: view.liked, count: view.count };
  },
  /** A new client for `token`, with `options` beside the usual ones (the previous one is shut down and freed). */
  async signIn(token, options = {}) {
    this.unmount();
    const previous = client;
    client = new LikeClient(location.origin, { ...OPTIONS, ...options, token });
    if (previous) {
      await previous.shutdown(1000);
      previous.free();
    }
  },
  /**
   * Like `signIn`, but the client's `refreshMany` waits until the test
   * lets it go: `heldReads()` lists the reads waiting, oldest first, each
   * as its post ids joined by commas; `letRead(ids, outcome)` sends one to
   * the server (`"answer"`) or fails it (`"fail"`) with the `LikeError` a
   * 503 gives.
   */
  async signInHeld(token) {
    await this.signIn(token);
    const real = client;
    held = [];
    client = new Proxy(real, {
      get(target, name) {
        if (name === "refreshMany") {
          return (ids) =>
            new Promise((resolve, reject) => {
              held.push({ ids: [...ids].map(String).join(","), resolve, reject, read: () => target.refreshMany(ids) });
            });
        }
        const value = Reflect.get(target, name);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  },
  heldReads: () => held.map((read) => read.ids),
  async letRead(ids, outcome) {
    const at = held.findIndex((read) => read.ids === ids);
    if (at < 0) throw new Error(`no read of ${ids} is held`);
    const [read] = held.splice(at, 1);
    if (outcome === "answer") {
      read.resolve(await read.read());
    } else {
      const error = new Error("HTTP 503");
      error.name = "LikeError";
      read.reject(Object.assign(error, { code: "http_503", transient: true, status: 503 }));
    }
  },
  readmeClients,
  /**
   * Shows the README hook's screen (readme-client.jsx) with `props` — the
   * same root again when it shows already, as a parent's new render would
   * — in StrictMode, as a Next.js app in development runs it.
   */
  readmeClient(props) {
    if (!readmeShown) {
      this.unmount();
      renders.length = 0;
      root = createRoot(container);
      readmeShown = true;
    }
    const screen = <ReadmeClient url={location.origin} {...props} />;
    flushSync(() => root.render(<StrictMode>{screen}</StrictMode>));
  },
  /** Whether the hook's `i`th client was freed: a call on it then throws. */
  readmeFreed(i) {
    try {
      readmeClients[i].isShutDown();
      return false;
    } catch (error) {
      if (/null pointer passed to rust/.test(error.message)) return true;
      throw error;
    }
  },
  /**
   * Mounts screen `name` (see scenes.jsx), in StrictMode when `strict`,
   * with `initialViews` as the provider's seeds when given.
   */
  mount(name, props, strict = false, initialViews = undefined, nested = false) {
    this.unmount();
    renders.length = 0;
    pageRenders.length = 0;
    screen = { name, props, strict, initialViews, nested };
    root = createRoot(container);
    flushSync(() => root.render(element(screen)));
  },
  /**
   * Renders the screen on the root again, with a provider given the
   * client (and `initialViews`, when given, as a new object).
   */
  rerender(initialViews = screen.initialViews) {
    screen = { ...screen, initialViews, withClient: true };
    flushSync(() => root.render(element(screen)));
  },
  /**
   * Renders the screen again with its provider given no client (a
   * sign-out), and the same `initialViews` object.
   */
  signedOut() {
    screen = { ...screen, withClient: false };
    flushSync(() => root.render(element(screen)));
  },
  /** The errors React reported while hydrating (`hydrate`). */
  hydrationErrors: [],
  /**
   * Puts server-rendered `html` in the page and hydrates it as screen
   * `name`, with `initialViews` as the provider's seeds when given, and
   * its provider without a client when `withClient` is false (as a page
   * hydrates before its .wasm is loaded; `rerender()` gives it the client).
   */
  hydrate(html, name, props, { initialViews, withClient = true } = {}) {
    this.unmount();
    renders.length = 0;
    this.hydrationErrors.length = 0;
    container.innerHTML = html;
    screen = { name, props, initialViews, withClient };
    root = hydrateRoot(container, element(screen), {
      onRecoverableError: (error) => this.hydrationErrors.push(String(error?.message ?? error)),
    });
  },
  unmount() {
    if (root) flushSync(() => root.unmount());
    root = null;
    screen = null;
    readmeShown = false;
    container.replaceChildren();
  },
  liveSubscriptions: () => client.liveSubscriptions(),
  taps: () => client.stats().taps,
  view: (postId) => client.view(postId),
  refresh: (postId) => client.refresh(postId),
  refreshMany: (postIds) => client.refreshMany(postIds),
  waitIdle: (ms) => client.waitIdle(ms),
  /** What the tests compare of a `LikeError`. */
  errorFields: (error) => ({
    isError: error instanceof Error,
    name: error.name,
    code: error.code,
    status: error.status,
    transient: error.transient,
    message: error.message,
  }),
};

init().then(
  () => {
    document.body.dataset.ready = "true";
  },
  (error) => {
    document.body.dataset.ready = `failed: ${error.message}`;
  },
);
