#!/usr/bin/env node
// Runs the compiled CLI with plain node. `npm install` builds it (the root `prepare` script);
// after editing the sources, `npm run build` rebuilds it.
import { existsSync } from "node:fs";

const built = new URL("../dist/main.js", import.meta.url);
if (!existsSync(built)) {
  process.stderr.write(
    "crossbook: the compiled CLI (packages/server/dist) is missing; run `npm run build`\n",
  );
  process.exit(1);
}
await import(built.href);
