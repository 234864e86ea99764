// The web transport (the core's fetch backend) against canned HTTP answers
// from a raw TCP server on loopback: what the server sees of each request,
// and how each answer is classified. The same cases as the native
// transport's wire-level tests (sdk-core/src/transport/native.rs), so both
// backends are held to one set of rules. Run it with
// `cargo xtask test --only node`, which builds bindings/wasm/pkg and links
// it as node_modules/likekit-wasm.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";

import { LikeClient } from "likekit-wasm";

const LIKED = '{"count":3,"liked_by_me":true,"version":9}';
const READ = '{"count":3,"liked_by_me":false,"friends":["Ana"],"version":9}';
const NO_RETRY = { maxRetries: 0 };

/** An answer with `content-length`. */
function http(status, headers, body) {
  const head = [`HTTP/1.1 ${status}`, "connection: close", ...headers, `content-length: ${Buffer.byteLength(body)}`];
  return { raw: `${head.join("\r\n")}\r\n\r\n${body}` };
}

const json = (status, body) => http(status, ["content-type: application/json"], body);

/** An answer in `piece`-byte chunks, without `content-length`. */
function chunked(status, body, piece) {
  let raw = `HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`;
  for (let at = 0; at < body.length; at += piece) {
    const chunk = body.slice(at, at + piece);
    raw += `${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`;
  }
  return { raw: `${raw}0\r\n\r\n` };
}

/** Spaces before the answer (which JSON allows): far over the caps the tests set. */
const PADDING = 128 << 20;
const PIECE = 16 << 10;

/**
 * LIKED after PADDING bytes of spaces, in chunks, written for as long as
 * the client takes them; `outcome` says how far the server got.
 */
function padded(status) {
  return {
    status,
    stream: true,
    outcome: { written: 0, whole: false, cut: false },
  };
}

/**
 * Serves `replies` in order, one per connection. Returns the base URL,
 * the request heads seen (lower-cased), and the connections closed by the
 * client before they were answered.
 */
