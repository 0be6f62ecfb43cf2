/** Waiting in tests for something another process, socket or timer brings about. */

export interface UntilOptions {
  /** Give up after this long (default 15 s). */
  timeoutMs?: number;
  /** Ask again this often (default 20 ms). */
  everyMs?: number;
  /** What is awaited, for the timeout's message (a function: read when it times out). */
  what?: string | (() => string);
}

/** Resolves once `condition` holds; throws when it still does not after `timeoutMs`. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  { timeoutMs = 15_000, everyMs = 20, what }: UntilOptions = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) {
      const label = typeof what === "function" ? what() : what;
      throw new Error(label ? `timed out waiting for ${label}` : "timed out");
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
