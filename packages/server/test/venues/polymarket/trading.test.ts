/**
 * The account side against a scripted CLOB that verifies auth the way the venue does: L1 ClobAuth
 * for key derivation, L2 HMAC over the exact body, and the EIP-712 V2 order signature against the
 * neg-risk exchange domain (VENUES.md §1.5, §1.6). Plus the account normalizers on fixtures.
 */
import { type Hex, recoverTypedDataAddress } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../../src/infra/clock";
import {
  normalizeBalance,
  normalizeOpenOrder,
  normalizePosition,
  normalizeTradeFills,
} from "../../../src/venues/polymarket/account";
import { PolymarketVenue } from "../../../src/venues/polymarket/adapter";
import {
  clobAuthTypedData,
  hmacSignature,
  orderDomain,
  orderTypedData,
} from "../../../src/venues/polymarket/signing";
import type { VenueCredentials } from "../../../src/venues/venue";
import { C2, fixture, reports, T2N, T2Y } from "./fixtures";
import { type Seen, startScriptedServer } from "./server";

const KEY: Hex = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const ADDRESS = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const FUNDER = "0x1234567890123456789012345678901234567890";
const API = {
  apiKey: "f4f247b7-4ac7-ff29-a152-04fda0a8755a",
  secret: "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ=",
  passphrase: "abcd",
};
const NOW = Date.UTC(2026, 10, 22, 12);
const ORDER_ID = `0x${"9f".repeat(32)}`;
const MARKET = `polymarket:${C2}`;

let server: Awaited<ReturnType<typeof startScriptedServer>>;
const failures: string[] = [];

beforeAll(async () => {
  server = await startScriptedServer();
});
afterAll(() => server.close());

/** Checks L2 headers like the venue: HMAC over timestamp + method + path (no query, no base) + body. */
function checkL2(req: Seen): boolean {
  const path = req.path.replace(/^\/clob/, "");
  const expected = hmacSignature(API.secret, String(req.headers.poly_timestamp), req.method, path, req.body);
  const ok =
    req.headers.poly_api_key === API.apiKey &&
    req.headers.poly_passphrase === API.passphrase &&
    req.headers.poly_address === ADDRESS &&
    req.headers.poly_signature === expected &&
    req.headers.poly_timestamp === String(Math.floor(NOW / 1000));
  if (!ok) failures.push(`bad L2 on ${req.method} ${req.path}`);
  return ok;
}
const l2 = (route: (req: Seen) => { status?: number; body?: unknown }) => (req: Seen) =>
  checkL2(req) ? route(req) : { status: 401, body: { error: "Unauthorized/Invalid api key" } };

let placed: Array<Record<string, unknown>> = [];
let versionCalls = 0;

beforeEach(() => {
  server.reset();
  failures.length = 0;
  placed = [];
  versionCalls = 0;
  server.on("GET", "/gamma/markets", (req) => {
    const closed = req.query.get("closed") === "true";
    const market = fixture("gamma-market-no-first.json");
    if (req.query.get("condition_ids") === `0x${"cc".repeat(32)}`)
      return { body: closed ? [{ ...market, conditionId: `0x${"cc".repeat(32)}`, closed: true }] : [] };
    return { body: closed ? [] : [market] };
  });
  server.on("GET", "/clob/version", () => {
    versionCalls++;
    return { body: { version: 2 } };
  });
  server.on("GET", `/clob/clob-markets/${C2}`, () => ({ body: fixture("clob-market.json") }));
  server.on(
    "POST",
    "/clob/order",
    l2((req) => {
      placed.push(JSON.parse(req.body));
      return { body: fixture("order-response.json") };
    }),
  );
  server.on(
    "GET",
    `/clob/data/order/${ORDER_ID}`,
    l2(() => ({ body: fixture("open-order.json") })),
  );
  server.on(
    "DELETE",
    "/clob/order",
    l2((req) => {
      const { orderID } = JSON.parse(req.body);
      return orderID === ORDER_ID
        ? { body: { canceled: [ORDER_ID], not_canceled: {} } }
        : { body: { canceled: [], not_canceled: { [orderID]: "already canceled or matched" } } };
    }),
  );
});

