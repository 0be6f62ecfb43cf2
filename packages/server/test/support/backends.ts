/**
 * Which backends the contract suites run against. SQLite and the in-memory bus/limiter always;
 * PostgreSQL when TEST_DATABASE_URL (or a postgres DATABASE_URL) is set; Redis when TEST_REDIS_URL
 * (or REDIS_URL) is set. CI sets both and sets CROSSBOOK_REQUIRE_SERVICES=1 so a missing server
 * fails loudly instead of being skipped.
 */
import { randomBytes } from "node:crypto";

export const POSTGRES_URL = (() => {
  const url = process.env["TEST_DATABASE_URL"] ?? process.env["DATABASE_URL"];
  return url && /^postgres(ql)?:\/\//.test(url) ? url : undefined;
})();

export const REDIS_URL = process.env["TEST_REDIS_URL"] ?? process.env["REDIS_URL"] ?? undefined;

if (process.env["CROSSBOOK_REQUIRE_SERVICES"] === "1") {
  if (!POSTGRES_URL) throw new Error("CROSSBOOK_REQUIRE_SERVICES=1 but TEST_DATABASE_URL is not set");
  if (!REDIS_URL) throw new Error("CROSSBOOK_REQUIRE_SERVICES=1 but TEST_REDIS_URL is not set");
}

export type StoreBackend = "sqlite" | "postgres";
export type InfraBackend = "memory" | "redis";

export const STORE_BACKENDS: StoreBackend[] = POSTGRES_URL ? ["sqlite", "postgres"] : ["sqlite"];
export const INFRA_BACKENDS: InfraBackend[] = REDIS_URL ? ["memory", "redis"] : ["memory"];

/** A fresh name for a PostgreSQL schema or a Redis prefix, so test files never share state. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
}
