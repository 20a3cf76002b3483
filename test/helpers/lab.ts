import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readdirSync, readFileSync, utimesSync } from 'node:fs';
import { SHARED } from './cli.js';

export interface LabRun {
  session_id: string;
  transcript: string;
  exit_code: number;
  stdout: string;
  stderr: string;
}

export interface LabOptions {
  configDir: string;
  cwd: string;
  prompt: string;
  script?: string;
  log?: string;
  resume?: string;
  tools?: string;
  otlp?: string;
  protocol?: string;
  /** `1`: also the runtime's beta spans. */
  traces?: string;
  /** Run the lab's MCP server, its calls logged to this file. */
  mcp?: string;
  /** The mock's own copy of every request body it received, one file per request id. */
  logBodies?: string;
  /** The runtime's own dump of every API request and response (`OTEL_LOG_RAW_API_BODIES=file:DIR`). */
  rawBodies?: string;
  /** Extra environment for the runtime, `K=V,…` (`OTEL_LOG_USER_PROMPTS=1`). */
  env?: string;
}

export const LAB_SCRIPT = join(SHARED, 'lab', 'scripts', 'basic.json');
/** basic.json plus SLOWAPI, SLOWTOOL, DENYME, MCPCALL, EDITFILE. */
export const WORK_SCRIPT = join(SHARED, 'lab', 'scripts', 'work.json');

/** Runs the real Claude Code CLI through ../shared/lab (a scripted API on loopback). */
export async function labRun(o: LabOptions): Promise<LabRun> {
  const lab = (await import(pathToFileURL(join(SHARED, 'lab', 'claude-lab.mjs')).href)) as { run: (o: LabOptions) => Promise<LabRun> };
  const r = await lab.run({ script: LAB_SCRIPT, ...o });
  if (r.exit_code !== 0 || !r.session_id) throw new Error(`claude-lab run failed (${r.exit_code}): ${r.stderr || r.stdout}`);
  return r;
}

export interface LoggedRequest {
  request_id: string;
  message_id: string;
  model: string;
  stop_reason: string;
  usage: { in: number; out: number; cache_read: number; cache_write: number };
  tools: { id: string; name: string }[];
  received_at?: string;
  answered_at?: string;
}

/** The mock's request log: one line per answered request, the ground truth for provider calls. */
export function readRequestLog(path: string): LoggedRequest[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LoggedRequest);
}

/**
 * The runtime can exit before it finishes its last raw body (an empty or cut file, no index line).
 * Ages each such file of `rawDir` (but those `keep` names) ten minutes, so the collector's wait
 * for it is over and it lands as unreadable; returns their names.
 */
export function ageUnfinishedBodies(rawDir: string, keep: (name: string) => boolean = () => false): string[] {
  const readable = (text: string) => {
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  };
  const unfinished = readdirSync(rawDir).filter((n) => n.endsWith('.json') && !keep(n) && !readable(readFileSync(join(rawDir, n), 'utf8')));
  const longAgo = new Date(Date.now() - 600_000);
  for (const n of unfinished) utimesSync(join(rawDir, n), longAgo, longAgo);
  return unfinished;
}

/**
 * Request bodies the runtime finished but never named in its index (it exited before writing the
 * line), by file name, with the session their metadata names. Such a body lands in its session,
 * but nothing ties it to a call: a request carries no request id, and the file's name is random.
 */
export function unindexedRequests(rawDir: string): Map<string, string> {
  const indexed = new Set<string>();
  for (const line of readFileSync(join(rawDir, 'index.jsonl'), 'utf8').split('\n').filter(Boolean)) {
    const e = JSON.parse(line) as { request_file?: string; response_file?: string };
    for (const f of [e.request_file, e.response_file]) if (f) indexed.add(f);
  }
  const out = new Map<string, string>();
  for (const n of readdirSync(rawDir).filter((x) => x.endsWith('.request.json') && !indexed.has(x))) {
    try {
      const userId = (JSON.parse(readFileSync(join(rawDir, n), 'utf8')) as { metadata?: { user_id?: unknown } }).metadata?.user_id;
      const session = typeof userId === 'string' ? /"session_id":"([^"]+)"|session_([0-9a-f-]{36})/.exec(userId) : null;
      if (session) out.set(n, session[1] ?? session[2]!);
    } catch {
      // cut short: it waits (unclaimableBodies), or lands as unreadable when named
    }
  }
  return out;
}

/**
 * The body files the local receiver must leave waiting, since nothing can say whose they are: no
 * index line names them (the runtime exited before writing it), and the body itself does not tell
 * either — a request cut short, or a response that is cut short or whose message id no transcript
 * under `projectsDir` holds (a side call, or a call the runtime never recorded).
 */
export function unclaimableBodies(rawDir: string, projectsDir: string): string[] {
  const indexed = new Set<string>();
  for (const line of readFileSync(join(rawDir, 'index.jsonl'), 'utf8').split('\n').filter(Boolean)) {
    const e = JSON.parse(line) as { request_file?: string; response_file?: string };
    for (const f of [e.request_file, e.response_file]) if (f) indexed.add(f);
  }
  const transcripts = (readdirSync(projectsDir, { recursive: true }) as string[])
    .filter((n) => n.endsWith('.jsonl'))
    .map((n) => readFileSync(join(projectsDir, n), 'utf8'))
    .join('\n');
  return readdirSync(rawDir).filter((n) => {
    if (!/\.(request|response)\.json$/.test(n) || indexed.has(n)) return false;
    let body: { id?: unknown; metadata?: { user_id?: unknown } };
    try {
      body = JSON.parse(readFileSync(join(rawDir, n), 'utf8')) as typeof body;
    } catch {
      return true; // cut short, and named by no index line: no session to land it in
    }
    if (n.endsWith('.request.json')) return typeof body.metadata?.user_id !== 'string';
    return typeof body.id !== 'string' || !transcripts.includes(JSON.stringify(body.id));
  });
}
