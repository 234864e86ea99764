// Types of the LikeKit mock server's admin client (`likekit-wasm/testing`).
// The bodies are plain objects with the wire's snake_case field names, as
// the server's OpenAPI document (`GET /openapi.json`) describes them.
//
// Ids are numbers: whole numbers from 1 to Number.MAX_SAFE_INTEGER
// (2^53 − 1). The server takes ids up to 2^63 − 1; ids above 2^53 − 1 are
// out of scope for this test client, which refuses them rather than round
// them.

/** A user id or a post id: a whole number from 1 to 2^53 − 1. */
export type Id = number;

/** Which routes a fault rule applies to; `*` is every public route. */
export type FaultRoute = "like" | "unlike" | "likes" | "batch" | "*";

/**
 * The route a journal entry names: the request's own. Never `*`, which
 * only fault rules and journal filters use.
 */
export type JournalRoute = Exclude<FaultRoute, "*">;

/** An HTTP method a fault rule may be limited to. */
export type FaultMethod = "GET" | "POST" | "DELETE";

/**
 * When a fault rule acts: `before` the request is handled (a like or unlike
 * never happens), or `after` (the write has committed, then the answer is
 * delayed, replaced, cut or lost).
 */
export type FaultPhase = "before" | "after";

/**
 * What a like or unlike did: `applied` (the count moved by one),
 * `unchanged` (already as asked: a retry, a repeated tap), `refused` (the
 * handler answered an error). A write the request timeout cut short, or one
 * answered 500 (the database failed), has no result (`null`): it may or may
 * not have committed.
 */
export type WriteResult = "applied" | "unchanged" | "refused";

/** Answer `status` (200..=599) with `body`, and `Retry-After` when given. */
export interface StatusAction {
  /** The tag. */
  kind: "status";
  /** The status to answer. */
  status: number;
  /** The body to answer (any JSON); by default the `injected_fault` error body. */
  body?: unknown;
  /** The `Retry-After` header, in seconds. */
  retry_after_secs?: number;
}

/** Close the connection without an answer. */
export interface DropAction {
  /** The tag. */
  kind: "drop";
}

/** Reset the connection (TCP RST) without an answer. */
export interface ResetAction {
  /** The tag. */
  kind: "reset";
}

/** Never answer: hold the request until the server's request timeout, then close. */
export interface HangAction {
  /** The tag. */
  kind: "hang";
}

/** Answer with the first `bytes` bytes of the real answer's body. Phase `after` only. */
export interface TruncateAction {
  /** The tag. */
  kind: "truncate";
  /** How many bytes of the body are sent. */
  bytes: number;
}

/** Answer with a body that is not JSON: status 200 in phase `before`; in phase `after`, the real answer's status. */
export interface MalformedAction {
  /** The tag. */
  kind: "malformed";
}

/** Send the real answer's body `bytes` at a time, one piece every `interval_ms`. Phase `after` only. */
export interface SlowBodyAction {
  /** The tag. */
  kind: "slow_body";
  /** The size of each piece. */
  bytes: number;
  /** The pause between pieces, in milliseconds. */
  interval_ms: number;
}

/** Answer 200 with valid JSON of `bytes` bytes (padding), streamed. */
export interface OversizedAction {
  /** The tag. */
  kind: "oversized";
  /** The size of the answer. */
  bytes: number;
}

/** What a fault rule does when it fires (after its latency), tagged by `kind`. */
export type FaultAction =
  | StatusAction
  | DropAction
  | ResetAction
  | HangAction
  | TruncateAction
  | MalformedAction
  | SlowBodyAction
  | OversizedAction;

/** The `kind` of a {@link FaultAction}. */
export type FaultActionKind = FaultAction["kind"];

/**
 * What a fault did to a request, as the journal's `fault` says it: the
 * {@link FaultActionKind} of what acted (`status` also for `error_rate` and
 * `fail_next`, `drop` also for `drop_rate`), or `latency` for a rule that
 * only delayed the request. Exact, with no room for other strings: the
 * server writes it from its own closed set of acts, which grows only with
 * {@link FaultAction} (and so with this client); the decoder refuses any
 * other value as `unreadable`.
 */
