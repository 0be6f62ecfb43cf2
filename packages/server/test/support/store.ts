/**
 * A migrated store on one backend for suites below the app (store contract, outbox, candles): an
 * in-memory SQLite database, or a fresh PostgreSQL schema that `close()` drops. `migrateTo` stops
 * at that migration (a migration's own test).
 */
import { testConfig } from "../../src/config";
import { dropSchema, migrate, openStore, type Store } from "../../src/infra/db/store";
import { POSTGRES_URL, type StoreBackend, uniqueName } from "./backends";

export interface TestStore {
  store: Store;
  close(): Promise<void>;
}

export async function openTestStore(
  backend: StoreBackend,
  options: { poolSize?: number; migrateTo?: string } = {},
): Promise<TestStore> {
  const schema = uniqueName("t");
  const store =
    backend === "postgres"
      ? await openStore(
          { kind: "postgres", url: POSTGRES_URL! },
          { schema, ...(options.poolSize ? { poolSize: options.poolSize } : {}) },
        )
      : await openStore(testConfig().database);
  await migrate(store, options.migrateTo ? { to: options.migrateTo } : {});
  return {
    store,
    async close() {
      await store.close();
      if (backend === "postgres") await dropSchema(POSTGRES_URL!, schema);
    },
  };
}
