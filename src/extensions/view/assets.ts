/**
 * The page's markup and style, served as they are. The scripts are TypeScript beside this file
 * (./page/), compiled with everything else; nothing is fetched from anywhere but this server.
 */

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>aszcol view</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/style.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="bar" role="banner">
  <a class="brand" href="/">aszcol <span>view</span></a>
  <nav class="crumbs" id="crumbs" aria-label="Breadcrumb"></nav>
  <div class="live" id="live" role="status" aria-live="polite"></div>
</header>
<main id="main" tabindex="-1"><p class="muted pad">Loading…</p></main>
<script type="module" src="/assets/app.js"></script>
</body>
</html>
`;

/**
 * The spec's dark palette: deep navy ground, blue/green/orange/purple/teal/pink/red accents; a
 * light one beside it when the system asks for light (CSS only, nothing to click).
 */
export const STYLE_CSS = `
:root {
  --ground: #07111f; --surface: #0d1929; --surface2: #11213a; --line: #263b55;
  --text: #e9f0f8; --muted: #9cb0c7; --faint: #6f859f;
  --blue: #58a8ff; --green: #35c980; --orange: #f4a641; --purple: #ac8cff; --teal: #31c7bd; --pink: #ef6eae; --red: #ff6f78;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  --sans: Inter, system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  --selected: #13284a; --bad-ground: #2a1218; --bad-text: #ffc9cd; --warn-ground: #241b0e;
  color-scheme: dark;
}
@media (prefers-color-scheme: light) {
  :root {
    --ground: #f7f9fc; --surface: #ffffff; --surface2: #eaf0f7; --line: #d3dce8;
    --text: #14202e; --muted: #4d6077; --faint: #73859a;
    --blue: #1f6fd1; --green: #16844f; --orange: #b26a00; --purple: #6d4fc9; --teal: #0c8a82; --pink: #c0357a; --red: #c8323e;
    --selected: #dce9fb; --bad-ground: #fdecee; --bad-text: #8a1c26; --warn-ground: #fff4e0;
    color-scheme: light;
  }
}
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; }
body { background: var(--ground); color: var(--text); font: 14px/1.45 var(--sans); display: flex; flex-direction: column; }
a { color: var(--blue); text-decoration: none; }
a:hover { text-decoration: underline; }
:focus-visible { outline: 2px solid var(--blue); outline-offset: 1px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--surface); padding: 6px 10px; z-index: 10; }
.skip:focus { left: 8px; }
.muted { color: var(--muted); }
.faint { color: var(--faint); }
.pad { padding: 16px 20px; }
.mono, code { font-family: var(--mono); font-size: 12.5px; }
.bar { display: flex; align-items: center; gap: 16px; padding: 8px 16px; background: var(--surface); border-bottom: 1px solid var(--line); flex: none; }
.brand { font-weight: 700; color: var(--text); letter-spacing: .2px; }
.brand span { color: var(--teal); font-weight: 500; }
.crumbs { display: flex; gap: 8px; align-items: center; color: var(--muted); min-width: 0; flex: 1; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.crumbs .sep { color: var(--faint); }
.live { color: var(--muted); font-size: 12px; white-space: nowrap; }
.live .dot { display: inline-block; width: 8px; height: 8px; border-radius: 50%; background: var(--green); margin-right: 6px; vertical-align: 0; }
.live.stale .dot { background: var(--orange); }
.live.flash { color: var(--green); }
main { flex: 1; min-height: 0; display: flex; flex-direction: column; }
main:focus { outline: none; }

/* badges */
.badge { display: inline-block; padding: 0 6px; border-radius: 9px; font-size: 11.5px; line-height: 18px; border: 1px solid var(--line); color: var(--muted); white-space: nowrap; font-family: var(--mono); }
.q-exact_unique, .s-verified, .s-available { color: var(--green); border-color: #1d5a3e; }
.q-exact_ambiguous, .s-incomplete, .s-truncated { color: var(--orange); border-color: #6b4d22; }
.q-strong_inference { color: var(--teal); border-color: #1b5753; }
.q-weak_inference { color: var(--purple); border-color: #4b3d74; }
.q-unresolved, .q-conflict, .s-mismatch, .s-failed, .u-open { color: var(--red); border-color: #6d2c33; }
.s-unavailable, .s-omitted, .s-redacted { color: var(--orange); border-color: #6b4d22; }
.u-resolved, .u-terminal { color: var(--faint); }
.k { font-family: var(--mono); font-size: 11.5px; padding: 0 6px; border-radius: 4px; background: var(--surface2); color: var(--muted); white-space: nowrap; }
.k-message-external { color: var(--blue); } .k-message-assistant, .k-agent-output { color: var(--green); }
.k-tool, .k-agent-call { color: var(--orange); } .k-llm-call { color: var(--purple); } .k-thinking { color: #8f7fc4; }
.k-context-injection { color: var(--faint); } .k-runtime-notification { color: var(--pink); } .k-agent-launch_ack { color: var(--teal); }
.k-error-api, .k-message-synthetic { color: var(--red); } .k-epoch-boundary, .k-epoch-summary { color: var(--teal); } .k-run { color: var(--muted); }

/* list */
.list-wrap { padding: 16px 20px; overflow: auto; }
h1 { font-size: 18px; margin: 0 0 12px; font-weight: 600; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 500; font-size: 12px; position: sticky; top: 0; background: var(--ground); }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.list-controls { display: flex; gap: 10px; margin: 0 0 12px; flex-wrap: wrap; }
.list-controls input, .list-controls select { background: var(--surface); color: var(--text); border: 1px solid var(--line); border-radius: 6px; padding: 5px 8px; font: inherit; }
.list-controls input { flex: 0 1 420px; min-width: 200px; }
th button.sort { background: none; border: 0; padding: 0; color: inherit; font: inherit; cursor: pointer; text-align: inherit; }
th[aria-sort=ascending], th[aria-sort=descending] { color: var(--text); }
td.title-cell { max-width: 460px; overflow-wrap: anywhere; }
tr.conv-row:hover td, tr.conv-row:focus-within td { background: var(--surface); }
.empty { border: 1px dashed var(--line); border-radius: 8px; padding: 20px; max-width: 720px; background: var(--surface); }
.empty code { display: block; margin-top: 10px; padding: 8px 10px; background: var(--ground); border-radius: 6px; color: var(--green); }

/* conversation */
.summary { display: flex; flex-wrap: wrap; align-items: baseline; gap: 6px 14px; padding: 10px 16px; border-bottom: 1px solid var(--line); flex: none; }
.summary h1 { margin: 0; font-size: 16px; }
.summary .stat b { color: var(--text); font-weight: 600; font-variant-numeric: tabular-nums; }
.summary .stat { color: var(--muted); font-size: 13px; }
.problems { margin: 0; padding: 8px 16px 8px 32px; background: var(--bad-ground); border-bottom: 1px solid #6d2c33; color: var(--bad-text); font-size: 13px; flex: none; }
.timeline { position: relative; flex: none; border-bottom: 1px solid var(--line); background: var(--surface); }
.timeline canvas { display: block; width: 100%; cursor: pointer; }
.timeline .legend { position: absolute; right: 12px; bottom: 2px; font-size: 11px; color: var(--faint); pointer-events: none; }
.panes { flex: 1; min-height: 0; display: grid; grid-template-columns: minmax(0, 1fr) minmax(340px, 38%); }
.left { display: flex; flex-direction: column; min-height: 0; border-right: 1px solid var(--line); }
.right { display: flex; flex-direction: column; min-height: 0; background: var(--surface); }
[role=tablist] { display: flex; gap: 2px; padding: 0 10px; border-bottom: 1px solid var(--line); flex: none; }
[role=tab] { background: none; border: 0; border-bottom: 2px solid transparent; color: var(--muted); padding: 8px 10px; font: inherit; font-size: 13px; cursor: pointer; }
[role=tab][aria-selected=true] { color: var(--text); border-bottom-color: var(--blue); }
[role=tab] .count { color: var(--faint); margin-left: 4px; }
[role=tab] .count.bad { color: var(--red); }
.tabpanel { flex: 1; min-height: 0; overflow: auto; }
.tabpanel[hidden] { display: none; }

/* transcript */
.tree { padding: 6px 0 40px; }
.row { display: flex; gap: 8px; align-items: baseline; padding: 3px 12px; border-left: 3px solid transparent; cursor: pointer; min-width: 0; }
.row:hover { background: var(--surface); }
.row:focus { outline: none; background: var(--surface2); border-left-color: var(--blue); }
.row.selected { background: var(--selected); border-left-color: var(--teal); }
.row .tw { width: 14px; flex: none; color: var(--faint); text-align: center; }
.row .txt { min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; flex: 1 1 45%; }
.row .meta { color: var(--faint); font-size: 12px; white-space: nowrap; flex: 0 1 auto; min-width: 0; overflow: hidden; text-overflow: ellipsis; }
.row[data-kind="context.injection"] .txt { color: var(--faint); }
.row .badges { flex: none; white-space: nowrap; }
.row .time { flex: none; color: var(--faint); font-size: 12px; font-variant-numeric: tabular-nums; white-space: nowrap; min-width: 86px; text-align: right; }
.talk { margin: 6px 8px; border: 1px solid var(--line); border-radius: 8px; background: var(--ground); }
.talk > .row { padding: 8px 10px; border-radius: 8px 8px 0 0; align-items: center; }
.talk.open > .row { border-bottom: 1px solid var(--line); }
.talk .label { font-weight: 600; }
.talk .reply { padding: 0 12px 8px 36px; color: var(--muted); font-size: 13px; overflow-wrap: anywhere; }
.talk > .row { flex-wrap: wrap; }
.talk > .row .txt { white-space: normal; overflow-wrap: anywhere; }
.talk > .row .meta { white-space: normal; overflow: visible; }
.row.ctx-group { cursor: pointer; }
.row.ctx-group .ctx-toggle { font-family: var(--sans); color: var(--muted); }
.summary .totals { display: flex; flex-wrap: wrap; gap: 6px 14px; flex-basis: 100%; }
.talk.child { border-color: #3b3566; }
.stream-tag { font-family: var(--mono); font-size: 11.5px; color: var(--purple); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 180px; flex: none; }
.stream-tag.main { color: var(--blue); }
.kids { padding: 4px 0 6px; }
.unres-inline { margin: 2px 12px 2px 40px; padding: 3px 8px; border-left: 2px solid var(--red); background: var(--bad-ground); color: var(--bad-text); font-size: 12.5px; }
.unres-inline.settled { border-left-color: var(--line); background: var(--surface); color: var(--muted); }
.section-title { padding: 12px 16px 4px; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .6px; }

/* inspector */
.insp { padding: 12px 14px 40px; }
.insp h2 { font-size: 14px; margin: 0 0 8px; font-weight: 600; word-break: break-all; }
.kv { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 3px 12px; font-size: 13px; margin: 6px 0 12px; }
.kv dt { color: var(--muted); }
.kv dd { margin: 0; word-break: break-word; }
.diff-add { color: var(--green); } .diff-del { color: var(--red); } .changes { padding: 10px 14px; }
.change-talk h3 { font-size: 13px; margin: 14px 0 6px; } .change summary { cursor: pointer; padding: 3px 0; }
pre.text { white-space: pre-wrap; word-break: break-word; background: var(--ground); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; margin: 4px 0 12px; max-height: 340px; overflow: auto; font: 12.5px/1.45 var(--mono); }
.note { color: var(--faint); font-size: 12px; margin: -6px 0 10px; }
.dropped { border: 1px solid #6b4d22; background: var(--warn-ground); border-radius: 6px; padding: 6px 10px; margin: 6px 0 12px; font-size: 13px; }
.dropped h3, .insp h3 { font-size: 12px; text-transform: uppercase; letter-spacing: .5px; color: var(--muted); margin: 12px 0 6px; font-weight: 600; }
.dropped h3 { color: var(--orange); margin-top: 2px; }
.edge { display: grid; grid-template-columns: auto auto minmax(0, 1fr); gap: 4px 8px; align-items: baseline; padding: 6px 0; border-bottom: 1px solid var(--line); font-size: 13px; }
.edge .via { grid-column: 1 / -1; color: var(--muted); font-size: 12px; }
.refs { display: flex; flex-wrap: wrap; gap: 6px; margin: 6px 0 10px; }
.refs button, .linkbtn { background: var(--surface2); border: 1px solid var(--line); color: var(--text); border-radius: 6px; padding: 2px 8px; font: 12px var(--mono); cursor: pointer; }
.refs button[aria-pressed=true] { border-color: var(--blue); color: var(--blue); }
.linkbtn { background: none; border: 0; color: var(--blue); padding: 0; font-family: var(--mono); text-align: left; word-break: break-all; }
.gq { background: none; border: 1px solid var(--line); color: var(--faint); border-radius: 50%; width: 16px; height: 16px; font-size: 10px; line-height: 13px; padding: 0; margin-left: 4px; cursor: pointer; vertical-align: 1px; }
.gloss { grid-column: 1 / -1; background: var(--ground); border: 1px solid var(--line); border-radius: 6px; padding: 6px 8px; font-size: 12.5px; color: var(--muted); }
.part { border: 1px solid var(--line); border-radius: 6px; padding: 6px 8px; margin: 6px 0; }
.help { color: var(--faint); font-size: 12px; padding: 8px 14px; border-top: 1px solid var(--line); flex: none; }
@media (max-width: 900px) { .panes { grid-template-columns: 1fr; } .right { border-top: 1px solid var(--line); } }
.usage-chart { display: block; margin: 8px 16px; overflow: visible; }
.usage-chart .usage-label { font-size: 10px; fill: var(--muted); }
.usage-chart .part-input { fill: var(--blue); } .usage-key.part-input { color: var(--blue); }
.usage-chart .part-output { fill: var(--green); } .usage-key.part-output { color: var(--green); }
.usage-chart .part-cache-write { fill: var(--orange); } .usage-key.part-cache-write { color: var(--orange); }
.usage-chart .part-cache-read { fill: var(--purple); } .usage-key.part-cache-read { color: var(--purple); }
.usage-legend { padding: 0 16px 8px; }
tr.usage-total td { font-weight: 600; }
`;