export type JournalFault = FaultActionKind | "latency";

/**
 * One fault rule: which requests it matches (`route`, and `method`, `post`,
 * `user` when given), which of their calls it fires on (`nth`, `every`,
 * `first`, `after`, `probability`), and what it does then. Every field but
 * `route` is optional; a decoded rule has the defaults filled in.
 */
export interface FaultRule {
  /** The route it applies to. */
  route: FaultRoute;
  /**
   * Only requests with this method. On a route other than `*` it must be
   * the route's own (`like` POST, `unlike` DELETE, `likes` and `batch`
   * GET): a rule for another would never fire, and is refused.
   */
  method?: FaultMethod;
  /** Only requests about this post (a batch read: one that names it). */
  post?: Id;
  /** Only requests signed in as this user. */
  user?: Id;
  /** Only the `nth` matching call (1 is the first). */
  nth?: number;
  /** Only every `every`-th matching call. */
  every?: number;
  /** Only the first `first` matching calls. */
  first?: number;
  /** Only the calls after the first `after` matching ones. */
  after?: number;
  /** The chance (0..=1) that the rule fires on a call it selects (default 1). */
  probability?: number;
  /** Before the request is handled (default) or after. */
  phase?: FaultPhase;
  /** Fixed delay when the rule fires, in milliseconds (default 0, at most 600 000). */
  latency_ms?: number;
  /** Extra random delay, uniform in `0..=jitter_ms` (default 0). */
  jitter_ms?: number;
  /** Probability (0..=1) of answering `status` instead of handling (default 0). */
  error_rate?: number;
  /** The status `error_rate` and `fail_next` answer (default 503); another without either is refused. */
  status?: number;
  /** Probability (0..=1) of dropping the connection without an answer (default 0). */
  drop_rate?: number;
  /** Answer `status` to the next N matching requests, then stop (default 0). */
  fail_next?: number;
  /** What to do when the rule fires, beyond the fields above. */
  action?: FaultAction;
  /**
   * A name of the test's choosing (1 to 64 visible ASCII characters, `!` to
   * `~`), so that `clearFaults({ tag })` removes this test's rules and no
   * other; it changes nothing the rule does.
   */
  tag?: string;
}

/** The fault rules in force, and the seed every probability and jitter is drawn from. */
export interface FaultRules {
  /**
   * The generator's seed: the same seed and the same calls give the same
   * faults. When not given the server picks one and reports it; a seed
   * above 2^53 − 1 is a BigInt, kept exact so it can be sent again.
   */
  seed?: number | bigint;
  /** The rules, applied in order (at most 256). */
  rules: FaultRule[];
  /**
   * Read-only, in answers: what each rule has used up, `state[i]` for
   * `rules[i]` (absent when there are no rules). The server ignores it in
   * `setFaults`, whose rules start their counters over, so an answer can be
   * sent back as it is.
   */
  state?: RuleState[];
}

/** What one fault rule has used up since its rules were set. */
export interface RuleState {
  /** The requests it matched: its call number so far (what `nth`, `every`, `first`, `after` count). */
  matched: number;
  /** The calls it fired on: selected, and the probability draw passed (its latency applied). */
  fired: number;
  /** The requests it acted on (answered, cut or spoiled); the journal names it as their `fault_rule`. */
  acted: number;
  /** For a rule with `fail_next`: how many of those failures are left. */
  fail_next_left?: number;
  /** For a rule with `first`: how many of its first calls are still to come. */
  first_left?: number;
}

