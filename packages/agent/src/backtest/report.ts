/** A self-contained HTML report of a backtest: inline CSS and SVG, no scripts, nothing fetched. */
import { writeFile } from "node:fs/promises";
import { drawdownSeries } from "./metrics.js";
import type { BacktestResult } from "./types.js";

/**
 * Options of `renderReport` / `writeReport`.
 *
 * @example
 * await writeReport(result, "report.html", { title: "Momentum", maxTrades: 200 });
 */
export interface ReportOptions {
  /** Page title (default "Backtest report"). */
  title?: string;
  /** Most trades listed in the table (default 1000; the first and last halves when there are more). */
  maxTrades?: number;
  /** Market titles by id, over those the result carries (`result.titles`). */
  titles?: Readonly<Record<string, string>>;
}

const WIDTH = 960;
const HEIGHT = 290;
// Room for the y tick labels and the rotated axis title on the left, the x labels and title below.
const PAD = { left: 92, right: 20, top: 14, bottom: 52 };

function esc(text: unknown): string {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function grouped(fixed: string): string {
  const [whole = "", fraction] = fixed.split(".");
  const sign = whole.startsWith("-") ? "-" : "";
  const digits = sign ? whole.slice(1) : whole;
  const withCommas = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${sign}${withCommas}${fraction !== undefined ? `.${fraction}` : ""}`;
}

/** `v.toFixed(digits)` without a negative zero: -0.0001 is "0.00", not "-0.00". */
function fixed(v: number, digits: number): string {
  const text = v.toFixed(digits);
  return /^-0(\.0*)?$/.test(text) ? text.slice(1) : text;
}

const money = (v: number) => grouped(fixed(v, 2));
const pct = (v: number | null) => (v === null ? "–" : `${fixed(v * 100, 2)} %`);
const num = (v: number | null, digits = 2) => (v === null ? "–" : grouped(fixed(v, digits)));
const price = (v: number | null) => (v === null ? "–" : String(Number(v.toFixed(6))));
const day = (t: number) => new Date(t).toISOString().slice(0, 10);
const minute = (t: number) => new Date(t).toISOString().slice(0, 16).replace("T", " ");

/** At most ~2 points per pixel column: each bucket keeps its lowest and highest point, in time order. */
function downsample(
  time: readonly number[],
  values: readonly number[],
  buckets: number,
): Array<[number, number]> {
  const n = values.length;
  if (n <= buckets * 2) return values.map((v, i) => [time[i]!, v]);
  const out: Array<[number, number]> = [];
  const size = n / buckets;
  for (let b = 0; b < buckets; b++) {
    const start = Math.floor(b * size);
    const end = Math.min(n, Math.floor((b + 1) * size));
    let lo = start;
    let hi = start;
    for (let i = start; i < end; i++) {
      if (values[i]! < values[lo]!) lo = i;
      if (values[i]! > values[hi]!) hi = i;
    }
    const first = Math.min(lo, hi);
    const second = Math.max(lo, hi);
    out.push([time[first]!, values[first]!]);
    if (second !== first) out.push([time[second]!, values[second]!]);
  }
  return out;
}

interface ChartSpec {
  label: string;
  /** The y axis's title, with its unit. */
  axis: string;
  /** Points in the axis's unit (USD, or percent for the drawdown). */
  points: Array<[number, number]>;
  unit: "usd" | "pct";
  kind: "equity" | "drawdown";
  baseline?: number;
}

/** A round step (1, 2, 2.5 or 5 × 10^k) that cuts `span` into about `count` parts. */
function niceStep(span: number, count: number): number {
  const raw = span / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const n = raw / magnitude;
  return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 2.5 ? 2.5 : n <= 5 ? 5 : 10) * magnitude;
}

/** Decimals that show every multiple of `step` exactly (2.5 → 1, 0.25 → 2, 50 → 0). */
function decimalsOf(step: number): number {
  for (let d = 0; d < 8; d++) if (Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) < 1e-6) return d;
  return 8;
}

/** Y ticks: the domain widened to round values, and every step between. */
function valueTicks(lo: number, hi: number): { lo: number; hi: number; ticks: number[]; digits: number } {
  const step = niceStep(hi - lo, 5);
  const first = Math.floor(lo / step + 1e-9);
  const last = Math.ceil(hi / step - 1e-9);
  const ticks: number[] = [];
  for (let i = first; i <= last; i++) ticks.push(i * step);
  return { lo: first * step, hi: last * step, ticks, digits: decimalsOf(step) };
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const TIME_STEPS = [
  MINUTE,
  5 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
  14 * DAY,
];

/** X ticks at round UTC times (minutes, hours, midnights, first days of months), at most ~7. */
function timeTicks(t0: number, t1: number): { ticks: number[]; label: (t: number) => string } {
  const span = t1 - t0;
  if (span <= 0) return { ticks: [t0], label: minute };
  const step = TIME_STEPS.find((s) => span / s <= 7);
  if (step !== undefined) {
    const ticks: number[] = [];
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) ticks.push(t);
    // Under a minute or so no round time falls inside: label both ends instead.
    if (ticks.length < 2)
      return { ticks: [t0, t1], label: (t: number) => new Date(t).toISOString().slice(11, 19) };
    const sameDay = day(t0) === day(t1);
    const label =
      step >= DAY
        ? day
        : sameDay
          ? (t: number) => new Date(t).toISOString().slice(11, 16)
          : (t: number) => new Date(t).toISOString().slice(5, 16).replace("T", " ");
    return { ticks, label };
  }
  // Months: the first of every 1, 2, 3, 6 or 12 months.
  const months =
    [1, 2, 3, 6, 12].find((m) => span / (m * 30.44 * DAY) <= 7) ?? 12 * Math.ceil(span / (7 * 365.25 * DAY));
  const start = new Date(t0);
  let y = start.getUTCFullYear();
  let m = start.getUTCMonth() + (Date.UTC(y, start.getUTCMonth(), 1) < t0 ? 1 : 0);
  m = Math.ceil(m / months) * months;
  const ticks: number[] = [];
  for (;;) {
    y += Math.floor(m / 12);
    m %= 12;
    const t = Date.UTC(y, m, 1);
    if (t > t1) break;
    ticks.push(t);
    m += months;
  }
  return { ticks, label: (t: number) => new Date(t).toISOString().slice(0, 7) };
}

function chart(spec: ChartSpec): string {
  const { points } = spec;
  if (points.length === 0)
    return `<p class="muted">No ${esc(spec.label.toLowerCase())} to draw: no candle was replayed.</p>`;
  const t0 = points[0]![0];
  const t1 = points[points.length - 1]![0];
  let lo = Math.min(...points.map((p) => p[1]));
  let hi = Math.max(...points.map((p) => p[1]));
  if (spec.baseline !== undefined) {
    lo = Math.min(lo, spec.baseline);
    hi = Math.max(hi, spec.baseline);
  }
  if (spec.kind === "drawdown") {
    // From 0 down, at least 1 %: a drawdown of a few hundredths of a percent stays a sliver.
    hi = 0;
    lo = Math.min(lo, -1);
  } else if (hi - lo < Math.max(Math.abs(hi) * 0.01, 0.01)) {
    // A flat curve: a band of ±0.5 % around it, so the ticks are not all the same number.
    const pad = Math.max(Math.abs(hi) * 0.005, 0.005);
    hi += pad;
    lo -= pad;
  }
  const y = valueTicks(lo, hi);
  const format = (v: number) =>
    spec.unit === "pct" ? `${fixed(v, y.digits)} %` : grouped(fixed(v, Math.max(y.digits, 0)));
  const w = WIDTH - PAD.left - PAD.right;
  const h = HEIGHT - PAD.top - PAD.bottom;
  const x = (t: number) => PAD.left + (t1 > t0 ? ((t - t0) / (t1 - t0)) * w : w / 2);
  const yOf = (v: number) => PAD.top + ((y.hi - v) / (y.hi - y.lo)) * h;
  const f = (v: number) => v.toFixed(1);
  const bottom = PAD.top + h;
  const line = points.map((p, i) => `${i === 0 ? "M" : "L"}${f(x(p[0]))},${f(yOf(p[1]))}`).join("");
  const floor = spec.kind === "drawdown" ? yOf(0) : bottom;
  const area = `${line}L${f(x(t1))},${f(floor)}L${f(x(t0))},${f(floor)}Z`;
  const yTicks = y.ticks
    .map(
      (v) =>
        `<line class="grid" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${f(yOf(v))}" y2="${f(yOf(v))}"/>` +
        `<text class="axis" x="${PAD.left - 8}" y="${f(yOf(v) + 4)}" text-anchor="end">${esc(format(v))}</text>`,
    )
    .join("");
  const time = timeTicks(t0, t1);
  const xTicks = time.ticks
    .map((t) => {
      const at = f(x(t));
      // Labels at the plot's edges stay inside the chart.
      const anchor = x(t) - PAD.left < 40 ? "start" : WIDTH - PAD.right - x(t) < 40 ? "end" : "middle";
      return (
        `<line class="tick" x1="${at}" x2="${at}" y1="${f(bottom)}" y2="${f(bottom + 5)}"/>` +
        `<text class="axis" x="${at}" y="${f(bottom + 19)}" text-anchor="${anchor}">${esc(time.label(t))}</text>`
      );
    })
    .join("");
  const base =
    spec.baseline !== undefined
      ? `<line class="base" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${f(yOf(spec.baseline))}" y2="${f(yOf(spec.baseline))}"/>`
      : "";
  const titles =
    `<text class="axis-title" transform="rotate(-90)" x="${f(-(PAD.top + h / 2))}" y="16" text-anchor="middle">${esc(spec.axis)}</text>` +
    `<text class="axis-title" x="${f(PAD.left + w / 2)}" y="${HEIGHT - 6}" text-anchor="middle">Time (UTC)</text>`;
  return (
    `<svg class="chart ${spec.kind}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${esc(spec.label)}">` +
    `<title>${esc(spec.label)}</title>${yTicks}${base}<path class="area" d="${area}"/><path class="line" d="${line}"/>` +
    `<line class="axis-line" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${f(bottom)}" y2="${f(bottom)}"/>${xTicks}${titles}</svg>`
  );
}

