/**
 * One webhook delivery attempt over HTTPS. The dispatcher decides what to send and when to retry;
 * this module only makes the POST safely and reports what happened.
 *
 * - The SSRF guard runs on every attempt, and the connection goes to exactly the addresses it
 *   checked: the undici Agent gets a `lookup` that returns the checked address, so there is no
 *   second DNS lookup for an attacker to rebind. SNI, certificate verification and the Host header
 *   still use the URL's hostname.
 * - Keep-alive connections are reused through one Agent per (host, port, checked address), kept in
 *   a small LRU, so a connection pinned to an old address is never used for a new one.
 * - No redirect is followed (a 3xx is a failure), one deadline covers DNS, connect, TLS, headers and
 *   body, and at most 64 KiB of the response body is read and then thrown away.
 * - Trust: the system store plus NODE_EXTRA_CA_CERTS (Node's defaults, read at process start). The
 *   `ca` input replaces that store and exists for tests only.
 * - Nothing here logs; errors are short descriptions that never contain the body or a secret.
 */
import { createHash } from "node:crypto";
import { isIP } from "node:net";
import { Agent, request } from "undici";
import { checkWebhookUrl, type LookupFn, type ResolvedAddress } from "./ssrf";

export const DEFAULT_TIMEOUT_MS = 5000;
const MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_AGENTS = 64;
const MAX_ERROR_LENGTH = 200;

type CaOption = string | Buffer | Array<string | Buffer>;

export interface SendInput {
  url: string;
  /** Sent as given (see `deliveryHeaders`); undici adds only host, connection and content-length. */
  headers: Record<string, string>;
  body: string;
  allowPrivate: boolean;
  /** Total budget for the attempt, DNS to last body byte (default 5000 ms, SPEC 6.4). */
  timeoutMs?: number;
  /** Host name resolution for the SSRF guard (tests inject one; default dns.lookup, all addresses). */
  lookup?: LookupFn;
  /** TEST ONLY: trusted CA certificates replacing the system store. Production leaves it unset. */
  ca?: CaOption;
}

export interface SendResult {
  /** True only for a 2xx answer received in full within the deadline. */
  ok: boolean;
  /** HTTP status received, or null when no response arrived. */
  status: number | null;
  responseTimeMs: number;
  /** Short description of the failure, or null on success. */
  error: string | null;
  /** From `Retry-After` on a 429 or 503 answer, in seconds from now; otherwise null. */
  retryAfterSeconds: number | null;
}

const agents = new Map<string, Agent>();

function caKey(ca: CaOption | undefined): string {
  if (ca === undefined) return "system";
  const hash = createHash("sha256");
  for (const part of Array.isArray(ca) ? ca : [ca]) hash.update(part).update("\0");
  return hash.digest("hex");
}

function pinnedAgent(url: URL, target: ResolvedAddress, ca: CaOption | undefined): Agent {
  const port = url.port || "443";
  const key = `${url.hostname}|${port}|${target.address}|${caKey(ca)}`;
  const existing = agents.get(key);
  if (existing) {
    agents.delete(key);
    agents.set(key, existing);
    return existing;
  }
  const hostname = url.hostname.replace(/^\[|\]$/g, "");
  const pinnedLookup = (
    _host: string,
    options: { all?: boolean },
    callback: (error: Error | null, address: unknown, family?: number) => void,
  ) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const agent = new Agent({
    connect: {
      lookup: pinnedLookup as never,
      // SNI is for names only; for an IP literal Node checks the certificate against the IP.
      ...(isIP(hostname) === 0 ? { servername: hostname } : {}),
      ...(ca !== undefined ? { ca } : {}),
      rejectUnauthorized: true,
    },
  });
  agents.set(key, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldestKey, oldest] = agents.entries().next().value as [string, Agent];
    agents.delete(oldestKey);
    // Graceful: requests in flight on the evicted agent finish first.
    oldest.close().catch(() => {});
  }
  return agent;
}

/** Close every pooled connection (server shutdown, tests). */
export async function closeWebhookAgents(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.allSettled(all.map((agent) => agent.close()));
}

/** `Retry-After` as seconds from `nowMs`: delay-seconds or an HTTP date; null when absent or invalid. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds : null;
  }
  // HTTP dates start with the day name (IMF-fixdate, RFC 850, asctime); V8's Date.parse alone
  // would also take "1.5" or "-5" as dates.
  if (!/^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,? /i.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}

function shorten(text: string): string {
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}

function errorCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let current = error as { code?: unknown; cause?: unknown } | undefined;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    if (typeof current.code === "string") return current.code;
    current = current.cause as typeof current;
  }
  return undefined;
}

/** Failures before any byte of the request was sent: trying the next checked address is safe. */
const CONNECT_FAILURES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
]);

