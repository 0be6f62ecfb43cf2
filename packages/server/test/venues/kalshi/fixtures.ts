/** Loads the Kalshi payloads in test/fixtures/kalshi (written from VENUES.md §2, not captured). */
import { readFileSync } from "node:fs";

export function fixture<T = unknown>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../../fixtures/kalshi/${name}`, import.meta.url), "utf8")) as T;
}

/** A report callback that records what it was told. */
export function recorder() {
  const reports: Array<{ kind: string; detail: Record<string, unknown> }> = [];
  return {
    reports,
    report: (kind: string, detail: Record<string, unknown>) => {
      reports.push({ kind, detail });
    },
    kinds: () => reports.map((r) => r.kind),
  };
}