/**
 * A table in its own horizontal scroller: `numeric` columns are right-aligned, `wrap` columns
 * (titles, messages) wrap instead of widening the table.
 */
function table(headers: string[], rows: string[][], numeric: number[] = [], wrap: number[] = []): string {
  const classOf = (i: number) => {
    const names = [numeric.includes(i) ? "num" : "", wrap.includes(i) ? "wrap" : ""].filter(Boolean);
    return names.length ? ` class="${names.join(" ")}"` : "";
  };
  const th = headers.map((h, i) => `<th${classOf(i)}>${esc(h)}</th>`).join("");
  const body = rows
    .map((r) => `<tr>${r.map((c, i) => `<td${classOf(i)}>${c}</td>`).join("")}</tr>`)
    .join("\n");
  return `<div class="scroll"><table><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table></div>`;
}

const CSS = `
:root{--bg:#fff;--fg:#1b1f24;--muted:#5d6670;--line:#e3e6ea;--card:#f6f8fa;--accent:#2463eb;--bad:#c62828;--good:#1b7f3b}
@media (prefers-color-scheme:dark){:root{--bg:#0f1216;--fg:#e6e9ed;--muted:#98a2ad;--line:#2a3038;--card:#171b21;--accent:#6ea0ff;--bad:#ff6b6b;--good:#4cc37a}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1040px;min-width:0;margin:0 auto;padding:24px 16px 48px}h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 8px}
h1,p{overflow-wrap:anywhere}.id{display:block;font-size:12px;color:var(--muted);overflow-wrap:anywhere}.id.only{font-size:inherit;color:inherit}.mid{color:var(--muted);font-size:13px}
.muted{color:var(--muted)}.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px;margin-top:18px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 12px}.card .k{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.card .v{font-size:20px;font-weight:600;font-variant-numeric:tabular-nums}.good{color:var(--good)}.bad{color:var(--bad)}
.chart{width:100%;height:auto;display:block;background:var(--card);border:1px solid var(--line);border-radius:8px}
.chart .grid{stroke:var(--line);stroke-width:1}.chart .base{stroke:var(--muted);stroke-dasharray:4 4}.chart .axis{fill:var(--muted);font-size:12px}
.chart .axis-title{fill:var(--muted);font-size:13px;font-weight:600}.chart .tick,.chart .axis-line{stroke:var(--muted);stroke-width:1}
.chart .line{fill:none;stroke-width:1.6}.equity .line{stroke:var(--accent)}.equity .area{fill:var(--accent);opacity:.08}
.drawdown .line{stroke:var(--bad)}.drawdown .area{fill:var(--bad);opacity:.15}
.scroll{max-width:100%;overflow-x:auto;border:1px solid var(--line);border-radius:8px}table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap;vertical-align:top}th{background:var(--card);position:sticky;top:0}
td.wrap{white-space:normal;min-width:14ch;max-width:36ch;overflow-wrap:anywhere}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}tr:last-child td{border-bottom:0}details{margin-top:12px}summary{cursor:pointer;font-weight:600}
`;

