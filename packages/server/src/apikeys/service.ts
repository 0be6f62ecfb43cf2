/**
 * API keys: created with a name, a type and (agent keys only) chosen permissions, in an
 * environment (`live` or `sandbox`, visible in the prefix `cb_live_` / `cb_test_`). The secret is
 * returned once and stored as a SHA-256 hash.
 *
 * Authentication is on every request's hot path, so verified keys are cached in memory for a few
 * seconds. A revocation made by this process deletes the entry at once; one made by another
 * instance arrives over the bus (Redis); one made by the CLI on the same SQLite file shows in
 * SQLite's `data_version` (read at most once a millisecond), which empties the cache. So the very
 * next request fails; the short TTL is only the backstop for a lost bus message.
 * Open streams are closed through `onRevoked`. With an in-process bus nothing carries another
 * process's revocation, so the store is asked every half second for keys revoked since the last look
 * (on SQLite only after another process committed): a key revoked from the CLI loses its streams
 * within about a second.
 * `last_used_at` is collected in memory and written in batches, not once per request.
 */
import { randomBytes } from "node:crypto";
import { keysAllowed } from "../access/limits";
import {
  AGENT_PERMISSIONS,
  type AgentPermission,
  ENVIRONMENTS,
  effectivePermissions,
  grantedPermissions,
  KEY_TYPES,
  type KeyEnvironment,
  type KeyType,
  normalizeKeyType,
  type Permission,
} from "../access/permissions";
import * as accountsRepo from "../accounts/repo";
import type { Account, AccountsService } from "../accounts/service";
import { AppError, validationError } from "../http/errors";
import type { Bus } from "../infra/bus/bus";
import { type Clock, isoFromMs, isoNow } from "../infra/clock";
import type { Db, Dialect } from "../infra/db/store";
import { constantTimeEqual, sha256Hex } from "../infra/hashing";
import { newId } from "../infra/ids";
import { type Logger, silentLogger } from "../infra/log";
import * as repo from "./repo";

