/**
 * What every console page handler uses: who is signed in, the posted form, answering with a page
 * or a redirect (with a message for the next page), and the field errors of a refused form.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../http/errors";
import { clearCookie, cookie, FLASH_COOKIE, readCookies } from "./cookies";
import { html } from "./html";
import { type ConsoleUser, type FieldErrors, type Flash, type PageOptions, page } from "./layout";

declare module "fastify" {
  interface FastifyRequest {
    /** The console's signed-in user (console routes only; null when signed out). */
    consoleUser: ConsoleUser | null;
  }
}

/** A posted form: each field's value, or values when it was repeated (checkboxes). */
export type FormBody = Record<string, string | string[] | undefined>;

export function formOf(request: FastifyRequest): FormBody {
  const body = request.body;
  return body && typeof body === "object" ? (body as FormBody) : {};
}

/** One field as text (the first, if repeated), trimmed; "" when absent. */
export function text(form: FormBody, name: string): string {
  const value = form[name];
  return (Array.isArray(value) ? (value[0] ?? "") : (value ?? "")).trim();
}

/** Every value of a repeated field (checkboxes), empty ones dropped. */
export function values(form: FormBody, name: string): string[] {
  const value = form[name];
  return (Array.isArray(value) ? value : value === undefined ? [] : [value])
    .map((v) => v.trim())
    .filter(Boolean);
}

/** The signed-in user, or a redirect to the sign-in page (which comes back here afterwards). */
export function requireUser(request: FastifyRequest, reply: FastifyReply): ConsoleUser | null {
  const user = request.consoleUser;
  if (user) return user;
  const next = request.method === "GET" ? request.url : "/console";
  void reply.redirect(`/console/signin?next=${encodeURIComponent(next)}`, 303);
  return null;
}

/** Answers with a page; messages left by the previous request's redirect are shown and cleared. */
export function render(
  request: FastifyRequest,
  reply: FastifyReply,
  options: Omit<PageOptions, "user"> & { user?: ConsoleUser | null },
  status = 200,
): FastifyReply {
  const flash = [...takeFlash(request, reply), ...(options.flash ?? [])];
  return reply
    .code(status)
    .type("text/html; charset=utf-8")
    .send(
      page({ path: request.url, ...options, user: options.user ?? request.consoleUser ?? undefined, flash }),
    );
}

/** The console's 404 page: no page here, or none for this user (the review desk for non-operators). */
export function notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return render(
    request,
    reply,
    {
      title: "Not found",
      body: html`<div class="card narrow"><h1>Not found</h1><p>There is no console page at this address.</p>
        <p><a href="/console">Back to the console</a></p></div>`,
    },
    404,
  );
}

/** Post/redirect/get: a 303 to `url`, with a message for the page it shows. */
export function redirect(
  request: FastifyRequest,
  reply: FastifyReply,
  url: string,
  flash?: Flash,
): FastifyReply {
  if (flash) appendCookie(reply, cookie(request, FLASH_COOKIE, JSON.stringify([flash])));
  return reply.redirect(url, 303);
}

function takeFlash(request: FastifyRequest, reply: FastifyReply): Flash[] {
  const stored = readCookies(request)[FLASH_COOKIE];
  if (!stored) return [];
  appendCookie(reply, clearCookie(request, FLASH_COOKIE));
  try {
    const parsed = JSON.parse(stored) as unknown;
    return Array.isArray(parsed)
      ? parsed.filter(
          (f): f is Flash =>
            typeof f === "object" &&
            f !== null &&
            typeof f.text === "string" &&
            ["ok", "error", "warn"].includes(f.kind),
        )
      : [];
  } catch {
    return [];
  }
}

/** Adds a Set-Cookie without dropping the ones already set. */
export function appendCookie(reply: FastifyReply, value: string): void {
  const existing = reply.getHeader("set-cookie");
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  void reply.header("set-cookie", [...list, value]);
}

/**
 * The field errors of a refused action, keyed by form field (`body.email` -> `email`), or null when
 * the error is not about fields. `rename` maps an API field name to the form's where they differ.
 */
export function fieldErrorsOf(error: unknown, rename: Record<string, string> = {}): FieldErrors | null {
  if (!(error instanceof AppError) || error.code !== "VALIDATION_ERROR") return null;
  const fields = (error.details as { fields?: Record<string, string> } | undefined)?.fields;
  if (!fields) return null;
  const out: FieldErrors = {};
  for (const [name, message] of Object.entries(fields)) {
    const plain = name.replace(/^(body|query|path)\./, "");
    out[rename[plain] ?? plain] = message;
  }
  return out;
}

/** A refused action as a message for the page (the API's words, which say what to do). */
export function messageOf(error: unknown): string {
  if (error instanceof AppError) return error.message;
  return "Something went wrong; try again in a moment";
}
