// Node entry point. Importing it reads nothing: the WebAssembly module is
// read from disk, next to this file, by the first `init()` or `initSync()`,
// or else by the first `new LikeClient`, `LikeClient.scripted` or
// `new ScriptedServer`. So code written for browsers (`await init()`
// first) runs as is, plain Node code may skip `init()`, and a bundler that
// imports the package into a server build (Next.js server-side rendering)
// can import it even where the file cannot be read, as long as no client
// is made there.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import glueInit, * as glue from "./likekit_wasm.js";

const WASM = "likekit_wasm_bg.wasm";

/**
 * The module's path on disk. Throws when a bundler moved this file where
 * `import.meta.url` is no `file:` URL.
 */
function wasmPath() {
  const url = String(new URL(`./${WASM}`, import.meta.url));
  if (!url.startsWith("file:")) throw notFound(url);
  return fileURLToPath(url);
}

/** Why the module could not be read, as an `Error` that says what to do. */
function notFound(path, cause) {
  const error = new Error(
    `likekit-wasm: could not read its WebAssembly module (${WASM}) at ${path}: ` +
      `${cause?.message ?? "it is not a file"}. The package's Node entry reads it from ` +
      "its own folder. A server bundle (Next.js) moves the file: make LikeKit clients in " +
      "the browser only, or keep the package out of the server bundle " +
      '(Next.js: serverExternalPackages: ["likekit-wasm"]).',
  );
  if (cause) error.cause = cause;
  return error;
}

function readModule() {
  const path = wasmPath();
  try {
    return readFileSync(path);
  } catch (e) {
    throw notFound(path, e);
  }
}

let ready = false;

/** Loads the module from disk, synchronously, unless it is loaded. */
function load() {
  if (!ready) {
    glue.initSync({ module: readModule() });
    ready = true;
  }
}

/**
 * Loads the module: from disk, or from `options` as wasm-bindgen's `init`
 * takes them. Resolves once it is loaded; calling it again does nothing.
 */
export default async function init(options) {
  if (ready) return glue.initSync(undefined);
  if (options !== undefined) {
    const exports = await glueInit(options);
    ready = true;
    return exports;
  }
  const path = wasmPath();
  let bytes;
  try {
    bytes = await readFile(path);
  } catch (e) {
    throw notFound(path, e);
  }
  const exports = glue.initSync({ module: bytes });
  ready = true;
  return exports;
}

/** Loads the module synchronously: from disk, or from `options`. */
export function initSync(options) {
  if (options !== undefined && !ready) {
    const exports = glue.initSync(options);
    ready = true;
    return exports;
  }
  load();
  return glue.initSync(undefined);
}

/**
 * `Class` with its constructor and static methods loading the module
 * first; `instanceof`, subclasses and every other member are `Class`'s.
 */
function loadingFirst(Class) {
  const statics = new Map();
  for (const key of Reflect.ownKeys(Class)) {
    const member = Class[key];
    if (typeof member === "function") {
      statics.set(key, function (...args) {
        load();
        return member.apply(Class, args);
      });
    }
  }
  return new Proxy(Class, {
    construct(target, args, newTarget) {
      load();
      return Reflect.construct(target, args, newTarget);
    },
    get(target, key, receiver) {
      return statics.has(key) ? statics.get(key) : Reflect.get(target, key, receiver);
    },
  });
}

// Every export of wasm-bindgen's module, with the classes and the
// initialisers replaced by the ones above (a module's own exports take
// precedence over `export *`).
export * from "./likekit_wasm.js";
export const LikeClient = loadingFirst(glue.LikeClient);
export const ScriptedServer = loadingFirst(glue.ScriptedServer);