function describeError(error: unknown, hostname: string): string {
  const code = errorCode(error);
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
      return "connection reset";
    case "UND_ERR_SOCKET":
      return "connection closed by the receiver";
    case "EHOSTUNREACH":
      return "host unreachable";
    case "ENETUNREACH":
      return "network unreachable";
    case "EPIPE":
      return "connection closed while sending";
    case "ERR_TLS_CERT_ALTNAME_INVALID":
      return `TLS error: certificate is not valid for ${hostname}`;
  }
  if (code && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_|ISSUER/.test(code)) return shorten(`TLS error: ${code}`);
  const message = error instanceof Error ? error.message : String(error);
  return shorten(`request failed: ${code ?? message}`);
}

type Attempt =
  | { kind: "response"; status: number; location: string | null; retryAfter: string | string[] | undefined }
  | { kind: "error"; error: unknown; status: number | null };

async function readAtMost(body: AsyncIterable<Buffer>, limit: number): Promise<void> {
  let received = 0;
  for await (const chunk of body) {
    received += chunk.length;
    // Leaving the loop destroys the stream, and with it the connection: fine for an oversized answer.
    if (received > limit) break;
  }
}

async function attempt(
  url: URL,
  target: ResolvedAddress,
  input: SendInput,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<Attempt> {
  let status: number | null = null;
  try {
    const response = await request(url, {
      dispatcher: pinnedAgent(url, target, input.ca),
      method: "POST",
      headers: input.headers,
      body: input.body,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    status = response.statusCode;
    await readAtMost(response.body, MAX_RESPONSE_BYTES);
    const location = response.headers["location"];
    return {
      kind: "response",
      status,
      location: (Array.isArray(location) ? location[0] : location) ?? null,
      retryAfter: response.headers["retry-after"],
    };
  } catch (error) {
    return { kind: "error", error, status };
  }
}

/** Make one delivery attempt. Never throws; every outcome is in the result. */
export async function sendWebhook(input: SendInput): Promise<SendResult> {
  const started = performance.now();
  const timeoutMs = input.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const elapsed = () => Math.round(performance.now() - started);
  const result = (fields: Omit<SendResult, "responseTimeMs">): SendResult => ({
    ...fields,
    responseTimeMs: elapsed(),
  });
  const timeoutError = `timeout after ${timeoutMs} ms`;

  const controller = new AbortController();
  let timedOut = false;
  let onTimeout: () => void = () => {};
  const deadline = new Promise<"timeout">((resolve) => {
    onTimeout = () => resolve("timeout");
  });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
    onTimeout();
  }, timeoutMs);

  try {
    const check = await Promise.race([
      checkWebhookUrl(input.url, {
        allowPrivate: input.allowPrivate,
        ...(input.lookup ? { lookup: input.lookup } : {}),
      }),
      deadline,
    ]);
    if (check === "timeout") {
      return result({ ok: false, status: null, error: timeoutError, retryAfterSeconds: null });
    }
    if (!check.ok) {
      return result({
        ok: false,
        status: null,
        error: `refused by SSRF guard: ${check.reason}`,
        retryAfterSeconds: null,
      });
    }

    let outcome: Attempt | undefined;
    for (const [index, target] of check.addresses.entries()) {
      outcome = await attempt(check.url, target, input, controller.signal, timeoutMs);
      const retryNext =
        outcome.kind === "error" &&
        !timedOut &&
        index < check.addresses.length - 1 &&
        CONNECT_FAILURES.has(errorCode(outcome.error) ?? "");
      if (!retryNext) break;
    }
    if (!outcome)
      return result({ ok: false, status: null, error: "no address to connect to", retryAfterSeconds: null });

    if (outcome.kind === "error") {
      const error = timedOut ? timeoutError : describeError(outcome.error, check.url.hostname);
      return result({ ok: false, status: outcome.status, error, retryAfterSeconds: null });
    }
    const { status } = outcome;
    const retryAfterSeconds =
      status === 429 || status === 503 ? parseRetryAfter(outcome.retryAfter, Date.now()) : null;
    if (status >= 200 && status < 300) return result({ ok: true, status, error: null, retryAfterSeconds });
    if (status >= 300 && status < 400) {
      const error = `redirect to ${shorten(outcome.location ?? "(no Location header)")} not followed`;
      return result({ ok: false, status, error, retryAfterSeconds });
    }
    return result({ ok: false, status, error: `HTTP ${status}`, retryAfterSeconds });
  } catch (error) {
    // Defensive: nothing above should throw, but a delivery attempt must never crash the dispatcher.
    return result({
      ok: false,
      status: null,
      error: timedOut ? timeoutError : describeError(error, ""),
      retryAfterSeconds: null,
    });
  } finally {
    clearTimeout(timer);
  }
}
