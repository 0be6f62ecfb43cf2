/**
 * `crossbook venues check` (venues/drift.ts) against the fake venues: all clear on the fakes as they
 * are; a fake that drops fields, changes their types or adds some is named field by field; a venue
 * that does not answer, or answers too slowly, is unreachable (exit 2) and never hangs the check;
 * Kalshi's WebSocket is checked with a feed key and skipped, saying why, without one.
 */
import { createServer } from "node:net";
import { type KalshiFake, startKalshiFake } from "@crossbook/fakes/kalshi";
import { type PolymarketFake, startPolymarketFake } from "@crossbook/fakes/polymarket";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../src/config";
import { fakeVenueUrls } from "../../src/demo";
import { type DriftReport, formatDriftReport, runDriftCheck } from "../../src/venues/drift";

let polymarket: PolymarketFake;
let kalshi: KalshiFake;
let urls: Config["venueUrls"];
let feedKey: { keyId: string; privateKeyPem: string };

beforeAll(async () => {
  polymarket = await startPolymarketFake();
  kalshi = await startKalshiFake();
  urls = fakeVenueUrls(polymarket, kalshi);
  feedKey = await kalshi.feedKey();
});

afterAll(async () => {
  await Promise.all([polymarket.close(), kalshi.close()]);
});

afterEach(() => {
  polymarket.script.malformNext(0, "missing-fields");
  polymarket.script.injectUnexpectedFields(false);
  polymarket.script.setLatency(0);
  kalshi.script.injectUnexpectedFields(false);
});

function check(
  options: {
    venues?: Array<"polymarket" | "kalshi">;
    key?: boolean;
    timeoutMs?: number;
    venueUrls?: Config["venueUrls"];
  } = {},
  progress: string[] = [],
): Promise<DriftReport> {
  return runDriftCheck({
    config: {
      venues: ["polymarket", "kalshi"],
      venueUrls: options.venueUrls ?? urls,
      kalshiFeedKey: options.key === false ? undefined : feedKey,
    },
    ...(options.venues ? { venues: options.venues } : {}),
    timeoutMs: options.timeoutMs ?? 5_000,
    progress: (line) => progress.push(line),
  });
}

const endpoint = (report: DriftReport, venue: string, id: string) =>
  report.venues.find((v) => v.venue === venue)!.endpoints.find((e) => e.endpoint === id)!;

