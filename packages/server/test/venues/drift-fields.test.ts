/**
 * The field lists `crossbook venues check` holds the venues to (polymarket/fields.ts,
 * kalshi/fields.ts) must name every field our normalizers read. Each normalizer runs over the
 * fixtures through a recording Proxy that notes every property it reads; a read the endpoint's list
 * lacks fails here, so a normalizer cannot start reading a field the drift check does not watch.
 * Also: how one answer is held against a list (missing, wrong type, new, not seen).
 */
import { describe, expect, it } from "vitest";
import { checkSample, type EndpointFields, parseSpec } from "../../src/venues/drift";
import { KALSHI_ENDPOINTS } from "../../src/venues/kalshi/fields";
import { parseWsMessage } from "../../src/venues/kalshi/messages";
import {
  eventInfo,
  normalizeOrderBook as kalshiBook,
  normalizeCandles,
  normalizeCutoff,
  normalizeEvent,
  normalizeMarkets,
  seriesFees,
} from "../../src/venues/kalshi/normalize";
import { LocalBooks } from "../../src/venues/polymarket/books";
import { POLYMARKET_ENDPOINTS } from "../../src/venues/polymarket/fields";
import {
  clobFeeSchedule,
  normalizeGammaEvent,
  normalizeGammaMarket,
  normalizeOrderBook,
  normalizePriceHistory,
} from "../../src/venues/polymarket/normalize";
import { fixture as kalshiFixture } from "./kalshi/fixtures";
import { C1, fixture, T1N, T1Y } from "./polymarket/fixtures";

/** Proxy -> the JSON it wraps, so serializing one (a log line, an error) reads no field. */
const targets = new WeakMap<object, unknown>();

/**
 * Wraps JSON so every property read is noted as a field path (`a.b`, `a[]` for any element).
 * Array lengths and methods, symbols and Object.prototype names are not fields.
 */
function recording(root: unknown, base: string, seen: Set<string>): unknown {
  const cache = new WeakMap<object, unknown>();
  const wrap = (value: unknown, path: string): unknown => {
    if (typeof value !== "object" || value === null) return value;
    const hit = cache.get(value);
    if (hit) return hit;
    const isArray = Array.isArray(value);
    const field = (prop: string | symbol): string | undefined => {
      if (typeof prop === "symbol") return undefined;
      if (isArray) return /^\d+$/.test(prop) ? `${path}[]` : undefined;
      if (prop in Object.prototype) return undefined;
      return path === "" ? prop : `${path}.${prop}`;
    };
    const proxy = new Proxy(value, {
      get(target, prop, receiver) {
        const at = field(prop);
        const child = Reflect.get(target, prop, receiver);
        if (at === undefined) return child;
        seen.add(at);
        return wrap(child, at);
      },
      has(target, prop) {
        const at = field(prop);
        if (at !== undefined) seen.add(at);
        return Reflect.has(target, prop);
      },
    });
    cache.set(value, proxy);
    targets.set(proxy, value);
    return proxy;
  };
  return wrap(root, base);
}

/** The paths an endpoint's list allows: its fields and the containers above them. */
function allowed(endpoint: EndpointFields): Set<string> {
  const out = new Set<string>();
  for (const path of Object.keys(endpoint.read)) {
    out.add(path);
    // Every prefix ending before a "." or a "[]".
    for (let i = 0; i < path.length; i++) {
      if (path[i] === "." || path.startsWith("[]", i)) out.add(path.slice(0, i));
    }
  }
  return out;
}

function endpoint(list: readonly EndpointFields[], id: string): EndpointFields {
  const found = list.find((e) => e.id === id);
  if (!found) throw new Error(`no endpoint ${id}`);
  return found;
}

const quiet = () => {};
const ctx = { now: "2026-11-22T12:00:00.000Z", report: quiet };

/**
 * Runs a normalizer through `run`, which wraps each venue body it passes with `rec(body, base)`
 * (`base`: where that body sits in endpoint `id`'s answer); returns the reads the list lacks.
 */
