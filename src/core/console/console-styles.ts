/**
 * The console's style sheet, served from its own path (the policy allows no inline style). A
 * tool look: system fonts, tables with tabular numbers, relative units so that it reads at 200%
 * zoom, and tables that scroll inside their box at phone width rather than the page. State is
 * always written as words; colour only repeats it.
 */
export const CONSOLE_STYLES = `
:root { color-scheme: light dark; --fg: #1b1b1b; --bg: #fff; --muted: #555; --line: #c8c8c8; --bad: #a00000; --good: #075e07; --focus: #1a5fb4; --head: #f2f2f2; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #eee; --bg: #161616; --muted: #b0b0b0; --line: #4a4a4a; --bad: #ff8a80; --good: #8fd18f; --focus: #8ab4f8; --head: #222; }
}
* { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 100%; line-height: 1.45; color: var(--fg); background: var(--bg); }
body { margin: 0 auto; max-width: 90rem; padding: 0.75rem 1rem 3rem; }
h1 { font-size: 1.4rem; margin: 0.25rem 0; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 0.5rem; }
h3 { font-size: 1rem; margin: 1rem 0 0.25rem; }
header { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; align-items: baseline; border-bottom: 1px solid var(--line); padding-bottom: 0.5rem; }
header p { margin: 0; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 0.9em; overflow-wrap: anywhere; }
.meta { color: var(--muted); font-size: 0.9rem; }
.empty { font-style: italic; }
.error { color: var(--bad); font-weight: 600; }
.error:empty { display: none; }
.skip { position: absolute; left: -100vw; }
.skip:focus { left: 1rem; top: 0.5rem; background: var(--bg); padding: 0.25rem 0.5rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
[hidden] { display: none !important; }
label { font-weight: 600; }
input[type="password"], select { font: inherit; padding: 0.3rem 0.4rem; border: 1px solid var(--muted); border-radius: 3px; background: var(--bg); color: var(--fg); max-width: 100%; }
form#sign-in { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; }
form#sign-in label { flex-basis: 100%; }
form#sign-in input { flex: 1 1 16rem; }
button { font: inherit; padding: 0.3rem 0.8rem; border: 1px solid var(--muted); border-radius: 3px; background: var(--head); color: var(--fg); cursor: pointer; }
button.danger { border-color: var(--bad); color: var(--bad); }
button:disabled { opacity: 0.6; cursor: not-allowed; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.toolbar { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; margin: 0.5rem 0; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; width: 100%; font-size: 0.95rem; }
th, td { border: 1px solid var(--line); padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
thead th { background: var(--head); white-space: nowrap; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
td.state-down { color: var(--bad); font-weight: 600; }
td.state-up { color: var(--good); }
td pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; max-width: 40rem; }
#notice { border-left: 4px solid var(--focus); padding: 0.3rem 0.6rem; background: var(--head); }
#notice:empty { display: none; }
#notice.failed { border-left-color: var(--bad); }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; margin: 0.5rem 0; }
dt { font-weight: 600; }
dd { margin: 0; overflow-wrap: anywhere; }
dialog { max-width: min(32rem, 92vw); border: 2px solid var(--fg); background: var(--bg); color: var(--fg); }
dialog::backdrop { background: rgb(0 0 0 / 0.45); }
@media (max-width: 40rem) {
  body { padding: 0.5rem; }
  dl { grid-template-columns: 1fr; }
  dd { margin-bottom: 0.4rem; }
}
`;
