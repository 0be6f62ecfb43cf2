#!/usr/bin/env node
// Runs the TypeScript CLI directly through tsx: no build step between `npm install` and use.
import { register } from "tsx/esm/api";

register();
await import("../src/cli.ts");
