// Every member of the web package, used as an app would use it, for
// `tsc --noEmit --strict` against the built package's declarations
// (`cargo xtask test --only typescript`). Nothing here runs: the file is
// only type-checked. The maps typed `{ [K in keyof X]: … }` list every
// member of a class, of its statics or of the module, so a member added to
// the package without a use here fails the check; xtask also checks that every exported type is
// named here, and that misspelling a member in a copy of this file fails.

import init, {
  initSync,
  LikeClient,
  ScriptedServer,
  type InitInput,
  type InitOutput,
  type IntentJournalOptions,
  type JournalStorage,
  type LikeClientOptions,
  type LikeError,
  type LikeErrorCode,
  type LikeErrorFields,
  type LikeEvent,
  type LikeFailure,
  type LikeLineParts,
  type LikeListener,
  type LikeObserver,
  type LikeStats,
  type PostId,
  type PostIdInput,
  type PostView,
  type RestoreReport,
  type RetryOptions,
  type ScriptedCall,
  type ScriptedFailure,
  type ScriptedFailureKind,
  type ScriptedLikes,
  type ScriptedState,
  type ScriptedStatus,
  type SyncInitInput,
  type TokenCallback,
} from "likekit-wasm";
import * as likekit from "likekit-wasm";
import {
  AdminError,
  decodeFaultAction,
  decodeFaultRule,
  decodeFaultRules,
  decodeJournal,
  decodeJournalEntry,
  decodeRuleState,
  decodeSeed,
  decodeSeedPost,
  decodeSeedUser,
  decodeStoredPost,
  decodeStoredUser,
  encodeFaultAction,
  encodeFaultRule,
  encodeFaultRules,
  encodeJournal,
  encodeJournalEntry,
  encodeRuleState,
  encodeSeed,
  encodeSeedPost,
  encodeSeedUser,
  encodeStoredPost,
  encodeStoredUser,
  FAULT_ACTION_KINDS,
  FAULT_METHODS,
  FAULT_PHASES,
  FAULT_ROUTES,
  LikeKitAdmin,
  OPERATIONS,
  parseJson,
  stringifyJson,
  WRITE_RESULTS,
  type AdminErrorCode,
  type DropAction,
  type FaultAction,
  type FaultActionKind,
  type FaultFilter,
  type FaultMethod,
  type FaultPhase,
  type FaultRoute,
  type FaultRule,
  type FaultRules,
  type HangAction,
  type Id,
  type Journal,
  type JournalEntry,
  type JournalFault,
  type JournalRoute,
  type LikeKitAdminOptions,
  type MalformedAction,
  type Operation,
  type OperationId,
  type OversizedAction,
  type RequestFilter,
  type ResetAction,
  type RuleState,
  type Seed,
  type SeedPost,
  type SeedUser,
  type SlowBodyAction,
  type StatusAction,
  type StoredPost,
  type StoredUser,
  type TruncateAction,
  type WaitOptions,
  type WriteResult,
} from "likekit-wasm/testing";

// ---------------------------------------------------------------- the shapes

/** Draws one post's heart, count and line. */
function render(view: PostView): string {
  const id: PostId = view.postId;
  const parts: LikeLineParts = view.lineParts;
  const named: string[] = [...parts.friends, ...view.friends];
  const heart = view.liked ? "♥" : "♡";
  const pending = view.pending ? " (saving…)" : "";
  const error: LikeError | null = view.error;
  const others: number = parts.others + (parts.you ? 1 : 0);
  return `${String(id)} ${heart} ${view.count} ${view.line}${pending} ${named.length} ${others}/${parts.total} ${
    error === null ? "" : describe(error)
  }`;
}

/** Every field of a `LikeError`, an `Error` object. */
function describe(error: LikeError): string {
  const asError: Error = error;
  const name: "LikeError" = error.name;
  const code: LikeErrorCode = error.code;
  const fields: LikeErrorFields = error;
  const status: number | undefined = error.status;
  const wait: number | undefined = error.retryAfterMs;
  const retry = fields.transient ? `retry in ${wait ?? 0} ms` : "no retry";
  return `${name}: ${code} (${status ?? "no status"}, ${retry}) ${asError.message} ${error.stack ?? ""}`;
}

