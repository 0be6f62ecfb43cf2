/**
 * The adapter against a scripted local server: complete pagination (keyset pages capped by the
 * server, the deprecated offset lists only where keyset is not served, their 422 handled), explicit
 * `closed`, lookups of closed markets through keyset, books from each token, windowed history and
 * closed markets' coarse history, error mapping and retries (VENUES.md §1.2, §1.3, §1.7;
 * VENUES-AUDIT #6, #8).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../../src/infra/clock";
import { silentLogger } from "../../../src/infra/log";
import { VenueError } from "../../../src/venues/errors";
import { PolymarketVenue } from "../../../src/venues/polymarket/adapter";
import { C1, fixture, T1N, T1Y } from "./fixtures";
import { startScriptedServer } from "./server";

let server: Awaited<ReturnType<typeof startScriptedServer>>;
const sleeps: number[] = [];
const logs: Array<{ level: string; obj: object; msg: string }> = [];

beforeAll(async () => {
  server = await startScriptedServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.reset();
  sleeps.length = 0;
  logs.length = 0;
});

function venue() {
  return new PolymarketVenue({
    gammaUrl: `${server.url}/gamma`,
    clobUrl: `${server.url}/clob`,
    dataUrl: `${server.url}/data`,
    wsUrl: "ws://127.0.0.1:1/ws",
    clock: new ManualClock(Date.UTC(2026, 10, 22, 12)),
    log: {
      ...silentLogger,
      info: (obj, msg) => logs.push({ level: "info", obj, msg }),
      warn: (obj, msg) => logs.push({ level: "warn", obj, msg }),
    },
    http: {
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 1,
      maxRetries: 3,
    },
  });
}

/** n distinct valid Gamma markets derived from the fixture. */
function markets(n: number, from = 0) {
  const base = fixture("gamma-market.json");
  return Array.from({ length: n }, (_, i) => {
    const k = from + i;
    return {
      ...base,
      id: String(1000 + k),
      conditionId: `0x${k.toString(16).padStart(64, "0")}`,
      clobTokenIds: JSON.stringify([`${k}1`, `${k}2`]),
      events: [{ id: String(50 + (k % 3)) }],
    };
  });
}

/** A keyset endpoint over `rows`: `size` a page at most, `next_cursor` absent on the last page. */
function keysetRoute(rows: unknown[], size: number) {
  return (req: { query: URLSearchParams }) => {
    expect(req.query.get("offset")).toBeNull();
    const at = Number(req.query.get("after_cursor") ?? "0");
    const page = rows.slice(at, at + Math.min(size, Number(req.query.get("limit"))));
    const next = at + page.length;
    return { body: next < rows.length ? { markets: page, next_cursor: String(next) } : { markets: page } };
  };
}

