-- One request, the same on every connection and every time: the URL and the -H headers given on the command line,
-- the method and body from WRK_METHOD and WRK_BODY. No request callback, so wrk builds the request once; a wrong
-- status shows as wrk's count of non-2xx/3xx responses.
-- With WRK_LOCATION_PREFIX (authorize) a response callback also checks every answer: status WRK_EXPECT and a
-- Location at the redirect URI carrying a code (an error redirect has the same status but no code).
dofile(os.getenv("WRK_SCRIPTS") .. "/report.lua")

wrk.method = os.getenv("WRK_METHOD") or "GET"
local body = os.getenv("WRK_BODY")
if body ~= nil and body ~= "" then
  wrk.body = body
end

local prefix = os.getenv("WRK_LOCATION_PREFIX")
if prefix ~= nil and prefix ~= "" then
  local expected = tonumber(os.getenv("WRK_EXPECT"))
  unexpected = 0
  function response(status, headers, body)
    local location = headers["Location"] or headers["location"] or ""
    if status ~= expected or location:sub(1, #prefix) ~= prefix or not location:find("[?&]code=") then
      unexpected = unexpected + 1
    end
  end
end