describe("crossbook venues check against the fakes", () => {
  it("finds every field the adapters read, with its type, on every endpoint of both fakes", async () => {
    const progress: string[] = [];
    const report = await check({}, progress);
    const endpoints = report.venues.flatMap((v) => v.endpoints);
    for (const e of endpoints) {
      expect({
        endpoint: `${e.venue} ${e.endpoint}`,
        status: e.status,
        missing: e.missing,
        wrong: e.wrong_type,
      }).toEqual({
        endpoint: `${e.venue} ${e.endpoint}`,
        status: "ok",
        missing: [],
        wrong: [],
      });
    }
    expect(endpoints.map((e) => `${e.venue} ${e.endpoint}`)).toEqual([
      "polymarket markets",
      "polymarket events",
      "polymarket event",
      "polymarket clob-market",
      "polymarket book",
      "polymarket history",
      "polymarket version",
      "polymarket ws",
      "kalshi markets",
      "kalshi events",
      "kalshi event",
      "kalshi series",
      "kalshi book",
      "kalshi history",
      "kalshi cutoff",
      "kalshi ws",
    ]);
    expect(report.exit_code).toBe(0);
    // A line as each endpoint starts and one as it ends.
    expect(progress.filter((l) => l.startsWith("kalshi book:"))).toEqual([
      expect.stringContaining("GET {api}/markets/{ticker}/orderbook"),
      "kalshi book: ok",
    ]);
    expect(formatDriftReport(report)).toContain("every field the adapters read is present with its type");
  });

  it("names the fields a Polymarket answer lost, and exits 1", async () => {
    polymarket.script.malformNext(1, "missing-fields", "/markets/keyset");
    const report = await check({ venues: ["polymarket"] });
    const markets = endpoint(report, "polymarket", "markets");
    expect(markets.status).toBe("drift");
    expect(markets.missing.map((m) => m.field)).toEqual(
      expect.arrayContaining(["markets[].conditionId", "markets[].outcomes", "markets[].clobTokenIds"]),
    );
    expect(markets.missing.find((m) => m.field === "markets[].conditionId")).toMatchObject({
      rows: 20,
      of: 20,
    });
    expect(report.exit_code).toBe(1);
    const text = formatDriftReport(report);
    expect(text).toContain("MISSING markets[].conditionId (in 20 of 20)");
    expect(text).toContain("DRIFT");
  });

  it("names a field whose type changed, and lets pass a change the adapter reads either way", async () => {
    // Decimal strings become numbers and numbers strings: `t` (unix seconds) turns into a string.
    polymarket.script.malformNext(1, "wrong-types", "/prices-history");
    const report = await check({ venues: ["polymarket"] });
    const history = endpoint(report, "polymarket", "history");
    expect(history.status).toBe("drift");
    expect(history.wrong_type).toEqual([
      {
        field: "history[].t",
        rows: expect.any(Number),
        of: expect.any(Number),
        expected: "number",
        got: [expect.stringMatching(/^string "\d+"$/)],
      },
    ]);
    expect(history.wrong_type[0]!.rows).toBe(history.wrong_type[0]!.of);
    expect(report.exit_code).toBe(1);
    // Prices as numbers instead of strings: the book parser reads both, so no drift.
    polymarket.script.malformNext(1, "wrong-types", "/book");
    expect(endpoint(await check({ venues: ["polymarket"] }), "polymarket", "book").status).toBe("ok");
  });

  it("lists fields a venue added without failing", async () => {
    kalshi.script.injectUnexpectedFields(true);
    const report = await check({ venues: ["kalshi"], key: false });
    const markets = endpoint(report, "kalshi", "markets");
    expect(markets.status).toBe("ok");
    expect(markets.new_fields).toEqual(expect.arrayContaining(["x_fake_flag", "markets[].x_fake_unknown"]));
    expect(report.exit_code).toBe(0);
    expect(formatDriftReport(report)).toMatch(/new: .*markets\[\]\.x_fake_unknown/);
  });

  it("names a Kalshi field that went missing (the market's close time)", async () => {
    kalshi.script.malformNext("missing_fields", { path: "/markets" });
    const report = await check({ venues: ["kalshi"], key: false });
    const markets = endpoint(report, "kalshi", "markets");
    expect(markets.missing.map((m) => m.field)).toEqual(
      expect.arrayContaining(["markets[].close_time", "markets[].yes_bid_dollars", "cursor"]),
    );
    expect(report.exit_code).toBe(1);
  });

  it("skips Kalshi's WebSocket without a feed key, saying why, and checks it with one", async () => {
    const without = await check({ venues: ["kalshi"], key: false });
    expect(endpoint(without, "kalshi", "ws")).toMatchObject({
      status: "skipped",
      reason: expect.stringContaining("needs KALSHI_FEED_KEY_ID"),
    });
    expect(without.exit_code).toBe(0);
    const signed = await check({ venues: ["kalshi"] });
    expect(endpoint(signed, "kalshi", "ws").status).toBe("ok");
  });

  it("reports a venue that does not answer as unreachable (exit 2) and skips its other endpoints", async () => {
    // A port nothing listens on.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const dead = `http://127.0.0.1:${port}`;
    const report = await check({
      venues: ["polymarket"],
      venueUrls: {
        ...urls,
        polymarket: { gamma: dead, clob: dead, data: dead, ws: `ws://127.0.0.1:${port}` },
      },
    });
    const venue = report.venues[0]!;
    expect(venue.reachable).toBe(false);
    expect(venue.endpoints[0]).toMatchObject({ endpoint: "markets", status: "unreachable" });
    expect(venue.endpoints.slice(1).every((e) => e.status === "skipped")).toBe(true);
    expect(report.exit_code).toBe(2);
  });

  it("gives up on a venue slower than the timeout instead of waiting for it", async () => {
    polymarket.script.setLatency(3_000);
    const report = await check({ venues: ["polymarket"], timeoutMs: 300 });
    expect(endpoint(report, "polymarket", "markets")).toMatchObject({
      status: "unreachable",
      reason: expect.stringContaining("timed out"),
    });
    expect(report.exit_code).toBe(2);
  });

  it("drift wins over an unreachable venue in the exit code", async () => {
    polymarket.script.malformNext(1, "missing-fields", "/markets/keyset");
    const dead = "http://127.0.0.1:9";
    const report = await check({
      venueUrls: { ...urls, kalshi: { api: dead, ws: "ws://127.0.0.1:9" } },
    });
    expect(endpoint(report, "kalshi", "markets").status).toBe("unreachable");
    expect(endpoint(report, "polymarket", "markets").status).toBe("drift");
    expect(report.exit_code).toBe(1);
  });
});
