-- wrk script for tests/bench/loadgen.py (the load and http benchmarks): search and write traffic.
--
-- Run with one connection per thread (wrk -tN -cN): each thread's Lua state then owns exactly one
-- connection, so request() and response() strictly alternate and a response is always the answer
-- to the last request this state made (wrk's response() says nothing about the connection).
--
-- Environment (set by loadgen.py): LOAD_WRK_DIR (queries.jsonl in, responses.tsv and summary.tsv out),
-- LOAD_WRITERS (threads 0..LOAD_WRITERS-1 only write, the others only search), LOAD_WRITE_FILES
-- (appends spread over topics/load-NN.md), LOAD_SEED (thread i draws its queries with seed + i),
-- LOAD_PROBE (1: a writer follows each acknowledged write
-- with searches for its token until one finds it: write -> searchable under the load),
-- LOAD_WRITE_EVERY_MS (above 0: each writer starts a write at most once every that many ms, on a
-- fixed schedule, writers' phases spread evenly: the write rate no longer follows how soon the last
-- write was found; a write whose turn came while the last one was still being probed starts at once
-- and counts as late, and the schedule does not catch up; 0: each write right after the last),
-- LOAD_TIER_WORDS (the share of appends that carry a line of tier words from appends.txt, one a
-- line, after their token; the others carry "noted during the load run").
--
-- responses.tsv, one line per completed response:  kind  status  latency_us  done_us  [path  token  seq | degraded]
-- (done_us: CLOCK_MONOTONIC at completion, the clock of Python's time.monotonic(); path, token and
-- seq only for acknowledged writes, status 201; "degraded" for a search answered without a leg).
-- With LOAD_PROBE, a writer's searches are kind "probe" (the first with the write's seq as
-- after_seq, any further one plain), and when one shows the token a line
--   searchable  polls  latency_us  done_us  path  token  seq
-- follows, its latency from the write's request to that answer. summary.tsv also gives
-- late_writes: writes that started past their turn on the schedule (LOAD_WRITE_EVERY_MS).

local ffi = require("ffi")
ffi.cdef([[
typedef struct { long tv_sec; long tv_nsec; } load_timespec;
int clock_gettime(int clk_id, load_timespec *tp);
]])
local CLOCK_MONOTONIC = 1
local ts = ffi.new("load_timespec")

local function now_us()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
  return tonumber(ts.tv_sec) * 1000000 + tonumber(ts.tv_nsec) / 1000
end

local dir = os.getenv("LOAD_WRK_DIR")
local writers = tonumber(os.getenv("LOAD_WRITERS") or "4")
local files = tonumber(os.getenv("LOAD_WRITE_FILES") or "40")
local probe = os.getenv("LOAD_PROBE") == "1"
local seed = tonumber(os.getenv("LOAD_SEED") or "1000") -- each run of a bench draws its own queries
local write_every_us = tonumber(os.getenv("LOAD_WRITE_EVERY_MS") or "0") * 1000
local tier_words = tonumber(os.getenv("LOAD_TIER_WORDS") or "0")
local PROBE_GIVE_UP_US = 30000000 -- a write not found within this is recorded as polls -1
local headers = { ["Content-Type"] = "application/json" }

-- main state ---------------------------------------------------------------------------------
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function done(summary, latency, requests)
  local out = assert(io.open(dir .. "/responses.tsv", "w"))
  for _, thread in ipairs(threads) do
    local lines = thread:get("lines")
    for i = 1, #lines do
      out:write(lines[i], "\n")
    end
  end
  out:close()
  local late = 0
  for _, thread in ipairs(threads) do
    late = late + (thread:get("late") or 0)
  end
  local e = summary.errors
  local s = assert(io.open(dir .. "/summary.tsv", "w"))
  s:write(string.format("duration_us\t%d\nrequests\t%d\n", summary.duration, summary.requests))
  s:write(string.format("connect\t%d\nread\t%d\nwrite\t%d\nstatus\t%d\ntimeout\t%d\n",
    e.connect, e.read, e.write, e.status, e.timeout))
  s:write(string.format("late_writes\t%d\n", late))
  s:write(string.format("p50_us\t%d\np99_us\t%d\nmax_us\t%d\n",
    latency:percentile(50), latency:percentile(99), latency.max))
  s:close()
