/**
 * Receiving crossbook's webhooks safely: the signature (spec 6.3) recomputed over the exact bytes
 * received and compared in constant time, stale timestamps refused (replays), and a ready-made
 * `node:http` handler that claims a delivery id before running the user's handler, so a retry
 * that arrives while the first attempt is still being handled is never run a second time.
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
 * Pass the raw body exactly as received, ideally the `Buffer` read from the request: the HMAC runs
 * over those bytes (a string is taken as its UTF-8 bytes), so a re-serialised JSON does not verify.
 * A body that verifies but is not UTF-8 JSON with a string `id` and `type` is `bad_body`.
 *
 * @example
 * const result = verifyWebhook(secret, rawBody, req.headers);
 * if (!result.ok) return res.writeHead(401).end(result.reason);
 * console.log(result.event.type, result.event.data);
 */
export function verifyWebhook(
  secret: string,
  rawBody: string | Uint8Array,
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
  const bytes = typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : rawBody;
  const expected = Buffer.from(
    `sha256=${createHmac("sha256", secret).update(`${timestamp}.`, "utf8").update(bytes).digest("hex")}`,
  );
  const given = Buffer.from(signature.trim());
  // Equal lengths first: timingSafeEqual throws on a mismatch, and length says nothing secret.
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: "bad_signature" };
  const now = options.now ?? Date.now();
  if (
    !/^\d{1,15}$/.test(timestamp) ||
    Math.abs(now / 1000 - Number(timestamp)) > (options.toleranceSeconds ?? 300)
  )
    return { ok: false, reason: "stale_timestamp" };
  try {
    const event = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as WebhookEvent;
    if (typeof event?.id !== "string" || typeof event.type !== "string")
      return { ok: false, reason: "bad_body" };
    return { ok: true, event };
  } catch {
    return { ok: false, reason: "bad_body" };
  }
}

export interface ReceiverOptions extends VerifyOptions {
  secret: string;
  /**
   * Called once per delivery id: a retry of a delivery already handled is acknowledged without
   * running it again, and one that arrives while it runs waits for its outcome.
   */
  onEvent: (event: WebhookEvent) => void | Promise<void>;
  /** Handled delivery ids remembered for de-duplication (default 10,000). */
  remember?: number;
  /** Largest body accepted in bytes (default 1 MiB). */
  maxBodyBytes?: number;
}

/**
 * A `node:http` request handler for webhook deliveries: 401 on a bad or stale signature, 400 on a
 * signed body that is not an event, 413 on an oversized body, 200 once `onEvent` resolved (500 if
 * it threw, so crossbook retries).
 *
 * The delivery id (the signed body's `id`, which is the `X-Service-Delivery-Id`; the header alone is
 * not signed, so a replay could change it) is claimed before `onEvent` runs. A repeat of an id
 * already handled gets 200 at once; a repeat that arrives while the first attempt's `onEvent` is
 * still running (crossbook gave up waiting and retried) is not run again: it waits for that run and
 * answers with its outcome, 200 (crossbook stops retrying) or 500. When `onEvent` throws, the claim
 * is released, so a later retry runs it again.
 *
 * @example
 * import { createServer } from "node:http";
 * createServer(webhookReceiver({ secret, onEvent: (e) => console.log(e.type, e.data) })).listen(3000);
 */
export function webhookReceiver(options: ReceiverOptions) {
  /** Delivery id -> its run: pending while `onEvent` runs, resolved true once it succeeded. */
  const claims = new Map<string, Promise<boolean>>();
  const handled = new Set<string>(); // in the order handled, oldest first
  const limit = options.remember ?? 10_000;
  const maxBytes = options.maxBodyBytes ?? 1 << 20;

  const run = async (event: WebhookEvent): Promise<boolean> => {
    try {
      await options.onEvent(event);
    } catch {
      claims.delete(event.id); // released: the next retry runs the handler again
      return false;
    }
    handled.add(event.id);
    // Forget the oldest handled ids past the limit; a pending claim is never evicted.
    for (const old of handled) {
      if (handled.size <= limit) break;
      handled.delete(old);
      claims.delete(old);
    }
    return true;
  };

  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        response.writeHead(413, { "content-type": "text/plain" }).end("payload too large");
        return;
      }
      chunks.push(chunk as Buffer);
    }
    const result = verifyWebhook(options.secret, Buffer.concat(chunks), request.headers, options);
    if (!result.ok) {
      response
        .writeHead(result.reason === "bad_body" ? 400 : 401, { "content-type": "text/plain" })
        .end(result.reason);
      return;
    }
    const id = result.event.id;
    const existing = claims.get(id);
    let ok: boolean;
    if (existing) ok = await existing;
    else {
      // Claimed before the handler starts, with no await between the lookup and the claim.
      let settle!: (ok: boolean) => void;
      claims.set(id, new Promise<boolean>((resolve) => (settle = resolve)));
      ok = await run(result.event);
      settle(ok);
    }
    if (ok) response.writeHead(200, { "content-type": "text/plain" }).end(existing ? "duplicate" : "ok");
    else response.writeHead(500, { "content-type": "text/plain" }).end("handler failed");
  };
}
