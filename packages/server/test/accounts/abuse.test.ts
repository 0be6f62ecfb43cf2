/**
 * Abuse limits on the way in: sign-in attempts per client address (IPv6 by /64) and per email,
 * backoff after repeated failures, a cap on password hashes computed at once, failed
 * authentication per address, TRUST_PROXY as a hop count or a list of proxies, and the sign-ins
 * a user can list and end.
 */
import type { LightMyRequestResponse } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config";
import { addressBucket, parseTrustProxy } from "../../src/http/client-address";
import { HashLimiter, HashQueueFull } from "../../src/infra/hashing";
import {
  bearer,
  createKey,
  createTestApp,
  expectError,
  PASSWORD,
  signup,
  type TestApp,
} from "../support/app";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const login = (
  app: TestApp["app"],
  email: string,
  password: string,
  remoteAddress = "203.0.113.7",
  headers = {},
) =>
  app.inject({ method: "POST", url: "/v1/auth/login", payload: { email, password }, remoteAddress, headers });

function retryAfter(response: LightMyRequestResponse): number {
  return Number(response.headers["retry-after"]);
}

describe("client addresses", () => {
  it("counts IPv6 clients by their /64 and IPv4-mapped ones as IPv4", () => {
    expect(addressBucket("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressBucket("2001:db8:1:2:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(addressBucket("2001:0db8:0001:0002::")).toBe("2001:db8:1:2::/64");
    expect(addressBucket("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(addressBucket("::1")).toBe("0:0:0:0::/64");
    expect(addressBucket("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(addressBucket("::ffff:198.51.100.4")).toBe("198.51.100.4");
    expect(addressBucket("198.51.100.4")).toBe("198.51.100.4");
  });

  it("reads TRUST_PROXY as a hop count or a list of proxies, never 'trust everything'", () => {
    expect(parseTrustProxy(undefined)).toEqual({ value: false });
    expect(parseTrustProxy("false")).toEqual({ value: false });
    expect(parseTrustProxy("0")).toEqual({ value: false });
    expect(parseTrustProxy("2")).toEqual({ value: 2 });
    expect(parseTrustProxy("10.0.0.1, 10.1.0.0/16,loopback")).toEqual({
      value: ["10.0.0.1", "10.1.0.0/16", "loopback"],
    });
    expect(parseTrustProxy("true")).toMatchObject({ problem: expect.stringMatching(/number of proxies/) });
    expect(parseTrustProxy("10.0.0.300")).toMatchObject({ problem: expect.stringMatching(/not an IP/) });
    expect(() => loadConfig({ TRUST_PROXY: "true" })).toThrow(/TRUST_PROXY="true" is not valid/);
    expect(loadConfig({ TRUST_PROXY: "1" }).trustProxy).toBe(1);
  });

  it("believes X-Forwarded-For only through the proxies it was told about", async () => {
    t = await createTestApp({ config: { trustProxy: 1, loginAttemptsPerMinute: 2 } });
    let n = 0;
    // A fresh email each time, so only the per-address budget is at play.
    const from = (client: string) =>
      login(t!.app, `nobody${++n}@example.com`, "wrong password", "10.0.0.2", { "x-forwarded-for": client });
    // One proxy in front: the client is the last address it appended, each with its own budget.
    expectError(await from("198.51.100.1"), 401, "UNAUTHORIZED");
    expectError(await from("198.51.100.1"), 401, "UNAUTHORIZED");
    expectError(await from("198.51.100.1"), 429, "RATE_LIMITED");
    expectError(await from("198.51.100.2"), 401, "UNAUTHORIZED");
    // What a client writes further left is not believed: the proxy's own append decides.
    expectError(await from("1.2.3.4, 198.51.100.1"), 429, "RATE_LIMITED");
  });

  it("ignores X-Forwarded-For without TRUST_PROXY, so a client cannot pick a fresh address", async () => {
    t = await createTestApp({ config: { loginAttemptsPerMinute: 2 } });
    for (const [i, status] of [
      [1, 401],
      [2, 401],
      [3, 429],
    ] as const) {
      const response = await login(t.app, `nobody${i}@example.com`, "wrong password", "203.0.113.9", {
        "x-forwarded-for": `198.51.100.${i}`,
      });
      expect(response.statusCode).toBe(status);
    }
  });
});

describe("sign-in limits", () => {
  it("limits attempts per address, counting an IPv6 /64 as one address", async () => {
    t = await createTestApp({ config: { loginAttemptsPerMinute: 3 } });
    const { email } = await signup(t.app);
    const emails = [email, "nobody1@example.com", "nobody2@example.com"];
    for (const [i, address] of ["2001:db8:7:7::1", "2001:db8:7:7::2", "2001:db8:7:7:ffff::9"].entries()) {
      expectError(await login(t.app, emails[i]!, "wrong password", address), 401, "UNAUTHORIZED");
    }
    const refused = await login(t.app, "nobody3@example.com", PASSWORD, "2001:db8:7:7::abcd");
    expect(expectError(refused, 429, "RATE_LIMITED").details).toMatchObject({ limit: 3, remaining: 0 });
    expect(retryAfter(refused)).toBeGreaterThan(0);
    // The next /64 is another client.
    expect((await login(t.app, email, PASSWORD, "2001:db8:7:8::1")).statusCode).toBe(200);
    // The budget is whole again in the next minute.
    t.clock.advance(60_000);
    expect((await login(t.app, email, PASSWORD, "2001:db8:7:7::1")).statusCode).toBe(200);
  });

  it("limits attempts per email, whatever address they come from", async () => {
    t = await createTestApp({ config: { loginAttemptsPerMinute: 3 } });
    const { email } = await signup(t.app);
    for (let i = 1; i <= 3; i++) {
      expectError(await login(t.app, email, "wrong password", `198.51.100.${i}`), 401, "UNAUTHORIZED");
    }
    expectError(await login(t.app, email.toUpperCase(), PASSWORD, "198.51.100.50"), 429, "RATE_LIMITED");
    // Another email from a fresh address is not affected.
    const other = await signup(t.app);
    expect((await login(t.app, other.email, PASSWORD, "198.51.100.51")).statusCode).toBe(200);
  });

  it("backs off exponentially after repeated failures, without locking the owner out elsewhere", async () => {
    t = await createTestApp({ config: { loginAttemptsPerMinute: 1000 } });
    const { email } = await signup(t.app);
    const attacker = "198.51.100.66";
    for (let i = 0; i < 5; i++) {
      expectError(await login(t.app, email, `wrong ${i} password`, attacker), 401, "UNAUTHORIZED");
    }
    // Fifth failure reached: wait 1 s, then 2 s after the next failure, then 4 s …
    for (const wait of [1, 2, 4, 8]) {
      const refused = await login(t.app, email, "another guess!", attacker);
      expect(expectError(refused, 429, "RATE_LIMITED").details).toEqual({
        reason: "backoff",
        retry_after_seconds: wait,
      });
      expect(retryAfter(refused)).toBe(wait);
      t.clock.advance(wait * 1000 - 1);
      expectError(await login(t.app, email, "another guess!", attacker), 429, "RATE_LIMITED");
      t.clock.advance(1);
      expectError(await login(t.app, email, "another guess!", attacker), 401, "UNAUTHORIZED");
    }
    // Even the right password waits out the backoff from that address …
    expectError(await login(t.app, email, PASSWORD, attacker), 429, "RATE_LIMITED");
    // … while the owner signs in from their own address at once.
    expect((await login(t.app, email, PASSWORD, "203.0.113.20")).statusCode).toBe(200);
    // A success clears the pair's run.
    t.clock.advance(16_000);
    expect((await login(t.app, email, PASSWORD, attacker)).statusCode).toBe(200);
    expectError(await login(t.app, email, "wrong again!!", attacker), 401, "UNAUTHORIZED");
  });

  it("caps password hashes at once: a flood queues, and past the queue gets 503, never a 500", async () => {
    t = await createTestApp({ config: { loginAttemptsPerMinute: 10_000, passwordHashConcurrency: 1 } });
    const { email } = await signup(t.app);
    // 1 running + 16 waiting are accepted; the rest are refused at once.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => login(t!.app, email, PASSWORD, `198.51.100.${i + 1}`)),
    );
    const statuses = answers.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(17);
    const busy = answers.filter((r) => r.statusCode === 503);
    expect(busy).toHaveLength(23);
    for (const response of busy) {
      expectError(response, 503, "SERVER_BUSY");
      expect(response.headers["retry-after"]).toBe("1");
    }
    // Once the flood is through, sign-ins work again.
    expect((await login(t.app, email, PASSWORD, "198.51.100.200")).statusCode).toBe(200);
  });
});

describe("the hash limiter", () => {
  it("never runs more than its cap, hands slots on in order, and refuses past its queue", async () => {
    const limiter = new HashLimiter(2, 3);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const releases: Array<() => void> = [];
    const work = (id: number) =>
      limiter.run(async () => {
        running += 1;
        most = Math.max(most, running);
        order.push(id);
        await new Promise<void>((resolve) => releases.push(resolve));
        running -= 1;
        return id;
      });
    const accepted = [1, 2, 3, 4, 5].map(work);
    await expect(work(6)).rejects.toBeInstanceOf(HashQueueFull);
    expect(limiter.running).toBe(2);
    expect(limiter.waiting).toBe(3);
    while (releases.length > 0 || order.length < 5) {
      await new Promise((r) => setImmediate(r));
      releases.shift()?.();
    }
    expect(await Promise.all(accepted)).toEqual([1, 2, 3, 4, 5]);
    expect(order).toEqual([1, 2, 3, 4, 5]);
    expect(most).toBe(2);
    expect(limiter.running).toBe(0);
    // A failing job frees its slot too.
    await expect(limiter.run(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(limiter.running).toBe(0);
  });
});

describe("failed authentication", () => {
  it("is limited per address: past the budget a guessing address gets 429, good keys keep working", async () => {
    t = await createTestApp({ config: { authFailuresPerMinute: 5 } });
    const { session } = await signup(t.app);
    const good = (await createKey(t.app, session, { type: "read_only" })).key;
    const guesser = "2001:db8:66::1";
    const get = (key: string, remoteAddress: string) =>
      t!.app.inject({ method: "GET", url: "/v1/account", headers: bearer(key), remoteAddress });
    // A key proved from this address before the flood stays served from the cache.
    expect((await get(good, guesser)).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) {
      expectError(await get(`cb_live_${"A".repeat(39)}${i}`, "2001:db8:66::1"), 401, "UNAUTHORIZED");
    }
    // The sixth failure, from another address of the same /64, tips it over.
    const refused = await get(`cb_live_${"B".repeat(40)}`, "2001:db8:66::2");
    expect(expectError(refused, 429, "RATE_LIMITED").details).toMatchObject({
      reason: "authentication_failures",
    });
    expect(retryAfter(refused)).toBeGreaterThan(0);
    // Blocked: unknown keys and sessions get 429 without being looked up.
    expectError(await get(`cb_live_${"C".repeat(40)}`, guesser), 429, "RATE_LIMITED");
    expectError(
      await t.app.inject({
        method: "GET",
        url: "/v1/api-keys",
        headers: bearer("cbs_nonsense"),
        remoteAddress: guesser,
      }),
      429,
      "RATE_LIMITED",
    );
    expect((await get(good, guesser)).statusCode).toBe(200);
    // Other addresses are not affected, and the block ends with the minute.
    expectError(await get(`cb_live_${"D".repeat(40)}`, "198.51.100.1"), 401, "UNAUTHORIZED");
    t.clock.advance(60_000);
    expectError(await get(`cb_live_${"E".repeat(40)}`, guesser), 401, "UNAUTHORIZED");
  });

  it("counts an expired or unknown session as a failure, not a session on the wrong route", async () => {
    t = await createTestApp({ config: { authFailuresPerMinute: 2 } });
    const { session } = await signup(t.app);
    const addr = "198.51.100.77";
    const call = (token: string, url: string) =>
      t!.app.inject({ method: "GET", url, headers: bearer(token), remoteAddress: addr });
    // A live session token used on a data route is refused, but it is not a guess.
    for (let i = 0; i < 4; i++) expectError(await call(session, "/v1/account"), 401, "UNAUTHORIZED");
    expectError(await call("cbs_unknown1", "/v1/api-keys"), 401, "UNAUTHORIZED");
    expectError(await call("cbs_unknown2", "/v1/api-keys"), 401, "UNAUTHORIZED");
    expectError(await call("cbs_unknown3", "/v1/api-keys"), 429, "RATE_LIMITED");
  });
});

describe("sign-ins a user can see and end", () => {
  it("lists the account's live sessions with address and browser, and ends them all", async () => {
    t = await createTestApp({ config: { sessionTtlSeconds: 3600 } });
    const { email, session: first } = await signup(t.app);
    t.clock.advance(1000);
    const laptop = (
      await login(t.app, email, PASSWORD, "198.51.100.10", { "user-agent": "Firefox/140" })
    ).json().data.session.token as string;
    t.clock.advance(1000);
    const phone = (await login(t.app, email, PASSWORD, "2001:db8::5", { "user-agent": "Safari/19" })).json()
      .data.session.token as string;
    const other = await signup(t.app);

    const listed = await t.app.inject({ method: "GET", url: "/v1/auth/sessions", headers: bearer(laptop) });
    expect(listed.statusCode, listed.body).toBe(200);
    const sessions = listed.json().data as Array<Record<string, unknown>>;
    expect(sessions).toHaveLength(3);
    expect(sessions[0]).toMatchObject({ ip: "2001:db8::5", user_agent: "Safari/19", current: false });
    expect(sessions[1]).toMatchObject({ ip: "198.51.100.10", user_agent: "Firefox/140", current: true });
    expect(sessions.filter((s) => s["current"])).toHaveLength(1);
    expect(JSON.stringify(sessions)).not.toContain(laptop);

    // An API key does not manage sign-ins, not even an admin key.
    const admin = (await createKey(t.app, first, { type: "admin" })).key;
    expectError(
      await t.app.inject({ method: "GET", url: "/v1/auth/sessions", headers: bearer(admin) }),
      403,
      "FORBIDDEN",
    );

    // End every other sign-in, keeping this one …
    const others = await t.app.inject({
      method: "DELETE",
      url: "/v1/auth/sessions?keep_current=true",
      headers: bearer(laptop),
    });
    expect(others.json().data).toEqual({ revoked_count: 2 });
    expectError(
      await t.app.inject({ method: "GET", url: "/v1/api-keys", headers: bearer(phone) }),
      401,
      "UNAUTHORIZED",
    );
    expectError(
      await t.app.inject({ method: "GET", url: "/v1/api-keys", headers: bearer(first) }),
      401,
      "UNAUTHORIZED",
    );
    // … then all of them: this one ends too.
    const all = await t.app.inject({ method: "DELETE", url: "/v1/auth/sessions", headers: bearer(laptop) });
    expect(all.json().data).toEqual({ revoked_count: 1 });
    expectError(
      await t.app.inject({ method: "GET", url: "/v1/api-keys", headers: bearer(laptop) }),
      401,
      "UNAUTHORIZED",
    );
    // Keys outlive sign-ins, and another account's sessions were never touched.
    expect(
      (await t.app.inject({ method: "GET", url: "/v1/account", headers: bearer(admin) })).statusCode,
    ).toBe(200);
    expect(
      (await t.app.inject({ method: "GET", url: "/v1/api-keys", headers: bearer(other.session) })).statusCode,
    ).toBe(200);
  });
});
