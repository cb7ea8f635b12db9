-- wrk script used by bench/run.py for every endpoint (one wrk thread).
--
-- Environment (set by run.py):
--   BENCH_BODY_BYTES    if set, send POST requests with a body of this many bytes
--                       (application/octet-stream), for POST /echo
--   BENCH_JSON_BODY     if set, send POST requests with this JSON body (application/json)
--   BENCH_MAX_REQUESTS  stop the thread after this many responses: a hard cap on top of
--                       wrk's -d duration, so a run is bounded in count as well as time
-- At the end it prints one line "BENCH_RESULT {json}" that run.py parses.

local body_bytes = tonumber(os.getenv("BENCH_BODY_BYTES") or "")
local max_requests = tonumber(os.getenv("BENCH_MAX_REQUESTS") or "")

if body_bytes then
  wrk.method = "POST"
  wrk.body = string.rep("x", body_bytes)
  wrk.headers["Content-Type"] = "application/octet-stream"
end

local json_body = os.getenv("BENCH_JSON_BODY")
if json_body then
  wrk.method = "POST"
  wrk.body = json_body
  wrk.headers["Content-Type"] = "application/json"
end

if max_requests then
  local count = 0
  function response()
    count = count + 1
    if count >= max_requests then
      wrk.thread:stop()
    end
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, "max_us": %d, '
      .. '"connect_errors": %d, "read_errors": %d, "write_errors": %d, "timeouts": %d, '
      .. '"status_errors": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, e.connect, e.read, e.write, e.timeout, e.status))
end