/** What a failure tells the viewer. */
function toast(failure: LikeFailure): string {
  const id: PostId = failure.postId;
  const what = failure.wanted ? "like" : "unlike";
  return `${String(id)} ${what}: ${failure.message} [${describe(failure.error)}]`;
}

/** Events are a union on `kind`. */
function onEvent(event: LikeEvent): string {
  const id: PostId = event.postId;
  switch (event.kind) {
    case "changed":
      return `${String(id)} ${render(event.view)}`;
    case "failed":
      return `${String(id)} ${toast(event.failure)}`;
  }
}

function chart(stats: LikeStats): number[] {
  return [
    stats.taps,
    stats.callsSent,
    stats.intentsSent,
    stats.coalesced,
    stats.retries,
    stats.rollbacks,
    stats.evictions,
  ];
}

// ---------------------------------------------------------------- the client

const token: TokenCallback = async (refresh) => (refresh ? "renewed" : null);
const syncToken: TokenCallback = () => "t0ken";
const retry: RetryOptions = {
  minDelayMs: 10,
  maxDelayMs: 40,
  factor: 2,
  maxRetries: 2,
  jitter: false,
  seed: 7,
};
const options: LikeClientOptions = {
  token,
  retry,
  timeoutMs: 2_500,
  maxPosts: 1_000,
  maxAnswerBytes: 1 << 20,
  journal: { viewer: "ana" },
  maxIntentAgeMs: 86_400_000,
  keepWhileOfflineMs: 30_000,
};
const memory = new Map<string, string>();
const storage: JournalStorage = {
  getItem: (key) => memory.get(key) ?? null,
  setItem: (key, value) => void memory.set(key, value),
  removeItem: (key) => void memory.delete(key),
};
const journal: IntentJournalOptions = { viewer: "ana", storage };
const fixedToken: LikeClientOptions = { token: "t0ken", retry: {} };
const observer: LikeObserver = {
  onChange: (view) => void render(view),
  onFailure: (failure) => void toast(failure),
};
const listeners: LikeListener[] = [observer, (event) => void onEvent(event), {}];
const ids: PostIdInput[] = [42, "9223372036854775807", 9223372036854775807n];

/** Every member of `LikeClient`: a member added without a use here fails the check. */
const clientMembers: { [K in keyof LikeClient]: (client: LikeClient) => unknown } = {
  setLiked: (client) => render(client.setLiked(42, true)),
  toggle: (client) => render(client.toggle("42")),
  view: (client) => {
    const view: PostView | undefined = client.view(42n);
    return view === undefined ? "unknown" : render(view);
  },
  refresh: async (client) => render(await client.refresh(ids[0])),
  retryNow: (client) => {
    const nothing: void = client.retryNow();
    return nothing;
  },
  refreshMany: async (client) => (await client.refreshMany(new Set(ids))).map(render),
  subscribe: (client) => {
    const unsubscribe: () => void = client.subscribe(42, listeners[0]);
    unsubscribe();
  },
  subscribeAll: (client) => client.subscribeAll((event) => void onEvent(event)),
  stats: (client) => chart(client.stats()),
  hasPendingCalls: (client) => client.hasPendingCalls() === true,
  restore: (client) => {
    const report: RestoreReport = client.restore();
    report.restored.map(render);
    report.expired.map(toast);
    const problem: LikeError | null = report.problem;
    return problem?.code === "journal_damaged" ? journal.viewer : null;
  },
  journalProblem: (client) => {
    const problem: LikeError | null = client.journalProblem();
    return problem === null ? "kept" : `${problem.code}: ${problem.message}`;
  },
  liveSubscriptions: (client) => {
    const live: number = client.liveSubscriptions();
    return live;
  },
  waitIdle: async (client) => (await client.waitIdle(5_000)) === true,
  shutdown: async (client) => {
    const clean: boolean = await client.shutdown();
    const inTime: boolean = await client.shutdown(1_000);
    return clean && inTime;
  },
  isShutDown: (client) => client.isShutDown() === true,
  free: (client) => client.free(),
  [Symbol.dispose]: (client) => client[Symbol.dispose](),
};

