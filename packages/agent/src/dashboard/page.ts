/**
 * The dashboard page: one self-contained HTML document (inline CSS and script, no CDN), laid out
 * in cards that stack on a phone. It reads `/api/state` once, then follows `/api/events` (SSE):
 * `price` events move prices, charts and live PnL; `state` events (sent when an account event
 * arrives, and by the periodic safety refresh) redraw balance, positions, orders, fills, alerts and
 * risk, and say whether the account stream is live (the header's "account" pill) and whether the
 * last refresh failed (the status badge turns red with the reason; balances are marked stale).
 *
 * Markets are shown by title (the id in the tooltip), outcomes as YES/NO badges with text. Each
 * card is a CSS container: below 520 px of card width the less important columns (`.opt`) go, below
 * 400 px each row stacks as a small card with labelled values, so no table scrolls sideways.
 *
 * The server's Content-Security-Policy runs only the inline `<style>` and `<script>` carrying that
 * response's nonce (no inline `style=` or `on…=` attributes: the risk bars are `<meter>`s), and the
 * page sends no token: the session cookie rides along on its same-origin requests.
 */
const NONCE = "{{nonce}}";

/** The page for one response, its `<style>` and `<script>` tagged with that response's CSP nonce. */
export function dashboardPage(nonce: string): string {
  if (!/^[A-Za-z0-9+/=]+$/.test(nonce)) throw new TypeError("a CSP nonce is base64");
  return DASHBOARD_HTML.replaceAll(NONCE, nonce);
}

