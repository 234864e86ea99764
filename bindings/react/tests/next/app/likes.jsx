"use client";
// Way 1 of the likekit-wasm README ("Next.js and server rendering"): the
// client is made in the browser only, in an effect, and the provider has
// null until then. With way 2's setting, the server's pages may give the
// provider the server process's client while rendering there instead.

import { useEffect, useRef, useState } from "react";
import init, { LikeClient } from "likekit-wasm";
import { LikeKitProvider, useLike } from "likekit-react";

/**
 * The README's hook, as an app would copy it (without its types; the
 * likekit-react test app runs the README's own text).
 */
function useBrowserLikeClient(url, viewer, token, options) {
  const [client, setClient] = useState(null);
  const [error, setError] = useState(null);
  // The latest token function and options: new ones on every render
  // make no new client.
  const latest = useRef({ token, options });
  useEffect(() => {
    latest.current = { token, options };
  });
  // One client per viewer: the next viewer gets a new one, never the
  // last one's client and token.
  useEffect(() => {
    if (viewer === null) return;
    let gone = false;
    // This viewer's token while the client is theirs; none once the
    // viewer has changed, whatever the token function would answer.
    const tokenOfViewer = (refresh) => (gone ? null : latest.current.token(viewer, refresh));
    init()
      .then(() => {
        if (!gone) setClient(new LikeClient(url, { ...latest.current.options, token: tokenOfViewer }));
      })
      .catch((e) => {
        if (!gone) setError(e);
      });
    return () => {
      gone = true; // from now on its requests go without a token;
      setClient(null); // the tree stops drawing from it...
      setError(null);
    };
  }, [url, viewer]);
  // ...and once the render without it has committed, it is shut down
  // (calls still out get a second), then freed.
  useEffect(() => {
    if (client === null) return;
    return () => {
      client.shutdown(1000).finally(() => client.free());
    };
  }, [client]);
  return { client, error };
}

/** The server process's client (way 2), made on first use, signed in as the site. */
let processClient = null;

/** That client on the server; null in the browser. */
function onServer(url) {
  if (typeof window !== "undefined") return null;
  processClient ??= new LikeClient(url, { token: () => process.env.LIKEKIT_SERVER_TOKEN });
  return processClient;
}

function LikeButton({ postId }) {
  const { view, seeded, toggle } = useLike(postId);
  return (
    <article
      className="post"
      data-post-id={String(postId)}
      data-pending={view ? String(view.pending) : "unknown"}
      data-seeded={seeded ? "true" : undefined}
    >
      <button
        type="button"
        className="heart"
        aria-pressed={view?.liked ?? false}
        disabled={!view || seeded}
        onClick={toggle}
      >
        ♥
      </button>
      <span className="count">{view ? view.count : "…"}</span>
      {view?.line ? <p className="line">{view.line}</p> : null}
    </article>
  );
}

/**
 * A like button per post, drawn from whatever provider is above (for a
 * server component that renders the provider itself).
 */
export function LikeButtons({ postIds }) {
  return (
    <section className="plain-likes">
      {postIds.map((id) => (
        <LikeButton key={id} postId={id} />
      ))}
    </section>
  );
}

/**
 * A like button per post. With `serverClient`, the provider has the
 * server process's client while rendering on the server, instead of null.
 * `initialViews` are the provider's seeds (the page's read on the server).
 */
export function Likes({ url, token, postIds, serverClient = false, initialViews }) {
  // The token stands for the viewer here: a new token, a new client.
  const { client: browser } = useBrowserLikeClient(url, token || null, (viewer) =>
    viewer === token ? token : null,
  );
  const server = serverClient ? onServer(url) : null;
  // `data-server-client` says which client the server rendered with; the
  // browser's first render has none, hence no hydration warning for it.
  return (
    <LikeKitProvider client={browser ?? server} initialViews={initialViews}>
      <section
        className="likes"
        data-client={browser ? "browser" : "none"}
        data-server-client={String(server !== null)}
        suppressHydrationWarning
      >
        {postIds.map((id) => (
          <LikeButton key={id} postId={id} />
        ))}
      </section>
    </LikeKitProvider>
  );
}