function unlisted(
  list: readonly EndpointFields[],
  id: string,
  run: (rec: (body: unknown, base: string) => unknown) => void,
): string[] {
  const seen = new Set<string>();
  // A normalizer that puts a payload into a report or an error serializes it: not a field read.
  const stringify = JSON.stringify;
  JSON.stringify = ((value: unknown, ...rest: []) =>
    stringify(
      typeof value === "object" && value !== null && targets.has(value) ? targets.get(value) : value,
      ...rest,
    )) as typeof JSON.stringify;
  try {
    run((body, base) => recording(body, base, seen));
  } catch {
    // A fixture made to fail still shows what was read before it failed.
  } finally {
    JSON.stringify = stringify;
  }
  expect(seen.size, `${id}: the normalizer read nothing`).toBeGreaterThan(0);
  const ok = allowed(endpoint(list, id));
  return [...seen].filter((p) => p !== "" && !ok.has(p)).sort();
}

describe("every field a Polymarket normalizer reads is in polymarket/fields.ts", () => {
  const list = POLYMARKET_ENDPOINTS;
  const markets = [
    "gamma-market.json",
    "gamma-market-minimal.json",
    "gamma-market-no-first.json",
    "gamma-market-resolved-no.json",
    "gamma-market-sports.json",
    "gamma-market-malformed.json",
  ];

  it.each(markets)("markets: normalizeGammaMarket over %s", (name) => {
    const raw = fixture(name);
    const rows = Array.isArray(raw) ? raw : [raw];
    expect(
      unlisted(list, "markets", (rec) => {
        for (const m of rec(rows, "markets") as unknown[]) {
          try {
            normalizeGammaMarket(m, ctx);
          } catch {}
        }
      }),
    ).toEqual([]);
  });

  it("events and event: normalizeGammaEvent over gamma-events.json", () => {
    const events = fixture("gamma-events.json");
    expect(
      unlisted(list, "events", (rec) => {
        for (const e of rec(events, "events") as unknown[]) normalizeGammaEvent(e, ctx);
      }),
    ).toEqual([]);
    expect(unlisted(list, "event", (rec) => normalizeGammaEvent(rec(events[0], ""), ctx))).toEqual([]);
  });

  it("book: normalizeOrderBook over both token books", () => {
    const pair = { marketId: `polymarket:${C1}`, conditionId: C1, yes: T1Y, no: T1N };
    const yes = fixture("book-yes.json");
    const no = fixture("book-no.json");
    expect(
      unlisted(list, "book", (rec) =>
        normalizeOrderBook(pair, rec(yes, ""), rec(no, ""), quiet, { nowMs: 0 }),
      ),
    ).toEqual([]);
  });

  it("history: normalizePriceHistory over prices-history.json", () => {
    expect(
      unlisted(list, "history", (rec) =>
        normalizePriceHistory(rec(fixture("prices-history.json"), ""), T1Y, quiet),
      ),
    ).toEqual([]);
  });

  it("clob-market: clobFeeSchedule over clob-market.json", () => {
    expect(
      unlisted(list, "clob-market", (rec) => clobFeeSchedule(rec(fixture("clob-market.json"), ""))),
    ).toEqual([]);
  });

  it("ws: LocalBooks.apply over every market-channel fixture", () => {
    const files = [
      "ws-book.json",
      "ws-price-change.json",
      "ws-last-trade-price.json",
      "ws-tick-size-change.json",
      "ws-market-resolved.json",
    ];
    const messages = files.flatMap((f) => {
      const raw = fixture(f);
      return Array.isArray(raw) ? raw : [raw];
    });
    messages.push({
      event_type: "best_bid_ask",
      market: C1,
      asset_id: T1Y,
      best_bid: "0.5",
      best_ask: "0.52",
      spread: "0.02",
      timestamp: "1786604072222",
    });
    for (const msg of messages) {
      const books = new LocalBooks(quiet, () => ctx.now);
      books.track({ marketId: `polymarket:${C1}`, conditionId: C1, yes: T1Y, no: T1N });
      const type = String(msg.event_type);
      expect(
        unlisted(list, "ws", (rec) => books.apply(rec(msg, type) as Record<string, unknown>)),
        type,
      ).toEqual([]);
    }
  });
});

