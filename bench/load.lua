-- The wrk load for `cargo xtask bench` (the server suite).
--
--   wrk -t2 -c64 -d10s -s bench/load.lua URL -- MODE TOKENS [ARG]
--
-- MODE
--   views  TOKENS POSTS   GET /posts/{id}/likes: a random viewer (a line of
--                         TOKENS) looks at a post drawn from POSTS (a file
--                         of post ids, one a line, drawn in proportion to
--                         popularity), or from 1..N for POSTS = "uniform:N".
--                         100,000 such requests are built per thread up
--                         front and sent in turn (a cycle of several
--                         seconds, well beyond the server's one-second
--                         cache), so wrk spends its time on the network, not
--                         in Lua.
--   likes  TOKENS N       durable likes spread over posts 1..N: each thread
--                         walks through its own share of the users; every
--                         other request likes a random post as the next
--                         user, the others unlike the like made 512 steps
--                         earlier, so (nearly) every write really changes a
--                         row and the data set keeps its size.
--   hot    TOKENS POST    the same walk with every like and unlike on one
--                         post: many users liking one post at once.
--
-- The last line printed is `likekit-wrk name=value …` (times in µs) for
-- xtask to read. Every answer that is not 2xx/3xx counts in errors_status.

local thread_count = 0

function setup(thread)
  thread_count = thread_count + 1
  thread:set("thread_id", thread_count)
end

local function read_lines(path)
  local out = {}
  for line in io.lines(path) do
    if #line > 0 then
      out[#out + 1] = line
    end
  end
  if #out == 0 then
    error("no lines in " .. path)
  end
  return out
end

local mode, tokens
local built, next_built = {}, 0
local posts_n, hot_post
local depth = 512
local ring, ring_head, ring_len = {}, 0, 0
local my_users, user_cursor = {}, 0

function init(args)
  mode = args[1]
  tokens = read_lines(args[2])
  math.randomseed(7919 * thread_id)
  if mode == "views" then
    local pick_post
    local uniform = string.match(args[3], "^uniform:(%d+)$")
    if uniform then
      local n = tonumber(uniform)
      pick_post = function() return math.random(n) end
    else
      local posts = read_lines(args[3])
      pick_post = function() return posts[math.random(#posts)] end
    end
    for k = 1, 100000 do
      local token = tokens[math.random(#tokens)]
      built[k] = wrk.format("GET", "/posts/" .. pick_post() .. "/likes",
        { ["Authorization"] = "Bearer " .. token })
    end
  elseif mode == "likes" or mode == "hot" then
    if mode == "likes" then
      posts_n = tonumber(args[3])
    else
      hot_post = tonumber(args[3])
    end
    -- The threads share the users out, so no two threads write as one user.
    local share = tonumber(args[4]) or 2
    for u = thread_id, #tokens, share do
      my_users[#my_users + 1] = u
    end
  else
    error("unknown mode " .. tostring(mode))
  end
end

local function write(method, user, post)
  return wrk.format(method, "/posts/" .. post .. "/like",
    { ["Authorization"] = "Bearer " .. tokens[user] })
end

function request()
  if mode == "views" then
    next_built = next_built % #built + 1
    return built[next_built]
  end
  if ring_len == depth then
    -- Unlike the oldest like still standing; the ring then has room for
    -- the next like, so likes and unlikes alternate from here on.
    local slot = ring[ring_head + 1]
    ring_head = (ring_head + 1) % depth
    ring_len = ring_len - 1
    return write("DELETE", slot[1], slot[2])
  end
  user_cursor = user_cursor % #my_users + 1
  local user = my_users[user_cursor]
  local post = hot_post or math.random(posts_n)
  ring[(ring_head + ring_len) % depth + 1] = { user, post }
  ring_len = ring_len + 1
  return write("POST", user, post)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "likekit-wrk requests=%d duration_us=%d errors_status=%d errors_connect=%d " ..
    "errors_read=%d errors_write=%d errors_timeout=%d " ..
    "p50_us=%d p90_us=%d p99_us=%d max_us=%d mean_us=%.1f\n",
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean))
end
