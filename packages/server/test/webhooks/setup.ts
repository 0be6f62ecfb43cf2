/**
 * Shared set-up for the webhook suites: an app whose dispatcher sends through a recording stub
 * (answers chosen per test) and resolves hostnames through a fixed table, an account with a key,
 * and helpers to record events and register webhooks.
 */
import type { FastifyInstance } from "fastify";
import type { EventPayload, EventType } from "../../src/events/types";
import type { SendInput, SendOutcome } from "../../src/webhooks/dispatcher";
import { bearer, createKey, createTestApp, signup, type TestApp, type TestAppOptions } from "../support/app";

export interface Sent extends SendInput {
  at: number;
  json: { id: string; type: string; timestamp: string; data: Record<string, unknown> };
}

export interface Receiver {
  sent: Sent[];
  /** The answer to the next attempts (default 200). */
  answer: (input: SendInput) => SendOutcome | Promise<SendOutcome>;
}

export const OK: SendOutcome = {
  ok: true,
  status: 200,
  responseTimeMs: 3,
  error: null,
  retryAfterSeconds: null,
};
export const FAIL500: SendOutcome = {
  ok: false,
  status: 500,
  responseTimeMs: 3,
  error: "HTTP 500",
  retryAfterSeconds: null,
};

/** Public addresses for the hostnames tests use; anything else does not resolve. */
export const DNS: Record<string, Array<{ address: string; family: 4 | 6 }>> = {
  "hooks.example.com": [{ address: "93.184.216.34", family: 4 }],
  "other.example.com": [{ address: "93.184.216.35", family: 4 }],
  "internal.example.com": [{ address: "10.0.0.7", family: 4 }],
  "mixed.example.com": [
    { address: "93.184.216.36", family: 4 },
    { address: "127.0.0.1", family: 4 },
  ],
};

export async function fakeLookup(hostname: string) {
  const found = DNS[hostname];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
  return found;
}

export type WebhookTestApp = TestApp & { schema?: string; redisPrefix: string };

export async function webhooksApp(options: TestAppOptions = {}) {
  const receiver: Receiver = { sent: [], answer: () => OK };
  const t: WebhookTestApp = await createTestApp({
    ...options,
    webhooks: {
      lookup: fakeLookup,
      send: async (input) => {
        receiver.sent.push({ ...input, at: t.clock.now(), json: JSON.parse(input.body) });
        return receiver.answer(input);
      },
      jitter: 0,
      ...options.webhooks,
    },
  });
  const { session, accountId } = await signup(t.app);
  const key = (await createKey(t.app, session, { type: "trading", environment: "sandbox" })).key;
  return { t, receiver, key, session, accountId };
}

export async function register(app: FastifyInstance, key: string, body: Record<string, unknown>) {
  const response = await app.inject({
    method: "POST",
    url: "/v1/webhooks",
    headers: bearer(key),
    payload: body,
  });
  if (response.statusCode !== 200) throw new Error(`register: ${response.statusCode} ${response.body}`);
  return response.json().data as { id: string; secret?: string; status: string };
}

/** Records an event for an account, as the domains do (in a transaction of its own). */
export async function record<T extends EventType>(
  t: TestApp,
  type: T,
  data: EventPayload<T>,
  accountId: string | null,
  environment: "live" | "sandbox" | null = "sandbox",
) {
  return t.runtime.store.db
    .transaction()
    .execute((trx) => t.services.outbox.record(trx, { type, data, accountId, environment }));
}

export function orderCancelled(orderId: string): EventPayload<"order.cancelled"> {
  return {
    order_id: orderId,
    market_id: "kalshi:K",
    platform: "kalshi",
    side: "buy",
    amount: 1,
    filled_amount: 0,
    cancelled_at: "2026-11-22T12:00:00.000Z",
    reason: "user",
  };
}

export function deposit(id: string): EventPayload<"deposit.completed"> {
  return {
    transfer_id: id,
    amount: 5,
    currency: "USDC",
    balance: 10_005,
    environment: "sandbox",
    completed_at: "2026-11-22T12:00:00.000Z",
  };
}
