/** The merchant page's style: system fonts only. */
export const MERCHANT_PAGE_CSS = String.raw`
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b1f24; background: #f5f6f8; }
header { display: flex; gap: 1rem; align-items: center; padding: .8rem 1.5rem; background: #1b2a41; color: #fff; }
header h1 { font-size: 1.2rem; margin: 0; }
header #who { font-family: ui-monospace, monospace; font-size: .9rem; flex: 1; }
main { max-width: 1250px; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
section { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; padding: 1rem 1.2rem; margin: 1rem 0; }
h2 { font-size: 1.05rem; margin: 0 0 .6rem; }
label { display: block; margin: .6rem 0; }
input, textarea { width: 100%; font: 13px ui-monospace, monospace; padding: .45rem; border: 1px solid #b8bfc7; border-radius: 4px; }
button { font: inherit; padding: .4rem .9rem; border: 1px solid #1b2a41; background: #24508f; color: #fff; border-radius: 4px; cursor: pointer; }
button:disabled { opacity: .5; cursor: default; }
.row { display: flex; gap: .6rem; margin: .6rem 0; }
table { width: 100%; border-collapse: collapse; font-size: 13px; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #e6e9ed; vertical-align: top; }
td.mono, code { font-family: ui-monospace, monospace; font-size: 12px; word-break: break-all; }
.figures { display: flex; gap: 2.5rem; margin: 0 0 1rem; }
.figures dt { color: #59636e; font-size: .85rem; }
.figures dd { margin: 0; font-size: 1.3rem; font-weight: 600; }
.note { color: #59636e; font-size: .85rem; }
#message { padding: .7rem 1rem; border-radius: 4px; background: #fdecea; color: #8a1c12; border: 1px solid #f5c2bd; }
#message.ok { background: #e8f5ec; color: #1d5e32; border-color: #b9dfc5; }
#new-secret code { display: block; padding: .6rem; background: #fff8e1; border: 1px solid #f0d98c; font-size: 14px; }
.state-settled, .status-delivered { color: #1d7a3c; font-weight: 600; }
.state-failed, .status-failed { color: #b42318; font-weight: 600; }
ol.attempts { margin: 0; padding-left: 1.2rem; }
`;