/** One request to a public route, as the request journal records it. */
export interface JournalEntry {
  /** Its place in the journal: 1, 2, 3, … in order of arrival. */
  seq: number;
  /** Its id, as its answer's `X-Request-Id` gives it: the client's own, or the one the server made. */
  request_id: string;
  /** When it arrived, in milliseconds since the Unix epoch. */
  at_ms: number;
  /** How long it took until its answer (or until the connection was cut), in milliseconds. */
  duration_ms: number;
  /** Its method. */
  method: FaultMethod;
  /** Its route (never `*`). */
  route: JournalRoute;
  /** Its path and query. */
  path: string;
  /** The post it names, or the posts a batch read asks for. */
  posts: Id[];
  /** The signed-in user, when the token was valid. */
  user: Id | null;
  /** The answer's status; null when no answer was written (a fault cut or held the connection). */
  status: number | null;
  /** For a like or unlike that reached the handler: what it did. */
  write: WriteResult | null;
  /**
   * The fault rule that acted on it (its place in the rule set when it
   * acted: removing rules by tag moves the rules after them up), if any.
   */
  fault_rule: number | null;
  /**
   * That rule's `tag`, when it has one: unlike `fault_rule`, no removal
   * changes it, so a test sharing the server finds what its own rules did
   * by their tag.
   */
  fault_tag: string | null;
  /** When that rule acted. */
  fault_phase: FaultPhase | null;
  /** What the fault did (see {@link JournalFault}). */
  fault: JournalFault | null;
  /** Not answered yet: `status`, `duration_ms`, `write` and the fault fields are filled in later. */
  in_flight: boolean;
}

/**
 * Which rules {@link LikeKitAdmin.getFaults} reads and
 * {@link LikeKitAdmin.clearFaults} removes: those with `tag` (every rule
 * when no filter is given). A `tag` of undefined or null is a TypeError,
 * never every rule.
 */
export interface FaultFilter {
  /** Only the rules with this tag (1 to 64 visible ASCII characters). */
  tag: string;
}

/** The request journal's entries a filter selects, oldest first. */
export interface Journal {
  /** The matching entries, oldest first. */
  entries: JournalEntry[];
  /** How many entries the journal holds at most (`--journal-size`). */
  capacity: number;
  /** How many older entries were dropped to stay within it. */
  dropped: number;
  /**
   * The `seq` of the last request that arrived, whether the filter matches
   * it or not (0 before the first): read it before the test acts, then
   * `since: last_seq` selects only what came after.
   */
  last_seq: number;
  /**
   * Only on a read that waited ({@link LikeKitAdmin.waitForRequests}):
   * true when the entries it waited for are there, none of them in flight;
   * false when the wait ran out first (or the server began stopping, or it
   * asked for more than the journal holds).
   */
  met?: boolean;
}

/** The options of {@link LikeKitAdmin.waitForRequests}. */
export interface WaitOptions {
  /** How long the server waits at most, in milliseconds (default 5 000, at most 60 000). */
  timeoutMs?: number;
}

/**
 * The filters of {@link LikeKitAdmin.requests} and
 * {@link LikeKitAdmin.clearRequests}: every one given must match. A key
 * given as undefined or null is a TypeError (leave it out instead), so a
 * test's unset variable never selects every entry.
 */
export interface RequestFilter {
  /** Only this route (`*`: every route). */
  route?: FaultRoute;
  /** Only this method. */
  method?: FaultMethod;
  /** Only requests naming this post. */
  post?: Id;
  /** Only requests signed in as this user. */
  user?: Id;
  /** Only entries after this `seq` (for reading what is new). */
  since?: number;
  /** Only the request whose answer carried this `X-Request-Id`. */
  request_id?: string;
  /**
   * Only the entries whose `fault_tag` is this: the requests a rule with
   * this tag acted on (or delayed), so a test sharing the server reads or
   * removes what its own tagged rules did. 1 to 64 visible ASCII characters
   * (`!` to `~`); another is `bad_query`.
   */
  fault_tag?: string;
}

/** A user in a {@link Seed}. */
export interface SeedUser {
  /** The user's id. */
  id: Id;
  /** The display name. */
  name: string;
  /** The user's friends (default none). */
  friends?: Id[];
}

/** A post in a {@link Seed}. */
export interface SeedPost {
  /** The post's id. */
  id: Id;
  /** Users who like it, oldest first (default none). */
  likers?: Id[];
}

/** A seed document: the `--seed FILE` format. */
export interface Seed {
  /** Users with their names and friend lists (default none). */
  users?: SeedUser[];
  /** Posts with the users who already like them (default none). */
  posts?: SeedPost[];
}

