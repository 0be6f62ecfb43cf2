/** The reconnect backoff the library's streams share (price stream, account stream). */

/**
 * How long to wait before reconnect attempt `attempt` (0 first): `reconnectDelayMs` (250) doubling
 * up to `maxReconnectDelayMs` (10,000), four times that after a connection-limit refusal, with
 * "equal jitter" (half fixed, half random) so clients dropped together do not return together.
 */
export function reconnectDelay(
  attempt: number,
  options: { reconnectDelayMs?: number; maxReconnectDelayMs?: number },
  limited: boolean,
): number {
  const base = options.reconnectDelayMs ?? 250;
  const max = options.maxReconnectDelayMs ?? 10_000;
  const step = Math.min(max, base * 2 ** attempt) * (limited ? 4 : 1);
  return step / 2 + Math.random() * (step / 2);
}
