/**
 * A post id as LikeKit hands it back (`PostView.postId`, events,
 * failures). Post ids are whole numbers from 1 to 2^63 − 1
 * (9223372036854775807), more than a JavaScript number holds exactly, so
 * an id is a `number` when it is at most `Number.MAX_SAFE_INTEGER`
 * (2^53 − 1) and otherwise its decimal `string` ("9223372036854775807"),
 * never a rounded number.
 */
export type PostId = number | string;

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

/** The parts of the "Liked by …" line, for building a localised sentence. */
export interface LikeLineParts {
  /** The viewer likes the post. */
  you: boolean;
  /** Friends to name, newest first (at most two). */
  friends: string[];
  /** Everyone else who likes the post. */
  others: number;
  /** Everyone who likes the post: `you + friends.length + others`. */
  total: number;
}

/** What a post's heart, count and line show right now, for the viewer. */
export interface PostView {
  postId: PostId;
  /** Whether the heart is filled. */
  liked: boolean;
  /** The count to show under the heart. */
  count: number;
  /** The viewer's friends among the post's recent likers, newest first. */
  friends: string[];
  /** The line in English: "Liked by Ana and 1,203 others"; "" at 0 likes. */
  line: string;
  /** The same line in parts. */
  lineParts: LikeLineParts;
  /** A like or unlike is on its way (or waiting to be retried). */
  pending: boolean;
  /** Why the viewer's last tap did not save, until the next tap or answer. */
  error: LikeError | null;
}

/**
 * Stable error codes. Server errors (5xx) and other refusals (4xx) carry the
 * server's own code, such as `"http_503"`. `"bad_post_id"` is a post id
 * refused before anything was sent (see `PostIdInput`); `"invalid_argument"`
 * an argument of the wrong type or a number too large to be exact.
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
  | "invalid_argument"
  | (string & {});

/** Every error LikeKit throws or reports is an `Error` with these fields. */
export interface LikeError extends Error {
  name: "LikeError";
  code: LikeErrorCode;
  /** Whether sending the same call again may succeed (the client retries these). */
  transient: boolean;
  /** The HTTP status the error stands for: a server error's or refusal's own, 401, 403, 404 or 429 for `unauthorized`, `forbidden`, `post_not_found` and `rate_limited`; absent when no answer was classified. */
  status?: number;
  /** The server's `Retry-After`, for `"rate_limited"`. */
  retryAfterMs?: number;
}

/** The viewer's latest like or unlike did not save and was rolled back. */
export interface LikeFailure {
  postId: PostId;
  /** `true` for a like, `false` for an unlike. */
  wanted: boolean;
  /** A sentence for the UI: "Your like didn't save: the request timed out". */
  message: string;
  error: LikeError;
}

/** What a listener hears: a change to redraw, or a failure to tell. */
export type LikeEvent =
  | { kind: "changed"; postId: PostId; view: PostView }
  | { kind: "failed"; postId: PostId; failure: LikeFailure };

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

/** How failed calls are retried; every field is optional. */
export interface RetryOptions {
  /** The first retry's delay before jitter (default 500). */
  minDelayMs?: number;
  /** The longest delay before jitter (default 8000). */
  maxDelayMs?: number;
  /** How much each delay grows (default 2). */
  factor?: number;
  /** Retries after the first attempt; 0 never retries (default 4). */
  maxRetries?: number;
  /** Add 0–100 % random jitter to each delay (default true). */
  jitter?: boolean;
  /** Seed the jitter, for reproducible tests. */
  seed?: number;
}

/** Options of `new LikeClient(baseUrl, options)`; every field is optional. */
export interface LikeClientOptions {
  /** A fixed token, or a callback that returns the current one. */
  token?: string | TokenCallback;
  retry?: RetryOptions;
  /** How long one request may take, answer included (default 10000). */
  timeoutMs?: number;
  /** How many posts the client keeps before forgetting idle ones (default 10000). */
  maxPosts?: number;
  /**
   * The longest answer body the client reads, in bytes (default 16 MiB). A
   * longer answer fails the call as `invalid_response`; a like or unlike is
   * then retried, as after any unreadable answer.
   */
  maxAnswerBytes?: number;
}

/** Counters since the client was made. */
export interface LikeStats {
  taps: number;
  callsSent: number;
  intentsSent: number;
  coalesced: number;
  retries: number;
  rollbacks: number;
  evictions: number;
}

/** A post as a `ScriptedServer`'s reads answer it. */
export interface ScriptedLikes {
  count: number;
  likedByMe: boolean;
  /** The viewer's friends among the recent likers, newest first. */
  friends?: string[];
  version: number;
}

/** What a `ScriptedServer` answers a like or unlike with. */
export interface ScriptedState {
  count: number;
  likedByMe: boolean;
  version: number;
}

/** A like or unlike call waiting for the test's answer. */
export interface ScriptedCall {
  /** 0 for the first call the server saw, then 1, 2… */
  id: number;
  postId: PostId;
  /** `true` for a like (POST), `false` for an unlike (DELETE). */
  like: boolean;
  /** `"like 42 #0"`, as the conformance scenarios write it. */
  text: string;
}

/**
 * How a scripted call fails, classified as a real answer would be: the
 * connection broke, no answer in time, an unreadable 200, or an answer
 * with this HTTP status (`code`: the error body's; none gives `http_<status>`).
 */
export type ScriptedFailure =
  | "network"
  | "timeout"
  | "unreadable"
  | { status: number; retryAfterMs?: number; code?: string };