/** A user as the store holds it: the answer of {@link LikeKitAdmin.getUser}. */
export interface StoredUser {
  /** The user's id. */
  id: Id;
  /** The display name. */
  name: string;
  /** The user's own (directed) friend list, in ascending order of id. */
  friends: Id[];
}

/**
 * A post as the store holds it: the answer of {@link LikeKitAdmin.getPost},
 * read past the server's view cache.
 */
export interface StoredPost {
  /** The post's id. */
  id: Id;
  /** How many users like it: its like rows, as committed. */
  count: number;
  /**
   * Grows by one with every real change of its likes (a like that added a
   * row, an unlike that removed one); 0 after a reset.
   */
  version: number;
  /**
   * Its most recent likers, newest first, at most 100. An unlike removes
   * its user; the list is not refilled from older likes.
   */
  recent_likers: Id[];
}

/** One admin operation's HTTP method and path template. */
export interface Operation {
  /** The HTTP method. */
  readonly method: "GET" | "POST" | "PUT" | "DELETE";
  /** The path, with `{name}` for its parameters. */
  readonly path: string;
}

/** The operationIds of the admin API, as in `/openapi.json`. */
export type OperationId =
  | "create_user"
  | "get_user"
  | "create_post"
  | "get_post"
  | "set_friends"
  | "mint_token"
  | "set_faults"
  | "add_faults"
  | "get_faults"
  | "clear_faults"
  | "requests"
  | "clear_requests"
  | "reset"
  | "seed";

/**
 * The `code` of an {@link AdminError}: those the admin routes answer today
 * (the server's table of errors), and the client's own `unreadable` and
 * `no_answer`. Any other string is allowed too (`string & {}` keeps the
 * names offered while typing): the server's codes are plain strings that
 * grow with its API (a status without a code of its own answers
 * `http_<status>`), not one closed enum, and a server embedded with routes
 * of its own may answer codes of its own.
 */
export type AdminErrorCode =
  | "bad_admin_key"
  | "bad_fault_rules"
  | "bad_json"
  | "bad_name"
  | "bad_post_id"
  | "bad_query"
  | "bad_request"
  | "bad_ttl"
  | "bad_valid_from"
  | "bad_user_id"
  | "internal"
  | "journal_off"
  | "method_not_allowed"
  | "no_answer"
  | "not_found"
  | "own_tokens_off"
  | "payload_too_large"
  | "post_not_found"
  | "shutting_down"
  | "storage_error"
  | "timeout"
  | "too_many_friends"
  | "too_many_rules"
  | "unreadable"
  | "unsupported_media_type"
  | "user_not_found"
  | (string & {});

/** Every admin operation: operationId → method and path. Every call goes through it. */
export declare const OPERATIONS: Readonly<Record<OperationId, Operation>>;

/** The {@link FaultRoute} values, in the server's order. */
export declare const FAULT_ROUTES: readonly FaultRoute[];
/** The {@link FaultMethod} values, in the server's order. */
export declare const FAULT_METHODS: readonly FaultMethod[];
/** The {@link FaultPhase} values, in the server's order. */
export declare const FAULT_PHASES: readonly FaultPhase[];
/** The {@link WriteResult} values, in the server's order. */
export declare const WRITE_RESULTS: readonly WriteResult[];
/** The {@link FaultActionKind} values, in the server's order. */
export declare const FAULT_ACTION_KINDS: readonly FaultActionKind[];

/**
 * An admin call that failed, or an answer of the wrong shape.
 *
 * - The server answered an error: `status` is its HTTP status, `code` and
 *   `message` come from its `{"error": {"code", "message"}}` body (a body
 *   that is not one: `code` is `unreadable`, the body is in `message`).
 * - A 2xx answer of the wrong shape: its `status`, `code` `unreadable`.
 * - No answer: `status` is null, `code` is `no_answer` (connection refused,
 *   reset, timeout…; the message says which), as in every language's
 *   admin client.
 * - A decoder given a value of the wrong shape: `status` null, `code`
 *   `unreadable`.
 *
 * A message the client writes itself starts with the call's method and
 * path; the server's own message is kept as it is.
 */
