/**
 * Builds the infrastructure a process needs from config: the store (migrated), the bus, the rate
 * limiter, the clock and the secret box. `serve`, the CLI and tests all go through here, so every
 * entry point runs on the same wiring.
 */

import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Config } from "./config";
import type { Bus } from "./infra/bus/bus";
import { MemoryBus } from "./infra/bus/memory";
import { RedisBus } from "./infra/bus/redis";
import { type Clock, systemClock } from "./infra/clock";
import { migrate, type OpenStoreOptions, openStore, type Store } from "./infra/db/store";
import type { RateLimiter } from "./infra/limiter/limiter";
import { MemoryRateLimiter } from "./infra/limiter/memory";
import { RedisRateLimiter } from "./infra/limiter/redis";
import type { Logger } from "./infra/log";
import { SecretBox } from "./infra/secretbox";
import { MemoryConnectionSlots } from "./infra/slots/memory";
import { RedisConnectionSlots } from "./infra/slots/redis";
import type { ConnectionSlots } from "./infra/slots/slots";

export interface Runtime {
  config: Config;
  store: Store;
  bus: Bus;
  limiter: RateLimiter;
  /** Stream connections held per key (across instances with Redis). */
  slots: ConnectionSlots;
  clock: Clock;
  secretBox: SecretBox;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  clock?: Clock;
  store?: OpenStoreOptions;
  /** Namespace for Redis keys and channels (tests use a random one). */
  redisPrefix?: string;
  /** Skip migrations (the CLI's `migrate` runs them itself and reports). */
  migrate?: boolean;
  /** Start-up notices for a person reading stderr (a master key was generated, or is exposed). */
  log?: (message: string) => void;
  /** Where background failures go (a bus handler that throws); silent when not given. */
  logger?: Logger;
}

const MASTER_KEY_FILE = "master.key";

/**
 * The master key from CROSSBOOK_MASTER_KEY, else from `<data dir>/master.key`, created once with
 * mode 0600. Losing it makes stored venue credentials and webhook secrets unreadable.
 */
export function resolveMasterKey(config: Config, log: (message: string) => void = () => {}): Buffer {
  if (config.masterKey) return config.masterKey;
  const file = path.join(config.dataDir, MASTER_KEY_FILE);
  if (fs.existsSync(file)) {
    warnIfShared(file, log);
    const key = Buffer.from(fs.readFileSync(file, "utf8").trim(), "hex");
    if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte hex key`);
    return key;
  }
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  try {
    // "wx": never overwrite a key another process created a moment ago.
    fs.writeFileSync(file, `${key.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return resolveMasterKey(config, log);
    throw error;
  }
  log(`generated a master key in ${file} (mode 0600); back it up, or set CROSSBOOK_MASTER_KEY`);
  if (config.database.kind === "postgres") {
    log("several instances on one PostgreSQL must share the same CROSSBOOK_MASTER_KEY");
  }
  return key;
}

/** The master key decrypts every stored secret: say so at start if others can read its file. */
function warnIfShared(file: string, log: (message: string) => void): void {
  if (process.platform === "win32") return;
  const mode = fs.statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    log(
      `WARNING: ${file} is readable by ${mode & 0o007 ? "every user" : "its group"} (mode 0${mode.toString(8)}); ` +
        `it decrypts every stored venue credential and webhook secret: run chmod 600 ${file}`,
    );
  }
}

export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const log = options.log ?? (() => {});
  const store = await openStore(config.database, options.store);
  try {
    if (options.migrate !== false) await migrate(store);
  } catch (error) {
    await store.close();
    throw error;
  }
  const prefix = options.redisPrefix ?? config.redisKeyPrefix;
  const bus: Bus = config.redisUrl
    ? new RedisBus(config.redisUrl, prefix, options.logger)
    : new MemoryBus(options.logger);
  const limiter: RateLimiter = config.redisUrl
    ? new RedisRateLimiter(config.redisUrl, prefix)
    : new MemoryRateLimiter();
  const slots: ConnectionSlots = config.redisUrl
    ? new RedisConnectionSlots(config.redisUrl, prefix)
    : new MemoryConnectionSlots();
  const secretBox = new SecretBox(resolveMasterKey(config, log));
  return {
    config,
    store,
    bus,
    limiter,
    slots,
    clock: options.clock ?? systemClock,
    secretBox,
    async close() {
      await Promise.allSettled([bus.close(), limiter.close(), slots.close()]);
      await store.close();
    },
  };
}
