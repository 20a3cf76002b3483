/**
 * The transcripts behind the usage report's correctness claims, written by the real Claude Code
 * through the lab, one project (working directory) per case so that ccusage's per-project session
 * rows line up with them. Each case keeps its own request log: the mock API's record of every
 * call it answered and the usage it told the runtime, the ground truth both reports are held to.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { labRun, readRequestLog, type LoggedRequest } from './lab.js';

export interface UsageTruth {
  calls: number;
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

export interface UsageCase {
  /** Short name, and the ccusage issue it reproduces. */
  name: string;
  issue: string;
  /** The working directory the runtime ran in: ccusage names its session row after it. */
  cwd: string;
  /** The session the case is about (the fork's new session for the fork case). */
  session: string;
  /** Every session of the case. */
  sessions: string[];
  requests: LoggedRequest[];
}

export interface UsageLab {
  home: string;
  cases: UsageCase[];
}

export function truthOf(requests: LoggedRequest[]): UsageTruth {
  const t: UsageTruth = { calls: 0, input: 0, output: 0, cache_read: 0, cache_write: 0 };
  for (const r of requests) {
    t.calls++;
    t.input += r.usage.in;
    t.output += r.usage.out;
    t.cache_read += r.usage.cache_read;
    t.cache_write += r.usage.cache_write;
  }
  return t;
}

/** Rewrites a transcript as a writer without request ids does (the asyncai harness of ../shared/spec): every line kept, `requestId` gone. */
function dropRequestIds(transcript: string): void {
  const lines = readFileSync(transcript, 'utf8').split('\n');
  const out = lines.map((l) => {
    if (!l.trim()) return l;
    const o = JSON.parse(l) as Record<string, unknown>;
    delete o.requestId;
    return JSON.stringify(o);
  });
  writeFileSync(transcript, out.join('\n'));
}

/**
 * Rewrites a transcript as a runtime that writes each line while the answer streams does: every
 * line of a response but its last carries the usage the stream had reported by then (the API's
 * `message_start` count of 1 output token), only the last the final count.
 */
function streamingSnapshots(transcript: string): void {
  const rows = readFileSync(transcript, 'utf8')
    .split('\n')
    .map((l) => (l.trim() ? (JSON.parse(l) as { type?: string; message?: { id?: string; usage?: { output_tokens?: number } } }) : undefined));
  const last = new Map<string, number>();
  rows.forEach((r, i) => {
    if (r?.type === 'assistant' && r.message?.id) last.set(r.message.id, i);
  });
  rows.forEach((r, i) => {
    const u = r?.type === 'assistant' && r.message?.id && last.get(r.message.id) !== i ? r.message.usage : undefined;
    if (u) u.output_tokens = 1;
  });
  writeFileSync(transcript, rows.map((r) => (r ? JSON.stringify(r) : '')).join('\n'));
}

/** What `claude --fork-session` leaves: the history copied into a new session's file, under the new id. */
function forkTranscript(transcript: string, session: string): string {
  const fork = randomUUID();
  const text = readFileSync(transcript, 'utf8').split(session).join(fork);
  writeFileSync(join(dirname(transcript), `${fork}.jsonl`), text);
  return fork;
}

/** The message ids a session's subagent transcripts hold: which logged calls ran in a subagent. */
export function subagentMessageIds(transcript: string): Set<string> {
  const dir = join(dirname(transcript), basename(transcript, '.jsonl'), 'subagents');
  const ids = new Set<string>();
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.jsonl'));
  } catch {
    return ids;
  }
  for (const n of names)
    for (const l of readFileSync(join(dir, n), 'utf8').split('\n')) {
      if (!l.trim()) continue;
      const id = (JSON.parse(l) as { message?: { id?: unknown } }).message?.id;
      if (typeof id === 'string' && id.startsWith('msg_')) ids.add(id);
    }
  return ids;
}

export async function buildUsageLab(base: string): Promise<UsageLab & { transcripts: Record<string, string> }> {
  const home = join(base, 'home');
  const cases: UsageCase[] = [];
  const transcripts: Record<string, string> = {};
  const run = async (name: string, prompt: string, extra: { tools?: string; resume?: string } = {}) => {
    const r = await labRun({ configDir: home, cwd: join(base, name), prompt, log: join(base, `${name}.jsonl`), ...extra });
    transcripts[r.session_id] = r.transcript;
    return r;
  };
  /** A case whose truth is the request log of the runs made in folder `name`; `session` is the row to read, `sessions` every one the case made. */
  const add = (issue: string, name: string, description: string, session: string, sessions = [session]) =>
    cases.push({ name: description, issue, cwd: join(base, name), session, sessions, requests: readRequestLog(join(base, `${name}.jsonl`)) });

  const multi = await run('multi', 'PARALLEL please', { tools: 'Bash' });
  add('#389', 'multi', 'one response in several lines (thinking, text, two tool_use)', multi.session_id);

  const snapshots = await run('snapshots', 'PARALLEL please', { tools: 'Bash' });
  streamingSnapshots(snapshots.transcript);
  add('#938', 'snapshots', 'the early lines of a response carrying streaming snapshots of its usage', snapshots.session_id);

  const noIds = await run('asyncai', 'PARALLEL please', { tools: 'Bash' });
  dropRequestIds(noIds.transcript);
  add('#976', 'asyncai', 'no requestId (the asyncai writer)', noIds.session_id);

  const first = await run('resume', 'PARALLEL please', { tools: 'Bash' });
  await run('resume', 'and one more thing', { resume: first.session_id });
  add('resume', 'resume', 'a resumed session', first.session_id);

  const original = await run('fork', 'PARALLEL please', { tools: 'Bash' });
  const fork = forkTranscript(original.transcript, original.session_id);
  await run('fork', 'and on the fork', { resume: fork });
  add('fork', 'fork', 'a forked session (history copied into the new session)', fork, [original.session_id, fork]);

  const delegate = await run('agents', 'DELEGATE now', { tools: 'Bash,Agent' });
  add('subagents', 'agents', 'subagents', delegate.session_id);
  return { home, cases, transcripts };
}