/**
 * The report as one HTML string: summary figures, the equity curve and drawdown as inline SVG, and
 * tables of trades, positions, resolutions and rejected orders. No script, stylesheet or font is
 * loaded from anywhere.
 *
 * @example
 * const html = renderReport(result, { title: "Momentum, Jan 2026" });
 */
export function renderReport(result: BacktestResult, options: ReportOptions = {}): string {
  const title = options.title ?? "Backtest report";
  const maxTrades = Math.max(0, Math.floor(options.maxTrades ?? 1000));
  const m = result.metrics;
  const { time, equity } = result.equityCurve;
  // In percent, below zero.
  const dd = drawdownSeries(equity, result.initialCash).map((v) => -v * 100);
  const titles: Readonly<Record<string, string>> = { ...result.titles, ...options.titles };
  /** A market by its title, its id beneath (the id alone when no title is known). */
  const market = (id: string) =>
    titles[id]
      ? `${esc(titles[id])}<span class="id">${esc(id)}</span>`
      : `<span class="id only">${esc(id)}</span>`;
  // Below the shown precision a figure is neither good nor bad: "0.00 %" is not painted red.
  const tone = (v: number | null, shownTo = 0) =>
    v === null || Math.abs(v) < shownTo / 2 || v === 0 ? "" : v > 0 ? "good" : "bad";
  const cards: Array<[string, string, string]> = [
    ["Final equity", money(result.finalEquity), tone(result.finalEquity - result.initialCash, 0.01)],
    ["Total return", pct(m.totalReturn), tone(m.totalReturn, 0.0001)],
    ["Sharpe (annualised)", num(m.sharpe), tone(m.sharpe)],
    ["Max drawdown", pct(m.maxDrawdown), m.maxDrawdown > 0 ? "bad" : ""],
    [
      "Win rate",
      m.winRate === null ? "–" : `${pct(m.winRate)} <span class="muted">(${m.wins}/${m.roundTrips})</span>`,
      "",
    ],
    [
      "Brier score",
      m.brier === null ? "–" : `${num(m.brier, 4)} <span class="muted">(${m.predictions})</span>`,
      "",
    ],
    ["Trades", grouped(String(result.trades.length)), ""],
    ["Fees", money(m.fees), ""],
    ["Rejected orders", grouped(String(result.rejected.length)), result.rejected.length > 0 ? "bad" : ""],
  ];
  const cardHtml = cards
    .map(
      ([k, v, cls]) =>
        `<div class="card"><div class="k">${esc(k)}</div><div class="v ${cls}">${v}</div></div>`,
    )
    .join("");

  let shown = result.trades;
  let note = "";
  if (result.trades.length > maxTrades) {
    const half = Math.ceil(maxTrades / 2);
    shown = [
      ...result.trades.slice(0, half),
      ...result.trades.slice(result.trades.length - (maxTrades - half)),
    ];
    note = `<p class="muted">${grouped(String(result.trades.length))} trades: the first ${half} and the last ${maxTrades - half} are listed.</p>`;
  }
  const tradeRows = shown.map((t) => [
    esc(minute(Date.parse(t.timestamp))),
    market(t.market_id),
    esc(t.side),
    esc(t.outcome.toUpperCase()),
    esc(`${t.type} (${t.liquidity})`),
    esc(price(t.price)),
    esc(num(t.amount)),
    esc(money(t.fee)),
    t.side === "sell"
      ? `<span class="${tone(t.realized_pnl, 0.01)}">${esc(money(t.realized_pnl))}</span>`
      : "",
  ]);
  const positions = result.positions.map((p) => [
    market(p.market_id),
    esc(p.outcome.toUpperCase()),
    esc(num(p.size)),
    esc(price(p.avg_price)),
    esc(price(p.mark)),
    esc(money(p.value)),
    `<span class="${tone(p.unrealized_pnl, 0.01)}">${esc(money(p.unrealized_pnl))}</span>`,
  ]);
  const resolutions = result.resolutions.map((r) => [
    esc(minute(Date.parse(r.timestamp))),
    market(r.market_id),
    esc(r.outcome.toUpperCase()),
    esc(money(r.payout)),
  ]);
  const rejected = result.rejected.map((r) => [
    esc(minute(Date.parse(r.timestamp))),
    market(r.market_id),
    esc(`${r.side} ${r.outcome} ${r.type}`),
    esc(price(r.price)),
    esc(num(r.amount)),
    esc(r.reason),
    esc(r.message),
  ]);
  const cancelledNote = result.cancelled.length
    ? `<p class="muted">${grouped(String(result.cancelled.length))} orders cancelled (${esc(
        ["cancelled", "market_resolved", "backtest_end"]
          .map((reason) => [reason, result.cancelled.filter((c) => c.reason === reason).length] as const)
          .filter(([, n]) => n > 0)
          .map(([reason, n]) => `${reason}: ${n}`)
          .join(", "),
      )}).</p>`
    : "";

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${CSS}</style>
</head>
<body>
<main>
<h1>${esc(title)}</h1>
<p class="muted">${result.markets.map((id) => (titles[id] ? `${esc(titles[id])} <span class="mid">(${esc(id)})</span>` : esc(id))).join("; ")}<br>${esc(result.interval)} candles from ${esc(result.from)} to ${esc(result.to)} ·
${grouped(String(result.candles))} candles, ${grouped(String(result.steps))} steps · initial cash ${esc(money(result.initialCash))}</p>
<div class="cards">${cardHtml}</div>
<h2>Equity</h2>
${chart({ label: "Equity curve", axis: "Equity (USD)", points: downsample(time, equity, 1200), unit: "usd", kind: "equity", baseline: result.initialCash })}
<h2>Drawdown</h2>
${chart({ label: "Drawdown", axis: "Drawdown (%)", points: downsample(time, dd, 1200), unit: "pct", kind: "drawdown" })}
<h2>Trades</h2>
${note}${result.trades.length ? table(["Time (UTC)", "Market", "Side", "Outcome", "Type", "Price", "Amount", "Fee", "Realized PnL"], tradeRows, [5, 6, 7, 8], [1]) : '<p class="muted">No trades.</p>'}
${positions.length ? `<h2>Open positions at the end</h2>\n${table(["Market", "Outcome", "Size", "Avg price", "Mark", "Value", "Unrealized PnL"], positions, [2, 3, 4, 5, 6], [0])}` : ""}
${resolutions.length ? `<h2>Resolutions</h2>\n${table(["Time (UTC)", "Market", "Outcome", "Payout"], resolutions, [3], [1])}` : ""}
${cancelledNote}
${rejected.length ? `<details><summary>Rejected orders (${grouped(String(rejected.length))})</summary>\n${table(["Time (UTC)", "Market", "Order", "Price", "Amount", "Reason", "Detail"], rejected, [3, 4], [1, 6])}</details>` : ""}
</main>
</body>
</html>
`;
}

/**
 * Writes `renderReport(result)` to `path`: one HTML file that opens anywhere, offline.
 *
 * @example
 * await writeReport(result, "backtest.html");
 */
export async function writeReport(
  result: BacktestResult,
  path: string,
  options: ReportOptions = {},
): Promise<void> {
  await writeFile(path, renderReport(result, options), "utf8");
}
