/** The status page's stylesheet (inline, allowed by its hash in the page's CSP: nothing is fetched for it). */
export const PAGE_STYLE = `
:root { --bg: #f5f6f8; --card: #fff; --ink: #1b1f24; --muted: #5b6470; --line: #e3e6ea; --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header { padding: 24px 32px 8px; }
h1 { margin: 0 0 4px; font-size: 24px; }
.meta { color: var(--muted); font-size: 13px; }
.meta strong { color: var(--ink); font-weight: 600; }
#problem { margin: 12px 32px 0; padding: 10px 14px; border-radius: 8px; background: #fff1f0; color: var(--bad); border: 1px solid #ffc9c5; }
#problem[hidden] { display: none; }
main { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 620px), 1fr)); gap: 20px; padding: 16px 32px 32px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 18px 20px; min-width: 0; }
.card h2 { margin: 0; font-size: 19px; display: flex; align-items: center; gap: 10px; flex-wrap: wrap; }
.card h2 .caip { color: var(--muted); font-weight: 400; font-size: 13px; font-family: ui-monospace, monospace; }
.badge { font-size: 12px; font-weight: 600; padding: 2px 9px; border-radius: 999px; color: #fff; }
.badge.ok { background: var(--ok); } .badge.warn { background: var(--warn); } .badge.bad { background: var(--bad); }
h3 { margin: 18px 0 6px; font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: right; padding: 6px 10px; border-bottom: 1px solid var(--line); white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
thead th { font-size: 12px; color: var(--muted); font-weight: 600; }
tbody th { font-weight: 500; }
.sub { color: var(--muted); font-size: 12px; }
ul { list-style: none; margin: 0; padding: 0; }
li { padding: 5px 0; border-bottom: 1px solid var(--line); display: flex; justify-content: space-between; gap: 12px; flex-wrap: wrap; }
li:last-child { border-bottom: 0; }
.dot { display: inline-block; width: 9px; height: 9px; border-radius: 50%; margin-right: 7px; background: var(--ok); }
.dot.down { background: var(--bad); }
.none { color: var(--muted); }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
dt { color: var(--muted); } dd { margin: 0; font-variant-numeric: tabular-nums; }
footer { padding: 0 32px 24px; color: var(--muted); font-size: 12px; }
footer a { color: inherit; }
@media (max-width: 640px) { header, main, footer { padding-left: 12px; padding-right: 12px; } #problem { margin: 12px; } .card { padding: 14px; } table { font-size: 14px; } th, td { padding: 5px 5px; } }
`;