describe("discovery", () => {
  it("enumerates /markets/keyset page by page, 100 asked, however many the server gives, never the offset list", async () => {
    const all = [...markets(130), fixture("gamma-market-malformed.json")];
    // The server caps pages at 50 although we ask for 100.
    server.on("GET", "/gamma/markets/keyset", keysetRoute(all, 50));
    const progress: number[] = [];
    const list = await venue().listMarkets({ status: "open" }, (p) => progress.push(p.items));
    expect(list).toHaveLength(130);
    expect(new Set(list.map((m) => m.id)).size).toBe(130);
    expect(server.seen.map((s) => [s.path, s.query.get("after_cursor")])).toEqual([
      ["/gamma/markets/keyset", null],
      ["/gamma/markets/keyset", "50"],
      ["/gamma/markets/keyset", "100"],
    ]);
    for (const s of server.seen) {
      expect(s.query.get("closed")).toBe("false");
      expect(s.query.get("limit")).toBe("100");
    }
    expect(progress).toEqual([50, 100, 131]);
    // the malformed market is logged with its id and skipped
    expect(logs.some((l) => l.msg.includes(`skipped market 0x${"f6".repeat(32)}`))).toBe(true);
  });

  it("uses the deprecated offset list only where keyset is not served, and takes its 422 'offset too large' as the end", async () => {
    // No /markets/keyset here (404). The legacy list is deprecated, and its offset cap is lower than ours.
    server.on("GET", "/gamma/markets", (req) => {
      const offset = Number(req.query.get("offset"));
      const headers = { deprecation: "true", warning: '299 - "use /markets/keyset"' };
      if (offset >= 300)
        return { status: 422, headers, body: { error: "offset too large, use /markets/keyset" } };
      return { headers, body: markets(100, offset) };
    });
    const extra = markets(1, 20_000)[0];
    server.on("GET", "/gamma/events/keyset", () => ({
      body: { events: [{ id: "77", title: "Late event", markets: [extra, markets(1, 5)[0]] }] },
    }));
    const list = await venue().listMarkets();
    expect(list).toHaveLength(301); // three offset pages, plus the one only the event listing had
    expect(list.find((m) => m.id.endsWith(`${(20_000).toString(16)}`))).toMatchObject({
      eventId: "polymarket:77",
    });
    expect(server.seen.filter((s) => s.path === "/gamma/markets").map((s) => s.query.get("offset"))).toEqual([
      "0",
      "100",
      "200",
      "300",
    ]);
    const kinds = logs.map((l) => (l.obj as { kind?: string }).kind).filter(Boolean);
    expect(kinds).toEqual(
      expect.arrayContaining(["markets_keyset_unavailable", "gamma_deprecated", "gamma_offset_cap"]),
    );
  });

  it("finishes through the keyset event listing when Gamma's offset cap is reached", async () => {
    server.on("GET", "/gamma/markets", (req) => {
      const offset = Number(req.query.get("offset"));
      if (offset > 10_000) return { status: 422, body: { error: "offset must be <= 10000" } };
      return { body: markets(100, offset) };
    });
    const extra = markets(1, 20_000)[0];
    server.on("GET", "/gamma/events/keyset", () => ({
      body: { events: [{ id: "77", title: "Late event", markets: [extra, markets(1, 5)[0]] }] },
    }));
    const list = await venue().listMarkets();
    expect(list).toHaveLength(10_100 + 1); // 101 offset pages of 100, plus the one only the keyset listing had
    expect(list.at(-1)).toMatchObject({ eventId: "polymarket:77" });
    expect(server.seen.some((s) => Number(s.query.get("offset")) > 10_000)).toBe(false);
  });

  it("logs each kind of oddity once, however many markets show it", async () => {
    const sports = fixture("gamma-market-sports.json");
    const page = [0, 1, 2].map((i) => ({
      ...sports,
      conditionId: `0x${String(i).repeat(64)}`,
      clobTokenIds: JSON.stringify([`${i}1`, `${i}2`]),
      umaResolutionStatus: "brand-new-state",
    }));
    server.on("GET", "/gamma/markets/keyset", () => ({ body: { markets: page } }));
    expect(await venue().listMarkets()).toHaveLength(3);
    const kinds = logs.map((l) => (l.obj as { kind?: string }).kind).filter(Boolean);
    expect(kinds.sort()).toEqual(["team_outcomes", "unknown_uma_resolution_status"]);
  });

  it("asks for closed=false and closed=true for status 'all' and filters by status", async () => {
    server.on("GET", "/gamma/markets/keyset", (req) =>
      req.query.get("closed") === "true"
        ? { body: { markets: [fixture("gamma-market-resolved-no.json")] } }
        : { body: { markets: [fixture("gamma-market.json")] } },
    );
    const v = venue();
    expect((await v.listMarkets({ status: "all" })).map((m) => m.status).sort()).toEqual([
      "open",
      "resolved",
    ]);
    server.seen.length = 0;
    expect((await v.listMarkets({ status: "closed" })).map((m) => m.status)).toEqual([]);
    expect(server.seen.every((s) => s.query.get("closed") === "true")).toBe(true);
    expect((await v.listMarkets({ status: "resolved" })).map((m) => m.resolution)).toEqual(["no"]);
  });

  it("lists events through keyset pages until next_cursor is absent", async () => {
    const [neg, snow] = fixture<unknown[]>("gamma-events.json");
    const pages: Record<string, { events: unknown[]; next_cursor?: string }> = {
      "": { events: [neg], next_cursor: "c1" },
      c1: { events: [snow], next_cursor: "c2" },
      c2: { events: [{ ...(snow as object), id: "30003", slug: "third" }] },
    };
    server.on("GET", "/gamma/events/keyset", (req) => {
      expect(req.query.get("offset")).toBeNull();
      return { body: pages[req.query.get("after_cursor") ?? ""] };
    });
    const events = await venue().listEvents({ status: "open" });
    expect(events.map((e) => e.venueEventId)).toEqual(["30001", "30002", "30003"]);
    expect(
      server.seen.map((s) => [s.query.get("after_cursor"), s.query.get("closed"), s.query.get("limit")]),
    ).toEqual([
      [null, "false", "500"],
      ["c1", "false", "500"],
      ["c2", "false", "500"],
    ]);
  });

  it("falls back to offset /events when keyset is not served, and refuses a looping cursor", async () => {
    const [neg, snow] = fixture<unknown[]>("gamma-events.json");
    server.on("GET", "/gamma/events", (req) => ({
      body: req.query.get("offset") === "0" ? [neg, snow] : [],
    }));
    expect((await venue().listEvents()).map((e) => e.id)).toEqual(["polymarket:30001", "polymarket:30002"]);
    server.reset();
    server.on("GET", "/gamma/events/keyset", () => ({ body: { events: [neg], next_cursor: "same" } }));
    await expect(venue().listEvents()).rejects.toMatchObject({ kind: "bad_response" });
  });

  it("lists an event's markets via /events/{id}", async () => {
    const [neg] = fixture<unknown[]>("gamma-events.json");
    server.on("GET", "/gamma/events/30001", () => ({ body: neg }));
    const list = await venue().listMarkets({ venueEventId: "30001", status: "open" });
    expect(list.map((m) => m.eventId)).toEqual(["polymarket:30001", "polymarket:30001"]);
  });

  it("finds a closed market through keyset by asking again with closed=true, and 404s an unknown one", async () => {
    const resolved = fixture("gamma-market-resolved-no.json");
    server.on("GET", "/gamma/markets/keyset", (req) => ({
      body: {
        markets:
          req.query.get("closed") === "true" && req.query.get("condition_ids") === resolved.conditionId
            ? [resolved]
            : [],
      },
    }));
    const v = venue();
    const market = await v.getMarket(`polymarket:${resolved.conditionId}`);
    expect(market.status).toBe("resolved");
    expect(server.seen.map((s) => [s.path, s.query.get("closed")])).toEqual([
      ["/gamma/markets/keyset", "false"],
      ["/gamma/markets/keyset", "true"],
    ]);
    await expect(v.getMarket(`polymarket:0x${"ab".repeat(32)}`)).rejects.toMatchObject({ kind: "not_found" });
    await expect(v.getMarket("polymarket:nope")).rejects.toMatchObject({ kind: "not_found" });
  });
});

