#!/usr/bin/env node
// Runs the compiled CLI with plain node. In the source tree `npm install` builds dist/ (the root
// `prepare` script); the published package ships it.
import { existsSync } from "node:fs";

const built = new URL("../dist/cli.js", import.meta.url);
if (!existsSync(built)) {
  process.stderr.write("crossbook-agent: the compiled CLI (dist/) is missing; run `npm run build`\n");
  process.exit(1);
}
await import(built.href);