function venue() {
  return new PolymarketVenue({
    gammaUrl: `${server.url}/gamma`,
    clobUrl: `${server.url}/clob`,
    dataUrl: `${server.url}/data`,
    wsUrl: "ws://127.0.0.1:1/ws",
    clock: new ManualClock(NOW),
    http: { sleep: async () => {}, maxRetries: 1 },
  });
}

const creds: VenueCredentials = {
  venue: "polymarket",
  privateKey: KEY,
  apiKey: API.apiKey,
  apiSecret: API.secret,
  apiPassphrase: API.passphrase,
  signatureType: 0,
};

const order = {
  marketId: MARKET,
  outcome: "yes" as const,
  side: "buy" as const,
  type: "limit" as const,
  price: 631_000,
  size: 10_500_000,
  timeInForce: "GTC" as const,
};

describe("L1 key derivation", () => {
  it("derives with a ClobAuth signature, creating the key when derive finds none", async () => {
    const l1 = async (req: Seen) => {
      const recovered = await recoverTypedDataAddress({
        ...clobAuthTypedData(
          ADDRESS,
          Number(req.headers.poly_timestamp),
          Number(req.headers.poly_nonce),
          137,
        ),
        signature: req.headers.poly_signature as Hex,
      });
      return recovered === req.headers.poly_address;
    };
    const verdicts: boolean[] = [];
    server.on("GET", "/clob/auth/derive-api-key", (req) => {
      void l1(req).then((ok) => verdicts.push(ok));
      return { status: 404, body: { error: "api key not found" } };
    });
    server.on("POST", "/clob/auth/api-key", (req) => {
      void l1(req).then((ok) => verdicts.push(ok));
      return { body: API };
    });
    server.on(
      "GET",
      "/clob/balance-allowance",
      l2(() => ({ body: { balance: "1234567890", allowances: {} } })),
    );
    const v = venue();
    const keyOnly: VenueCredentials = { venue: "polymarket", privateKey: KEY, signatureType: 0 };
    expect(await v.getBalance(keyOnly)).toBe(1_234_567_890);
    expect(await v.getBalance(keyOnly)).toBe(1_234_567_890); // derived once, cached
    expect(server.seen.filter((s) => s.path.startsWith("/clob/auth")).map((s) => s.method)).toEqual([
      "GET",
      "POST",
    ]);
    expect(verdicts).toEqual([true, true]);
    const balanceReq = server.seen.find((s) => s.path === "/clob/balance-allowance")!;
    expect(Object.fromEntries(balanceReq.query)).toEqual({ asset_type: "COLLATERAL", signature_type: "0" });
    expect(failures).toEqual([]);
  });
});

