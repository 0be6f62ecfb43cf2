/**
 * The dashboard page: one self-contained HTML document (inline CSS and script, no CDN), laid out
 * in cards that stack on a phone. It reads `/api/state` once, then follows `/api/events` (SSE):
 * `price` events move prices, charts and live PnL; `state` events (sent when an account event
 * arrives, and by the periodic safety refresh) redraw balance, positions, orders, fills, alerts and
 * risk, and say whether the account stream is live (the header's "account" pill). The server's Content-Security-Policy runs only the inline
 * `<style>` and `<script>` carrying that response's nonce (no inline `style=` or `on…=` attributes),
 * and the page sends no token: the session cookie rides along on its same-origin requests.
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
  :root { --bg:#0f1419; --card:#182029; --line:#2a3541; --text:#e6edf3; --dim:#8b99a8; --up:#3fb950; --down:#f85149; --accent:#58a6ff; }
  * { box-sizing: border-box; }
  body { margin:0; font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif; background:var(--bg); color:var(--text); }
  header { display:flex; flex-wrap:wrap; gap:12px 28px; align-items:baseline; padding:14px 18px; border-bottom:1px solid var(--line); }
  header h1 { font-size:16px; margin:0; color:var(--accent); }
  .kpi { display:flex; flex-direction:column; } .kpi b { font-size:22px; font-variant-numeric:tabular-nums; } .kpi span { color:var(--dim); font-size:12px; }
  main { display:grid; gap:14px; padding:14px; grid-template-columns:repeat(auto-fit, minmax(340px, 1fr)); }
  section { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:12px 14px; overflow-x:auto; }
  h2 { font-size:13px; text-transform:uppercase; letter-spacing:.06em; color:var(--dim); margin:0 0 8px; }
  table { width:100%; border-collapse:collapse; font-variant-numeric:tabular-nums; }
  th, td { text-align:right; padding:5px 6px; border-bottom:1px solid var(--line); white-space:nowrap; }
  th:first-child, td:first-child { text-align:left; }
  th { color:var(--dim); font-weight:500; font-size:12px; }
  .up { color:var(--up); } .down { color:var(--down); } .dim { color:var(--dim); }
  button { background:transparent; color:var(--down); border:1px solid var(--down); border-radius:6px; padding:3px 10px; cursor:pointer; font:inherit; }
  button:disabled { opacity:.4; }
  .market { max-width:220px; overflow:hidden; text-overflow:ellipsis; }
  svg.spark { width:120px; height:28px; vertical-align:middle; }
  .pill { display:inline-block; padding:1px 8px; border-radius:999px; border:1px solid var(--line); font-size:12px; }
  .ok { color:var(--up); border-color:var(--up); } .bad { color:var(--down); border-color:var(--down); }
  #status { margin-left:auto; font-size:12px; } #feed { font-size:12px; }
  .empty { color:var(--dim); padding:6px 0; }
  @media (max-width: 500px) { main { padding:8px; gap:10px; } .market { max-width:120px; } th, td { padding:4px 3px; } }
</style>
</head>
<body>
<header>
  <h1>crossbook agent</h1>
  <div class="kpi"><b id="available">–</b><span>available</span></div>
  <div class="kpi"><b id="locked">–</b><span>locked in orders</span></div>
  <div class="kpi"><b id="total">–</b><span>total</span></div>
  <div class="kpi"><b id="pnl">–</b><span>unrealized PnL</span></div>
  <div class="kpi"><b id="env">–</b><span>environment</span></div>
  <span id="status" class="pill">connecting…</span>
  <span id="feed" class="pill" data-testid="feed" title="how orders and fills reach this page">account: …</span>
</header>
<main>
  <section><h2>Positions</h2><div id="positions"></div></section>
  <section><h2>Open orders</h2><div id="orders"></div></section>
  <section><h2>Prices</h2><div id="prices"></div></section>
  <section><h2>Recent fills</h2><div id="fills"></div></section>
  <section><h2>Alerts</h2><div id="alerts"></div></section>
  <section><h2>Risk</h2><div id="risk"></div></section>
</main>
<script nonce="${NONCE}">
(() => {
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&":"&amp;", "<":"&lt;", ">":"&gt;", '"':"&quot;", "'":"&#39;" })[c]);
  const usd = (n) => n == null ? "–" : (n < 0 ? "-$" : "$") + Math.abs(n).toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const px = (n) => n == null ? "–" : Number(n).toFixed(3);
  const cls = (n) => n > 0 ? "up" : n < 0 ? "down" : "";
  let state = {}; const prices = {}; const history = {};

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
    const d = pts.map((p, i) => (i ? "L" : "M") + ((p[0] - x0) / (x1 - x0 || 1) * 118 + 1).toFixed(1) + "," + (27 - (p[1] - y0) / ((y1 - y0) || 1) * 26).toFixed(1)).join(" ");
    const up = ys[ys.length - 1] >= ys[0];
    return '<svg class="spark" viewBox="0 0 120 28"><path d="' + d + '" fill="none" stroke="' + (up ? "#3fb950" : "#f85149") + '" stroke-width="1.5"/></svg>';
  }
  function table(rows, head, empty) {
    if (!rows.length) return '<div class="empty">' + empty + "</div>";
    return "<table><thead><tr>" + head.map((h) => "<th>" + h + "</th>").join("") + "</tr></thead><tbody>" + rows.join("") + "</tbody></table>";
  }
  function renderPositions() {
    let total = 0;
    const rows = (state.positions || []).map((p) => {
      const m = mark(p);
      const pnl = m == null || p.average_price == null ? p.unrealized_pnl : p.size * (m - p.average_price);
      total += pnl || 0;
      return '<tr data-testid="position"><td class="market" title="' + esc(p.market_id) + '">' + esc(p.market_id) + " <span class=dim>" + esc(p.outcome) + "</span></td><td>" + p.size + "</td><td>" + px(p.average_price) + '</td><td data-testid="position-mark">' + px(m) + '</td><td class="' + cls(pnl) + '">' + usd(pnl) + "</td></tr>";
    });
    $("positions").innerHTML = table(rows, ["market", "size", "avg", "mark", "PnL"], "no open positions");
    $("pnl").textContent = usd(total); $("pnl").className = cls(total);
  }
  function renderPrices() {
    const ids = state.watched || Object.keys(prices);
    const rows = ids.map((id) => {
      const u = prices[id] || {};
      return '<tr data-testid="price-row" data-market="' + esc(id) + '"><td class="market" title="' + esc(id) + '">' + esc(id) + '</td><td data-testid="price">' + px(u.price) + "</td><td>" + px(u.best_bid) + "</td><td>" + px(u.best_ask) + "</td><td>" + spark(id) + "</td></tr>";
    });
    $("prices").innerHTML = table(rows, ["market", "price", "bid", "ask", "chart"], "no markets watched");
  }
  function renderState() {
    const b = state.balance || {};
    $("available").textContent = usd(b.available); $("locked").textContent = usd(b.locked); $("total").textContent = usd(b.total);
    $("env").textContent = b.environment || "–";
    $("orders").innerHTML = table((state.orders || []).map((o) =>
      '<tr data-testid="order" data-order="' + esc(o.id) + '"><td class="market" title="' + esc(o.market_id) + '">' + esc(o.market_id) + "</td><td>" + esc(o.side) + " " + esc(o.outcome) + "</td><td>" + px(o.price) + "</td><td>" + o.filled_amount + "/" + o.amount + '</td><td><button data-testid="cancel" data-id="' + esc(o.id) + '">Cancel</button></td></tr>'), ["market", "side", "price", "filled", ""], "no open orders");
    $("fills").innerHTML = table((state.fills || []).map((o) =>
      "<tr><td class=market>" + esc(o.market_id) + "</td><td>" + esc(o.side) + " " + esc(o.outcome) + "</td><td>" + o.filled_amount + '</td><td class="dim">' + esc((o.created_at || "").slice(11, 19)) + "</td></tr>"), ["market", "side", "filled", "time"], "no fills yet");
    $("alerts").innerHTML = table((state.alerts || []).map((a) =>
      "<tr><td class=market>" + esc(a.market_id) + "</td><td>" + esc(a.condition) + "</td><td>" + a.threshold + "</td><td>" + esc(a.status) + "</td></tr>"), ["market", "condition", "threshold", "status"], "no alerts");
    const feed = { live: ["account: live", "pill ok"], connecting: ["account: connecting…", "pill"], down: ["account: polling (stream down)", "pill bad"], off: ["account: polling", "pill"] }[state.account_stream] || ["account: …", "pill"];
    $("feed").textContent = feed[0]; $("feed").className = feed[1];
    const r = state.risk;
    $("risk").innerHTML = r == null ? '<div class="empty">no risk chain attached</div>' : "<pre>" + esc(JSON.stringify(r, null, 2)) + "</pre>";
    renderPositions(); renderPrices();
  }
  document.addEventListener("click", async (e) => {
    const btn = e.target.closest("button[data-testid=cancel]");
    if (!btn) return;
    btn.disabled = true;
    const res = await fetch("/api/orders/" + encodeURIComponent(btn.dataset.id) + "/cancel", { method: "POST" });
    if (res.ok) { btn.closest("tr").remove(); return; }
    btn.disabled = false;
    const text = await res.text();
    let message = text; try { message = JSON.parse(text).error || text; } catch {}
    alert(message);
  });
  fetch("/api/state").then((r) => r.json()).then((s) => {
    Object.assign(prices, s.prices || {});
    for (const [id, h] of Object.entries(s.history || {})) history[id] = h.points;
    state = s; renderState();
  });
  const events = new EventSource("/api/events");
  events.onopen = () => { $("status").textContent = "live"; $("status").className = "pill ok"; };
  events.onerror = () => { $("status").textContent = "reconnecting…"; $("status").className = "pill bad"; };
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
