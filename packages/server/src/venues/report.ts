/**
 * Venue data surprises (an unknown enum value, a missing optional field, a market that fails to
 * parse) are logged once per kind, not once per message: a renamed field would otherwise flood the
 * log at feed rate. Counts are kept so `/v1/venues` and metrics can show how often it happens.
 */
import type { Logger } from "../infra/log";

export interface DataReporter {
  report(kind: string, detail: Record<string, unknown>): void;
  counts(): Record<string, number>;
}

export function createDataReporter(venue: string, log: Logger): DataReporter {
  const counts = new Map<string, number>();
  return {
    report(kind, detail) {
      const seen = counts.get(kind) ?? 0;
      counts.set(kind, seen + 1);
      if (seen === 0)
        log.warn(
          { venue, kind, ...detail },
          `unexpected ${venue} data (${kind}); further ones of this kind are counted, not logged`,
        );
    },
    counts: () => Object.fromEntries(counts),
  };
}
