#!/usr/bin/env python3
"""Load test of TripsServer: no external service, Python's standard library only.

Runs `--concurrency` clients (keep-alive HTTP/1.1 over asyncio streams) for
`--seconds` of writes (POST /trips, each a new trip) and then `--seconds` of reads
(GET /trips/<name> of a written trip, and a filtered, sorted search), then checks
that no write was lost: the server holds every trip it acknowledged, and each one
sampled reads back as written. Prints one Markdown row per phase:
requests, errors, requests/s, p50 and p99 latency.

    python3 Examples/TripsServer/loadtest.py --url http://127.0.0.1:8080

Its client shares the machine with the server, so Scripts/server-load.sh measures
with wrk (Examples/TripsServer/load/*.lua) and uses this script's `--check-only`
mode for the lost-write check of wrk's writes: the server holds every acknowledged
trip (the "name price" lines of `--acked`), and each one sampled reads back with its
price; `--before` is the count of trips before the writes, and up to `--in-flight`
trips more than acknowledged may be stored (requests the client stopped waiting for).

`--lost-updates` checks read-modify-writes instead: `--writers` clients, spread over
the servers of `--url` (a comma-separated list, several servers over one database),
each append their own tokens to one trip's notes with GET and then PATCH with
`If-Match`, retrying on 412 or 409; every token must be stored exactly once.
"""
import argparse
import asyncio
import json
import random
import sys
import time
from urllib.parse import quote, urlparse

DESTINATIONS = ["Lisbon", "Porto", "Faro", "Évora", "Braga", "Coimbra", "Sintra", "Aveiro"]


