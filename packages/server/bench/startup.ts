/**
 * bench/startup: time from process start to a ready `/readyz` for `crossbook serve` as built
 * (plain node running dist/main.js) against the same sources run through tsx, which is how
 * production started before the build step. Rounds alternate the two so machine noise hits both;
 * the figure is the ratio of medians, built ÷ source (lower is better; target < 1).
 *
 *   npm run build && npm run bench:startup [-- --rounds 7]
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { arg } from "./support/paired";

const server = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const built = path.join(server, "dist", "main.js");
const source = path.join(server, "src", "main.ts");
const rounds = arg("rounds", 7);

if (!fs.existsSync(built)) {
  process.stderr.write(`bench/startup: ${built} is missing; run \`npm run build\` first\n`);
  process.exit(1);
}

/** Milliseconds from spawn to the first 200 from /readyz. */
async function startOnce(args: string[]): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-startup-"));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const env = {
    PATH: process.env["PATH"],
    DATABASE_URL: `sqlite:${path.join(dir, "crossbook.db")}`,
    CROSSBOOK_DATA_DIR: dir,
    PORT: String(port),
    LOG_LEVEL: "warn",
    // Nothing listens here: the venue pollers fail quietly and the bench never touches the internet.
    POLYMARKET_GAMMA_URL: "http://127.0.0.1:9",
    POLYMARKET_CLOB_URL: "http://127.0.0.1:9",
    POLYMARKET_DATA_URL: "http://127.0.0.1:9",
    POLYMARKET_WS_URL: "ws://127.0.0.1:9",
    KALSHI_API_URL: "http://127.0.0.1:9",
    KALSHI_WS_URL: "ws://127.0.0.1:9",
  };
  const started = performance.now();
  const child = spawn(process.execPath, [...args, "serve"], { env, stdio: "ignore" });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`crossbook exited with ${child.exitCode}`);
      try {
        const response = await fetch(`http://127.0.0.1:${port}/readyz`);
        if (response.status === 200) return performance.now() - started;
      } catch {
        // not listening yet
      }
      if (performance.now() - started > 30_000) throw new Error("crossbook did not become ready in 30 s");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const builtTimes: number[] = [];
const sourceTimes: number[] = [];
for (let round = 0; round < rounds; round += 1) {
  sourceTimes.push(await startOnce(["--import", "tsx", source]));
  builtTimes.push(await startOnce([built]));
  process.stderr.write(
    `round ${round + 1}/${rounds}: source ${sourceTimes.at(-1)!.toFixed(0)} ms, built ${builtTimes.at(-1)!.toFixed(0)} ms\n`,
  );
}
const ratio = median(builtTimes) / median(sourceTimes);
console.log(
  `bench/startup: process start to /readyz: built ${median(builtTimes).toFixed(0)} ms, ` +
    `source through tsx ${median(sourceTimes).toFixed(0)} ms (medians of ${rounds}); ratio ${ratio.toFixed(2)} (target < 1)`,
);
