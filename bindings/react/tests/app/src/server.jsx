// The server side of the likekit-react tests, built by
// `vite build --ssr src/server.jsx` and imported by the test in Node.

import { renderToString } from "react-dom/server";
import { LikeKitProvider } from "likekit-react";

import { scene } from "./scenes.jsx";

/** Screen `name` rendered to HTML with `client` in the provider, as a server would. */
export function render(client, name, props) {
  return renderToString(<LikeKitProvider client={client}>{scene(name, props)}</LikeKitProvider>);
}
