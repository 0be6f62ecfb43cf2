/**
 * Fastify gives every request a child logger bound to its request id. Creating a pino child is
 * work and garbage on every request, though most requests never log. This child is created on
 * first use instead: same output, paid only by requests that log.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Bindings, ChildLoggerOptions } from "pino";

type Method = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export class LazyChildLogger {
  #real: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions | undefined,
  ) {}

  get #logger(): FastifyBaseLogger {
    this.#real ??= this.parent.child(this.bindings, this.options);
    return this.#real;
  }

  get level(): string {
    return this.parent.level;
  }
  set level(value: string) {
    this.#logger.level = value;
  }

  #call(method: Method, args: unknown[]): void {
    // Skip building the child for levels that are off.
    const parent = this.parent as unknown as { isLevelEnabled?(level: string): boolean };
    if (method !== "silent" && parent.isLevelEnabled && !parent.isLevelEnabled(method)) return;
    (this.#logger[method] as (...a: unknown[]) => void)(...args);
  }

  fatal(...args: unknown[]) {
    this.#call("fatal", args);
  }
  error(...args: unknown[]) {
    this.#call("error", args);
  }
  warn(...args: unknown[]) {
    this.#call("warn", args);
  }
  info(...args: unknown[]) {
    this.#call("info", args);
  }
  debug(...args: unknown[]) {
    this.#call("debug", args);
  }
  trace(...args: unknown[]) {
    this.#call("trace", args);
  }
  silent(...args: unknown[]) {
    this.#call("silent", args);
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger.child(bindings, options);
  }
}

export function lazyChildLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
