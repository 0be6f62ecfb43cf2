/**
 * Receiving crossbook's webhooks safely: the signature (spec 6.3) recomputed and compared in
 * constant time, stale timestamps refused (replays), duplicate deliveries recognised by their id,
 * and a ready-made `node:http` handler that answers 401 for a bad signature and 2xx fast.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/** A delivered event: `{id, type, timestamp, data}` (spec 6.2). */
export interface WebhookEvent<T = Record<string, unknown>> {
  id: string;
  type: string;
  timestamp: string;
  data: T;
}

export type VerifyResult =
  | { ok: true; event: WebhookEvent }
  | { ok: false; reason: "missing_headers" | "bad_signature" | "stale_timestamp" | "bad_body" };

export interface VerifyOptions {
  /** How far the timestamp may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Current time in ms (tests). */
  now?: number;
}

/**
 * Checks one delivery: `X-Service-Signature: sha256=<hex>` over `<X-Service-Timestamp>.<raw body>`.
 * Pass the raw body exactly as received (a re-serialised JSON would not verify).
 *
 * @example
 * const result = verifyWebhook(secret, rawBody, req.headers);
 * if (!result.ok) return res.writeHead(401).end(result.reason);
 * console.log(result.event.type, result.event.data);
 */
export function verifyWebhook(
  secret: string,
  rawBody: string | Buffer,
  headers: Record<string, string | string[] | undefined>,
  options: VerifyOptions = {},
): VerifyResult {
  const header = (name: string) => {
    const value = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  };
  const signature = header("x-service-signature");
  const timestamp = header("x-service-timestamp");
  if (!signature || !timestamp) return { ok: false, reason: "missing_headers" };
  const body = typeof rawBody === "string" ? rawBody : rawBody.toString("utf8");
  const expected = `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
  const a = Buffer.from(signature);
  const b = Buffer.from(expected);
  // Equal lengths first: timingSafeEqual throws on a mismatch, and length says nothing secret.
  if (a.length !== b.length || !timingSafeEqual(a, b)) return { ok: false, reason: "bad_signature" };
  const seconds = Number(timestamp);
  const now = options.now ?? Date.now();
  if (!Number.isFinite(seconds) || Math.abs(now / 1000 - seconds) > (options.toleranceSeconds ?? 300))
    return { ok: false, reason: "stale_timestamp" };
  try {
    const event = JSON.parse(body) as WebhookEvent;
    if (typeof event?.id !== "string" || typeof event.type !== "string")
      return { ok: false, reason: "bad_body" };
    return { ok: true, event };
  } catch {
    return { ok: false, reason: "bad_body" };
  }
}

export interface ReceiverOptions extends VerifyOptions {
  secret: string;
  /** Called once per delivery id (retries of a delivery already handled are acknowledged, not re-run). */
  onEvent: (event: WebhookEvent) => void | Promise<void>;
  /** Delivery ids remembered for de-duplication (default 10,000). */
  remember?: number;
  /** Largest body accepted in bytes (default 1 MiB). */
  maxBodyBytes?: number;
}

/**
 * A `node:http` request handler for webhook deliveries: 401 on a bad or stale signature, 413 on an
 * oversized body, 200 once `onEvent` resolved (500 if it threw, so crossbook retries), 200 at once
 * for a duplicate delivery id.
 *
 * @example
 * import { createServer } from "node:http";
 * createServer(webhookReceiver({ secret, onEvent: (e) => console.log(e.type, e.data) })).listen(3000);
 */
export function webhookReceiver(options: ReceiverOptions) {
  const seen = new Set<string>();
  const limit = options.remember ?? 10_000;
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request) {
      size += (chunk as Buffer).length;
      if (size > (options.maxBodyBytes ?? 1 << 20)) {
        response.writeHead(413).end("payload too large");
        return;
      }
      chunks.push(chunk as Buffer);
    }
    const result = verifyWebhook(options.secret, Buffer.concat(chunks), request.headers, options);
    if (!result.ok) {
      response.writeHead(401, { "content-type": "text/plain" }).end(result.reason);
      return;
    }
    if (seen.has(result.event.id)) {
      response.writeHead(200).end("duplicate");
      return;
    }
    try {
      await options.onEvent(result.event);
    } catch {
      response.writeHead(500).end("handler failed");
      return;
    }
    seen.add(result.event.id);
    if (seen.size > limit) seen.delete(seen.values().next().value as string);
    response.writeHead(200).end("ok");
  };
}
