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

export function ReadmeClient({ url, viewer, token, postId }) {
  // A new token function on every render, as an app's inline one is.
  const { client, error } = useBrowserLikeClient(url, viewer, () => token);
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
