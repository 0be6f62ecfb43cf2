/**
 * Configuration comes from the environment and is validated once at start: a bad value stops the
 * process with a message naming the variable, what it holds and what is expected. Every default
 * serves the embedded single-machine mode (SQLite, in-process bus, in-memory rate limiter).
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseTrustProxy, type TrustProxy } from "./http/client-address";

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
export type StoreConfig =
  | { kind: "sqlite"; file: string }
  /** `schema`: DATABASE_SCHEMA, the PostgreSQL schema to keep the tables in (created if missing). */
  | { kind: "postgres"; url: string; schema?: string };

export interface Config {
  host: string;
  port: number;
  database: StoreConfig;
  /** Where the SQLite file and the generated master key live. */
  dataDir: string;
  redisUrl: string | undefined;
  /** Prepended to every Redis key and pub/sub channel (REDIS_KEY_PREFIX): deployments sharing one Redis. */
  redisKeyPrefix: string;
  /** 32-byte key from CROSSBOOK_MASTER_KEY; undefined means "use (or create) the key file". */
  masterKey: Buffer | undefined;
  logLevel: LogLevel;
  /** Lifetime of a sign-in session token. */
  sessionTtlSeconds: number;
  /** Largest request body accepted, in bytes. */
  bodyLimitBytes: number;
  /** scrypt cost (log2 N) for password hashes. */
  passwordHashCost: number;
  /** Sign-in attempts allowed per client address (and per email) per minute. */
  loginAttemptsPerMinute: number;
  /** Password hashes (scrypt) computed at once; more sign-ins queue, and past a bound get 503. */
  passwordHashConcurrency: number;
  /** Failed authentications (unknown or revoked key, invalid session) per client address per minute. */
  authFailuresPerMinute: number;
  /** Requests per minute for enterprise keys whose account has no custom figure. */
  enterpriseDefaultRateLimit: number;
  /** Requests per minute for enterprise-plan agent keys whose account has no custom figure. */
  enterpriseAgentDefaultRateLimit: number;
  /** Which proxies' X-Forwarded-For to believe: none, a hop count, or their addresses. */
  trustProxy: TrustProxy;
  /** A bearer token `/metrics` requires; undefined: open (on the address it is served on). */
  metricsToken: string | undefined;
  /** Serve `/metrics` on this separate address and port instead of the API's (e.g. 127.0.0.1:9464). */
  metricsListen: { host: string; port: number } | undefined;
  /** Seconds between catalog syncs of each venue. */
  catalogSyncIntervalSeconds: number;
  /** Most markets per venue kept live over the venue's WebSocket feed (most traded first). */
  feedMaxMarketsPerVenue: number;
  /** How long the price stream gathers updates before writing them to each client, ms. */
  streamFlushIntervalMs: number;
  /** How often each instance reads new account events for its account streams (ms). */
  accountStreamPollMs: number;
  /** This instance's name in job leases, logs and /readyz (INSTANCE_ID; default host-pid-random). */
  instanceId: string;
  /** How long a cluster job's lease lasts unrenewed: the longest a dead holder's job waits (s). */
  jobLeaseSeconds: number;
  /** Stream connections opened without a key and waiting for their `auth` message, per client address. */
  streamUnauthenticatedPerAddress: number;
  /** Stream connections waiting for their `auth` message, over all addresses (per instance). */
  streamUnauthenticatedMax: number;
  /** Venues to aggregate, from CROSSBOOK_VENUES. */
  venues: Array<"polymarket" | "kalshi">;
  venueUrls: {
    polymarket: { gamma: string; clob: string; ws: string; data: string };
    kalshi: { api: string; ws: string };
  };
  /** A Kalshi API key that signs the market-data WebSocket (the venue requires it; fakes do not). */
  kalshiFeedKey: { keyId: string; privateKeyPem: string } | undefined;
  /** Lets webhooks reach private, loopback and other reserved addresses (self-hosting, tests). */
  webhookAllowPrivateNetworks: boolean;
  /**
   * Lets webhooks reach loopback receivers, over http too (`crossbook demo` only; no variable sets
   * it): a receiver on the same machine, such as the agent library's `webhookReceiver`.
   */
  webhookAllowLoopback: boolean;
  /** Webhook deliveries in flight at once, over all endpoints, per instance. */
  webhookConcurrency: number;
  /** How long account events are kept for `GET /v1/account/events` (and the outbox), days. */
  eventRetentionDays: number;
  /** Webhook deliveries in flight at once for one account's endpoints, per instance. */
  webhookAccountConcurrency: number;
  /** How long a claimed delivery attempt is one dispatcher's before another may retry it, seconds. */
  webhookLeaseSeconds: number;
  /** Run the matcher over the catalog (matches and curation routes work either way). */
  matchingEnabled: boolean;
  /** Smallest hedged size, in contracts, at which `GET /v1/prices/compare` calls an edge an opportunity. */
  arbitrageMinContracts: number;
  /** How long a linked venue account's positions, once read, are served before the venue is asked again, seconds. */
  venuePositionsMaxAgeSeconds: number;
}

