// The bench apps' one Vite config: `cargo xtask bench --only web` builds
// each app folder (likekit/, tanstack/, floor/) with it, in production
// mode, with the packages linked into bench/web/node_modules.
export default {
  // Vite's own transform compiles JSX; no plugin.
  oxc: { jsx: { runtime: "automatic" } },
  resolve: {
    // likekit-react is linked from bindings/react, where no react is
    // installed: its `import "react"` takes the bench's copy.
    dedupe: ["react", "react-dom"],
  },
  build: {
    target: "es2022",
    rolldownOptions: {
      // TanStack Query's modules start with "use client", which only
      // React Server Components bundlers read; a browser bundle drops it.
      onwarn(warning, warn) {
        if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
      },
    },
  },
};
