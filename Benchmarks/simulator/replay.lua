-- wrk script: replay many distinct verifyReceipt requests once each, over keep-alive connections.
-- $REPLAY_FILE holds one request per line: the path, a tab, the JSON body (replay.sh writes it from
-- purchases.jsonl). Thread t of T sends lines t, t+T, t+2T, ... and stops after its share, so every
-- request is sent once (a connection's requests already in flight may repeat a few lines at the end).
local lines = {}
for line in io.lines(os.getenv("REPLAY_FILE")) do
  local tab = line:find("\t", 1, true)
  lines[#lines + 1] = { line:sub(1, tab - 1), line:sub(tab + 1) }
end

local threads = {}
local counter = 0
setup = function(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

init = function(args)
  -- `id` and the thread count are set by setup() before init() runs.
  nthreads = tonumber(os.getenv("REPLAY_THREADS") or "2")
  next_index = id + 1
  share = 0
  for i = id + 1, #lines, nthreads do share = share + 1 end
  received = 0
  statuses = {}
end

request = function()
  local item = lines[next_index]
  next_index = next_index + nthreads
  if next_index > #lines then next_index = id + 1 end
  return wrk.format("POST", item[1], { ["Content-Type"] = "application/json" }, item[2])
end

response = function(status, headers, body)
  received = received + 1
  if received >= share then wrk.thread:stop() end
end
