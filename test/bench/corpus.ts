import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { rng } from '../helpers/rng.js';
export { rng } from '../helpers/rng.js';

/** A deterministic pseudo-random source, so two runs generate the same corpus. */

const WORDS = 'the build failed because a test expected the older output so we update the fixture and run make check again'.split(' ');
function prose(r: () => number, bytes: number): string {
  const out: string[] = [];
  let n = 0;
  while (n < bytes) {
    const w = WORDS[Math.floor(r() * WORDS.length)]!;
    out.push(w);
    n += w.length + 1;
  }
  return out.join(' ');
}

export const sessionId = (i: number) => `5e55${String(i).padStart(4, '0')}-0000-4000-8000-${String(i).padStart(12, '0')}`;
export const agentId = (i: number, j: number) => `a${(i * 100 + j).toString(16).padStart(16, '0')}`;

/**
 * Writes one transcript of about `target` bytes, shaped like Claude Code's: a prompt, then
 * provider calls in fragments (thinking with a signature, text, tool_use), tool results with
 * `toolUseResult`, attachments, bookkeeping lines; some results huge (`bigLines` up to 5 MB).
 */
export async function writeTranscript(path: string, session: string, target: number, r: () => number, bigLines: number[] = []): Promise<number> {
  const ws = createWriteStream(path);
  let written = 0;
  let n = 0;
  let parent: string;
  const uuid = () => {
    n++;
    return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
  };
  const put = async (o: unknown) => {
    const line = JSON.stringify(o) + '\n';
    written += Buffer.byteLength(line);
    if (!ws.write(line)) await once(ws, 'drain');
  };
  const promptId = 'p-' + session;
  const base = {
    isSidechain: false,
    userType: 'external',
    entrypoint: 'cli',
    cwd: '/Users/me/work',
    sessionId: session,
    version: '2.1.328',
    gitBranch: 'main',
  };
  let id = uuid();
  await put({
    ...base,
    parentUuid: null,
    promptId,
    type: 'user',
    message: { role: 'user', content: prose(r, 200) },
    uuid: id,
    timestamp: '2026-11-30T04:48:42.536Z',
    origin: { kind: 'human' },
  });
  parent = id;
  let call = 0;
  const bigs = [...bigLines];
  while (written < target) {
    call++;
    const msg = `msg_${session.slice(0, 8)}_${call}`;
    const usage = { input_tokens: 100, cache_creation_input_tokens: 20, cache_read_input_tokens: 3000, output_tokens: 40, service_tier: 'standard' };
    const tool = `toolu_${session.slice(0, 8)}_${call}`;
    for (const content of [
      [{ type: 'thinking', thinking: '', signature: 'S'.repeat(600) }],
      [{ type: 'text', text: prose(r, 300) }],
      [{ type: 'tool_use', id: tool, name: 'Bash', input: { command: 'make check', description: prose(r, 40) }, caller: { type: 'direct' } }],
    ]) {
      id = uuid();
      await put({
        ...base,
        parentUuid: parent,
        message: { id: msg, type: 'message', role: 'assistant', model: 'claude-opus-5-5', content, stop_reason: 'tool_use', usage },
        requestId: 'req_' + call,
        type: 'assistant',
        uuid: id,
        timestamp: '2026-11-30T04:48:43.000Z',
      });
      parent = id;
    }
    const size = bigs.length && r() < 0.05 ? bigs.shift()! : Math.floor(200 + r() * 6000);
    const out = prose(r, size);
    id = uuid();
    await put({
      ...base,
      parentUuid: parent,
      promptId,
      type: 'user',
      message: { role: 'user', content: [{ tool_use_id: tool, type: 'tool_result', content: out, is_error: false }] },
      uuid: id,
      timestamp: '2026-11-30T04:48:44.000Z',
      toolUseResult: { stdout: out, stderr: '', interrupted: false },
    });
    parent = id;
    if (r() < 0.2) await put({ type: 'api-request', sessionId: session, id: 'x' + call, params: { model: 'claude-opus-5-5', max_tokens: 128000 } });
    if (r() < 0.1)
      await put({
        ...base,
        parentUuid: parent,
        type: 'attachment',
        attachment: { type: 'date', date: '2026-11-30' },
        uuid: uuid(),
        timestamp: '2026-11-30T04:48:44.500Z',
      });
  }
  while (bigs.length) {
    const out = prose(r, bigs.shift()!);
    await put({
      ...base,
      parentUuid: parent,
      promptId,
      type: 'user',
      message: { role: 'user', content: [{ tool_use_id: 't', type: 'tool_result', content: out }] },
      uuid: uuid(),
      timestamp: '2026-11-30T04:48:45.000Z',
    });
  }
  ws.end();
  await once(ws, 'close');
  return written;
}

export interface CorpusSpec {
  sessions: number;
  mainBytes: number;
  children: number;
  childBytes: number;
  /** Sizes of single huge lines to plant, spread over the sessions. */
  bigLines?: number[];
  seed?: number;
}

/** Generates a corpus under `projects/`; returns its total size in bytes and the number of sources. */
export async function generateCorpus(projects: string, spec: CorpusSpec): Promise<{ bytes: number; sources: number }> {
  const r = rng(spec.seed ?? 42);
  let bytes = 0,
    sources = 0;
  const bigs = [...(spec.bigLines ?? [])];
  for (let i = 0; i < spec.sessions; i++) {
    const dir = join(projects, `-Users-me-project${i % 7}`);
    mkdirSync(join(dir, sessionId(i), 'subagents'), { recursive: true });
    const mine = bigs.length ? [bigs.shift()!] : [];
    bytes += await writeTranscript(join(dir, `${sessionId(i)}.jsonl`), sessionId(i), spec.mainBytes, r, mine);
    sources++;
    for (let j = 0; j < spec.children; j++) {
      bytes += await writeTranscript(join(dir, sessionId(i), 'subagents', `agent-${agentId(i, j)}.jsonl`), sessionId(i), spec.childBytes, r);
      const meta = JSON.stringify({ agentType: 'general-purpose', description: `child ${j}`, toolUseId: `toolu_${j}` });
      writeFileSync(join(dir, sessionId(i), 'subagents', `agent-${agentId(i, j)}.meta.json`), meta);
      bytes += meta.length;
      sources += 2;
    }
  }
  return { bytes, sources };
}
