/**
 * What the model saw, with the real Claude Code CLI: the runtime dumps every API request and
 * response (`--raw-bodies`), the local receiver lands them as `provider_body/1` Session Data, and
 * assembly joins each to its call. Ground truth is the mock's: its own copy of every request body it
 * received (`--log-bodies`) and its request log (system characters, offered tools, message count,
 * stop reason, usage). A body file cut short, or naming no call, is carried with its reason and
 * stops nothing else.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallsAnswer } from '../../src/extensions/view/figures-api.js';
import type { ViewDocument } from '../../src/formats/view/types.js';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { manifestOf, rebuildBody, type ProviderBodyManifest } from '../../src/formats/session-data/provider-body.js';
import { landedBodyFiles, SessionProviderBodies } from '../../src/storage/provider-body-files.js';
import { ageUnfinishedBodies, labRun, readRequestLog, unclaimableBodies, unindexedRequests, WORK_SCRIPT, type LoggedRequest } from '../helpers/lab.js';
import { runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

function sharedFront(a: Buffer, b: Buffer): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

interface MockLine extends LoggedRequest {
  system_chars: number;
  offered_tools: string[];
  messages: number;
  max_tokens: number;
}

describe('provider bodies from the real CLI, landed and joined to their calls', () => {
  const base = tempDir('aszcol-e2e-bodies-');
  const home = join(base, 'home');
  const work = join(base, 'work');
  const root = join(base, 'data');
  const raw = join(base, 'raw');
  const mockBodies = join(base, 'mock-bodies');
  const log = join(base, 'requests.jsonl');
  let config = '';
  let session = '';
  let second = '';
  let truth: MockLine[] = [];
  let unfinished: string[] = [];
  let waiting: string[] = [];
  // Request bodies the runtime finished but never indexed (it exited first, under load), with their sessions: they land, on no call.
  let unindexed = new Map<string, string>();
  const unindexedOf = (id: string) => [...unindexed].filter(([, s]) => s === id).map(([n]) => n);
  // The request file the runtime's own index names for each request id: only those requests can be placed on their calls.
  const requestFiles = () =>
    new Map(
      readFileSync(join(raw, 'index.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { request_id: string; request_file?: string })
        .filter((l) => l.request_file)
        .map((l) => [l.request_id, l.request_file!] as const),
    );
  const lost = (name: string | undefined) => name === undefined || !existsSync(join(raw, name)) || unfinished.includes(name) || waiting.includes(name);
  const calls = async (id: string) => {
    const r = await runCli(['conversation', id, '--calls', '--json', '--config', config]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as CallsAnswer;
  };

  beforeAll(async () => {
    config = writeConfig(base, root, join(home, 'projects'), `    provider_bodies: ${JSON.stringify(raw)}\n`);
    session = (
      await labRun({ configDir: home, cwd: work, prompt: 'SLOWTOOL please', tools: 'Bash', script: WORK_SCRIPT, log, rawBodies: raw, logBodies: mockBodies })
    ).session_id;
    second = (
      await labRun({
        configDir: home,
        cwd: work,
        prompt: 'EDITFILE please',
        tools: 'Write,Edit',
        script: WORK_SCRIPT,
        log,
        rawBodies: raw,
        logBodies: mockBodies,
      })
    ).session_id;
    // A request body cut short by a crash while the runtime wrote it, long enough ago that it will not be finished,
    // and a response the index names for this session but no call of it.
    const cut = readFileSync(
      join(
        raw,
        readdirSync(raw).find((n) => n.endsWith('.request.json'))!,
      ),
    ).subarray(0, 5000);
    writeFileSync(join(raw, 'cut-short.request.json'), cut);
    utimesSync(join(raw, 'cut-short.request.json'), new Date(Date.now() - 600_000), new Date(Date.now() - 600_000));
    writeFileSync(join(raw, 'req_orphan1.response.json'), JSON.stringify({ id: 'msg_orphan1', type: 'message', content: [], stop_reason: 'end_turn' }));
    writeFileSync(
      join(raw, 'index.jsonl'),
      readFileSync(join(raw, 'index.jsonl'), 'utf8') +
        JSON.stringify({
          session_id: session,
          request_id: 'req_orphan1',
          message_id: 'msg_orphan1',
          request_file: 'cut-short.request.json',
          response_file: 'req_orphan1.response.json',
        }) +
        '\n',
    );
    // The runtime can exit after a call's bodies but before its index line (seen under load): drop the second session's last
    // line, so that path is taken on every run. The request lands in its session by its metadata, on no call.
    const indexLines = readFileSync(join(raw, 'index.jsonl'), 'utf8').split('\n').filter(Boolean);
    const lastOfSecond = indexLines.map((l) => (JSON.parse(l) as { session_id: string }).session_id).lastIndexOf(second);
    if (lastOfSecond >= 0) writeFileSync(join(raw, 'index.jsonl'), indexLines.filter((_, i) => i !== lastOfSecond).join('\n') + '\n');
    // The runtime can exit before it finishes writing its last body (an empty file, its index line never written): such a
    // body waits for the settle time, then lands whole as unreadable. Age them as the cut one so this pass lands them.
    unfinished = ageUnfinishedBodies(raw, (n) => n === 'cut-short.request.json');
    waiting = unclaimableBodies(raw, join(home, 'projects'));
    unindexed = unindexedRequests(raw);
    const c = await runCli(['collect', '--once', '--json', '--config', config]);
    expect(c.stderr).toBe('');
    // Every body file lands, the cut one as unreadable: a response whose index line the runtime had not written is claimed by its
    // message id. One that no index line names and that cannot say its session itself waits (seen under load).
    const bodyFiles = readdirSync(raw).filter((n) => n.endsWith('.json')).length;
    const unreadable = 1 + unfinished.filter((n) => !waiting.includes(n)).length;
    expect(JSON.parse(c.stdout).bodies).toEqual({ landed: bodyFiles - waiting.length, waiting: waiting.length, unreadable });
    const p = await runCli(['parse', '--config', config]);
    expect(p.code).toBe(0);
    truth = readRequestLog(log) as MockLine[];
  }, 300_000);

  test('every body the runtime wrote lands once, and rebuilds to the bytes of its file', async () => {
    // Read as a reader on demand reads them: in landing order, a record rebuilt with the files before it.
    const files = landedBodyFiles(root, session);
    const reader = new SessionProviderBodies(files);
    const landed = files.flatMap((f) => readSessionData(f.path).records.map((r, i) => ({ r, seq: f.seq, row: i + 1 })));
    const bySrc = new Map(landed.map((l) => [manifestOf(l.r)!.src!, l]));
    const rebuilt = (name: string) => {
      const l = bySrc.get(name)!;
      try {
        return { body: reader.bodyAt(l.seq, l.row).toString('utf8') };
      } catch (err) {
        return { problem: (err as Error).message };
      }
    };
    // The session's bodies: the mock's calls of it (the request log), each a request and a response, and the two planted ones.
    const mineCalls = (await calls(session)).calls.map((c) => truth.find((q) => q.message_id === c.message_id)!.request_id);
    const mine = [...bySrc.keys()];
    const expected = (role: string) => mineCalls.map((r) => `${r}.${role}.json`).filter((n) => !waiting.includes(n));
    expect(mine.filter((n) => n.endsWith('.response.json')).sort()).toEqual([...expected('response'), 'req_orphan1.response.json'].sort());
    expect(mine.filter((n) => n.endsWith('.request.json'))).toHaveLength(expected('request').length + 1);
    for (const name of mine.filter((n) => n !== 'cut-short.request.json' && !unfinished.includes(n))) {
      expect(rebuilt(name)).toEqual({ body: readFileSync(join(raw, name), 'utf8') });
    }
    expect(rebuildBody(bySrc.get('cut-short.request.json')!.r)).toEqual({ problem: expect.stringContaining('not one JSON value') });
    // A second pass finds nothing new.
    const again = await runCli(['collect', '--once', '--json', '--config', config]);
    expect(JSON.parse(again.stdout).bodies).toEqual({ landed: 0, waiting: waiting.length, unreadable: 0 });
  });

  test("bodies land cut (asz 0.6's copy and piece): each request rebuilt is what the mock received, and the repeats are stored once", () => {
    // The runtime's own index says which request file was which request id, and whose.
    const index = readFileSync(join(raw, 'index.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { session_id: string; request_id: string; request_file: string; response_file: string });
    const requestIdOf = new Map(index.map((l) => [l.request_file, l.request_id]));
    const files = landedBodyFiles(root, session);
    const reader = new SessionProviderBodies(files);
    let compared = 0;
    let copies = 0;
    let pieces = 0;
    for (const f of files)
      for (const [i, r] of readSessionData(f.path).records.entries()) {
        const m = manifestOf(r) as ProviderBodyManifest;
        if (m.segments.some((sg) => sg.copy)) copies++;
        if (m.segments.some((sg) => sg.piece)) pieces++;
        const requestId = m.role === 'request' && !m.why ? requestIdOf.get(m.src!) : undefined;
        if (!requestId || requestId === 'req_orphan1') continue;
        // The mock's own copy of the request, less the betas the runtime sends as a header.
        const { betas: _betas, ...sent } = JSON.parse(reader.bodyAt(f.seq, i + 1).toString('utf8')) as Record<string, unknown>;
        expect(sent).toEqual(JSON.parse(readFileSync(join(mockBodies, `${requestId}.json`), 'utf8')));
        compared++;
      }
    const own = index.filter((l) => l.session_id === session && l.request_id !== 'req_orphan1');
    expect(compared).toBe(own.length);
    // Each request after the first sends the same tool definitions and system prompt again: pieces an earlier record holds.
    expect(pieces).toBeGreaterThanOrEqual(own.length - 1);
    // A copy only pays for a front of 4 KiB or more: this runtime resends the first message changed once the cache marker
    // leaves it, so a short session's requests share less than that, measured from the files themselves.
    const requests = own.map((l) => readFileSync(join(raw, l.request_file)));
    const longFronts = requests.slice(1).filter((b, i) => sharedFront(requests[i]!, b) >= 8192).length;
    expect(copies).toBeGreaterThanOrEqual(longFronts);
    const landedBytes = files.reduce((a, f) => a + readFileSync(f.path).length, 0);
    const sourceBytes = [...own.flatMap((l) => [l.request_file, l.response_file]), ...unindexedOf(session)].reduce(
      (a, n) => a + readFileSync(join(raw, n)).length,
      0,
    );
    expect(landedBytes).toBeLessThan(sourceBytes * 0.75);
  });

  test("every call's manifest is what the mock received: system characters, tool names, message count, max_tokens; and what it answered", async () => {
    let checked = 0;
    let cutShort = 0;
    const requestFile = requestFiles();
    for (const id of [session, second]) {
      for (const c of (await calls(id)).calls) {
        const t = truth.find((q) => q.message_id === c.message_id)!;
        expect(t).toBeDefined();
        // Under load the runtime can exit before it finishes its last bodies (see beforeAll): a request it left unreadable has no
        // manifest, and that is all such a call may lack; every other call is compared in full.
        // A request the runtime's index never named lands on no call (see unindexed); its response is still placed by message id.
        const responseLost = lost(`${t.request_id}.response.json`);
        if (lost(requestFile.get(t.request_id))) {
          expect(c.manifest?.request).toBeUndefined();
          if (responseLost) expect(c.manifest?.response).toBeUndefined();
          else expect(c.manifest!.response).toMatchObject({ stop_reason: t.stop_reason, usage: { input: t.usage.in, output: t.usage.out } });
          cutShort++;
          checked++;
          continue;
        }
        const req = c.manifest!.request!;
        expect(req.system.chars).toBe(t.system_chars);
        expect(req.tools.names).toEqual(t.offered_tools);
        expect(req.messages.count).toBe(t.messages);
        expect(req.parameters.max_tokens).toBe(t.max_tokens);
        if (responseLost) expect(c.manifest?.response).toBeUndefined();
        else expect(c.manifest!.response).toMatchObject({ stop_reason: t.stop_reason, usage: { input: t.usage.in, output: t.usage.out } });
        // The mock's own copy of the body it received says the same.
        const received = JSON.parse(readFileSync(join(mockBodies, `${t.request_id}.json`), 'utf8')) as { messages: unknown[]; tools: { name: string }[] };
        expect(req.messages.count).toBe(received.messages.length);
        expect(req.tools.names).toEqual(received.tools.map((x) => x.name));
        checked++;
      }
    }
    expect(checked).toBe(truth.length);
    // At most each session's last call can be cut short that way.
    expect(cutShort).toBeLessThanOrEqual(2);
  });

  test('the context change from one call to the next: the tool call and its result were added, nothing dropped, nothing else changed', async () => {
    const [first, next] = (await calls(session)).calls;
    expect(first!.context_change).toBeUndefined();
    // Under load the runtime may exit before indexing the last call's request (see beforeAll): with no request there is no
    // change to tell, and saying none is all that can be checked.
    const requestFile = requestFiles();
    if (lost(requestFile.get(truth.find((q) => q.message_id === next!.message_id)!.request_id))) {
      expect(next!.context_change).toBeUndefined();
      return;
    }
    expect(next!.context_change).toMatchObject({
      previous: first!.message_id,
      messages_kept: first!.manifest!.request!.messages.count,
      messages_added: 2,
      messages_dropped: 0,
      tools_added: [],
      tools_removed: [],
      system_changed: false,
      parameters_changed: [],
    });
    expect(next!.context_change!.added.map((m) => m.role)).toEqual(['assistant', 'user']);
    expect(next!.context_change!.added[1]!.blocks).toEqual(['tool_result']);
  });

  test("the document lists each call's bodies by landed record; the cut body and the orphan are open unresolved entries with their reasons", async () => {
    const r = await runCli(['conversation', session, '--json', '--config', config]);
    const doc = JSON.parse(r.stdout) as ViewDocument;
    // Two calls, a request and a response each, and the two planted files; a body that waits is not landed, and a request
    // never indexed lands but is captured for no call.
    const requestFile = requestFiles();
    const mineCalls = (await calls(session)).calls.map((c) => truth.find((q) => q.message_id === c.message_id)!.request_id);
    const landedHere = (name: string | undefined) => name !== undefined && existsSync(join(raw, name)) && !waiting.includes(name);
    const bodies =
      mineCalls.filter((r) => landedHere(`${r}.response.json`)).length +
      mineCalls.filter((r) => landedHere(requestFile.get(r))).length +
      unindexedOf(session).length;
    const captured = mineCalls.filter((r) => !lost(requestFile.get(r))).length;
    expect(doc.summary).toMatchObject({ provider_bodies: bodies + 2, captured_prompts: captured });
    const mineUnfinished = unfinished.filter((n) => doc.unresolved.some((u) => u.reason.includes(n)));
    const reasons = doc.unresolved.filter((u) => u.ref.startsWith('provider_body/')).map((u) => u.reason);
    expect(reasons).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/request body cut-short\.request\.json is kept whole, unread: the body is not one JSON value/),
        expect.stringMatching(/response body req_orphan1\.response\.json names message msg_orphan1 and request req_orphan1, which no landed call/),
      ]),
    );
    for (const n of unindexedOf(session)) expect(reasons).toContainEqual(expect.stringContaining(`request body ${n} names no call`));
    expect(reasons).toHaveLength(2 + mineUnfinished.length + unindexedOf(session).length);
  });
});
