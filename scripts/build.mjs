#!/usr/bin/env node
/**
 * Compiles the packages to JavaScript so production runs plain `node`, no TypeScript compiler.
 * `npm install` runs it (the root `prepare` script); `npm run build` runs it by hand.
 *
 *   packages/fees/dist     tsc: the fee rules, for the agent's compiled output to import
 *   packages/server/dist   esbuild: the service and its CLI as one ES module; npm dependencies stay
 *                          external, the workspace packages (fees, fakes) are bundled from source
 *   packages/agent/dist    tsc (the agent's own build): the library and `crossbook-agent`
 *
 *   node scripts/build.mjs            all three
 *   node scripts/build.mjs --server   the server bundle only (a second or so; the test setup runs it
 *                                     so the suites that spawn `crossbook` run the current code)
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const tsc = require.resolve("typescript/bin/tsc");

/** The server's npm dependencies: imported at run time from node_modules, never bundled. */
function externalDependencies() {
  const external = new Set();
  for (const name of ["server", "fakes", "fees"]) {
    const manifest = JSON.parse(fs.readFileSync(path.join(repo, "packages", name, "package.json"), "utf8"));
    for (const dependency of Object.keys(manifest.dependencies ?? {})) {
      if (!dependency.startsWith("@crossbook/")) external.add(dependency);
    }
  }
  return [...external].flatMap((name) => [name, `${name}/*`]);
}

export async function buildServer() {
  const esbuild = await import("esbuild");
  const server = path.join(repo, "packages", "server");
  const dist = path.join(server, "dist");
  // Built beside dist/ and moved in file by file (a rename replaces a file atomically): a test run
  // starting the CLI while another run rebuilds never finds dist/ half written or gone.
  const staging = fs.mkdtempSync(path.join(server, ".dist-"));
  try {
    await bundle(esbuild, server, staging);
    fs.mkdirSync(dist, { recursive: true });
    for (const file of ["checkpoint-worker.mjs", "main.js.map", "main.js"]) {
      fs.renameSync(path.join(staging, file), path.join(dist, file));
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** How the server is bundled: shared with scripts/bench.mjs, so benches measure what ships. */
export const SERVER_BUNDLE_OPTIONS = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Workspace packages export their TypeScript sources under this condition.
  conditions: ["crossbook-source"],
  logLevel: "warning",
};

/** The checkpoint thread is started from a file next to the module that starts it: copy it there. */
export function copyCheckpointWorker(outDir) {
  fs.copyFileSync(
    path.join(repo, "packages", "server", "src", "infra", "db", "checkpoint-worker.mjs"),
    path.join(outDir, "checkpoint-worker.mjs"),
  );
}

async function bundle(esbuild, server, staging) {
  await esbuild.build({
    ...SERVER_BUNDLE_OPTIONS,
    entryPoints: [path.join(server, "src", "main.ts")],
    outfile: path.join(staging, "main.js"),
    external: externalDependencies(),
    sourcemap: "linked",
  });
  copyCheckpointWorker(staging);
}

function buildFees() {
  const fees = path.join(repo, "packages", "fees");
  fs.rmSync(path.join(fees, "dist"), { recursive: true, force: true });
  execFileSync(process.execPath, [tsc, "-p", path.join(fees, "tsconfig.build.json")], { stdio: "inherit" });
}

function buildAgent() {
  execFileSync(process.execPath, [path.join(repo, "packages", "agent", "scripts", "build.mjs")], {
    stdio: "inherit",
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  if (process.argv.includes("--server")) {
    await buildServer();
  } else {
    buildFees();
    await buildServer();
    buildAgent();
  }
  process.stderr.write(`crossbook: built in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}
