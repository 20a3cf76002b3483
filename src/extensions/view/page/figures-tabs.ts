/**
 * The inspector's Execution and Prompt tabs. Execution: where the time and the money went for the
 * selected step, as assembly's telemetry join wrote it (a tool's execution time, its permission
 * decision and who made it, time blocked on the user; a call's API time, time to first token, cost
 * and failed attempts; a talk's totals), each figure that is unavailable named with the reason.
 * Prompt: what a provider call was sent (the input manifest) and what changed in the context since
 * the previous call of its stream; the system prompt's text and the message list load on request.
 */
import type { ViewNode } from '../../../formats/view/types.js';
import type { CallPrompt } from '../prompts.js';
import { badge, fmtBytes, fmtDur, getJson, h, type Child } from './dom.js';
import { kv, value } from './inspector-parts.js';

const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
export const fmtCost = (usd: number | undefined) => (usd === undefined ? undefined : `$${usd.toFixed(usd < 1 ? 4 : 2)}`);
const list = (xs: string[]) => (xs.length ? xs.join(', ') : h('span', { class: 'faint' }, 'none'));

function unavailable(a: Record<string, unknown>): Child[] {
  const missing = Array.isArray(a.unavailable) ? (a.unavailable as string[]) : [];
  if (!missing.length) return [];
  return [
    h('p', { class: 'note', 'data-unavailable': missing.join(' ') }, `Unavailable: ${missing.join(', ')} — ${str(a.unavailable_reason) ?? 'no reason given'}.`),
  ];
}

export function executionTab(n: ViewNode): Child[] {
  const a = n.attrs ?? {};
  const out: Child[] = [h('h2', null, 'Execution')];
  if (n.kind === 'tool' || n.kind === 'agent.call') {
    out.push(
      kv([
        ['tool', n.name ?? str(a.name)],
        ['execution time', fmtDur(num(a.execution_ms))],
        ['started', str(a.started_at)],
        ['success', a.success === undefined ? undefined : badge(String(a.success), a.success ? 's-available' : 's-unavailable')],
        ['decision', str(a.decision) ? h('span', { 'data-decision': str(a.decision) }, str(a.decision)!) : undefined],
        ['decided by', str(a.decision_source)],
        ['blocked on the user', fmtDur(num(a.blocked_on_user_ms))],
        ['result size', num(a.result_bytes) === undefined ? undefined : fmtBytes(num(a.result_bytes))],
        ['error', str(a.error_class)],
        ['request → result', fmtDur(n.request_to_result_ms)],
        ['MCP server', str(a.mcp_server)],
      ]),
      ...unavailable(a),
    );
  } else if (n.kind === 'llm.call') {
    const attempts = Array.isArray(a.attempts) ? (a.attempts as Record<string, unknown>[]) : [];
    out.push(
      kv([
        ['request id', str(a.request_id)],
        ['model', str(a.model)],
        ['API time', fmtDur(num(a.duration_ms))],
        ['time to first token', fmtDur(num(a.ttft_ms))],
        ['cost', fmtCost(num(a.cost_usd))],
        ['speed', str(a.speed)],
        [
          'failed attempts',
          attempts.length
            ? attempts.map((t) => `#${String(t.attempt ?? '?')} ${String(t.status_code ?? '?')} (${fmtDur(num(t.duration_ms))})`).join(', ')
            : undefined,
        ],
        ['time lost to retries', fmtDur(num(a.attempts_lost_ms))],
      ]),
      ...unavailable(a),
    );
  } else if (n.kind === 'talk') {
    out.push(
      kv([
        ['cost', fmtCost(num(a.cost_usd))],
        ['API time', fmtDur(num(a.api_ms))],
        ['tool time', fmtDur(num(a.tool_ms))],
        ['API calls', num(a.api_calls) === undefined ? undefined : String(a.api_calls)],
        ['API errors', num(a.api_errors) === undefined ? undefined : String(a.api_errors)],
      ]),
    );
  } else out.push(h('p', { class: 'muted' }, 'Execution figures are kept for tools, provider calls and talks. Select one of those.'));
  return out;
}

