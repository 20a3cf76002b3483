import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SessionDataBuilder } from '../../src/formats/session-data/encode.js';
import type { SdRecord, Usage } from '../../src/formats/session-data/types.js';
import { landedName, streamDir } from '../../src/storage/layout.js';
import { writeOnce } from '../../src/storage/write-once.js';
import { deriveTokenUsage, type DeriveOptions } from '../../src/processors/token-metrics/derive.js';
import { METRIC_DESCRIPTION, METRIC_NAME, METRIC_UNIT, tokenPoints, type TokenPoint } from '../../src/otlp/token-usage.js';
import { parseLookback, validateTokenMetricsConfig } from '../../src/processors/token-metrics/config.js';
import { DERIVED_NAME as DERIVED_SPOOL_NAME } from '../../src/storage/metrics-spool.js';
import { otlpTypes } from '../../src/otlp/proto.js';
import { ConfigError } from '../../src/util/errors.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const S = 'sess-1';
const T0 = Date.parse('2026-06-01T09:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
/** Files landed now (after the root's first derivation is recorded only if derived first). */
const NOW_STAMP = '20260601T100000.000000000Z';

class Stream {
  private ord = 0;
  constructor(
    readonly root: string,
    readonly stream: string,
    readonly session = S,
  ) {}

  /** Lands one transcript file of this stream. */
  land(seq: number, records: Partial<SdRecord>[], stamp = NOW_STAMP): void {
    const at = `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}.000000000Z`;
    const b = new SessionDataBuilder({
      seq,
      at,
      kind: 'transcript',
      adapter: 'claude-code-local/0.1.0',
      dialect: 'claude-code/1',
      src: `p/${this.stream}.jsonl`,
      session: this.session,
      stream: this.stream,
    } as never);
    for (const r of records) b.add({ ord: ++this.ord, off: this.ord * 10, sha: '000000000000', bytes: 9, parts: [], ...r });
    writeOnce(join(streamDir(this.root, this.session, this.stream), landedName('transcript', stamp, seq)), b.finish().bytes);
  }
}

const u = (inp: number, out: number, cr = 0, cw = 0): Usage => ({ in: inp, out, cache_read: cr, cache_write: cw });
/** A model fragment of a call. */
const frag = (call: string, ms: number, usage: Usage, finished: boolean, model = 'claude-opus-5-5'): Partial<SdRecord> => ({
  id: `${call}-${ms}`,
  call,
  from: 'agent',
  time: iso(ms),
  model,
  usage,
  ...(finished ? { flags: ['finished'] } : {}),
  parts: [{ k: 'text', state: 'available', bytes: 1, text: 'x' }],
});
const toolResult = (ms: number): Partial<SdRecord> => ({
  id: `tr-${ms}`,
  from: 'runtime',
  time: iso(ms),
  parts: [{ k: 'result', state: 'available', bytes: 2, of: 't1', text: 'ok' }],
});

function spool(root: string): { name: string; points: TokenPoint[] }[] {
  const dir = join(root, '_metrics');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => DERIVED_SPOOL_NAME.test(n))
    .sort()
    .map((name) => ({ name, points: tokenPoints(readFileSync(join(dir, name))) }));
}

/** Sums by type (and optionally other keys) over every spooled point. */
function totals(root: string, key: (p: TokenPoint) => string = (p) => p.type): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of spool(root)) for (const p of f.points) out[key(p)] = (out[key(p)] ?? 0) + p.value;
  return out;
}

const derive = (root: string, o: Partial<DeriveOptions> = {}) =>
  deriveTokenUsage({ root, lookbackMs: 0, graceMs: 0, now: () => Date.parse('2026-06-01T10:00:00Z'), ...o });

