#!/usr/bin/env node
/**
 * Runs a server bench as production runs the service: built JavaScript under plain `node`, not
 * TypeScript through tsx. tsx compiles with esbuild's keepNames, which wraps every named closure in
 * a `__name` call; the shipped bundle (scripts/build.mjs) has none, so a bench run through tsx
 * measures a cost users never pay.
 *
 * The bench file is bundled with the options of the shipped bundle (workspace packages from source,
 * npm packages left to node_modules) into packages/server/.bench-build/, where the server's own
 * node_modules resolve, and run from there; its children run the same built file. The folder is
 * removed when the bench ends.
 *
 *   node scripts/bench.mjs [node flags] <bench.ts> [bench arguments]
 *   e.g. node scripts/bench.mjs --expose-gc packages/server/bench/ingest.ts --frames 100000
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { copyCheckpointWorker, SERVER_BUNDLE_OPTIONS } from "./build.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const server = path.join(repo, "packages", "server");

const argv = process.argv.slice(2);
const at = argv.findIndex((a) => !a.startsWith("-"));
if (at < 0) {
  console.error("usage: node scripts/bench.mjs [node flags] <bench.ts> [bench arguments]");
  process.exit(2);
}
const nodeFlags = argv.slice(0, at);
const entry = path.resolve(argv[at]);
const benchArgs = argv.slice(at + 1);

/** Every installed npm package (root and the server's own node_modules): loaded at run time, never bundled. */
function installedPackages() {
  const names = [];
  for (const dir of [path.join(repo, "node_modules"), path.join(server, "node_modules")]) {
    if (!fs.existsSync(dir)) continue;
    for (const name of fs.readdirSync(dir)) {
      if (name.startsWith(".") || name === "@crossbook") continue;
      if (name.startsWith("@"))
        for (const sub of fs.readdirSync(path.join(dir, name))) names.push(`${name}/${sub}`);
      else names.push(name);
    }
  }
  return [...new Set(names)].flatMap((name) => [name, `${name}/*`]);
}

const esbuild = await import("esbuild");
fs.mkdirSync(path.join(server, ".bench-build"), { recursive: true });
const out = fs.mkdtempSync(path.join(server, ".bench-build", `${path.basename(entry, ".ts")}-`));
const cleanUp = () => fs.rmSync(out, { recursive: true, force: true });
try {
  await esbuild.build({
    ...SERVER_BUNDLE_OPTIONS,
    entryPoints: [entry],
    outfile: path.join(out, "bench.mjs"),
    // Every npm package, the bench tools included (the shipped bundle names only its dependencies).
    external: installedPackages(),
    // Bundled CommonJS helpers may call require(); an ES module has none of its own.
    banner: {
      js: "import { createRequire as __benchRequire } from 'node:module'; const require = __benchRequire(import.meta.url);",
    },
  });
  copyCheckpointWorker(out);
} catch (error) {
  cleanUp();
  throw error;
}

const child = spawn(process.execPath, [...nodeFlags, path.join(out, "bench.mjs"), ...benchArgs], {
  stdio: "inherit",
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  cleanUp();
  process.exit(code ?? (signal ? 1 : 0));
});
