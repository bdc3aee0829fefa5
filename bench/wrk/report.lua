-- Shared by the bench/wrk scripts (loaded with dofile): wrk's summary of a run as one JSON line on stdout, read by
-- bench/independent.ts. The scripts keep their own counters as globals of each thread's Lua state:
--   unexpected: responses whose status is not the one the workload expects (scripts with a response callback),
--   exhausted:  requests sent after the prepared codes or refresh chains ran out (the row is then invalid),
--   position:   where a token list stopped (the next run continues from there).
-- It also reports wrk's own CPU time, to show what the load generator costs beside the server.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

-- wrk's own CPU time (user + system, all its threads) so far, in ms, from /proc/self/stat (Linux, 100 ticks/s).
local function ownCpuMs()
  local file = io.open("/proc/self/stat", "r")
  if file == nil then
    return -1
  end
  local stat = file:read("*a")
  file:close()
  local fields = {}
  for field in stat:gsub("^.*%) ", ""):gmatch("%S+") do
    table.insert(fields, field)
  end
  -- After "pid (comm) " the fields start at the 3rd; utime and stime are the 14th and 15th.
  return ((tonumber(fields[12]) or 0) + (tonumber(fields[13]) or 0)) * 10
end

function done(summary, latency, requests)
  local unexpected, exhausted, position = 0, 0, 0
  for _, thread in ipairs(threads) do
    unexpected = unexpected + (thread:get("unexpected") or 0)
    exhausted = exhausted + (thread:get("exhausted") or 0)
    position = math.max(position, thread:get("position") or 0)
  end
  local errors = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
      '"unexpected":%d,"exhausted":%d,"position":%d,"p50us":%d,"p99us":%d,"wrkCpuMs":%d}\n',
    summary.requests, summary.duration, errors.connect, errors.read, errors.write, errors.status, errors.timeout,
    unexpected, exhausted, position, latency:percentile(50), latency:percentile(99), ownCpuMs()))
end
