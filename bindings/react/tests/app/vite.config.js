// The likekit-react test app: `cargo xtask test --only react` builds it
// twice, for the browser (served by likekit-server's --web-root) and for
// Node (`--ssr src/server.jsx`, the server-rendering test), with the
// packages linked into ./node_modules by the runner.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The likekit-wasm README, whose `useBrowserLikeClient` the app runs as written. */
const README = fileURLToPath(new URL("../../../wasm/README.md", import.meta.url));
/** How the app imports that hook. */
const README_HOOK = "likekit-readme:use-browser-like-client";
/** The file the hook poses as: a `.tsx` beside the app's own, so Vite compiles its types away and its imports resolve from the app. */
const README_HOOK_FILE = fileURLToPath(new URL("./src/use-browser-like-client.readme.tsx", import.meta.url));

/**
 * The README's code block that defines `useBrowserLikeClient` (in a list
 * item, so indented), as a module; the build fails when there is none.
 */
function readmeHook() {
  return {
    name: "likekit-readme-hook",
    resolveId: (id) => (id === README_HOOK ? README_HOOK_FILE : null),
    load(id) {
      if (id !== README_HOOK_FILE) return null;
      this.addWatchFile(README);
      const text = readFileSync(README, "utf8");
      for (const [, indent, code] of text.matchAll(/^( *)```tsx\n([^]*?)^\1```$/gm)) {
        if (!code.includes("export function useBrowserLikeClient(")) continue;
        return code
          .split("\n")
          .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
          .join("\n");
      }
      this.error(`${README} has no tsx block that exports useBrowserLikeClient`);
    },
  };
}

export default ({ isSsrBuild }) => ({
  plugins: [readmeHook()],
  // Vite's own transform compiles JSX (and the README hook's types).
  oxc: { jsx: { runtime: "automatic" } },
  resolve: {
    // likekit-react is linked from bindings/react, where no react is
    // installed: its `import "react"` takes the app's copy.
    dedupe: ["react", "react-dom"],
  },
  // The server bundle carries React with it, so it runs from target/.
  ssr: { noExternal: true },
  build: {
    target: "es2022",
    rolldownOptions: isSsrBuild ? { output: { entryFileNames: "[name].mjs" } } : {},
  },
});
