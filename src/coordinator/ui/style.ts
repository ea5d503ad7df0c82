// The operator page's one style sheet, served at /ui/style.css (the Content-Security-Policy allows
// styles from the coordinator only: no inline style, no script). Light and dark follow the system. On a
// narrow screen (a phone, 420 px) nothing is wider than it: long ids, paths and output wrap, and a
// table's rows stack, each cell after its column's name (data-label).
export const STYLE = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #59636e; --bg: #ffffff; --panel: #f6f8fa;
  --line: #d1d9e0; --link: #0550ae; --bad: #a40e26; --bad-bg: #ffebe9; --ok: #116329; --warn: #7d4e00;
  --warn-bg: #fff8c5; --focus: #0969da; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --panel: #151b23; --line: #3d444d;
    --link: #71b7ff; --bad: #ff9492; --bad-bg: #3c1618; --ok: #7ee787; --warn: #e3b341; --warn-bg: #37290b;
    --focus: #4493f8; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--link); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible {
  outline: 3px solid var(--focus); outline-offset: 2px; }
header { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; padding: .6rem 1.5rem;
  border-bottom: 1px solid var(--line); background: var(--panel); }
header .name { font-weight: 700; margin-right: 1rem; }
header nav ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
header nav a[aria-current="page"] { font-weight: 700; text-decoration: none; }
header form { margin-left: auto; }
main { max-width: 1200px; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.4rem; margin: .5rem 0 1rem; overflow-wrap: break-word; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: .35rem .6rem; border-bottom: 1px solid var(--line); }
th { font-weight: 600; color: var(--muted); }
tbody th { font-weight: 400; color: var(--fg); }
code, pre { font: 13px/1.4 ui-monospace, monospace; }
pre { background: var(--panel); border: 1px solid var(--line); padding: .6rem; overflow-x: auto; white-space: pre-wrap;
  overflow-wrap: break-word; }
code, td, dd, li { overflow-wrap: break-word; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .2rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; min-width: 0; }
ul.plain { margin: 0; padding-left: 1.1rem; }
ul.inline, ul.counts { display: flex; flex-wrap: wrap; gap: .3rem 1rem; list-style: none; margin: 0; padding: 0; }
ul.counts a { text-decoration: none; }
ul.counts .count { font-variant-numeric: tabular-nums; }
.refresh { margin: 0 0 .8rem; font-size: .9rem; }
form.action { display: flex; flex-wrap: wrap; gap: .6rem; align-items: end; }
form.action .note { flex-basis: 100%; margin: 0; }
form.filters { display: flex; flex-wrap: wrap; gap: .8rem; align-items: end; margin-bottom: 1rem; }
label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); gap: .15rem; }
input, select, button { font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--line);
  border-radius: 6px; padding: .3rem .5rem; }
button { cursor: pointer; background: var(--panel); }
.status { font-weight: 600; white-space: nowrap; }
.status.bad { color: var(--bad); }
.status.ok { color: var(--ok); }
.status.warn { color: var(--warn); }
tr.drifting td, tr.drifting th { background: var(--bad-bg); }
.note { color: var(--muted); }
.error-box { border: 1px solid var(--bad); background: var(--bad-bg); padding: .6rem .8rem; border-radius: 6px; }
.pager { margin-top: 1rem; }
.signin { max-width: 28rem; margin: 4rem auto; }
.signin input { width: 100%; }
.signin button { margin-top: .8rem; }
@media (max-width: 40rem) {
  header { padding: .5rem .8rem; gap: .6rem; }
  header .name { margin-right: 0; }
  main { padding: .8rem .8rem 2rem; }
  table.stack, table.stack tbody, table.stack tr, table.stack td, table.stack tbody th { display: block; }
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.stack tr { border-bottom: 1px solid var(--line); padding: .4rem 0; }
  table.stack td, table.stack tbody th { border: 0; padding: .1rem 0; }
  table.stack td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
  table.stack td:empty { display: none; }
  code { overflow-wrap: anywhere; }
  form.filters label, form.filters input, form.filters select { width: 100%; }
}
`