export declare class AdminError extends Error {
  /**
   * @param status the HTTP status, or null when no answer came
   * @param code the error code
   * @param message what went wrong
   * @param options the error's cause, and the operationId of the call
   */
  constructor(
    status: number | null,
    code: AdminErrorCode,
    message: string,
    options?: { cause?: unknown; operation?: OperationId | null },
  );
  /** Always `"AdminError"`. */
  name: "AdminError";
  /** The HTTP status, or null when no answer came. */
  status: number | null;
  /** The server's error code (`bad_name`, `bad_admin_key`, …), or `unreadable`, `no_answer`. */
  code: AdminErrorCode;
  /** The operationId of the call that failed; null for a decoder's error. */
  operation: OperationId | null;
}

/** Options of a {@link LikeKitAdmin}. */
export interface LikeKitAdminOptions {
  /** How long one call may take, in milliseconds (default 30 000). */
  timeoutMs?: number;
}

/**
 * A client for one server's admin API (the routes under `/admin`, on only
 * when the server runs with `--admin-key`). Every call sends the key in
 * `X-Admin-Key`, takes its method and path from {@link OPERATIONS}, and
 * rejects with an {@link AdminError}. An argument of the wrong type (an id
 * that is not a whole number from 1 to 2^53 − 1, an unknown field in a
 * rule) throws a TypeError before anything is sent.
 *
 * ```js
 * import { LikeKitAdmin } from "likekit-wasm/testing";
 * const admin = new LikeKitAdmin("http://127.0.0.1:8080", "dev");
 * await admin.createUser(7, "Ana");
 * const token = await admin.mintToken(7);
 * await admin.setFaults([{ route: "like", phase: "after", action: { kind: "drop" } }]);
 * // … the app under test likes post 42; the server waits until the like was answered:
 * const { met } = await admin.waitForRequests({ route: "like", post: 42 }, 1, { timeoutMs: 10_000 });
 * ```
 */
export declare class LikeKitAdmin {
  /**
   * @param baseUrl the server, e.g. `http://127.0.0.1:8080`
   * @param adminKey the server's `--admin-key`
   * @param options the timeout of one call
   */
  constructor(baseUrl: string, adminKey: string, options?: LikeKitAdminOptions);
  /** The table every call goes through (the module's {@link OPERATIONS}). */
  static readonly OPERATIONS: Readonly<Record<OperationId, Operation>>;
  /** The server's base URL, without a trailing slash. */
  readonly baseUrl: string;
  /** The admin key sent with every call. */
  readonly adminKey: string;
  /** How long one call may take, in milliseconds. */
  readonly timeoutMs: number;

