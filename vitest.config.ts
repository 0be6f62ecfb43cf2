import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    // One line per optional suite this machine cannot run, and how to enable it.
    globalSetup: ["./vitest.global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Contract suites share one PostgreSQL and one Redis; each file isolates itself
    // (its own schema, its own key prefix), so files may run in parallel.
    pool: "forks",
  },
});
