import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ViewExtension } from '../../src/extensions/view/extension.js';
import { FIELDS, GLOSSARY_DIALECT, TERMS } from '../../src/adapters/claude-code/glossary.js';
import type { ViewDocument, ViewNode } from '../../src/formats/view/types.js';
import type { ConversationRow } from '../../src/extensions/view/catalog.js';
import { labRun, readRequestLog, type LoggedRequest } from '../helpers/lab.js';
import { collectAndParse, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { landedFiles } from '../helpers/root.js';
import { SID as FIXTURE, writeFixture } from '../helpers/view-fixture.js';
import type { Bench } from '../helpers/collect.js';

afterAll(cleanupTemp);

const flat = (doc: ViewDocument) => {
  const o: ViewNode[] = [];
  const w = (n: ViewNode) => {
    o.push(n);
    (n.children ?? []).forEach(w);
  };
  doc.talks.forEach(w);
  doc.loose.forEach(w);
  return o;
};
const noZeros = (u: Record<string, number>) => Object.fromEntries(Object.entries(u).filter(([, v]) => v !== 0));

async function get<T = unknown>(url: string, init?: RequestInit): Promise<{ status: number; body: T; headers: Headers; text: string }> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: body as T, headers: res.headers, text };
}

/**
 * The JSON API over sessions the real Claude Code wrote through the lab, collected and parsed by
 * the CLI, held against the lab's request log (written by the scripted API, not by us) and the
 * landed files read independently; plus a fixture session with open unresolved entries.
 */