async function serve(replies) {
  const heads = [];
  const hungUp = [];
  const queue = [...replies];
  const sockets = new Set();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    const reply = queue.shift();
    let head = "";
    let answered = false;
    socket.on("data", (data) => {
      if (answered) return;
      head += data.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      answered = true;
      heads.push(head.toLowerCase());
      answer(socket, reply, hungUp);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    heads,
    hungUp,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

function answer(socket, reply, hungUp) {
  if (reply === undefined || reply === "hang") {
    // Read the request, never answer; note when the client gives up.
    socket.on("close", () => hungUp.push(true));
    return;
  }
  if (reply === "drop") {
    socket.destroy();
    return;
  }
  if (reply.raw !== undefined) {
    socket.end(reply.raw);
    return;
  }
  if (reply.headThenHang !== undefined) {
    socket.write(reply.headThenHang);
    socket.on("close", () => hungUp.push(true));
    return;
  }
  // A padded stream, written while the client reads.
  const { outcome } = reply;
  socket.write(
    `HTTP/1.1 ${reply.status}\r\nconnection: close\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`,
  );
  const piece = Buffer.concat([Buffer.from(`${PIECE.toString(16)}\r\n`), Buffer.alloc(PIECE, " "), Buffer.from("\r\n")]);
  let left = PADDING / PIECE;
  socket.on("close", () => {
    if (!outcome.whole) outcome.cut = true;
  });
  const more = () => {
    while (left > 0 && !socket.destroyed) {
      left -= 1;
      outcome.written += piece.length;
      if (!socket.write(piece)) {
        socket.once("drain", more);
        return;
      }
    }
    if (left === 0 && !socket.destroyed) {
      outcome.whole = true;
      socket.end(`${LIKED.length.toString(16)}\r\n${LIKED}\r\n0\r\n\r\n`);
    }
  };
  more();
}

/** Waits until `check()` is truthy; fails after `ms` (a bound, not a speed target). */
async function waitFor(check, what, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The server got out no more than the sockets' buffers hold: the client hung up early. */
async function assertHungUpEarly(outcome) {
  await waitFor(() => outcome.cut || outcome.whole, "the server to finish or be cut off");
  assert.equal(outcome.whole, false, "the client read the whole answer");
  assert.ok(outcome.written < PADDING / 2, `${outcome.written} bytes written`);
}

/** The error a like ends with, after no retries: the view's error once the call settled. */
async function likeError(client, post = 42) {
  client.setLiked(post, true);
  assert.equal(await client.waitIdle(10_000), true);
  const view = client.view(post);
  assert.equal(view.liked, false, "rolled back");
  return view.error;
}

/** A client for `base`, shut down and freed by `done`. */
function clientFor(base, options = {}) {
  const client = new LikeClient(base, { retry: NO_RETRY, ...options });
  return {
    client,
    async done() {
      await client.shutdown(1_000);
      client.free();
    },
  };
}

test("a like is a POST with the bearer token; unlike, reads and feed pages use their routes", async () => {
  const server = await serve([
    json("200 OK", LIKED),
    json("200 OK", '{"count":2,"liked_by_me":false,"version":10}'),
    json("200 OK", READ),
    json("200 OK", '{"posts":{"1":{"count":1,"liked_by_me":true,"friends":[],"version":1}}}'),
  ]);
  const { client, done } = clientFor(`${server.base}/`, { token: "tok" });
  try {
    client.setLiked(42, true);
    assert.equal(await client.waitIdle(10_000), true);
    assert.equal(client.view(42).count, 3);
    client.setLiked(42, false);
    assert.equal(await client.waitIdle(10_000), true);
    assert.deepEqual((await client.refresh(7)).friends, ["Ana"]);
    const page = await client.refreshMany([1, 2, 3]);
    assert.deepEqual(page.map((view) => view.postId), [1]);
  } finally {
    await done();
    await server.close();
  }
  const [like, unlike, read, batch] = server.heads;
  assert.ok(like.startsWith("post /posts/42/like http/1.1"), like);
  assert.match(like, /\r\nauthorization: bearer tok\r\n/);
  assert.match(like, /\r\naccept: application\/json\r\n/);
  assert.ok(unlike.startsWith("delete /posts/42/like "), unlike);
  assert.ok(read.startsWith("get /posts/7/likes "), read);
  assert.ok(batch.startsWith("get /likes?posts=1,2,3 "), batch);
});

test("without a token no Authorization header is sent", async () => {
  const server = await serve([json("200 OK", READ)]);
  const { client, done } = clientFor(server.base);
  try {
    await client.refresh(7);
  } finally {
    await done();
    await server.close();
  }
  assert.doesNotMatch(server.heads[0], /authorization/);
});

const REFUSED = json("401 Unauthorized", '{"error":{"code":"unauthorized","message":"token expired"}}');

test("a 401 asks the token callback again once, with refresh = true, and sends the fresh token", async () => {
  for (const asynchronous of [false, true]) {
    const server = await serve([REFUSED, json("200 OK", READ)]);
    const asked = [];
    const token = (refresh) => {
      asked.push(refresh);
      const fresh = `t${asked.filter(Boolean).length}`;
      return asynchronous ? Promise.resolve(fresh) : fresh;
    };
    const { client, done } = clientFor(server.base, { token });
    try {
      assert.equal((await client.refresh(7)).count, 3);
    } finally {
      await done();
      await server.close();
    }
    assert.deepEqual(asked, [false, true], `async: ${asynchronous}`);
    assert.match(server.heads[0], /authorization: bearer t0/);
    assert.match(server.heads[1], /authorization: bearer t1/);
  }
});

test("a second 401 is unauthorized with the server's message; no fresh token is unauthorized at once", async () => {
  const twice = await serve([REFUSED, json("401 Unauthorized", '{"error":{"code":"unauthorized","message":"bad signature"}}'), json("200 OK", READ)]);
  let refreshes = 0;
  const rotating = clientFor(twice.base, { token: (refresh) => `t${(refreshes += refresh ? 1 : 0)}` });
  try {
    await assert.rejects(rotating.client.refresh(7), {
      name: "LikeError",
      code: "unauthorized",
      transient: false,
      message: "not signed in: bad signature",
    });
  } finally {
    await rotating.done();
    await twice.close();
  }
  assert.equal(refreshes, 1);
  assert.equal(twice.heads.length, 2);

  const once = await serve([http("401 Unauthorized", ["www-authenticate: Bearer"], ""), json("200 OK", READ)]);
  const fixed = clientFor(once.base, { token: "tok" });
  try {
    await assert.rejects(fixed.client.refresh(7), { code: "unauthorized" });
  } finally {
    await fixed.done();
    await once.close();
  }
  assert.equal(once.heads.length, 1, "a fixed token has nothing fresher: not sent again");
});

test("a token that is not a header value is a config error, and nothing is sent", async () => {
  const server = await serve([json("200 OK", READ)]);
  const { client, done } = clientFor(server.base, { token: "bad\ntoken" });
  try {
    await assert.rejects(client.refresh(7), { code: "config", transient: false });
  } finally {
    await done();
    await server.close();
  }
  assert.equal(server.heads.length, 0);
});

test("429 with Retry-After in seconds, whole or fractional, is rate_limited with retryAfterMs", async () => {
  for (const [value, ms] of [["2", 2000], ["0.25", 250], ["Wed, 21 Oct 2015 07:28:00 GMT", undefined]]) {
    const server = await serve([http("429 Too Many Requests", [`retry-after: ${value}`], "")]);
    const { client, done } = clientFor(server.base);
    try {
      await assert.rejects(client.refresh(7), (err) => {
        assert.equal(err.code, "rate_limited", value);
        assert.equal(err.status, 429, value);
        assert.equal(err.transient, true, value);
        assert.equal(err.retryAfterMs, ms, value);
        return true;
      });
    } finally {
      await done();
      await server.close();
    }
  }
});

test("error answers are typed from their status and their JSON error body, if any", async () => {
  const cases = [
    [http("503 Service Unavailable", ["content-type: text/html"], "<h1>down</h1>"), { code: "http_503", status: 503, transient: true, message: "server error 503: <h1>down</h1>" }],
    [http("500 Internal Server Error", [], ""), { code: "http_500", status: 500, message: "server error 500: HTTP 500" }],
    [json("404 Not Found", '{"error":{"code":"post_not_found","message":"no post 42"}}'), { code: "post_not_found", status: 404, transient: false }],
    [json("403 Forbidden", "{}"), { code: "forbidden", status: 403, transient: false }],
    [json("400 Bad Request", '{"error":{"code":"bad_post_id","message":"not a number"}}'), { code: "bad_post_id", status: 400, transient: false }],
  ];
  for (const [reply, expected] of cases) {
    const server = await serve([reply]);
    const { client, done } = clientFor(server.base);
    try {
      await assert.rejects(client.refresh(7), expected);
    } finally {
      await done();
      await server.close();
    }
  }
});

test("200 answers that are cut short, not JSON or not the shape expected are invalid_response", async () => {
  const cases = [
    json("200 OK", '{"count":'),
    json("200 OK", "not json at all"),
    json("200 OK", '{"count":3,"liked_by_me":true}'),
    json("200 OK", '{"count":3.0,"liked_by_me":true,"version":9}'),
    json("200 OK", '{"count":-0,"liked_by_me":true,"version":9}'),
    json("200 OK", '{"count":3,"count":3,"liked_by_me":true,"version":9}'),
    json("200 OK", `${LIKED} trailing`),
    // the body is cut short: fewer bytes than content-length
    { raw: 'HTTP/1.1 200 OK\r\ncontent-length: 100\r\nconnection: close\r\n\r\n{"count":1' },
  ];
  for (const reply of cases) {
    const server = await serve([reply]);
    const { client, done } = clientFor(server.base);
    try {
      const error = await likeError(client);
      assert.equal(error?.code, "invalid_response", `${reply.raw}: ${error?.message}`);
      assert.equal(error.transient, true);
    } finally {
      await done();
      await server.close();
    }
  }
});

test("the answers' JSON is read exactly: escapes, unknown fields, any order, versions past 2^53", async () => {
  // 2^53 + 1 and 2^53, which JSON.parse would both read as 2^53: read
  // exactly, the second read is older than the first and must not move
  // the count back.
  const server = await serve([
    json(
      "200 OK",
      '{"version":9007199254740993,"x":{"y":[1,2.5e3,null]},"friends":["Bj\\u00f6rn \\ud83d\\ude00"],"liked_by_me":false,"count":3}',
    ),
    json("200 OK", '{"count":5,"liked_by_me":false,"friends":[],"version":9007199254740992}'),
  ]);
  const { client, done } = clientFor(server.base);
  try {
    const view = await client.refresh(7);
    assert.deepEqual(view.friends, ["Björn 😀"]);
    assert.equal(view.count, 3);
    assert.equal((await client.refresh(7)).count, 3, "an older read does not move the count back");
  } finally {
    await done();
    await server.close();
  }
});

test("no answer within timeoutMs is a timeout, whether the head or the body is late", async () => {
  const late = [
    "hang",
    { headThenHang: 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 42\r\n\r\n{"count":' },
  ];
  for (const reply of late) {
    const server = await serve([reply]);
    const { client, done } = clientFor(server.base, { timeoutMs: 200 });
    try {
      await assert.rejects(client.refresh(7), { code: "timeout", transient: true });
      // The request was aborted: the server sees its connection close.
      await waitFor(() => server.hungUp.length === 1, "the client to hang up");
    } finally {
      await done();
      await server.close();
    }
  }
});

test("a dropped connection and a refused one are network errors", async () => {
  const server = await serve(["drop"]);
  const dropped = clientFor(server.base);
  try {
    await assert.rejects(dropped.client.refresh(7), { code: "network", transient: true });
  } finally {
    await dropped.done();
    await server.close();
  }
  // The port the closed server had: nothing listens there now.
  const refused = clientFor(server.base);
  try {
    await assert.rejects(refused.client.refresh(7), (err) => {
      assert.equal(err.code, "network");
      assert.match(err.message, /ECONNREFUSED|fetch failed/);
      return true;
    });
  } finally {
    await refused.done();
  }
});

test("a call the client gives up at shutdown aborts its request", async () => {
  const server = await serve(["hang"]);
  const client = new LikeClient(server.base, { retry: NO_RETRY });
  try {
    client.setLiked(42, true);
    await waitFor(() => server.heads.length === 1, "the like to reach the server");
    assert.equal(await client.shutdown(50), false, "the like was still out at the deadline");
    await waitFor(() => server.hungUp.length === 1, "the client to hang up");
  } finally {
    client.free();
    await server.close();
  }
});

const TOO_LARGE = (limit) => `unreadable answer from the server: answer larger than ${limit} bytes`;

test("an answer announced over maxAnswerBytes is refused before its body", async () => {
  // One byte of the gigabyte announced, then the server closes: a client
  // that began reading would find the body cut short.
  const server = await serve([
    { raw: "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: 1073741824\r\n\r\n{" },
  ]);
  const { client, done } = clientFor(server.base);
  try {
    await assert.rejects(client.refresh(7), { code: "invalid_response", message: TOO_LARGE(16 << 20) });
  } finally {
    await done();
    await server.close();
  }
});

test("a chunked answer is cut off once past maxAnswerBytes: the client hangs up early", async () => {
  const reply = padded("200 OK");
  const server = await serve([reply]);
  const { client, done } = clientFor(server.base, { maxAnswerBytes: 64 << 10, timeoutMs: 10_000 });
  try {
    const error = await likeError(client);
    assert.equal(error.code, "invalid_response");
    assert.equal(error.message, TOO_LARGE(64 << 10));
    await assertHungUpEarly(reply.outcome);
  } finally {
    await done();
    await server.close();
  }
});

test("answers up to maxAnswerBytes are read and one byte more is not, with or without content-length", async () => {
  const body = `  ${READ}  `;
  for (const reply of [() => json("200 OK", body), () => chunked("200 OK", body, 7)]) {
    const server = await serve([reply(), reply()]);
    const atCap = clientFor(server.base, { maxAnswerBytes: body.length });
    const under = clientFor(server.base, { maxAnswerBytes: body.length - 1 });
    try {
      assert.equal((await atCap.client.refresh(7)).count, 3);
      await assert.rejects(under.client.refresh(7), { code: "invalid_response", message: TOO_LARGE(body.length - 1) });
    } finally {
      await atCap.done();
      await under.done();
      await server.close();
    }
  }
});

test("a refused 401 body is not read past maxAnswerBytes, and the fresh token is sent", async () => {
  const refused = padded("401 Unauthorized");
  const server = await serve([refused, json("200 OK", READ)]);
  let refreshes = 0;
  const { client, done } = clientFor(server.base, {
    token: (refresh) => `t${(refreshes += refresh ? 1 : 0)}`,
    maxAnswerBytes: 64 << 10,
    timeoutMs: 10_000,
  });
  try {
    assert.equal((await client.refresh(7)).count, 3);
    await assertHungUpEarly(refused.outcome);
  } finally {
    await done();
    await server.close();
  }
  assert.equal(refreshes, 1);
  assert.match(server.heads[1], /authorization: bearer t1/);
});

test("a like whose answer is too large is retried and confirmed", async () => {
  const server = await serve([json("200 OK", `${" ".repeat(2000)}${LIKED}`), json("200 OK", LIKED)]);
  const client = new LikeClient(server.base, {
    maxAnswerBytes: 1024,
    retry: { minDelayMs: 1, maxDelayMs: 5, maxRetries: 2, seed: 1 },
  });
  try {
    assert.equal(client.setLiked(42, true).pending, true);
    assert.equal(await client.waitIdle(10_000), true);
    const view = client.view(42);
    assert.equal(view.liked && !view.pending && view.error === null, true, JSON.stringify(view));
    assert.equal(view.count, 3);
    const stats = client.stats();
    assert.deepEqual([stats.retries, stats.rollbacks], [1, 0]);
  } finally {
    await client.shutdown(1_000);
    client.free();
    await server.close();
  }
  assert.equal(server.heads.length, 2);
  assert.ok(server.heads.every((head) => head.startsWith("post /posts/42/like ")));
});

test("the base URL is checked by the JavaScript URL, as natively by the url crate", async () => {
  for (const bad of ["", "localhost:8080", "ftp://h", "http://h/?x=1", "http://h/?", "http://h/#top", "mailto:a@b", "http://"]) {
    assert.throws(() => new LikeClient(bad), { name: "LikeError", code: "config" }, JSON.stringify(bad));
  }
  // Upper case, a default port and trailing slashes are written out as the
  // URL Standard writes them; the routes follow the path prefix.
  const server = await serve([json("200 OK", READ)]);
  const port = new URL(server.base).port;
  const { client, done } = clientFor(`HTTP://127.0.0.1:${port}/v1//`);
  try {
    await client.refresh(7);
  } finally {
    await done();
    await server.close();
  }
  assert.ok(server.heads[0].startsWith("get /v1/posts/7/likes "), server.heads[0]);
});
