/**
 * `node --expose-gc dist/test/bench/inline-bodies.bench.js` (after a build): what provider body
 * events in the OTLP export (`OTEL_LOG_RAW_API_BODIES=1`) cost assembly, on a session of 10,000 calls (BENCH_CALLS) landed and indexed through the real path,
 * with one `api_request` per call and one `tool_result` per tool. Alternated in one process, each
 * after a collection, CPU medians as JSON:
 * - no body events: the inline step's own time against the whole assembly (the target: ≤ 2%);
 * - a request and a response body event per call, against the same number of events of the same
 *   size that no reader knows (the cost of the bodies beyond merely landing that many records).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { assemble } from '../../src/assemble/assemble.js';
import { inlineBodies } from '../../src/assemble/inline-provider-bodies.js';
import { DIALECT, OTLP_ADAPTER, OTLP_LOGS_SRC, otlpLogRecordToSd } from '../../src/adapters/claude-code/otlp-dialect.js';
import { LocalCollector } from '../../src/receivers/claude-code-local/pass.js';
import { loadIndex, updateIndex } from '../../src/storage/index.js';
import { landLines } from '../../src/storage/landing.js';
import { otlpDir } from '../../src/storage/layout.js';
import type { PlainLogRecord } from '../../src/otlp/plain-types.js';
import { TranscriptBuilder, mainPath } from '../helpers/cc.js';
import { ccEventRecord } from '../helpers/cc-telemetry.js';

const S = '5e550000-0000-4000-8000-0000000015c0';
const CALLS = Number(process.env.BENCH_CALLS ?? 10_000);
const CALLS_PER_TALK = 50;
const RUNS = Number(process.env.BENCH_RUNS ?? 11);
const WARMUP = 2;
const STEP_REPS = 10;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
function cpu(fn: () => unknown): number {
  const c0 = process.cpuUsage();
  fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

function generate(src: string): void {
  const t = new TranscriptBuilder(S);
  for (let i = 0; i < CALLS; i++) {
    if (i % CALLS_PER_TALK === 0) t.prompt(`task ${i}`, `p${i / CALLS_PER_TALK}`);
    t.fragment(`msg_${i}`, { type: 'tool_use', id: `tu_${i}`, name: 'Bash', input: { command: `echo ${i}` } }, { stop: 'tool_use' });
    t.result(`tu_${i}`, `${i}`, `p${Math.floor(i / CALLS_PER_TALK)}`, { toolUseResult: { stdout: `${i}` } });
  }
  t.write(mainPath(src, '-p', S));
}

/** One `otlp_log` file of these events, landed as the OTLP receiver lands them; returns its seq. */
function land(root: string, seq: number, events: PlainLogRecord[]): number {
  const target = {
    dir: otlpDir(root, S),
    prefix: 'otlp_log',
    stamp: `20261201T00000${seq % 10}.000000000Z`,
    at: new Date().toISOString(),
    header: { kind: 'otlp_log' as const, adapter: OTLP_ADAPTER, dialect: DIALECT, src: OTLP_LOGS_SRC, session: S },
  };
  mkdirSync(target.dir, { recursive: true });
  const lines = events.map((_, i) => ({ line: Buffer.from(String(i)), off: i, ord: i + 1 }));
  landLines(target, seq, lines, (line) => otlpLogRecordToSd(events[Number(line.toString())]!).record);
  return seq;
}

const T0 = Date.parse('2026-11-30T10:00:00.000Z');
const requestBody = (i: number) =>
  JSON.stringify({ model: 'claude-x', max_tokens: 1000, messages: [{ role: 'user', content: `task ${i} ${'x'.repeat(2000)}` }] });
const responseBody = (i: number) => JSON.stringify({ id: `msg_${i}`, type: 'message', role: 'assistant', content: [], stop_reason: 'tool_use', usage: {} });

function bodyEvents(name: (role: 'request' | 'response') => string): PlainLogRecord[] {
  const out: PlainLogRecord[] = [];
  for (let i = 0; i < CALLS; i++) {
    const req = requestBody(i);
    out.push(ccEventRecord(S, name('request'), T0 + i, { body: req, body_length: String(req.length), model: 'claude-x', request_body_id: `b${i}` }));
    const res = responseBody(i);
    out.push(
      ccEventRecord(S, name('response'), T0 + i, {
        body: res,
        body_length: String(res.length),
        request_id: `req_${i}`,
        request_body_id: `b${i}`,
        'message.id': `msg_${i}`,
        'message.uuid': `u${i}`,
      }),
    );
  }
  return out;
}

