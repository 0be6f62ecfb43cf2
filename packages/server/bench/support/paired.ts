/**
 * Paired HTTP load runs for the benches that compare a crossbook route with a bare Fastify route
 * returning the same bytes. Each server runs in its own child process and only one is under load
 * at a time, so the load generator (this process) and the loaded server have the machine's two
 * cores. Runs alternate bare/full so each pair sees the same machine load; the median of the
 * pairs' ratios is the figure (robust to a noisy neighbour in one run).
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { arg, loaderArgs } from "./child";

/** Re-exported for the benches that take their arguments from here. */
export { arg };

export interface Ready {
  url: string;
  headers: Record<string, string>;
  /** A sample response body (the bare server answers with these bytes). */
  body: string;
  /** POST benches: the request bodies sent in turn (the bare server echoes them). */
  requestBodies?: string[];
}

/** In a child: print where the server is, for the parent to read. */
export function announce(ready: Ready): void {
  process.stdout.write(`${JSON.stringify(ready)}\n`);
}

/**
 * In a child started with `like`: the full server's sample (its body and request bodies). It
 * travels in a file: a listing's body (~100 KB and more) is past what an environment variable holds.
 */
export function likeFromParent(): Pick<Ready, "body" | "requestBodies"> {
  const file = process.env["BENCH_LIKE_FILE"];
  if (!file) return { body: "{}" };
  return JSON.parse(fs.readFileSync(file, "utf8")) as Pick<Ready, "body" | "requestBodies">;
}

/**
 * Child mode `bare`: a plain Fastify route at `route` answering the full server's body as JSON;
 * with `post`, a POST route that parses the JSON body and echoes it back.
 */
export async function serveBare(route: string, options: { post?: boolean } = {}): Promise<void> {
  const { body, requestBodies } = likeFromParent();
  const Fastify = (await import("fastify")).default;
  const app = Fastify({ logger: false });
  if (options.post) app.post(route, async (request) => request.body);
  else
    app.get(route, async (_request, reply) =>
      reply.header("content-type", "application/json; charset=utf-8").send(body),
    );
  await app.listen({ host: "127.0.0.1", port: 0 });
  const port = (app.server.address() as { port: number }).port;
  announce({
    url: `http://127.0.0.1:${port}${route}`,
    headers: {},
    body,
    ...(requestBodies ? { requestBodies } : {}),
  });
}

/**
 * Runs the bench script as a server child (`--child <mode>`); resolves with what it announces. With
 * `like`, the child can read that sample (`likeFromParent`), to answer the same bytes.
 */
export async function startChild(
  script: string,
  mode: string,
  like?: Ready,
): Promise<{ child: ChildProcess; ready: Ready }> {
  let likeFile: string | undefined;
  if (like) {
    likeFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cb-bench-")), "like.json");
    fs.writeFileSync(likeFile, JSON.stringify({ body: like.body, requestBodies: like.requestBodies }));
  }
  try {
    const child = spawn(process.execPath, [...loaderArgs(script), script, "--child", mode], {
      env: { ...process.env, ...(likeFile ? { BENCH_LIKE_FILE: likeFile } : {}) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const ready = await new Promise<Ready>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (chunk) => {
        out += chunk;
        // A large announcement arrives in several chunks: only a whole line is parsed.
        const line = out
          .split("\n")
          .slice(0, -1)
          .find((l) => l.startsWith("{"));
        if (line) resolve(JSON.parse(line));
      });
      child.on("exit", (code) => reject(new Error(`${mode} server exited with ${code}`)));
    });
    return { child, ready };
  } finally {
    if (likeFile) fs.rmSync(path.dirname(likeFile), { recursive: true, force: true });
  }
}

async function load(ready: Ready, duration: number, connections: number): Promise<number> {
  const result = await autocannon({
    url: ready.url,
    headers: ready.headers,
    duration,
    connections,
    pipelining: 1,
    ...(ready.requestBodies
      ? {
          requests: ready.requestBodies.map((body) => ({
            method: "POST" as const,
            body,
            headers: { ...ready.headers, "content-type": "application/json" },
          })),
        }
      : {}),
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`load run had ${result.non2xx} non-2xx responses and ${result.errors} errors`);
  }
  return result.requests.average;
}

export interface PairedOptions {
  /** The bench script itself (children run it with `--child bare|full`). */
  script: string;
  name: string;
  /** What the full-stack route is, for the report. */
  label: string;
  target: number;
}

export async function runPaired(options: PairedOptions): Promise<void> {
  const duration = arg("duration", 5);
  const connections = arg("connections", 50);
  const rounds = arg("rounds", 5);
  const full = await startChild(options.script, "full");
  const bare = await startChild(options.script, "bare", full.ready);
  try {
    // Warm-up: the full stack has more code for V8 to optimize; give both time to reach steady state.
    await load(full.ready, 6, connections);
    await load(bare.ready, 3, connections);
    const ratios: number[] = [];
    const fullRates: number[] = [];
    const bareRates: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      const bareRps = await load(bare.ready, duration, connections);
      const fullRps = await load(full.ready, duration, connections);
      ratios.push(fullRps / bareRps);
      fullRates.push(fullRps);
      bareRates.push(bareRps);
      console.log(
        `round ${round}: bare ${bareRps.toFixed(0)} req/s, full stack ${fullRps.toFixed(0)} req/s, ratio ${(fullRps / bareRps).toFixed(3)}`,
      );
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const ratio = median(ratios);
    const name = options.name.padEnd(12);
    console.log(
      `response body: ${full.ready.body.length} bytes, ${connections} connections, ${duration} s per run`,
    );
    console.log(`${name} ${options.label}: ${median(fullRates).toFixed(0)} req/s (median)`);
    console.log(`${name} bare Fastify, same bytes: ${median(bareRates).toFixed(0)} req/s (median)`);
    console.log(
      `${name} ratio ${ratio.toFixed(3)} (median of ${rounds} paired runs; target >= ${options.target}) ${ratio >= options.target ? "PASS" : "BELOW TARGET"}`,
    );
  } finally {
    await Promise.all([stop(full.child), stop(bare.child)]);
  }
}

/** Stops a server child: SIGTERM (it removes its temp database on exit), SIGKILL if it lingers. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}
