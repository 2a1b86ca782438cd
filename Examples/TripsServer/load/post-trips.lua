-- wrk script: the write phase of Scripts/server-load.sh. Each request POSTs a new trip
-- to /trips, with the body Examples/TripsServer/loadtest.py sends. Names are unique:
-- the run's id (WRK_RUN), the wrk thread's number and a counter of that thread (each
-- wrk thread has a Lua state of its own). Every 201 is an acknowledged write: its
-- name and price are written to WRK_ACKED ("name price" a line) for the lost-write
-- check (loadtest.py --check-only), and a `result` line sums the phase up.

local destinations = { "Lisbon", "Porto", "Faro", "Évora", "Braga", "Coimbra", "Sintra", "Aveiro" }
local threads = {}

-- Main state: numbers the threads and keeps them, so done() can read their counts.
function setup(thread)
    thread:set("id", #threads)
    table.insert(threads, thread)
end

-- Each thread's state from here on.
function init(_)
    run = os.getenv("WRK_RUN") or tostring(os.time())
    counter = 0
    created = 0
    refused = 0
    acked = {}
    math.randomseed(os.time() + id * 7919)
end

local headers = { ["Content-Type"] = "application/json" }

function request()
    counter = counter + 1
    local body = string.format(
        '{"name":"wrk-%s-%d-%d","destination":"%s","startDate":"2027-%02d-%02dT09:00:00Z",'
            .. '"price":%.2f,"latitude":%.6f,"longitude":%.6f}',
        run, id, counter, destinations[math.random(#destinations)], math.random(12), math.random(28),
        50 + math.random() * 1950, 37 + math.random() * 5, -9.5 + math.random() * 3.3)
    return wrk.format("POST", "/trips", headers, body)
end

-- A response does not say which request it answers, but a 201's body is the trip.
function response(status, _, body)
    if status == 201 then
        created = created + 1
        local name = body:match('"name"%s*:%s*"([^"]*)"')
        local price = body:match('"price"%s*:%s*([-+%d.eE]+)')
        acked[#acked + 1] = (name or "?") .. " " .. (price or "?")
    else
        refused = refused + 1
    end
end

function done(summary, latency, _)
    local acknowledged, failed = 0, 0
    local out = assert(io.open(assert(os.getenv("WRK_ACKED"), "WRK_ACKED: the file for acknowledged writes"), "w"))
    for _, thread in ipairs(threads) do
        acknowledged = acknowledged + thread:get("created")
        failed = failed + thread:get("refused")
        for _, line in ipairs(thread:get("acked")) do out:write(line, "\n") end
    end
    out:close()
    local e = summary.errors
    io.write(string.format("result requests=%d errors=%d seconds=%.3f p50_ms=%.2f p99_ms=%.2f acknowledged=%d\n",
        summary.requests, failed + e.connect + e.read + e.write + e.timeout, summary.duration / 1e6,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, acknowledged))
end
