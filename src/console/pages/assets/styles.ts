/** The console's stylesheet, served from /console/assets/console.css (CSP `style-src 'self'`). */
export const STYLES = `
:root {
  --ink: #1b2330; --muted: #5b6576; --line: #dde2ea; --bg: #f5f7fa; --card: #fff;
  --accent: #2557d6; --accent-ink: #fff; --danger: #b42318; --ok: #067647; --warn: #9a5b00;
  --focus: #1d4ed8; --radius: 8px;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Liberation Sans", sans-serif;
  color: var(--ink); background: var(--bg); line-height: 1.5;
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; }
code, textarea, .mono { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .9em; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; border-radius: 4px; }
.skip { position: absolute; left: -999px; top: 8px; background: var(--card); padding: 8px 12px; z-index: 10; }
.skip:focus { left: 8px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }

.topbar { background: #111827; color: #e5e7eb; }
.topbar-inner { max-width: 980px; margin: 0 auto; padding: 10px 24px; display: flex; align-items: center; gap: 24px; flex-wrap: wrap; }
.brand { color: #fff; font-weight: 700; text-decoration: none; letter-spacing: .2px; }
.brand span { color: #93b4ff; }
.nav { display: flex; gap: 4px; flex: 1; }
.nav a { color: #d1d5db; text-decoration: none; padding: 6px 10px; border-radius: 6px; }
.nav a:hover { background: #1f2937; color: #fff; }
.nav a[aria-current="page"] { background: #1f2937; color: #fff; font-weight: 600; }
.who { display: flex; align-items: center; gap: 12px; font-size: .9em; color: #9ca3af; }
.who form { margin: 0; }
.topbar :focus-visible { outline-color: #93b4ff; }

main { max-width: 980px; margin: 0 auto; padding: 28px 24px 64px; }
main:focus { outline: none; }
h1 { font-size: 1.6rem; margin: 0 0 4px; }
h2 { font-size: 1.15rem; margin: 0 0 12px; }
.lead { color: var(--muted); margin: 0 0 20px; }
.crumbs { font-size: .9em; color: var(--muted); margin-bottom: 8px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); padding: 20px 22px; margin: 0 0 20px; }
.card > p:first-of-type { margin-top: 0; }
.narrow { max-width: 420px; margin: 48px auto; }

label { display: block; font-weight: 600; margin-bottom: 4px; }
.hint { color: var(--muted); font-size: .88em; margin: 4px 0 0; }
input[type=text], input[type=email], input[type=password], textarea {
  width: 100%; padding: 8px 10px; border: 1px solid #b8c0cc; border-radius: 6px; font: inherit; background: #fff; color: inherit;
}
textarea { min-height: 120px; resize: vertical; }
input[aria-invalid=true], textarea[aria-invalid=true] { border-color: var(--danger); }
.field { margin-bottom: 16px; }
.field-error { color: var(--danger); font-size: .9em; margin: 4px 0 0; font-weight: 500; }
.inline-form { display: flex; gap: 10px; align-items: flex-start; flex-wrap: wrap; }
.inline-form .field { flex: 1; min-width: 220px; margin: 0; }
.inline-form .actions { padding-top: 28px; }

button, .button {
  display: inline-block; font: inherit; font-weight: 600; padding: 8px 14px; border-radius: 6px; border: 1px solid var(--accent);
  background: var(--accent); color: var(--accent-ink); cursor: pointer; text-decoration: none; line-height: 1.3;
}
button:hover, .button:hover { filter: brightness(1.08); }
button.secondary, .button.secondary { background: #fff; color: var(--ink); border-color: #b8c0cc; }
button.danger, .button.danger { background: var(--danger); border-color: var(--danger); color: #fff; }
button.ghost { background: transparent; border-color: #4b5563; color: #e5e7eb; padding: 4px 10px; font-weight: 500; }
button.small, .button.small { padding: 4px 10px; font-size: .9em; }
.row-actions { display: flex; gap: 8px; justify-content: flex-end; }
.row-actions form { margin: 0; }
.actions-cell { text-align: right; white-space: nowrap; }
.actions-cell form { display: inline-block; margin-left: 10px; }
td[data-commit] { min-width: 9rem; }
.deploy-image { display: block; }
.badge[data-kind] { white-space: nowrap; background: #f2f4f7; border-color: #d0d5dd; color: var(--muted); }

table { width: 100%; border-collapse: collapse; font-size: .95em; }
th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid var(--line); vertical-align: middle; }
th { color: var(--muted); font-weight: 600; font-size: .85em; text-transform: uppercase; letter-spacing: .3px; }
tr:last-child td { border-bottom: none; }
td time, td abbr { white-space: nowrap; }
.digest summary { cursor: pointer; white-space: nowrap; }
.digest code[data-sha256] { display: block; width: 17em; word-break: break-all; font-size: .8em; margin-top: 4px; }
.muted { color: var(--muted); }
::placeholder { color: #9aa3b2; }
.table-wrap { overflow-x: auto; }
.results td { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .88em; white-space: pre-wrap; }
.null { color: var(--muted); font-style: italic; }
time[title], abbr[title] { text-decoration: underline dotted #9aa3b2; text-underline-offset: 3px; cursor: help; }

.notice, .alert { border-radius: var(--radius); padding: 12px 16px; margin: 0 0 20px; border: 1px solid; }
.notice { background: #ecfdf3; border-color: #a6e7c1; color: #05603a; }
.alert { background: #fef3f2; border-color: #f5b8b1; color: #912018; }
.secret { background: #fffbeb; border: 1px solid #f3d27a; border-radius: var(--radius); padding: 16px; margin: 0 0 20px; }
.secret p { margin: 0 0 10px; }
.secret .copy-row { display: flex; gap: 8px; }
.secret input { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; background: #fff; }

.badge { display: inline-block; padding: 2px 10px; border-radius: 999px; font-size: .82em; font-weight: 600; border: 1px solid; }
.badge.pending, .badge.running { background: #fff7e6; border-color: #f3c77a; color: var(--warn); }
.badge.ready { background: #ecfdf3; border-color: #a6e7c1; color: var(--ok); }
.badge.failed { background: #fef3f2; border-color: #f5b8b1; color: var(--danger); }
.badge.expired { background: #f2f4f7; border-color: #d0d5dd; color: var(--muted); }
.empty { text-align: center; color: var(--muted); padding: 24px 12px; border: 1px dashed #c9d0da; border-radius: var(--radius); }
.empty strong { display: block; color: var(--ink); margin-bottom: 4px; }
.section-head { display: flex; justify-content: space-between; align-items: center; gap: 12px; margin-bottom: 12px; }
.section-head h2 { margin: 0; }
.meta { display: flex; gap: 24px; flex-wrap: wrap; color: var(--muted); font-size: .92em; margin-bottom: 20px; }
.danger-zone { border-color: #f5b8b1; }
/* Apps */
.badge.app-running, .badge.deploy-live { background: #ecfdf3; border-color: #a6e7c1; color: var(--ok); }
.badge.deploy-building, .badge.deploy-starting { background: #fff7e6; border-color: #f3c77a; color: var(--warn); }
.badge.app-failed, .badge.deploy-failed { background: #fef3f2; border-color: #f5b8b1; color: var(--danger); }
.badge.app-not_deployed, .badge.app-stopped, .badge.deploy-superseded { background: #f2f4f7; border-color: #d0d5dd; color: var(--muted); }
.title-row { display: flex; align-items: center; gap: 12px; flex-wrap: wrap; margin-bottom: 12px; }
.title-row h1 { margin: 0; }
.tabs { display: flex; gap: 2px; flex-wrap: wrap; border-bottom: 1px solid var(--line); margin: 0 0 20px; }
.tabs a { padding: 8px 12px; text-decoration: none; color: var(--muted); border-bottom: 3px solid transparent; margin-bottom: -1px; font-weight: 500; }
.tabs a:hover { color: var(--ink); }
.tabs a[aria-current="page"] { color: var(--ink); border-bottom-color: var(--accent); font-weight: 600; }
.facts { display: flex; gap: 12px 32px; flex-wrap: wrap; margin: 0 0 20px; }
.facts dt { color: var(--muted); font-size: .85em; font-weight: 600; text-transform: uppercase; letter-spacing: .3px; }
.facts dd { margin: 2px 0 0; }
.form-card { max-width: 600px; }
.label { display: block; font-weight: 600; margin-bottom: 4px; }
.fixed-value { margin: 0; }
select { padding: 8px 10px; border: 1px solid #b8c0cc; border-radius: 6px; font: inherit; background: #fff; color: inherit; max-width: 100%; }
fieldset.plans { border: none; padding: 0; margin: 0 0 20px; }
fieldset.plans legend { font-weight: 600; margin-bottom: 6px; padding: 0; }
.plan-option { display: flex; gap: 10px; align-items: baseline; font-weight: 400; border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; margin: 0 0 8px; cursor: pointer; }
.plan-option:has(input:checked) { border-color: var(--accent); background: #f3f6fd; }
.controls { display: flex; gap: 8px; flex-wrap: wrap; margin-bottom: 8px; }
.controls form { margin: 0; }
button[disabled] { cursor: default; filter: none; opacity: .7; }
.plan-form { margin-top: 16px; padding-top: 16px; border-top: 1px solid var(--line); }
.plan-form .field { flex: 0 1 auto; }
.failure-panel { background: #fef3f2; border: 1px solid #f5b8b1; border-left: 5px solid var(--danger); border-radius: var(--radius); padding: 16px 20px; margin: 0 0 20px; color: #7a1a12; }
.failure-panel h2, .failure-panel h3 { color: var(--danger); margin-bottom: 6px; }
.failure-panel p { margin: 6px 0 0; }
.failure-panel .failure-message { white-space: pre-line; color: var(--ink); }
.failure-panel a { color: var(--danger); font-weight: 600; }
pre.log { background: #0f172a; color: #e2e8f0; border-radius: 6px; padding: 14px 16px; margin: 0; max-height: 70vh; overflow: auto; white-space: pre-wrap; word-break: break-word;
  font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .84em; line-height: 1.45; }
pre.log:focus-visible { outline-color: #93b4ff; }
pre.log .log-stderr { color: #fca5a5; }
#live-logs { min-height: 6em; }
/* Custom domains */
.badge.domain-active { background: #ecfdf3; border-color: #a6e7c1; color: var(--ok); }
.badge.domain-pending, .badge.domain-verifying { background: #fff7e6; border-color: #f3c77a; color: var(--warn); }
.badge.domain-error { background: #fef3f2; border-color: #f5b8b1; color: var(--danger); }
ul.domains { list-style: none; padding: 0; margin: 0 0 16px; }
li.domain { border: 1px solid var(--line); border-radius: var(--radius); padding: 12px 16px; margin: 0 0 12px; }
li.domain h3 { margin: 0; font-size: 1.05em; word-break: break-all; }
li.domain .facts { margin: 8px 0; }
.domain-reason { color: var(--danger); margin: 4px 0 8px; }
.dns-record .copy-row { display: flex; gap: 8px; align-items: center; }
.dns-record input { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; min-width: 16em; }
/* Billing */
.billing-hints { list-style: none; padding: 10px 0 0; margin: 8px 0 0; border-top: 1px solid var(--line); font-size: .9em; color: var(--muted); }
.billing-hints li { margin: 2px 0; }
.billing-hints strong { color: var(--ink); }
.balance { font-size: 1.8em; margin: 0 0 8px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.credit { color: var(--ok); }
fieldset.env-row { border: none; border-bottom: 1px solid var(--line, #e4e7ec); padding: 0 0 10px; margin: 0 0 10px; display: grid; grid-template-columns: minmax(140px, 1fr) 2fr auto; gap: 4px 12px; align-items: start; }
fieldset.env-row .field { margin: 0; }
fieldset.env-row textarea { min-height: 38px; font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.env-remove { align-self: end; padding-bottom: 8px; white-space: nowrap; }
.env-row-errors, .env-paste-errors { grid-column: 1 / -1; padding-left: 18px; }
.env-paste fieldset.plans label { display: block; }
/* Metrics */
.metric-chart { position: relative; margin: 0 0 24px; }
.metric-chart svg[data-points] { touch-action: pan-y; }
.chart-readout { position: absolute; top: 2.4em; margin: 0; padding: 4px 8px; background: var(--card); border: 1px solid var(--line); border-radius: 6px; font-size: .85em; white-space: nowrap; pointer-events: none; box-shadow: 0 2px 6px rgba(16, 24, 40, .12); }
line.chart-guide { stroke: #57606a; stroke-width: 1; }
`;
