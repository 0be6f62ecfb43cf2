import { createPrivateKey, createPublicKey } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KalshiFake, startKalshiFake } from "../src/kalshi/index";
import { call, makeKey, signHeaders, type TestKey, type Wire, WsClient } from "./kalshi-helpers";

describe("fake Kalshi RSA-PSS auth", () => {
  let fake: KalshiFake;
  let key: TestKey;
  let stranger: TestKey;
  beforeAll(async () => {
    fake = await startKalshiFake();
    key = makeKey("11111111-2222-4333-8444-555555555555");
    stranger = makeKey("99999999-2222-4333-8444-555555555555");
    fake.script.addApiKey({ keyId: key.keyId, publicKeyPem: key.publicKeyPem, balanceCents: 12_345 });
  });
  afterAll(() => fake.close());

  it("accepts a correctly signed request; the signed path excludes the query", async () => {
    const res = await call(fake.apiUrl, "GET", "/portfolio/balance", { key });
    expect(res.status).toBe(200);
    expect(res.body.balance).toBe(12_345);
    expect(res.body.balance_dollars).toBe("123.4500");
    const withQuery = await call(fake.apiUrl, "GET", "/portfolio/orders?limit=5", { key });
    expect(withQuery.status).toBe(200);
  });

  it("accepts a PKCS#1 public key too", async () => {
    const k = makeKey("pkcs1-key");
    const pkcs1 = createPublicKey(k.publicKeyPem).export({ type: "pkcs1", format: "pem" }).toString();
    fake.script.addApiKey({ keyId: k.keyId, publicKeyPem: pkcs1 });
    expect((await call(fake.apiUrl, "GET", "/portfolio/balance", { key: k })).status).toBe(200);
  });

  const expect401 = (res: { status: number; body: Wire }) => {
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: { code: "authentication_error", message: expect.any(String), service: "exchange" },
    });
  };

  it("rejects missing headers, unknown keys, stale timestamps and bad signatures", async () => {
    expect401(await call(fake.apiUrl, "GET", "/portfolio/balance"));
    expect401(await call(fake.apiUrl, "GET", "/portfolio/balance", { key: stranger }));
    expect401(await call(fake.apiUrl, "GET", "/portfolio/balance", { key, tsMs: Date.now() - 120_000 }));
    expect401(await call(fake.apiUrl, "GET", "/portfolio/balance", { key, tsMs: Date.now() + 120_000 }));
    // Signed by another private key under our key id.
    const forged = { ...stranger, keyId: key.keyId };
    expect401(await call(fake.apiUrl, "GET", "/portfolio/balance", { key: forged }));
    // Signature over a different path.
    const headers = signHeaders(key, "GET", "/trade-api/v2/portfolio/orders");
    const res = await fetch(`${fake.apiUrl}/portfolio/balance`, { headers });
    expect(res.status).toBe(401);
    // Signature over the wrong method.
    const h2 = signHeaders(key, "POST", "/trade-api/v2/portfolio/balance");
    expect((await fetch(`${fake.apiUrl}/portfolio/balance`, { headers: h2 })).status).toBe(401);
    // Seconds instead of milliseconds.
    const h3 = signHeaders(key, "GET", "/trade-api/v2/portfolio/balance", Math.floor(Date.now() / 1000));
    expect((await fetch(`${fake.apiUrl}/portfolio/balance`, { headers: h3 })).status).toBe(401);
  });

  it("serves the orderbook unsigned, and verifies it when signed", async () => {
    const T = "KXGOVSHUT-26DEC31";
    expect((await call(fake.apiUrl, "GET", `/markets/${T}/orderbook`)).status).toBe(200);
    expect((await call(fake.apiUrl, "GET", `/markets/${T}/orderbook?depth=2`, { key })).status).toBe(200);
    expect401(await call(fake.apiUrl, "GET", `/markets/${T}/orderbook`, { key: stranger }));
  });

  it("requires a signed upgrade over GET /trade-api/ws/v2 by default, as the venue does", async () => {
    const ok = await WsClient.open(fake.wsUrl, key);
    ok.close();
    await expect(WsClient.open(fake.wsUrl, stranger)).rejects.toThrow(/401/);
    await expect(WsClient.open(fake.wsUrl)).rejects.toThrow(/401/);
    // Its own feed key works like any registered key.
    const feedKey = await fake.feedKey();
    expect(await fake.feedKey()).toBe(feedKey);
    const asKey = {
      keyId: feedKey.keyId,
      privateKey: createPrivateKey(feedKey.privateKeyPem),
      publicKeyPem: "",
    };
    (await WsClient.open(fake.wsUrl, asKey)).close();
  });

  it("with wsRequireAuth: false (older docs) public channels are open and `fill` needs auth", async () => {
    const lax = await startKalshiFake({ wsRequireAuth: false });
    try {
      const anon = await WsClient.open(lax.wsUrl);
      anon.send({ id: 1, cmd: "subscribe", params: { channels: ["fill"] } });
      const err = await anon.next((m) => m.type === "error");
      expect(err).toEqual({ id: 1, type: "error", msg: { code: 9, msg: "Authentication required" } });
      anon.close();
    } finally {
      await lax.close();
    }
  });
});
