import { defineConfig } from "vitest/config";

export default defineConfig({
  // Workspace packages (fees, fakes) export their TypeScript sources under this condition; their
  // default export is the compiled JavaScript that plain node runs.
  resolve: { conditions: ["crossbook-source"] },
  ssr: { resolve: { conditions: ["crossbook-source"], externalConditions: ["crossbook-source"] } },
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
