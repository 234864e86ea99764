// Seeded: the server component reads the viewer's views of the page's
// posts from the LikeKit server with the viewer's token (one GET /likes,
// no LikeKit client on the server) and gives them to the provider as
// `initialViews`. The HTML has each heart, count and line; the browser's
// client takes over once it has read the posts itself. Works in both
// builds: nothing here needs likekit-wasm on the server.
import { Likes } from "../likes.jsx";

export const dynamic = "force-dynamic";

/** The viewer's views of `postIds` as the server answers them, or none if the read fails. */
async function readLikes(token, postIds) {
  if (postIds.length === 0) return undefined;
  try {
    const answer = await fetch(`${process.env.LIKEKIT_URL}/likes?posts=${postIds.join(",")}`, {
      headers: { authorization: `Bearer ${token}` },
      cache: "no-store",
    });
    // Without views the page shows the placeholder, as it would without seeds.
    return answer.ok ? (await answer.json()).posts : undefined;
  } catch {
    return undefined;
  }
}

export default async function Seeded({ searchParams }) {
  const { token = "", posts = "" } = await searchParams;
  const postIds = posts.split(",").filter(Boolean);
  const initialViews = await readLikes(token, postIds);
  return (
    <main>
      <Likes url={process.env.LIKEKIT_URL} token={token} postIds={postIds} initialViews={initialViews} />
    </main>
  );
}