  /** `create_user`: creates the user (`"created"`), or renames an existing one (`"existed"`). */
  createUser(id: Id, name: string): Promise<"created" | "existed">;
  /** `create_post`: creates the post (`"created"`); an existing one is left as it is (`"existed"`). */
  createPost(id: Id): Promise<"created" | "existed">;
  /**
   * `get_user`: the user as stored, its friends in ascending order of id
   * (an unknown user: an {@link AdminError} with the code `user_not_found`).
   */
  getUser(id: Id): Promise<StoredUser>;
  /**
   * `get_post`: the post as stored (count, version, most recent likers
   * newest first), read past the server's view cache: a count checked here
   * right after a client's call is the committed one (an unknown post: an
   * {@link AdminError} with the code `post_not_found`).
   */
  getPost(id: Id): Promise<StoredPost>;
  /** `set_friends`: replaces the user's own (directed) friend list. */
  setFriends(user: Id, friends: Id[]): Promise<void>;
  /**
   * `mint_token`: a sign-in token for `user`, valid for `ttlSecs` seconds
   * (default 3600) from `validFromSecs` seconds from now (a year either
   * way; default 0). Below zero the token was issued then:
   * `mintToken(user, 3600, -7200)` expired an hour ago, for a test of a
   * client's token renewal with no wait; above zero it is refused
   * (`invalid_token`) until then.
   */
  mintToken(user: Id, ttlSecs?: number, validFromSecs?: number): Promise<string>;
  /**
   * `set_faults`: replaces every fault rule with `rules`, drawn from
   * `options.seed` (when not given the server picks one); answers the rules
   * now in force with their seed. Every rule's counters start over, other
   * tests' too: tests that share a server use {@link LikeKitAdmin.addFaults}.
   *
   * ```js
   * await admin.setFaults([{ route: "*", latency_ms: 2000 }], { seed: 42 });
   * ```
   */
  setFaults(rules: FaultRule[], options?: { seed?: number | bigint }): Promise<FaultRules>;
  /**
   * `set_faults` with a whole document, `{ seed, rules }` (an answer of
   * {@link LikeKitAdmin.getFaults}, say: its `state` is ignored, and the
   * counters start over).
   */
  setFaults(document: FaultRules): Promise<FaultRules>;
  /**
   * `add_faults`: adds `rules` after the rules in force, which keep their
   * counters and the seed; answers every rule now in force, `rules` last,
   * with the seed and `state`. Tag them to remove them with
   * `clearFaults({ tag })`. When the rules in force and `rules` would be
   * more than 256, nothing is added: an {@link AdminError} with status 409
   * and the code `too_many_rules`.
   *
   * ```js
   * await admin.addFaults([{ route: "like", user: 7, post: 42, fail_next: 1, tag: "checkout-7" }]);
   * // … the test …
   * await admin.clearFaults({ tag: "checkout-7" });
   * ```
   */
  addFaults(rules: FaultRule[]): Promise<FaultRules>;
  /**
   * `get_faults`: the rules in force, their seed, and what each has used up
   * (`state`). With a `tag`, only the rules tagged `tag` and their state,
   * in their order (none when no rule has it), with the seed: a test
   * sharing the server reads its own rules. A tag that is not 1 to 64
   * visible ASCII characters is `bad_query`.
   *
   * ```js
   * const mine = await admin.getFaults({ tag: "checkout-7" });
   * const failuresLeft = mine.state?.[0]?.fail_next_left;
   * ```
   */
  getFaults(filter?: FaultFilter): Promise<FaultRules>;
  /**
   * `clear_faults`: without a `tag`, removes every fault rule (other tests'
   * too) and the seed; with one, only the rules tagged `tag` (none when no
   * rule has it), the others keeping their counters and the seed. Answers
   * the rules left in force. A tag that is not 1 to 64 visible ASCII
   * characters is `bad_query`.
   */
  clearFaults(filter?: FaultFilter): Promise<FaultRules>;
  /**
   * `requests`: the request journal's entries `filter` selects, oldest
   * first (`{}`: all). `{ fault_tag }` selects what a test's own tagged
   * rules did on a server other tests share. {@link LikeKitAdmin.waitForRequests}
   * waits on the server until the requests are there and answered.
   *
   * ```js
   * const faulted = (await admin.requests({ fault_tag: "checkout-7" })).entries;
   * ```
   */
  requests(filter?: RequestFilter): Promise<Journal>;
  /**
   * `requests` with `wait_for` and `timeout_ms`: the server holds the answer
   * until at least `count` entries match `filter` and none of them is in
   * flight (`met: true`), or until `options.timeoutMs` has passed
   * (`met: false`, with the entries there were then): for a test that
   * cannot wait for the client itself, such as a UI test driving a page in
   * another process. `met` is also false at once for a `count` above the
   * journal's capacity, and when the server begins stopping. The call waits
   * for its answer `timeoutMs` longer than the client's own timeout. A
   * `count` of 0 or a `timeoutMs` above 60 000 is `bad_query`.
   *
   * ```js
   * const journal = await admin.waitForRequests({ route: "like", post: 42 }, 1, { timeoutMs: 10_000 });
   * assert.equal(journal.met, true, "the like was sent and answered");
   * ```
   */
  waitForRequests(filter: RequestFilter, count: number, options?: WaitOptions): Promise<Journal>;
  /**
   * `clear_requests`: removes the request journal's entries `filter`
   * selects, so a test sharing the server removes only its own
   * (`{ user: 7 }`, or `{ fault_tag: "checkout-7" }` for what its tagged
   * rules acted on); without a filter (`{}`), empties the journal for every
   * test. `seq` goes on.
   */
  clearRequests(filter?: RequestFilter): Promise<void>;
  /** `reset`: drops every like; users, friends and posts stay. */
  reset(): Promise<void>;
  /** `seed`: loads a seed document; loading the same one again changes nothing. */
  seed(seed: Seed): Promise<void>;
}

