// A client for the LikeKit mock server's admin API: the routes under
// `/admin`, on only when the server runs with `--admin-key`. It follows the
// server's OpenAPI document (`GET /openapi.json`): one table of operations,
// the bodies' exact field names, and answers checked before they are
// returned. An ES module with no dependencies: it needs the global `fetch`
// and `AbortSignal.timeout` (Node 18 and newer, browsers). Shipped in the
// web package as `likekit-wasm/testing`; the types are in `testing.d.ts`.
//
//   import { LikeKitAdmin } from "likekit-wasm/testing";
//   const admin = new LikeKitAdmin("http://127.0.0.1:8080", "dev");
//   await admin.createUser(7, "Ana");
//   await admin.createPost(42);
//   const token = await admin.mintToken(7);
//   // The train: every call takes 2 s.
//   await admin.setFaults([{ route: "*", latency_ms: 2000 }]);
//
// Tests that share one server add their own rules, tagged, and remove them
// by tag, leaving other tests' rules and their counters as they are:
//
//   await admin.addFaults([{ route: "like", user: 7, post: 42, fail_next: 1, tag: "checkout-7" }]);
//   // … the test …
//   const mine = await admin.getFaults({ tag: "checkout-7" }); // its rules, with what each used up
//   const faulted = await admin.requests({ fault_tag: "checkout-7" }); // what they did
//   await admin.clearFaults({ tag: "checkout-7" });
//   await admin.clearRequests({ user: 7 });
//
// A test that cannot wait for the app itself (a UI test driving another
// page or process) waits on the server until the app's requests are there
// and answered:
//
//   // … the app under test likes post 42 …
//   const journal = await admin.waitForRequests({ route: "like", post: 42 }, 1, { timeoutMs: 10_000 });
//   assert.equal(journal.met, true, "an answered like within 10 s");
//
// A filter key given without a value (`{ tag: undefined }`,
// `{ user: null }`: a test's variable left unset) is a TypeError, never
// taken as no filter, which would read or remove every test's rules or
// entries; leave the key out to mean all.
//
// Answers are read tolerantly: a field this client does not know (one a
// newer server added) is ignored, while a known field of the wrong type or
// a required one missing is `unreadable`. What a test writes is checked as
// strictly as the server checks it: an unknown field in a rule, a filter or
// a seed is a TypeError, and `decodeSeed` refuses one too.
//
// Ids are numbers: whole numbers from 1 to Number.MAX_SAFE_INTEGER
// (2^53 − 1). The server takes ids up to 2^63 − 1, but ids above 2^53 − 1
// are out of scope for this test client: it refuses them (a TypeError for
// an argument, an `unreadable` AdminError in an answer) rather than round
// them. The one 64-bit number it keeps exactly is a fault rule set's seed,
// which the server picks from the whole range: a BigInt when it does not
// fit a number.

/**
 * Every admin operation: operationId (as in `/openapi.json`) → HTTP method
 * and path template. Every call of {@link LikeKitAdmin} looks its method
 * and path up here.
 */
export const OPERATIONS = Object.freeze({
  create_user: Object.freeze({ method: "POST", path: "/admin/users" }),
  get_user: Object.freeze({ method: "GET", path: "/admin/users/{id}" }),
  create_post: Object.freeze({ method: "POST", path: "/admin/posts" }),
  get_post: Object.freeze({ method: "GET", path: "/admin/posts/{id}" }),
  set_friends: Object.freeze({ method: "PUT", path: "/admin/users/{id}/friends" }),
  mint_token: Object.freeze({ method: "POST", path: "/admin/tokens" }),
  set_faults: Object.freeze({ method: "PUT", path: "/admin/faults" }),
  add_faults: Object.freeze({ method: "POST", path: "/admin/faults" }),
  get_faults: Object.freeze({ method: "GET", path: "/admin/faults" }),
  clear_faults: Object.freeze({ method: "DELETE", path: "/admin/faults" }),
  requests: Object.freeze({ method: "GET", path: "/admin/requests" }),
  clear_requests: Object.freeze({ method: "DELETE", path: "/admin/requests" }),
  reset: Object.freeze({ method: "POST", path: "/admin/reset" }),
  seed: Object.freeze({ method: "POST", path: "/admin/seed" }),
});

/** The routes a fault rule (or a journal filter) names; `*` is every public route. */
export const FAULT_ROUTES = Object.freeze(["like", "unlike", "likes", "batch", "*"]);
/** The HTTP methods a fault rule may be limited to. */
export const FAULT_METHODS = Object.freeze(["GET", "POST", "DELETE"]);
/** When a fault rule acts: before the request is handled, or after. */
export const FAULT_PHASES = Object.freeze(["before", "after"]);
/** What a like or unlike did, as the request journal records it. */
export const WRITE_RESULTS = Object.freeze(["applied", "unchanged", "refused"]);
/** The `kind`s of a fault rule's `action`. */
export const FAULT_ACTION_KINDS = Object.freeze([
  "status",
  "drop",
  "reset",
  "hang",
  "truncate",
  "malformed",
  "slow_body",
  "oversized",
]);

/** The default timeout of one call, in milliseconds. */
const DEFAULT_TIMEOUT_MS = 30_000;
/** How long the server waits in `waitForRequests` by default, in milliseconds (as the server's own default). */
const DEFAULT_WAIT_MS = 5_000;

