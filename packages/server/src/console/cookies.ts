/**
 * The console's cookies: parsed from the Cookie header and written as Set-Cookie values, always
 * HttpOnly, SameSite=Strict and Path=/console, and Secure when the request came over HTTPS (behind a
 * proxy, with TRUST_PROXY set, as the proxy says).
 */
import type { FastifyRequest } from "fastify";

export const SESSION_COOKIE = "cb_session";
/** Double-submit token of the signed-out forms (sign-in, sign-up): there is no session to tie it to. */
export const FORM_COOKIE = "cb_form";
export const ENVIRONMENT_COOKIE = "cb_env";
export const FLASH_COOKIE = "cb_flash";

export function readCookies(request: FastifyRequest): Record<string, string> {
  const header = request.headers.cookie;
  const cookies: Record<string, string> = {};
  if (!header) return cookies;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (name in cookies) continue; // the first is the most specific path
    try {
      cookies[name] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      // a malformed value is ignored, as if absent
    }
  }
  return cookies;
}

export interface CookieOptions {
  /** Seconds; omitted for a cookie that ends with the browser session; 0 deletes it. */
  maxAge?: number;
}

export function cookie(
  request: FastifyRequest,
  name: string,
  value: string,
  options: CookieOptions = {},
): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, "Path=/console", "HttpOnly", "SameSite=Strict"];
  if (request.protocol === "https") parts.push("Secure");
  if (options.maxAge !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(options.maxAge))}`);
  return parts.join("; ");
}

export function clearCookie(request: FastifyRequest, name: string): string {
  return cookie(request, name, "", { maxAge: 0 });
}
