/**
 * Which withholding categories a landed Claude Code record's content falls in, beyond what its
 * parts and flags say (formats/view/withhold.ts reads those). Measured with 2.1.328 through
 * ../shared/lab: the person's prompt is also in the `queue-operation` and `last-prompt`
 * bookkeeping records and in the `claude_code.user_prompt` event (with OTEL_LOG_USER_PROMPTS);
 * the `api-request*` records and provider body dumps hold a request, which carries every prompt,
 * tool input and output, the system prompt and the tool schemas again, so they go with any category.
 */
import type { SdRecord } from '../../formats/session-data/types.js';
import { WITHHOLD_CATEGORIES, type WithholdCategory } from '../../formats/view/withhold.js';

const PROMPT_RECORDS = new Set(['queue-operation', 'last-prompt']);
const REQUEST_RECORDS = new Set(['api-request', 'api-request-blob', 'api-request-shape']);
const PROMPT_EVENTS = new Set(['claude_code.user_prompt']);
/** Provider bodies sent inline (OTEL_LOG_RAW_API_BODIES=1): a whole request or response, like a body dump. */
const BODY_EVENTS = new Set(['claude_code.api_request_body', 'claude_code.api_response_body']);

export function claudeCodeWithheldContent(record: SdRecord, fileKind: string): WithholdCategory[] {
  if (fileKind === 'provider_body') return [...WITHHOLD_CATEGORIES];
  const out: WithholdCategory[] = [];
  for (const p of record.parts) {
    if (p.k !== 'data' || !p.data || typeof p.data !== 'object') continue;
    const d = p.data as Record<string, unknown>;
    const type = typeof d.type === 'string' ? d.type : undefined;
    const event = typeof d.event === 'string' ? d.event : undefined;
    if ((type && REQUEST_RECORDS.has(type)) || (event && BODY_EVENTS.has(event))) return [...WITHHOLD_CATEGORIES];
    if ((type && PROMPT_RECORDS.has(type)) || (event && PROMPT_EVENTS.has(event))) out.push('user_prompts');
  }
  return out;
}
