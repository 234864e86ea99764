// The Next.js test app of likekit-react: `cargo xtask test --only react`
// builds it twice with `next build` and the test runs each build with
// `next start`. LIKEKIT_NEXT_EXTERNAL=1 builds it with way 2 of the
// likekit-wasm README (`serverExternalPackages`) into .next/external;
// without it, as way 1 needs it (no setting) into .next/bundled.
import path from "node:path";

const external = process.env.LIKEKIT_NEXT_EXTERNAL === "1";

export default {
  distDir: external ? ".next/external" : ".next/bundled",
  serverExternalPackages: external ? ["likekit-wasm"] : [],
  // Next.js itself and React are linked from the repository's .tools/node,
  // outside this folder: the build may read the whole repository.
  turbopack: { root: path.resolve(import.meta.dirname, "../../../..") },
};
