/**
 * Runs once before the suite. Builds the server bundle, so the suites that spawn `crossbook` (the
 * CLI, crash and demo tests) run the code as it is now, not the last `npm install`'s build. Then says, in one line each, which optional suites will be skipped on this
 * machine and how to enable them, so a fresh machine with only Node passes `npm test` while CI
 * (CROSSBOOK_REQUIRE_SERVICES=1) fails loudly on anything missing.
 */
import { existsSync } from "node:fs";
import { buildServer } from "./scripts/build.mjs";

export const CHROMIUM_PATH = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium";

export default async function setup(): Promise<void> {
  await buildServer();
  const required = process.env["CROSSBOOK_REQUIRE_SERVICES"] === "1";
  const postgres = process.env["TEST_DATABASE_URL"] ?? process.env["DATABASE_URL"];
  const redis = process.env["TEST_REDIS_URL"] ?? process.env["REDIS_URL"];
  const missing: string[] = [];
  if (!postgres || !/^postgres(ql)?:\/\//.test(postgres)) {
    missing.push(
      "PostgreSQL suites skipped: set TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run them",
    );
  }
  if (!redis) missing.push("Redis suites skipped: set TEST_REDIS_URL=redis://127.0.0.1:6379 to run them");
  if (!existsSync(CHROMIUM_PATH)) {
    missing.push(
      `Browser tests skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`,
    );
  }
  if (missing.length === 0) return;
  if (required) {
    throw new Error(`CROSSBOOK_REQUIRE_SERVICES=1 but:\n  ${missing.join("\n  ")}`);
  }
  for (const line of missing) process.stdout.write(`${line}\n`);
}
