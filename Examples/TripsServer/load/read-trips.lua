-- wrk script: the read phase of Scripts/server-load.sh, as loadtest.py reads. Three
-- requests in four GET /trips/<name> of a trip the write phase acknowledged (the
-- names are the first field of WRK_NAMES, which post-trips.lua wrote); the fourth is a
-- search, /trips?destination=…&sort=-price&limit=20. wrk counts any status of 400 or
-- more as an error (a name not found is a lost write); there is no response() hook,
-- so wrk does not hand bodies to Lua and the client stays cheap.

-- Percent-encoded, as they go in the query ("Évora" is UTF-8).
local destinations = { "Lisbon", "Porto", "Faro", "%C3%89vora", "Braga", "Coimbra", "Sintra", "Aveiro" }
local threads = {}

function setup(thread)
    thread:set("id", #threads)
    table.insert(threads, thread)
end

function init(_)
    names = {}
    local path = assert(os.getenv("WRK_NAMES"), "WRK_NAMES: the file of acknowledged writes")
    for line in io.lines(path) do names[#names + 1] = line:match("^(%S+)") end
    assert(#names > 0, "no names in " .. path)
    math.randomseed(os.time() + id * 7919)
    i = 0
end

function request()
    i = i + 1
    if i % 4 == 3 then
        return wrk.format("GET", "/trips?destination=" .. destinations[(id + i) % #destinations + 1] .. "&sort=-price&limit=20")
    end
    return wrk.format("GET", "/trips/" .. names[math.random(#names)])
end

function done(summary, latency, _)
    local e = summary.errors
    io.write(string.format("result requests=%d errors=%d seconds=%.3f p50_ms=%.2f p99_ms=%.2f\n",
        summary.requests, e.status + e.connect + e.read + e.write + e.timeout, summary.duration / 1e6,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