/**
 * An admin call that failed. `status` is the HTTP status when the server
 * answered (null when no answer came: `code` is then `no_answer`, as in
 * every language's admin client; the message says why); `code` and `message` come from the server's
 * `{"error": {"code", "message"}}` body. An answer that is not that body,
 * or a 2xx answer of the wrong shape, has the code `unreadable`. A message
 * the client writes itself starts with the call's method and path.
 */
export class AdminError extends Error {
  /**
   * @param {number | null} status
   * @param {string} code
   * @param {string} message
   * @param {{ cause?: unknown, operation?: string | null }} [options]
   */
  constructor(status, code, message, options = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AdminError";
    /** The HTTP status, or null when no answer came. */
    this.status = status;
    /** The server's error code, or `unreadable`, `no_answer`. */
    this.code = code;
    /** The operationId of the call that failed (null outside a call). */
    this.operation = options.operation ?? null;
  }
}

// ---------------------------------------------------------------- the client

/** A client for one server's admin API; every call sends the key in `X-Admin-Key`. */
export class LikeKitAdmin {
  /**
   * @param {string} baseUrl the server, e.g. `http://127.0.0.1:8080` (a trailing slash is fine)
   * @param {string} adminKey the server's `--admin-key`
   * @param {{ timeoutMs?: number }} [options] `timeoutMs`: how long one call may take (default 30 000)
   */
  constructor(baseUrl, adminKey, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    if (typeof baseUrl !== "string" || !/^https?:\/\//.test(baseUrl)) {
      throw new TypeError(`baseUrl must be an http(s) URL; got ${describe(baseUrl)}`);
    }
    if (typeof adminKey !== "string") {
      throw new TypeError(`adminKey must be a string; got ${describe(adminKey)}`);
    }
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) {
      throw new TypeError(
        `timeoutMs must be a whole number of milliseconds above 0; got ${describe(timeoutMs)}`,
      );
    }
    /** The server's base URL, without a trailing slash. */
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    /** The admin key sent with every call. */
    this.adminKey = adminKey;
    /** How long one call may take, in milliseconds. */
    this.timeoutMs = timeoutMs;
  }

  /** The table every call goes through (the module's {@link OPERATIONS}). */
  static get OPERATIONS() {
    return OPERATIONS;
  }

  /**
   * `create_user`: creates the user, or renames an existing one.
   * @param {number} id
   * @param {string} name
   * @returns {Promise<"created" | "existed">}
   */
  async createUser(id, name) {
    if (typeof name !== "string") throw new TypeError(`name must be a string; got ${describe(name)}`);
    const body = { id: checkId(id, "id"), name };
    return this.#call("create_user", { body, decode: createdAs(NEW_USER) });
  }

  /**
   * `create_post`: creates the post; an existing one is left as it is.
   * @param {number} id
   * @returns {Promise<"created" | "existed">}
   */
  async createPost(id) {
    const body = { id: checkId(id, "id") };
    return this.#call("create_post", { body, decode: createdAs(NEW_POST) });
  }

  /**
   * `get_user`: the user as stored, with its own (directed) friend list in
   * ascending order of id. An unknown user rejects with `user_not_found`.
   * @param {number} id
   */
  async getUser(id) {
    return this.#call("get_user", { params: { id: checkId(id, "id") }, decode: decodeStoredUser });
  }

  /**
   * `get_post`: the post as stored (count, version, most recent likers
   * newest first), read past the server's view cache: a count checked here
   * right after a client's call is the committed one. An unknown post
   * rejects with `post_not_found`.
   * @param {number} id
   */
  async getPost(id) {
    return this.#call("get_post", { params: { id: checkId(id, "id") }, decode: decodeStoredPost });
  }

  /**
   * `set_friends`: replaces the user's own (directed) friend list.
   * @param {number} user
   * @param {number[]} friends
   * @returns {Promise<void>}
   */
  async setFriends(user, friends) {
    if (!Array.isArray(friends))
      throw new TypeError(`friends must be an array of ids; got ${describe(friends)}`);
    const body = { friends: friends.map((friend, i) => checkId(friend, `friends[${i}]`)) };
    const params = { id: checkId(user, "user") };
    await this.#call("set_friends", { params, body, decode: (json) => FRIENDS.decode(json) });
  }

  /**
   * `mint_token`: a sign-in token for `user`, valid for `ttlSecs` seconds
   * from `validFromSecs` seconds from now. Below zero the token was issued
   * then: `mintToken(user, 3600, -7200)` expired an hour ago, for a test of
   * a client's token renewal with no wait; above zero it is refused
   * (`invalid_token`) until then.
   * @param {number} user
   * @param {number} [ttlSecs] 1 to 31 536 000 (one year); default 3600
   * @param {number} [validFromSecs] −31 536 000 to 31 536 000 (a year either way); default 0, now
   * @returns {Promise<string>}
   */
  async mintToken(user, ttlSecs = 3600, validFromSecs = 0) {
    const body = {
      user_id: checkId(user, "user"),
      ttl_secs: checkWhole(ttlSecs, "ttlSecs"),
      valid_from_secs: checkSigned(validFromSecs, "validFromSecs"),
    };
    return this.#call("mint_token", { body, decode: decodeToken });
  }

  /**
   * `set_faults`: replaces every fault rule. Takes the rules and, as an
   * option, the seed (`setFaults(rules, { seed: 42 })`), or a whole
   * document `{ seed, rules }` (an answer of `getFaults`, say); returns the
   * rules now in force, with the seed their draws come from (the given one,
   * or one the server picked). Every rule's counters start over, other
   * tests' too: tests that share a server use {@link LikeKitAdmin#addFaults}.
   * @param {object[] | { seed?: number | bigint, rules: object[] }} rulesOrDocument
   * @param {{ seed?: number | bigint }} [options] the seed, with a list of rules only
   */
  async setFaults(rulesOrDocument, options = {}) {
    const { seed } = encodeStruct(options, "setFaults options", SET_FAULTS_OPTIONS);
    let document = rulesOrDocument;
    if (Array.isArray(rulesOrDocument)) {
      document = seed === undefined ? { rules: rulesOrDocument } : { seed, rules: rulesOrDocument };
    } else if (seed !== undefined) {
      throw new TypeError("setFaults: give the seed in the document { seed, rules } or as an option, not both");
    }
    const body = encodeFaultRules(document);
    return this.#call("set_faults", { body, decode: decodeFaultRules });
  }

  /**
   * `add_faults`: adds `rules` after the rules in force, which keep their
   * counters and the seed; returns every rule now in force, `rules` last,
   * with the seed and `state`. Tag them (`tag`) to remove them with
   * `clearFaults({ tag })`. When the rules in force and `rules` would be
   * more than 256, nothing is added: `too_many_rules` (409).
   * @param {object[]} rules
   */
  async addFaults(rules) {
    const body = { rules: encodeValue(rules, T.arrayOf(T.struct(FAULT_RULE)), "rules") };
    return this.#call("add_faults", { body, decode: decodeFaultRules });
  }

  /**
   * `get_faults`: the rules in force, their seed and what each has used up
   * (`state`); with a `tag`, only the rules tagged `tag` and their state, in
   * their order (none when no rule has it), so a test sharing the server
   * reads its own. A tag that is not 1 to 64 visible ASCII characters is
   * `bad_query`; a `tag` of undefined or null is a TypeError (leave it out
   * to read every rule).
   * @param {{ tag?: string }} [filter]
   */
  async getFaults(filter = {}) {
    return this.#call("get_faults", { query: encodeFaultFilter(filter), decode: decodeFaultRules });
  }

  /**
   * `clear_faults`: without a `tag`, removes every fault rule (other tests'
   * too) and the seed; with one, only the rules tagged `tag` (none when no
   * rule has it): the others keep their counters and the seed. Returns the
   * rules left in force. A tag that is not 1 to 64 visible ASCII characters
   * is `bad_query`; a `tag` of undefined or null is a TypeError, so a test
   * whose tag is unset never removes every test's rules.
   * @param {{ tag?: string }} [filter]
   */
  async clearFaults(filter = {}) {
    return this.#call("clear_faults", { query: encodeFaultFilter(filter), decode: decodeFaultRules });
  }

  /**
   * `requests`: the request journal's entries that `filter` selects, oldest
   * first (every filter given must match; `{}` for all). `fault_tag`
   * selects the entries a rule with that tag acted on (or delayed): what a
   * test's own tagged rules did, on a server other tests share. A
   * `fault_tag` that is not 1 to 64 visible ASCII characters is `bad_query`;
   * a key given as undefined or null is a TypeError (leave it out instead).
   * {@link LikeKitAdmin#waitForRequests} waits on the server until the
   * requests are there and answered.
   * @param {{ route?: string, method?: string, post?: number, user?: number, since?: number, request_id?: string, fault_tag?: string }} [filter]
   */
  async requests(filter = {}) {
    return this.#call("requests", { query: encodeRequestFilter(filter), decode: decodeJournal });
  }

  /**
   * `requests` with `wait_for` and `timeout_ms`: the server holds the answer
   * until at least `count` entries match `filter` and none of them is in
   * flight (the journal's `met` is then true), or until `timeoutMs` has
   * passed (`met: false`, with the entries there were then). For a test that
   * cannot wait for the client itself, such as a UI test driving a page in
   * another process. `met` is also false at once for a `count` above the
   * journal's capacity, and when the server begins stopping. The call waits
   * for its answer `timeoutMs` longer than the client's own timeout. A
   * `count` of 0 or a `timeoutMs` above 60 000 is `bad_query`.
   * @param {{ route?: string, method?: string, post?: number, user?: number, since?: number, request_id?: string, fault_tag?: string }} filter
   * @param {number} count
   * @param {{ timeoutMs?: number }} [options] `timeoutMs`: how long the server waits at most (default 5 000)
   */
  async waitForRequests(filter, count, options = {}) {
    const { timeoutMs = DEFAULT_WAIT_MS } = encodeStruct(options, "waitForRequests options", WAIT_OPTIONS);
    const query = new URLSearchParams(encodeRequestFilter(filter));
    query.append("wait_for", String(checkWhole(count, "count")));
    query.append("timeout_ms", String(timeoutMs));
    return this.#call("requests", {
      query: query.toString(),
      decode: decodeJournal,
      timeoutMs: this.timeoutMs + timeoutMs,
    });
  }

  /**
   * `clear_requests`: removes the request journal's entries that `filter`
   * selects (the filters of {@link LikeKitAdmin#requests}), so a test
   * sharing the server removes only its own (`{ user: 7 }`, or
   * `{ fault_tag: "checkout-7" }` for those its tagged rules acted on);
   * without a filter (`{}`), empties the journal for every test. `seq` goes
   * on. A key given as undefined or null is a TypeError, so a test whose id
   * is unset never empties the journal for every test.
   * @param {{ route?: string, method?: string, post?: number, user?: number, since?: number, request_id?: string, fault_tag?: string }} [filter]
   */
  async clearRequests(filter = {}) {
    await this.#call("clear_requests", { query: encodeRequestFilter(filter), decode: decodeAck });
  }

  /** `reset`: drops every like; users, friends and posts stay. */
  async reset() {
    await this.#call("reset", { decode: decodeAck });
  }

  /**
   * `seed`: loads a seed document (users with names and friends, posts with
   * likers); loading the same one again changes nothing.
   * @param {{ users?: object[], posts?: object[] }} seed
   */
  async seed(seed) {
    await this.#call("seed", { body: encodeSeed(seed), decode: decodeAck });
  }

  /**
   * One call of the operation `operationId`; its method and path come from
   * OPERATIONS. Answers what `decode` makes of a 2xx answer's JSON and
   * status: every answer is checked, so one that is not the operation's (a
   * page from another server, say) is an `unreadable` AdminError rather
   * than a silent success.
   * `timeoutMs` is how long the call may take (the client's own unless a
   * wait needs longer).
   * @param {keyof typeof OPERATIONS} operationId
   * @param {{ params?: Record<string, unknown>, query?: string, body?: unknown, decode: (json: unknown, status: number) => any, timeoutMs?: number }} request
   * @returns {Promise<any>}
   */
  async #call(operationId, { params = {}, query = "", body, decode, timeoutMs = this.timeoutMs }) {
    const { method, path: template } = OPERATIONS[operationId];
    const path = template.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(String(params[name])));
    const url = this.baseUrl + path + (query ? `?${query}` : "");
    const headers = { "X-Admin-Key": this.adminKey };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const fail = (status, code, message, cause) =>
      new AdminError(status, code, `${method} ${path}: ${message}`, { cause, operation: operationId });

    let response;
    let text;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : stringifyJson(body),
        // The admin API has no redirects: one is never followed, so the
        // key goes to no other address (and a POST does not become a GET).
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (err) {
      if (err?.name === "TimeoutError") {
        throw fail(null, "no_answer", `no answer within ${timeoutMs} ms`, err);
      }
      const reason = err?.cause?.message ?? err?.message ?? String(err);
      throw fail(null, "no_answer", `no answer (${reason})`, err);
    }

    // A browser shows a redirect not followed as an opaque answer, status 0.
    if (response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400)) {
      const location = response.headers.get("Location");
      const leads = location ? `redirected to ${location}` : "redirected";
      throw fail(
        response.status || null,
        "unreadable",
        `${leads}, which is not followed (the admin API has no redirects, and the admin key goes to no other address): if the server is there, give that address as the URL`,
      );
    }
    if (!response.ok) {
      const error = errorBody(text);
      if (error) {
        throw new AdminError(response.status, error.code, error.message, { operation: operationId });
      }
      throw fail(response.status, "unreadable", clip(text));
    }
    try {
      return decode(parseJson(text), response.status);
    } catch (err) {
      const why = err instanceof AdminError ? err.message : `not JSON (${err.message})`;
      throw fail(response.status, "unreadable", `${why}: ${clip(text)}`, err);
    }
  }
}