describe("books and history", () => {
  it("fetches each token's own book and history of the YES token", async () => {
    server.on("GET", "/gamma/markets/keyset", () => ({ body: { markets: [fixture("gamma-market.json")] } }));
    server.on("GET", "/clob/book", (req) => ({
      body: fixture(req.query.get("token_id") === T1Y ? "book-yes.json" : "book-no.json"),
    }));
    server.on("GET", "/clob/prices-history", () => ({ body: fixture("prices-history.json") }));
    const v = venue();
    const book = await v.getOrderBook(`polymarket:${C1}`, 2);
    expect(book.yes.bids[0]).toEqual({ price: 500_000, size: 125_500_000 });
    expect(book.no.bids[0]).toEqual({ price: 480_000, size: 705_000_000 });
    expect(book.yes.bids).toHaveLength(2);
    expect(
      server.seen
        .filter((s) => s.path === "/clob/book")
        .map((s) => s.query.get("token_id"))
        .sort(),
    ).toEqual([T1N, T1Y].sort());
    const history = await v.getPriceHistory(`polymarket:${C1}`, {
      interval: "1h",
      start: "2026-08-09T00:00:00Z",
      end: "2026-08-10T00:00:00Z",
    });
    expect(history).toEqual({ series: expect.any(Array) });
    expect((history as { series: unknown[] }).series).toHaveLength(3);
    const req = server.seen.find((s) => s.path === "/clob/prices-history")!;
    expect(Object.fromEntries(req.query)).toEqual({
      market: T1Y,
      startTs: "1786233600",
      endTs: "1786320000",
      fidelity: "60",
    });
  });

  it("asks /prices-history in windows of at most 15 days and keeps each point inside its window", async () => {
    server.on("GET", "/gamma/markets/keyset", () => ({ body: { markets: [fixture("gamma-market.json")] } }));
    const start = Date.UTC(2026, 7, 1);
    const end = start + 40 * 86_400_000;
    server.on("GET", "/clob/prices-history", (req) => {
      const a = Number(req.query.get("startTs"));
      const b = Number(req.query.get("endTs"));
      if (b - a > 1_296_000)
        return {
          status: 400,
          body: { error: "invalid filters: 'startTs' and 'endTs' interval is too long" },
        };
      const history = [];
      for (let t = a; t <= b; t += 86_400) history.push({ t, p: 0.5 });
      // A live market's answer has been seen to append the current price past endTs.
      history.push({ t: b + 10 * 86_400, p: 0.9 });
      return { body: { history } };
    });
    const answer = (await venue().getPriceHistory(`polymarket:${C1}`, {
      interval: "1h",
      start: new Date(start).toISOString(),
      end: new Date(end).toISOString(),
    })) as { series: Array<{ timestamp: string; price: number }> };
    const windows = server.seen
      .filter((s) => s.path === "/clob/prices-history")
      .map((s) => [Number(s.query.get("startTs")), Number(s.query.get("endTs"))]);
    expect(windows).toEqual([
      [start / 1000, start / 1000 + 1_296_000],
      [start / 1000 + 1_296_000, start / 1000 + 2_592_000],
      [start / 1000 + 2_592_000, end / 1000],
    ]);
    // One point a day, each once, none past the end asked for.
    expect(answer.series.map((p) => p.timestamp)).toEqual(
      Array.from({ length: 40 }, (_, i) => new Date(start + i * 86_400_000).toISOString()),
    );
    expect(answer.series.every((p) => p.price === 500_000)).toBe(true);
  });

  it("asks a closed market's history at 720 minutes when finer comes back empty, and says it is coarser", async () => {
    const resolved = fixture("gamma-market-resolved-no.json");
    server.on("GET", "/gamma/markets/keyset", (req) => ({
      body: { markets: req.query.get("closed") === "true" ? [resolved] : [] },
    }));
    const start = Date.UTC(2026, 7, 1, 6); // 06:00: the 12-hour points fall at 00:00 and 12:00
    const end = start + 2 * 86_400_000;
    server.on("GET", "/clob/prices-history", (req) => {
      const fidelity = Number(req.query.get("fidelity"));
      if (fidelity < 720) return { body: { history: [] } };
      const a = Number(req.query.get("startTs"));
      const b = Number(req.query.get("endTs"));
      const history = [];
      for (let t = Math.ceil(a / 43_200) * 43_200; t <= b; t += 43_200)
        history.push({ t, p: t % 86_400 ? 0.2 : 0.1 });
      return { body: { history } };
    });
    const answer = await venue().getPriceHistory(`polymarket:${resolved.conditionId}`, {
      interval: "1h",
      start: new Date(start).toISOString(),
      end: new Date(end).toISOString(),
    });
    const asked = server.seen
      .filter((s) => s.path === "/clob/prices-history")
      .map((s) => [Number(s.query.get("fidelity")), Number(s.query.get("startTs"))]);
    // Finer first; then 720 minutes, reaching back one step for the price in force at the start.
    expect(asked).toEqual([
      [60, start / 1000],
      [720, start / 1000 - 43_200],
    ]);
    const iso = (ms: number) => new Date(ms).toISOString();
    const H = 3_600_000;
    expect(answer).toEqual({
      coarserMinutes: 720,
      series: [
        { timestamp: iso(start), price: 100_000 }, // 00:00's price, in force at 06:00
        { timestamp: iso(start + 6 * H), price: 200_000 },
        { timestamp: iso(start + 18 * H), price: 100_000 },
        { timestamp: iso(start + 30 * H), price: 200_000 },
        { timestamp: iso(start + 42 * H), price: 100_000 },
      ],
    });
  });

  it("refuses a NO book answered with the YES token's book", async () => {
    server.on("GET", "/gamma/markets/keyset", () => ({ body: { markets: [fixture("gamma-market.json")] } }));
    server.on("GET", "/clob/book", () => ({ body: fixture("book-yes.json") }));
    await expect(venue().getOrderBook(`polymarket:${C1}`)).rejects.toThrowError(/NO book is for token/);
  });
});