class Client:
    """One keep-alive connection."""

    def __init__(self, host, port):
        self.host, self.port = host, port
        self.reader = self.writer = None

    async def request(self, method, path, body=None, headers=None):
        """Returns (status, body); the response's headers (names lowercased) are in `self.headers`."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        payload = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Length: {len(payload)}\r\n"
        if body is not None:
            head += "Content-Type: application/json\r\n"
        for name, value in (headers or {}).items():
            head += f"{name}: {value}\r\n"
        self.writer.write(head.encode() + b"\r\n" + payload)
        await self.writer.drain()
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("connection closed")
        status = int(status_line.split()[1])
        length, chunked = 0, False
        self.headers = {}
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode().partition(":")
            self.headers[name.lower()] = value.strip()
            if name.lower() == "content-length":
                length = int(value.strip())
            elif name.lower() == "transfer-encoding" and "chunked" in value.lower():
                chunked = True
        if chunked:
            data = b""
            while True:
                size = int((await self.reader.readline()).strip(), 16)
                if size == 0:
                    await self.reader.readline()
                    break
                data += await self.reader.readexactly(size)
                await self.reader.readline()
        else:
            data = await self.reader.readexactly(length) if length else b""
        return status, data

    def close(self):
        if self.writer:
            self.writer.close()


def trip(name, rng):
    return {
        "name": name,
        "destination": rng.choice(DESTINATIONS),
        "startDate": f"2027-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T09:00:00Z",
        "price": round(rng.uniform(50, 2000), 2),
        "latitude": rng.uniform(37, 42),
        "longitude": rng.uniform(-9.5, -6.2),
    }


async def phase(url, concurrency, seconds, work):
    """Runs `work(client, worker, i)` in `concurrency` loops for `seconds`."""
    host, port = url.hostname, url.port or 80
    latencies, errors = [], []
    deadline = time.monotonic() + seconds

    async def loop(worker):
        client, i = Client(host, port), 0
        try:
            while time.monotonic() < deadline:
                started = time.monotonic()
                try:
                    ok = await asyncio.wait_for(work(client, worker, i), timeout=10)
                except (OSError, ConnectionError, asyncio.IncompleteReadError, ValueError, asyncio.TimeoutError) as error:
                    client.close()
                    client = Client(host, port)
                    ok = f"{type(error).__name__}: {error}"
                latencies.append(time.monotonic() - started)
                if ok is not True:
                    errors.append(ok)
                i += 1
        finally:
            client.close()

    started = time.monotonic()
    await asyncio.gather(*(loop(w) for w in range(concurrency)))
    return latencies, errors, time.monotonic() - started


def row(name, latencies, errors, elapsed):
    ordered = sorted(latencies)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else 0
    return (f"| {name} | {len(latencies)} | {len(errors)} | {len(latencies) / elapsed:,.0f} | "
            f"{pick(0.50):.2f} ms | {pick(0.99):.2f} ms |")


async def check_only(url, acked_path, before, in_flight, label):
    """The lost-write check of writes another client made (Scripts/server-load.sh)."""
    with open(acked_path, encoding="utf-8") as lines:
        acked = dict(line.split() for line in lines if line.strip())
    client = Client(url.hostname, url.port or 80)
    status, data = await client.request("GET", "/stats")
    if status != 200:
        sys.exit(f"GET /stats: {status}")
    after = json.loads(data)["trips"]
    sample = random.sample(sorted(acked), min(500, len(acked)))
    missing, changed = 0, 0
    for name in sample:
        status, data = await client.request("GET", f"/trips/{quote(name)}")
        if status != 200:
            missing += 1
        elif json.loads(data)["price"] != float(acked[name]):
            changed += 1
    client.close()
    extra = after - before - len(acked)
    label = f"{label}: " if label else ""
    print(f"{label}trips {before} → {after} ({len(acked)} acknowledged writes, {extra} unacknowledged "
          f"stored, at most {in_flight} may be); {missing} of {len(sample)} sampled writes missing, "
          f"{changed} read back changed")
    if not acked or missing or changed or extra < 0 or extra > in_flight:
        sys.exit("lost or unexpected writes" if acked else "no acknowledged write")


async def lost_updates(urls, writers, appends, label):
    """The lost-update check of read-modify-writes on several servers over one store
    (Scripts/server-scale.sh): `writers` clients, writer w on server w mod len(urls),
    each append their own tokens to one trip's notes, `appends` times: GET the trip
    (its notes and ETag), PATCH the notes plus a token with `If-Match: <ETag>`, and on
    412 (another append landed since the GET) or 409 (one landed between the server's
    read and its save) start again from the GET. Every token must then be in the notes
    exactly once: an update acknowledged and then overwritten would be missing."""
    name = f"race-{random.randrange(16**6):06x}"
    first = Client(urls[0].hostname, urls[0].port or 80)
    body = trip(name, random.Random(name))
    status, _ = await first.request("POST", "/trips", body)
    first.close()
    if status != 201:
        sys.exit(f"lost-update check: POST {status}")
    retries = {412: 0, 409: 0}

    async def writer(w):
        url = urls[w % len(urls)]
        client = Client(url.hostname, url.port or 80)
        try:
            for i in range(appends):
                while True:
                    status, data = await client.request("GET", f"/trips/{name}")
                    if status != 200 or "etag" not in client.headers:
                        raise RuntimeError(f"lost-update check: GET {status}, ETag {client.headers.get('etag')}")
                    notes = json.loads(data).get("notes") or ""
                    change = {"notes": (notes + " " if notes else "") + f"w{w}-{i}"}
                    status, _ = await client.request("PATCH", f"/trips/{name}", change, {"If-Match": client.headers["etag"]})
                    if status == 200:
                        break
                    if status not in retries:
                        raise RuntimeError(f"lost-update check: PATCH {status}")
                    retries[status] += 1
        finally:
            client.close()

    started = time.monotonic()
    try:
        await asyncio.gather(*(writer(w) for w in range(writers)))
    except (RuntimeError, OSError, ConnectionError, asyncio.IncompleteReadError) as error:
        sys.exit(str(error))
    elapsed = time.monotonic() - started
    client = Client(urls[-1].hostname, urls[-1].port or 80)
    status, data = await client.request("GET", f"/trips/{name}")
    client.close()
    tokens = (json.loads(data).get("notes") or "").split() if status == 200 else []
    expected = {f"w{w}-{i}" for w in range(writers) for i in range(appends)}
    missing = len(expected - set(tokens))
    twice = len(tokens) - len(set(tokens))
    label = f"{label}: " if label else ""
    print(f"{label}lost-update check: {writers} writers over {len(urls)} server(s), {appends} appends each "
          f"(GET, then PATCH with If-Match) in {elapsed:.1f} s: {len(expected) - missing} of {len(expected)} "
          f"tokens stored, {missing} missing, {twice} twice; retries: {retries[412]} after 412, "
          f"{retries[409]} after 409")
    if missing or twice or len(tokens) != len(expected):
        sys.exit("lost or repeated updates")


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8080")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--label", default="")
    parser.add_argument("--check-only", action="store_true",
                        help="only check the writes of --acked (made by another client, e.g. wrk)")
    parser.add_argument("--acked", help="--check-only: a file of acknowledged writes, one 'name price' a line")
    parser.add_argument("--before", type=int, default=0, help="--check-only: trips stored before the writes")
    parser.add_argument("--in-flight", type=int, default=0,
                        help="--check-only: how many unacknowledged writes may have been stored")
    parser.add_argument("--lost-updates", action="store_true",
                        help="only the lost-update check: read-modify-writes of one trip, with If-Match, "
                             "from --writers clients spread over the servers of --url (comma-separated)")
    parser.add_argument("--writers", type=int, default=4, help="--lost-updates: clients")
    parser.add_argument("--appends", type=int, default=50, help="--lost-updates: appends per client")
    args = parser.parse_args()
    if args.lost_updates:
        urls = [urlparse(u) for u in args.url.split(",")]
        await lost_updates(urls, args.writers, args.appends, args.label)
        return
    url = urlparse(args.url)
    if args.check_only:
        if not args.acked:
            parser.error("--check-only needs --acked")
        await check_only(url, args.acked, args.before, args.in_flight, args.label)
        return
    run = f"{random.randrange(16**6):06x}"
    written = {}

    async def write(client, worker, i):
        rng = random.Random(hash((run, worker, i)))
        body = trip(f"lt-{run}-{worker}-{i}", rng)
        status, _ = await client.request("POST", "/trips", body)
        if status != 201:
            return f"POST {status}"
        written[body["name"]] = body
        return True

    async def read(client, worker, i):
        if i % 4 == 3:
            destination = DESTINATIONS[(worker + i) % len(DESTINATIONS)]
            status, data = await client.request("GET", f"/trips?destination={quote(destination)}&sort=-price&limit=20")
            return True if status == 200 and isinstance(json.loads(data), list) else f"search {status}"
        name = random.choice(names)
        status, data = await client.request("GET", f"/trips/{name}")
        if status != 200:
            return f"GET {status}"
        return True if json.loads(data)["price"] == written[name]["price"] else "GET returned other values"

    status, data = await Client(url.hostname, url.port or 80).request("GET", "/stats")
    before = json.loads(data)["trips"]
    w = await phase(url, args.concurrency, args.seconds, write)
    names = list(written)
    if not names:
        sys.exit("no write succeeded")
    r = await phase(url, args.concurrency, args.seconds, read)

    # No lost writes: every acknowledged trip is there, and a sample reads back whole.
    client = Client(url.hostname, url.port or 80)
    status, data = await client.request("GET", "/stats")
    after = json.loads(data)["trips"]
    lost = [n for n in random.sample(names, min(500, len(names)))
            if (await client.request("GET", f"/trips/{n}"))[0] != 200]
    client.close()
    label = f" ({args.label})" if args.label else ""
    print(f"| phase{label} | requests | errors | requests/s | p50 | p99 |")
    print("| --- | --- | --- | --- | --- | --- |")
    print(row("writes: POST /trips", *w))
    print(row("reads: GET /trips/:name, 1 in 4 a search", *r))
    print(f"\nconcurrency {args.concurrency}, {args.seconds:g} s per phase; trips {before} → {after} "
          f"({len(written)} acknowledged writes, {after - before - len(written)} unaccounted); "
          f"{len(lost)} of {min(500, len(names))} sampled writes missing")
    errors = w[1] + r[1]
    if errors:
        print("errors:", sorted(set(map(str, errors)))[:5])
    if lost or after - before != len(written) or errors:
        sys.exit(1)


if __name__ == "__main__":
    asyncio.run(main())
