/**
 * The repos' contract on every store: the same calls give the same results on SQLite and
 * PostgreSQL (ids, timestamps as ISO text, integers as numbers, unique constraints, cascades).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as accountsRepo from "../../src/accounts/repo";
import * as keysRepo from "../../src/apikeys/repo";
import { migrate, type Store } from "../../src/infra/db/store";
import { STORE_BACKENDS } from "../support/backends";
import { openTestStore, type TestStore } from "../support/store";

describe.each(STORE_BACKENDS)("store contract on %s", (backend) => {
  let store: Store;
  let opened: TestStore;
  beforeAll(async () => {
    opened = await openTestStore(backend);
    store = opened.store;
  });
  afterAll(() => opened.close());

  const account = (id: string, email: string) => ({
    id,
    email,
    password_hash: "scrypt$x",
    tier: "free",
    plan: "standard",
    rate_limit_per_minute: null,
    agent_rate_limit_per_minute: null,
    ws_connections: null,
    markets_per_subscription: null,
    operator: 0,
    created_at: "2026-11-22T12:00:00.000Z",
    updated_at: "2026-11-22T12:00:00.000Z",
  });

  it("migrates idempotently", async () => {
    expect((await migrate(store)).applied).toEqual([]);
  });

  it("round-trips an account with integers as numbers and nulls as nulls", async () => {
    await accountsRepo.insertAccount(store.db, {
      ...account("acc_1", "a@x.io"),
      rate_limit_per_minute: 5000,
    });
    const row = await accountsRepo.findAccountById(store.db, "acc_1");
    expect(row).toEqual({ ...account("acc_1", "a@x.io"), rate_limit_per_minute: 5000 });
    expect(await accountsRepo.findAccountByEmail(store.db, "a@x.io")).toEqual(row);
    expect(await accountsRepo.findAccountById(store.db, "acc_missing")).toBeUndefined();
  });

  it("enforces unique emails and key hashes", async () => {
    await expect(accountsRepo.insertAccount(store.db, account("acc_2", "a@x.io"))).rejects.toThrow();
    const key = {
      id: "key_1",
      account_id: "acc_1",
      name: "k",
      type: "read_only",
      permissions: '["read"]',
      environment: "live",
      prefix: "cb_live_abcdef",
      key_hash: "h1",
      created_at: "2026-11-22T12:00:00.000Z",
      last_used_at: null,
      revoked_at: null,
    };
    await keysRepo.insertKey(store.db, key);
    await expect(keysRepo.insertKey(store.db, { ...key, id: "key_2" })).rejects.toThrow();
    expect(await keysRepo.countActiveKeys(store.db, "acc_1")).toBe(1);
  });

  it("revokes once, renames within the account only, and records use", async () => {
    expect(await keysRepo.revokeKey(store.db, "key_1", "2026-11-22T13:00:00.000Z")).toBe(true);
    expect(await keysRepo.revokeKey(store.db, "key_1", "2026-11-22T14:00:00.000Z")).toBe(false);
    expect((await keysRepo.findKeyById(store.db, "key_1"))?.revoked_at).toBe("2026-11-22T13:00:00.000Z");
    expect(await keysRepo.countActiveKeys(store.db, "acc_1")).toBe(0);
    expect(await keysRepo.renameKey(store.db, "acc_other", "key_1", "stolen")).toBe(false);
    expect(await keysRepo.renameKey(store.db, "acc_1", "key_1", "renamed")).toBe(true);
    await keysRepo.touchKeys(store.db, new Map([["key_1", "2026-11-22T15:00:00.000Z"]]));
    expect(await keysRepo.findKeyForAccount(store.db, "acc_1", "key_1")).toMatchObject({
      name: "renamed",
      last_used_at: "2026-11-22T15:00:00.000Z",
    });
    expect(await keysRepo.findKeyForAccount(store.db, "acc_other", "key_1")).toBeUndefined();
  });

  it("expires sessions and cleans them up", async () => {
    await accountsRepo.insertSession(store.db, {
      id: "ses_1",
      account_id: "acc_1",
      token_hash: "t1",
      created_at: "2026-11-22T12:00:00.000Z",
      expires_at: "2026-11-22T13:00:00.000Z",
      revoked_at: null,
    });
    expect((await accountsRepo.findSessionByHash(store.db, "t1"))?.id).toBe("ses_1");
    expect(await accountsRepo.deleteExpiredSessions(store.db, "2026-11-22T12:30:00.000Z")).toBe(0);
    expect(await accountsRepo.deleteExpiredSessions(store.db, "2026-11-22T14:00:00.000Z")).toBe(1);
  });

  it("rolls back a failed transaction as a whole", async () => {
    await expect(
      store.db.transaction().execute(async (trx) => {
        await accountsRepo.insertAccount(trx, account("acc_tx", "tx@x.io"));
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect(await accountsRepo.findAccountById(store.db, "acc_tx")).toBeUndefined();
  });
});