/** `text`, cut to a length an error message can carry. */
function clip(text) {
  return text.length > 1000 ? `${text.slice(0, 1000)}… (${text.length} characters)` : text;
}

/** A decoder of a create's answer (`codec`: the body it sends back) that answers what it did. */
function createdAs(codec) {
  return (json, status) => {
    codec.decode(json);
    return status === 201 ? "created" : "existed";
  };
}

/** Checks `{"ok": true}`, the answer of `reset`, `clear_requests` and `seed`. */
function decodeAck(json) {
  const { ok } = decodeStruct(json, "Ack", { ok: { type: T.bool, required: true } }, false);
  if (ok !== true) throw new AdminError(null, "unreadable", "Ack.ok: false is not true");
}

/** `{"error": {"code", "message"}}`, or null for any other body. */
function errorBody(text) {
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  const error = body !== null && typeof body === "object" ? body.error : undefined;
  if (error === null || typeof error !== "object") return null;
  if (typeof error.code !== "string" || typeof error.message !== "string") return null;
  return { code: error.code, message: error.message };
}

function decodeToken(json) {
  const value = decodeStruct(json, "TokenResponse", { token: { type: T.string, required: true } }, false);
  return value.token;
}

/**
 * `filter`'s fields for a query. A known key given without a value
 * (undefined or null) is a TypeError: a test's unset variable must not
 * widen the filter to every rule or entry (`all` names what it would
 * select).
 */
