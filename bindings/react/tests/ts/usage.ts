// likekit-react's declarations, used as an app uses them, for
// `tsc --noEmit --strict` (`cargo xtask test --only typescript`), against
// React's own types and the built likekit-wasm. Nothing here runs.

import { createElement, type ReactElement } from "react";
import { LikeClient, type LikeError, type PostView } from "likekit-wasm";
import {
  LikeKitProvider,
  useLike,
  useLikeClient,
  useLikes,
  type FeedState,
  type InitialViews,
  type LikeKitClient,
  type LikeKitProviderProps,
  type LikeState,
  type PostLikes,
} from "likekit-react";

export function LikeButton({ postId }: { postId: number | string | bigint }): ReactElement {
  const state: LikeState = useLike(postId);
  const { view, seeded, failure, error, toggle, setLiked, reload } = state;
  const shown: PostView | undefined = view;
  const fromSeed: boolean = seeded;
  void fromSeed;
  const readError: LikeError | Error | null = error;
  const afterTap: PostView | undefined = toggle() ?? setLiked(true);
  const again: Promise<void> = reload();
  void [shown, readError, afterTap, again];
  // The functions are properties, not methods: they need no `this`, so
  // destructuring them is safe (typescript-eslint's unbound-method), and
  // their parameters are checked as a function's are.
  const narrowed: LikeState = {
    ...state,
    // @ts-expect-error a property's parameter is checked contravariantly, a method's is not
    setLiked: (liked: true) => (liked ? view : undefined),
  };
  void narrowed;
  // A LikeError has a code; a plain Error (a client that could not be called) has none.
  const why = error && ("code" in error ? error.code : error.message);
  if (!view && error) return createElement("button", { onClick: reload }, `Try again (${why})`);
  return createElement(
    "button",
    { "aria-pressed": view?.liked ?? false, disabled: !view, onClick: toggle },
    view ? view.count.toLocaleString() : "…",
    failure ? failure.message : null,
  );
}

export function Feed({ postIds }: { postIds: readonly number[] }): ReactElement {
  const feed: FeedState = useLikes(postIds);
  const { views, refreshing, error, refresh } = feed;
  const reread: Promise<PostView[]> = refresh();
  const rereadAlone: () => Promise<PostView[]> = feed.refresh;
  void [reread, rereadAlone];
  // The provider's client is the app's `LikeClient`, every member of it.
  const client: LikeClient | null = useLikeClient();
  const stats = client?.stats().taps;
  const narrow: LikeKitClient | null = useLikeClient<LikeKitClient>();
  void [stats, narrow, refreshing];
  return createElement("p", null, error ? error.message : `${views.length} posts`);
}

export function App(client: LikeClient | null): ReactElement {
  const props: LikeKitProviderProps = { client, children: createElement(Feed, { postIds: [42, 43] }) };
  return LikeKitProvider(props);
}

/** A page seeded with the server's answer to `GET /likes?posts=42,43`, as the JSON comes. */
export function SeededApp(client: LikeClient | null, answer: { posts: Record<string, PostLikes> }): ReactElement {
  const seeds: InitialViews = answer.posts;
  const byId: InitialViews = new Map([[42n, { count: 1204, liked_by_me: true, friends: ["Ana"], version: 9 }]]);
  // The answer of a like (no friends) fits too.
  const liked: PostLikes = { count: 1, liked_by_me: true, version: 1 };
  // @ts-expect-error a view needs liked_by_me
  const incomplete: PostLikes = { count: 1 };
  void [byId, liked, incomplete];
  return createElement(LikeKitProvider, { client, initialViews: seeds }, createElement(Feed, { postIds: [42, 43] }));
}
