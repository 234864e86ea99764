// The package's Node entry (`node.js`, the "node" export condition):
// importing it reads nothing, so a bundler may import it into a server
// build (Next.js renders a "use client" component on the server too) where
// the `.wasm` cannot be read; the module is read by the first `init()` or
// the first client made, with an error that says what to do when it is not
// there. Run it with `cargo xtask test --only node`, which builds
// bindings/wasm/pkg (LIKEKIT_PKG) and links it as node_modules/likekit-wasm.

import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const PKG = process.env.LIKEKIT_PKG;
const WASM = "likekit_wasm_bg.wasm";

/** A copy of the package in a folder of its own, without its `.wasm`. */
function copyWithoutWasm() {
  const dir = mkdtempSync(join(tmpdir(), "likekit-node-entry-"));
  for (const file of ["node.js", "likekit_wasm.js", "package.json"]) {
    copyFileSync(join(PKG, file), join(dir, file));
  }
  return dir;
}

/** The error the entry gives when it cannot read the module. */
const unreadable = (what) => (e) => {
  assert.match(e.message, /could not read its WebAssembly module \(likekit_wasm_bg\.wasm\)/, what);
  assert.match(e.message, /serverExternalPackages/, what);
  return true;
};

// First, before anything in this process loads the module: plain Node code
// that never calls init(), as the README's Node usage goes.
test("plain Node: a client made without init() loads the module itself", async () => {
  const { default: init, LikeClient, ScriptedServer } = await import("likekit-wasm");
  const server = new ScriptedServer();
  const client = LikeClient.scripted(server, { retry: { maxRetries: 0 } });
  assert.ok(client instanceof LikeClient);
  assert.ok(server instanceof ScriptedServer);
  assert.equal(client.setLiked(42, true).pending, true);
  await init(); // resolves at once: the module is loaded
  await init();
  client.free();
  server.free();
});

test("without its .wasm the entry imports, and init() and new clients say what is missing", async () => {
  const dir = copyWithoutWasm();
  try {
    const entry = await import(pathToFileURL(join(dir, "node.js")));
    await assert.rejects(entry.default(), (e) => {
      unreadable("init()")(e);
      assert.equal(e.cause?.code, "ENOENT");
      assert.ok(e.message.includes(join(dir, WASM)), "the path it looked at");
      return true;
    });
    assert.throws(() => entry.initSync(), unreadable("initSync()"));
    assert.throws(() => new entry.LikeClient("http://127.0.0.1:1"), unreadable("new LikeClient"));
    assert.throws(() => new entry.ScriptedServer(), unreadable("new ScriptedServer"));

    // The file is back: the next use loads it.
    copyFileSync(join(PKG, WASM), join(dir, WASM));
    const server = new entry.ScriptedServer();
    const client = entry.LikeClient.scripted(server);
    assert.ok(client instanceof entry.LikeClient);
    client.free();
    server.free();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("moved by a bundler where import.meta.url is no file: URL, the entry imports and init() says so", async () => {
  const dir = copyWithoutWasm();
  try {
    // What a server bundle does to the entry: the `.wasm` becomes an asset
    // under a URL of the bundler's, not a file beside the code.
    const bundled = readFileSync(join(dir, "node.js"), "utf8").replaceAll(
      "import.meta.url",
      '"http://localhost:3000/_next/static/media/node.js"',
    );
    writeFileSync(join(dir, "node.js"), bundled);
    const entry = await import(pathToFileURL(join(dir, "node.js")));
    await assert.rejects(entry.default(), (e) => {
      unreadable("init()")(e);
      assert.match(e.message, /http:\/\/localhost:3000\/_next\/static\/media\/likekit_wasm_bg\.wasm: it is not a file/);
      return true;
    });
    assert.throws(() => new entry.LikeClient("http://127.0.0.1:1"), unreadable("new LikeClient"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("every class wasm-bindgen's module exports is one the entry loads the module for", async () => {
  const glue = await import(pathToFileURL(join(PKG, "likekit_wasm.js")));
  const entry = readFileSync(join(PKG, "node.js"), "utf8");
  const classes = Object.entries(glue)
    .filter(([, value]) => typeof value === "function" && /^class\b/.test(Function.prototype.toString.call(value)))
    .map(([name]) => name);
  assert.ok(classes.includes("LikeClient") && classes.includes("ScriptedServer"), classes.join(", "));
  for (const name of classes) {
    assert.ok(entry.includes(`export const ${name} = loadingFirst(glue.${name});`), `${name} is wrapped`);
  }
});
