-- The guard with many tokens: WRK_LINES holds one "path token" line per consumer; requests take them in turn,
-- starting after line WRK_START (where the warm-up stopped), and wrap around. Requests are built in init, so the
-- per-request work in wrk is a table lookup.
dofile(os.getenv("WRK_SCRIPTS") .. "/report.lua")

local requests, count = {}, 0
position = 0

function init(args)
  for line in io.lines(os.getenv("WRK_LINES")) do
    local path, token = line:match("^(%S+) (%S+)$")
    count = count + 1
    requests[count] = wrk.format("GET", path, { ["Authorization"] = "Bearer " .. token })
  end
  position = tonumber(os.getenv("WRK_START") or "0") % count
end

function request()
  position = position % count + 1
  return requests[position]
end