function main(): void {
  const base = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'aszcol-bench-inline-'));
  const src = join(base, 'projects'),
    root = join(base, 'data');
  mkdirSync(src, { recursive: true });
  try {
    generate(src);
    new LocalCollector({ root, sourceRoot: src, filter: { include: [], exclude: [] }, maxDeltaBytes: 2 * 1024 * 1024 }).pass();
    let seq = Math.max(...loadIndex(root, S)!.entries.map((e) => e.seq));
    const telemetry: PlainLogRecord[] = [];
    for (let i = 0; i < CALLS; i++) {
      telemetry.push(ccEventRecord(S, 'api_request', T0 + i, { request_id: `req_${i}`, duration_ms: 800, cost_usd: 0.0013 }));
      telemetry.push(ccEventRecord(S, 'tool_result', T0 + i, { tool_use_id: `tu_${i}`, request_id: `req_${i}`, success: 'true', duration_ms: '12' }));
    }
    const telemetrySeq = land(root, ++seq, telemetry);
    const bodySeq = land(
      root,
      ++seq,
      bodyEvents((role) => `api_${role}_body`),
    );
    const fillerSeq = land(
      root,
      ++seq,
      bodyEvents((role) => `unread_${role}_event`),
    );
    updateIndex(root, S);
    const all = loadIndex(root, S)!.entries;
    const plain = all.filter((e) => e.seq <= telemetrySeq);
    const withBodies = all.filter((e) => e.seq !== fillerSeq);
    const withFiller = all.filter((e) => e.seq !== bodySeq);
    const bodiesOnly = all.filter((e) => e.seq === bodySeq);

    // Assemblies alternated, each after a collection, so the machine's load falls on all three alike; the step
    // timed over STEP_REPS back-to-back calls, since alone it is too short for a process's CPU clock.
    const runs = { plain: [] as number[], plainStep: [] as number[], bodies: [] as number[], filler: [] as number[], bodiesStep: [] as number[] };
    const perCall = (fn: () => unknown) => cpu(() => Array.from({ length: STEP_REPS }, fn)) / STEP_REPS;
    let joined = 0;
    for (let r = -WARMUP; r < RUNS; r++) {
      const keep = (xs: number[], x: number) => {
        if (r >= 0) xs.push(x);
      };
      global.gc?.();
      keep(
        runs.plain,
        cpu(() => assemble({ session: S, entries: plain })),
      );
      global.gc?.();
      keep(
        runs.filler,
        cpu(() => assemble({ session: S, entries: withFiller })),
      );
      global.gc?.();
      let a: ReturnType<typeof assemble> | undefined;
      keep(
        runs.bodies,
        cpu(() => (a = assemble({ session: S, entries: withBodies }))),
      );
      joined = [...a!.nodes.values()].filter((n) => Array.isArray(n.attrs?.provider_bodies)).length;
      global.gc?.();
      keep(
        runs.plainStep,
        perCall(() => inlineBodies(plain)),
      );
      keep(
        runs.bodiesStep,
        perCall(() => inlineBodies(bodiesOnly)),
      );
    }
    const m = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v)])) as Record<keyof typeof runs, number>;
    const pct = (a: number, b: number) => +((100 * a) / b).toFixed(2);
    console.log(
      JSON.stringify({
        benchmark: 'inline-bodies',
        node: process.version,
        load_average_1m: +loadavg()[0]!.toFixed(2),
        calls: CALLS,
        telemetry_events: telemetry.length,
        body_events: bodiesOnly.length,
        calls_with_bodies: joined,
        cpu_ms: {
          assemble_no_bodies: +m.plain.toFixed(1),
          inline_step_no_bodies: +m.plainStep.toFixed(2),
          assemble_with_unread_events: +m.filler.toFixed(1),
          assemble_with_body_events: +m.bodies.toFixed(1),
          inline_step_body_events: +m.bodiesStep.toFixed(1),
        },
        inline_step_share_no_bodies_pct: pct(m.plainStep, m.plain),
        body_events_over_unread_events_pct: pct(m.bodies - m.filler, m.filler),
        inline_step_share_with_bodies_pct: pct(m.bodiesStep, m.bodies),
        inline_step_us_per_body_event: +((1000 * m.bodiesStep) / bodiesOnly.length).toFixed(2),
        targets: { inline_step_share_no_bodies_pct: '<= 2', body_events: 'linear in the body events: one look at each, ids in maps, no body text read' },
      }),
    );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

main();
