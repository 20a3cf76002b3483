import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildView, ViewModel } from '../../src/formats/view/build.js';
import { loadViewInput } from '../../src/extensions/view/load.js';
import type { ViewDocument, ViewNode } from '../../src/formats/view/types.js';
import { STRUCTURE_KINDS } from '../../src/formats/session-flow/types.js';
import { listRounds } from '../../src/storage/chain.js';
import { readRoundHeader } from '../../src/extensions/view/catalog.js';
import { cleanupTemp } from '../helpers/tmp.js';
import { foldOf } from '../helpers/parse.js';
import { landedFiles } from '../helpers/root.js';
import { CHILD, LONG_TEXT, ORPHAN, SID, fixtureRoot } from '../helpers/view-fixture.js';
import type { Bench } from '../helpers/collect.js';

afterAll(cleanupTemp);

/** Every node of every tree, depth first. */
function flat(doc: ViewDocument): ViewNode[] {
  const out: ViewNode[] = [];
  const walk = (n: ViewNode) => {
    out.push(n);
    for (const c of n.children ?? []) walk(c);
  };
  for (const t of doc.talks) walk(t);
  for (const l of doc.loose) walk(l);
  return out;
}

function nulls(v: unknown, path = '$'): string[] {
  if (v === null) return [path];
  if (Array.isArray(v)) return v.flatMap((x, i) => nulls(x, `${path}[${i}]`));
  if (typeof v === 'object') return Object.entries(v as object).flatMap(([k, x]) => nulls(x, `${path}.${k}`));
  return [];
}

