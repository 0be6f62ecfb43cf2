import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hmacSignature, type PolymarketFake, startPolymarketFake } from "../src/polymarket/index";
import {
  createCreds,
  HARDHAT0,
  HARDHAT1,
  type Json,
  l1Headers,
  l2Fetch,
  l2Headers,
  nowS,
} from "./polymarket-helpers";

const alice = privateKeyToAccount(HARDHAT0);
const bob = privateKeyToAccount(HARDHAT1);

describe("fake Polymarket — L1 and L2 auth", () => {
  let fake: PolymarketFake;
  beforeAll(async () => {
    fake = await startPolymarketFake({ seed: 5 });
  });
  afterAll(() => fake.close());

  it("matches the published HMAC known-answer vector", () => {
    expect(
      hmacSignature(
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        '1000000test-sign/orders{"hash": "0x123"}',
      ),
    ).toBe("ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=");
  });

  it("accepts the published L1 ClobAuth known-answer signature", async () => {
    const kat = await startPolymarketFake({ chainId: 80002, authWindowSeconds: 10 ** 10 });
    try {
      const sig =
        "0xf62319a987514da40e57e2f4d7529f7bac38f0355bd88bb5adbb3768d80de6c1682518e0af677d5260366425f4361e7b70c25ae232aff0ab2331e2b164a1aedc1b";
      const headers = {
        POLY_ADDRESS: alice.address,
        POLY_SIGNATURE: sig,
        POLY_TIMESTAMP: "10000000",
        POLY_NONCE: "23",
      };
      const res = await fetch(`${kat.clobUrl}/auth/api-key`, { method: "POST", headers });
      expect(res.status).toBe(200);
      const bad = await fetch(`${kat.clobUrl}/auth/api-key`, {
        method: "POST",
        headers: { ...headers, POLY_NONCE: "24" },
      });
      expect(bad.status).toBe(401);
    } finally {
      await kat.close();
    }
  });

  it("creates and derives API credentials with an L1 signature", async () => {
    const res = await fetch(`${fake.clobUrl}/auth/api-key`, {
      method: "POST",
      headers: await l1Headers(alice, { nonce: 1 }),
    });
    expect(res.status).toBe(200);
    const creds = (await res.json()) as Json;
    expect(creds.apiKey).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(creds.secret).toMatch(/^[A-Za-z0-9_-]+=*$/);
    expect(creds.passphrase).toMatch(/^[0-9a-f]{64}$/);
    const derived = await fetch(`${fake.clobUrl}/auth/derive-api-key`, {
      headers: await l1Headers(alice, { nonce: 1 }),
    });
    expect(derived.status).toBe(200);
    expect(await derived.json()).toEqual(creds);
    const again = await fetch(`${fake.clobUrl}/auth/api-key`, {
      method: "POST",
      headers: await l1Headers(alice, { nonce: 1 }),
    });
    expect(again.status).toBe(400);
    const none = await fetch(`${fake.clobUrl}/auth/derive-api-key`, {
      headers: await l1Headers(alice, { nonce: 77 }),
    });
    expect(none.status).toBe(400);
  });

  it("rejects L1 signatures by another wallet, for another chain, or stale", async () => {
    const forged = { ...(await l1Headers(bob)), POLY_ADDRESS: alice.address };
    const cases = [
      forged,
      await l1Headers(alice, { chainId: 1 }),
      await l1Headers(alice, { ts: nowS() - 3600 }),
    ];
    for (const headers of cases) {
      const res = await fetch(`${fake.clobUrl}/auth/api-key`, { method: "POST", headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "Invalid L1 Request headers" });
    }
    expect((await fetch(`${fake.clobUrl}/auth/api-key`, { method: "POST" })).status).toBe(401);
  });

  it("accepts a valid L2 request and rejects bad, stale or mismatched ones with 401", async () => {
    const creds = await createCreds(fake.clobUrl, bob);
    const ok = await l2Fetch(fake.clobUrl, creds, bob.address, "GET", "/data/orders?market=0x00");
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ data: [], next_cursor: "LTE=", limit: 100, count: 0 });

    const url = `${fake.clobUrl}/data/orders`;
    const good = l2Headers(creds, bob.address, "GET", "/data/orders");
    const variants: Record<string, string>[] = [
      {
        ...good,
        POLY_SIGNATURE: l2Headers(
          { ...creds, secret: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" },
          bob.address,
          "GET",
          "/data/orders",
        ).POLY_SIGNATURE,
      },
      { ...good, POLY_PASSPHRASE: "nope" },
      { ...good, POLY_API_KEY: "00000000-0000-4000-8000-000000000000" },
      { ...good, POLY_ADDRESS: alice.address },
      l2Headers(creds, bob.address, "GET", "/data/orders", "", nowS() - 3600),
      l2Headers(creds, bob.address, "POST", "/data/orders"), // signed for another method
      l2Headers(creds, bob.address, "GET", "/data/trades"), // signed for another path
    ];
    for (const headers of variants) {
      const res = await fetch(url, { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "Unauthorized/Invalid api key" });
    }
    expect((await fetch(url)).status).toBe(401);
  });

  it("covers the exact body text in the L2 signature", async () => {
    const creds = await createCreds(fake.clobUrl, privateKeyToAccount(`0x${"3".repeat(64)}`));
    const addr = privateKeyToAccount(`0x${"3".repeat(64)}`).address;
    const body = JSON.stringify({ orderID: "0xabc" });
    const headers = {
      ...l2Headers(creds, addr, "DELETE", "/order", body),
      "content-type": "application/json",
    };
    const ok = await fetch(`${fake.clobUrl}/order`, { method: "DELETE", headers, body });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ canceled: [], not_canceled: { "0xabc": "order not found" } });
    const tampered = await fetch(`${fake.clobUrl}/order`, {
      method: "DELETE",
      headers,
      body: JSON.stringify({ orderID: "0xabd" }),
    });
    expect(tampered.status).toBe(401);
  });
});