export const VENUE_URL_DEFAULTS = {
  polymarket: {
    gamma: "https://gamma-api.polymarket.com",
    clob: "https://clob.polymarket.com",
    ws: "wss://ws-subscriptions-clob.polymarket.com/ws",
    data: "https://data-api.polymarket.com",
  },
  kalshi: {
    api: "https://api.elections.kalshi.com/trade-api/v2",
    ws: "wss://api.elections.kalshi.com/trade-api/ws/v2",
  },
} as const;

const LOG_LEVELS: LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

type Env = Record<string, string | undefined>;

/** REDIS_KEY_PREFIX as given: letters, digits, `:`, `.`, `_`, `-`; up to 64. */
function redisKeyPrefix(given: string, problems: string[]): string {
  if (/^[A-Za-z0-9:._-]{1,64}$/.test(given)) return given;
  problems.push(
    `REDIS_KEY_PREFIX=${JSON.stringify(given)} is not valid: expected 1 to 64 letters, digits, colons, dots, underscores or dashes`,
  );
  return "crossbook:";
}

/** INSTANCE_ID as given (letters, digits, `.`, `_`, `-`; up to 64), or host-pid-random. */
function instanceId(given: string, problems: string[]): string {
  if (/^[A-Za-z0-9._-]{1,64}$/.test(given)) return given;
  if (given !== "") {
    problems.push(
      `INSTANCE_ID=${JSON.stringify(given)} is not valid: expected 1 to 64 letters, digits, dots, underscores or dashes`,
    );
  }
  return `${
    os
      .hostname()
      .replace(/[^A-Za-z0-9._-]/g, "")
      .slice(0, 40) || "host"
  }-${process.pid}-${randomBytes(3).toString("hex")}`;
}

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const text = (name: string, fallback: string) => {
    const value = env[name];
    return value === undefined || value === "" ? fallback : value;
  };
  const integer = (name: string, fallback: number, min: number, max: number) => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(
        `${name}=${JSON.stringify(raw)} is not valid: expected a whole number from ${min} to ${max}`,
      );
      return fallback;
    }
    return Number(raw);
  };
  const boolean = (name: string, fallback: boolean) => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    if (["true", "1", "yes"].includes(raw.toLowerCase())) return true;
    if (["false", "0", "no"].includes(raw.toLowerCase())) return false;
    problems.push(`${name}=${JSON.stringify(raw)} is not valid: expected true or false`);
    return fallback;
  };

  const url = (name: string, fallback: string, protocols: string[]) => {
    const value = text(name, fallback).replace(/\/+$/, "");
    try {
      if (protocols.includes(new URL(value).protocol)) return value;
    } catch {
      // reported below
    }
    problems.push(
      `${name}=${JSON.stringify(value)} is not valid: expected a ${protocols.join(" or ")}//… URL`,
    );
    return fallback;
  };
  const venueList = (raw: string): Array<"polymarket" | "kalshi"> => {
    if (raw.trim().toLowerCase() === "none") return [];
    const names = raw
      .split(",")
      .map((v) => v.trim().toLowerCase())
      .filter(Boolean);
    const unknown = names.filter((n) => n !== "polymarket" && n !== "kalshi");
    if (unknown.length > 0) {
      problems.push(
        `CROSSBOOK_VENUES=${JSON.stringify(raw)} is not valid: unknown ${unknown.join(", ")}; expected polymarket, kalshi or none`,
      );
    }
    return [
      ...new Set(names.filter((n): n is "polymarket" | "kalshi" => n === "polymarket" || n === "kalshi")),
    ];
  };

  const kalshiFeedKey = () => {
    const keyId = env["KALSHI_FEED_KEY_ID"];
    const file = env["KALSHI_FEED_PRIVATE_KEY_FILE"];
    if (!keyId && !file) return undefined;
    if (!keyId || !file) {
      problems.push("KALSHI_FEED_KEY_ID and KALSHI_FEED_PRIVATE_KEY_FILE go together: set both or neither");
      return undefined;
    }
    try {
      const privateKeyPem = fs.readFileSync(file, "utf8");
      if (!privateKeyPem.includes("PRIVATE KEY")) throw new Error("no PEM private key in it");
      return { keyId, privateKeyPem };
    } catch (error) {
      problems.push(
        `KALSHI_FEED_PRIVATE_KEY_FILE=${JSON.stringify(file)} is not usable: ${(error as Error).message}`,
      );
      return undefined;
    }
  };

  const trustProxy = (): TrustProxy => {
    const parsed = parseTrustProxy(env["TRUST_PROXY"]);
    if ("value" in parsed) return parsed.value;
    problems.push(`TRUST_PROXY=${JSON.stringify(env["TRUST_PROXY"])} is not valid: ${parsed.problem}`);
    return false;
  };
  const metricsToken = () => {
    const token = env["METRICS_TOKEN"];
    if (token === undefined || token === "") return undefined;
    if (token.length < 16 || !/^[!-~]+$/.test(token)) {
      problems.push("METRICS_TOKEN is not valid: expected at least 16 visible ASCII characters, no spaces");
      return undefined;
    }
    return token;
  };
  const metricsListen = () => {
    const raw = env["METRICS_LISTEN"];
    if (raw === undefined || raw === "") return undefined;
    const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(raw.trim());
    const port = match ? Number(match[3]) : -1;
    if (!match || port < 0 || port > 65535) {
      problems.push(
        `METRICS_LISTEN=${JSON.stringify(raw)} is not valid: expected host:port, e.g. 127.0.0.1:9464 or [::1]:9464`,
      );
      return undefined;
    }
    return { host: match[1] ?? match[2]!, port };
  };

  const host = text("HOST", "127.0.0.1");
  const port = integer("PORT", 8080, 0, 65535);
  const dataDir = path.resolve(text("CROSSBOOK_DATA_DIR", "./data"));

  const databaseUrl = text("DATABASE_URL", `sqlite:${path.join(dataDir, "crossbook.db")}`);
  let database: StoreConfig = { kind: "sqlite", file: path.join(dataDir, "crossbook.db") };
  if (databaseUrl.startsWith("postgres://") || databaseUrl.startsWith("postgresql://")) {
    const schema = text("DATABASE_SCHEMA", "");
    if (schema !== "" && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
      problems.push(
        `DATABASE_SCHEMA=${JSON.stringify(schema)} is not valid: expected a lower-case PostgreSQL name (letters, digits, _)`,
      );
    }
    database = { kind: "postgres", url: databaseUrl, ...(schema !== "" ? { schema } : {}) };
  } else if (databaseUrl.startsWith("sqlite:")) {
    const file = databaseUrl.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "");
    if (file === "") problems.push(`DATABASE_URL=${JSON.stringify(databaseUrl)} names no file`);
    database = { kind: "sqlite", file: file === ":memory:" ? file : path.resolve(file) };
  } else {
    problems.push(
      `DATABASE_URL=${JSON.stringify(databaseUrl)} is not valid: expected sqlite:<file> or postgres://user@host:port/db`,
    );
  }

  const redisUrl = env["REDIS_URL"] || undefined;
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) {
    problems.push(`REDIS_URL=${JSON.stringify(redisUrl)} is not valid: expected redis://host:port[/db]`);
  }

  let masterKey: Buffer | undefined;
  const rawKey = env["CROSSBOOK_MASTER_KEY"];
  if (rawKey) {
    masterKey = parseMasterKey(rawKey);
    if (!masterKey) {
      problems.push(
        "CROSSBOOK_MASTER_KEY is not valid: expected 32 bytes as 64 hex characters or base64 (e.g. `openssl rand -hex 32`)",
      );
    }
  }

  const logLevel = text("LOG_LEVEL", "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(
      `LOG_LEVEL=${JSON.stringify(logLevel)} is not valid: expected one of ${LOG_LEVELS.join(", ")}`,
    );
  }

  const config: Config = {
    host,
    port,
    database,
    dataDir,
    redisUrl,
    redisKeyPrefix: redisKeyPrefix(text("REDIS_KEY_PREFIX", "crossbook:"), problems),
    masterKey,
    logLevel: LOG_LEVELS.includes(logLevel) ? logLevel : "info",
    sessionTtlSeconds: integer("SESSION_TTL_SECONDS", 24 * 3600, 60, 90 * 24 * 3600),
    bodyLimitBytes: integer("BODY_LIMIT_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
    passwordHashCost: integer("PASSWORD_HASH_COST", 17, 10, 20),
    loginAttemptsPerMinute: integer("LOGIN_ATTEMPTS_PER_MINUTE", 10, 1, 10_000),
    enterpriseDefaultRateLimit: integer("ENTERPRISE_RATE_LIMIT", 3000, 1, 10_000_000),
    enterpriseAgentDefaultRateLimit: integer("ENTERPRISE_AGENT_RATE_LIMIT", 50_000, 1, 10_000_000),
    passwordHashConcurrency: integer("PASSWORD_HASH_CONCURRENCY", 4, 1, 64),
    authFailuresPerMinute: integer("AUTH_FAILURES_PER_MINUTE", 30, 1, 100_000),
    trustProxy: trustProxy(),
    metricsToken: metricsToken(),
    metricsListen: metricsListen(),
    catalogSyncIntervalSeconds: integer("CATALOG_SYNC_INTERVAL_SECONDS", 300, 5, 86_400),
    feedMaxMarketsPerVenue: integer("FEED_MAX_MARKETS_PER_VENUE", 500, 0, 100_000),
    streamFlushIntervalMs: integer("STREAM_FLUSH_INTERVAL_MS", 10, 0, 1_000),
    accountStreamPollMs: integer("ACCOUNT_STREAM_POLL_MS", 10, 1, 5_000),
    instanceId: instanceId(text("INSTANCE_ID", ""), problems),
    jobLeaseSeconds: integer("JOB_LEASE_SECONDS", 15, 3, 3_600),
    streamUnauthenticatedPerAddress: integer("STREAM_UNAUTHENTICATED_PER_ADDRESS", 10, 1, 100_000),
    streamUnauthenticatedMax: integer("STREAM_UNAUTHENTICATED_MAX", 1_000, 1, 1_000_000),
    kalshiFeedKey: kalshiFeedKey(),
    webhookAllowPrivateNetworks: boolean("WEBHOOK_ALLOW_PRIVATE_NETWORKS", false),
    webhookAllowLoopback: false,
    webhookConcurrency: integer("WEBHOOK_CONCURRENCY", 64, 1, 10_000),
    eventRetentionDays: integer("EVENT_RETENTION_DAYS", 30, 1, 3_650),
    webhookAccountConcurrency: integer("WEBHOOK_ACCOUNT_CONCURRENCY", 8, 1, 10_000),
    // Above the 5 s delivery timeout, so a live attempt is never taken over.
    webhookLeaseSeconds: integer("WEBHOOK_LEASE_SECONDS", 30, 6, 3_600),
    matchingEnabled: boolean("MATCHING_ENABLED", true),
    arbitrageMinContracts: integer("ARBITRAGE_MIN_CONTRACTS", 10, 1, 1_000_000),
    venuePositionsMaxAgeSeconds: integer("VENUE_POSITIONS_MAX_AGE_SECONDS", 30, 1, 3_600),
    venues: venueList(text("CROSSBOOK_VENUES", "polymarket,kalshi")),
    venueUrls: {
      polymarket: {
        gamma: url("POLYMARKET_GAMMA_URL", VENUE_URL_DEFAULTS.polymarket.gamma, ["http:", "https:"]),
        clob: url("POLYMARKET_CLOB_URL", VENUE_URL_DEFAULTS.polymarket.clob, ["http:", "https:"]),
        ws: url("POLYMARKET_WS_URL", VENUE_URL_DEFAULTS.polymarket.ws, ["ws:", "wss:"]),
        data: url("POLYMARKET_DATA_URL", VENUE_URL_DEFAULTS.polymarket.data, ["http:", "https:"]),
      },
      kalshi: {
        api: url("KALSHI_API_URL", VENUE_URL_DEFAULTS.kalshi.api, ["http:", "https:"]),
        ws: url("KALSHI_WS_URL", VENUE_URL_DEFAULTS.kalshi.ws, ["ws:", "wss:"]),
      },
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function parseMasterKey(raw: string): Buffer | undefined {
  const trimmed = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, "hex");
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) {
    const decoded = Buffer.from(trimmed, "base64");
    if (decoded.length === 32) return decoded;
  }
  return undefined;
}

/**
 * A config for tests: in-memory SQLite, quiet logs, cheap password hashing, and no matcher runs
 * (suites of other domains list look-alike test markets on both venues; the matching suites turn
 * it on).
 */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({
      DATABASE_URL: "sqlite::memory:",
      CROSSBOOK_VENUES: "none",
      LOG_LEVEL: "silent",
      PASSWORD_HASH_COST: "10",
      CROSSBOOK_MASTER_KEY: "00".repeat(32),
      MATCHING_ENABLED: "false",
    }),
    ...overrides,
  };
}