function changeView(c: NonNullable<ViewNode['context_change']>): Child[] {
  return [
    h('h3', null, 'Changed since the previous call'),
    kv([
      ['previous call', c.previous],
      ['messages kept', String(c.messages_kept)],
      ['messages added', h('span', { 'data-added': String(c.messages_added) }, String(c.messages_added))],
      ['messages dropped', c.messages_dropped ? badge(`${c.messages_dropped} (compaction or rewrite)`, 's-truncated') : '0'],
      ['added', c.added.length ? c.added.map((m) => `${m.role} [${m.blocks.join(', ')}] ${fmtBytes(m.bytes)}`).join(' · ') : undefined],
      ['tools added', list(c.tools_added)],
      ['tools removed', list(c.tools_removed)],
      ['tools changed', list(c.tools_changed)],
      [
        'system prompt',
        c.system_changed ? badge(`changed (${c.system_chars_delta >= 0 ? '+' : ''}${c.system_chars_delta} chars)`, 's-truncated') : 'unchanged',
      ],
      ['parameters changed', list(c.parameters_changed)],
    ]),
  ];
}

export function promptTab(n: ViewNode, conversation: string): Child[] {
  if (n.kind !== 'llm.call') return [h('p', { class: 'muted' }, 'A prompt belongs to a provider call. Select an llm.call step.')];
  const p = n.prompt;
  if (!p) {
    return [
      h('h2', null, 'Prompt'),
      h(
        'p',
        { class: 'muted' },
        'No provider body is captured for this call. Set OTEL_LOG_RAW_API_BODIES=file:DIR for Claude Code and provider_bodies: DIR on the local receiver.',
      ),
    ];
  }
  const r = p.request;
  const out: Child[] = [h('h2', null, 'Prompt')];
  if (r) {
    out.push(
      kv([
        ['model', r.model],
        ['system prompt', `${r.system.chars} chars in ${r.system.blocks} block(s), sha256 ${r.system.sha256.slice(0, 12)}`],
        [
          'tools offered',
          h('span', { 'data-tools': String(r.tools.count) }, `${r.tools.count}: ${r.tools.names.join(', ')} (schemas ${fmtBytes(r.tools.schema_bytes)})`),
        ],
        [
          'messages',
          h(
            'span',
            { 'data-messages': String(r.messages.count) },
            `${r.messages.count} (${Object.entries(r.messages.roles)
              .map(([k, v]) => `${v} ${k}`)
              .join(', ')}), ${fmtBytes(r.messages.bytes)}`,
          ),
        ],
        ['cache breakpoints', r.cache_breakpoints.length ? r.cache_breakpoints.map((b) => b.at + (b.ttl ? ` (${b.ttl})` : '')).join(', ') : 'none'],
        ...Object.entries(r.parameters).map(([k, v]): [string, Child] => [k, value(v)]),
      ]),
    );
  }
  if (p.response)
    out.push(
      h('h3', null, 'Response'),
      kv([
        ['stop reason', p.response.stop_reason],
        ['content', p.response.content.join(', ')],
        ['usage', value(p.response.usage)],
      ]),
    );
  if (n.context_change) out.push(...changeView(n.context_change));
  else if (r) out.push(h('p', { class: 'note' }, 'The first captured call of its stream: nothing to compare with.'));
  for (const problem of p.problems ?? []) out.push(h('p', { class: 'note' }, problem));
  const more = h('div', null, h('button', { class: 'linkbtn', 'data-load-prompt': '1' }, 'Show the system prompt and every message'));
  more.querySelector('button')!.addEventListener('click', () => {
    more.textContent = 'Loading…';
    getJson<CallPrompt>(`/api/c/${encodeURIComponent(conversation)}/calls/${encodeURIComponent(n.id.replace(/^call\//, ''))}/prompt`)
      .then(({ status, body: whole }) => {
        if (status !== 200) throw new Error(`HTTP ${status}`);
        more.textContent = '';
        more.append(
          h('h3', null, 'System prompt'),
          h('pre', { class: 'text', 'data-system': '1' }, whole.request?.system.text ?? ''),
          h('h3', null, 'Messages'),
          h('ol', null, ...(whole.request?.messages.items ?? []).map((m) => h('li', null, `${m.role} [${m.blocks.join(', ')}] ${fmtBytes(m.bytes)}`))),
        );
      })
      .catch((err: Error) => (more.textContent = `Could not load: ${err.message}`));
  });
  if (r) out.push(more);
  return out;
}
