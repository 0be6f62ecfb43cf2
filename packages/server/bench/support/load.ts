/**
 * The children of the stream benches (bench/stream, bench/account-stream): the server under test,
 * which generates its own load, and the process that holds the WebSocket clients. Each answers the
 * coordinator (support/coordinator.ts) over IPC:
 *
 *   server   "load" {seconds}: generate for that long, then report "loaded" (a `Loaded`);
 *            "mark": open the measured window (counts and CPU from here);
 *   clients  "connect" {…the server's "ready"}: open the connections, then "connected";
 *            "reset": zero the counts (the measured window opens); "report": the counts and CPU.
 */

/** A message between the coordinator and a child. */
export type Message = Record<string, unknown> & { cmd: string };

/** CPU seconds (user + system) this process used since `start`. */
export function cpuSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

/** What a server child reports when its load ends. */
export interface Loaded {
  /** CPU seconds the server used while measured. */
  cpu: number;
  /** From the mark to the end of the load. */
  measuredSeconds: number;
  /** Produced per second while measured (the offered rate if the server kept up). */
  perSecond: number;
  /** Produced in all, warm-up included (step numbers 0 to sent - 1). */
  sent: number;
  /** Sampled lags (ms) in the measured window: how long after it was due each one was produced. */
  lags: number[];
}

const LAG_SAMPLE_EVERY = 16;

/**
 * The load generator in a server child: `rate` updates (or events) a second in 10 ms bursts, catching
 * up when a timer fires late (or a burst ran long) so the offered load does not drop when the server
 * is busy, at most 100 ms of them at once. The generator shares the server's event loop, as a venue
 * feed does, and `emit` may be asynchronous (a transaction): the steps of a burst are produced one
 * after the other, each once the one before it is done, and the next burst starts when this one
 * ended. A server that cannot keep up therefore produces fewer than offered and each one late: both
 * are measured (the produced rate and the lag, due -> produced), so a server never looks fast by
 * taking only part of the load.
 */
export class LoadGenerator {
  /** Steps produced so far. */
  sent = 0;
  private measuring = false;
  private sentAtMark = 0;
  private markedAt = 0;
  private cpuAtMark = process.cpuUsage();
  private readonly lags: number[] = [];

  constructor(private readonly rate: number) {}

  /** Produces steps 0, 1, … through `emit` for `seconds`; resolves with the number produced. */
  run(emit: (step: number) => void | Promise<void>, seconds: number): Promise<number> {
    const rate = this.rate;
    const started = performance.now();
    const msPerStep = 1000 / rate;
    const burst = async (due: number) => {
      while (this.sent < due) {
        const step = this.sent++;
        if (this.measuring && step % LAG_SAMPLE_EVERY === 0) {
          this.lags.push(performance.now() - (started + step * msPerStep));
        }
        const pending = emit(step);
        if (pending) await pending;
      }
    };
    return new Promise((resolve, reject) => {
      let busy = false;
      const timer = setInterval(() => {
        if (busy) return;
        const elapsed = (performance.now() - started) / 1000;
        if (elapsed >= seconds) {
          clearInterval(timer);
          resolve(this.sent);
          return;
        }
        const due = Math.min(Math.floor(elapsed * rate), this.sent + rate / 10);
        busy = true;
        burst(due).then(
          () => {
            busy = false;
          },
          (error: unknown) => {
            clearInterval(timer);
            reject(error);
          },
        );
      }, 10);
    });
  }

  /** Opens the measured window. */
  mark(): void {
    this.measuring = true;
    this.sentAtMark = this.sent;
    this.markedAt = performance.now();
    this.cpuAtMark = process.cpuUsage();
  }

  loaded(): Loaded {
    const seconds = (performance.now() - this.markedAt) / 1000;
    return {
      cpu: cpuSince(this.cpuAtMark),
      measuredSeconds: seconds,
      perSecond: (this.sent - this.sentAtMark) / seconds,
      sent: this.sent,
      lags: this.lags,
    };
  }
}

/** In a server child: answers the coordinator's "load" and "mark" with `load`, producing through `emit`. */
export function serveLoad(load: LoadGenerator, emit: (step: number) => void | Promise<void>): void {
  process.on("message", async (message: Message) => {
    if (message.cmd === "load") {
      await load.run(emit, message["seconds"] as number);
      process.send!({ cmd: "loaded", ...load.loaded() });
    } else if (message.cmd === "mark") {
      load.mark();
    }
  });
}

/** What the clients child counts in the measured window (a bench may count more: it is reported too). */
export interface ClientStats {
  /** Frames received (all connections). */
  frames: number;
  /** Sampled latencies (ms). */
  latencies: number[];
}

/**
 * In the clients child: answers "connect" with `connect` (given the server's "ready" message),
 * "reset" by zeroing `frames` and `latencies`, and "report" with every field of `stats` and the CPU
 * seconds used since the reset; then tells the coordinator it has started.
 */
export function serveClients<Stats extends ClientStats>(
  stats: Stats,
  connect: (ready: Message) => Promise<void>,
): void {
  let cpuStart = process.cpuUsage();
  process.on("message", async (message: Message) => {
    if (message.cmd === "connect") {
      await connect(message);
      process.send!({ cmd: "connected" });
    } else if (message.cmd === "reset") {
      stats.frames = 0;
      stats.latencies = [];
      cpuStart = process.cpuUsage();
    } else if (message.cmd === "report") {
      process.send!({ ...stats, cmd: "report", cpu: cpuSince(cpuStart) });
    }
  });
  process.send!({ cmd: "started" });
}

/** Opens connections 0 to `count` - 1 with `open`, 100 at a time. */
export async function openInBatches(count: number, open: (index: number) => Promise<void>): Promise<void> {
  const batch = 100;
  for (let i = 0; i < count; i += batch) {
    await Promise.all(Array.from({ length: Math.min(batch, count - i) }, (_, j) => open(i + j)));
  }
}
