/**
 * Failed authentication on the price stream counts against the client's address together with
 * REST: an unknown key in the upgrade header or in the first `auth` message spends the address's
 * AUTH_FAILURES_PER_MINUTE, and a blocked address is refused on both before any look-up. And a
 * handshake that is not WebSocket is refused in the envelope, without keeping a connection slot.
 */
import { type AddressInfo, connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createKey, createTestApp, signup, type TestApp } from "../support/app";
import { StreamClient, UpgradeRefused } from "./client";

describe("failed authentication on the price stream", () => {
  let t: TestApp;
  let url: string;
  let key: string;
  const clients: StreamClient[] = [];

  beforeAll(async () => {
    // One proxy in front: X-Forwarded-For names the client, on REST and on the upgrade alike.
    t = await createTestApp({ config: { trustProxy: 1, authFailuresPerMinute: 3 } });
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    url = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/prices/stream`;
    key = (await createKey(t.app, (await signup(t.app)).session, { type: "read_only" })).key;
  });
  afterAll(async () => {
    for (const c of clients) c.ws.terminate();
    await t.close();
  });

  const from = (address: string) => ({ "x-forwarded-for": address });
  const connect = async (secret: string | undefined, address: string) => {
    const client = await StreamClient.connect(url, secret, from(address));
    clients.push(client);
    return client;
  };
  const refused = async (secret: string, address: string) => {
    const error = await connect(secret, address).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UpgradeRefused);
    const { status, body } = error as UpgradeRefused;
    return { status, code: JSON.parse(body).error.code as string };
  };
  const rest = (secret: string, address: string) =>
    t.app.inject({ method: "GET", url: "/v1/account", headers: { ...bearer(secret), ...from(address) } });

  it("counts stream and REST failures together, and blocks both past the budget", async () => {
    const guesser = "2001:db8:5::1";
    const unknown = (n: number) => `cb_live_${String(n).padStart(40, "x")}`;
    // Proved before the flood: keeps working from the blocked address.
    expect((await rest(key, guesser)).statusCode).toBe(200);

    expect(await refused(unknown(1), guesser)).toEqual({ status: 401, code: "UNAUTHORIZED" }); // 1
    const byMessage = await connect(undefined, "2001:db8:5::2"); // same /64
    byMessage.send({ action: "auth", api_key: unknown(2) }); // 2
    expect(await byMessage.next((m) => m.type === "error")).toMatchObject({ code: "UNAUTHORIZED" });
    expect((await byMessage.closedWith()).code).toBe(4001);
    expect((await rest(unknown(3), guesser)).statusCode).toBe(401); // 3

    // The fourth failure tips the address over, whichever door it knocks on.
    expect(await refused(unknown(4), guesser)).toEqual({ status: 429, code: "RATE_LIMITED" });
    expect((await rest(unknown(5), guesser)).json().error.code).toBe("RATE_LIMITED");
    const waiting = await connect(undefined, guesser);
    waiting.send({ action: "auth", api_key: unknown(6) });
    const error = await waiting.next((m) => m.type === "error");
    expect(error).toMatchObject({ code: "RATE_LIMITED" });
    expect(String(error["message"])).toMatch(/failed authentications/);

    // A good key from that address still opens the stream; another address is not affected.
    await connect(key, guesser);
    expect(await refused(unknown(7), "198.51.100.30")).toEqual({ status: 401, code: "UNAUTHORIZED" });
  });
});

describe("malformed stream handshakes", () => {
  let t: TestApp;
  let port: number;
  let key: string;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
    key = (await createKey(t.app, (await signup(t.app)).session, { type: "read_only" })).key;
  });
  afterAll(() => t.close());

  /** Sends a raw upgrade request and reads the whole answer. */
  const raw = (headers: Record<string, string>, method = "GET") =>
    new Promise<{ status: number; headers: string; body: string }>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1");
      const lines = [
        `${method} /v1/prices/stream HTTP/1.1`,
        `Host: 127.0.0.1:${port}`,
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ];
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      let text = "";
      socket.on("data", (chunk) => {
        text += chunk.toString();
      });
      socket.on("error", reject);
      socket.on("close", () => {
        const [head, body = ""] = text.split("\r\n\r\n");
        resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head ?? "")?.[1]), headers: head ?? "", body });
      });
    });
  const upgrade = { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13" };
  const goodKey = "dGhlIHNhbXBsZSBub25jZQ==";

  it("answers every refused handshake in the envelope, naming the header", async () => {
    const missingKey = await raw({ ...upgrade, Authorization: `Bearer ${key}` });
    expect(missingKey.status).toBe(400);
    expect(JSON.parse(missingKey.body)).toMatchObject({
      success: false,
      error: {
        code: "VALIDATION_ERROR",
        details: { fields: { "header.sec-websocket-key": expect.any(String) } },
      },
    });
    expect(missingKey.headers).toMatch(/x-request-id: req_/i);
    const version = await raw({ ...upgrade, "Sec-WebSocket-Key": goodKey, "Sec-WebSocket-Version": "7" });
    expect(version.status).toBe(400);
    expect(version.headers).toMatch(/Sec-WebSocket-Version: 13, 8/);
    const post = await raw({ ...upgrade, "Sec-WebSocket-Key": goodKey }, "POST");
    expect(post.status).toBe(405);
    expect(JSON.parse(post.body).error.code).toBe("METHOD_NOT_ALLOWED");
  });

  it("gives back the connection slot of a handshake ws refuses after the key was checked", async () => {
    // A malformed Sec-WebSocket-Protocol is caught by ws itself, after our key check took a slot.
    for (let i = 0; i < 3; i++) {
      const bad = await raw({
        ...upgrade,
        "Sec-WebSocket-Key": goodKey,
        "Sec-WebSocket-Protocol": "a,,b",
        Authorization: `Bearer ${key}`,
      });
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body).error.code).toBe("VALIDATION_ERROR");
    }
    // The standard plan's two connections are all still free.
    const url = `ws://127.0.0.1:${port}/v1/prices/stream`;
    let opened: StreamClient[] = [];
    for (let i = 0; i < 20 && opened.length < 2; i++) {
      opened = (
        await Promise.all(
          [StreamClient.connect(url, key), StreamClient.connect(url, key)].map((p) => p.catch(() => null)),
        )
      ).filter((c): c is StreamClient => c !== null);
      if (opened.length < 2) {
        for (const c of opened) c.ws.terminate();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    expect(opened).toHaveLength(2);
    for (const c of opened) c.ws.terminate();
  });
});
