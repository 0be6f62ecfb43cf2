/** The console's one stylesheet: system fonts, no external resources, readable from phone width up. */
export const STYLE = `
:root { --fg:#16202a; --muted:#5b6875; --bg:#f6f8fa; --card:#fff; --line:#d9dee4; --accent:#1f5fbf;
  --accent-fg:#fff; --danger:#b42318; --ok:#127a3e; --warn:#9a6700; --focus:#f5a623; --mark:#fff2b3; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 15px; line-height: 1.45; color: var(--fg); background: var(--bg); }
body { margin: 0; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--card); padding: .5rem; }
.skip:focus { left: .5rem; z-index: 10; }
header.top { background: #0f1a26; color: #fff; }
header.top .bar { display: flex; flex-wrap: wrap; align-items: center; gap: .25rem 1rem; max-width: 1200px;
  margin: 0 auto; padding: .5rem 1rem; }
header.top .brand { font-weight: 700; color: #fff; text-decoration: none; margin-right: .5rem; }
header.top nav ul { display: flex; flex-wrap: wrap; gap: .25rem; list-style: none; margin: 0; padding: 0; }
header.top nav a { color: #d8e2ee; text-decoration: none; padding: .3rem .55rem; border-radius: 4px; display: inline-block; }
header.top nav a[aria-current="page"] { background: #24405f; color: #fff; }
header.top nav a:hover { color: #fff; }
header.top .who { margin-left: auto; display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; font-size: .9rem;
  color: #d8e2ee; min-width: 0; }
header.top .who > span { overflow-wrap: anywhere; }
header.top .who form { margin: 0; }
header.top .who .env { display: flex; align-items: center; gap: .35rem; }
header.top .who select { width: auto; padding: .15rem .3rem; font-size: .85rem; color: var(--fg); }
header.top .who button { background: transparent; color: #fff; border: 1px solid #5f7892; }
main { max-width: 1200px; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem; margin-bottom: 1rem; }
.narrow { max-width: 28rem; margin: 2rem auto; }
.muted { color: var(--muted); }
.flash { border-radius: 6px; padding: .6rem .8rem; margin-bottom: 1rem; border: 1px solid; }
.flash.ok { background: #e9f7ef; border-color: #9fd3b5; color: #0b5a2c; }
.flash.error { background: #fdecea; border-color: #f2b8b5; color: #8a1c12; }
.flash.warn { background: #fff7e0; border-color: #f0d48a; color: #6b4a00; }
form.stack > * + * { margin-top: .75rem; }
.field label, fieldset legend { display: block; font-weight: 600; margin-bottom: .2rem; }
.field .hint { color: var(--muted); font-size: .85rem; margin-top: .15rem; }
.field .error, .error-text { color: var(--danger); font-size: .9rem; margin-top: .2rem; }
input[type=text], input[type=email], input[type=password], input[type=url], input[type=number], input[type=search],
select, textarea { width: 100%; max-width: 40rem; padding: .45rem .55rem; border: 1px solid #aab4bf; border-radius: 5px;
  font: inherit; background: #fff; color: inherit; }
textarea { min-height: 6rem; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; }
[aria-invalid="true"] { border-color: var(--danger); }
fieldset { border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; margin: 0; }
.checks { display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
.checks label { font-weight: 400; display: inline-flex; gap: .3rem; align-items: center; }
button, .button { font: inherit; padding: .4rem .85rem; border-radius: 5px; border: 1px solid var(--accent);
  background: var(--accent); color: var(--accent-fg); cursor: pointer; text-decoration: none; display: inline-block; }
button.secondary, .button.secondary { background: #fff; color: var(--accent); }
button.danger, .button.danger { background: var(--danger); border-color: var(--danger); color: #fff; }
button.small, .button.small { padding: .15rem .5rem; font-size: .85rem; }
.actions { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; }
.actions form { margin: 0; display: inline; }
table { width: 100%; border-collapse: collapse; table-layout: auto; background: var(--card); }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top;
  overflow-wrap: anywhere; }
th { font-size: .85rem; color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .88em; }
.secret { display: block; padding: .6rem; background: #0f1a26; color: #e7f0fa; border-radius: 5px; word-break: break-all; }
.badge { display: inline-block; padding: 0 .4rem; border-radius: 999px; font-size: .8rem; border: 1px solid var(--line); background: #eef2f6; }
.badge.ok { background: #e9f7ef; border-color: #9fd3b5; color: #0b5a2c; }
.badge.error { background: #fdecea; border-color: #f2b8b5; color: #8a1c12; }
.badge.warn { background: #fff7e0; border-color: #f0d48a; color: #6b4a00; }
.grid2 { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.stats { display: flex; flex-wrap: wrap; gap: 1rem; }
.stats div { min-width: 9rem; }
.nowrap { white-space: nowrap; }
.stats .value { font-size: 1.35rem; font-weight: 600; font-variant-numeric: tabular-nums; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f0f3f6; padding: .5rem; border-radius: 5px; font-size: .82rem; }
mark { background: var(--mark); padding: 0 .1rem; border-radius: 2px; color: inherit; }
mark[data-kind="date"] { background: #d8ecff; }
mark[data-kind="source"] { background: #d9f5e3; }
mark[data-kind="trigger"] { background: #ece1ff; }
mark[data-kind="clause"] { background: #ffe6cc; }
.card > h1:first-child, .card > h2:first-child, .card > h3:first-child { margin-top: 0; }
details summary { cursor: pointer; }
kbd { border: 1px solid #aab4bf; border-bottom-width: 2px; border-radius: 3px; padding: 0 .3rem; font-size: .8rem; background: #fff; }
.chart { width: 100%; height: auto; max-height: 220px; }
@media (max-width: 760px) {
  .grid2 { grid-template-columns: 1fr; }
  header.top .who { margin-left: 0; width: 100%; }
  .chart text { font-size: 28px; }
  table.responsive thead { display: none; }
  table.responsive tr { display: block; border-bottom: 2px solid var(--line); padding: .3rem 0; }
  table.responsive td { display: flex; justify-content: space-between; gap: 1rem; border: 0; padding: .2rem .3rem; text-align: right; }
  table.responsive td::before { content: attr(data-label); font-weight: 600; color: var(--muted); text-align: left;
    flex: 0 0 auto; min-width: 5.5rem; }
}
`;
