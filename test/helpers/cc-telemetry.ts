/**
 * Claude Code's telemetry as assembly sees it in tests: an event as the OTLP receiver decodes it,
 * and index entries built by the real converters and the index's own entry builder.
 */
import { convertTranscriptLine } from '../../src/adapters/claude-code/dialect.js';
import { otlpLogRecordToSd, otlpSpanToSd } from '../../src/adapters/claude-code/otlp-dialect.js';
import { entryFromRecord, type IndexEntry } from '../../src/storage/index.js';
import type { PlainLogRecord, PlainObject, PlainSpan } from '../../src/otlp/plain-types.js';
import type { TranscriptBuilder } from './cc.js';

/** Provenance for records built in memory: no source file stands behind them. */
const PROVENANCE = { ord: 1, off: 0, sha: 'x', bytes: 1 };

/** One Claude Code event (`claude_code.<name>`) of `session` at `timeMs`. */
export function ccEventRecord(session: string, name: string, timeMs: number, attributes: PlainObject): PlainLogRecord {
  const ns = BigInt(timeMs) * 1_000_000n;
  return {
    timeNs: ns,
    observedNs: ns,
    severityNumber: 0,
    severityText: '',
    body: `claude_code.${name}`,
    attributes: { 'session.id': session, 'event.name': name, ...attributes },
    droppedAttributes: 0,
    flags: 0,
    traceId: '',
    spanId: '',
    eventName: '',
  };
}

/**
 * The runtime's `claude_code.llm_request` span of `session` from `startMs` to `endMs`, with `attributes`
 * beside its session id and one `gen_ai.request.attempt` mark per attempt (number, ms after `startMs`).
 */
export function llmRequestSpan(session: string, startMs: number, endMs: number, attributes: PlainObject, attempts: [number, number][]): PlainSpan {
  return {
    traceId: 'ab'.repeat(16),
    spanId: 'b1',
    parentSpanId: '',
    traceState: '',
    flags: 0,
    name: 'claude_code.llm_request',
    kind: 1,
    startNs: BigInt(startMs) * 1_000_000n,
    endNs: BigInt(endMs) * 1_000_000n,
    attributes: { 'session.id': session, ...attributes },
    droppedAttributes: 0,
    events: attempts.map(([attempt, ms]) => ({
      name: 'gen_ai.request.attempt',
      timeNs: BigInt(startMs + ms) * 1_000_000n,
      attributes: { attempt },
      droppedAttributes: 0,
    })),
    links: [],
    status: undefined,
  } as unknown as PlainSpan;
}

/** A transcript's lines as the index holds them, landed as file `seq` of the main stream. */
export function transcriptEntries(seq: number, t: TranscriptBuilder): IndexEntry[] {
  return t.lines.map((l, i) =>
    entryFromRecord({ ...PROVENANCE, ...convertTranscriptLine(Buffer.from(JSON.stringify(l))) }, seq, i + 1, { kind: 'transcript', stream: 'main' }),
  );
}

/** Events as the index holds them, landed as `otlp_log` file `seq`. */
export function logEntries(seq: number, recs: PlainLogRecord[]): IndexEntry[] {
  return recs.map((r, i) => entryFromRecord({ ...PROVENANCE, ...otlpLogRecordToSd(r).record }, seq, i + 1, { kind: 'otlp_log' }));
}

/** Spans as the index holds them, landed as `otlp_span` file `seq`. */
export function spanEntries(seq: number, recs: PlainSpan[]): IndexEntry[] {
  return recs.map((r, i) => entryFromRecord({ ...PROVENANCE, ...otlpSpanToSd(r).record }, seq, i + 1, { kind: 'otlp_span' }));
}
