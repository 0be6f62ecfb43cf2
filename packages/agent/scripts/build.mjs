#!/usr/bin/env node
/**
 * Builds dist/ for the published package.
 *
 * The fee rules live in the workspace package @crossbook/fees (packages/fees), TypeScript that the
 * server imports as source. The published agent cannot depend on an unpublished package, so its
 * tarball bundles a compiled copy (`bundleDependencies`). npm does not bundle a workspace link,
 * so the copy is compiled into this package's own node_modules/@crossbook/fees, where the agent's
 * own compile also resolves it (declarations, not sources outside src/).
 *
 *   node scripts/build.mjs           build dist/ (the compiled copy is removed afterwards)
 *   node scripts/build.mjs --bundle  build dist/ and keep the copy for `npm pack` (prepack)
 *   node scripts/build.mjs --clean   remove the copy (postpack)
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const agentDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const feesDir = path.resolve(agentDir, "../fees");
const bundled = path.join(agentDir, "node_modules", "@crossbook", "fees");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const mode = process.argv[2];

function removeCopy() {
  fs.rmSync(bundled, { recursive: true, force: true });
  const scope = path.dirname(bundled);
  if (fs.existsSync(scope) && fs.readdirSync(scope).length === 0) fs.rmdirSync(scope);
  const modules = path.dirname(scope);
  if (fs.existsSync(modules) && fs.readdirSync(modules).length === 0) fs.rmdirSync(modules);
}

function compileCopy() {
  removeCopy();
  const source = JSON.parse(fs.readFileSync(path.join(feesDir, "package.json"), "utf8"));
  execFileSync(
    process.execPath,
    [tsc, "-p", path.join(feesDir, "tsconfig.build.json"), "--outDir", path.join(bundled, "dist")],
    { stdio: "inherit" },
  );
  const manifest = {
    name: source.name,
    version: source.version,
    description: source.description,
    license: source.license,
    type: "module",
    exports: { ".": { types: "./dist/index.d.ts", default: "./dist/index.js" } },
    files: ["dist", "README.md"],
  };
  fs.writeFileSync(path.join(bundled, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  fs.copyFileSync(path.join(feesDir, "README.md"), path.join(bundled, "README.md"));
}

if (mode === "--clean") {
  removeCopy();
} else {
  try {
    compileCopy();
    fs.rmSync(path.join(agentDir, "dist"), { recursive: true, force: true });
    execFileSync(process.execPath, [tsc, "-p", path.join(agentDir, "tsconfig.build.json")], {
      stdio: "inherit",
      cwd: agentDir,
    });
  } catch (error) {
    // A copy left behind would shadow the workspace sources for this package.
    removeCopy();
    throw error;
  }
  if (mode !== "--bundle") removeCopy();
}
