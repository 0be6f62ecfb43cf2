/**
 * The frame every console page shares: the head (the console's own stylesheet and script, nothing
 * from elsewhere), the navigation of the signed-in user, flash messages, and the small helpers pages
 * are written with: form fields with their errors, the CSRF field, numbers, money and dates.
 */

import type { Owner } from "../access/owner";
import type { Account, Session } from "../accounts/service";
import { assetUrl } from "./assets";
import { CSRF_FIELD } from "./csrf";
import { type HtmlPart, html, type SafeHtml } from "./html";

export type ConsoleEnvironment = Owner["environment"];

/** The signed-in person: their account, the sign-in, and the environment they are looking at. */
export interface ConsoleUser {
  account: Account;
  session: Session;
  /** The form token of this sign-in (csrf.ts). */
  csrf: string;
  environment: ConsoleEnvironment;
  /** The account in the environment the user is looking at. */
  owner: Owner;
}

export type FlashKind = "ok" | "error" | "warn";
export interface Flash {
  kind: FlashKind;
  text: string;
}

/** Field name -> what is wrong with it (shown next to the field). */
export type FieldErrors = Record<string, string>;

export type Section =
  | "keys"
  | "usage"
  | "webhooks"
  | "venues"
  | "sandbox"
  | "trading"
  | "sessions"
  | "review"
  | "none";

const NAV: Array<{ section: Section; href: string; label: string; operator?: boolean }> = [
  { section: "keys", href: "/console/keys", label: "API keys" },
  { section: "usage", href: "/console/usage", label: "Usage" },
  { section: "webhooks", href: "/console/webhooks", label: "Webhooks" },
  { section: "venues", href: "/console/venues", label: "Venue links" },
  { section: "sandbox", href: "/console/sandbox", label: "Sandbox" },
  { section: "trading", href: "/console/trading", label: "Live trading" },
  { section: "sessions", href: "/console/sessions", label: "Sessions" },
  { section: "review", href: "/console/review", label: "Match review", operator: true },
];

export interface PageOptions {
  title: string;
  user?: ConsoleUser | undefined;
  section?: Section;
  flash?: Flash[];
  body: SafeHtml;
  /** The page's own address (the environment switch comes back to it). */
  path?: string;
}

export function page(options: PageOptions): string {
  const { user, section = "none" } = options;
  const nav = user
    ? html`<nav aria-label="Console">
        <ul>
          ${NAV.filter((n) => !n.operator || user.account.operator).map(
            (n) =>
              html`<li><a href="${n.href}" ${n.section === section ? html`aria-current="page"` : ""}>${n.label}</a></li>`,
          )}
        </ul>
      </nav>
      <div class="who">
        <form method="post" action="/console/environment" class="env">
          ${csrfField(user)}<input type="hidden" name="next" value="${options.path ?? "/console"}">
          <label for="env-switch">Environment</label>
          <select id="env-switch" name="environment" data-autosubmit>
            <option value="sandbox" ${user.environment === "sandbox" ? html`selected` : ""}>Sandbox</option>
            <option value="live" ${user.environment === "live" ? html`selected` : ""}>Live</option>
          </select>
          <button type="submit" class="small secondary" data-autosubmit-button>Switch</button>
        </form>
        <span>${user.account.email}</span>
        <form method="post" action="/console/signout">${csrfField(user)}<button type="submit" class="small">Sign out</button></form>
      </div>`
    : "";
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · crossbook console</title>
<link rel="stylesheet" href="${assetUrl("console.css")}">
<script src="${assetUrl("console.js")}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><div class="bar"><a class="brand" href="/console">crossbook</a>${nav}</div></header>
<main id="main">
${(options.flash ?? []).map((f) => html`<div class="flash ${f.kind}" role="${f.kind === "error" ? "alert" : "status"}">${f.text}</div>`)}
${options.body}
</main>
</body>
</html>`.value;
}

export function csrfField(user: Pick<ConsoleUser, "csrf"> | string): SafeHtml {
  const token = typeof user === "string" ? user : user.csrf;
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;
}

export interface FieldOptions {
  name: string;
  label: string;
  type?: "text" | "email" | "password" | "url" | "number" | "search" | "textarea";
  value?: string | number | undefined;
  errors?: FieldErrors | undefined;
  hint?: HtmlPart;
  required?: boolean;
  autocomplete?: string;
  attrs?: SafeHtml;
}

/** A labelled input with its hint and error, wired for screen readers (aria-describedby). */
export function field(o: FieldOptions): SafeHtml {
  const id = `f-${o.name.replace(/[^a-zA-Z0-9_-]/g, "-")}`;
  const error = o.errors?.[o.name];
  const described = [o.hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ");
  const common = html`id="${id}" name="${o.name}" ${o.required ? html`required` : ""} ${
    o.autocomplete ? html`autocomplete="${o.autocomplete}"` : ""
  } ${error ? html`aria-invalid="true"` : ""} ${described ? html`aria-describedby="${described}"` : ""} ${o.attrs ?? ""}`;
  const input =
    o.type === "textarea"
      ? html`<textarea ${common}>${o.value ?? ""}</textarea>`
      : html`<input type="${o.type ?? "text"}" ${common} value="${o.value ?? ""}">`;
  return html`<div class="field">
    <label for="${id}">${o.label}</label>
    ${input}
    ${o.hint ? html`<div class="hint" id="${id}-hint">${o.hint}</div>` : ""}
    ${error ? html`<div class="error" id="${id}-error">${error}</div>` : ""}
  </div>`;
}

/** A date the reader's browser shows in their time zone (UTC until the script runs). */
export function time(iso: string | null | undefined): SafeHtml {
  if (!iso) return html`<span class="muted">—</span>`;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return html`${iso}`;
  return html`<time datetime="${d.toISOString()}">${d.toISOString().replace("T", " ").slice(0, 16)} UTC</time>`;
}

const numberFormat = new Intl.NumberFormat("en-US");
const moneyFormat = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const priceFormat = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 4 });

export function num(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : numberFormat.format(value);
}

/** Micro-units of money as dollars: 1234560000 -> "$1,234.56". */
export function money(micros: number | null | undefined): string {
  if (micros === null || micros === undefined) return "—";
  const sign = micros < 0 ? "-" : "";
  return `${sign}$${moneyFormat.format(Math.abs(micros) / 1_000_000)}`;
}

/** Micro-units of a price or of contracts as a plain decimal: 455000 -> "0.455". */
export function decimal(micros: number | null | undefined): string {
  return micros === null || micros === undefined ? "—" : priceFormat.format(micros / 1_000_000);
}
