/** Waiting for an emitter's event in tests. */
import type { EventEmitter } from "node:events";

/** The next `event` the emitter emits whose value passes `test`; rejects after `ms`. */
export function waitFor<T>(
  emitter: EventEmitter,
  event: string,
  test: (value: T) => boolean = () => true,
  ms = 5_000,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${event} within ${ms} ms`)), ms);
    const listener = (value: T) => {
      if (!test(value)) return;
      clearTimeout(timer);
      emitter.off(event, listener);
      resolve(value);
    };
    emitter.on(event, listener);
  });
}
