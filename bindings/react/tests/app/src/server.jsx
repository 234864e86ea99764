// The server side of the likekit-react tests, built by
// `vite build --ssr src/server.jsx` and imported by the test in Node.

import { version } from "react";
import { renderToString } from "react-dom/server";
import { LikeKitProvider, useLike, useLikes } from "likekit-react";

import { scene } from "./scenes.jsx";

/** The React the bundle was built with. */
export const reactVersion = version;

/**
 * Screen `name` rendered to HTML with `client` in the provider, as a
 * server would, and `initialViews` (if given) as the provider's seeds.
 */
export function render(client, name, props, initialViews) {
  return renderToString(
    <LikeKitProvider client={client} initialViews={initialViews}>
      {scene(name, props)}
    </LikeKitProvider>,
  );
}

/**
 * What the hooks give on the server for `ids` with `initialViews` in a
 * provider without a client: `useLike`'s view and `seeded` of each post,
 * and `useLikes`'s views of all of them.
 */
export function renderViews(initialViews, ids) {
  const buttons = [];
  let page = null;
  function Probe({ postId }) {
    const { view, seeded } = useLike(postId);
    buttons.push({ view, seeded });
    return null;
  }
  function Page() {
    page = useLikes(ids).views;
    return ids.map((id) => <Probe key={id} postId={id} />);
  }
  renderToString(
    <LikeKitProvider client={null} initialViews={initialViews}>
      <Page />
    </LikeKitProvider>,
  );
  return { buttons, page };
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
