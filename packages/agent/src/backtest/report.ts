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
}

const WIDTH = 960;
const HEIGHT = 260;
const PAD = { left: 72, right: 16, top: 14, bottom: 28 };

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

const money = (v: number) => grouped(v.toFixed(2));
const pct = (v: number | null) => (v === null ? "–" : `${(v * 100).toFixed(2)} %`);
const num = (v: number | null, digits = 2) => (v === null ? "–" : grouped(v.toFixed(digits)));
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
  points: Array<[number, number]>;
  format: (v: number) => string;
  kind: "equity" | "drawdown";
  baseline?: number;
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
    lo = Math.min(lo, 0);
    hi = 0;
  }
  if (hi - lo < 1e-9) {
    const pad = Math.abs(hi) * 0.01 || 1;
    hi += pad;
    lo -= spec.kind === "drawdown" ? 0 : pad;
    if (spec.kind === "drawdown") lo = -0.01;
  }
  const w = WIDTH - PAD.left - PAD.right;
  const h = HEIGHT - PAD.top - PAD.bottom;
  const x = (t: number) => PAD.left + (t1 > t0 ? ((t - t0) / (t1 - t0)) * w : w / 2);
  const y = (v: number) => PAD.top + ((hi - v) / (hi - lo)) * h;
  const f = (v: number) => v.toFixed(1);
  const line = points.map((p, i) => `${i === 0 ? "M" : "L"}${f(x(p[0]))},${f(y(p[1]))}`).join("");
  const floor = spec.kind === "drawdown" ? y(0) : y(lo);
  const area = `${line}L${f(x(t1))},${f(floor)}L${f(x(t0))},${f(floor)}Z`;
  const ticks = [hi, (hi + lo) / 2, lo]
    .map(
      (v) =>
        `<line class="grid" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${f(y(v))}" y2="${f(y(v))}"/>` +
        `<text class="axis" x="${PAD.left - 8}" y="${f(y(v) + 4)}" text-anchor="end">${esc(spec.format(v))}</text>`,
    )
    .join("");
  const span = t1 - t0;
  const when = span >= 3 * 86_400_000 ? day : minute;
  const xs = (span > 0 ? [t0, t0 + span / 2, t1] : [t0])
    .map((t, i, all) => {
      const anchor =
        all.length === 1 ? "middle" : i === 0 ? "start" : i === all.length - 1 ? "end" : "middle";
      return `<text class="axis" x="${f(x(t))}" y="${HEIGHT - 8}" text-anchor="${anchor}">${esc(when(t))}</text>`;
    })
    .join("");
  const base =
    spec.baseline !== undefined
      ? `<line class="base" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${f(y(spec.baseline))}" y2="${f(y(spec.baseline))}"/>`
      : "";
  return (
    `<svg class="chart ${spec.kind}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${esc(spec.label)}">` +
    `<title>${esc(spec.label)}</title>${ticks}${base}<path class="area" d="${area}"/><path class="line" d="${line}"/>${xs}</svg>`
  );
}

function table(headers: string[], rows: string[][], numeric: number[] = []): string {
  const right = new Set(numeric);
  const th = headers.map((h, i) => `<th${right.has(i) ? ' class="num"' : ""}>${esc(h)}</th>`).join("");
  const body = rows
    .map((r) => `<tr>${r.map((c, i) => `<td${right.has(i) ? ' class="num"' : ""}>${c}</td>`).join("")}</tr>`)
    .join("\n");
  return `<div class="scroll"><table><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table></div>`;
}

