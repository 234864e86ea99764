"use client";
// The directive above makes the module a client module for frameworks with
// React Server Components (Next.js's App Router): a server component may
// import and render the provider, and the hooks run in the client bundle.
// Elsewhere it is a plain string.
//
// likekit-react: React hooks over a likekit-wasm `LikeClient`.
//
// The client already does everything a like button needs (instant taps,
// one call at a time, coalescing, retries, rollback); this module only
// carries its views into React. It keeps one store per client with one
// record per post on screen:
//
// - the record's snapshot `{ view, failure, error }` is what
//   `useSyncExternalStore` reads. `view()` builds a new object on every
//   call, so the record keeps the last one and replaces it only when a
//   change event (or a fresh read) brings a view that differs in some
//   field: a view keeps its identity until it changes, and a component
//   re-renders only for its own post.
//   A `useLikes` page re-renders for its read (`refreshing`, `error`), and
//   for its posts' changes only once it has read `views`.
// - the first component to show a post subscribes to it on the client
//   (`client.subscribe`); the last one to leave unsubscribes. One client
//   subscription per post, however many components show it, and none left
//   once they have all unmounted, StrictMode's extra mount included.
// - on the server (and while hydrating) React reads `getServerSnapshot`,
//   which calls nothing of the client: no view, no failure — or the view
//   the provider was given for the post in `initialViews` (a "seed"),
//   which then shows until the client has a view of its own.
// - the store holds a record once a component has subscribed to it. Until
//   then (a render not yet committed, and every render on the server,
//   where nothing subscribes) it holds it weakly: whatever rendered it
//   holds it, and once nothing does it is collected. A long-lived client
//   on the server keeps no record of the posts it rendered.

import {
  createContext,
  createElement,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useSyncExternalStore,
} from "react";

/** What a post shows before the client knows it, on the server, and while hydrating. */
const NOTHING = Object.freeze({ view: undefined, failure: null, error: null });

const noop = () => {};

/** Records kept before the oldest idle ones (no component listening) are dropped. */
const MAX_IDLE = 1000;

/**
 * The store's key for a post id: 42, "42", "042" and 42n are the same post,
 * as they are to the client. A value that is no post id keeps its own key:
 * the client refuses it with its typed error when the record reads it.
 */
function keyOf(postId) {
  if (typeof postId === "bigint") return postId.toString();
  if (typeof postId === "string" && /^[0-9]+$/.test(postId)) return BigInt(postId).toString();
  return String(postId);
}

/**
 * The `LikeError` for a post a read's answer left out, as the server does
 * for a post it does not have: the fields `client.refresh` rejects with
 * for that post (likekit-wasm makes its errors the same way).
 */
function notFound(key) {
  const error = new Error(`post not found: there is no post ${key}`);
  error.name = "LikeError";
  return Object.assign(error, { code: "post_not_found", transient: false, status: 404 });
}

/** The record of no post (`postId` null), and of every post while there is no client. */
const NO_POST = Object.freeze({
  subscribe: () => noop,
  getSnapshot: () => NOTHING,
  toggle: () => undefined,
  setLiked: () => undefined,
  reload: () => Promise.resolve(),
});

/**
 * Whether two values hold the same data: plain objects and arrays field by
 * field, errors by their fields plus name and message. Views are rebuilt
 * by the client on every read, so identity alone says nothing.
 */
function same(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (a instanceof Error || b instanceof Error) {
    if (a.name !== b.name || a.message !== b.message) return false;
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && same(a[key], b[key]));
}

/** The largest post id, 2^63 − 1, as the client and the server take it. */
const MAX_POST_ID = 9223372036854775807n;

/** How many friends' names the line spells out before it counts the rest (the client's rule). */
const MAX_NAMED_FRIENDS = 2;

/** No seeds: the provider was given no `initialViews`, or none of them could be used. */
const NO_SEEDS = new Map();

/**
 * The store's key of a seed's post id (a key of `initialViews`), or null
 * when it is no post id: a decimal string, a safe-integer number or a
 * BigInt, from 1 to 2^63 − 1.
 */
function seedKey(id) {
  let n = null;
  if (typeof id === "bigint") n = id;
  else if (typeof id === "number" && Number.isSafeInteger(id)) n = BigInt(id);
  else if (typeof id === "string" && /^[0-9]+$/.test(id)) n = BigInt(id);
  return n !== null && n >= 1n && n <= MAX_POST_ID ? n.toString() : null;
}