function encodeFilter(filter, where, fields, all) {
  if (isObject(filter)) {
    for (const [key, value] of Object.entries(filter)) {
      if ((value === undefined || value === null) && Object.hasOwn(fields, key)) {
        throw new TypeError(
          `${where}.${key} is ${value}: a filter without a value would select ${all}; ` +
            `leave ${key} out for that, or give it a value`,
        );
      }
    }
  }
  return encodeStruct(filter, where, fields);
}

/** `tag=…` of `/admin/faults`' query, or "" without a tag. */
function encodeFaultFilter(filter) {
  return new URLSearchParams(encodeFilter(filter, "FaultFilter", FAULT_FILTER, "every rule")).toString();
}

function encodeRequestFilter(filter) {
  const value = encodeFilter(filter, "RequestFilter", REQUEST_FILTER, "every entry");
  const query = new URLSearchParams();
  for (const [key, field] of Object.entries(value)) query.append(key, String(field));
  return query.toString();
}

// ---------------------------------------------------------------- JSON

/**
 * `JSON.parse`, except that a whole number too large for a number
 * (beyond ±(2^53 − 1)) becomes a BigInt instead of being rounded.
 * @param {string} text
 * @returns {unknown}
 */
export function parseJson(text) {
  const WS = /[ \t\n\r]*/y;
  const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
  const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
  const LITERAL = /true|false|null/y;
  let at = 0;
  const fail = (what) => {
    throw new SyntaxError(`${what} at position ${at}`);
  };
  const skip = () => {
    WS.lastIndex = at;
    WS.exec(text);
    at = WS.lastIndex;
  };
  const token = (pattern) => {
    pattern.lastIndex = at;
    const match = pattern.exec(text);
    if (match) at = pattern.lastIndex;
    return match;
  };
  const value = () => {
    skip();
    const c = text[at];
    if (c === "{") {
      at++;
      const object = {};
      skip();
      if (text[at] === "}") {
        at++;
        return object;
      }
      for (;;) {
        skip();
        const key = token(STRING) ?? fail("expected a key");
        skip();
        if (text[at++] !== ":") fail("expected ':'");
        // Own property even for "__proto__", as JSON.parse makes it.
        Object.defineProperty(object, JSON.parse(key[0]), {
          value: value(),
          writable: true,
          enumerable: true,
          configurable: true,
        });
        skip();
        const next = text[at++];
        if (next === "}") return object;
        if (next !== ",") fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      at++;
      const array = [];
      skip();
      if (text[at] === "]") {
        at++;
        return array;
      }
      for (;;) {
        array.push(value());
        skip();
        const next = text[at++];
        if (next === "]") return array;
        if (next !== ",") fail("expected ',' or ']'");
      }
    }
    if (c === '"') return JSON.parse((token(STRING) ?? fail("bad string"))[0]);
    const number = token(NUMBER);
    if (number) {
      const n = Number(number[0]);
      const whole = number[1] === undefined && number[2] === undefined;
      return whole && !Number.isSafeInteger(n) ? BigInt(number[0]) : n;
    }
    const literal = token(LITERAL) ?? fail("unexpected character");
    return literal[0] === "true" ? true : literal[0] === "false" ? false : null;
  };
  const result = value();
  skip();
  if (at !== text.length) fail("unexpected text after the value");
  return result;
}

/**
 * `JSON.stringify`, except that a BigInt is written as the whole number it
 * holds. Undefined object fields are left out; a number that is not finite
 * is refused.
 * @param {unknown} value
 * @returns {string}
 */
export function stringifyJson(value) {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
    case "string":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`${value} is not a JSON number`);
      return JSON.stringify(value);
    case "bigint":
      return value.toString();
    case "object":
      if (Array.isArray(value)) return `[${value.map((item) => stringifyJson(item ?? null)).join(",")}]`;
      return `{${Object.entries(value)
        .filter(([, field]) => field !== undefined)
        .map(([key, field]) => `${JSON.stringify(key)}:${stringifyJson(field)}`)
        .join(",")}}`;
    default:
      throw new TypeError(`a ${typeof value} cannot be written as JSON`);
  }
}

