/**
 * Usage in the console: per API key, the requests of this minute against its per-minute limit, and
 * the last 24 hours in 15-minute slots (admitted requests and 429s), so a user can see when and why
 * a key was limited. The chart is inline SVG drawn here (no chart library), with a title, a
 * description and the same figures as a table for readers who cannot see it.
 */
import type { FastifyInstance } from "fastify";
import type { ApiKey } from "../apikeys/service";
import type { KeyUsageReport, UsageSlot } from "../apikeys/usage";
import { render, requireUser } from "./context";
import { html, type SafeHtml } from "./html";
import { num, time } from "./layout";
import type { ConsoleDeps } from "./plugin";

const HOURS = 24;
const SLOT_MINUTES = 15;

// The chart's drawing box (viewBox units; the SVG scales to the page's width).
const W = 960;
const H = 220;
const LEFT = 52;
const RIGHT = 8;
const TOP = 26;
const BOTTOM = 24;
const PLOT_W = W - LEFT - RIGHT;
const PLOT_H = H - TOP - BOTTOM;
// The stylesheet's accent and danger colours: presentation attributes, as the CSP forbids inline styles.
const ADMITTED = "#1f5fbf";
const LIMITED = "#b42318";
const GRID = "#d9dee4";
const INK = "#5b6875";

/** "1 minute", "3 minutes". */
const minutes = (n: number) => `${num(n)} minute${n === 1 ? "" : "s"}`;

