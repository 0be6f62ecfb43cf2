/**
 * Issue 25 part 2: receivers on the same machine. `crossbook demo` allows loopback receivers, over
 * http too (webhookAllowLoopback); every other server refuses them, and the refusal of a private or
 * loopback target names WEBHOOK_ALLOW_PRIVATE_NETWORKS, at registration and at delivery.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendWebhook } from "../../src/webhooks/sender";
import { checkWebhookUrl, type LookupFn } from "../../src/webhooks/ssrf";
import { bearer } from "../support/app";
import { webhooksApp } from "./setup";

const VARIABLE = /WEBHOOK_ALLOW_PRIVATE_NETWORKS=true/;

const lookup: LookupFn = async (hostname) => {
  const table: Record<string, string[]> = {
    localhost: ["127.0.0.1", "::1"],
    "hooks.example.com": ["93.184.216.34"],
    "lan.localhost": ["10.0.0.9"],
  };
  const found = table[hostname];
  if (!found) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
  return found.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }) as const);
};

describe("the SSRF guard with allowLoopback (the demo)", () => {
  const demo = { allowPrivate: false, allowLoopback: true, lookup };

  it("accepts loopback receivers over http and https", async () => {
    for (const url of [
      "http://127.0.0.1:8787/hooks",
      "http://127.9.0.1/hooks",
      "http://[::1]:8787/hooks",
      "http://localhost:8787/hooks",
      "https://127.0.0.1/hooks",
      "https://[::ffff:127.0.0.1]/hooks",
    ]) {
      const result = await checkWebhookUrl(url, demo);
      expect(result.ok, url).toBe(true);
    }
  });

  it("keeps http to loopback only, and every other rule", async () => {
    for (const url of ["http://10.0.0.5/hooks", "http://hooks.example.com/hooks", "http://lan.localhost/"]) {
      const result = await checkWebhookUrl(url, demo);
      expect(result, url).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/only for receivers on this machine/),
      });
    }
    // NAT64 of a loopback address routes to the translator, not to this machine.
    expect(await checkWebhookUrl("https://[64:ff9b::7f00:1]/", demo)).toMatchObject({ ok: false });
    expect(await checkWebhookUrl("https://10.0.0.5/hooks", demo)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(VARIABLE),
    });
    expect(await checkWebhookUrl("http://user:pw@127.0.0.1/", demo)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/credentials/),
    });
    expect(await checkWebhookUrl("https://hooks.example.com/hooks", demo)).toMatchObject({ ok: true });
  });

  it("without it, loopback and private targets are refused naming WEBHOOK_ALLOW_PRIVATE_NETWORKS", async () => {
    const serve = { allowPrivate: false, lookup };
    for (const url of ["https://127.0.0.1/hooks", "https://localhost/hooks", "https://lan.localhost/hooks"]) {
      expect(await checkWebhookUrl(url, serve), url).toMatchObject({
        ok: false,
        reason: expect.stringMatching(VARIABLE),
      });
    }
    expect(await checkWebhookUrl("http://127.0.0.1:8787/hooks", serve)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/must use https.*crossbook demo/),
    });
  });
});

describe("delivery to a loopback receiver", () => {
  let server: Server;
  let port: number;
  const bodies: string[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        bodies.push(body);
        response.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const send = (allowLoopback: boolean, url = `http://127.0.0.1:${port}/hooks`) =>
    sendWebhook({
      url,
      headers: { "content-type": "application/json" },
      body: '{"id":"whd_1"}',
      allowPrivate: false,
      allowLoopback,
      lookup,
    });

  it("reaches it over http in the demo, and nowhere else", async () => {
    expect(await send(true)).toMatchObject({ ok: true, status: 200 });
    expect(await send(true, `http://localhost:${port}/hooks`)).toMatchObject({ ok: true, status: 200 });
    expect(bodies).toEqual(['{"id":"whd_1"}', '{"id":"whd_1"}']);
    const refused = await send(false, `https://127.0.0.1:${port}/hooks`);
    expect(refused).toMatchObject({ ok: false, status: null, error: expect.stringMatching(VARIABLE) });
    expect((await send(false)).error).toMatch(/refused by SSRF guard: webhook URLs must use https/);
    expect(bodies).toHaveLength(2);
  });
});

describe("registering a loopback receiver over the API", () => {
  it("is refused naming the variable, except in the demo", async () => {
    const served = await webhooksApp();
    const demo = await webhooksApp({ config: { webhookAllowLoopback: true } });
    try {
      const register = (s: typeof served, url: string) =>
        s.t.app.inject({
          method: "POST",
          url: "/v1/webhooks",
          headers: bearer(s.key),
          payload: { url, events: ["order.filled"] },
        });
      for (const url of ["https://127.0.0.1:8443/hooks", "https://[::1]/hooks", "https://localhost/hooks"]) {
        const response = await register(served, url);
        expect(response.statusCode, url).toBe(400);
        expect(response.json().error.details.fields["body.url"], url).toMatch(VARIABLE);
      }
      const http = await register(served, "http://127.0.0.1:8787/hooks");
      expect(http.statusCode).toBe(400);
      expect(http.json().error.details.fields["body.url"]).toMatch(/crossbook demo/);

      const accepted = await register(demo, "http://127.0.0.1:8787/hooks");
      expect(accepted.statusCode, accepted.body).toBe(200);
      expect(accepted.json().data.url).toBe("http://127.0.0.1:8787/hooks");
    } finally {
      await Promise.all([served.t.close(), demo.t.close()]);
    }
  });
});