describe("placeOrder", () => {
  it("signs a V2 order for the neg-risk exchange, with amounts and the YES token found by label", async () => {
    const result = await venue().placeOrder(creds, order);
    expect(failures).toEqual([]);
    expect(result).toMatchObject({
      venueOrderId: ORDER_ID,
      marketId: MARKET,
      outcome: "yes",
      status: "open",
      filledSize: 0,
      createdAt: new Date(NOW).toISOString(),
    });
    const body = placed[0]!;
    expect(body).toMatchObject({ owner: API.apiKey, orderType: "GTC", deferExec: false, postOnly: false });
    const wire = body.order as Record<string, string | number>;
    expect(wire).toMatchObject({
      maker: ADDRESS,
      signer: ADDRESS,
      tokenId: T2Y,
      makerAmount: "6625500", // 10.5 × 0.631
      takerAmount: "10500000",
      side: "BUY",
      signatureType: 0,
      timestamp: String(NOW),
      expiration: "0",
    });
    expect(typeof wire.salt).toBe("number");
    const recovered = await recoverTypedDataAddress({
      ...orderTypedData(
        {
          salt: BigInt(wire.salt!),
          maker: wire.maker as Hex,
          signer: wire.signer as Hex,
          tokenId: BigInt(wire.tokenId!),
          makerAmount: BigInt(wire.makerAmount!),
          takerAmount: BigInt(wire.takerAmount!),
          side: 0,
          signatureType: 0,
          timestamp: BigInt(wire.timestamp!),
          metadata: wire.metadata as Hex,
          builder: wire.builder as Hex,
        },
        orderDomain(2, true, 137), // the fixture market is neg-risk
      ),
      signature: wire.signature as Hex,
    });
    expect(recovered).toBe(ADDRESS);
  });

  it("uses the funder as maker for proxy/safe wallets, the NO token for NO, and FAK for IOC", async () => {
    await venue().placeOrder(
      { ...creds, signatureType: 2, funder: FUNDER },
      { ...order, outcome: "no", side: "sell", price: 369_000, timeInForce: "IOC" },
    );
    const wire = placed[0]!.order as Record<string, unknown>;
    expect(wire).toMatchObject({
      maker: FUNDER,
      signer: ADDRESS,
      signatureType: 2,
      tokenId: T2N,
      side: "SELL",
      makerAmount: "10500000",
      takerAmount: "3874500",
    });
    expect(placed[0]!.orderType).toBe("FAK");
    await expect(venue().placeOrder({ ...creds, signatureType: 1 }, order)).rejects.toMatchObject({
      kind: "auth_failed",
    });
  });

  it("signs a deposit wallet's order as the wallet (type 3), with the wrapped signature, L2 still as the EOA", async () => {
    const result = await venue().placeOrder({ ...creds, signatureType: 3, funder: FUNDER }, order);
    expect(failures).toEqual([]); // checkL2 wants POLY_ADDRESS = the EOA that owns the API key
    expect(result.status).toBe("open");
    const wire = placed[0]!.order as Record<string, string | number>;
    expect(wire).toMatchObject({ maker: FUNDER, signer: FUNDER, signatureType: 3 });
    // owner signature (65) ‖ domain separator (32) ‖ order hash (32) ‖ Order type string (186) ‖ length (2)
    expect(String(wire.signature)).toMatch(/^0x[0-9a-f]{634}$/);
    expect(String(wire.signature).slice(-4)).toBe("00ba");
  });

  it("refuses a funder that contradicts the signature type before any venue call", async () => {
    for (const signatureType of [1, 2, 3] as const) {
      await expect(
        venue().placeOrder({ ...creds, signatureType, funder: ADDRESS }, order),
      ).rejects.toMatchObject({ kind: "auth_failed" });
      await expect(venue().placeOrder({ ...creds, signatureType }, order)).rejects.toMatchObject({
        kind: "auth_failed",
      });
    }
    expect(placed).toEqual([]);
  });

  it("takes the tick from the CLOB (/clob-markets), not Gamma's copy", async () => {
    // Gamma still says 0.001; the CLOB has moved the market to 0.01.
    server.on("GET", `/clob/clob-markets/${C2}`, () => ({
      body: { ...fixture<object>("clob-market.json"), mts: 0.01 },
    }));
    await expect(venue().placeOrder(creds, order)).rejects.toMatchObject({
      kind: "rejected",
      details: { venueCode: "INVALID_ORDER_MIN_TICK_SIZE" },
    });
    expect(placed).toEqual([]);
    await venue().placeOrder(creds, { ...order, price: 630_000 });
    expect(placed).toHaveLength(1);
    expect(server.seen.filter((s) => s.path === `/clob/clob-markets/${C2}`)).toHaveLength(2);
  });

  it("rounds IOC/FOK amounts to the venue's precision: cash to cents, shares to 4 decimals", async () => {
    // 7 @ 0.533 costs 3.731: the BUY pays 3.73 for the 6.9981 shares that buys at 0.533.
    const buy = await venue().placeOrder(creds, {
      ...order,
      price: 533_000,
      size: 7_000_000,
      timeInForce: "IOC",
    });
    expect(placed[0]).toMatchObject({ orderType: "FAK" });
    expect(placed[0]!.order).toMatchObject({ makerAmount: "3730000", takerAmount: "6998100", side: "BUY" });
    expect(buy.size).toBe(6_998_100);
    expect(buy.sizeAdjustment).toMatchObject({ requested: 7_000_000 });
    expect(buy.sizeAdjustment!.reason).toMatch(/rounded down from 7 to 6\.9981/);
    // A SELL keeps its shares and asks the proceeds rounded down to 4 decimals.
    const sell = await venue().placeOrder(creds, {
      ...order,
      side: "sell",
      price: 533_000,
      size: 7_010_000,
      timeInForce: "FOK",
    });
    expect(placed[1]).toMatchObject({ orderType: "FOK" });
    expect(placed[1]!.order).toMatchObject({ makerAmount: "7010000", takerAmount: "3736300", side: "SELL" });
    expect(sell.size).toBe(7_010_000);
    expect(sell.sizeAdjustment).toBeUndefined();
    // Too small to round without moving the price past a tick: refused, nothing sent.
    await expect(
      venue().placeOrder(creds, { ...order, price: 533_000, size: 10_000, timeInForce: "IOC" }),
    ).rejects.toMatchObject({ kind: "rejected" });
    expect(placed).toHaveLength(2);
  });

  it("reads a match's size from takingAmount/makingAmount, never the whole order on 'matched'", async () => {
    const respond = (extra: Record<string, unknown>) =>
      server.on(
        "POST",
        "/clob/order",
        l2((req) => {
          placed.push(JSON.parse(req.body));
          return {
            body: {
              ...fixture<object>("order-response.json"),
              status: "matched",
              tradeIDs: ["t-9"],
              ...extra,
            },
          };
        }),
      );
    const ioc = { ...order, price: 630_000, size: 10_000_000, timeInForce: "IOC" as const };
    respond({ takingAmount: "4", makingAmount: "2.52" });
    expect(await venue().placeOrder(creds, ioc)).toMatchObject({
      filledSize: 4_000_000,
      status: "cancelled",
    });
    respond({ takingAmount: "10", makingAmount: "6.3" });
    expect(await venue().placeOrder(creds, ioc)).toMatchObject({ filledSize: 10_000_000, status: "filled" });
    // A SELL makes the shares.
    respond({ takingAmount: "1.26", makingAmount: "2" });
    expect(await venue().placeOrder(creds, { ...ioc, side: "sell" })).toMatchObject({
      filledSize: 2_000_000,
      status: "cancelled",
    });
    // A resting order that matched in part stays open.
    respond({ takingAmount: "4", makingAmount: "2.52" });
    expect(await venue().placeOrder(creds, { ...ioc, timeInForce: "GTC" })).toMatchObject({
      filledSize: 4_000_000,
      status: "open",
    });
    // No amounts: the order itself says (the fixture order has 25.5 of 100 matched).
    respond({ takingAmount: "", makingAmount: "" });
    expect(await venue().placeOrder(creds, ioc)).toMatchObject({
      venueOrderId: ORDER_ID,
      filledSize: 25_500_000,
    });
  });

  it("sends GTD expiration with the 60 s safety margin", async () => {
    await venue().placeOrder(creds, {
      ...order,
      timeInForce: "GTD",
      expiresAt: new Date(NOW + 3_600_000).toISOString(),
    });
    expect((placed[0]!.order as Record<string, unknown>).expiration).toBe(String(NOW / 1000 + 3600 + 60));
  });

  it("validates tick, size, minimum and market status locally, before signing anything", async () => {
    const v = venue();
    await expect(v.placeOrder(creds, { ...order, price: 631_500 })).rejects.toMatchObject({
      kind: "rejected",
      details: { venueCode: "INVALID_ORDER_MIN_TICK_SIZE" },
    });
    await expect(v.placeOrder(creds, { ...order, size: 4_000_000 })).rejects.toMatchObject({
      details: { venueCode: "INVALID_ORDER_MIN_SIZE" },
    });
    await expect(v.placeOrder(creds, { ...order, size: 10_505_000 })).rejects.toMatchObject({
      kind: "rejected",
    });
    await expect(v.placeOrder(creds, { ...order, type: "market", timeInForce: "GTC" })).rejects.toMatchObject(
      {
        kind: "rejected",
      },
    );
    await expect(
      v.placeOrder(creds, { ...order, marketId: `polymarket:0x${"cc".repeat(32)}` }),
    ).rejects.toMatchObject({ kind: "rejected", details: { venueCode: "MARKET_NOT_READY" } });
    expect(placed).toEqual([]);
  });

  it("maps a venue rejection with its message, and a bad key to auth_failed", async () => {
    server.on("POST", "/clob/order", () => ({
      status: 400,
      body: { error: "INVALID_ORDER_NOT_ENOUGH_BALANCE: not enough balance / allowance" },
    }));
    await expect(venue().placeOrder(creds, order)).rejects.toMatchObject({
      kind: "rejected",
      details: {
        status: 400,
        venueCode: "INVALID_ORDER_NOT_ENOUGH_BALANCE",
        venueMessage: "INVALID_ORDER_NOT_ENOUGH_BALANCE: not enough balance / allowance",
      },
    });
    server.on("POST", "/clob/order", () => ({
      body: { success: false, errorMsg: "INVALID_ORDER_DUPLICATED", orderID: "" },
    }));
    await expect(venue().placeOrder(creds, order)).rejects.toMatchObject({
      kind: "rejected",
      details: { venueCode: "INVALID_ORDER_DUPLICATED" },
    });
    server.on(
      "POST",
      "/clob/order",
      l2(() => ({ body: fixture("order-response.json") })),
    );
    await expect(venue().placeOrder({ ...creds, apiSecret: "d3Jvbmc=" }, order)).rejects.toMatchObject({
      kind: "auth_failed",
      details: { status: 401 },
    });
    failures.length = 0; // that bad signature was the point
    server.on("POST", "/clob/order", () => ({ status: 400, body: { error: "invalid signature" } }));
    await expect(venue().placeOrder(creds, order)).rejects.toMatchObject({ kind: "auth_failed" });
  });

  it("re-reads GET /version and signs again on order_version_mismatch", async () => {
    let n = 0;
    server.on(
      "POST",
      "/clob/order",
      l2((req) => {
        n++;
        if (n === 1) return { status: 400, body: { error: "order_version_mismatch" } };
        placed.push(JSON.parse(req.body));
        return { body: fixture("order-response.json") };
      }),
    );
    const result = await venue().placeOrder(creds, order);
    expect(result.venueOrderId).toBe(ORDER_ID);
    expect(versionCalls).toBe(2);
  });
});