// ---------------------------------------------------------------- the bodies

const U16_MAX = 0xffff;
const U32_MAX = 0xffff_ffff;
const U64_MAX = 2n ** 64n - 1n;

/**
 * The wire types of the bodies' fields. `check(value)` answers null when
 * `value` is one, or what is wrong.
 */
const T = {
  string: { check: (v) => (typeof v === "string" ? null : "not a string") },
  bool: { check: (v) => (typeof v === "boolean" ? null : "not a boolean") },
  number: { check: (v) => (typeof v === "number" && Number.isFinite(v) ? null : "not a number") },
  id: { check: checkIdValue },
  u16: { check: (v) => wholeIn(v, U16_MAX) },
  u32: { check: (v) => wholeIn(v, U32_MAX) },
  u64: { check: (v) => wholeIn(v, Number.MAX_SAFE_INTEGER) },
  /** A u64 kept exactly: a number when it fits, else a BigInt. */
  u64Exact: {
    check: (v) =>
      typeof v === "bigint"
        ? v >= 0n && v <= U64_MAX
          ? null
          : "not a whole number from 0 to 2^64 − 1"
        : wholeIn(v, Number.MAX_SAFE_INTEGER),
  },
  json: { check: () => null },
  enumOf: (values) => ({
    check: (v) =>
      values.includes(v) ? null : `not one of ${values.map((x) => JSON.stringify(x)).join(", ")}`,
  }),
  arrayOf: (item) => ({ array: item }),
  struct: (codec) => ({ codec }),
};

