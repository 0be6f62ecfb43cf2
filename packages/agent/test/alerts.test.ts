import { createHmac } from "node:crypto";
import { EventEmitter } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
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

/** Spec 6.3 by hand over exact bytes (the service's `deliveryHeaders` takes a string). */
const signBytes = (bytes: Buffer, at = now, deliveryId = "dlv_1") => {
  const timestamp = String(Math.floor(at / 1000));
  const mac = createHmac("sha256", secret).update(`${timestamp}.`).update(bytes).digest("hex");
  return {
    "content-type": "application/json",
    "x-service-signature": `sha256=${mac}`,
    "x-service-timestamp": timestamp,
    "x-service-delivery-id": deliveryId,
  };
};

describe("verifyWebhook over the raw bytes", () => {
  // Spaces, a \u escape and a raw UTF-8 "é": JSON.stringify(JSON.parse(raw)) gives other bytes.
  const raw = Buffer.from(
    '{ "id": "dlv_1", "type": "order.filled",\n  "timestamp": "2026-11-24T12:00:00Z", "data": { "note": "caf\\u00e9 café" } }',
    "utf8",
  );

  it("verifies the bytes as sent, not a re-serialisation, and refuses a tampered byte", () => {
    const headers = signBytes(raw);
    expect(verifyWebhook(secret, raw, headers, { now })).toMatchObject({
      ok: true,
      event: { id: "dlv_1", data: { note: "café café" } },
    });
    const reserialised = JSON.stringify(JSON.parse(raw.toString("utf8")));
    expect(reserialised).not.toBe(raw.toString("utf8"));
    expect(verifyWebhook(secret, reserialised, headers, { now })).toEqual({
      ok: false,
      reason: "bad_signature",
    });
    const tampered = Buffer.from(raw);
    tampered[tampered.indexOf("order")] = "O".charCodeAt(0);
    expect(verifyWebhook(secret, tampered, headers, { now })).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("checks the signature over bytes that are not valid UTF-8 (then refuses the body, not the signature)", () => {
    // A decoded-then-re-encoded body would turn 0xff into U+FFFD (3 bytes) and fail the HMAC.
    const invalid = Buffer.concat([raw.subarray(0, raw.length - 3), Buffer.from([0xff]), Buffer.from('"}')]);
    const result = verifyWebhook(secret, invalid, signBytes(invalid), { now });
    expect(result).toEqual({ ok: false, reason: "bad_body" });
    expect(verifyWebhook(secret, invalid, signBytes(raw), { now })).toEqual({
      ok: false,
      reason: "bad_signature",
    });
  });

  it("refuses a timestamp that is not plain digits", () => {
    const headers = signBytes(raw);
    const padded = ` ${headers["x-service-timestamp"]}`;
    const mac = createHmac("sha256", secret).update(`${padded}.`).update(raw).digest("hex");
    expect(
      verifyWebhook(
        secret,
        raw,
        { ...headers, "x-service-timestamp": padded, "x-service-signature": `sha256=${mac}` },
        { now },
      ),
    ).toEqual({ ok: false, reason: "stale_timestamp" });
  });
});

describe("webhookReceiver", () => {
  async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void) {
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }
  const deferred = () => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  };

  it("runs the handler once for two concurrent deliveries of the same id, answering both 200", async () => {
    const entered = deferred();
    const gate = deferred();
    const secondRead = deferred();
    let calls = 0;
    const receive = webhookReceiver({
      secret,
      onEvent: async () => {
        calls++;
        entered.resolve();
        await gate.promise;
      },
    });
    let requests = 0;
    const server = await listen((req, res) => {
      // Once the retry's body is in, let the receiver get past its checks before the first run ends.
      if (++requests === 2) req.on("end", () => setImmediate(() => setImmediate(secondRead.resolve)));
      void receive(req, res);
    });
    try {
      const post = () => fetch(server.url, { method: "POST", headers: signed(body, Date.now()), body });
      const first = post();
      await entered.promise;
      const retry = post();
      await secondRead.promise;
      gate.resolve();
      const answers = await Promise.all([first, retry]);
      expect(answers.map((r) => r.status)).toEqual([200, 200]);
      expect(calls).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("releases the claim when the handler throws, so a later retry runs it", async () => {
    const entered = deferred();
    const gate = deferred();
    const secondRead = deferred();
    let calls = 0;
    const receive = webhookReceiver({
      secret,
      onEvent: async () => {
        calls++;
        if (calls === 1) {
          entered.resolve();
          await gate.promise;
          throw new Error("database down");
        }
      },
    });
    let requests = 0;
    const server = await listen((req, res) => {
      if (++requests === 2) req.on("end", () => setImmediate(() => setImmediate(secondRead.resolve)));
      void receive(req, res);
    });
    try {
      const post = () => fetch(server.url, { method: "POST", headers: signed(body, Date.now()), body });
      const first = post();
      await entered.promise;
      const concurrent = post();
      await secondRead.promise;
      gate.resolve();
      // The concurrent retry shares the failed run's outcome: crossbook keeps retrying.
      expect((await Promise.all([first, concurrent])).map((r) => r.status)).toEqual([500, 500]);
      expect(calls).toBe(1);
      expect((await post()).status).toBe(200);
      expect(calls).toBe(2);
      expect((await post()).status).toBe(200);
      expect(calls).toBe(2);
    } finally {
      await server.close();
    }
  });

  it("runs a retry again after a handler that threw synchronously", async () => {
    let calls = 0;
    const receive = webhookReceiver({
      secret,
      onEvent: () => {
        if (++calls === 1) throw new Error("boom");
      },
    });
    const server = await listen((req, res) => void receive(req, res));
    try {
      const post = () => fetch(server.url, { method: "POST", headers: signed(body, Date.now()), body });
      expect((await post()).status).toBe(500);
      expect((await post()).status).toBe(200);
      expect(calls).toBe(2);
    } finally {
      await server.close();
    }
  });

  it("verifies the bytes received: extra whitespace passes, a tampered byte gets 401", async () => {
    const events: unknown[] = [];
    const receive = webhookReceiver({ secret, onEvent: (e) => void events.push(e.data) });
    const server = await listen((req, res) => void receive(req, res));
    try {
      const raw = Buffer.from(
        `{"id":"dlv_9",   "type":"order.filled","timestamp":"2026-11-24T12:00:00Z","data":{"n":"\\u00e9"}}`,
      );
      const headers = signBytes(raw, Date.now(), "dlv_9");
      const tampered = Buffer.from(raw.toString().replace("   ", "  "));
      expect((await fetch(server.url, { method: "POST", headers, body: tampered })).status).toBe(401);
      expect((await fetch(server.url, { method: "POST", headers, body: raw })).status).toBe(200);
      expect(events).toEqual([{ n: "é" }]);
    } finally {
      await server.close();
    }
  });

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
