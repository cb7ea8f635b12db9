-- wrk script for bench/workers.py: counts responses by body (the serving worker's pid) and
-- prints one line "WORKERS_RESULT pid=count,pid=count,..." at the end.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  counts = {}
end

function response(status, headers, body)
  counts[body] = (counts[body] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    local part = thread:get("counts")
    for pid, n in pairs(part) do
      total[pid] = (total[pid] or 0) + n
    end
  end
  local out = {}
  for pid, n in pairs(total) do
    table.insert(out, pid .. "=" .. n)
  end
  io.write("WORKERS_RESULT " .. table.concat(out, ",") .. "\n")
end