/** The smallest 1, 2 or 5 times a power of ten at or above `value` (an axis' top). */
function niceCeiling(value: number): number {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

/** Bars of admitted requests with the 429s stacked on top, one per slot. */
function chart(id: string, key: ApiKey, report: KeyUsageReport, limit: number): SafeHtml {
  const slots = report.slots;
  const top = niceCeiling(Math.max(...slots.map((s) => s.requests + s.limited), 1));
  const y = (value: number) => TOP + PLOT_H - (value / top) * PLOT_H;
  const slotW = PLOT_W / slots.length;
  const barW = Math.max(1, slotW * 0.8);
  const f = (n: number) => n.toFixed(1);
  const bars = slots.map((s, i) => {
    const x = f(LEFT + i * slotW + (slotW - barW) / 2);
    const parts: SafeHtml[] = [];
    if (s.requests > 0)
      parts.push(
        html`<rect x="${x}" y="${f(y(s.requests))}" width="${f(barW)}" height="${f(y(0) - y(s.requests))}" fill="${ADMITTED}"/>`,
      );
    if (s.limited > 0)
      parts.push(
        html`<rect x="${x}" y="${f(y(s.requests + s.limited))}" width="${f(barW)}" height="${f(y(s.requests) - y(s.requests + s.limited))}" fill="${LIMITED}"/>`,
      );
    return parts;
  });
  const grid = [0, top / 2, top].map(
    (
      v,
    ) => html`<line x1="${LEFT}" x2="${W - RIGHT}" y1="${f(y(v))}" y2="${f(y(v))}" stroke="${GRID}" stroke-width="1"/>
      <text x="${LEFT - 6}" y="${f(y(v) + 4)}" text-anchor="end" font-size="12" fill="${INK}">${num(v)}</text>`,
  );
  // Hours before now rather than clock times: the server does not know the reader's time zone.
  const ticks = [0, 6, 12, 18, 24].map((hoursAgo) => {
    const x = LEFT + PLOT_W - (hoursAgo / HOURS) * PLOT_W;
    const anchor = hoursAgo === 0 ? "end" : hoursAgo === HOURS ? "start" : "middle";
    return html`<text x="${f(x)}" y="${H - 6}" text-anchor="${anchor}" font-size="12" fill="${INK}">${
      hoursAgo === 0 ? "now" : `${hoursAgo} h ago`
    }</text>`;
  });
  const t = report.totals;
  const description = `Requests per ${SLOT_MINUTES} minutes over the last ${HOURS} hours: ${num(t.requests)} admitted and ${num(
    t.limited,
  )} refused with 429${t.limited > 0 ? ` in ${minutes(t.limitedMinutes)}` : ""}. The busiest minute had ${num(
    t.peak,
  )} requests against a limit of ${num(limit)} per minute.`;
  return html`<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="${id}-title ${id}-desc" focusable="false">
    <title id="${id}-title">Requests of “${key.name}”, last ${HOURS} hours</title>
    <desc id="${id}-desc">${description}</desc>
    ${grid}
    ${bars}
    <rect x="${LEFT}" y="6" width="12" height="12" fill="${ADMITTED}"/>
    <text x="${LEFT + 16}" y="16" font-size="12" fill="${INK}">admitted</text>
    <rect x="${LEFT + 90}" y="6" width="12" height="12" fill="${LIMITED}"/>
    <text x="${LEFT + 106}" y="16" font-size="12" fill="${INK}">refused (429)</text>
    ${ticks}
  </svg>`;
}

/** The chart's figures as a table: the slots that saw any request, newest first. */
function slotTable(slots: UsageSlot[]): SafeHtml {
  const used = slots.filter((s) => s.requests + s.limited > 0).reverse();
  if (used.length === 0) return html`<p class="muted">No requests in the last ${HOURS} hours.</p>`;
  return html`<table class="responsive">
    <thead><tr><th scope="col">${SLOT_MINUTES} minutes from</th><th scope="col" class="num">Admitted</th>
      <th scope="col" class="num">Refused (429)</th><th scope="col" class="num">Busiest minute</th>
      <th scope="col" class="num">Minutes limited</th></tr></thead>
    <tbody>${used.map(
      (s) => html`<tr>
        <td data-label="From">${time(new Date(s.start).toISOString())}</td>
        <td data-label="Admitted" class="num">${num(s.requests)}</td>
        <td data-label="Refused (429)" class="num">${num(s.limited)}</td>
        <td data-label="Busiest minute" class="num">${num(s.peak)}</td>
        <td data-label="Minutes limited" class="num">${num(s.limitedMinutes)}</td>
      </tr>`,
    )}</tbody>
  </table>`;
}

/** In words, what the figures mean for this key: limited now, earlier, or not at all. */
function verdict(report: KeyUsageReport, limit: number, resetSeconds: number): SafeHtml {
  const now = report.thisMinute;
  const t = report.totals;
  if (now.limited > 0)
    return html`<p class="flash error" role="status"><strong>Limited now.</strong> This key has used all ${num(
      limit,
    )} requests of this minute and ${num(now.limited)} more were refused with 429. Its budget is whole again in ${num(
      resetSeconds,
    )} s.</p>`;
  if (t.limited > 0)
    return html`<p class="flash warn" role="status">${num(t.limited)} requests were refused with 429 in the last ${HOURS}
      hours, in ${minutes(t.limitedMinutes)}: the busiest minute had ${num(t.peak)} requests against a limit of
      ${num(limit)} per minute. Spread the requests out, or move to a tier with a higher limit.</p>`;
  if (t.requests > 0)
    return html`<p class="muted">No request refused in the last ${HOURS} hours; the busiest minute used ${num(
      t.peak,
    )} of ${num(limit)}.</p>`;
  return html`<p class="muted">No requests in the last ${HOURS} hours.</p>`;
}

export function registerUsagePages(app: FastifyInstance, deps: ConsoleDeps): void {
  app.get("/usage", async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    const all = await deps.apiKeys.list(user.account.id);
    const reports = await deps.usage.report(
      all.map((k) => k.id),
      { hours: HOURS, slotMinutes: SLOT_MINUTES },
    );
    // Active keys, and revoked ones only while their last day still shows traffic.
    const keys = all
      .filter((k) => {
        const t = reports.get(k.id)!.totals;
        return !k.revoked_at || t.requests + t.limited > 0;
      })
      .sort(
        (a, b) => Number(a.revoked_at !== null) - Number(b.revoked_at !== null) || (a.id < b.id ? 1 : -1),
      );
    const now = deps.clock.now();
    const resetSeconds = Math.max(1, Math.ceil((60_000 - (now % 60_000)) / 1000));
    const rows = keys.map((key) => ({
      key,
      report: reports.get(key.id)!,
      limit: deps.usage.limits(user.account, key.type).requests_per_minute,
    }));
    const environment = (k: ApiKey) =>
      k.environment === "live"
        ? html`<span class="badge warn">live</span>`
        : html`<span class="badge">sandbox</span>`;

    return render(request, reply, {
      title: "Usage",
      section: "usage",
      body: html`<h1>Usage</h1>
        <p class="muted">Each key may make a number of requests per minute (the rate limiter's windows start on the
          minute). Past it, requests are refused with <code>429 Too Many Requests</code> until the next minute starts.
          Counts from other instances of the service arrive within a few seconds.</p>
        ${
          rows.length === 0
            ? html`<p>No API keys yet. <a href="/console/keys">Create one</a> to see its usage here.</p>`
            : html`<table class="responsive usage">
              <caption class="muted">All keys at a glance</caption>
              <thead><tr><th scope="col">Key</th><th scope="col">Environment</th>
                <th scope="col" class="num">This minute</th><th scope="col" class="num">Limit per minute</th>
                <th scope="col" class="num">429s this minute</th><th scope="col" class="num">Requests, ${HOURS} h</th>
                <th scope="col" class="num">429s, ${HOURS} h</th></tr></thead>
              <tbody>${rows.map(
                ({ key, report, limit }) => html`<tr data-key-id="${key.id}">
                  <td data-label="Key"><span><a href="#key-${key.id}">${key.name}</a> <code class="nowrap">${key.prefix}…</code>${
                    key.revoked_at ? html` <span class="badge error nowrap">revoked</span>` : ""
                  }</span></td>
                  <td data-label="Environment">${environment(key)}</td>
                  <td data-label="This minute" class="num" data-testid="this-minute">${num(report.thisMinute.requests)}</td>
                  <td data-label="Limit per minute" class="num">${num(limit)}</td>
                  <td data-label="429s this minute" class="num" data-testid="limited-this-minute">${num(report.thisMinute.limited)}</td>
                  <td data-label="Requests, ${HOURS} h" class="num">${num(report.totals.requests)}</td>
                  <td data-label="429s, ${HOURS} h" class="num">${num(report.totals.limited)}</td>
                </tr>`,
              )}</tbody>
            </table>
            <h2>Key by key</h2>
            ${rows.map(({ key, report, limit }) => {
              const id = `key-${key.id}`;
              const used = report.thisMinute.requests;
              return html`<section class="card" id="${id}" aria-labelledby="${id}-heading">
                <h3 id="${id}-heading">${key.name} <code>${key.prefix}…</code> ${environment(key)}${
                  key.revoked_at ? html` <span class="badge error nowrap">revoked</span>` : ""
                }</h3>
                <div class="stats">
                  <div><div class="muted" id="${id}-now">This minute</div>
                    <div class="value">${num(used)} <span class="muted">of ${num(limit)}</span></div>
                    <meter min="0" max="${limit}" value="${Math.min(used, limit)}" low="${Math.floor(limit * 0.7)}"
                      high="${Math.floor(limit * 0.9)}" optimum="0" aria-labelledby="${id}-now">${num(used)} of ${num(limit)}</meter></div>
                  <div><div class="muted">Refused this minute</div><div class="value">${num(report.thisMinute.limited)}</div></div>
                  <div><div class="muted">Requests, ${HOURS} h</div><div class="value">${num(report.totals.requests)}</div></div>
                  <div><div class="muted">429s, ${HOURS} h</div><div class="value">${num(report.totals.limited)}</div></div>
                  <div><div class="muted">Busiest minute</div><div class="value">${num(report.totals.peak)}</div></div>
                </div>
                ${verdict(report, limit, resetSeconds)}
                ${chart(`${id}-chart`, key, report, limit)}
                <details><summary>The last ${HOURS} hours as a table</summary>${slotTable(report.slots)}</details>
              </section>`;
            })}`
        }`,
    });
  });
}