/** Every static member of `LikeClient`. */
const clientStatics: { [K in Exclude<keyof typeof LikeClient, "prototype">]: () => LikeClient } = {
  scripted: () => LikeClient.scripted(new ScriptedServer()),
};

/** Every member of `ScriptedServer`. */
const serverMembers: { [K in keyof ScriptedServer]: (server: ScriptedServer) => unknown } = {
  setPost: (server) => {
    const likes: ScriptedLikes = { count: 1203, likedByMe: false, friends: ["Ana"], version: 1 };
    server.setPost(42, likes);
    server.setPost("7", { count: 0, likedByMe: false, version: 1 });
  },
  removePost: (server) => server.removePost(7n),
  calls: (server) =>
    server.calls().map((call: ScriptedCall) => {
      const id: number = call.id;
      const post: PostId = call.postId;
      return `${id} ${String(post)} ${call.like ? "like" : "unlike"} ${call.text}`;
    }),
  answer: (server) => {
    const state: ScriptedState = { count: 1204, likedByMe: true, version: 2 };
    return server.answer(0, state) === true;
  },
  fail: (server) => {
    const kinds: ScriptedFailureKind[] = ["network", "timeout", "unreadable"];
    const limited: ScriptedStatus = { status: 429, retryAfterMs: 1_000, code: "slow_down" };
    const failures: ScriptedFailure[] = [...kinds, { status: 503 }, limited];
    return failures.map((failure, id) => server.fail(id, failure));
  },
  free: (server) => server.free(),
  [Symbol.dispose]: (server) => server[Symbol.dispose](),
};

/** Every value the package exports. */
const moduleMembers: { [K in keyof typeof likekit]: unknown } = {
  default: async (input: InitInput) => {
    const output: InitOutput = await init({ module_or_path: input });
    return output.memory.buffer.byteLength;
  },
  initSync: (module: SyncInitInput) => initSync({ module }).memory,
  LikeClient: () => {
    const client = new LikeClient("https://likes.example.com", options);
    const plain = new LikeClient("https://likes.example.com");
    const signedIn = new LikeClient("https://likes.example.com", { token: syncToken });
    const server = new ScriptedServer();
    const scripted = LikeClient.scripted(server, { retry: { maxRetries: 0 } });
    const defaults = LikeClient.scripted(server, fixedToken);
    for (const use of Object.values(clientMembers)) {
      for (const each of [client, plain, signedIn, scripted, defaults]) use(each);
    }
    for (const use of Object.values(serverMembers)) use(server);
  },
  ScriptedServer: () => new ScriptedServer(),
};
const staticsUsed: number = Object.values(clientStatics).map((make) => make().free()).length;

/** A thrown or rejected error is `unknown` to TypeScript; LikeKit's are `LikeError`s. */
function isLikeError(error: unknown): error is LikeError {
  return error instanceof Error && error.name === "LikeError";
}

export async function app(baseUrl: string): Promise<string[]> {
  await init();
  const client = new LikeClient(baseUrl, options);
  const lines: string[] = [];
  const stop = client.subscribe(42, {
    onChange: (view) => lines.push(render(view)),
    onFailure: (failure) => lines.push(toast(failure)),
  });
  try {
    lines.push(render(await client.refresh(42)));
    lines.push(render(client.toggle(42)));
  } catch (error) {
    if (isLikeError(error) && error.code === "post_not_found") lines.push("no such post");
    else throw error;
  } finally {
    stop();
    await client.shutdown(1_000);
    client.free();
  }
  return [...lines, String(Object.keys(moduleMembers).length + staticsUsed)];
}

// ---------------------------------------------------------------- the admin client

/** Every static member of `LikeKitAdmin`. */
const adminStatics: { [K in Exclude<keyof typeof LikeKitAdmin, "prototype">]: unknown } = {
  OPERATIONS: LikeKitAdmin.OPERATIONS.reset.path,
};