describe("orders, fills, positions", () => {
  it("gets, cancels and lists orders through every cursor page", async () => {
    const v = venue();
    expect(await v.getOrder(creds, ORDER_ID)).toEqual({
      venueOrderId: ORDER_ID,
      marketId: MARKET,
      outcome: "yes",
      side: "buy",
      price: 630_000,
      size: 100_000_000,
      filledSize: 25_500_000,
      status: "open",
      createdAt: "2026-08-13T05:46:40.000Z",
      clientOrderId: null,
    });
    expect((await v.cancelOrder(creds, ORDER_ID)).status).toBe("cancelled");
    const del = server.seen.find((s) => s.method === "DELETE")!;
    expect(JSON.parse(del.body)).toEqual({ orderID: ORDER_ID });

    const page = (id: string, next: string) => ({
      body: { data: [{ ...fixture("open-order.json"), id }], next_cursor: next, limit: 1, count: 1 },
    });
    server.on(
      "GET",
      "/clob/data/orders",
      l2((req) => {
        const cursor = req.query.get("next_cursor");
        if (cursor === "MA==") return page("0xa", "MQ==");
        if (cursor === "MQ==") return page("0xb", "Mg==");
        return page("0xc", "LTE=");
      }),
    );
    const orders = await v.listOrders(creds, { marketId: MARKET });
    expect(orders.map((o) => o.venueOrderId)).toEqual(["0xa", "0xb", "0xc"]);
    const listReqs = server.seen.filter((s) => s.path === "/clob/data/orders");
    expect(listReqs.map((s) => s.query.get("next_cursor"))).toEqual(["MA==", "MQ==", "Mg=="]);
    expect(listReqs[0]!.query.get("market")).toBe(C2);
    expect(failures).toEqual([]);
  });

  it("refuses a cancel the venue did not do, with its reason", async () => {
    server.on(
      "GET",
      "/clob/data/order/0xgone",
      l2(() => ({ body: { ...fixture<object>("open-order.json"), id: "0xgone" } })),
    );
    await expect(venue().cancelOrder(creds, "0xgone")).rejects.toMatchObject({
      kind: "rejected",
      details: { venueMessage: "already canceled or matched" },
    });
  });

  it("lists our fills as maker and taker, and positions from the Data API", async () => {
    server.on(
      "GET",
      "/clob/data/trades",
      l2(() => ({ body: fixture("trades-page.json") })),
    );
    server.on("GET", "/data/positions", () => ({ body: fixture("positions.json") }));
    const v = venue();
    const fills = await v.listFills(creds, { since: "2026-08-01T00:00:00Z" });
    // A trade carries no fee amount, only fee_rate_bps (unverified on V2, VENUES-AUDIT §4.2): the fee
    // is left to crossbook's model of the market's schedule (null), with who took liquidity.
    expect(
      fills.map((f) => [f.venueFillId, f.venueOrderId, f.outcome, f.side, f.size, f.fee, f.liquidity]),
    ).toEqual([
      ["t-1:0", ORDER_ID, "yes", "buy", 25_500_000, null, "maker"],
      ["t-2", `0x${"88".repeat(32)}`, "no", "buy", 10_000_000, null, "taker"],
    ]);
    const req = server.seen.find((s) => s.path === "/clob/data/trades")!;
    expect(req.query.get("maker_address")).toBe(ADDRESS);
    expect(req.query.get("after")).toBe("1785542400");
    expect(await v.listPositions(creds)).toEqual([
      { marketId: MARKET, outcome: "no", size: 120_500_000, averagePrice: 365_000 },
    ]);
    expect(server.seen.find((s) => s.path === "/data/positions")!.query.get("user")).toBe(ADDRESS);
  });
});