describe('the view API on real Claude Code sessions', () => {
  const base = tempDir('aszcol-view-api-');
  const home = join(base, 'home');
  const root = join(base, 'data');
  const logs = { parallel: join(base, 'parallel.jsonl'), delegate: join(base, 'delegate.jsonl') };
  let parallel = '',
    delegate = '';
  let requests: Record<'parallel' | 'delegate', LoggedRequest[]>;
  let ext: ViewExtension;
  let url = '';
  const docs: Record<string, ViewDocument> = {};

  beforeAll(async () => {
    const config = writeConfig(base, root, join(home, 'projects'));
    parallel = (await labRun({ configDir: home, cwd: join(base, 'work'), prompt: 'PARALLEL please', tools: 'Bash', log: logs.parallel })).session_id;
    delegate = (await labRun({ configDir: home, cwd: join(base, 'work'), prompt: 'DELEGATE now', tools: 'Bash,Agent', log: logs.delegate })).session_id;
    writeFixture({ src: join(home, 'projects') } as Bench);
    await collectAndParse(config);
    requests = { parallel: readRequestLog(logs.parallel), delegate: readRequestLog(logs.delegate) };
    ext = new ViewExtension({ endpoint: '127.0.0.1:0', allowedHosts: [] }, { storageRoot: root });
    await ext.start();
    url = `http://${ext.address()}`;
    for (const id of [parallel, delegate, FIXTURE]) {
      const r = await get<ViewDocument>(`${url}/api/c/${id}/view`);
      expect(r.status).toBe(200);
      docs[id] = r.body;
    }
  }, 240_000);

  afterAll(async () => {
    await ext?.shutdown();
  });

  test('status and the list: one row per conversation, its counts from the head round, and what the API log says', async () => {
    const status = await get<{ mode: string; conversations: number; generation: number; heads: Record<string, string>; last_refresh: string }>(
      `${url}/api/status`,
    );
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ mode: 'view', conversations: 3 });
    expect(Object.keys(status.body.heads).sort()).toEqual([parallel, delegate, FIXTURE].sort());
    expect(Date.parse(status.body.last_refresh)).not.toBeNaN();
    const list = await get<{ conversations: ConversationRow[]; hint?: string }>(`${url}/api/conversations`);
    expect(list.body.hint).toBeUndefined();
    const row = (id: string) => list.body.conversations.find((r) => r.id === id)!;
    for (const [name, id] of [
      ['parallel', parallel],
      ['delegate', delegate],
    ] as const) {
      const log = requests[name];
      expect(row(id)).toMatchObject({
        rounds: 1,
        talks: docs[id]!.summary.talks,
        steps: docs[id]!.summary.steps,
        unresolved: 0,
        llm_calls: log.length,
        bash_runs: log.flatMap((r) => r.tools).filter((t) => t.name === 'Bash').length,
        subagents: name === 'delegate' ? 1 : 0,
        from: docs[id]!.summary.from,
        to: docs[id]!.summary.to,
      });
    }
    expect(row(FIXTURE)).toMatchObject({ title: 'Build and check the tests', unresolved: 2, subagents: 2 });
    expect(JSON.stringify(list.body)).not.toContain('null');
  });

  test('every model call carries exactly the usage the API reported, from the one record usage_at names', () => {
    for (const [name, id] of [
      ['parallel', parallel],
      ['delegate', delegate],
    ] as const) {
      const nodes = new Map(flat(docs[id]!).map((n) => [n.id, n]));
      for (const req of requests[name]) {
        const call = nodes.get(`call/${req.message_id}`)!;
        expect(call.kind).toBe('llm.call');
        expect(call.usage).toEqual(noZeros(req.usage));
      }
      expect(flat(docs[id]!).filter((n) => n.kind === 'llm.call' && n.id.startsWith('call/msg_')).length).toBe(requests[name].length);
    }
  });

  test("every tool the API asked for is a step with its name and result; request to result only from the two records' times", () => {
    for (const [name, id] of [
      ['parallel', parallel],
      ['delegate', delegate],
    ] as const) {
      const files = landedFiles(root, id);
      const rec = (r: { seq: number; row: number }) => files.find((f) => f.seq === r.seq)!.records[r.row - 1]!;
      const nodes = new Map(flat(docs[id]!).map((n) => [n.id, n]));
      const tools = requests[name].flatMap((r) => r.tools);
      expect(tools.length).toBeGreaterThan(0);
      for (const t of tools) {
        const n = nodes.get(`tool/${t.id}`)!;
        expect(n).toMatchObject({ name: t.name, result_state: 'available', request_to_result_join: 'exact_unique' });
        expect(typeof n.result).toBe('string');
        const ms = Math.floor(Date.parse(rec(n.refs![1]!).time!)) - Math.floor(Date.parse(rec(n.refs![0]!).time!));
        if (ms >= 1) expect(n.request_to_result_ms).toBe(ms);
        else expect(n.request_to_result_ms).toBeUndefined();
        expect(n.attrs).toMatchObject({ timing: 'unavailable' });
      }
    }
  });

  test('/calls and /tools without an OTLP export: a row per call the API answered and per tool use, every figure unavailable with its reason', async () => {
    const calls = await get<{
      totals: object;
      calls: { message_id: string; request_id?: string; unavailable?: string[]; unavailable_reason?: string; sources: object }[];
    }>(`${url}/api/c/${parallel}/calls`);
    expect(calls.status).toBe(200);
    expect(calls.body.totals).toEqual({});
    expect(calls.body.calls.map((c) => c.message_id).sort()).toEqual(requests.parallel.map((r) => r.message_id).sort());
    for (const c of calls.body.calls) {
      expect(c.request_id).toBeUndefined();
      expect(c).toMatchObject({
        unavailable: ['duration_ms', 'ttft_ms', 'cost_usd'],
        unavailable_reason: expect.stringMatching(/no OTLP export/),
        sources: { usage: 'transcript' },
      });
    }
    const tools = await get<{ tools: { tool_use_id: string; name: string; unavailable?: string[] }[] }>(`${url}/api/c/${parallel}/tools`);
    expect(tools.body.tools.map((t) => t.tool_use_id).sort()).toEqual(requests.parallel.flatMap((r) => r.tools.map((t) => t.id)).sort());
    for (const t of tools.body.tools) expect(t.unavailable).toEqual(['duration_ms', 'decision']);
    expect((await get(`${url}/api/c/no-such-conversation/calls`)).status).toBe(404);
  });

  test('the delegated child: its stream, label and opener, its talk, and the edges across streams', () => {
    const d = docs[delegate]!;
    const child = d.streams.find((s) => s.role === 'child')!;
    expect(child).toMatchObject({ label: 'helper task', parent: 'main', opened_by: [expect.objectContaining({ stream: 'main', quality: 'exact_unique' })] });
    const opener = flat(d).find((n) => n.id === child.opened_by[0]!.step)!;
    expect(opener).toMatchObject({ kind: 'agent.call', name: 'Agent' });
    expect(opener.edges).toContainEqual(expect.objectContaining({ type: 'starts', other: child.id, dir: 'out', quality: 'exact_unique' }));
    const talk = d.talks.find((t) => t.stream === child.name)!;
    expect(talk).toMatchObject({ child: true, id: child.talk });
    expect(talk.reply).toBeTruthy();
    const note = flat(d).find((n) => n.kind === 'runtime.notification')!;
    expect(note.edges).toContainEqual(expect.objectContaining({ type: 'reports', other: child.id }));
    expect(d.talks.filter((t) => t.stream === 'main')).toHaveLength(1);
    expect(d.talks.find((t) => t.stream === 'main')!.label).toBe('DELEGATE now');
  });

  test('rounds and files verify; each file digest is the SHA-256 of its bytes', () => {
    for (const id of [parallel, delegate, FIXTURE]) {
      const d = docs[id]!;
      expect(d.summary).toMatchObject({ state: 'verified', problems: [] });
      expect(d.rounds.every((r) => r.verified)).toBe(true);
      for (const f of d.files) {
        expect(f.verified).toBe(true);
        expect(f.digest).toBe(
          createHash('sha256')
            .update(readFileSync(join(root, f.file)))
            .digest('hex'),
        );
      }
    }
  });

  test("the fixture's open unresolved entries are in the document and counted", () => {
    const d = docs[FIXTURE]!;
    expect(d.summary.unresolved).toBe(2);
    expect(d.unresolved.map((u) => [u.kind, u.state])).toEqual([
      ['spawn_of_child', 'open'],
      ['tool_result', 'open'],
    ]);
  });

  test('one landed record, read from disk, with its dropped list; 404 for what does not exist', async () => {
    const d = docs[parallel]!;
    const think = flat(d).find((n) => n.kind === 'thinking' && n.dropped)!;
    const r = await get<{ record: { dropped: unknown; parts: { k: string }[] }; file: string; header: { seq: number } }>(
      `${url}/api/c/${parallel}/record/${think.ref!.seq}/${think.ref!.row}`,
    );
    expect(r.status).toBe(200);
    const expected = landedFiles(root, parallel).find((f) => f.seq === think.ref!.seq)!.records[think.ref!.row - 1]!;
    expect(r.body.record).toEqual(expected);
    expect(r.body.record.dropped).toEqual(think.dropped);
    expect(r.body.header.seq).toBe(think.ref!.seq);
    const tool = flat(d).find((n) => n.kind === 'tool')!;
    const rt = await get<{ record: { parts: { id?: string }[] } }>(`${url}/api/c/${parallel}/record/${tool.ref!.seq}/${tool.ref!.row}`);
    expect(rt.body.record.parts[tool.ref!.block!]!.id).toBe(tool.id.slice('tool/'.length));
    for (const path of [
      `/api/c/${parallel}/record/999/1`,
      `/api/c/${parallel}/record/1/99999`,
      `/api/c/${parallel}/record/x/1`,
      `/api/c/${parallel}/record/0/1`,
      '/api/c/nope/record/1/1',
      '/api/c/nope/view',
      '/api/c/../view',
      '/api/nothing',
    ]) {
      const nf = await get<{ error: string }>(url + path);
      expect([path, nf.status]).toEqual([path, 404]);
      expect(typeof nf.body.error).toBe('string');
    }
    expect((await get(`${url}/api/status`, { method: 'POST' })).status).toBe(405);
    // A malformed percent-encoding is the client's mistake: 400 with the reason, not 500 (fuzz seed F4).
    const bad = await get<{ error: string }>(`${url}/api/c/%E0%A4%A/view`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/decode/);
  });

  test('the glossary as aszcol glossary prints it', async () => {
    const g = await get(`${url}/api/glossary`);
    expect(g.body).toEqual(JSON.parse(JSON.stringify({ dialect: GLOSSARY_DIALECT, terms: TERMS, fields: FIELDS })));
  });

  test('the document is built once per fold: a second read is the same bytes from memory', async () => {
    const a = await get(`${url}/api/c/${delegate}/view`);
    const v = ext.catalog.view(delegate);
    expect(v.cached).toBe(true);
    expect(a.text).toBe(v.json);
  });

  test('the page: served from this server alone, nothing from any other host', async () => {
    const page = await get(`${url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'/);
    expect((await get(`${url}/c/${delegate}`)).status).toBe(200);
    expect((await get(`${url}/c/not-there`)).status).toBe(404);
    const css = await get(`${url}/assets/style.css`);
    const scripts = readdirSync(fileURLToPath(new URL('../../src/extensions/view/page/', import.meta.url))).filter((n) => n.endsWith('.js'));
    expect(scripts).toContain('app.js');
    let all = page.text + css.text;
    for (const s of scripts) {
      const r = await get(`${url}/assets/${s}`);
      expect([s, r.status, r.headers.get('content-type')]).toEqual([s, 200, expect.stringMatching(/javascript/)]);
      all += r.text;
    }
    // The SVG namespace is a name, never fetched; anything else that looks like a URL would be a request off this machine.
    expect(all.replaceAll('http://www.w3.org/2000/svg', '')).not.toMatch(/https?:\/\/|\/\/cdn|@import|fonts\.googleapis/);
    expect((await get(`${url}/assets/missing.js`)).status).toBe(404);
    expect((await get(`${url}/assets/app.js.map`)).status).toBe(404);
  });

  test('a root with no conversations says how to fill it', async () => {
    const empty = new ViewExtension({ endpoint: '127.0.0.1:0', allowedHosts: [] }, { storageRoot: join(tempDir('aszcol-view-empty-'), 'data') });
    await empty.start();
    try {
      const e = `http://${empty.address()}`;
      const list = await get<{ conversations: unknown[]; hint: string }>(`${e}/api/conversations`);
      expect(list.body.conversations).toEqual([]);
      expect(list.body.hint).toContain('aszcol collect --once && aszcol parse');
      const status = await get<{ conversations: number; hint: string }>(`${e}/api/status`);
      expect(status.body).toMatchObject({ conversations: 0, hint: expect.stringContaining('aszcol collect --once && aszcol parse') });
      expect((await get(`${e}/`)).status).toBe(200);
    } finally {
      await empty.shutdown();
    }
  });
});
