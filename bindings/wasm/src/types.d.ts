// The TypeScript the Rust types cannot give. Every plain object the
// package takes or returns (PostView, LikeLineParts, LikeFailure,
// LikeEvent, LikeStats, RestoreReport, LikeClientOptions, RetryOptions,
// IntentJournalOptions, the Scripted* shapes, PostId and the fields of
// LikeError) is declared from its Rust type in src/types.rs; what is here
// has no serde form:
//
// - PostIdInput: a `bigint` is a JavaScript value serde cannot name, and
//   ids are checked by args.rs, not by a serde shape;
// - LikeError: an `Error` object (a class instance with a stack), which a
//   plain object cannot be; its own fields are the generated
//   LikeErrorFields;
// - LikeErrorCode: an open list of strings with the known ones named;
// - LikeObserver, LikeListener, TokenCallback: functions;
// - JournalStorage: the part of the DOM's `Storage` the journal uses.

/**
 * A post id as LikeKit takes it, in any of three forms:
 *
 * - a `number` that is a safe integer (`Number.isSafeInteger`), up to
 *   `Number.MAX_SAFE_INTEGER`;
 * - a decimal `string` of digits only ("42", "9223372036854775807"), for
 *   every id;
 * - a `bigint` (`42n`), for every id.
 *
 * A value that is no post id — 0, a negative number, a fraction, `NaN`,
 * anything past 2^63 − 1, a string that is not just digits — throws a
 * `LikeError` with code `"bad_post_id"`, the code the server and the
 * Kotlin, Swift and Python bindings use for the same id. A number past
 * `Number.MAX_SAFE_INTEGER` is not exact (`2 ** 53 + 1 === 2 ** 53`), so it
 * may not be the id meant: it throws `"invalid_argument"`, as does a value
 * of another type; pass such ids as a string or a `bigint`.
 */
export type PostIdInput = PostId | bigint;

/**
 * Stable error codes. Server errors (5xx, and 408 Request Timeout and 425
 * Too Early, which are retried and may have been applied even so) and other
 * refusals (4xx) carry the server's own code, such as `"http_503"`.
 * `"bad_post_id"` is a post id refused before anything was sent (see
 * `PostIdInput`); `"invalid_argument"` an argument of the wrong type or a
 * number too large to be exact; `"journal_…"` the intent journal could
 * not be used (`restore().problem`, `journalProblem()`): its content was
 * damaged, another viewer's or of a newer format (`"journal_damaged"`:
 * what it held is lost, the next save replaces it), the storage could not
 * be read (`"journal_unreadable"`: left as it is) or written
 * (`"journal_unwritable"`); `"journal_in_use"` is the native clients'
 * journal held by another client; `"expired"` a kept tap too old to send.
 */
export type LikeErrorCode =
  | "bad_post_id"
  | "network"
  | "timeout"
  | "rate_limited"
  | "invalid_response"
  | "unauthorized"
  | "forbidden"
  | "post_not_found"
  | "config"
  | "shutdown"
  | "journal_in_use"
  | "journal_damaged"
  | "journal_unreadable"
  | "journal_unwritable"
  | "expired"
  | "invalid_argument"
  | (string & {});

/**
 * Every error the client throws, rejects with or reports (a like, an
 * argument, the network, the journal) is an `Error` named `"LikeError"`
 * with the fields of `LikeErrorFields`: `code`, `transient`, and `status`
 * or `retryAfterMs` when the error has them.
 *
 * Not so the few errors of the module's own glue, about the module or a
 * handle used wrongly: a call on a freed client (`null pointer passed to
 * rust`), a client made in a browser before `init()` resolved (a
 * `TypeError`), a `.wasm` the Node entry could not read, and `free()`
 * from inside one of the client's own calls (a listener). Those are plain
 * `Error`s with no `code`: check `error.name === "LikeError"` (or
 * `"code" in error`) before reading it.
 */
export interface LikeError extends Error, LikeErrorFields {
  name: "LikeError";
}

/** An observer object: either method may be left out. */
export interface LikeObserver {
  onChange?(view: PostView): void;
  onFailure?(failure: LikeFailure): void;
}

/** A function that takes every event, or an observer object. */
export type LikeListener = ((event: LikeEvent) => void) | LikeObserver;

/**
 * Gives the sign-in token sent as `Authorization: Bearer <token>`, or
 * null/undefined for none — at once, or as a Promise (an `async` function
 * that renews the token over the network), which the request awaits; the
 * tap it carries has already returned. Called before every request with
 * `refresh = false`; after a 401 once more with `refresh = true`, when it
 * should give a renewed token. One that throws or rejects gives no token
 * (the call then fails as `"unauthorized"`), with a console error.
 */
export type TokenCallback = (
  refresh: boolean,
) => string | null | undefined | PromiseLike<string | null | undefined>;

/**
 * Where the intent journal is kept: `localStorage` (the default),
 * `sessionStorage`, or any object with these three methods (a test's
 * in-memory one, say). The journal is one string per viewer under the key
 * `likekit-intents:<viewer>`.
 */
export type JournalStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;
