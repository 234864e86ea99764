// A server component that renders the provider itself: the package's
// "use client" makes LikeKitProvider a client reference, so the build
// takes it (without the directive it fails on `createContext`). The
// provider has no client here (a client cannot cross from the server to
// the browser), so the buttons show the placeholder.
import { LikeKitProvider } from "likekit-react";

import { LikeButtons } from "../likes.jsx";

export const dynamic = "force-dynamic";

export default async function ProviderInServer({ searchParams }) {
  const { posts = "" } = await searchParams;
  const postIds = posts.split(",").filter(Boolean);
  return (
    <main>
      <LikeKitProvider client={null}>
        <LikeButtons postIds={postIds} />
      </LikeKitProvider>
    </main>
  );
}
