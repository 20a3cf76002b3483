/**
 * Which withholding categories a landed Claude Code record's content falls in, beyond what its
 * parts and flags say (formats/view/withhold.ts reads those). Measured with 2.1.328 through
 * ../shared/lab: the person's prompt is also in the `queue-operation` and `last-prompt`
 * bookkeeping records and in the `claude_code.user_prompt` event (with OTEL_LOG_USER_PROMPTS);
 * the `api-request*` records and provider body dumps hold a request, which carries every prompt,
 * tool input and output, the system prompt and the tool schemas again, so they go with any category.
 *
 * The runtime's own export carries content in attributes too (2.1.328 with
 * OTEL_LOG_USER_PROMPTS, OTEL_LOG_TOOL_DETAILS and the beta spans): `prompt` and `prompt_text` on
 * the user_prompt event, `user_prompt` on the `claude_code.interaction` span; `tool_parameters`
 * and `tool_input` on tool_decision and tool_result, `full_command` on the `claude_code.tool` span;
 * and the tool's `output` in that span's `tool.output` event. The inline bodies
 * (OTEL_LOG_RAW_API_BODIES=1: `api_request_body` / `api_response_body` events, the body in `body`)
 * are a request or a response whole, so they go with any category, as a body dump does.
 */
import type { SdRecord } from '../../formats/session-data/types.js';
import { WITHHOLD_CATEGORIES, type WithholdCategory } from '../../formats/view/withhold.js';

const PROMPT_RECORDS = new Set(['queue-operation', 'last-prompt']);
const REQUEST_RECORDS = new Set(['api-request', 'api-request-blob', 'api-request-shape']);
const PROMPT_EVENTS = new Set(['claude_code.user_prompt']);
/** Provider body events: the whole body inline (OTEL_LOG_RAW_API_BODIES=1), or the dump file's path (file:DIR), withheld like a dump. */
const BODY_EVENTS = new Set(['claude_code.api_request_body', 'claude_code.api_response_body']);
/** Files of the runtime's own export: one event or span per record, its attributes in the data part. */
const OTLP_KINDS = new Set(['otlp_log', 'otlp_span']);
/** Attributes of an event, a span or a span event whose value is content, by the category it is. */
const CONTENT_ATTRIBUTES: Record<string, WithholdCategory> = {
  prompt: 'user_prompts',
  prompt_text: 'user_prompts',
  user_prompt: 'user_prompts',
  tool_parameters: 'tool_inputs',
  tool_input: 'tool_inputs',
  full_command: 'tool_inputs',
  bash_command: 'tool_inputs',
  output: 'tool_outputs',
  tool_output: 'tool_outputs',
};

/** Attributes holding a whole provider request or response. */
const BODY_ATTRIBUTES = new Set(['body']);

function attributeCategories(attributes: unknown, out: Set<WithholdCategory>): void {
  if (!attributes || typeof attributes !== 'object') return;
  for (const key of Object.keys(attributes)) {
    if (BODY_ATTRIBUTES.has(key)) for (const c of WITHHOLD_CATEGORIES) out.add(c);
    const c = CONTENT_ATTRIBUTES[key];
    if (c) out.add(c);
  }
}

export function claudeCodeWithheldContent(record: SdRecord, fileKind: string): WithholdCategory[] {
  if (fileKind === 'provider_body') return [...WITHHOLD_CATEGORIES];
  const out = new Set<WithholdCategory>();
  for (const p of record.parts) {
    if (p.k !== 'data' || !p.data || typeof p.data !== 'object') continue;
    const d = p.data as Record<string, unknown>;
    const type = typeof d.type === 'string' ? d.type : undefined;
    const event = typeof d.event === 'string' ? d.event : undefined;
    if ((type && REQUEST_RECORDS.has(type)) || (event && BODY_EVENTS.has(event))) return [...WITHHOLD_CATEGORIES];
    if ((type && PROMPT_RECORDS.has(type)) || (event && PROMPT_EVENTS.has(event))) out.add('user_prompts');
    if (OTLP_KINDS.has(fileKind)) {
      attributeCategories(d.attributes, out);
      if (Array.isArray(d.events)) for (const e of d.events as { attributes?: unknown }[]) attributeCategories(e?.attributes, out);
    }
  }
  return [...out];
}
