/**
 * `node dist/test/bench/inline-bodies.bench.js`: assembly of a session of 10,000 provider calls
 * (BENCH_CALLS) with and without an inline request and response body event per call
 * (`OTEL_LOG_RAW_API_BODIES=1`), as JSON: medians of a few runs, and the join of the body events alone.
 */
import { assemble } from '../../src/assemble/assemble.js';
import { inlineBodies } from '../../src/assemble/inline-provider-bodies.js';
import { convertTranscriptLine } from '../../src/adapters/claude-code/dialect.js';
import { otlpLogRecordToSd } from '../../src/adapters/claude-code/otlp-dialect.js';
import { entryFromRecord, type IndexEntry } from '../../src/storage/index.js';
import type { PlainLogRecord, PlainObject } from '../../src/otlp/plain-types.js';
import { TranscriptBuilder } from '../helpers/cc.js';

const S = '5e550000-0000-4000-8000-0000000015c0';
const CALLS = Number(process.env.BENCH_CALLS ?? 10_000);
const RUNS = 5;
const prov = { ord: 1, off: 0, sha: 'x', bytes: 1 };

function event(name: string, attributes: PlainObject): PlainLogRecord {
  return {
    timeNs: 0n,
    observedNs: 0n,
    severityNumber: 0,
    severityText: '',
    body: `claude_code.${name}`,
    attributes: { 'session.id': S, 'event.name': name, ...attributes },
    droppedAttributes: 0,
    flags: 0,
    traceId: '',
    spanId: '',
    eventName: '',
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
function timed(fn: () => unknown): number {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const t = new TranscriptBuilder(S, { start: '2026-12-01T10:00:00.000Z' });
for (let i = 0; i < CALLS; i++) {
  if (i % 20 === 0) t.prompt(`talk ${i}`, `p${i}`);
  t.fragment(`msg_${i}`, { type: 'text', text: `answer ${i}` }, { stop: 'end_turn' });
}
const transcript: IndexEntry[] = t.lines.map((l, i) =>
  entryFromRecord({ ...prov, ...convertTranscriptLine(Buffer.from(JSON.stringify(l))) }, 1, i + 1, { kind: 'transcript', stream: 'main' }),
);
const filler = 'x'.repeat(400); // longer than a figure: the index keeps no body text
const events: PlainLogRecord[] = [];
for (let i = 0; i < CALLS; i++) {
  events.push(event('api_request_body', { body: `{"messages":[],"pad":"${filler}"}`, body_length: '420', request_body_id: `b${i}` }));
  events.push(
    event('api_response_body', { body: `{"id":"msg_${i}","pad":"${filler}"}`, request_id: `req_${i}`, request_body_id: `b${i}`, 'message.id': `msg_${i}` }),
  );
}
const bodies = events.map((r, i) => entryFromRecord({ ...prov, ...otlpLogRecordToSd(r).record }, 2, i + 1, { kind: 'otlp_log' }));

const without: number[] = [],
  withBodies: number[] = [],
  joinOnly: number[] = [];
let joined = 0;
for (let r = 0; r < RUNS; r++) {
  without.push(timed(() => assemble({ session: S, entries: transcript })));
  withBodies.push(
    timed(() => {
      const a = assemble({ session: S, entries: [...transcript, ...bodies] });
      joined = [...a.nodes.values()].filter((n) => Array.isArray(n.attrs?.provider_bodies)).length;
    }),
  );
  joinOnly.push(timed(() => inlineBodies(bodies)));
}
console.log(
  JSON.stringify({
    calls: CALLS,
    body_events: bodies.length,
    calls_with_bodies: joined,
    assemble_without_bodies_ms: +median(without).toFixed(1),
    assemble_with_bodies_ms: +median(withBodies).toFixed(1),
    added_ms: +(median(withBodies) - median(without)).toFixed(1),
    read_and_pair_body_events_ms: +median(joinOnly).toFixed(1),
  }),
);
