import { EventEmitter } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
// The service's own signing code: what the receiver verifies is exactly what crossbook sends.
import { deliveryHeaders } from "../../server/src/webhooks/signing";
import { type AlertFired, AlertWatcher, type Crossbook, verifyWebhook, webhookReceiver } from "../src/index";

const secret = "whsec_test_secret_value";
const body = JSON.stringify({
  id: "dlv_1",
  type: "order.filled",
  timestamp: "2026-11-24T12:00:00Z",
  data: { order_id: "ord_1" },
});
const now = 1_764_000_000_000;
const signed = (rawBody = body, at = now, deliveryId = "dlv_1") =>
  deliveryHeaders({
    secret,
    deliveryId,
    eventType: "order.filled",
    timestampSeconds: Math.floor(at / 1000),
    rawBody,
  });

describe("verifyWebhook", () => {
  it("accepts crossbook's own signature", () => {
    const result = verifyWebhook(secret, body, signed(), { now });
    expect(result).toMatchObject({ ok: true, event: { id: "dlv_1", type: "order.filled" } });
  });
  it("refuses a wrong secret, a changed body, a stale timestamp and missing headers", () => {
    expect(verifyWebhook("other", body, signed(), { now })).toEqual({ ok: false, reason: "bad_signature" });
    expect(verifyWebhook(secret, body.replace("ord_1", "ord_2"), signed(), { now })).toEqual({
      ok: false,
      reason: "bad_signature",
    });
    expect(verifyWebhook(secret, body, signed(body, now - 301_000), { now })).toEqual({
      ok: false,
      reason: "stale_timestamp",
    });
    expect(verifyWebhook(secret, body, {}, { now })).toEqual({ ok: false, reason: "missing_headers" });
  });
});

describe("webhookReceiver", () => {
  it("answers 401 to a bad signature, runs the handler once per delivery id", async () => {
    const events: string[] = [];
    const server = createServer(webhookReceiver({ secret, onEvent: (e) => void events.push(e.id) }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const post = (headers: Record<string, string>) => fetch(url, { method: "POST", headers, body });
    expect((await post({ ...signed(body, Date.now()), "x-service-signature": "sha256=00" })).status).toBe(
      401,
    );
    expect((await post(signed(body, Date.now()))).status).toBe(200);
    expect((await post(signed(body, Date.now()))).status).toBe(200); // a retry of the same delivery
    expect(events).toEqual(["dlv_1"]);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});

describe("AlertWatcher", () => {
  function stubClient(positions: Array<Record<string, unknown>>) {
    const stream = Object.assign(new EventEmitter(), { subscribe() {}, close() {} });
    const client = {
      prices: { stream: () => stream },
      positions: { list: async () => ({ data: positions, meta: { total: positions.length } }) },
      paginate: async function* (
        fetchPage: (q: { limit: number; offset: number }) => Promise<{ data: unknown[] }>,
      ) {
        yield* (await fetchPage({ limit: 100, offset: 0 })).data;
      },
    } as unknown as Crossbook;
    return { client, stream };
  }

  it("fires a price alert once per crossing and re-arms when the price crosses back", () => {
    const { client, stream } = stubClient([]);
    const fired: AlertFired[] = [];
    const watcher = new AlertWatcher(client);
    watcher.price("m1", "above", 0.6, (f) => fired.push(f));
    for (const price of [0.5, 0.65, 0.7, 0.55, 0.62]) stream.emit("update", { market_id: "m1", price });
    expect(fired.map((f) => f.value)).toEqual([0.65, 0.62]);
    watcher.close();
  });

  it("fires position and total PnL alerts", async () => {
    const positions = [
      { id: "pos_1", market_id: "m1", unrealized_pnl: -40, realized_pnl: -20 },
      { id: "pos_2", market_id: "m2", unrealized_pnl: 5, realized_pnl: 0 },
    ];
    const { client } = stubClient(positions);
    const fired: AlertFired[] = [];
    const watcher = new AlertWatcher(client, { pollMs: 60_000 });
    watcher.positionPnl("m1", "below", -30, (f) => fired.push(f));
    watcher.totalPnl("below", -50, (f) => fired.push(f));
    await watcher.checkPositions();
    await watcher.checkPositions();
    expect(fired.map((f) => [f.kind, f.value])).toEqual([
      ["position_pnl", -40],
      ["total_pnl", -55],
    ]);
    watcher.close();
  });
});

describe("alerts against a running crossbook", () => {
  it("fires a local price alert from the live stream and manages server alerts", async () => {
    const { startDemo } = await import("./support/demo");
    const { Crossbook } = await import("../src/index");
    const demo = await startDemo({ tickMs: 100 });
    try {
      const client = new Crossbook({ apiKey: demo.sandboxKey, environment: "sandbox", baseUrl: demo.url });
      let marketId: string | undefined;
      for (let i = 0; i < 100 && !marketId; i++) {
        marketId = (await client.markets.list({ status: "open", limit: 1 })).data[0]?.id;
        if (!marketId) await new Promise((r) => setTimeout(r, 200));
      }
      const watcher = new AlertWatcher(client);
      const fired = await new Promise<AlertFired>((resolve) => watcher.price(marketId!, "above", 0, resolve));
      expect(fired).toMatchObject({ kind: "price", subject: marketId, comparison: "above", threshold: 0 });
      watcher.close();

      const alert = await client.alerts.create({
        market_id: marketId!,
        condition: "price_above",
        threshold: 0.99,
      });
      expect((await client.alerts.list()).data.map((a) => a.id)).toContain(alert.id);
      await client.alerts.delete(alert.id);
      expect((await client.alerts.list()).data.map((a) => a.id)).not.toContain(alert.id);
    } finally {
      await demo.close();
    }
  }, 90_000);
});