/**
 * `JSON.parse`, except that a whole number beyond ±(2^53 − 1) becomes a
 * BigInt instead of being rounded.
 */
export declare function parseJson(text: string): unknown;
/**
 * `JSON.stringify`, except that a BigInt is written as the whole number it
 * holds (and a number that is not finite is refused with a TypeError).
 */
export declare function stringifyJson(value: unknown): string;

// Decoders take parsed JSON and answer the typed value with the defaults
// filled in and the fields they do not know left out, as a tolerant reader
// of a newer server's answers; a value of the wrong shape (a missing or
// mistyped field; in a seed, which only a test writes, an unknown field as
// well) throws an AdminError with the code `unreadable`. Encoders answer the object to send: the fields that
// were set, without the defaults the server's types leave out; a value of
// the wrong shape throws a TypeError.

/** Decodes a {@link FaultAction}. */
export declare function decodeFaultAction(json: unknown): FaultAction;
/** Encodes a {@link FaultAction}. */
export declare function encodeFaultAction(value: FaultAction): Record<string, unknown>;
/** Decodes a {@link FaultRule}. */
export declare function decodeFaultRule(json: unknown): FaultRule;
/** Encodes a {@link FaultRule}. */
export declare function encodeFaultRule(value: FaultRule): Record<string, unknown>;
/** Decodes a {@link FaultRules}. */
export declare function decodeFaultRules(json: unknown): FaultRules;
/** Encodes a {@link FaultRules}. */
export declare function encodeFaultRules(value: FaultRules): Record<string, unknown>;
/** Decodes a {@link RuleState}. */
export declare function decodeRuleState(json: unknown): RuleState;
/** Encodes a {@link RuleState}. */
export declare function encodeRuleState(value: RuleState): Record<string, unknown>;
/** Decodes a {@link JournalEntry}. */
export declare function decodeJournalEntry(json: unknown): JournalEntry;
/** Encodes a {@link JournalEntry}. */
export declare function encodeJournalEntry(value: JournalEntry): Record<string, unknown>;
/** Decodes a {@link Journal}. */
export declare function decodeJournal(json: unknown): Journal;
/** Encodes a {@link Journal}. */
export declare function encodeJournal(value: Journal): Record<string, unknown>;
/** Decodes a {@link Seed}. */
export declare function decodeSeed(json: unknown): Seed;
/** Encodes a {@link Seed}. */
export declare function encodeSeed(value: Seed): Record<string, unknown>;
/** Decodes a {@link SeedUser}. */
export declare function decodeSeedUser(json: unknown): SeedUser;
/** Encodes a {@link SeedUser}. */
export declare function encodeSeedUser(value: SeedUser): Record<string, unknown>;
/** Decodes a {@link SeedPost}. */
export declare function decodeSeedPost(json: unknown): SeedPost;
/** Encodes a {@link SeedPost}. */
export declare function encodeSeedPost(value: SeedPost): Record<string, unknown>;
/** Decodes a {@link StoredUser}. */
export declare function decodeStoredUser(json: unknown): StoredUser;
/** Encodes a {@link StoredUser}. */
export declare function encodeStoredUser(value: StoredUser): Record<string, unknown>;
/** Decodes a {@link StoredPost}. */
export declare function decodeStoredPost(json: unknown): StoredPost;
/** Encodes a {@link StoredPost}. */
export declare function encodeStoredPost(value: StoredPost): Record<string, unknown>;
