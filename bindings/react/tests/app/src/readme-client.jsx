// The likekit-wasm README's `useBrowserLikeClient`, compiled from the
// README itself (see vite.config.js), on a screen of its own: the
// viewer's client made in an effect, replaced when the viewer changes,
// shut down and freed once nothing draws from it.

import { useEffect } from "react";
import { LikeKitProvider } from "likekit-react";
import { useBrowserLikeClient } from "likekit-readme:use-browser-like-client";

import { LikeButton } from "./scenes.jsx";

/** Every client the hook gave, in order. */
export const readmeClients = [];

/**
 * `token` is the signed-in viewer's. The token function is the README's:
 * the token for the viewer asked about while that viewer is `viewer`, else
 * null; with `ignoresViewer`, a careless one that gives `token` whoever is
 * asked about, which the hook must keep from the last viewer's client.
 * `options` go to the hook (the client's options but `token`).
 */
export function ReadmeClient({ url, viewer, token, postId, options, ignoresViewer = false }) {
  // A new token function on every render, as an app's inline one is.
  const tokenFor = ignoresViewer ? () => token : (asked) => (asked === viewer ? token : null);
  const { client, error } = useBrowserLikeClient(url, viewer, tokenFor, options);
  useEffect(() => {
    if (client && !readmeClients.includes(client)) readmeClients.push(client);
  }, [client]);
  return (
    <section
      className="readme-client"
      data-viewer={viewer ?? ""}
      data-client={client ? "made" : "none"}
      data-error={error ? (error.code ?? error.name) : ""}
    >
      <LikeKitProvider client={client}>
        <LikeButton postId={postId} />
      </LikeKitProvider>
    </section>
  );
}
