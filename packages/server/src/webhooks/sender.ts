/**
 * One webhook delivery attempt over HTTPS (plain http only to the demo's loopback receivers, see
 * ssrf.ts). The dispatcher decides what to send and when to retry;
 * this module only makes the POST safely and reports what happened.
 *
 * - The SSRF guard runs on every attempt, and the connection goes to exactly the addresses it
 *   checked: the undici Agent gets a `lookup` that returns the checked address, so there is no
 *   second DNS lookup for an attacker to rebind. SNI, certificate verification and the Host header
 *   still use the URL's hostname. A host name is resolved and judged on every attempt; an IP-literal
 *   URL's verdict involves no DNS (it depends on the URL and `allowPrivate` only), so it is kept.
 * - The request goes through undici's `dispatch` handler interface (`Exchange`), not `request`: no
 *   response stream, async iterator or AbortSignal per attempt, which cost more than the rest of
 *   the attempt together.
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
import { Agent } from "undici";
import {
  checkWebhookUrl,
  checkWebhookUrlWithoutDns,
  type LookupFn,
  type ResolvedAddress,
  type UrlCheck,
} from "./ssrf";

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
  /** Loopback receivers allowed, over http too (`crossbook demo`). */
  allowLoopback?: boolean;
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
  /** Present (true) when the attempt ran out of its deadline before a complete answer. */
  timedOut?: true;
}

const agents = new Map<string, Agent>();

function caKey(ca: CaOption | undefined): string {
  if (ca === undefined) return "system";
  const hash = createHash("sha256");
  for (const part of Array.isArray(ca) ? ca : [ca]) hash.update(part).update("\0");
  return hash.digest("hex");
}

function pinnedAgent(url: URL, target: ResolvedAddress, ca: CaOption | undefined): Agent {
  const port = url.port || (url.protocol === "http:" ? "80" : "443");
  const key = `${url.protocol}|${url.hostname}|${port}|${target.address}|${caKey(ca)}`;
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
  if (code) return shorten(`request failed: ${code}`);
  // Library messages often name the address connected to ("connect … 10.0.0.5:443"): the record is
  // shown to the webhook's owner, who must not learn what a name resolved to.
  const message = error instanceof Error ? error.message : String(error);
  return shorten(`request failed: ${withoutAddresses(message)}`);
}

