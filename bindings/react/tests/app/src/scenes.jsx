// The screens the tests mount, shared by the browser app (main.jsx) and
// the server bundle (server.jsx). Nothing here imports likekit-wasm: the
// client comes from the provider.

import { useState } from "react";
import { useLike, useLikes } from "likekit-react";

/** Every render of a LikeButton: which post it was asked for, and the view and read error it drew. */
export const renders = [];
/** Every render of a Page (the component above its buttons), with what it showed. */
export const pageRenders = [];
/** The latest taps `useLike` gave each post's button, by post id: for calling them while the heart is disabled. */
export const taps = new Map();

export function LikeButton({ postId }) {
  const { view, seeded, failure, error, toggle, setLiked, reload } = useLike(postId);
  renders.push({ postId: String(postId), viewPostId: view ? String(view.postId) : null, view, seeded, error });
  taps.set(String(postId), { toggle, setLiked });
  return (
    <article
      className="post"
      data-post-id={String(postId)}
      data-pending={view ? String(view.pending) : "unknown"}
      data-seeded={seeded ? "true" : undefined}
    >
      {/* A seed shows the post; taps wait for the client's own view. */}
      <button
        type="button"
        className="heart"
        aria-pressed={view ? view.liked : false}
        disabled={!view || seeded}
        onClick={toggle}
      >
        ♥
      </button>
      <span className="count">{view ? view.count.toLocaleString("en-US") : "…"}</span>
      <p className="line">{view ? view.line || "No likes yet" : ""}</p>
      {failure && (
        <p className="failure" role="alert">
          {failure.message}
        </p>
      )}
      {!view && error && (
        <p className="read-error" role="alert" data-code={error.code}>
          Couldn't load the likes.{" "}
          <button type="button" className="reload" onClick={reload}>
            Try again
          </button>
        </p>
      )}
    </article>
  );
}

/** One button whose post changes with "Next post". */
function Switcher({ ids }) {
  const [index, setIndex] = useState(0);
  return (
    <section className="switcher" data-index={index}>
      <button type="button" id="next" onClick={() => setIndex((i) => (i + 1) % ids.length)}>
        Next post
      </button>
      <LikeButton postId={ids[index]} />
    </section>
  );
}

/** A feed page: one read for all of it, a button per post, and maybe one post outside the page. */
function Feed({ ids, extra }) {
  const { views, refreshing, error, refresh } = useLikes(ids);
  const [refreshed, setRefreshed] = useState(0);
  const known = views.filter((view) => view !== undefined).length;
  const again = () => {
    refresh()
      .catch(() => {})
      .finally(() => setRefreshed((n) => n + 1));
  };
  return (
    <section
      className="feed"
      data-known={known}
      data-refreshing={String(refreshing)}
      data-refreshed={refreshed}
      data-error={error ? error.code : ""}
      data-counts={views.map((view) => view?.count ?? "").join(",")}
    >
      <button type="button" id="refresh" onClick={again}>
        Refresh
      </button>
      {ids.map((id, i) => (
        <LikeButton key={`${id}-${i}`} postId={id} />
      ))}
      {extra !== undefined && (
        <aside className="extra">
          <LikeButton postId={extra} />
        </aside>
      )}
    </section>
  );
}

/**
 * The README's feed: the page's read above buttons that each show their
 * post, reading no views itself (only `refreshing` and `error`).
 */
function Page({ ids }) {
  const { refreshing, error, refresh } = useLikes(ids);
  pageRenders.push({ refreshing, error });
  return (
    <section className="page" data-refreshing={String(refreshing)} data-error={error ? error.code : ""}>
      {error && (
        <button type="button" className="reload" onClick={() => refresh().catch(() => {})}>
          Try again
        </button>
      )}
      {ids.map((id) => (
        <LikeButton key={id} postId={id} />
      ))}
    </section>
  );
}

/** Buttons of their own (no page read), for `ids` and then `bigints` as BigInts. */
function Buttons({ ids, bigints = [] }) {
  const all = [...ids, ...bigints.map(BigInt)];
  return (
    <section className="buttons">
      {all.map((id, i) => (
        <LikeButton key={`${typeof id}-${id}-${i}`} postId={id} />
      ))}
    </section>
  );
}

/** The screen called `name`. */
export function scene(name, props) {
  switch (name) {
    case "button":
      return <LikeButton postId={props.postId} />;
    case "switcher":
      return <Switcher ids={props.ids} />;
    case "feed":
      return <Feed ids={props.ids} extra={props.extra} />;
    case "feeds":
      return props.pages.map((ids, i) => <Feed key={i} ids={ids} />);
    case "page":
      return <Page ids={props.ids} />;
    case "buttons":
      return <Buttons ids={props.ids} bigints={props.bigints} />;
    default:
      throw new Error(`no scene ${name}`);
  }
}