describe("account normalizers (fixtures)", () => {
  const resolve = (t: string) =>
    t === T2Y
      ? { marketId: MARKET, outcome: "yes" as const }
      : t === T2N
        ? { marketId: MARKET, outcome: "no" as const }
        : undefined;

  it("maps OpenOrder statuses, reporting unknown ones", () => {
    const r = reports();
    const base = fixture("open-order.json");
    expect(normalizeOpenOrder({ ...base, status: "CANCELED" }, resolve, r.report).status).toBe("cancelled");
    expect(normalizeOpenOrder({ ...base, status: "MATCHED" }, resolve, r.report).status).toBe("filled");
    expect(normalizeOpenOrder({ ...base, size_matched: "100" }, resolve, r.report).status).toBe("filled");
    expect(normalizeOpenOrder({ ...base, status: "WEIRD" }, resolve, r.report).status).toBe("pending");
    expect(r.kinds()).toEqual(["unknown_order_status"]);
    expect(() => normalizeOpenOrder({ ...base, asset_id: "1" }, resolve, r.report)).toThrowError(
      /no known market/,
    );
  });

  it("takes only our maker entries of a trade", () => {
    const [maker] = fixture("trades-page.json").data;
    const fills = normalizeTradeFills(
      maker,
      { maker: ADDRESS.toLowerCase(), apiKey: "x" },
      resolve,
      () => {},
    );
    expect(fills).toHaveLength(1);
    expect(fills[0]).toMatchObject({ price: 630_000, timestamp: "2026-08-13T05:48:20.000Z" });
  });

  it("reads positions and balances", () => {
    expect(normalizePosition({ asset: "nope", size: 1 }, resolve, () => {})).toBeUndefined();
    expect(normalizeBalance({ balance: "1000000000" })).toBe(1_000_000_000);
    expect(() => normalizeBalance({ balance: "1.5" })).toThrowError(/balance/);
  });
});
