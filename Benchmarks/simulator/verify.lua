-- wrk script: POST one verifyReceipt body over keep-alive connections.
-- The body file (JSON with receipt-data/password) comes from $VERIFY_BODY (run.sh writes it);
-- the path from $VERIFY_PATH (default /verifyReceipt).
local path = os.getenv("VERIFY_PATH") or "/verifyReceipt"
local file = assert(io.open(os.getenv("VERIFY_BODY") or "/tmp/appstore-sim-bench/body.json", "rb"))
local body = file:read("*a")
file:close()

wrk.method = "POST"
wrk.path = path
wrk.body = body
wrk.headers["Content-Type"] = "application/json"

local statuses = {}
response = function(status, headers, resp_body)
  statuses[status] = (statuses[status] or 0) + 1
end

done = function(summary, latency, requests)
  io.write(string.format("requests=%d errors(connect=%d read=%d write=%d status=%d timeout=%d)\n",
    summary.requests, summary.errors.connect, summary.errors.read, summary.errors.write,
    summary.errors.status, summary.errors.timeout))
end
