/**
 * `aszcol conversation ID --calls` / `--tools`: the rows `/api/c/{id}/calls` and `/tools` serve,
 * as a table or (`--json`) the same JSON, built from the same document.
 */
import { callsAnswer, toolsAnswer } from '../extensions/view/figures-api.js';
import { loadViewInput } from '../extensions/view/load.js';
import { buildViewWithPrompts } from '../extensions/view/prompts.js';
import type { CallRow, TelemetrySummary, ToolRow } from '../formats/view/figures.js';
import { configFor, EXIT, type Io } from './context.js';

const cell = (v: unknown) => (v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v));

function totalsLine(t: TelemetrySummary): string {
  if (t.cost_usd === undefined) return 'totals: unavailable (no OTLP export from the runtime has landed for this conversation)';
  return `totals: cost_usd ${t.cost_usd}  api_ms ${cell(t.api_ms)}  tool_ms ${cell(t.tool_ms)}  api_calls ${cell(t.api_calls)}  api_errors ${cell(t.api_errors)}`;
}

function callLine(c: CallRow): string {
  const failed = c.attempts.length ? `  failed_attempts ${c.attempts.map((a) => a.status_code ?? '?').join(',')}` : '';
  const missing = c.unavailable ? `  unavailable ${c.unavailable.join(',')} (${c.unavailable_reason ?? ''})` : '';
  return `${c.message_id}  request ${cell(c.request_id)}  duration_ms ${cell(c.duration_ms)}  ttft_ms ${cell(c.ttft_ms)}  cost_usd ${cell(c.cost_usd)}${failed}${missing}`;
}

function toolLine(t: ToolRow): string {
  const missing = t.unavailable ? `  unavailable ${t.unavailable.join(',')} (${t.unavailable_reason ?? ''})` : '';
  const mcp = t.mcp_tool ? `  mcp ${t.mcp_server ?? '-'}/${t.mcp_tool}` : '';
  return `${t.tool_use_id}  ${cell(t.name)}  duration_ms ${cell(t.duration_ms)}  success ${cell(t.success)}  decision ${cell(t.decision)}/${cell(t.decision_source)}  result_bytes ${cell(t.result_bytes)}${mcp}${missing}`;
}

export function runConversationFigures(id: string, opts: { config?: string; json?: boolean; calls?: boolean; tools?: boolean }, io: Io): number {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  if (opts.calls && opts.tools) {
    io.err('aszcol conversation: --calls and --tools print different tables; give one');
    return EXIT.config;
  }
  let doc;
  try {
    doc = buildViewWithPrompts(loadViewInput(cfg.storageRoot, id));
  } catch (err) {
    io.err(`aszcol conversation: ${(err as Error).message}`);
    return EXIT.problem;
  }
  if (opts.calls) {
    const a = callsAnswer(doc);
    if (opts.json) io.out(JSON.stringify(a));
    else {
      io.out(`conversation ${id}  ${a.calls.length} provider calls`);
      io.out(totalsLine(a.totals));
      for (const c of a.calls) io.out(callLine(c));
    }
  } else {
    const a = toolsAnswer(doc);
    if (opts.json) io.out(JSON.stringify(a));
    else {
      io.out(`conversation ${id}  ${a.tools.length} tool uses`);
      io.out(totalsLine(a.totals));
      for (const t of a.tools) io.out(toolLine(t));
    }
  }
  return EXIT.ok;
}
