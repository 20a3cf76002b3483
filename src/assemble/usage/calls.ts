/**
 * The provider calls a usage report counts, read off a folded chain: each `llm.call` node the
 * assembly wrote once per call, its tokens from the one record `usage_at` names (the last
 * fragment of a finished call), its cost from the runtime's `api_request` event when stage 9
 * joined one. A call whose usage is unavailable (never finished) is counted apart, not as zero.
 */
import type { Fold } from '../../formats/session-flow/fold.js';
import type { Ref } from '../../formats/session-flow/types.js';
import type { CallTokens } from './pricing.js';
import type { UsageRows } from './rows.js';

export interface UsageCall {
  conversation: string;
  session: string;
  /** The call's id (the provider's message id for Claude Code). */
  call: string;
  /** `main`, or the subagent's stream. */
  stream: string;
  /** The subagent's label (its description) when the call ran in one. */
  agent?: string;
  project?: string;
  /** Milliseconds since the epoch: the time of the record the usage was read from. */
  time?: number;
  model?: string;
  tokens: CallTokens;
  /** The runtime's own `cost_usd` for this call, from its `api_request` event. */
  runtime_cost_usd?: number;
}

export interface ChainCalls {
  calls: UsageCall[];
  /** Calls with no usage to count: never finished, or their record could not be read. */
  uncounted: { call: string; reason: string }[];
}

export function callsOfChain(conversation: string, fold: Fold, rows: UsageRows): ChainCalls {
  const session = fold.session ?? conversation;
  const project = rows.project();
  const agents = new Map<string, string | undefined>();
  for (const e of fold.entities.values()) if (e.t === 'node' && e.kind === 'stream' && e.stream) agents.set(e.stream, e.attrs?.label as string | undefined);
  const out: ChainCalls = { calls: [], uncounted: [] };
  for (const e of fold.entities.values()) {
    if (e.t !== 'node' || e.kind !== 'llm.call') continue;
    const callId = e.id.startsWith('call/') ? e.id.slice(5) : e.id;
    const attrs = e.attrs ?? {};
    const at = attrs.usage_at as Ref | undefined;
    if (attrs.usage !== 'observed_replayable' || !at) {
      out.uncounted.push({ call: callId, reason: 'the call never finished: its usage is a streaming stub' });
      continue;
    }
    const rec = rows.usageAt(at.seq, at.row);
    if (!rec) {
      out.uncounted.push({ call: callId, reason: `its usage record (file ${at.seq}, row ${at.row}) cannot be read` });
      continue;
    }
    if (rec.model?.startsWith('<')) {
      out.uncounted.push({ call: callId, reason: `written by the runtime itself (model ${rec.model}): no provider call` });
      continue;
    }
    const u = rec.usage;
    const stream = e.stream ?? 'main';
    const call: UsageCall = {
      conversation,
      session,
      call: callId,
      stream,
      tokens: { input: u.in ?? 0, output: u.out ?? 0, cache_read: u.cache_read ?? 0, cache_write: u.cache_write ?? 0 },
    };
    const agent = stream !== 'main' ? agents.get(stream) : undefined;
    if (agent) call.agent = agent;
    if (project) call.project = project;
    if (rec.time !== undefined) call.time = rec.time;
    const model = rec.model ?? (attrs.model as string | undefined);
    if (model) call.model = model;
    if (typeof attrs.cost_usd === 'number' && attrs.cost_usd_from === 'event') call.runtime_cost_usd = attrs.cost_usd;
    out.calls.push(call);
  }
  return out;
}
