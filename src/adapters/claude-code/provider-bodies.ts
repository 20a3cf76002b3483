import type { BodyFacts, BodyRole } from '../../formats/session-data/provider-body.js';

/**
 * Claude Code's raw API body dump (`OTEL_LOG_RAW_API_BODIES=file:DIR`), as 2.1.328 writes it
 * (measured through the lab): `<random uuid>.request.json`, `<request id>.response.json`, and
 * `index.jsonl`, one line per finished call naming `session_id`, `request_id`, `message_id`,
 * `message_uuid`, `model`, `timestamp`, `request_file` and `response_file`. A request also names its
 * session in `metadata.user_id` (a JSON string holding `session_id`), which is what asz 0.6 reads.
 */
export const ADAPTER = 'claude-code-provider/0.1.0';
export const DIALECT = 'claude-code/1';
export const INDEX_FILE = 'index.jsonl';

export interface IndexedCall {
  session: string;
  request?: string;
  call?: string;
  model?: string;
  timestamp?: string;
  requestFile?: string;
  responseFile?: string;
}

/** A response is named by its request id when the provider gave one (`req_…`), else by a random uuid. */
const REQUEST_ID = /^req_[A-Za-z0-9]+\.response\.json$/;

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** The role a file name says it holds, or undefined for a file that is not a body. */
export function roleOfName(name: string): BodyRole | undefined {
  if (name.endsWith('.request.json')) return 'request';
  if (name.endsWith('.response.json')) return 'response';
  return undefined;
}

/** One line of `index.jsonl`; undefined for a line that is not an object naming a session (a line being written, for one). */
export function readIndexLine(line: string): IndexedCall | undefined {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!o || typeof o !== 'object') return undefined;
  const session = str(o.session_id);
  if (!session) return undefined;
  return {
    session,
    request: str(o.request_id),
    call: str(o.message_id),
    model: str(o.model),
    timestamp: str(o.timestamp),
    requestFile: str(o.request_file),
    responseFile: str(o.response_file),
  };
}

/** The session a request body names in `metadata.user_id`, when it is readable. */
export function sessionOfRequest(text: string): string | undefined {
  try {
    const b = JSON.parse(text) as { metadata?: { user_id?: unknown } };
    const uid = b?.metadata?.user_id;
    if (typeof uid !== 'string') return undefined;
    return str((JSON.parse(uid) as Record<string, unknown>)?.session_id);
  } catch {
    return undefined;
  }
}

/** The message id a response body carries (`id`, the transcript's `message.id`), when it is readable. */
export function messageIdOfResponse(text: string): string | undefined {
  try {
    return str((JSON.parse(text) as Record<string, unknown>)?.id);
  } catch {
    return undefined;
  }
}

/** What a body is filed under: from the index line that names its file when there is one, else what the body itself says. */
export function factsOf(name: string, role: BodyRole, line: IndexedCall | undefined, session: string, text: string): BodyFacts {
  const call = line?.call ?? (role === 'response' ? messageIdOfResponse(text) : undefined);
  return {
    role,
    src: name,
    session,
    ...(line?.model ? { model: line.model } : {}),
    ...(call ? { call } : {}),
    ...(line?.request ? { request: line.request } : role === 'response' && REQUEST_ID.test(name) ? { request: name.slice(0, -'.response.json'.length) } : {}),
  };
}