function wholeIn(v, max) {
  if (typeof v === "bigint") return "out of range";
  return Number.isSafeInteger(v) && v >= 0 && v <= max ? null : `not a whole number from 0 to ${max}`;
}

function checkIdValue(v) {
  if (typeof v === "bigint" && v > 0n) {
    return "above 2^53 − 1: ids that large are out of scope for this client";
  }
  return Number.isSafeInteger(v) && v >= 1 ? null : "not an id (a whole number from 1 to 2^53 − 1)";
}

function checkId(v, what) {
  const wrong = checkIdValue(v);
  if (wrong) throw new TypeError(`${what}: ${describe(v)} is ${wrong}`);
  return v;
}

function checkWhole(v, what) {
  const wrong = wholeIn(v, Number.MAX_SAFE_INTEGER);
  if (wrong) throw new TypeError(`${what}: ${describe(v)} is ${wrong}`);
  return v;
}

function checkSigned(v, what) {
  if (!Number.isSafeInteger(v)) {
    throw new TypeError(`${what}: ${describe(v)} is not a whole number from −(2^53 − 1) to 2^53 − 1`);
  }
  return v;
}

function describe(v) {
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean" || v == null) return String(v);
  return Array.isArray(v) ? "an array" : `a ${typeof v}`;
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

// A struct's fields: name → { type, required, fill, nullable, skipNull,
// skip }. `required`: no default. `fill`: what a missing field decodes to
// (its default, or null for an Option the server always writes).
// `nullable`: an Option (null is None). `skipNull`: None is left out when
// encoding, and `skip(value)` says which other values are (the server
// types' `skip_serializing_if`).

function decodeStruct(json, where, fields, denyUnknown) {
  const wrong = (what) => new AdminError(null, "unreadable", `${where}: ${what}`);
  if (!isObject(json)) throw wrong(`expected an object, got ${describe(json)}`);
  if (denyUnknown) {
    for (const key of Object.keys(json)) {
      if (!Object.hasOwn(fields, key)) throw wrong(`unknown field ${JSON.stringify(key)}`);
    }
  }
  const out = {};
  for (const [key, field] of Object.entries(fields)) {
    const raw = Object.hasOwn(json, key) ? json[key] : undefined;
    if (raw === undefined || (raw === null && field.nullable)) {
      if (field.required) throw wrong(`missing field ${JSON.stringify(key)}`);
      if (Object.hasOwn(field, "fill"))
        out[key] = typeof field.fill === "function" ? field.fill() : field.fill;
      continue;
    }
    out[key] = decodeValue(raw, field.type, `${where}.${key}`);
  }
  return out;
}

function decodeValue(raw, type, where) {
  if (type.array) {
    if (!Array.isArray(raw))
      throw new AdminError(null, "unreadable", `${where}: expected an array, got ${describe(raw)}`);
    return raw.map((item, i) => decodeValue(item, type.array, `${where}[${i}]`));
  }
  if (type.codec) return type.codec.decode(raw, where);
  const wrong = type.check(raw);
  if (wrong) throw new AdminError(null, "unreadable", `${where}: ${describe(raw)} is ${wrong}`);
  return raw;
}

function encodeStruct(value, where, fields) {
  if (!isObject(value)) throw new TypeError(`${where}: expected an object, got ${describe(value)}`);
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(fields, key)) throw new TypeError(`${where}: unknown field ${JSON.stringify(key)}`);
  }
  const out = {};
  for (const [key, field] of Object.entries(fields)) {
    const v = value[key];
    if (v === undefined || (v === null && field.skipNull)) {
      if (field.required) throw new TypeError(`${where}: missing field ${JSON.stringify(key)}`);
      continue;
    }
    if (v === null && field.nullable) {
      out[key] = null;
      continue;
    }
    const encoded = encodeValue(v, field.type, `${where}.${key}`);
    if (field.skip?.(encoded)) continue;
    out[key] = encoded;
  }
  return out;
}

function encodeValue(v, type, where) {
  if (type.array) {
    if (!Array.isArray(v)) throw new TypeError(`${where}: expected an array, got ${describe(v)}`);
    return v.map((item, i) => encodeValue(item, type.array, `${where}[${i}]`));
  }
  if (type.codec) return type.codec.encode(v, where);
  const wrong = type.check(v);
  if (wrong) throw new TypeError(`${where}: ${describe(v)} is ${wrong}`);
  return v;
}

/** Decoder and encoder of one struct. */
function structCodec(name, fields, { denyUnknown = true } = {}) {
  return {
    decode: (json, where = name) => decodeStruct(json, where, fields, denyUnknown),
    encode: (value, where = name) => encodeStruct(value, where, fields),
  };
}

const option = (type) => ({ type, nullable: true, skipNull: true });
const always = (type) => ({ type, nullable: true, fill: null });
const emptyList = () => [];

