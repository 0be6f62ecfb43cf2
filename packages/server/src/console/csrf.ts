/**
 * Cross-site request forgery defences of the console's forms, two of them, both required:
 *  1. Where the request came from: a POST the browser marks cross-site (`Sec-Fetch-Site`), or whose
 *     `Origin` is not this service's own, is refused before anything else runs.
 *  2. A token in every form: signed in, it is derived from the session token (which only the
 *     HttpOnly cookie holds, so another site can neither read nor guess it, and every instance of a
 *     cluster derives the same one); signed out (sign-in, sign-up), it is a random value the form
 *     carries and a cookie repeats (double submit).
 * Tokens are compared in constant time. The SameSite=Strict cookies already keep a cross-site POST
 * signed out; these checks make it an explicit refusal rather than a sign-in page.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";

export const CSRF_FIELD = "_csrf";

export function sessionCsrfToken(sessionToken: string): string {
  return createHash("sha256").update(`crossbook-console-csrf\u0000${sessionToken}`).digest("base64url");
}

export function newFormToken(): string {
  return randomBytes(24).toString("base64url");
}

export function sameToken(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Why a state-changing request must be refused as cross-site, or null when it comes from here. */
export function crossSiteReason(request: FastifyRequest): string | null {
  const site = request.headers["sec-fetch-site"];
  if (site === "cross-site" || site === "same-site") return `the browser marked it ${site}`;
  const origin = request.headers.origin;
  if (origin !== undefined) {
    if (origin === "null") return "it came from an opaque origin";
    let host: string;
    try {
      host = new URL(origin).host;
    } catch {
      return "its Origin is malformed";
    }
    if (host !== request.host) return `it came from ${origin}`;
  }
  return null;
}
