/**
 * The coordinator of the stream benches (bench/stream, bench/account-stream): one run forks the
 * bench's own file as the server under test (`--child crossbook|baseline`) and as the clients
 * (`--child clients`), and drives them through the measured window (support/load.ts has the
 * children's side; support/compare.ts runs the two sides in pairs).
 */
import { type ChildProcess, fork } from "node:child_process";
import { loaderArgs } from "./child";
import type { ClientStats, Loaded, Message } from "./load";

/** The two servers a stream bench compares. */
export type Side = "crossbook" | "baseline";

/** Where a bench's children come from: its own file, forked with these node flags. */
export interface Children {
  /** The bench script itself (children run it with `--child <role>`). */
  script: string;
  /** Where `BENCH_PROFILE=<role>` writes that child's CPU profile. */
  profileDir: string;
  nodeFlags?: string[];
}

/** Forks the bench's file as the child `role`, with the bench's arguments. */
function forkChild(children: Children, role: string): ChildProcess {
  const { script, profileDir, nodeFlags = [] } = children;
  return fork(script, ["--child", role, ...process.argv.slice(2)], {
    execArgv: [
      ...(process.env["BENCH_PROFILE"] === role ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []),
      ...nodeFlags,
      ...loaderArgs(script),
    ],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

/**
 * In a forked child (`--child <role>`): runs that role's function (an "exit" from the coordinator
 * ends the child) and returns true. In the coordinator: false.
 */
export async function runChild(roles: Record<Side | "clients", () => unknown>): Promise<boolean> {
  const at = process.argv.indexOf("--child");
  if (at < 0) return false;
  process.on("message", (message: Message) => {
    if (message.cmd === "exit") process.exit(0);
  });
  await roles[process.argv[at + 1] as Side | "clients"]();
  return true;
}

/** The next message `cmd` from `child`. */
function nextMessage(child: ChildProcess, cmd: string): Promise<Message> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: Message) => {
      if (message.cmd !== cmd) return;
      child.off("message", onMessage);
      resolve(message);
    };
    child.on("message", onMessage);
    child.once("exit", (code) => reject(new Error(`child exited with ${code} while waiting for ${cmd}`)));
  });
}

/** A run in progress, as `withConnectedClients` hands it to the bench once the clients are connected. */
export interface Run {
  /** Sends `cmd` to the server child; resolves with its answer (a message with the same `cmd`). */
  askServer(cmd: string): Promise<Message>;
  /** The measured window (`measureWindow`): load, warm-up, window, the clients' report. */
  measure<Report extends ClientStats>(
    warmupSeconds: number,
    seconds: number,
  ): Promise<MeasuredWindow<Report>>;
}

/**
 * One run of `side`: forks the server child and the clients child; once the server is ready, the
 * clients connect to it (their "connect" carries the server's "ready" message, and they answer
 * "connected"), then `body` measures. The children are ended afterwards, whatever happened.
 */
export async function withConnectedClients<Result>(
  children: Children,
  side: Side,
  body: (run: Run) => Promise<Result>,
): Promise<Result> {
  const server = forkChild(children, side);
  const clients = forkChild(children, "clients");
  try {
    const ready = await nextMessage(server, "ready");
    await nextMessage(clients, "started");
    const connected = nextMessage(clients, "connected");
    clients.send({ ...ready, cmd: "connect" });
    await connected;
    return await body({
      askServer: (cmd) => {
        const answer = nextMessage(server, cmd);
        server.send({ cmd });
        return answer;
      },
      measure: (warmupSeconds, seconds) => measureWindow(server, clients, warmupSeconds, seconds),
    });
  } finally {
    await stopChildren(server, clients);
  }
}

/** What every run measures in its window. */
export interface WindowFigures {
  /** Latency (ms) of the messages the clients sampled. */
  p50: number;
  p99: number;
  /** How late the load was produced (ms): the generator waits for a busy event loop. */
  lagP50: number;
  lagP99: number;
  /** Share of one core the server (over its measured seconds) and the clients used while measured. */
  serverCpu: number;
  clientCpu: number;
}

/** The measured window of a run, as the server and the clients reported it. */
export interface MeasuredWindow<Report extends ClientStats> {
  loaded: Loaded;
  /** The clients' report: their counts, and `cpu` seconds used in the window. */
  report: Report & { cpu: number };
  /** From the mark to the clients' report. */
  seconds: number;
  figures: WindowFigures;
}

/**
 * The measured window, once the clients are connected: the server generates its load for
 * `warmupSeconds + seconds`; after the warm-up the clients zero their counts and the server marks
 * the start of the window; when the load ends, half a second more lets what is in flight arrive (it
 * still counts against the window it was sent in) before the clients report.
 */
async function measureWindow<Report extends ClientStats>(
  server: ChildProcess,
  clients: ChildProcess,
  warmupSeconds: number,
  seconds: number,
): Promise<MeasuredWindow<Report>> {
  const loadEnded = nextMessage(server, "loaded");
  server.send({ cmd: "load", seconds: warmupSeconds + seconds });
  await new Promise((resolve) => setTimeout(resolve, warmupSeconds * 1000));
  clients.send({ cmd: "reset" });
  server.send({ cmd: "mark" });
  const measuredFrom = performance.now();
  const loaded = (await loadEnded) as unknown as Loaded;
  await new Promise((resolve) => setTimeout(resolve, 500));
  const reported = nextMessage(clients, "report");
  clients.send({ cmd: "report" });
  const report = (await reported) as unknown as Report & { cpu: number };
  const windowSeconds = (performance.now() - measuredFrom) / 1000;
  const latencies = ascending(report.latencies);
  const lags = ascending(loaded.lags);
  return {
    loaded,
    report,
    seconds: windowSeconds,
    figures: {
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      lagP50: percentile(lags, 0.5),
      lagP99: percentile(lags, 0.99),
      serverCpu: loaded.cpu / loaded.measuredSeconds,
      clientCpu: report.cpu / windowSeconds,
    },
  };
}

/**
 * Ends a run's children: a clean exit first (a profiled child writes its profile on exit; a crossbook
 * child removes its store's folder), then make sure.
 */
async function stopChildren(...children: ChildProcess[]): Promise<void> {
  for (const child of children) if (child.connected) child.send({ cmd: "exit" });
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  for (const child of children) child.kill("SIGKILL");
}

const ascending = (values: number[]) => [...values].sort((a, b) => a - b);

/** The `p` quantile of ascending `sorted` (NaN if empty). */
const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
