/**
 * A migrated store on one backend for suites below the app (store contract, outbox, candles): an
 * in-memory SQLite database, or a fresh PostgreSQL schema that `close()` drops.
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
  options: { poolSize?: number } = {},
): Promise<TestStore> {
  const schema = uniqueName("t");
  const store =
    backend === "postgres"
      ? await openStore({ kind: "postgres", url: POSTGRES_URL! }, { schema, ...options })
      : await openStore(testConfig().database);
  await migrate(store);
  return {
    store,
    async close() {
      await store.close();
      if (backend === "postgres") await dropSchema(POSTGRES_URL!, schema);
    },
  };
}
