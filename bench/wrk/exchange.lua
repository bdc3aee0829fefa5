-- The code exchange: WRK_LINES holds one form body per line, each redeeming a code minted before the run; every
-- request sends the next one. Should they run out, the requests go on with WRK_EXHAUSTED_BODY (a code the server
-- refuses) and are counted as exhausted. Every response must have status WRK_EXPECT.
dofile(os.getenv("WRK_SCRIPTS") .. "/report.lua")

local requests, count, sent = {}, 0, 0
local expected = tonumber(os.getenv("WRK_EXPECT"))
local fallback
unexpected, exhausted = 0, 0

function init(args)
  for body in io.lines(os.getenv("WRK_LINES")) do
    count = count + 1
    requests[count] = wrk.format("POST", nil, nil, body)
  end
  fallback = wrk.format("POST", nil, nil, os.getenv("WRK_EXHAUSTED_BODY"))
end

function request()
  sent = sent + 1
  if sent > count then
    exhausted = exhausted + 1
    return fallback
  end
  return requests[sent]
end

function response(status, headers, body)
  if status ~= expected then
    unexpected = unexpected + 1
  end
end
