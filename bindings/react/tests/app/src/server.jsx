// The server side of the likekit-react tests, built by
// `vite build --ssr src/server.jsx` and imported by the test in Node.

import { renderToString } from "react-dom/server";
import { LikeKitProvider, useLike } from "likekit-react";

import { scene } from "./scenes.jsx";

/** Screen `name` rendered to HTML with `client` in the provider, as a server would. */
export function render(client, name, props) {
  return renderToString(<LikeKitProvider client={client}>{scene(name, props)}</LikeKitProvider>);
}

/**
 * Renders `useLike` for each post of `ids` with `client` in the provider,
 * and returns a WeakRef to each post's `toggle`: the store's record of the
 * post holds it, so it lives as long as the store keeps the record.
 */
export function renderHolding(client, ids) {
  const held = [];
  function Probe({ postId }) {
    held.push(new WeakRef(useLike(postId).toggle));
    return null;
  }
  renderToString(
    <LikeKitProvider client={client}>
      {ids.map((id) => (
        <Probe key={id} postId={id} />
      ))}
    </LikeKitProvider>,
  );
  return held;
}