const CSS = `
:root{--bg:#fff;--fg:#1b1f24;--muted:#5d6670;--line:#e3e6ea;--card:#f6f8fa;--accent:#2463eb;--bad:#c62828;--good:#1b7f3b}
@media (prefers-color-scheme:dark){:root{--bg:#0f1216;--fg:#e6e9ed;--muted:#98a2ad;--line:#2a3038;--card:#171b21;--accent:#6ea0ff;--bad:#ff6b6b;--good:#4cc37a}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1040px;margin:0 auto;padding:24px 16px 48px}h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 8px}
.muted{color:var(--muted)}.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px;margin-top:18px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 12px}.card .k{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.card .v{font-size:20px;font-weight:600;font-variant-numeric:tabular-nums}.good{color:var(--good)}.bad{color:var(--bad)}
.chart{width:100%;height:auto;display:block;background:var(--card);border:1px solid var(--line);border-radius:8px}
.chart .grid{stroke:var(--line);stroke-width:1}.chart .base{stroke:var(--muted);stroke-dasharray:4 4}.chart .axis{fill:var(--muted);font-size:12px}
.chart .line{fill:none;stroke-width:1.6}.equity .line{stroke:var(--accent)}.equity .area{fill:var(--accent);opacity:.08}
.drawdown .line{stroke:var(--bad)}.drawdown .area{fill:var(--bad);opacity:.15}
.scroll{overflow-x:auto;border:1px solid var(--line);border-radius:8px}table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap}th{background:var(--card);position:sticky;top:0}
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
  const dd = drawdownSeries(equity, result.initialCash).map((v) => -v);
  const tone = (v: number | null) => (v === null || v === 0 ? "" : v > 0 ? "good" : "bad");
  const cards: Array<[string, string, string]> = [
    ["Final equity", money(result.finalEquity), tone(result.finalEquity - result.initialCash)],
    ["Total return", pct(m.totalReturn), tone(m.totalReturn)],
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
    esc(t.market_id),
    esc(t.side),
    esc(t.outcome),
    esc(`${t.type} (${t.liquidity})`),
    esc(price(t.price)),
    esc(num(t.amount)),
    esc(money(t.fee)),
    t.side === "sell" ? `<span class="${tone(t.realized_pnl)}">${esc(money(t.realized_pnl))}</span>` : "",
  ]);
  const positions = result.positions.map((p) => [
    esc(p.market_id),
    esc(p.outcome),
    esc(num(p.size)),
    esc(price(p.avg_price)),
    esc(price(p.mark)),
    esc(money(p.value)),
    `<span class="${tone(p.unrealized_pnl)}">${esc(money(p.unrealized_pnl))}</span>`,
  ]);
  const resolutions = result.resolutions.map((r) => [
    esc(minute(Date.parse(r.timestamp))),
    esc(r.market_id),
    esc(r.outcome.toUpperCase()),
    esc(money(r.payout)),
  ]);
  const rejected = result.rejected.map((r) => [
    esc(minute(Date.parse(r.timestamp))),
    esc(r.market_id),
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
<p class="muted">${esc(result.markets.join(", "))}<br>${esc(result.interval)} candles from ${esc(result.from)} to ${esc(result.to)} ·
${grouped(String(result.candles))} candles, ${grouped(String(result.steps))} steps · initial cash ${esc(money(result.initialCash))}</p>
<div class="cards">${cardHtml}</div>
<h2>Equity</h2>
${chart({ label: "Equity curve", points: downsample(time, equity, 1200), format: money, kind: "equity", baseline: result.initialCash })}
<h2>Drawdown</h2>
${chart({ label: "Drawdown", points: downsample(time, dd, 1200), format: (v) => `${(v * 100).toFixed(1)} %`, kind: "drawdown" })}
<h2>Trades</h2>
${note}${result.trades.length ? table(["Time (UTC)", "Market", "Side", "Outcome", "Type", "Price", "Amount", "Fee", "Realized PnL"], tradeRows, [5, 6, 7, 8]) : '<p class="muted">No trades.</p>'}
${positions.length ? `<h2>Open positions at the end</h2>\n${table(["Market", "Outcome", "Size", "Avg price", "Mark", "Value", "Unrealized PnL"], positions, [2, 3, 4, 5, 6])}` : ""}
${resolutions.length ? `<h2>Resolutions</h2>\n${table(["Time (UTC)", "Market", "Outcome", "Payout"], resolutions, [3])}` : ""}
${cancelledNote}
${rejected.length ? `<details><summary>Rejected orders (${grouped(String(rejected.length))})</summary>\n${table(["Time (UTC)", "Market", "Order", "Price", "Amount", "Reason", "Detail"], rejected, [3, 4])}</details>` : ""}
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