/** `n` with a comma between each group of three digits: 1,203. */
function thousands(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * The English line of `parts`, as likekit-wasm writes a view's `line`
 * ("Liked by you, Ana and 1,202 others", "1,204 likes", "" at 0): the
 * client is not there to write it on the server, nor while its module
 * loads. The tests compare it with the client's own for every case.
 */
function lineOf({ you, friends, others, total }) {
  const names = you ? ["you", ...friends] : friends;
  if (names.length === 0) {
    if (total === 0) return "";
    return total === 1 ? "1 like" : `${thousands(total)} likes`;
  }
  let line = "Liked by ";
  names.forEach((name, i) => {
    if (i > 0) line += i === names.length - 1 && others === 0 ? " and " : ", ";
    line += name;
  });
  if (others === 1) return `${line} and 1 other`;
  return others > 1 ? `${line} and ${thousands(others)} others` : line;
}

/** A value as a warning names it. */
function shown(value) {
  if (typeof value === "bigint") return `${value}n`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * The view of post `key` made from `likes`, a post's likes as the server
 * answers them (`{ count, liked_by_me, friends, version }`): the
 * `PostView` the client makes of the same answer, with nothing pending.
 * A string says why `likes` cannot be one.
 */
function seedView(key, likes) {
  if (typeof likes !== "object" || likes === null || Array.isArray(likes)) {
    return `it is ${shown(likes)}, not a post's likes ({ count, liked_by_me, friends, version })`;
  }
  const { count, liked_by_me: liked, friends = [], version } = likes;
  if (!Number.isSafeInteger(count) || count < 0) return `"count" must be a whole number from 0, not ${shown(count)}`;
  if (typeof liked !== "boolean") return `"liked_by_me" must be true or false, not ${shown(liked)}`;
  if (!Array.isArray(friends) || !friends.every((name) => typeof name === "string")) {
    return `"friends" must be a list of names, not ${shown(friends)}`;
  }
  if (version !== undefined && (!Number.isSafeInteger(version) || version < 0)) {
    return `"version" must be a whole number from 0, not ${shown(version)}`;
  }
  // A count read from the server's cache may lag behind the names: it is
  // raised to cover them, as the client does.
  const named = Object.freeze(friends.slice(0, MAX_NAMED_FRIENDS));
  const mentioned = (liked ? 1 : 0) + named.length;
  const total = Math.max(count, mentioned);
  const lineParts = Object.freeze({ you: liked, friends: named, others: total - mentioned, total });
  const id = BigInt(key);
  return Object.freeze({
    postId: id <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(id) : key,
    liked,
    count: total,
    friends: Object.freeze([...friends]),
    line: lineOf(lineParts),
    lineParts,
    pending: false,
    error: null,
  });
}

/** Whether this is a production build, where warnings are left out (as React leaves out its own). */
function production() {
  try {
    return process.env.NODE_ENV === "production";
  } catch {
    // No bundler and no Node: no `process`.
    return false;
  }
}

/** Warnings given already: each is given once. */
const warned = new Set();

function warn(message) {
  if (warned.has(message) || production()) return;
  if (warned.size < 100) warned.add(message);
  console.warn(`likekit-react: ${message}`);
}

/**
 * The provider's `initialViews` as seeds: post key → its view. An entry
 * that cannot be used (a key that is no post id, likes of the wrong
 * shape) is left out with a warning, and its post shows what it shows
 * without a seed; so is the whole of an `initialViews` that is neither an
 * object nor a Map. Never throws: a seed is only a first picture.
 */
function seedsOf(initialViews) {
  if (initialViews == null) return NO_SEEDS;
  let entries;
  if (initialViews instanceof Map) {
    entries = initialViews.entries();
  } else if (typeof initialViews === "object" && !Array.isArray(initialViews)) {
    entries = Object.entries(initialViews);
  } else {
    warn(`initialViews must be an object or a Map keyed by post id; ${shown(initialViews)} is ignored`);
    return NO_SEEDS;
  }
  const seeds = new Map();
  for (const [id, likes] of entries) {
    const key = seedKey(id);
    if (key === null) {
      const hint = id === "posts" ? " (give the `posts` of a GET /likes answer, not the whole answer)" : "";
      warn(`initialViews: ${shown(id)} is no post id, its entry is ignored${hint}`);
      continue;
    }
    const view = seedView(key, likes);
    if (typeof view === "string") {
      warn(`initialViews[${shown(id)}] is ignored: ${view}`);
      continue;
    }
    seeds.set(key, view);
  }
  return seeds.size > 0 ? seeds : NO_SEEDS;
}

/** Whether two seed maps hold the same views. */
function sameSeeds(a, b) {
  if (a.size !== b.size) return false;
  for (const [key, view] of a) {
    if (!same(view, b.get(key))) return false;
  }
  return true;
}

/**
 * The provider's seeds, kept while `initialViews` holds the same data: a
 * parent's new render that makes a new object of the same views changes
 * nothing below (no render, no read).
 */
function useSeeds(initialViews) {
  const last = useRef(NO_SEEDS);
  const seeds = useMemo(() => seedsOf(initialViews), [initialViews]);
  if (seeds !== last.current && sameSeeds(seeds, last.current)) return last.current;
  last.current = seeds;
  return seeds;
}

/**
 * The seeds a provider shows with `client`: its own `initialViews`, or,
 * when it was given none (`undefined`), those of the provider above it (a
 * server component's provider around the one that holds the client). None
 * any more once a client they were shown with has gone (a sign-out, a
 * viewer switch through no client), until a new `initialViews`: a seed is
 * the viewer's the page was rendered for, and without a client a post the
 * client had its own view of would show the seed again, an older count
 * and another viewer's "Liked by you" among them.
 */
function useShownSeeds(initialViews, client) {
  const above = useContext(SeedContext);
  const own = useSeeds(initialViews);
  const seeds = initialViews === undefined ? above : own;
  const life = useRef({ seeds: null, hadClient: false, spent: false });
  const state = life.current;
  if (state.seeds !== seeds) {
    state.seeds = seeds;
    state.hadClient = false;
    state.spent = false;
  }
  if (client) state.hadClient = true;
  else if (state.hadClient) state.spent = true;
  return state.spent ? NO_SEEDS : seeds;
}

/**
 * A post's record as `useLike` reads it when the provider has a seed for
 * the post: the seed shows (on the server, while hydrating, and after)
 * as long as the client has never had a view of the post; from its first
 * view on, the client's. A tap needs the client's own view (it knows the
 * viewer's pending taps and the confirmed state the call is decided
 * from), so while the seed shows, taps do nothing, as they do without a
 * client.
 */
class Seeded {
  constructor(record, seed) {
    /** Snapshot without a view → the same with the seed, one object each. */
    const seeded = new WeakMap();
    const withSeed = (snapshot) => {
      if (snapshot.view !== undefined || record.hadView) return snapshot;
      let withView = seeded.get(snapshot);
      if (!withView) {
        withView = Object.freeze({ ...snapshot, view: seed });
        seeded.set(snapshot, withView);
      }
      return withView;
    };
    // What the server rendered: the seed, whatever this client knows.
    const server = Object.freeze({ ...NOTHING, view: seed });
    const showsSeed = () => withSeed(record.getSnapshot()).view === seed;
    this.subscribe = record.subscribe;
    this.getSnapshot = () => withSeed(record.getSnapshot());
    this.getServerSnapshot = () => server;
    this.toggle = () => (showsSeed() ? undefined : record.toggle());
    this.setLiked = (liked) => (showsSeed() ? undefined : record.setLiked(liked));
  }
}

/** One post as the store keeps it; its methods are bound so React can hold them. */
class PostRecord {
  constructor(store, postId) {
    this.store = store;
    this.postId = postId;
    this.key = keyOf(postId);
    /** The components' listeners. */
    this.listeners = new Set();
    /** Ends the client subscription; null while no component listens. */
    this.stop = null;
    this.snapshot = NOTHING;
    /**
     * The client has a view of the post (a read or a tap). False again
     * once the client has forgotten the post (evicted it past
     * `maxPosts`), so that it is read again.
     */
    this.known = false;
    /**
     * The client has given a view of the post at some time: from then on
     * the post shows the client's view (or none), never a seed again.
     */
    this.hadView = false;

    this.subscribe = (listener) => this.store.subscribe(this, listener);
    this.getSnapshot = () => this.store.snapshot(this);
    this.toggle = () => this.store.tap(this, (client) => client.toggle(this.postId));
    this.setLiked = (liked) => this.store.tap(this, (client) => client.setLiked(this.postId, liked));
    this.reload = () => this.store.reload(this);
  }
}

/** The store of one client. */
class LikeStore {
  constructor(client) {
    this.client = client;
    /**
     * key → PostRecord, oldest first: the records a component has
     * subscribed to, listened to now or idle (see `prune`).
     */
    this.posts = new Map();
    /**
     * key → WeakRef of a record handed out while rendering that no
     * component has subscribed to yet. The components rendered with it,
     * or a feed page, hold it until they subscribe; a render React threw
     * away, or one on the server, leaves it to be collected.
     */
    this.rendered = new Map();
    /** Removes a collected record's `rendered` entry. */
    this.collected = new FinalizationRegistry((key) => {
      if (this.rendered.get(key)?.deref() === undefined) this.rendered.delete(key);
    });
    /**
     * Post key → the number of the latest read of it that is on its way.
     * A read's outcome (its error, or none) is applied to a post only if
     * it is still the post's latest read: an older read that ends after
     * a newer one never overwrites what the newer one said.
     */
    this.reading = new Map();
    /** Numbers the reads, in the order they are sent. */
    this.reads = 0;
    /** Post ids to read in the next batch (`load`). */
    this.queued = new Map();
    /** Feed reads on their way, by the feed's key: one promise for the same page. */
    this.pages = new Map();
    /** A `prune` is queued. */
    this.pruning = false;
  }

  /**
   * The record of a post, made on first use. Touches nothing of the client.
   * Never drops one while anything holds it: a record handed out while
   * rendering (to a page, then to its buttons) must be the one they all
   * subscribe to.
   */
  record(postId) {
    if (!this.client) return NO_POST;
    const key = keyOf(postId);
    let record = this.find(key);
    if (!record) {
      record = new PostRecord(this, postId);
      this.rendered.set(key, new WeakRef(record));
      this.collected.register(record, key);
    }
    return record;
  }

  /** The record of a post key, if the store has one. */
  find(key) {
    return this.posts.get(key) ?? this.rendered.get(key)?.deref();
  }

  /**
   * A component subscribes to `record`: the store holds it from now on,
   * until `prune` drops it. (A record `prune` dropped while a render not
   * yet committed held it comes back, unless another took its post.)
   */
  hold(record) {
    if (this.posts.get(record.key) === record) return;
    if (this.rendered.get(record.key)?.deref() === record) this.rendered.delete(record.key);
    if (!this.find(record.key)) this.posts.set(record.key, record);
  }

  /**
   * A record lost its last listener: prunes once the commit doing it has
   * run all its effects, so that the records its new components were
   * rendered with are subscribed to by then, and kept.
   */
  release() {
    if (this.pruning || this.posts.size <= MAX_IDLE) return;
    this.pruning = true;
    queueMicrotask(() => {
      this.pruning = false;
      this.prune();
    });
  }

  /** Drops the oldest records no component listens to, past MAX_IDLE records. */
  prune() {
    let idle = this.posts.size - MAX_IDLE;
    if (idle <= 0) return;
    for (const [key, record] of this.posts) {
      if (idle <= 0) break;
      if (record.listeners.size === 0) {
        this.posts.delete(key);
        idle -= 1;
      }
    }
  }

  /** Stores `view` unless it holds the same data; says whether it changed. */
  keep(record, view) {
    if (view !== undefined) record.hadView = true;
    if (same(record.snapshot.view, view)) return false;
    record.snapshot = { ...record.snapshot, view };
    return true;
  }

  /** Sets the record's read error; says whether it changed. */
  fail(record, error) {
    if (record.snapshot.error === error) return false;
    record.snapshot = { ...record.snapshot, error };
    return true;
  }

  /**
   * Takes what `client.view()` answers for the post: its view, or
   * `undefined` while the client has not read it (subscribed to or not)
   * or has forgotten it since (evicted), which `load` then reads again.
   */
  adopt(record) {
    const view = this.client.view(record.postId);
    record.known = view !== undefined;
    return this.keep(record, view);
  }

  notify(record) {
    for (const listener of [...record.listeners]) listener();
  }

  /** `getSnapshot`: subscribed records are kept current by events; others read the client. */
  snapshot(record) {
    if (!record.stop && this.client) this.adopt(record);
    return record.snapshot;
  }

  subscribe(record, listener) {
    this.hold(record);
    record.listeners.add(listener);
    if (!record.stop && this.client) {
      this.adopt(record);
      record.stop = this.client.subscribe(record.postId, {
        onChange: (view) => {
          record.known = true;
          if (this.keep(record, view)) this.notify(record);
        },
        onFailure: (failure) => {
          record.snapshot = { ...record.snapshot, failure };
          this.notify(record);
        },
      });
      // A change between the render and now has no event left to tell it.
      if (this.adopt(record)) this.notify(record);
    }
    return () => {
      if (!record.listeners.delete(listener) || record.listeners.size > 0) return;
      const stop = record.stop;
      record.stop = null;
      stop?.();
      this.release();
    };
  }

  /** A tap through the hooks: clears the post's failure, then taps. */
  tap(record, tap) {
    if (!this.client) return undefined;
    const hadFailure = record.snapshot.failure !== null;
    if (hadFailure) record.snapshot = { ...record.snapshot, failure: null };
    let view;
    try {
      view = tap(this.client);
    } finally {
      // The client told subscribers already; this covers a post nobody
      // listens to yet, and a cleared failure on an unchanged view.
      let changed = false;
      if (view !== undefined) {
        record.known = true;
        changed = this.keep(record, view);
      }
      if (changed || hadFailure) this.notify(record);
    }
    return view;
  }

  /**
   * Reads the posts the store does not know yet, batched: every post
   * asked for in one task goes out in one `refreshMany`. Posts already
   * being read (a feed's page) are left out.
   */
  load(record) {
    if (!this.client || record.known || this.reading.has(record.key)) return;
    const first = this.queued.size === 0;
    this.queued.set(record.key, record);
    if (first) queueMicrotask(() => this.flush());
  }

  flush() {
    const ids = [];
    for (const [key, record] of this.queued) {
      if (!record.known && !this.reading.has(key)) ids.push(record.postId);
    }
    this.queued.clear();
    // A failure is the records' `error` (see `read`).
    if (ids.length > 0) this.read(ids).catch(noop);
  }

  /** `useLike`'s `reload()`: reads the post again; the outcome lands in the record. */
  reload(record) {
    if (!this.client) return Promise.resolve();
    return this.read([record.postId]).then(noop, noop);
  }

  /**
   * One `refreshMany` for `ids`; the same page asked again while it is out
   * shares it. Each post it covers has `error` null while it is out, and
   * the read's error after it failed, until a read of it succeeds. A post
   * the answer leaves out (the server does not have it) gets a
   * `post_not_found` error. Of overlapping reads of a post (a page's and
   * the post's own `reload()`), the one sent last decides its `error`,
   * whichever ends first.
   */
  read(ids) {
    const page = ids.map(keyOf).join(",");
    const out = this.pages.get(page);
    if (out) return out;
    const keys = [...new Set(ids.map(keyOf))];
    const number = ++this.reads;
    for (const key of keys) this.reading.set(key, number);
    /** Ends the read: the posts it is still the latest read of. */
    const done = () => {
      this.pages.delete(page);
      const latest = keys.filter((key) => this.reading.get(key) === number);
      for (const key of latest) this.reading.delete(key);
      return latest;
    };
    const setError = (latest, error) => {
      for (const key of latest) {
        const record = this.find(key);
        if (record && this.fail(record, error)) this.notify(record);
      }
    };
    let asked;
    try {
      asked = this.client.refreshMany(ids);
    } catch (error) {
      // A bad id throws before anything is sent.
      asked = Promise.reject(error);
    }
    setError(keys, null);
    const promise = asked.then(
      (views) => {
        const latest = new Set(done());
        const found = new Map(views.map((view) => [keyOf(view.postId), view]));
        for (const key of keys) {
          const record = this.find(key);
          if (!record) continue;
          const view = found.get(key);
          let changed = latest.has(key) && this.fail(record, view ? null : notFound(key));
          // A read that changed nothing sends no event, and the posts it
          // found are known now: show them.
          if (view && !record.known) {
            record.known = true;
            changed = this.keep(record, this.client.view(record.postId) ?? view) || changed;
          }
          if (changed) this.notify(record);
        }
        return views;
      },
      (error) => {
        setError(done(), error);
        throw error;
      },
    );
    this.pages.set(page, promise);
    return promise;
  }
}

/** One store per client, so every provider of the same client shares it. */
const stores = new WeakMap();
/** The store of "no client yet": every hook shows nothing and taps do nothing. */
const EMPTY_STORE = new LikeStore(null);

function storeOf(client) {
  if (client == null) return EMPTY_STORE;
  let store = stores.get(client);
  if (!store) {
    store = new LikeStore(client);
    stores.set(client, store);
  }
  return store;
}

const StoreContext = createContext(null);
/** The nearest provider's seeds (`initialViews`). */
const SeedContext = createContext(NO_SEEDS);

/**
 * Makes `client` (a likekit-wasm `LikeClient`) the one the hooks below it
 * use. `client` may be null or undefined — on the server, or before the
 * `.wasm` has loaded — and the hooks then show no view and taps do nothing.
 * `initialViews` (optional) are views the app read from the server, keyed
 * by post id, each as the server answers it: a post shows its own (in the
 * server's HTML too) until the client has a view of the post.
 */
export function LikeKitProvider({ client, initialViews, children }) {
  const seeds = useShownSeeds(initialViews, client);
  useRetryWhenOnline(client);
  return createElement(
    StoreContext.Provider,
    { value: storeOf(client) },
    createElement(SeedContext.Provider, { value: seeds }, children),
  );
}

/**
 * Sends `client`'s waiting retries at once when the browser says the
 * network is back (the window's `online` event): a tap kept while
 * offline, or one in its retry backoff, does not wait out the rest of its
 * delay (a server's `Retry-After` is kept). Nothing on the server.
 */
function useRetryWhenOnline(client) {
  useEffect(() => {
    if (!client || typeof window === "undefined" || typeof client.retryNow !== "function") return undefined;
    const online = () => {
      try {
        client.retryNow();
      } catch {
        // A client freed meanwhile (a viewer switch): nothing to retry.
      }
    };
    window.addEventListener("online", online);
    return () => window.removeEventListener("online", online);
  }, [client]);
}

function useStore() {
  const store = useContext(StoreContext);
  if (!store) throw new Error("likekit-react: useLike and useLikes need a <LikeKitProvider client={…}> above them");
  return store;
}

/**
 * The client of the nearest `LikeKitProvider` (null while it has none);
 * throws, as the other hooks do, without a provider above.
 */
export function useLikeClient() {
  return useStore().client;
}

const serverSnapshot = () => NOTHING;

/**
 * The like button of one post: `{ view, failure, error, toggle, setLiked, reload }`.
 *
 * `view` is the client's `PostView` (undefined until the client knows the
 * post, or after it forgot it; the hook then reads it, batched with every
 * other post mounted in the same task) and keeps its identity until the
 * post changes. `error` is the `LikeError` of the latest read of the post
 * if it failed (this hook's or a `useLikes` page's, the one sent last
 * when they overlap; `post_not_found` when the server does not have the
 * post), null while a read is out and after one that succeeded — or the
 * plain `Error` the package threw, without `code`, when the client could
 * not be called at all (freed); `reload()` reads the post again, and
 * so does the next mount while the client does not know it. `failure` is
 * the latest "your like didn't save" for the post, until the next tap
 * through `toggle` or `setLiked`. Both taps return the new view and the
 * component shows it in the same task.
 */
export function useLike(postId) {
  const store = useStore();
  const seeds = useContext(SeedContext);
  const record = postId == null ? NO_POST : store.record(postId);
  const seed = postId == null ? undefined : seeds.get(keyOf(postId));
  const source = useMemo(() => (seed ? new Seeded(record, seed) : record), [record, seed]);
  const snapshot = useSyncExternalStore(source.subscribe, source.getSnapshot, source.getServerSnapshot ?? serverSnapshot);
  useEffect(() => {
    if (record !== NO_POST) store.load(record);
  }, [store, record]);
  return useMemo(
    () => ({
      view: snapshot.view,
      seeded: seed !== undefined && snapshot.view === seed,
      failure: snapshot.failure,
      error: snapshot.error,
      toggle: source.toggle,
      setLiked: source.setLiked,
      reload: record.reload,
    }),
    [snapshot, source, record, seed],
  );
}

/** What `useLikes` shows on the server, per feed length. */
const serverFeeds = new Map();

function serverFeed(length) {
  let feed = serverFeeds.get(length);
  if (!feed) {
    feed = Object.freeze({
      views: Object.freeze(Array.from({ length }, () => undefined)),
      refreshing: false,
      error: null,
    });
    if (serverFeeds.size < 64) serverFeeds.set(length, feed);
  }
  return feed;
}

/** A feed page: its posts' records and the state of its read. */
class Feed {
  constructor(store, postIds, seeds) {
    this.store = store;
    this.records = postIds.map((id) => store.record(id));
    this.postIds = postIds;
    /** The provider's seed of each post, if it has one. */
    this.seeds = postIds.map((id) => seeds.get(keyOf(id)));
    this.listeners = new Set();
    this.refreshing = false;
    this.error = null;
    /**
     * The component has read `views`: from then on a post's change makes
     * a new snapshot, and a render. Until then only the read's state does.
     */
    this.watching = false;
    /** `{ views, refreshing, error }`; `views` null until it is read. */
    this.state = null;
    const server = this.seeds.some((seed) => seed !== undefined)
      ? Object.freeze({ views: Object.freeze([...this.seeds]), refreshing: false, error: null })
      : serverFeed(postIds.length);

    this.subscribe = (listener) => {
      const stops = this.records.map((record) => record.subscribe(listener));
      this.listeners.add(listener);
      return () => {
        this.listeners.delete(listener);
        for (const stop of stops) stop();
      };
    };
    this.getSnapshot = () => {
      const last = this.state;
      if (last && last.refreshing === this.refreshing && last.error === this.error) {
        if (!this.watching || this.views(last.views) === last.views) return last;
      }
      const views = this.watching ? this.views(last?.views ?? null) : null;
      this.state = { views, refreshing: this.refreshing, error: this.error };
      return this.state;
    };
    this.getServerSnapshot = () => server;
    this.refresh = () => {
      if (!store.client || this.postIds.length === 0) return Promise.resolve([]);
      this.set(true, this.error);
      return store.read(this.postIds).then(
        (views) => {
          this.set(false, null);
          return views;
        },
        (error) => {
          this.set(false, error);
          throw error;
        },
      );
    };
  }

  /**
   * The posts' views (a post's seed while the client has never had a view
   * of it, as `useLike` shows it): `previous` while they are all the same
   * objects.
   */
  views(previous) {
    const views = this.records.map((record, i) => {
      const view = record.getSnapshot().view;
      return view === undefined && !record.hadView ? this.seeds[i] : view;
    });
    if (previous && views.every((view, i) => view === previous[i])) return previous;
    return views;
  }

  /**
   * What `useLikes` gives for `state`. `views` is read on demand: the
   * first read makes the component follow its posts' changes.
   */
  result(state) {
    const feed = this;
    return {
      get views() {
        if (state.views === null) {
          feed.watching = true;
          // Kept in the snapshot, so the next `getSnapshot` sees no change.
          state.views = feed.views(null);
        }
        return state.views;
      },
      refreshing: state.refreshing,
      error: state.error,
      refresh: this.refresh,
    };
  }

  set(refreshing, error) {
    if (this.refreshing === refreshing && this.error === error) return;
    this.refreshing = refreshing;
    this.error = error;
    for (const listener of [...this.listeners]) listener();
  }
}

/**
 * A feed page: `{ views, refreshing, error, refresh }` for `postIds`, read
 * in one `refreshMany` when the page mounts and whenever its ids change
 * (and again on `refresh()`). `views[i]` is post `postIds[i]`'s view, the
 * same object `useLike` gives for it; the array keeps its identity until
 * one of them changes. `error` is the last read's error, if it failed.
 * The component re-renders when `refreshing` or `error` changes, and when
 * a post changes only if it has read `views`: a page that leaves the
 * posts to their buttons is not re-rendered by each tap.
 */
export function useLikes(postIds) {
  const store = useStore();
  const seeds = useContext(SeedContext);
  const ids = Array.from(postIds ?? []);
  const page = ids.map(keyOf).join(",");
  // A new feed only when the ids (or the provider's seeds) change, not on
  // every new array.
  const feed = useMemo(() => new Feed(store, ids, seeds), [store, page, seeds]);
  const state = useSyncExternalStore(feed.subscribe, feed.getSnapshot, feed.getServerSnapshot);
  useEffect(() => {
    feed.refresh().catch(() => {});
  }, [feed]);
  return useMemo(() => feed.result(state), [state, feed]);
}