/** Every member of `LikeKitAdmin` but its constructor. */
const adminMembers: { [K in keyof LikeKitAdmin]: (admin: LikeKitAdmin) => unknown } = {
  baseUrl: (admin) => admin.baseUrl.length,
  adminKey: (admin) => admin.adminKey.length,
  timeoutMs: (admin) => admin.timeoutMs + 1,
  createUser: async (admin) => (await admin.createUser(1, "Ana")) === "created",
  createPost: async (admin) => (await admin.createPost(42)) === "existed",
  getUser: async (admin) => {
    const user: StoredUser = await admin.getUser(1);
    const friends: Id[] = user.friends;
    return [user.id, user.name, friends.length];
  },
  getPost: async (admin) => {
    const post: StoredPost = await admin.getPost(42);
    const likers: Id[] = post.recent_likers;
    return [post.id, post.count, post.version, likers[0] ?? null];
  },
  setFriends: (admin) => admin.setFriends(1, [2, 3]),
  mintToken: async (admin) => (await admin.mintToken(1, 3_600)).length,
  setFaults: async (admin) => {
    const drop: DropAction = { kind: "drop" };
    const rule: FaultRule = { route: "like", post: 42, phase: "after", action: drop };
    const rules: FaultRules = await admin.setFaults([rule, { route: "*", latency_ms: 2_000 }]);
    return admin.setFaults({ seed: rules.seed, rules: rules.rules });
  },
  addFaults: async (admin) => {
    const mine: FaultRule = { route: "like", user: 1, post: 42, fail_next: 1, tag: "checkout-7" };
    const inForce: FaultRules = await admin.addFaults([mine]);
    const tags: (string | undefined)[] = inForce.rules.map((rule) => rule.tag);
    const filter: FaultFilter = { tag: "checkout-7" };
    const left: FaultRules = await admin.clearFaults(filter);
    return [tags, left.rules.length, left.seed];
  },
  getFaults: async (admin) => {
    const read: FaultRules = await admin.getFaults();
    const used: RuleState[] = read.state ?? [];
    const left: (number | undefined)[] = used.map((s) => s.fail_next_left ?? s.first_left);
    const mine: FaultRules = await admin.getFaults({ tag: "checkout-7" });
    return [read.rules.length, used.map((s) => [s.matched, s.fired, s.acted]), left, mine.rules.length];
  },
  clearFaults: (admin) => admin.clearFaults(),
  requests: async (admin) => {
    const filter: RequestFilter = { route: "like", method: "POST", post: 42, user: 1, since: 3 };
    const journal: Journal = await admin.requests(filter);
    const entries: JournalEntry[] = journal.entries;
    const writes: (WriteResult | null)[] = entries.map((entry) => entry.write);
    const ids: string[] = entries.map((entry) => entry.request_id);
    await admin.requests({ request_id: ids[0] ?? "checkout-7f3a" });
    // What one test's tagged rules did: the route a request took (never
    // `*`) and what the fault did, each an exact union.
    const faulted: JournalEntry[] = (await admin.requests({ fault_tag: "checkout-7" })).entries;
    const routes: JournalRoute[] = faulted.map((entry) => entry.route);
    const faults: (JournalFault | null)[] = faulted.map((entry) => entry.fault);
    const dropped: boolean = faults.includes("drop") || faults.includes("latency");
    return [journal.capacity, journal.dropped, writes, (await admin.requests()).entries.length, routes, dropped];
  },
  waitForRequests: async (admin) => {
    // A test in another process than the app waits on the server for the app's requests.
    const options: WaitOptions = { timeoutMs: 10_000 };
    const journal: Journal = await admin.waitForRequests({ route: "like", post: 42 }, 1, options);
    const met: boolean | undefined = journal.met;
    const all: Journal = await admin.waitForRequests({}, 2);
    return [met === true, journal.entries.length, all.met];
  },
  clearRequests: async (admin) => {
    const mine: RequestFilter = { user: 1, post: 42 };
    await admin.clearRequests(mine);
    await admin.clearRequests({ fault_tag: "checkout-7" });
    return admin.clearRequests();
  },
  reset: (admin) => admin.reset(),
  seed: (admin) => {
    const user: SeedUser = { id: 1, name: "Ana", friends: [2] };
    const post: SeedPost = { id: 42, likers: [1] };
    const seed: Seed = { users: [user, { id: 2, name: "Ben" }], posts: [post] };
    return admin.seed(seed);
  },
};