end

-- thread states ------------------------------------------------------------------------------
local queries = {}
local appends = {} -- lines of tier words (LOAD_TIER_WORDS)
local n = 0
local kind, started, path, token
local seq, wrote, polls -- the write being probed: its seq, its request's start, searches so far
local turn -- a writer's next write's time on the schedule (LOAD_WRITE_EVERY_MS), CLOCK_MONOTONIC us

function init(args)
  -- Every search request is formatted once, here: the generator shares the server's cores, and
  -- building the same few thousand requests again for every one sent is its own CPU, not the server's.
  for line in io.lines(dir .. "/queries.jsonl") do -- each line already a JSON string literal
    queries[#queries + 1] = wrk.format("POST", "/memory/search", headers, '{"query":' .. line .. ',"limit":10}')
  end
  if tier_words > 0 then
    for line in io.lines(dir .. "/appends.txt") do
      appends[#appends + 1] = line
    end
  end
  math.randomseed(seed + id)
  lines = {} -- global: read by done() through thread:get
  late = 0 -- global: read by done() through thread:get
end

-- Milliseconds to wait before the next request: a writer's next write waits for its turn.
function delay()
  if id >= writers or seq ~= nil or write_every_us <= 0 then
    return 0
  end
  local now = now_us()
  if turn == nil then
    turn = now + write_every_us * id / writers -- the writers' phases spread over one period
  elseif now > turn + 1000 then
    late = late + 1
    turn = now
  end
  local wait = turn - now
  turn = turn + write_every_us
  return wait > 0 and math.floor(wait / 1000) or 0
end

local function probe_request(after)
  local body = '{"query":"' .. token .. '","limit":10' .. (after and (',"after_seq":' .. seq) or "") .. "}"
  return wrk.format("POST", "/memory/search", headers, body)
end

function request()
  n = n + 1
  started = now_us()
  if id < writers and seq ~= nil then
    kind = "probe"
    polls = polls + 1
    return probe_request(polls == 1)
  end
  if id < writers then
    kind = "write"
    token = string.format("loadw%dn%dx", id, n)
    path = string.format("topics/load-%02d.md", math.random(0, files - 1))
    local words = "noted during the load run"
    if #appends > 0 and math.random() < tier_words then
      words = appends[math.random(#appends)]
    end
    local body = '{"path":"' .. path .. '","content":"- ' .. token .. " " .. words .. '"}'
    return wrk.format("POST", "/memory/write", headers, body)
  end
  kind = "search"
  return queries[math.random(#queries)]
end

function response(status, hdrs, body)
  local done = math.floor(now_us())
  local us = math.floor(done - started)
  if kind == "write" and status == 201 then
    local got = body:match('"seq"%s*:%s*(%d+)') or ""
    lines[#lines + 1] = string.format("write\t%d\t%d\t%d\t%s\t%s\t%s", status, us, done, path, token, got)
    if probe and got ~= "" then
      seq, wrote, polls = got, started, 0
    end
  elseif kind == "probe" then
    lines[#lines + 1] = string.format("probe\t%d\t%d\t%d", status, us, done)
    local found = status == 200 and body:find(token, 1, true) ~= nil
    if found or done - wrote > PROBE_GIVE_UP_US then
      local latency = math.floor(done - wrote)
      lines[#lines + 1] = string.format(
        "searchable\t%d\t%d\t%d\t%s\t%s\t%s", found and polls or -1, latency, done, path, token, seq)
      seq = nil
    end
  elseif kind == "search" and body:find('"degraded"', 1, true) then
    lines[#lines + 1] = string.format("%s\t%d\t%d\t%d\tdegraded", kind, status, us, done)
  else
    lines[#lines + 1] = string.format("%s\t%d\t%d\t%d", kind, status, us, done)
  end
end
