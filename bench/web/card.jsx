// The like button's markup, shared by the three bench apps so that the
// DOM each one changes on a click is the same and only the library that
// drives it differs. `shown` is undefined until the app knows the post.

/** What the page is asked to show: `?posts=1,2,3#token=…`. */
export function pageParams() {
  const posts = (new URLSearchParams(location.search).get("posts") ?? "")
    .split(",")
    .filter(Boolean)
    .map(Number);
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  return { posts, token };
}

/**
 * One post: the heart, the count and the line under it, and the failure
 * message while there is one.
 * @param {{ postId: number, shown?: { liked: boolean, count: number, line: string, pending: boolean, failure: string | null }, onTap: () => void }} props
 */
export function Card({ postId, shown, onTap }) {
  return (
    <article
      className="post"
      data-post-id={String(postId)}
      data-known={String(shown !== undefined)}
      data-pending={shown ? String(shown.pending) : "unknown"}
    >
      <button
        type="button"
        className="heart"
        aria-pressed={shown ? shown.liked : false}
        disabled={!shown}
        onClick={onTap}
      >
        ♥
      </button>
      <span className="count">{shown ? shown.count.toLocaleString("en-US") : "…"}</span>
      <p className="line">{shown ? shown.line || "No likes yet" : ""}</p>
      {shown?.failure && (
        <p className="failure" role="alert">
          {shown.failure}
        </p>
      )}
    </article>
  );
}