export async function adminSetUp(baseUrl: string, key: string): Promise<unknown[]> {
  const adminOptions: LikeKitAdminOptions = { timeoutMs: 5_000 };
  const admin = new LikeKitAdmin(baseUrl, key, adminOptions);
  const results: unknown[] = [];
  for (const use of Object.values(adminMembers)) {
    try {
      results.push(await use(admin));
    } catch (error) {
      if (!(error instanceof AdminError)) throw error;
      const status: number | null = error.status;
      const operation: OperationId | null = error.operation;
      const code: AdminErrorCode = error.code;
      // A known code narrows as a literal; a code the server adds later is still a string.
      const refusedQuery: boolean = code === "bad_query" || code === "no_answer";
      const anyCode: AdminErrorCode = "http_412";
      results.push([error.name, status, code, operation, error.message, refusedQuery, anyCode]);
    }
  }
  const failed = new AdminError(null, "no_answer", "no answer", { operation: "reset" });
  results.push(failed.code, adminStatics);

  const operation: Operation = OPERATIONS.create_user;
  const sameTable: boolean = LikeKitAdmin.OPERATIONS === OPERATIONS;
  const routes: readonly FaultRoute[] = FAULT_ROUTES;
  const methods: readonly FaultMethod[] = FAULT_METHODS;
  const phases: readonly FaultPhase[] = FAULT_PHASES;
  const writes: readonly WriteResult[] = WRITE_RESULTS;
  const kinds: readonly FaultActionKind[] = FAULT_ACTION_KINDS;
  const id: Id = 42;
  results.push(operation.method, operation.path, sameTable, routes, methods, phases, writes, kinds, id);

  const actions: FaultAction[] = [
    { kind: "status", status: 429, retry_after_secs: 1, body: { error: "slow" } } satisfies StatusAction,
    { kind: "drop" } satisfies DropAction,
    { kind: "reset" } satisfies ResetAction,
    { kind: "hang" } satisfies HangAction,
    { kind: "truncate", bytes: 12 } satisfies TruncateAction,
    { kind: "malformed" } satisfies MalformedAction,
    { kind: "slow_body", bytes: 8, interval_ms: 50 } satisfies SlowBodyAction,
    { kind: "oversized", bytes: 3 << 20 } satisfies OversizedAction,
  ];
  const json: unknown = parseJson(stringifyJson({ seed: 2n ** 64n - 1n, actions }));
  const rule: FaultRule = decodeFaultRule(encodeFaultRule({ route: "like", action: actions[0] }));
  const used: RuleState = decodeRuleState(encodeRuleState({ matched: 3, fired: 3, acted: 2, fail_next_left: 0 }));
  const rules: FaultRules = decodeFaultRules(encodeFaultRules({ rules: [rule], state: [used] }));
  const action: FaultAction = decodeFaultAction(encodeFaultAction(actions[1]));
  const journal: Journal = decodeJournal(encodeJournal({ entries: [], capacity: 1, dropped: 0, last_seq: 0 }));
  const entry: JournalEntry = decodeJournalEntry(json);
  const again: Record<string, unknown> = encodeJournalEntry(entry);
  // Type tests: what the server never writes in an entry does not type-check.
  // @ts-expect-error: `*` is for rules and filters; an entry names the request's own route.
  const wildcard: JournalRoute = "*";
  // @ts-expect-error: `fault` is an action's kind or `latency`, not any string.
  const explode: JournalFault = "explode";
  const latency: JournalFault = "latency";
  const kind: JournalFault = kinds[0] ?? "drop";
  results.push(wildcard, explode, latency, kind);
  const seed: Seed = decodeSeed(encodeSeed({ users: [decodeSeedUser(encodeSeedUser({ id, name: "Ana" }))] }));
  const post: SeedPost = decodeSeedPost(encodeSeedPost({ id }));
  const stored: StoredUser = decodeStoredUser(encodeStoredUser({ id, name: "Ana", friends: [1, 2] }));
  const counted: StoredPost = decodeStoredPost(encodeStoredPost({ id, count: 1, version: 1, recent_likers: [1] }));
  results.push(rules, action, journal, again, seed, post, stored, counted);
  return results;
}