describe("every field a Kalshi normalizer reads is in kalshi/fields.ts", () => {
  const list = KALSHI_ENDPOINTS;
  const kctx = { report: quiet, now: ctx.now };

  it("markets: normalizeMarkets over markets-page.json", () => {
    const page = kalshiFixture<{ markets: unknown[] }>("markets-page.json");
    expect(unlisted(list, "markets", (rec) => normalizeMarkets(rec(page.markets, "markets"), kctx))).toEqual(
      [],
    );
  });

  it("events and event: normalizeEvent and eventInfo", () => {
    const page = kalshiFixture<{ events: unknown[] }>("events-page.json");
    expect(
      unlisted(list, "events", (rec) => {
        for (const e of rec(page.events, "events") as unknown[]) normalizeEvent(e, kctx);
      }),
    ).toEqual([]);
    const one = kalshiFixture<{ event: unknown }>("event.json");
    expect(unlisted(list, "event", (rec) => eventInfo(rec(one.event, "event")))).toEqual([]);
  });

  it("series: seriesFees over a series as SDK 3.30 `Series` documents it", () => {
    const body = {
      series: {
        ticker: "KXFED",
        frequency: "monthly",
        title: "Fed",
        category: "Economics",
        tags: [],
        settlement_sources: [],
        contract_url: "",
        contract_terms_url: "",
        fee_type: "quadratic",
        fee_multiplier: 1,
        additional_prohibitions: [],
      },
    };
    expect(unlisted(list, "series", (rec) => seriesFees(rec(body.series, "series")))).toEqual([]);
  });

  it.each(["orderbook.json", "orderbook-empty-side.json"])("book: normalizeOrderBook over %s", (name) => {
    expect(unlisted(list, "book", (rec) => kalshiBook(rec(kalshiFixture(name), ""), "T", ctx.now))).toEqual(
      [],
    );
  });

  it.each(["candlesticks-1h.json", "candlesticks-no-trades.json"])(
    "history: normalizeCandles over %s",
    (name) => {
      expect(
        unlisted(list, "history", (rec) => normalizeCandles(rec(kalshiFixture(name), ""), 60, kctx)),
      ).toEqual([]);
    },
  );

  it("cutoff: normalizeCutoff", () => {
    const body = {
      market_settled_ts: "2026-08-01T00:00:00Z",
      trades_created_ts: "2026-08-01T00:00:00Z",
      orders_updated_ts: "2026-08-01T00:00:00Z",
    };
    expect(unlisted(list, "cutoff", (rec) => normalizeCutoff(rec(body, ""), kctx))).toEqual([]);
  });

  it("ws: parseWsMessage over every market-data message the check subscribes to", () => {
    const messages = kalshiFixture<Record<string, { type: string }>>("ws-messages.json");
    const watched = Object.values(messages).filter((m) => `${m.type}` in endpoint(list, "ws").read);
    expect(new Set(watched.map((m) => m.type))).toEqual(
      new Set(["subscribed", "error", "orderbook_snapshot", "orderbook_delta", "ticker", "trade"]),
    );
    for (const msg of watched) {
      expect(
        unlisted(list, "ws", (rec) => parseWsMessage(rec(msg, msg.type), kctx)),
        msg.type,
      ).toEqual([]);
    }
  });
});

describe("one answer held against a list", () => {
  const spec: EndpointFields = {
    id: "t",
    request: "GET /t",
    read: {
      items: "array",
      "items[].id": "string",
      "items[].price": "decimal|number",
      "items[].note": "string?",
      "items[].levels[][]": "decimal",
    },
    known: ["items[].extra", "cursor"],
  };

  it("is clear when every read field is there with its type", () => {
    const r = checkSample(
      { items: [{ id: "a", price: "0.5", levels: [["0.1", "2"]], extra: 1 }], cursor: "" },
      spec,
    );
    expect(r).toEqual({ missing: [], wrongType: [], newFields: [], notSeen: ["items[].note"] });
  });

  it("names a missing field, a wrong type, a new field and a container of the wrong kind", () => {
    const r = checkSample(
      {
        items: [
          { id: "a", price: ".5", levels: [["0.1", 2]], added: true },
          { price: 0.5, levels: "none" },
        ],
      },
      spec,
    );
    expect(r.missing).toEqual([{ field: "items[].id", rows: 1, of: 2 }]);
    expect(r.wrongType).toEqual(
      expect.arrayContaining([
        { field: "items[].price", rows: 1, of: 2, expected: "decimal|number", got: ['string ".5"'] },
        { field: "items[].levels", rows: 1, of: 2, expected: "array", got: ['string "none"'] },
        { field: "items[].levels[][]", rows: 1, of: 2, expected: "decimal", got: ["number"] },
      ]),
    );
    expect(r.newFields).toEqual(["items[].added"]);
    expect(r.notSeen).toEqual(["cursor", "items[].extra", "items[].note"]);
  });

  it("rejects a type the grammar does not have", () => {
    expect(() => parseSpec("strnig")).toThrow(/unknown field type/);
    expect(parseSpec("decimal|number?")).toEqual({ types: ["decimal", "number"], optional: true });
  });
});
