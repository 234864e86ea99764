// The like button on likekit-react and likekit-wasm, as the package's
// README writes it: what `cargo xtask bench --only web` measures for
// LikeKit. The client's defaults (retries with backoff and jitter, one call
// at a time per post) are left as they ship.

import { createRoot } from "react-dom/client";
import init, { LikeClient } from "likekit-wasm";
import { LikeKitProvider, useLike } from "likekit-react";

import { Card, pageParams } from "../card.jsx";

// The figure: `init()` fetches, compiles and instantiates the .wasm.
const started = performance.now();
await init();
const initMs = performance.now() - started;

const { posts, token } = pageParams();
const client = new LikeClient(location.origin, { token });

function LikeButton({ postId }) {
  const { view, failure, toggle } = useLike(postId);
  const shown = view && {
    liked: view.liked,
    count: view.count,
    line: view.line,
    pending: view.pending,
    failure: failure ? failure.message : null,
  };
  return <Card postId={postId} shown={shown} onTap={toggle} />;
}

createRoot(document.getElementById("root")).render(
  <LikeKitProvider client={client}>
    {posts.map((id) => (
      <LikeButton key={id} postId={id} />
    ))}
  </LikeKitProvider>,
);

window.bench = {
  initMs,
  /** Resolves true once no call is in flight or waiting and every change was delivered. */
  settled: (timeoutMs) => client.waitIdle(timeoutMs),
};
document.body.dataset.ready = "true";