export interface ApiKey {
  id: string;
  account_id: string;
  name: string;
  type: KeyType;
  permissions: Permission[];
  environment: KeyEnvironment;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface AuthenticatedKey {
  key: ApiKey;
  account: Account;
  permissions: Set<Permission>;
}

export interface CreateKeyInput {
  name: string;
  type: string;
  permissions?: string[];
  environment?: string;
}

/**
 * Which keys a caller may manage: a session token manages both environments (`undefined`); an admin
 * API key only its own, so a sandbox key handed to a test bot can never mint or revoke a live key.
 */
export type KeyScope = KeyEnvironment | undefined;

function outOfScope(scope: KeyScope, environment: KeyEnvironment): AppError {
  return new AppError(
    "FORBIDDEN",
    `A ${scope} API key manages ${scope} keys only; use a session token (or a ${environment} admin key) for ${environment} keys`,
    { environment, allowed_environment: scope },
  );
}

export const KEY_PREFIX: Record<KeyEnvironment, string> = { live: "cb_live_", sandbox: "cb_test_" };
const REVOKED_CHANNEL = "apikeys.revoked";
const CACHE_TTL_MS = 2_000;
/** How often an instance without a shared bus looks for revocations written by another process. */
const REVOCATION_POLL_MS = 500;
/**
 * How far back each look reaches before the newest revocation seen: a revocation committed late, or
 * stamped by a process whose clock is a little behind ours, is still found.
 */
const REVOCATION_OVERLAP_MS = 10_000;
const REVOCATION_BATCH = 1_000;
const CACHE_MAX_ENTRIES = 50_000;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function base62(bytes: Buffer): string {
  let out = "";
  for (const byte of bytes) {
    // 248 is the largest multiple of 62 below 256: rejecting above it keeps every symbol equally likely.
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

function newSecret(environment: KeyEnvironment): string {
  let body = "";
  while (body.length < 40) body += base62(randomBytes(48));
  return KEY_PREFIX[environment] + body.slice(0, 40);
}

export function toApiKey(row: repo.ApiKeyRow): ApiKey {
  return {
    id: row.id,
    account_id: row.account_id,
    name: row.name,
    type: row.type as KeyType,
    permissions: JSON.parse(row.permissions) as Permission[],
    environment: row.environment as KeyEnvironment,
    prefix: row.prefix,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
  };
}

/** Tells which environment a presented secret claims, before any lookup. */
export function looksLikeApiKey(secret: string): boolean {
  return secret.startsWith(KEY_PREFIX.live) || secret.startsWith(KEY_PREFIX.sandbox);
}

export class ApiKeysService {
  readonly #cache = new Map<string, { value: AuthenticatedKey; expiresAt: number }>();
  #cacheStoreVersion: number | undefined;
  /** secret -> SHA-256, for secrets already verified: skips hashing on the hot path. Bounded. */
  readonly #hashes = new Map<string, string>();
  /** key id -> last use (ms); written to the store in batches. */
  readonly #usage = new Map<string, number>();
  #unsubscribe: (() => Promise<void>) | undefined;
  readonly #revokedListeners = new Set<(keyId: string) => void>();
  /** The store watch for other processes' revocations (in-process bus only). */
  #revocationTimer: NodeJS.Timeout | undefined;
  #revocationCheck: Promise<void> | undefined;
  /** Revocations already announced here, by key id -> revoked_at (ms), within the overlap window. */
  readonly #revokedSeen = new Map<string, number>();
  /** The newest `revoked_at` seen (ms); each look starts REVOCATION_OVERLAP_MS before it. */
  #revokedWatermark = 0;
  #revokedResume: number | undefined;

  constructor(
    private readonly db: Db,
    private readonly dialect: Dialect,
    private readonly externalChangeCounter: () => number | undefined,
    private readonly clock: Clock,
    private readonly bus: Bus,
    private readonly accounts: AccountsService,
    private readonly log: Logger = silentLogger,
  ) {}

  /**
   * Listens for revocations made by other instances (over the bus) and, when the bus is in-process,
   * watches the store for revocations made by other processes (the CLI).
   */
  async start(): Promise<void> {
    this.#unsubscribe = await this.bus.subscribe(REVOKED_CHANNEL, (message) => {
      const { key_hash: hash, key_id: keyId } = message as { key_hash?: unknown; key_id?: unknown };
      if (typeof hash === "string") this.#cache.delete(hash);
      if (typeof keyId === "string") this.#notifyRevoked(keyId);
    });
    if (this.bus.kind === "memory") this.#watchStoreRevocations();
  }

  #watchStoreRevocations(): void {
    this.#revokedWatermark = this.clock.now();
    let seenVersion = this.externalChangeCounter();
    this.#revocationTimer = setInterval(() => {
      if (this.#revocationCheck) return;
      // SQLite: nothing to read unless another process committed since the last look.
      const version = this.externalChangeCounter();
      if (version !== undefined && version === seenVersion) return;
      this.#revocationCheck = this.#checkStoreRevocations()
        .then((complete) => {
          if (complete) seenVersion = version;
        })
        .catch((error) => this.log.warn({ err: error }, "could not check the store for revoked keys"))
        .finally(() => {
          this.#revocationCheck = undefined;
        });
    }, REVOCATION_POLL_MS);
    this.#revocationTimer.unref();
  }

  /**
   * Announces the revocations not seen yet (a revocation made here is announced again: closing a
   * key's streams twice is harmless). False when there may be more than one batch to read.
   */
  async #checkStoreRevocations(): Promise<boolean> {
    // After a full batch, the next one starts where it ended (the overlap would read it again).
    const since = isoFromMs(this.#revokedResume ?? this.#revokedWatermark - REVOCATION_OVERLAP_MS);
    const rows = await repo.revokedSince(this.db, since, REVOCATION_BATCH);
    for (const row of rows) {
      const at = Date.parse(row.revoked_at);
      if (at > this.#revokedWatermark) this.#revokedWatermark = at;
      if (this.#revokedSeen.has(row.id)) continue;
      this.#revokedSeen.set(row.id, at);
      this.#forget(row.key_hash);
      this.#notifyRevoked(row.id);
    }
    for (const [id, at] of this.#revokedSeen) {
      if (at < this.#revokedWatermark - REVOCATION_OVERLAP_MS) this.#revokedSeen.delete(id);
    }
    const complete = rows.length < REVOCATION_BATCH;
    this.#revokedResume = complete ? undefined : Date.parse(rows[rows.length - 1]!.revoked_at);
    return complete;
  }

  /** Called when a key is revoked here or on another instance (open streams close on it). */
  onRevoked(listener: (keyId: string) => void): () => void {
    this.#revokedListeners.add(listener);
    return () => this.#revokedListeners.delete(listener);
  }

  #notifyRevoked(keyId: string): void {
    for (const listener of this.#revokedListeners) listener(keyId);
  }

  /** Which of these key ids are revoked now (revocations by another process, e.g. the CLI). */
  async revokedAmong(ids: readonly string[]): Promise<string[]> {
    return repo.revokedAmong(this.db, ids);
  }

  async stop(): Promise<void> {
    clearInterval(this.#revocationTimer);
    await this.#revocationCheck;
    await this.#unsubscribe?.();
    await this.flushUsage();
  }

  /**
   * Creates a key. `scope` is the caller's reach (see KeyScope): a key's own environment is also the
   * default environment of the keys it creates; a session token's default is live.
   */
  async create(
    accountId: string,
    input: CreateKeyInput,
    scope?: KeyScope,
  ): Promise<{ apiKey: ApiKey; secret: string }> {
    const problems: Record<string, string> = {};
    const name = input.name.trim();
    if (name.length === 0 || name.length > 100) problems["name"] = "must be 1 to 100 characters";
    const type = normalizeKeyType(input.type);
    if (!type) problems["type"] = `must be one of: ${KEY_TYPES.join(", ")} (or Read-Only, Trading, Admin)`;
    const environment = (input.environment ?? scope ?? "live") as KeyEnvironment;
    if (!ENVIRONMENTS.includes(environment))
      problems["environment"] = `must be one of: ${ENVIRONMENTS.join(", ")}`;
    else if (scope !== undefined && environment !== scope) throw outOfScope(scope, environment);
    let chosen: AgentPermission[] | undefined;
    if (input.permissions !== undefined) {
      const unknown = input.permissions.filter((p) => !(AGENT_PERMISSIONS as readonly string[]).includes(p));
      if (unknown.length > 0) {
        problems["permissions"] =
          `unknown permission ${unknown.join(", ")}; choose from ${AGENT_PERMISSIONS.join(", ")}`;
      } else if (type && type !== "agent") {
        const fixed = grantedPermissions(type, undefined);
        const same =
          input.permissions.length === 0 ||
          (input.permissions.every((p) => fixed.includes(p as Permission)) &&
            fixed.filter((p) => (AGENT_PERMISSIONS as readonly string[]).includes(p)).length ===
              new Set(input.permissions).size);
        if (!same) {
          problems["permissions"] =
            `are fixed for ${type} keys (${fixed.join(", ")}); choose permissions only for agent keys`;
        }
      } else {
        chosen = input.permissions as AgentPermission[];
      }
    }
    if (Object.keys(problems).length > 0 || !type) throw validationError(problems);

    const secret = newSecret(environment);
    const now = this.clock.now();
    const row: repo.ApiKeyRow = {
      id: newId("key", now),
      account_id: accountId,
      name,
      type,
      permissions: JSON.stringify(grantedPermissions(type, chosen)),
      environment,
      prefix: secret.slice(0, KEY_PREFIX[environment].length + 6),
      key_hash: sha256Hex(secret),
      created_at: isoFromMs(now),
      last_used_at: null,
      revoked_at: null,
    };

    await this.db.transaction().execute(async (trx) => {
      // Lock the account row so two concurrent creations cannot both pass the cap (PostgreSQL;
      // SQLite serializes writers anyway).
      const account = await accountsRepo.lockAccountTier(trx, accountId, this.dialect);
      if (!account) throw new AppError("ACCOUNT_NOT_FOUND");
      const cap = keysAllowed(account.tier as Account["tier"]);
      if (cap !== null && (await repo.countActiveKeys(trx, accountId)) >= cap) {
        throw new AppError(
          "KEY_LIMIT_REACHED",
          `The ${account.tier} tier allows ${cap} active API keys; revoke one or upgrade`,
          { tier: account.tier, keys_allowed: cap },
        );
      }
      await repo.insertKey(trx, row);
    });
    return { apiKey: toApiKey(row), secret };
  }

  /**
   * The account's keys, of one environment when `environment` is given. Asking a scoped caller for
   * the other environment is refused rather than answered with an empty list.
   */
  async list(accountId: string, environment?: KeyEnvironment, scope?: KeyScope): Promise<ApiKey[]> {
    if (scope !== undefined && environment !== undefined && environment !== scope) {
      throw outOfScope(scope, environment);
    }
    const wanted = environment ?? scope;
    const keys = (await repo.listKeys(this.db, accountId)).map(toApiKey);
    return wanted === undefined ? keys : keys.filter((k) => k.environment === wanted);
  }

  /** A key of this account that the caller may manage: 404 if not the account's, 403 if out of scope. */
  async get(accountId: string, id: string, scope?: KeyScope): Promise<ApiKey> {
    return toApiKey(await this.#managedRow(accountId, id, scope));
  }

  async #managedRow(accountId: string, id: string, scope: KeyScope): Promise<repo.ApiKeyRow> {
    const row = await repo.findKeyForAccount(this.db, accountId, id);
    if (!row) throw new AppError("API_KEY_NOT_FOUND");
    const environment = row.environment as KeyEnvironment;
    if (scope !== undefined && environment !== scope) throw outOfScope(scope, environment);
    return row;
  }

  async rename(accountId: string, id: string, name: string, scope?: KeyScope): Promise<ApiKey> {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > 100)
      throw validationError({ "body.name": "must be 1 to 100 characters" });
    const row = await this.#managedRow(accountId, id, scope);
    if (!(await repo.renameKey(this.db, accountId, id, trimmed))) throw new AppError("API_KEY_NOT_FOUND");
    this.#forget(row.key_hash);
    return this.get(accountId, id);
  }

  /** Revokes a key of this account (idempotent: revoking twice keeps the first time). */
  async revoke(accountId: string, id: string, scope?: KeyScope): Promise<ApiKey> {
    return this.#revokeRow(await this.#managedRow(accountId, id, scope));
  }

  /** Operator path (CLI): revoke by id without an account scope. */
  async revokeById(id: string): Promise<ApiKey> {
    const row = await repo.findKeyById(this.db, id);
    if (!row) throw new AppError("API_KEY_NOT_FOUND");
    return this.#revokeRow(row);
  }

  async #revokeRow(row: repo.ApiKeyRow): Promise<ApiKey> {
    await repo.revokeKey(this.db, row.id, isoNow(this.clock));
    this.#forget(row.key_hash);
    this.#notifyRevoked(row.id);
    await this.bus
      .publish(REVOKED_CHANNEL, { key_hash: row.key_hash, key_id: row.id })
      .catch((error) =>
        this.log.warn(
          { err: error, channel: REVOKED_CHANNEL, key_id: row.id },
          "could not announce a key revocation",
        ),
      );
    const fresh = await repo.findKeyById(this.db, row.id);
    return toApiKey(fresh ?? row);
  }

  #forget(keyHash: string): void {
    this.#cache.delete(keyHash);
  }

  /**
   * The hot path: the verified key for a secret if it is cached and still valid, `null` when the
   * store must be asked (then call `authenticate`). No promise, no I/O.
   */
  authenticateCached(secret: string): AuthenticatedKey | null {
    if (!looksLikeApiKey(secret) || secret.length > 200) return null;
    const now = this.clock.now();
    const version = this.externalChangeCounter();
    if (version !== this.#cacheStoreVersion) {
      // Another process wrote to the store (e.g. `crossbook keys revoke`): trust nothing cached.
      this.#cache.clear();
      this.#hashes.clear();
      this.#cacheStoreVersion = version;
      return null;
    }
    const hash = this.#hashes.get(secret);
    const cached = hash === undefined ? undefined : this.#cache.get(hash);
    if (!cached || cached.expiresAt <= now) return null;
    this.#usage.set(cached.value.key.id, now);
    return cached.value;
  }

  /** The key and account behind a presented secret, or undefined if unknown or revoked. */
  async authenticate(secret: string): Promise<AuthenticatedKey | undefined> {
    const cached = this.authenticateCached(secret);
    if (cached) return cached;
    if (!looksLikeApiKey(secret) || secret.length > 200) return undefined;
    const hash = sha256Hex(secret);
    const now = this.clock.now();
    const row = await repo.findKeyByHash(this.db, hash);
    if (!row || !constantTimeEqual(row.key_hash, hash) || row.revoked_at !== null) {
      this.#cache.delete(hash);
      return undefined;
    }
    const account = await this.accounts.get(row.account_id);
    if (!account) return undefined;
    const key = toApiKey(row);
    const value = { key, account, permissions: effectivePermissions(key.permissions) };
    if (this.#cache.size >= CACHE_MAX_ENTRIES) {
      this.#cache.clear();
      this.#hashes.clear();
    }
    this.#cache.set(hash, { value, expiresAt: now + CACHE_TTL_MS });
    this.#hashes.set(secret, hash);
    this.#usage.set(key.id, now);
    return value;
  }

  /** When this process last saw the key used, if that is not written yet (`last_used_at` lags a batch). */
  unwrittenUse(keyId: string): string | undefined {
    const ms = this.#usage.get(keyId);
    return ms === undefined ? undefined : isoFromMs(ms);
  }

  /** Writes the collected `last_used_at` values; called on a timer and at shutdown. */
  async flushUsage(): Promise<void> {
    if (this.#usage.size === 0) return;
    const batch = new Map([...this.#usage].map(([id, ms]) => [id, isoFromMs(ms)]));
    this.#usage.clear();
    await this.db.transaction().execute((trx) => repo.touchKeys(trx, batch));
  }
}
