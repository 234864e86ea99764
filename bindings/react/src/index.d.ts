// Types of likekit-react. The shapes of views, failures and errors are
// likekit-wasm's own; this file adds only the hooks and the provider.

import type { ReactElement, ReactNode } from "react";
import type { LikeClient, LikeError, LikeFailure, PostIdInput, PostView } from "likekit-wasm";

/**
 * What the hooks need of a client: a likekit-wasm `LikeClient` (including
 * one made with `LikeClient.scripted` for tests) has all of it.
 */
export type LikeKitClient = Pick<
  LikeClient,
  "view" | "toggle" | "setLiked" | "subscribe" | "refreshMany"
>;

/**
 * A post's likes as the LikeKit server answers them for the viewer: the
 * body of `GET /posts/{id}/likes`, and each entry of the `posts` object of
 * `GET /likes?posts=…` (the answer of `POST` or `DELETE
 * /posts/{id}/like`, which has no `friends`, fits too). The JSON as it
 * comes: the hooks make the view (`line` included) from it.
 */
export interface PostLikes {
  /** Everyone who likes the post; a whole number from 0. */
  count: number;
  /** The viewer likes it. */
  liked_by_me: boolean;
  /** The viewer's friends among the recent likers, newest first; none when left out. */
  friends?: readonly string[];
  /** Checked if given (a whole number from 0), and otherwise unused. */
  version?: number;
}

/**
 * Views the app read on the server, keyed by post id (`"42"`, or in a
 * `Map` also `42` and `42n`): `GET /likes`'s `posts` object as it comes.
 */
export type InitialViews = Readonly<Record<string, PostLikes>> | ReadonlyMap<PostIdInput, PostLikes>;

export interface LikeKitProviderProps {
  /**
   * The client the hooks below use. null or undefined — on the server, or
   * before `init()` has loaded the `.wasm` — makes every hook show no view
   * and every tap do nothing.
   */
  client: LikeKitClient | null | undefined;
  /**
   * Views read on the server for the viewer the page is for (the
   * "seeds"): each post shows its own — in the server's HTML, while
   * hydrating, and after — until the client has a view of the post; from
   * then on the client's, never the seed again. Once the provider has had
   * a client and then has none (a sign-out), the seeds are spent until a
   * new `initialViews` object. Left out (`undefined`): the seeds of the
   * provider above; `null`: none. An entry that is no post id or not of
   * this shape is left out, with a `console.warn` outside production
   * builds; nothing is thrown.
   */
  initialViews?: InitialViews | null;
  children?: ReactNode;
}

/** Makes `client` the one `useLike` and `useLikes` use below it. */
export function LikeKitProvider(props: LikeKitProviderProps): ReactElement;

/**
 * The client of the nearest `LikeKitProvider` — the object passed as its
 * `client` — or null while the provider has none (it was given null or
 * undefined). Throws, as `useLike` and `useLikes` do, when there is no
 * `LikeKitProvider` above the component at all. It is a likekit-wasm
 * `LikeClient` unless the provider was given another object; then name
 * its type: `useLikeClient<MyClient>()`.
 */
export function useLikeClient<C extends LikeKitClient = LikeClient>(): C | null;

/** What `useLike(postId)` gives. */
export interface LikeState {
  /**
   * What the post shows now; undefined until the client knows the post
   * or after it forgot it (past its `maxPosts`): the hook reads it then.
   * Undefined on the server and while hydrating too. The same object
   * until the post changes. Before the client has had a view of the post,
   * the provider's seed for it (`initialViews`), if it has one: then
   * `seeded` is true.
   */
  view: PostView | undefined;
  /**
   * `view` is the provider's seed (`initialViews`), not yet the client's:
   * taps do nothing until the client's own view replaces it (render the
   * heart disabled meanwhile: `disabled={!view || seeded}`).
   */
  seeded: boolean;
  /** The latest "your like didn't save" for the post, until the next tap through `toggle` or `setLiked`. */
  failure: LikeFailure | null;
  /**
   * Why the latest read of the post failed (the hook's own read or a
   * `useLikes` page's; of reads that overlap, the one sent last): null
   * while a read is out and after one that succeeded. Code
   * `post_not_found` when the server does not have the post. While
   * `view` is undefined it is the reason nothing shows; `reload()` tries
   * again, and so does the next mount.
   *
   * A `LikeError` whenever the client could make the read. When it could
   * not be called at all (it was freed while the provider still had it,
   * or its module was never loaded) it is the plain `Error` the package
   * threw, with a `message` and no `code`: tell them apart with
   * `"code" in error` (or `error.name === "LikeError"`).
   */
  error: LikeError | Error | null;
  // The functions below use no `this`: destructure them and pass them on freely.
  /**
   * Likes the post if its heart shows empty, unlikes it if filled; returns
   * the new view at once. Does nothing (undefined) without a client, and
   * while `seeded`.
   */
  toggle: () => PostView | undefined;
  /**
   * Likes (`true`) or unlikes (`false`) the post; returns the new view at
   * once. Does nothing (undefined) without a client, and while `seeded`.
   */
  setLiked: (liked: boolean) => PostView | undefined;
  /**
   * Reads the post again, in one request. Never rejects: the outcome shows
   * in `view` and `error`. Safe as an event handler (`onClick={reload}`).
   */
  reload: () => Promise<void>;
}

/**
 * One post's like button. `postId` null or undefined gives no view and
 * taps that do nothing (for a component whose post is not known yet). A
 * value that is no post id throws the client's `bad_post_id` LikeError
 * while rendering.
 */
export function useLike(postId: PostIdInput | null | undefined): LikeState;

/** What `useLikes(postIds)` gives. */
export interface FeedState {
  /**
   * `views[i]` is post `postIds[i]`'s view (undefined while unknown, the
   * provider's seed for it until the client has had a view, as `useLike`
   * gives it); the same array until one changes. Read on demand: a component that reads
   * it re-renders when a post changes, one that does not only when
   * `refreshing` or `error` does.
   */
  readonly views: ReadonlyArray<PostView | undefined>;
  /** A read of the page is on its way. */
  refreshing: boolean;
  /**
   * Why the last read of the page failed; null after one that succeeded.
   * A `LikeError`, or a plain `Error` without `code` when the client could
   * not be called at all (see `LikeState.error`).
   */
  error: LikeError | Error | null;
  /** Reads the page again, in one `refreshMany` (one request per 100 posts); resolves with the views of the posts that exist. Uses no `this`. */
  refresh: () => Promise<PostView[]>;
}

/** A feed page, read in one `refreshMany` when it mounts and whenever its ids change. */
export function useLikes(postIds: Iterable<PostIdInput>): FeedState;
