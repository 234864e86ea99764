// Way 1: the page's buttons render the placeholder on the server and get
// their views once the browser has made its client.
import { Likes } from "./likes.jsx";

export const dynamic = "force-dynamic";

export default async function Home({ searchParams }) {
  const { token = "", posts = "" } = await searchParams;
  const postIds = posts.split(",").filter(Boolean);
  return (
    <main>
      <Likes url={process.env.LIKEKIT_URL} token={token} postIds={postIds} />
    </main>
  );
}