const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>crossbook agent</title>
<style nonce="${NONCE}">
  :root { --bg:#0f1419; --card:#182029; --line:#2a3541; --text:#e6edf3; --dim:#8b99a8; --up:#3fb950; --down:#f85149; --warn:#d29922; --accent:#58a6ff; --yes:#2ea0b8; --no:#c2702d; }
  * { box-sizing: border-box; }
  body { margin:0; font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif; background:var(--bg); color:var(--text); }
  header { display:flex; flex-wrap:wrap; gap:10px 28px; align-items:center; padding:12px 18px; border-bottom:1px solid var(--line); }
  header h1 { font-size:16px; margin:0; color:var(--accent); }
  .kpis { display:flex; flex-wrap:wrap; gap:10px 28px; }
  .kpi { display:flex; flex-direction:column; } .kpi b { font-size:22px; font-variant-numeric:tabular-nums; } .kpi span { color:var(--dim); font-size:12px; }
  .badges { display:flex; flex-wrap:wrap; gap:6px 8px; align-items:center; margin-left:auto; }
  main { display:grid; gap:14px; padding:14px; align-items:start; grid-template-columns:repeat(auto-fit, minmax(min(100%, 520px), 1fr)); }
  section { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:12px 14px; min-width:0; container-type:inline-size; }
  h2 { font-size:13px; text-transform:uppercase; letter-spacing:.06em; color:var(--dim); margin:0 0 8px; }
  table { width:100%; border-collapse:collapse; font-variant-numeric:tabular-nums; }
  th, td { text-align:right; padding:5px 6px; border-bottom:1px solid var(--line); white-space:nowrap; vertical-align:middle; }
  th:first-child, td:first-child { text-align:left; }
  th { color:var(--dim); font-weight:500; font-size:12px; }
  td.market { white-space:normal; overflow-wrap:anywhere; text-align:left; width:100%; min-width:12ch; }
  td.market .t { display:block; }
  td.c { text-align:center; }
  .up { color:var(--up); } .down { color:var(--down); } .dim { color:var(--dim); }
  .oc { display:inline-block; min-width:3.2em; text-align:center; padding:0 6px; border-radius:4px; font-size:11px; font-weight:700; letter-spacing:.04em; color:#0f1419; }
  .oc.yes { background:var(--yes); } .oc.no { background:var(--no); }
  .side { font-size:12px; color:var(--dim); margin-right:4px; }
  button { background:transparent; color:var(--down); border:1px solid var(--down); border-radius:6px; padding:3px 10px; cursor:pointer; font:inherit; }
  button:disabled { opacity:.4; }
  svg.spark { width:100px; height:26px; vertical-align:middle; }
  .pill { display:inline-block; padding:1px 8px; border-radius:999px; border:1px solid var(--line); font-size:12px; }
  .ok { color:var(--up); border-color:var(--up); } .bad { color:var(--down); border-color:var(--down); } .warn { color:var(--warn); border-color:var(--warn); }
  #status.bad { background:var(--down); color:#fff; font-weight:600; }
  #asof { font-size:12px; color:var(--warn); }
  .stale .kpi b { color:var(--dim); }
  .stale main table { opacity:.6; }
  .empty { color:var(--dim); padding:6px 0; }
  .risk-state { display:flex; flex-wrap:wrap; gap:6px; margin-bottom:8px; }
  ul.limits { list-style:none; margin:0; padding:0; }
  ul.limits li { padding:6px 0; border-bottom:1px solid var(--line); }
  .lrow { display:flex; flex-wrap:wrap; justify-content:space-between; gap:2px 12px; }
  .lval { font-variant-numeric:tabular-nums; }
  .note { font-size:12px; color:var(--dim); overflow-wrap:anywhere; }
  meter { display:block; width:100%; height:8px; margin-top:4px; }
  meter::-webkit-meter-bar { background:var(--line); border:0; border-radius:4px; height:8px; }
  meter::-webkit-meter-optimum-value { background:var(--up); border-radius:4px; }
  meter::-webkit-meter-suboptimum-value { background:var(--warn); border-radius:4px; }
  meter::-webkit-meter-even-less-good-value { background:var(--down); border-radius:4px; }
  dl.rules { display:grid; grid-template-columns:auto 1fr; gap:2px 12px; margin:8px 0 0; font-size:13px; }
  dl.rules dt { color:var(--dim); } dl.rules dd { margin:0; overflow-wrap:anywhere; }
  .checks { font-size:12px; color:var(--dim); margin-top:8px; overflow-wrap:anywhere; }
  /* A narrow card drops the columns one can do without. */
  @container (max-width: 519px) { .opt { display:none; } }
  /* A phone-width card: each row stacks as a small card of labelled values. */
  @container (max-width: 400px) {
    table, tbody { display:block; } thead { display:none; }
    tr { display:flex; flex-wrap:wrap; align-items:center; gap:4px 14px; padding:8px 0; border-bottom:1px solid var(--line); }
    td { border:0; padding:0; text-align:left; }
    td.market { flex-basis:100%; font-weight:500; }
    td[data-label]::before { content:attr(data-label) " "; color:var(--dim); font-size:11px; }
    td.act, td.spark-col { margin-left:auto; }
    td.spark-col { display:block; }
  }
  @media (max-width: 560px) { header { padding:10px 12px; } .badges { margin-left:0; } main { padding:8px; gap:10px; } .kpi b { font-size:18px; } }
</style>
</head>
<body>
<header>
  <h1>crossbook agent</h1>
  <div class="kpis">
    <div class="kpi"><b id="available">–</b><span>available</span></div>
    <div class="kpi"><b id="locked">–</b><span>locked in orders</span></div>
    <div class="kpi"><b id="total">–</b><span>total</span></div>
    <div class="kpi"><b id="pnl">–</b><span>unrealized PnL</span></div>
    <div class="kpi"><b id="env">–</b><span>environment</span></div>
  </div>
  <div class="badges">
    <span id="status" class="pill" data-testid="status" role="status">connecting…</span>
    <span id="feed" class="pill" data-testid="feed" title="how orders and fills reach this page">account: …</span>
    <span id="asof" data-testid="asof"></span>
  </div>
</header>
<main>
  <section><h2>Positions</h2><div id="positions"></div></section>
  <section><h2>Open orders</h2><div id="orders"></div></section>
  <section><h2>Prices</h2><div id="prices"></div></section>
  <section><h2>Recent fills</h2><div id="fills"></div></section>
  <section><h2>Risk</h2><div id="risk"></div></section>
  <section><h2>Alerts</h2><div id="alerts"></div></section>
</main>
<script nonce="${NONCE}">
(() => {
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&":"&amp;", "<":"&lt;", ">":"&gt;", '"':"&quot;", "'":"&#39;" })[c]);
  const usd = (n) => n == null ? "–" : (n < 0 && Math.abs(n) >= 0.005 ? "-$" : "$") + Math.abs(n).toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const px = (n) => n == null ? "–" : Number(n).toFixed(3);
  const qty = (n) => n == null ? "–" : Number(n).toLocaleString(undefined, { maximumFractionDigits: 2 });
  const cls = (n) => n >= 0.005 ? "up" : n <= -0.005 ? "down" : "";
  const two = (n) => String(n).padStart(2, "0");
  /** HH:MM:SS in the browser's time zone. */
  const clock = (iso) => { const d = new Date(iso); return Number.isFinite(d.getTime()) ? two(d.getHours()) + ":" + two(d.getMinutes()) + ":" + two(d.getSeconds()) : ""; };
  let state = {}; const prices = {}; const history = {};
  /** The page's own event stream to the dashboard: undefined until it first opens or fails. */
  let connected;

  const titleOf = (id, title) => title || (state.titles || {})[id] || id;
  const outcome = (o) => o === "no" ? '<span class="oc no">NO</span>' : '<span class="oc yes">YES</span>';
  const sided = (side, o) => '<span class="side">' + esc(side) + "</span>" + outcome(o);

  function mark(p) {
    const u = prices[p.market_id];
    if (!u || u.price == null) return p.current_price;
    return p.outcome === "no" ? 1 - u.price : u.price;
  }
  function spark(id) {
    const pts = (history[id] || []).slice(-120);
    if (pts.length < 2) return '<svg class="spark"></svg>';
    const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
    const x0 = Math.min(...xs), x1 = Math.max(...xs) || x0 + 1, y0 = Math.min(...ys), y1 = Math.max(...ys);
    const d = pts.map((p, i) => (i ? "L" : "M") + ((p[0] - x0) / (x1 - x0 || 1) * 98 + 1).toFixed(1) + "," + (25 - (p[1] - y0) / ((y1 - y0) || 1) * 24).toFixed(1)).join(" ");
    const up = ys[ys.length - 1] >= ys[0];
    return '<svg class="spark" viewBox="0 0 100 26"><path d="' + d + '" fill="none" stroke="' + (up ? "#3fb950" : "#f85149") + '" stroke-width="1.5"/></svg>';
  }
  /**
   * A table from column specs {h, cls} and rows {attrs, cells}: each cell gets its column's class
   * (opt: dropped in a narrow card) and its header as data-label (shown when rows stack).
   */
  function table(cols, rows, empty) {
    if (!rows.length) return '<div class="empty">' + empty + "</div>";
    const head = cols.map((c) => '<th class="' + (c.cls || "") + '">' + c.h + "</th>").join("");
    const body = rows.map((r) => "<tr " + r.attrs + ">" + r.cells.map((cell, i) => {
      const c = cols[i];
      const label = c.h && !/market|act|spark-col/.test(c.cls || "") ? ' data-label="' + c.h + '"' : "";
      return '<td class="' + (c.cls || "") + '"' + label + (c.tid ? ' data-testid="' + c.tid + '"' : "") + ">" + cell + "</td>";
    }).join("") + "</tr>").join("");
    return "<table><thead><tr>" + head + "</tr></thead><tbody>" + body + "</tbody></table>";
  }
  const marketCell = (id, title) => '<span class="t" title="' + esc(id) + '" data-testid="title">' + esc(titleOf(id, title)) + "</span>";

  function renderPositions() {
    let total = 0;
    const rows = (state.positions || []).map((p) => {
      const m = mark(p);
      const pnl = m == null || p.average_price == null ? p.unrealized_pnl : p.size * (m - p.average_price);
      total += pnl || 0;
      return { attrs: 'data-testid="position" data-market="' + esc(p.market_id) + '"',
        cells: [marketCell(p.market_id, p.market_title), outcome(p.outcome), qty(p.size), px(p.average_price), px(m), '<span class="' + cls(pnl) + '">' + usd(pnl) + "</span>"] };
    });
    $("positions").innerHTML = table([{ h: "market", cls: "market" }, { h: "", cls: "c" }, { h: "size" }, { h: "avg", cls: "opt" }, { h: "mark", tid: "position-mark" }, { h: "PnL" }], rows, "no open positions");
    $("pnl").textContent = usd(total); $("pnl").className = cls(total);
  }
  function renderPrices() {
    const ids = state.watched || Object.keys(prices);
    const rows = ids.map((id) => {
      const u = prices[id] || {};
      return { attrs: 'data-testid="price-row" data-market="' + esc(id) + '"',
        cells: [marketCell(id), px(u.price), px(u.best_bid), px(u.best_ask), spark(id)] };
    });
    $("prices").innerHTML = table([{ h: "market", cls: "market" }, { h: "price", tid: "price" }, { h: "bid", cls: "opt" }, { h: "ask", cls: "opt" }, { h: "chart", cls: "opt spark-col" }], rows, "no markets watched");
  }
  /** "$120.00 of $500.00 (24 %)", "3 of 10 orders (30 %)"; a use under 0.5 % is "<1 %", not "0 %". */
  function limitText(l) {
    const unit = (n) => l.unit === "usd" ? usd(n) : qty(n) + " " + (n === 1 ? l.unit.slice(0, -1) : l.unit);
    if (l.used == null) return "limit " + unit(l.limit);
    const ratio = l.limit > 0 ? l.used / l.limit : (l.used > 0 ? 1 : 0);
    const pct = ratio > 0 && ratio < 0.005 ? "<1" : String(Math.round(ratio * 100));
    return (l.unit === "usd" ? usd(l.used) : qty(l.used)) + " of " + unit(l.limit) + " (" + pct + " %)";
  }
  function renderRisk() {
    const v = state.risk_view;
    if (v == null) { $("risk").innerHTML = '<div class="empty">no risk chain attached</div>'; return; }
    let html = "";
    if (v.recognised) {
      const pills = [v.killed ? '<span class="pill bad" data-testid="risk-kill">KILLED: ' + esc(v.killReason || "no reason given") + "</span>" : '<span class="pill ok" data-testid="risk-kill">trading allowed</span>'];
      if (v.breaker) {
        const b = v.breaker;
        const text = b.state === "open" ? "breaker open" + (b.halfOpensAt ? " until " + clock(new Date(b.halfOpensAt).toISOString()) : "") : b.state === "half_open" ? "breaker half-open" : "breaker closed";
        pills.push('<span class="pill ' + (b.state === "open" ? "bad" : b.state === "half_open" ? "warn" : "") + '" title="' + esc(b.lastError || "") + '">' + text + "</span>");
      }
      html += '<div class="risk-state">' + pills.join("") + "</div>";
    } else if (state.risk && typeof state.risk === "object") {
      html += '<dl class="rules">' + Object.entries(state.risk).map(([k, val]) => "<dt>" + esc(k) + "</dt><dd>" + esc(typeof val === "object" ? JSON.stringify(val) : val) + "</dd>").join("") + "</dl>";
    }
    if (v.limits.length) html += '<ul class="limits">' + v.limits.map((l) => {
      const ratio = l.used == null || !(l.limit > 0) ? (l.used > 0 ? 1 : 0) : l.used / l.limit;
      return '<li data-testid="risk-limit" data-key="' + esc(l.key) + '"><div class="lrow"><span>' + esc(l.label) + '</span><span class="lval">' + limitText(l) + "</span></div>" +
        '<meter min="0" max="1" low="0.7" high="0.9" optimum="0" value="' + Math.min(1, Math.max(0, ratio)).toFixed(3) + '"></meter>' +
        (l.note ? '<div class="note">' + esc(l.note) + "</div>" : "") + "</li>";
    }).join("") + "</ul>";
    else html += '<div class="empty">no limits configured</div>';
    if (v.rules.length) html += '<dl class="rules">' + v.rules.map((r) => "<dt>" + esc(r.label) + "</dt><dd>" + esc(r.value) + "</dd>").join("") + "</dl>";
    if (v.checks.length) html += '<div class="checks">checks in order: ' + v.checks.map((c) => esc(c.replace(/_/g, " "))).join(" → ") + "</div>";
    $("risk").innerHTML = html;
  }
  function renderStatus() {
    const st = $("status");
    const stale = connected === false || !!state.error;
    if (connected === undefined && !state.error) { st.textContent = "connecting…"; st.className = "pill"; st.title = ""; }
    else if (connected === false) { st.textContent = "dashboard unreachable: reconnecting…"; st.className = "pill bad"; st.title = ""; }
    else if (state.error) { st.textContent = state.error; st.className = "pill bad"; st.title = state.error_detail || state.error; }
    else if (state.loading) { st.textContent = "loading…"; st.className = "pill"; st.title = ""; }
    else { st.textContent = "live"; st.className = "pill ok"; st.title = ""; }
    document.body.classList.toggle("stale", stale);
    const at = (state.as_of || {}).balance;
    $("asof").textContent = stale && at ? "stale: balances as of " + clock(at) : "";
    for (const id of ["available", "locked", "total"]) $(id).title = at ? "as of " + clock(at) : "";
  }
  function renderState() {
    const b = state.balance || {};
    $("available").textContent = usd(b.available); $("locked").textContent = usd(b.locked); $("total").textContent = usd(b.total);
    $("env").textContent = b.environment || "–";
    $("orders").innerHTML = table([{ h: "market", cls: "market" }, { h: "side" }, { h: "price" }, { h: "filled" }, { h: "", cls: "act" }], (state.orders || []).map((o) => ({
      attrs: 'data-testid="order" data-order="' + esc(o.id) + '" data-market="' + esc(o.market_id) + '"',
      cells: [marketCell(o.market_id, o.market_title), sided(o.side, o.outcome), px(o.price), qty(o.filled_amount) + "/" + qty(o.amount), '<button data-testid="cancel" data-id="' + esc(o.id) + '">Cancel</button>'] })), "no open orders");
    $("fills").innerHTML = table([{ h: "market", cls: "market" }, { h: "side" }, { h: "size" }, { h: "price" }, { h: "fee", cls: "opt" }, { h: "time" }], (state.fills || []).map((f) => ({
      attrs: 'data-testid="fill" data-market="' + esc(f.market_id) + '"',
      cells: [marketCell(f.market_id, f.market_title), sided(f.side, f.outcome), qty(f.size), px(f.price), usd(f.fee), '<span class="dim">' + esc(clock(f.created_at)) + "</span>"] })), "no fills in the last 24 hours");
    $("alerts").innerHTML = table([{ h: "market", cls: "market" }, { h: "condition" }, { h: "threshold" }, { h: "status", cls: "opt" }], (state.alerts || []).map((a) => ({
      attrs: 'data-testid="alert"',
      cells: [marketCell(a.market_id, a.market_title), esc(String(a.condition || "").replace(/_/g, " ")), px(a.threshold), esc(a.status)] })), "no alerts");
    const feed = { live: ["account: live", "pill ok"], connecting: ["account: connecting…", "pill"], down: ["account: polling (stream down)", "pill bad"], off: ["account: polling", "pill"] }[state.account_stream] || ["account: …", "pill"];
    $("feed").textContent = feed[0]; $("feed").className = feed[1];
    renderRisk(); renderStatus(); renderPositions(); renderPrices();
  }
  document.addEventListener("click", async (e) => {
    const btn = e.target.closest("button[data-testid=cancel]");
    if (!btn) return;
    btn.disabled = true;
    const res = await fetch("/api/orders/" + encodeURIComponent(btn.dataset.id) + "/cancel", { method: "POST" }).catch(() => null);
    if (res && res.ok) { btn.closest("tr").remove(); return; }
    btn.disabled = false;
    const text = res ? await res.text() : "the dashboard did not answer";
    let message = text; try { message = JSON.parse(text).error || text; } catch {}
    alert(message);
  });
  fetch("/api/state").then((r) => r.json()).then((s) => {
    Object.assign(prices, s.prices || {});
    for (const [id, h] of Object.entries(s.history || {})) history[id] = h.points;
    state = s; renderState();
  }).catch(() => renderStatus());
  const events = new EventSource("/api/events");
  events.onopen = () => { connected = true; renderStatus(); };
  events.onerror = () => { connected = false; renderStatus(); };
  events.addEventListener("state", (e) => { state = JSON.parse(e.data); renderState(); });
  events.addEventListener("price", (e) => {
    const u = JSON.parse(e.data); prices[u.market_id] = u;
    if (u.price != null) (history[u.market_id] = history[u.market_id] || []).push([Date.parse(u.timestamp) || Date.now(), u.price]);
    renderPrices(); renderPositions();
  });
})();
</script>
</body>
</html>
`;
