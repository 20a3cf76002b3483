/**
 * `GET /api/c/{id}/calls` and `GET /api/c/{id}/tools`: the document's provider calls and tool uses
 * as rows, with the conversation's totals. They read the same cached document `/view` serves, so
 * the rows always agree with it.
 */
import { callRows, toolRows, type CallRow, type TelemetrySummary, type ToolRow } from '../../formats/view/figures.js';
import type { ViewDocument } from '../../formats/view/types.js';

export interface CallsAnswer {
  conversation: string;
  totals: TelemetrySummary;
  calls: CallRow[];
}

export interface ToolsAnswer {
  conversation: string;
  totals: TelemetrySummary;
  tools: ToolRow[];
}

function totalsOf(doc: ViewDocument): TelemetrySummary {
  const s = doc.summary;
  const t: TelemetrySummary = {};
  for (const k of ['cost_usd', 'api_ms', 'tool_ms', 'api_calls', 'api_errors'] as const) if (s[k] !== undefined) t[k] = s[k];
  return t;
}

export function callsAnswer(doc: ViewDocument): CallsAnswer {
  return { conversation: doc.conversation, totals: totalsOf(doc), calls: callRows(doc) };
}

export function toolsAnswer(doc: ViewDocument): ToolsAnswer {
  return { conversation: doc.conversation, totals: totalsOf(doc), tools: toolRows(doc) };
}
