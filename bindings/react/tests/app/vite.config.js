// The likekit-react test app: `cargo xtask test --only react` builds it
// twice, for the browser (served by likekit-server's --web-root) and for
// Node (`--ssr src/server.jsx`, the server-rendering test), with the
// packages linked into ./node_modules by the runner.
export default ({ isSsrBuild }) => ({
  // Vite's own transform compiles JSX; a production build needs no plugin.
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
