-- Refresh rotation in chains: WRK_LINES holds the chains' first refresh tokens, one a line, in a FIFO queue. Each
-- request takes the queue's head; each response (status WRK_EXPECT) gives the chain's next token, parsed out of the
-- JSON body, back to the queue's tail. The form body is WRK_BODY_PREFIX .. token .. WRK_BODY_SUFFIX. A failed
-- rotation ends its chain; requests made with an empty queue are counted as exhausted.
dofile(os.getenv("WRK_SCRIPTS") .. "/report.lua")

local queue, head, tail = {}, 1, 0
local expected = tonumber(os.getenv("WRK_EXPECT"))
local prefix, suffix = os.getenv("WRK_BODY_PREFIX"), os.getenv("WRK_BODY_SUFFIX")
unexpected, exhausted = 0, 0

local function encode(value)
  return (value:gsub("[^%w%-%._~]", function(c)
    return string.format("%%%02X", c:byte())
  end))
end

function init(args)
  for token in io.lines(os.getenv("WRK_LINES")) do
    tail = tail + 1
    queue[tail] = token
  end
end

function request()
  local token = "exhausted-refresh-chains"
  if head <= tail then
    token = queue[head]
    queue[head] = nil
    head = head + 1
  else
    exhausted = exhausted + 1
  end
  return wrk.format("POST", nil, nil, prefix .. encode(token) .. suffix)
end

function response(status, headers, body)
  if status ~= expected then
    unexpected = unexpected + 1
    return
  end
  local token = body:match('"refresh_token"%s*:%s*"([^"]+)"')
  if token == nil then
    unexpected = unexpected + 1
    return
  end
  tail = tail + 1
  queue[tail] = token
end
