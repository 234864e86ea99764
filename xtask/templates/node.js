// Node entry point: the WebAssembly module is loaded from disk on import.
// `await init()` is harmless here, so code written for browsers runs as is.
import { readFileSync } from "node:fs";
import { initSync } from "./likekit_wasm.js";

initSync({ module: readFileSync(new URL("./likekit_wasm_bg.wasm", import.meta.url)) });

export { default } from "./likekit_wasm.js";
export * from "./likekit_wasm.js";