/** FaultAction's fields, by kind (besides `kind`). */
const ACTION_FIELDS = {
  status: {
    status: { type: T.u16, required: true },
    body: option(T.json),
    retry_after_secs: option(T.u64),
  },
  drop: {},
  reset: {},
  hang: {},
  truncate: { bytes: { type: T.u32, required: true } },
  malformed: {},
  slow_body: { bytes: { type: T.u32, required: true }, interval_ms: { type: T.u64, required: true } },
  oversized: { bytes: { type: T.u64, required: true } },
};

const FAULT_ACTION = {
  decode(json, where = "FaultAction") {
    if (!isObject(json))
      throw new AdminError(null, "unreadable", `${where}: expected an object, got ${describe(json)}`);
    const kind = decodeValue(json.kind, T.enumOf(FAULT_ACTION_KINDS), `${where}.kind`);
    const fields = { kind: { type: T.string, required: true }, ...ACTION_FIELDS[kind] };
    return decodeStruct(json, where, fields, false);
  },
  encode(value, where = "FaultAction") {
    if (!isObject(value)) throw new TypeError(`${where}: expected an object, got ${describe(value)}`);
    const kind = encodeValue(value.kind, T.enumOf(FAULT_ACTION_KINDS), `${where}.kind`);
    const fields = { kind: { type: T.string, required: true }, ...ACTION_FIELDS[kind] };
    return encodeStruct(value, where, fields);
  },
};

// Rules, actions and their state are answers as well as what a test
// writes: decoding ignores fields a newer server adds; encoding refuses a
// field the server does not take.
const FAULT_RULE = structCodec(
  "FaultRule",
  {
    route: { type: T.enumOf(FAULT_ROUTES), required: true },
    method: option(T.enumOf(FAULT_METHODS)),
    post: option(T.id),
    user: option(T.id),
    nth: option(T.u64),
    every: option(T.u64),
    first: option(T.u64),
    after: option(T.u64),
    probability: { type: T.number, fill: 1, skip: (v) => v === 1 },
    phase: { type: T.enumOf(FAULT_PHASES), fill: "before", skip: (v) => v === "before" },
    latency_ms: { type: T.u64, fill: 0 },
    jitter_ms: { type: T.u64, fill: 0 },
    error_rate: { type: T.number, fill: 0 },
    status: { type: T.u16, fill: 503 },
    drop_rate: { type: T.number, fill: 0 },
    fail_next: { type: T.u64, fill: 0 },
    action: option(T.struct(FAULT_ACTION)),
    tag: option(T.string),
  },
  { denyUnknown: false },
);

// What a rule has used up: read-only, and new counters may come.
const RULE_STATE = structCodec(
  "RuleState",
  {
    matched: { type: T.u64, required: true },
    fired: { type: T.u64, required: true },
    acted: { type: T.u64, required: true },
    fail_next_left: option(T.u64),
    first_left: option(T.u64),
  },
  { denyUnknown: false },
);

const FAULT_RULES = structCodec(
  "FaultRules",
  {
    seed: option(T.u64Exact),
    rules: { type: T.arrayOf(T.struct(FAULT_RULE)), required: true },
    // Read-only: the server ignores it in a PUT (an answer can be sent back).
    state: { type: T.arrayOf(T.struct(RULE_STATE)), skip: (v) => v.length === 0 },
  },
  { denyUnknown: false },
);

// A seed is only ever written by a test: like the server, its decoder
// refuses a field it does not have (a misspelt `freinds`).
const SEED_USER = structCodec("SeedUser", {
  id: { type: T.id, required: true },
  name: { type: T.string, required: true },
  friends: { type: T.arrayOf(T.id), fill: emptyList },
});

const SEED_POST = structCodec("SeedPost", {
  id: { type: T.id, required: true },
  likers: { type: T.arrayOf(T.id), fill: emptyList },
});

const SEED = structCodec("Seed", {
  users: { type: T.arrayOf(T.struct(SEED_USER)), fill: emptyList },
  posts: { type: T.arrayOf(T.struct(SEED_POST)), fill: emptyList },
});

// What `create_user`, `create_post` and `set_friends` send back: the body
// they were sent. Answers only, so their decoders ignore unknown fields.
const NEW_USER = structCodec(
  "NewUser",
  { id: { type: T.id, required: true }, name: { type: T.string, required: true } },
  { denyUnknown: false },
);
const NEW_POST = structCodec("NewPost", { id: { type: T.id, required: true } }, { denyUnknown: false });
const FRIENDS = structCodec(
  "Friends",
  { friends: { type: T.arrayOf(T.id), required: true } },
  { denyUnknown: false },
);

// What the store holds: answers only, read-only, so their decoders ignore
// unknown fields (as the journal's do).
const STORED_USER = structCodec(
  "StoredUser",
  {
    id: { type: T.id, required: true },
    name: { type: T.string, required: true },
    friends: { type: T.arrayOf(T.id), required: true },
  },
  { denyUnknown: false },
);

const STORED_POST = structCodec(
  "StoredPost",
  {
    id: { type: T.id, required: true },
    count: { type: T.u64, required: true },
    version: { type: T.u64, required: true },
    recent_likers: { type: T.arrayOf(T.id), required: true },
  },
  { denyUnknown: false },
);

