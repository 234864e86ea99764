// Way 2: with `serverExternalPackages: ["likekit-wasm"]` a client made on
// the server reads the posts while rendering, and the HTML has the server's
// view. The buttons below are rendered with that client in the provider.
import { LikeClient } from "likekit-wasm";

import { Likes } from "../likes.jsx";

export const dynamic = "force-dynamic";

/** One client for the server process, signed in as the site. */
let client = null;

export default async function ServerView({ searchParams }) {
  const { token = "", posts = "" } = await searchParams;
  const postIds = posts.split(",").filter(Boolean);
  client ??= new LikeClient(process.env.LIKEKIT_URL, { token: () => process.env.LIKEKIT_SERVER_TOKEN });
  const views = await client.refreshMany(postIds);
  return (
    <main>
      <ul className="server-view">
        {views.map((view) => (
          <li key={String(view.postId)} data-post-id={String(view.postId)} data-count={view.count}>
            {view.count} likes
          </li>
        ))}
      </ul>
      <Likes url={process.env.LIKEKIT_URL} token={token} postIds={postIds} serverClient />
    </main>
  );
}
