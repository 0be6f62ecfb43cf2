#!/usr/bin/env node
// In the source tree the TypeScript CLI runs through tsx (no build step between editing and use);
// the published package, which ships only dist/ (built by `npm pack`), runs the compiled CLI.
import { existsSync } from "node:fs";

const source = new URL("../src/cli.ts", import.meta.url);
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  await import(source.href);
} else {
  await import(new URL("../dist/cli.js", import.meta.url).href);
}
