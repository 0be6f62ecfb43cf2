/**
 * What a failed connection says: the cause without Node's noise, and a hint where the fix likely
 * lies. Shared by the HTTP transport and the two WebSocket streams, so a refused connection reads
 * the same whichever part of the client met it.
 */
import { CrossbookNetworkError } from "./errors.js";

export function describeCause(cause: unknown): { code?: string; text: string } {
  let inner: unknown = cause;
  while (inner instanceof Error && inner.cause instanceof Error) inner = inner.cause;
  if (!(inner instanceof Error)) return { text: String(cause) };
  const raw = (inner as Error & { code?: unknown }).code;
  const code = typeof raw === "string" ? raw : undefined;
  // Node's "connect ECONNREFUSED 127.0.0.1:8080": the verb adds nothing to the method and URL.
  let text = inner.message.replace(/^(connect|getaddrinfo|read|write) /, "");
  if (text === "" && inner instanceof AggregateError)
    text = inner.errors
      .map((e: unknown) => (e instanceof Error ? e.message.replace(/^connect /, "") : String(e)))
      .join(", ");
  if (text === "") text = code ?? inner.name;
  else if (code && !text.includes(code)) text = `${code}: ${text}`;
  return { ...(code ? { code } : {}), text };
}

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i;

/** A hint where the fix is likely: a local service not started, or a base URL that does not resolve. */
export function networkHint(code: string | undefined, baseUrl: string): string {
  let host = "";
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    // a base URL fetch could not parse has failed with its own message
  }
  if (code === "ECONNREFUSED" && LOOPBACK.test(host))
    return " — is crossbook running? (start it with `npx crossbook demo` or `npx crossbook serve`)";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN")
    return ` — check the client's baseUrl (or CROSSBOOK_URL): ${host} does not resolve`;
  return "";
}

/**
 * A CrossbookNetworkError for a connection that failed: `GET ws://…/v1/prices/stream failed: ECONNREFUSED
 * 127.0.0.1:8080 — is crossbook running? …`, with `then` appended (what happens next).
 */
export function connectionError(
  method: string,
  url: string,
  cause: unknown,
  baseUrl: string,
  then = "",
): CrossbookNetworkError {
  const failure = describeCause(cause);
  return new CrossbookNetworkError(
    `${method} ${url} failed: ${failure.text}${networkHint(failure.code, baseUrl)}${then}`,
    cause,
    { method, url, ...(failure.code ? { code: failure.code } : {}) },
  );
}
