// The floor: the same button on React alone, a local state and no network:
// what every React app ships and how soon React alone redraws a click,
// before any library for the like button, so the bench can say what each
// library adds.

import { useState } from "react";
import { createRoot } from "react-dom/client";

import { Card, pageParams } from "../card.jsx";

function LikeButton({ postId }) {
  const [shown, setShown] = useState({ liked: false, count: 0, line: "", pending: false, failure: null });
  const tap = () =>
    setShown((old) => ({ ...old, liked: !old.liked, count: old.count + (old.liked ? -1 : 1) }));
  return <Card postId={postId} shown={shown} onTap={tap} />;
}

createRoot(document.getElementById("root")).render(
  pageParams().posts.map((id) => <LikeButton key={id} postId={id} />),
);
window.bench = { settled: async () => true };
document.body.dataset.ready = "true";