describe('the asz.view document built from a collected and parsed session', () => {
  let b: Bench;
  let doc: ViewDocument;
  let nodes: Map<string, ViewNode>;
  const recordAt = (ref: { seq: number; row: number }) => landedFiles(b.root, SID).find((f) => f.seq === ref.seq)!.records[ref.row - 1]!;

  beforeAll(() => {
    b = fixtureRoot();
    doc = buildView(loadViewInput(b.root, SID));
    nodes = new Map(flat(doc).map((n) => [n.id, n]));
  });

  test('top-level keys in the published order, and no null anywhere', () => {
    expect(Object.keys(doc)).toEqual([
      'format',
      'version',
      'conversation',
      'sessions',
      'head',
      'parser',
      'policy',
      'summary',
      'rounds',
      'files',
      'streams',
      'segments',
      'talks',
      'loose',
      'relations',
      'unresolved',
    ]);
    expect(Object.keys(doc.summary)).toEqual([
      'title',
      'state',
      'problems',
      'talks',
      'steps',
      'streams',
      'segments',
      'rounds',
      'unresolved',
      'from',
      'to',
      'kinds',
      'relation_types',
      'quality',
    ]);
    expect(doc).toMatchObject({ format: 'asz.view', version: '1.0', conversation: SID, sessions: [SID] });
    expect(nulls(doc)).toEqual([]);
  });

  test('the summary agrees with the fold and with the counts parse wrote into the head round', () => {
    const f = foldOf(b.root, SID);
    const rounds = listRounds(b.root, SID);
    const header = readRoundHeader(rounds[rounds.length - 1]!.path)!;
    const steps = f.nodes.filter((n) => !STRUCTURE_KINDS.has(n.kind!)).length;
    expect(doc.summary).toMatchObject({
      title: 'Build and check the tests',
      state: 'verified',
      problems: [],
      talks: header.talks,
      steps: header.steps,
      streams: header.streams,
      segments: header.segments,
      unresolved: header.unresolved,
      rounds: 1,
    });
    expect(doc.summary.steps).toBe(steps);
    expect(doc.summary.kinds).toEqual(Object.fromEntries(Object.entries(f.kinds).sort(([a], [c]) => (a < c ? -1 : 1))));
    expect(doc.summary.from).toBe(Date.parse(header.session_from_time!));
    expect(doc.summary.to).toBe(Date.parse(header.session_through_time!));
    expect(doc.head).toEqual({ round: 1, digest: f.chain.fold.headDigest });
  });

  test('every run and step of the fold is in exactly one tree: talks and loose cover the session', () => {
    const f = foldOf(b.root, SID);
    const inTrees = flat(doc)
      .filter((n) => n.kind !== 'talk')
      .map((n) => n.id)
      .sort();
    const expected = f.nodes
      .filter((n) => n.kind === 'run' || !STRUCTURE_KINDS.has(n.kind!))
      .map((n) => n.id)
      .sort();
    expect(inTrees).toEqual(expected);
    expect(doc.talks.map((t) => t.id).sort()).toEqual(
      f.nodes
        .filter((n) => n.kind === 'talk')
        .map((n) => n.id)
        .sort(),
    );
  });

  test("talks are in time order; label is the person's input, reply the last thing the agent said", () => {
    const at = doc.talks.map((t) => t.at!);
    expect([...at].sort((a, c) => a - c)).toEqual(at);
    const [first, child, orphan, second] = doc.talks;
    expect(first).toMatchObject({
      id: 'talk/main/p1',
      label: 'build and check',
      reply: 'Build passed and tests are green.',
      runs: 2,
      segment: 'segment/at_1_1',
    });
    expect(first!.child).toBeUndefined();
    // A child has no person's input: its label is what the parent asked, the talk's own record.
    expect(child).toMatchObject({ id: `talk/${CHILD}`, label: 'check the tests', reply: 'Tests pass.', child: true, stream: CHILD });
    expect(orphan).toMatchObject({ id: `talk/${ORPHAN}`, child: true });
    expect(second).toMatchObject({ id: 'talk/main/p2', label: 'read the log', segment: 'segment/at_1_12' });
    // A talk's counts are its subtree's.
    const sub = (t: ViewNode) => {
      const o: ViewNode[] = [];
      const w = (n: ViewNode) => {
        for (const c of n.children ?? []) {
          o.push(c);
          w(c);
        }
      };
      w(t);
      return o;
    };
    for (const t of doc.talks) {
      const s = sub(t);
      expect(t.steps ?? 0).toBe(s.filter((n) => !STRUCTURE_KINDS.has(n.kind)).length);
      expect(t.tools ?? 0).toBe(s.filter((n) => n.kind === 'tool' || n.kind === 'agent.call').length);
    }
  });

  test('text is clipped to 2,000 bytes on a whole character, with the full size in bytes', () => {
    const msg = flat(doc).find((n) => n.kind === 'message.assistant' && n.text?.startsWith('ü€'))!;
    expect(msg.bytes).toBe(Buffer.byteLength(LONG_TEXT));
    expect(Buffer.byteLength(msg.text!)).toBeLessThanOrEqual(2000);
    expect(Buffer.byteLength(msg.text!)).toBeGreaterThan(1996);
    expect(LONG_TEXT.startsWith(msg.text!)).toBe(true);
    expect(doc.talks[3]!.reply).toBe(msg.text);
  });

  test("a tool carries its name and result; request_to_result_ms is the two records' time difference, only where the join is exact", () => {
    const build = nodes.get('tool/tu_build')!;
    const req = recordAt(build.refs![0]!),
      res = recordAt(build.refs![1]!);
    expect(build).toMatchObject({
      kind: 'tool',
      name: 'Bash',
      result: 'build ok',
      result_state: 'available',
      result_bytes: 8,
      text: '{"command":"make build"}',
      request_to_result_join: 'exact_unique',
    });
    expect(build.request_to_result_ms).toBe(Date.parse(res.time!) - Date.parse(req.time!));
    expect(build.attrs).toMatchObject({ timing: 'unavailable' }); // not how long the tool ran
    // Same millisecond: the join stays, the zero is left out.
    const fast = nodes.get('tool/tu_fast')!;
    expect(fast).toMatchObject({ request_to_result_join: 'exact_unique', failed: true, result: '', result_bytes: 0 });
    expect('request_to_result_ms' in fast).toBe(false);
    // No result: nothing about one is said, and the fold's word is kept.
    const open = nodes.get('tool/tu_open')!;
    for (const k of ['result', 'result_state', 'result_bytes', 'request_to_result_ms', 'request_to_result_join']) expect(k in open).toBe(false);
    expect(open.attrs).toMatchObject({ result: 'unavailable' });
    const agent = nodes.get('tool/tu_agent')!;
    expect(agent).toMatchObject({ kind: 'agent.call', name: 'Agent', result: 'launched' });
    expect(agent.edges).toEqual([{ type: 'starts', other: `stream/${CHILD}`, dir: 'out', quality: 'exact_unique', via: 'parent tool result' }]);
  });

  test("a call's usage is the one record usage_at names, a zero left out; flags and dropped are the record's", () => {
    const call = nodes.get('call/msg_1')!;
    expect(recordAt(call.attrs!.usage_at as { seq: number; row: number }).usage).toEqual({ in: 12, out: 40, cache_read: 0, cache_write: 7 });
    expect(call.usage).toEqual({ in: 12, out: 40, cache_write: 7 });
    expect(call.text).toBeUndefined();
    const think = flat(doc).find((n) => n.kind === 'thinking')!;
    expect(think).toMatchObject({
      state: 'unavailable',
      bytes: 0,
      dropped: [{ what: 'reasoning signature', bytes: 9, why: 'a provider verifies it; a reader cannot read it' }],
    });
    expect(nodes.get('tool/tu_build')!.flags).toEqual(recordAt(nodes.get('tool/tu_build')!.ref!).flags);
  });

  test('streams with role, label, parent and opener; the orphan has no opener and an open entry says so', () => {
    expect(doc.streams.map((s) => s.name)).toEqual(['main', CHILD, ORPHAN]);
    const files = landedFiles(b.root, SID);
    const child = doc.streams[1]!;
    expect(child).toEqual({
      id: `stream/${CHILD}`,
      name: CHILD,
      role: 'child',
      label: 'checker',
      parent: 'main',
      records: files.filter((f) => f.header.stream === CHILD).reduce((a, f) => a + f.records.length, 0),
      steps: flat(doc).filter((n) => n.stream === CHILD && !STRUCTURE_KINDS.has(n.kind)).length,
      talk: `talk/${CHILD}`,
      opened_by: [{ step: 'tool/tu_agent', stream: 'main', talk: 'talk/main/p1', quality: 'exact_unique' }],
    });
    expect(doc.streams[2]).toMatchObject({ role: 'child', opened_by: [] });
    expect('parent' in doc.streams[2]!).toBe(false);
    expect(doc.unresolved).toEqual([
      {
        id: `unres/spawn_of_child/${ORPHAN}`,
        kind: 'spawn_of_child',
        ref: ORPHAN,
        reason: 'no landed record names the call that started this child',
        state: 'open',
      },
      { id: 'unres/tool_result/tu_open', kind: 'tool_result', ref: 'tu_open', reason: 'no result landed for this tool use', state: 'open' },
    ]);
    expect(doc.summary.unresolved).toBe(2);
  });

  test('segments carry the span of the talks placed in them', () => {
    expect(doc.segments.map((s) => [s.id, s.state, s.committable, s.talks])).toEqual([
      ['segment/at_1_1', 'candidate', true, 3],
      ['segment/at_1_12', 'open', false, 1],
    ]);
    const first = doc.segments[0]!;
    const inIt = doc.talks.filter((t) => t.segment === first.id);
    expect(first.from).toBe(Math.min(...inIt.map((t) => t.from!)));
    expect(first.to).toBe(Math.max(...inIt.map((t) => t.to!)));
  });

  test('rounds and files are each verified against their digests', () => {
    expect(doc.rounds).toEqual([expect.objectContaining({ round: 1, from_seq: 1, verified: true })]);
    expect('previous' in doc.rounds[0]!).toBe(false);
    for (const f of doc.files) {
      const bytes = readFileSync(join(b.root, f.file));
      expect(f).toMatchObject({
        verified: true,
        bytes: bytes.length,
        digest: createHash('sha256').update(bytes).digest('hex'),
        lines: bytes.toString('utf8').split('\n').length - 1,
      });
    }
    expect(doc.files.filter((f) => f.format === 'sd').map((f) => f.seq)).toEqual(landedFiles(b.root, SID).map((f) => f.seq));
    expect(doc.files.at(-1)).toMatchObject({ format: 'sf', kind: 'round', round: 1 });
  });

  test('relations are every relation of the fold, in the order they happened, and each shows as an edge at both ends', () => {
    const f = foldOf(b.root, SID);
    expect(doc.relations.map((r) => r.id).sort()).toEqual(f.relations.map((r) => r.id).sort());
    const time = (r: (typeof doc.relations)[number]) => Math.min(...r.evidence.map((e) => Date.parse(recordAt(e).time!)));
    const times = doc.relations.map(time);
    expect([...times].sort((a, c) => a - c)).toEqual(times);
    for (const r of doc.relations) {
      for (const [end, dir, other] of [
        [r.from, 'out', r.to],
        [r.to, 'in', r.from],
      ] as const) {
        const n = nodes.get(end);
        if (n) expect(n.edges).toContainEqual({ type: r.type, other, dir, quality: r.quality, via: r.via });
      }
    }
  });

  test('the same head over the same files gives the same document; one talk built alone equals its place in the whole', () => {
    const again = buildView(loadViewInput(b.root, SID));
    expect(JSON.stringify(again)).toBe(JSON.stringify(doc));
    const model = new ViewModel(loadViewInput(b.root, SID));
    for (const t of doc.talks) expect(model.talk(t.id)).toEqual(t);
    expect(model.talk('talk/none')).toBeUndefined();
  });
});
