// The same like button written the way a React team would without
// LikeKit: TanStack Query v5, the count read with `useQuery` from
// GET /posts/{id}/likes, a tap sent with `useMutation` as POST or DELETE
// /posts/{id}/like, following the library's guide to optimistic updates
// "via the cache": `onMutate` cancels the post's reads, keeps the previous
// data and writes the optimistic one; `onError` puts the previous data
// back; `onSettled` invalidates the query so it is read again. Failed
// calls that may succeed later are retried with exponential backoff and
// jitter on the schedule LikeKit uses by default (0.5 s, 1 s, 2 s, 4 s).
// This is the peer `cargo xtask bench --only web` measures LikeKit
// against; it is bench code, not part of any package.

import { useState } from "react";
import { createRoot } from "react-dom/client";
import {
  QueryClient,
  QueryClientProvider,
  useMutation,
  useQuery,
  useQueryClient,
} from "@tanstack/react-query";

import { Card, pageParams } from "../card.jsx";

const { posts, token } = pageParams();

/** An error answer, or no answer (status null). */
class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** One call to the API with the viewer's bearer token; the JSON answer. */
async function api(method, path, signal) {
  let response;
  try {
    response = await fetch(path, { method, signal, headers: { Authorization: `Bearer ${token}` } });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiError(null, "network", String(error?.message ?? error));
  }
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    throw new ApiError(response.status, body?.error?.code ?? `http_${response.status}`, body?.error?.message ?? "");
  }
  return body;
}

/** Worth another try: no answer, 429 or a server error. */
const transient = (error) =>
  error instanceof ApiError && (error.status === null || error.status === 429 || error.status >= 500);

/** "Liked by you, Ana and 1,202 others", as LikeKit's line says it. */
function likeLine({ count, liked_by_me: you, friends }) {
  const names = [...(you ? ["you"] : []), ...friends.slice(0, 2)];
  const total = Math.max(count, names.length);
  const others = total - names.length;
  const n = (value) => value.toLocaleString("en-US");
  if (names.length === 0) return total === 0 ? "" : total === 1 ? "1 like" : `${n(total)} likes`;
  const listed =
    others === 0 && names.length > 1
      ? `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`
      : names.join(", ");
  const rest = others === 0 ? "" : others === 1 ? " and 1 other" : ` and ${n(others)} others`;
  return `Liked by ${listed}${rest}`;
}

const likesKey = (postId) => ["likes", postId];

function LikeButton({ postId }) {
  const queryClient = useQueryClient();
  const queryKey = likesKey(postId);
  const [failure, setFailure] = useState(null);
  const { data } = useQuery({
    queryKey,
    queryFn: ({ signal }) => api("GET", `/posts/${postId}/likes`, signal),
  });
  const { mutate, isPending } = useMutation({
    mutationFn: (liked) => api(liked ? "POST" : "DELETE", `/posts/${postId}/like`),
    // When mutate is called:
    onMutate: async (liked) => {
      setFailure(null);
      // Cancel any outgoing refetches, so they don't overwrite the optimistic update.
      await queryClient.cancelQueries({ queryKey });
      // Snapshot the previous value.
      const previous = queryClient.getQueryData(queryKey);
      // Optimistically update to the new value.
      queryClient.setQueryData(queryKey, (old) =>
        old && old.liked_by_me !== liked
          ? { ...old, liked_by_me: liked, count: old.count + (liked ? 1 : -1) }
          : old,
      );
      return { previous };
    },
    // If the mutation fails, roll back to the snapshot onMutate returned.
    onError: (error, liked, context) => {
      queryClient.setQueryData(queryKey, context?.previous);
      setFailure("Your like didn't save. Try again.");
    },
    // Always refetch after error or success; returning the promise keeps
    // the mutation pending until the refetch is done.
    onSettled: () => queryClient.invalidateQueries({ queryKey }),
    retry: (failureCount, error) => failureCount < 4 && transient(error),
    retryDelay: (failureCount) => {
      const delay = Math.min(500 * 2 ** failureCount, 8000);
      return delay + Math.random() * delay;
    },
  });
  const shown = data && {
    liked: data.liked_by_me,
    count: data.count,
    line: likeLine(data),
    pending: isPending,
    failure,
  };
  return <Card postId={postId} shown={shown} onTap={() => mutate(!data.liked_by_me)} />;
}

const queryClient = new QueryClient();

createRoot(document.getElementById("root")).render(
  <QueryClientProvider client={queryClient}>
    {posts.map((id) => (
      <LikeButton key={id} postId={id} />
    ))}
  </QueryClientProvider>,
);

/** Nothing is being read or written, for the bench to wait on. */
const idle = () => queryClient.isFetching() === 0 && queryClient.isMutating() === 0;

window.bench = {
  /** Resolves true once no query is fetching and no mutation is pending (checked every 5 ms), false after `timeoutMs`. */
  settled: async (timeoutMs) => {
    const end = performance.now() + timeoutMs;
    while (!idle()) {
      if (performance.now() > end) return false;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return true;
  },
};
document.body.dataset.ready = "true";