/** Replaces every IP address (bracketed or not, with or without a port) in a message by "<address>". */
export function withoutAddresses(text: string): string {
  return text.replace(/[^\s,;()'"<>]+/g, (token) => (isAddressToken(token) ? "<address>" : token));
}

function isAddressToken(token: string): boolean {
  // As is, and without trailing sentence punctuation ("… 10.0.0.5:443.").
  for (const candidate of [token, token.replace(/[.:]+$/, "")]) {
    const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(candidate);
    if (bracketed ? isIP(bracketed[1]!) !== 0 : isIP(candidate) !== 0) return true;
    if (isIP(candidate.replace(/:\d+$/, "")) === 4) return true;
  }
  return false;
}

type Attempt =
  | { kind: "response"; status: number; location: string | null; retryAfter: string | string[] | undefined }
  | { kind: "error"; error: unknown; status: number | null };

/** undici's per-request controller (the part a dispatch handler uses). */
interface RequestController {
  abort(reason: Error): void;
}

/**
 * One HTTP exchange through undici's `dispatch` handler interface: no response stream, async
 * iterator or AbortSignal per attempt (they cost more than the rest of the attempt together). The
 * outcome settles once: at the end of the response, when its body passes the read limit (the
 * connection is then dropped, as a destroyed body stream would), on an error, or on `cancel` (the
 * attempt's deadline).
 */
class Exchange {
  status: number | null = null;
  #location: string | null = null;
  #retryAfter: string | string[] | undefined = undefined;
  #received = 0;
  #controller: RequestController | null = null;
  #settled = false;
  #cancelled: Error | null = null;
  readonly outcome: Promise<Attempt>;
  #resolve!: (attempt: Attempt) => void;

  constructor() {
    this.outcome = new Promise<Attempt>((resolve) => {
      this.#resolve = resolve;
    });
  }

  #settle(attempt: Attempt): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#resolve(attempt);
  }

  #response(): Attempt {
    return { kind: "response", status: this.status!, location: this.#location, retryAfter: this.#retryAfter };
  }

  /** Abandons the request (deadline): the connection is dropped, the outcome an error. */
  cancel(reason: Error): void {
    this.#settle({ kind: "error", error: reason, status: this.status });
    if (this.#controller) this.#controller.abort(reason);
    else this.#cancelled = reason; // not on a connection yet: aborted as soon as it is
  }

  onRequestStart(controller: RequestController): void {
    this.#controller = controller;
    if (this.#cancelled) controller.abort(this.#cancelled);
  }

  onResponseStart(
    _controller: RequestController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) return; // 1xx informational: the real answer follows
    this.status = statusCode;
    const location = headers["location"];
    this.#location = (Array.isArray(location) ? location[0] : location) ?? null;
    this.#retryAfter = headers["retry-after"];
  }

  onResponseData(controller: RequestController, chunk: Buffer): void {
    this.#received += chunk.length;
    if (this.#received > MAX_RESPONSE_BYTES && !this.#settled) {
      // Enough of an oversized answer: the status stands, the rest (and the connection) is dropped.
      this.#settle(this.#response());
      controller.abort(new Error("response body over the read limit"));
    }
  }

  onResponseEnd(): void {
    this.#settle(this.#response());
  }

  onResponseError(_controller: RequestController, error: Error): void {
    this.#settle({ kind: "error", error, status: this.status });
  }
}

type Allowed = Extract<UrlCheck, { ok: true }>;
type Refused = Extract<UrlCheck, { ok: false }>;

/** Where an attempt goes: the URL's allowed check, and its origin and path as undici takes them. */
interface Target {
  check: Allowed;
  origin: string;
  path: string;
}

/** The targets of IP-literal URLs, by policy and URL (their check involves no DNS). */
const targets = new Map<string, Target>();
const MAX_TARGETS = 1_000;

function target(check: Allowed): Target {
  return { check, origin: check.url.origin, path: `${check.url.pathname}${check.url.search}` };
}

/**
 * The SSRF verdict for this attempt. An IP-literal URL needs no DNS, so its verdict (a pure function
 * of the URL and `allowPrivate`) is computed once and reused; a host name is resolved and judged
 * anew on every attempt.
 */
function checkNow(input: SendInput): Target | Refused | Promise<Target | Refused> {
  const key = `${input.allowPrivate ? "1" : "0"}${input.allowLoopback ? "1" : "0"}${input.url}`;
  const known = targets.get(key);
  if (known) return known;
  const literal = checkWebhookUrlWithoutDns(input.url, input);
  if (literal) {
    if (!literal.ok) return literal;
    const found = target(literal);
    if (targets.size >= MAX_TARGETS) targets.clear();
    targets.set(key, found);
    return found;
  }
  return checkWebhookUrl(input.url, {
    allowPrivate: input.allowPrivate,
    ...(input.allowLoopback ? { allowLoopback: true } : {}),
    ...(input.lookup ? { lookup: input.lookup } : {}),
  }).then((check) => (check.ok ? target(check) : check));
}

function attempt(
  to: Target,
  address: ResolvedAddress,
  input: SendInput,
  timeoutMs: number,
  onStart: (exchange: Exchange) => void,
): Promise<Attempt> {
  const exchange = new Exchange();
  onStart(exchange);
  try {
    pinnedAgent(to.check.url, address, input.ca).dispatch(
      {
        origin: to.origin,
        path: to.path,
        method: "POST",
        headers: input.headers,
        body: input.body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      },
      exchange,
    );
  } catch (error) {
    exchange.onResponseError(null as never, error as Error);
  }
  return exchange.outcome;
}

/** Make one delivery attempt. Never throws; every outcome is in the result. */
export async function sendWebhook(input: SendInput): Promise<SendResult> {
  const started = performance.now();
  const timeoutMs = input.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timeoutError = `timeout after ${timeoutMs} ms`;
  const result = (
    ok: boolean,
    status: number | null,
    error: string | null,
    retryAfterSeconds: number | null,
  ): SendResult => ({
    ok,
    status,
    responseTimeMs: Math.round(performance.now() - started),
    error,
    retryAfterSeconds,
    ...(error === timeoutError ? { timedOut: true as const } : {}),
  });

  // One deadline for the whole attempt: DNS, connect, TLS, headers and body.
  let timedOut = false;
  let current: Exchange | null = null;
  let onTimeout: (() => void) | null = null;
  const timer = setTimeout(() => {
    timedOut = true;
    current?.cancel(new Error(timeoutError));
    onTimeout?.();
  }, timeoutMs);

  try {
    let checked = checkNow(input);
    if (checked instanceof Promise) {
      const deadline = new Promise<"timeout">((resolve) => {
        onTimeout = () => resolve("timeout");
      });
      const raced = await Promise.race([checked, deadline]);
      if (raced === "timeout") return result(false, null, timeoutError, null);
      checked = raced;
    }
    if ("reason" in checked) return result(false, null, `refused by SSRF guard: ${checked.reason}`, null);
    const to = checked;
    const addresses = to.check.addresses;

    let outcome: Attempt | undefined;
    for (let index = 0; index < addresses.length; index++) {
      outcome = await attempt(to, addresses[index]!, input, timeoutMs, (exchange) => {
        current = exchange;
      });
      const retryNext =
        outcome.kind === "error" &&
        !timedOut &&
        index < addresses.length - 1 &&
        CONNECT_FAILURES.has(errorCode(outcome.error) ?? "");
      if (!retryNext) break;
    }
    if (!outcome) return result(false, null, "no address to connect to", null);

    if (outcome.kind === "error") {
      const error = timedOut ? timeoutError : describeError(outcome.error, to.check.url.hostname);
      return result(false, outcome.status, error, null);
    }
    const { status } = outcome;
    const retryAfterSeconds =
      status === 429 || status === 503 ? parseRetryAfter(outcome.retryAfter, Date.now()) : null;
    if (status >= 200 && status < 300) return result(true, status, null, retryAfterSeconds);
    if (status >= 300 && status < 400) {
      const error = `redirect to ${shorten(outcome.location ?? "(no Location header)")} not followed`;
      return result(false, status, error, retryAfterSeconds);
    }
    return result(false, status, `HTTP ${status}`, retryAfterSeconds);
  } catch (error) {
    // Defensive: nothing above should throw, but a delivery attempt must never crash the dispatcher.
    return result(false, null, timedOut ? timeoutError : describeError(error, ""), null);
  } finally {
    clearTimeout(timer);
  }
}
