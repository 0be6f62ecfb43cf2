/** Configuration: defaults for the embedded mode, and a clear message for every bad value. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config";

describe("config", () => {
  it("defaults to the embedded single-machine mode", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: "127.0.0.1",
      port: 8080,
      database: { kind: "sqlite", file: path.resolve("./data/crossbook.db") },
      redisUrl: undefined,
      masterKey: undefined,
      logLevel: "info",
    });
  });

  it("selects PostgreSQL and Redis by URL", () => {
    const config = loadConfig({
      DATABASE_URL: "postgres://u@h:5432/db",
      REDIS_URL: "redis://127.0.0.1:6379",
    });
    expect(config.database).toEqual({ kind: "postgres", url: "postgres://u@h:5432/db" });
    expect(config.redisUrl).toBe("redis://127.0.0.1:6379");
    expect(loadConfig({ DATABASE_URL: "sqlite:/tmp/x.db" }).database).toEqual({
      kind: "sqlite",
      file: "/tmp/x.db",
    });
  });

  it("names the instance and the Redis namespace, and refuses unusable values", () => {
    const defaults = loadConfig({});
    expect(defaults.instanceId).toMatch(/^[A-Za-z0-9._-]+-\d+-[0-9a-f]{6}$/);
    expect(defaults.redisKeyPrefix).toBe("crossbook:");
    expect(defaults.jobLeaseSeconds).toBe(15);
    const set = loadConfig({ INSTANCE_ID: "web-1", REDIS_KEY_PREFIX: "staging:", JOB_LEASE_SECONDS: "5" });
    expect(set).toMatchObject({ instanceId: "web-1", redisKeyPrefix: "staging:", jobLeaseSeconds: 5 });
    expect(() => loadConfig({ INSTANCE_ID: "web 1" })).toThrow(/INSTANCE_ID="web 1" is not valid/);
    expect(() => loadConfig({ REDIS_KEY_PREFIX: "a b" })).toThrow(/REDIS_KEY_PREFIX="a b" is not valid/);
    expect(() => loadConfig({ JOB_LEASE_SECONDS: "1" })).toThrow(/JOB_LEASE_SECONDS="1" is not valid/);
  });

  it("accepts a hex or base64 master key", () => {
    expect(loadConfig({ CROSSBOOK_MASTER_KEY: "ab".repeat(32) }).masterKey).toEqual(Buffer.alloc(32, 0xab));
    expect(loadConfig({ CROSSBOOK_MASTER_KEY: Buffer.alloc(32, 1).toString("base64") }).masterKey).toEqual(
      Buffer.alloc(32, 1),
    );
  });

  it("enables venues and takes their base URLs from the environment", () => {
    const defaults = loadConfig({});
    expect(defaults.venues).toEqual(["polymarket", "kalshi"]);
    expect(defaults.venueUrls.kalshi.api).toBe("https://api.elections.kalshi.com/trade-api/v2");
    const custom = loadConfig({
      CROSSBOOK_VENUES: " Kalshi ",
      KALSHI_API_URL: "http://127.0.0.1:9000/trade-api/v2/",
      POLYMARKET_WS_URL: "ws://127.0.0.1:9001/ws",
    });
    expect(custom.venues).toEqual(["kalshi"]);
    expect(custom.venueUrls.kalshi.api).toBe("http://127.0.0.1:9000/trade-api/v2");
    expect(custom.venueUrls.polymarket.ws).toBe("ws://127.0.0.1:9001/ws");
    expect(loadConfig({ CROSSBOOK_VENUES: "none" }).venues).toEqual([]);
    expect(() => loadConfig({ CROSSBOOK_VENUES: "manifold" })).toThrow(/CROSSBOOK_VENUES.*unknown manifold/);
    expect(() => loadConfig({ KALSHI_WS_URL: "https://x" })).toThrow(/KALSHI_WS_URL.*ws: or wss:/);
  });

  it("reads the Kalshi feed key from a PEM file, both variables or neither", () => {
    const file = path.join(os.tmpdir(), `cb-kalshi-${process.pid}.pem`);
    fs.writeFileSync(file, "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n");
    expect(
      loadConfig({ KALSHI_FEED_KEY_ID: "k1", KALSHI_FEED_PRIVATE_KEY_FILE: file }).kalshiFeedKey,
    ).toEqual({
      keyId: "k1",
      privateKeyPem: fs.readFileSync(file, "utf8"),
    });
    expect(loadConfig({}).kalshiFeedKey).toBeUndefined();
    expect(() => loadConfig({ KALSHI_FEED_KEY_ID: "k1" })).toThrow(/go together/);
    expect(() =>
      loadConfig({ KALSHI_FEED_KEY_ID: "k1", KALSHI_FEED_PRIVATE_KEY_FILE: "/nonexistent.pem" }),
    ).toThrow(/KALSHI_FEED_PRIVATE_KEY_FILE/);
    fs.rmSync(file);
  });

  it("takes the stream's flush interval, 10 ms by default", () => {
    expect(loadConfig({}).streamFlushIntervalMs).toBe(10);
    expect(loadConfig({ STREAM_FLUSH_INTERVAL_MS: "0" }).streamFlushIntervalMs).toBe(0);
  });

  it("names every bad variable at once", () => {
    try {
      loadConfig({
        PORT: "http",
        DATABASE_URL: "mysql://x",
        REDIS_URL: "localhost:6379",
        CROSSBOOK_MASTER_KEY: "short",
        LOG_LEVEL: "loud",
        STREAM_FLUSH_INTERVAL_MS: "5000",
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as ConfigError).message;
      for (const name of [
        "PORT",
        "DATABASE_URL",
        "REDIS_URL",
        "CROSSBOOK_MASTER_KEY",
        "LOG_LEVEL",
        "STREAM_FLUSH_INTERVAL_MS",
      ]) {
        expect(message).toContain(name);
      }
      expect((error as ConfigError).problems).toHaveLength(6);
    }
  });
});