describe('token usage derived from landed transcripts', () => {
  test("a main call counts once, with its last fragment's usage (never a sum), a point for each type, zero included", async () => {
    const root = tempDir();
    new Stream(root, 'main').land(1, [
      { id: 'p1', from: 'external', time: iso(T0), parts: [] },
      frag('c1', T0 + 1000, u(3, 7, 100, 0), true),
      frag('c1', T0 + 1100, u(3, 7, 100, 0), true),
      toolResult(T0 + 1500),
      frag('c1', T0 + 2000, u(3, 9, 100, 0), true),
    ]);
    const r = await derive(root);
    expect(r).toMatchObject({ files: 1, calls: 1, counted: 1, unfinished: 0, spooled: 1, windows: 1, problems: [] });
    const [f] = spool(root);
    expect(f!.points.map((p) => [p.type, p.value])).toEqual([
      ['input', 3],
      ['output', 9],
      ['cacheRead', 100],
      ['cacheCreation', 0],
    ]);
    expect(f!.points[0]).toMatchObject({ session: S, model: 'claude-opus-5-5', query_source: 'main', start_ms: T0, end_ms: T0 + 60_000 });
  });

  test("the request has Claude Code's shape: the metric's name, description, unit, a monotonic delta sum of doubles", async () => {
    const root = tempDir();
    new Stream(root, 'main').land(1, [frag('c1', T0, u(1, 2), true)]);
    await derive(root);
    const name = readdirSync(join(root, '_metrics')).find((n) => DERIVED_SPOOL_NAME.test(n))!;
    const T = otlpTypes().ExportMetricsServiceRequest;
    const o = T.toObject(T.decode(readFileSync(join(root, '_metrics', name))), { longs: String, enums: Number }) as any;
    const m = o.resourceMetrics[0].scopeMetrics[0].metrics[0];
    expect({ name: m.name, description: m.description, unit: m.unit }).toEqual({ name: METRIC_NAME, description: METRIC_DESCRIPTION, unit: METRIC_UNIT });
    expect(m.sum.aggregationTemporality).toBe(1);
    expect(m.sum.isMonotonic).toBe(true);
    expect(m.sum.dataPoints.every((p: any) => typeof p.asDouble === 'number' && p.asInt === undefined)).toBe(true);
    expect(m.sum.dataPoints[0].attributes.map((a: any) => a.key).sort()).toEqual(['model', 'query_source', 'session.id', 'type']);
  });

  test('a child call counts its final fragment, not the streaming partials before it; an unfinished call is left out', async () => {
    const root = tempDir();
    new Stream(root, 'agent-a').land(2, [
      frag('k1', T0, u(2, 1, 50, 5), false),
      frag('k1', T0 + 100, u(2, 3, 50, 5), false),
      frag('k1', T0 + 200, u(2, 12, 50, 5), true),
      frag('k2', T0 + 300, u(9, 9, 9, 9), false), // a streaming stub that never finished
      toolResult(T0 + 400),
    ]);
    const r = await derive(root);
    expect(r).toMatchObject({ calls: 2, counted: 1, unfinished: 1 });
    expect(totals(root)).toEqual({ input: 2, output: 12, cacheRead: 50, cacheCreation: 5 });
    expect(spool(root)[0]!.points[0]!.query_source).toBe('subagent');
  });

  test('a call cut at a file boundary is read on into the next file and counted once', async () => {
    const root = tempDir();
    const s = new Stream(root, 'agent-b');
    s.land(1, [frag('x', T0, u(1, 1), false), frag('x', T0 + 100, u(1, 2), false)]);
    s.land(2, [frag('x', T0 + 200, u(1, 30), true), toolResult(T0 + 300), frag('y', T0 + 400, u(5, 5), true)]);
    const r = await derive(root);
    expect(r).toMatchObject({ files: 2, calls: 2, counted: 2 });
    expect(totals(root)).toEqual({ input: 6, output: 35, cacheRead: 0, cacheCreation: 0 });
    // x's windows went with the first file's request, y's with the second's.
    expect(spool(root).map((f) => f.points.find((p) => p.type === 'output')!.value)).toEqual([30, 5]);
  });

  test("a child call cut next to its own tool result is read short, so it is left out (the hunk's rule); a main call still counts", async () => {
    const root = tempDir();
    const child = new Stream(root, 'agent-c');
    child.land(1, [frag('z', T0, u(1, 1), false), toolResult(T0 + 50)]);
    child.land(2, [frag('z', T0 + 100, u(1, 40), true)]);
    const main = new Stream(root, 'main');
    main.land(3, [frag('m', T0, u(4, 4), true), toolResult(T0 + 50)]);
    main.land(4, [frag('m', T0 + 100, u(4, 4), true)]);
    const r = await derive(root);
    expect(r).toMatchObject({ calls: 2, counted: 1, unfinished: 1 });
    expect(totals(root, (p) => `${p.query_source}/${p.type}`)).toEqual({ 'main/input': 4, 'main/output': 4, 'main/cacheRead': 0, 'main/cacheCreation': 0 });
  });

  test('a call the runtime re-emitted later (before a context reset) is the same call: never counted twice, across passes too', async () => {
    const root = tempDir();
    const s = new Stream(root, 'main');
    s.land(1, [frag('r1', T0, u(10, 10), true)]);
    await derive(root);
    s.land(2, [
      { id: 'boundary', from: 'runtime', time: iso(T0 + 5000), flags: ['context_reset'], parts: [] },
      frag('r1', T0 + 6000, u(10, 10), true),
      frag('r2', T0 + 7000, u(1, 1), true),
    ]);
    const r = await derive(root);
    expect(r).toMatchObject({ files: 1, calls: 1, counted: 1 });
    expect(totals(root)).toEqual({ input: 11, output: 11, cacheRead: 0, cacheCreation: 0 });
    // A third pass with nothing new derives nothing.
    expect(await derive(root)).toMatchObject({ files: 0, calls: 0, spooled: 0 });
  });

  test("windows of a series never overlap: a later file in the same minute follows the series' last window; other series keep their minute", async () => {
    const root = tempDir();
    const a = new Stream(root, 'agent-1');
    const b = new Stream(root, 'agent-2');
    a.land(1, [frag('a1', T0 + 10_000, u(1, 1), true)]);
    b.land(2, [frag('b1', T0 + 20_000, u(2, 2), true), frag('b2', T0 + 25_000, u(3, 3), true, 'claude-haiku-5')]);
    await derive(root);
    const all = spool(root).flatMap((f) => f.points.filter((p) => p.type === 'input'));
    const byModel = (m: string) => all.filter((p) => p.model === m).map((p) => [p.start_ms - T0, p.end_ms - T0, p.value]);
    // Both children are the same series (session, model, subagent): the second window follows the first.
    expect(byModel('claude-opus-5-5')).toEqual([
      [0, 60_000, 1],
      [60_000, 120_000, 2],
    ]);
    expect(byModel('claude-haiku-5')).toEqual([[0, 60_000, 3]]);
    // And a later file with an earlier call still goes after the series' last window; nothing is thrown away.
    new Stream(root, 'agent-3').land(3, [frag('c1', T0 + 1000, u(4, 4), true)]);
    await derive(root);
    const opus = spool(root)
      .flatMap((f) => f.points.filter((p) => p.type === 'input' && p.model === 'claude-opus-5-5'))
      .map((p) => [p.start_ms - T0, p.value]);
    expect(opus).toEqual([
      [0, 1],
      [60_000, 2],
      [120_000, 4],
    ]);
  });

  test('calls in one minute of one series sum into one point', async () => {
    const root = tempDir();
    new Stream(root, 'main').land(1, [
      frag('s1', T0 + 1000, u(1, 2), true),
      frag('s2', T0 + 59_000, u(10, 20), true),
      frag('s3', T0 + 61_000, u(100, 200), true),
    ]);
    await derive(root);
    expect(
      spool(root)[0]!
        .points.filter((p) => p.type === 'output')
        .map((p) => [p.start_ms - T0, p.value]),
    ).toEqual([
      [0, 22],
      [60_000, 200],
    ]);
  });

  test("the client's own synthetic records are no provider call", async () => {
    const root = tempDir();
    new Stream(root, 'main').land(1, [{ ...frag('syn', T0, u(0, 0), true, '<synthetic>'), flags: ['finished', 'synthetic'] }]);
    const r = await derive(root);
    expect(r).toMatchObject({ calls: 1, counted: 0, spooled: 0 });
    expect(spool(root)).toEqual([]);
  });

  test('the first derivation counts nothing older than the look-back in files landed by then; later files are derived whole', async () => {
    const root = tempDir();
    const s = new Stream(root, 'main');
    const now = Date.parse('2026-06-03T10:00:00Z');
    s.land(1, [frag('old', now - 30 * 3_600_000, u(1000, 1000), true), frag('new', now - 3_600_000, u(1, 1), true)], '20260603T095959.000000000Z');
    const r = await deriveTokenUsage({ root, lookbackMs: 24 * 3_600_000, graceMs: 0, now: () => now });
    expect(r).toMatchObject({ counted: 1, outside_lookback: 1 });
    expect(totals(root).input).toBe(1);
    // Landed after the first derivation: derived whole, however old its calls.
    s.land(2, [frag('older', now - 40 * 3_600_000, u(7, 7), true)], '20260603T110000.000000000Z');
    const r2 = await deriveTokenUsage({ root, lookbackMs: 24 * 3_600_000, graceMs: 0, now: () => now + 3_600_000 });
    expect(r2).toMatchObject({ counted: 1, outside_lookback: 0 });
    expect(totals(root).input).toBe(8);
    const state = readFileSync(join(root, '_metrics', 'derive.state'), 'utf8');
    expect(state).toMatch(/first_at\s+2026-06-03T10:00:00.000Z/);
    expect(state).toMatch(/cutoff\s+2026-06-02T10:00:00.000Z/);
  });

  test('under the service, a file ending mid-call waits the grace for the next file of its stream; a one-shot never waits; a tool result never waits', async () => {
    const root = tempDir();
    const s = new Stream(root, 'agent-w');
    s.land(1, [frag('w', T0, u(1, 1), false)]);
    const waiting = new Map<string, number>();
    let clock = Date.parse('2026-06-01T10:00:00Z');
    const o = { graceMs: 30_000, waiting, now: () => clock };
    expect(await derive(root, o)).toMatchObject({ waiting: 1, files: 0 });
    clock += 10_000;
    s.land(2, [frag('w', T0 + 500, u(1, 50), true)]);
    // The continuation landed: the call is read on and counted whole.
    expect(await derive(root, o)).toMatchObject({ waiting: 0, files: 2, counted: 1 });
    expect(totals(root).output).toBe(50);

    const other = tempDir();
    const t = new Stream(other, 'agent-x');
    t.land(1, [frag('v', T0, u(1, 1), false)]);
    const w2 = new Map<string, number>();
    let c2 = 0;
    expect(await derive(other, { graceMs: 30_000, waiting: w2, now: () => c2 })).toMatchObject({ waiting: 1 });
    c2 += 31_000;
    // The grace ran out: derived with what it has (an unfinished child call is left out).
    expect(await derive(other, { graceMs: 30_000, waiting: w2, now: () => c2 })).toMatchObject({ waiting: 0, files: 1, unfinished: 1 });

    const once = tempDir();
    new Stream(once, 'agent-y').land(1, [frag('q', T0, u(1, 1), true)]);
    expect(await derive(once, { graceMs: 0 })).toMatchObject({ waiting: 0, counted: 1 });
    const tr = tempDir();
    new Stream(tr, 'agent-z').land(1, [frag('q', T0, u(1, 1), true), toolResult(T0 + 10)]);
    expect(await derive(tr, { graceMs: 30_000, waiting: new Map() })).toMatchObject({ waiting: 0, counted: 1 });
  });

  test('a pass whose state was never saved is finished from its receipt: same request bytes, nothing counted twice', async () => {
    const root = tempDir();
    const s = new Stream(root, 'main');
    s.land(1, [frag('a', T0, u(5, 5), true)]);
    await derive(root);
    const stateFile = join(root, S, 'metrics', 'derive.state');
    const before = readFileSync(stateFile, 'utf8');
    s.land(2, [frag('b', T0 + 120_000, u(7, 7), true)]);
    await derive(root);
    const [, second] = spool(root);
    const secondPath = join(root, '_metrics', second!.name);
    const secondBytes = readFileSync(secondPath);
    // Simulate a crash after the receipt and the request, before the state: put the old state back
    // and the receipt the pass had written (rebuilt here the way the pass writes it).
    const receipt = {
      schema: 1,
      seq: 2,
      file: 'x',
      spool: second!.name,
      calls: ['b'],
      windows: [
        {
          model: 'claude-opus-5-5',
          query_source: 'main',
          start_ms: T0 + 120_000,
          end_ms: T0 + 180_000,
          tokens: { input: 7, output: 7, cacheRead: 0, cacheCreation: 0 },
        },
      ],
    };
    writeFileSync(stateFile, before);
    writeFileSync(join(root, S, 'metrics', 'receipt-000002.json'), JSON.stringify(receipt));
    // …and, worse, the request itself was lost: it is written again from the receipt.
    rmSync(secondPath, { force: true });
    const r = await derive(root);
    expect(r).toMatchObject({ recovered: 1, files: 0, counted: 0, spooled: 1 });
    expect(readFileSync(secondPath).equals(secondBytes)).toBe(true);
    expect(totals(root)).toEqual({ input: 12, output: 12, cacheRead: 0, cacheCreation: 0 });
    expect(readdirSync(join(root, S, 'metrics')).filter((n) => n.startsWith('receipt-'))).toEqual([]);
  });

  test('derived requests are named after their landed files and are the same bytes when derived again from scratch', async () => {
    const build = () => {
      const root = tempDir();
      new Stream(root, 'main').land(3, [frag('a', T0, u(5, 5), true)], '20260601T090000.000000000Z');
      return root;
    };
    const a = build(),
      b = build();
    await derive(a);
    await derive(b);
    expect(spool(a).map((f) => f.name)).toEqual([`metrics-20260601T090000.000000000Z-000003-${S}-derived.pb`]);
    const bytes = (root: string) => readFileSync(join(root, '_metrics', spool(root)[0]!.name));
    expect(bytes(a).equals(bytes(b))).toBe(true);
  });

  test('a landed file that does not read is reported, and its stream waits; the others go on', async () => {
    const root = tempDir();
    new Stream(root, 'main').land(1, [frag('a', T0, u(5, 5), true)]);
    const s = new Stream(root, 'agent-bad');
    s.land(2, [frag('b', T0, u(1, 1), true)]);
    const bad = join(streamDir(root, S, 'agent-bad'), landedName('transcript', NOW_STAMP, 2));
    const text = readFileSync(bad, 'utf8').replace('"out":1', '"out":2');
    unlinkSync(bad);
    writeFileSync(bad, text);
    const r = await derive(root);
    expect(r.problems).toEqual([expect.stringMatching(/agent-bad.*digest mismatch.*its stream waits/)]);
    expect(r.counted).toBe(1);
  });
});

describe('configuration', () => {
  test('lookback takes durations, days, 0 and none; grace a duration; unknown keys are refused', () => {
    expect(parseLookback(undefined, 'p')).toBe(24 * 3_600_000);
    expect(parseLookback('7d', 'p')).toBe(7 * 86_400_000);
    expect(parseLookback('90m', 'p')).toBe(90 * 60_000);
    expect(parseLookback('none', 'p')).toBe(0);
    expect(parseLookback(0, 'p')).toBe(0);
    expect(() => parseLookback('soon', 'processors.token_metrics.lookback')).toThrow(ConfigError);
    expect(validateTokenMetricsConfig({ grace: '5s' }, 'p')).toEqual({ lookbackMs: 24 * 3_600_000, graceMs: 5000 });
    expect(() => validateTokenMetricsConfig({ lookback: '1h', windows: 1 }, 'processors.token_metrics')).toThrow(
      /processors\.token_metrics\.windows: unknown key/,
    );
  });
});