// The routes a journal entry names: a request's own, never `*` (which only
// rules and filters use).
const JOURNAL_ROUTES = Object.freeze(FAULT_ROUTES.filter((route) => route !== "*"));
// What a fault did to a request, as the journal says it: the kind of the
// action that acted (`status` also for `error_rate` and `fail_next`,
// `drop` for `drop_rate`), or `latency` for a rule that only delayed it.
const JOURNAL_FAULTS = Object.freeze([...FAULT_ACTION_KINDS, "latency"]);

// The journal's answers take new fields as the server grows them, so its
// decoders ignore unknown ones (as the server's own types do).
const JOURNAL_ENTRY = structCodec(
  "JournalEntry",
  {
    seq: { type: T.u64, required: true },
    request_id: { type: T.string, required: true },
    at_ms: { type: T.u64, required: true },
    duration_ms: { type: T.u64, required: true },
    method: { type: T.enumOf(FAULT_METHODS), required: true },
    route: { type: T.enumOf(JOURNAL_ROUTES), required: true },
    path: { type: T.string, required: true },
    posts: { type: T.arrayOf(T.id), required: true },
    user: always(T.id),
    status: always(T.u16),
    write: always(T.enumOf(WRITE_RESULTS)),
    fault_rule: always(T.u32),
    fault_tag: always(T.string),
    fault_phase: always(T.enumOf(FAULT_PHASES)),
    fault: always(T.enumOf(JOURNAL_FAULTS)),
    in_flight: { type: T.bool, required: true },
  },
  { denyUnknown: false },
);

const JOURNAL = structCodec(
  "Journal",
  {
    entries: { type: T.arrayOf(T.struct(JOURNAL_ENTRY)), required: true },
    capacity: { type: T.u64, required: true },
    dropped: { type: T.u64, required: true },
    // 0 from a server older than the field (`since: 0` selects every entry).
    last_seq: { type: T.u64, fill: 0 },
    // Only on a read that waited (`waitForRequests`).
    met: option(T.bool),
  },
  { denyUnknown: false },
);

const FAULT_FILTER = {
  tag: option(T.string),
};

const SET_FAULTS_OPTIONS = {
  seed: option(T.u64Exact),
};

const WAIT_OPTIONS = {
  timeoutMs: option(T.u64),
};

const REQUEST_FILTER = {
  route: option(T.enumOf(FAULT_ROUTES)),
  method: option(T.enumOf(FAULT_METHODS)),
  post: option(T.id),
  user: option(T.id),
  since: option(T.u64),
  request_id: option(T.string),
  fault_tag: option(T.string),
};

// Decoders take parsed JSON (from `parseJson` or `JSON.parse`) and answer
// the typed value, with the defaults filled in and the fields they do not
// know left out (a seed's decoders refuse those); a value of the wrong
// shape throws an AdminError with the code `unreadable` and a null status.
// Encoders take a typed value and answer the plain object to send, with
// only the fields that were set (and not the defaults the server's types
// leave out); a value of the wrong shape throws a TypeError.

/** @param {unknown} json */
export const decodeFaultAction = (json) => FAULT_ACTION.decode(json);
/** @param {object} value */
export const encodeFaultAction = (value) => FAULT_ACTION.encode(value);
/** @param {unknown} json */
export const decodeFaultRule = (json) => FAULT_RULE.decode(json);
/** @param {object} value */
export const encodeFaultRule = (value) => FAULT_RULE.encode(value);
/** @param {unknown} json */
export const decodeFaultRules = (json) => FAULT_RULES.decode(json);
/** @param {object} value */
export const encodeFaultRules = (value) => FAULT_RULES.encode(value);
/** @param {unknown} json */
export const decodeRuleState = (json) => RULE_STATE.decode(json);
/** @param {object} value */
export const encodeRuleState = (value) => RULE_STATE.encode(value);
/** @param {unknown} json */
export const decodeJournalEntry = (json) => JOURNAL_ENTRY.decode(json);
/** @param {object} value */
export const encodeJournalEntry = (value) => JOURNAL_ENTRY.encode(value);
/** @param {unknown} json */
export const decodeJournal = (json) => JOURNAL.decode(json);
/** @param {object} value */
export const encodeJournal = (value) => JOURNAL.encode(value);
/** @param {unknown} json */
export const decodeSeed = (json) => SEED.decode(json);
/** @param {object} value */
export const encodeSeed = (value) => SEED.encode(value);
/** @param {unknown} json */
export const decodeSeedUser = (json) => SEED_USER.decode(json);
/** @param {object} value */
export const encodeSeedUser = (value) => SEED_USER.encode(value);
/** @param {unknown} json */
export const decodeSeedPost = (json) => SEED_POST.decode(json);
/** @param {object} value */
export const encodeSeedPost = (value) => SEED_POST.encode(value);
/** @param {unknown} json */
export const decodeStoredUser = (json) => STORED_USER.decode(json);
/** @param {object} value */
export const encodeStoredUser = (value) => STORED_USER.encode(value);
/** @param {unknown} json */
export const decodeStoredPost = (json) => STORED_POST.decode(json);
/** @param {object} value */
export const encodeStoredPost = (value) => STORED_POST.encode(value);