describe("errors and retries (VENUES.md §1.7)", () => {
  it("retries a 429 no sooner than Retry-After, and a 500, then succeeds", async () => {
    let calls = 0;
    server.on("GET", "/gamma/markets/keyset", () => {
      calls++;
      if (calls === 1)
        return { status: 429, headers: { "retry-after": "7" }, body: { error: "Too Many Requests" } };
      if (calls === 2) return { status: 500, body: { error: "internal" } };
      return { body: { markets: [fixture("gamma-market.json")] } };
    });
    const market = await venue().getMarket(`polymarket:${C1}`);
    expect(market.id).toBe(`polymarket:${C1}`);
    expect(calls).toBe(3);
    expect(sleeps[0]).toBeGreaterThanOrEqual(7000);
    expect(sleeps).toHaveLength(2);
  });

  it("does not retry a 400 and keeps the venue's message; 404 book is not_found", async () => {
    let calls = 0;
    server.on("GET", "/gamma/markets/keyset", () => {
      calls++;
      return { status: 400, body: { error: "invalid condition_ids" } };
    });
    const error = await venue()
      .getMarket(`polymarket:${C1}`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VenueError);
    expect(error).toMatchObject({ kind: "rejected", retryable: false });
    expect((error as VenueError).details.venueMessage).toBe("invalid condition_ids");
    expect(calls).toBe(1);

    server.reset();
    server.on("GET", "/gamma/markets/keyset", () => ({ body: { markets: [fixture("gamma-market.json")] } }));
    server.on("GET", "/clob/book", () => ({
      status: 404,
      body: { error: "No orderbook exists for the requested token id" },
    }));
    await expect(venue().getOrderBook(`polymarket:${C1}`)).rejects.toMatchObject({
      kind: "not_found",
      details: { venueMessage: "No orderbook exists for the requested token id" },
    });
  });

  it("answers garbage as bad_response", async () => {
    server.on("GET", "/gamma/markets/keyset", () => ({ body: { not: "an array" } }));
    await expect(venue().listMarkets()).rejects.toMatchObject({ kind: "bad_response" });
  });
});

describe("capabilities", () => {
  it("publishes production URLs, no sandbox, and documented budgets", () => {
    const c = venue().capabilities;
    expect(c.urls).toEqual({
      production: {
        gamma: "https://gamma-api.polymarket.com",
        clob: "https://clob.polymarket.com",
        data: "https://data-api.polymarket.com",
        ws: "wss://ws-subscriptions-clob.polymarket.com/ws",
      },
      sandbox: null,
    });
    expect(c.supports.nativeNoBook).toBe(true);
    expect(c.rateLimits.read).toEqual({ requests: 300, windowMs: 10_000 });
  });
});
