/**
 * The index keeps telemetry figures as typed pairs (storage/index-figures.ts). A round assembled
 * from the index as it was just built and one assembled from the same index loaded back from disk
 * must be the same round: the join reads the same request ids, durations, decisions, span attempt
 * marks and failed-attempt records either way. The session is landed as the collector and the
 * OTLP receiver would land it: a transcript with a retried call, and the runtime's events and spans.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { assemble } from '../../src/assemble/assemble.js';
import { DIALECT, OTLP_ADAPTER, OTLP_LOGS_SRC, otlpLogRecordToSd, otlpSpanToSd } from '../../src/adapters/claude-code/otlp-dialect.js';
import { LocalCollector } from '../../src/receivers/claude-code-local/pass.js';
import { loadIndex, updateIndex } from '../../src/storage/index.js';
import { landLines } from '../../src/storage/landing.js';
import { otlpDir } from '../../src/storage/layout.js';
import type { PlainLogRecord, PlainObject, PlainSpan } from '../../src/otlp/plain-types.js';
import type { SdRecord } from '../../src/formats/session-data/types.js';
import { TranscriptBuilder, mainPath } from '../helpers/cc.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { ccEventRecord, llmRequestSpan } from '../helpers/cc-telemetry.js';

afterAll(cleanupTemp);

const S = '1d3e0000-0000-4000-8000-0000000000f1';
const T0 = Date.parse('2026-11-30T10:00:00.000Z');

const event = (name: string, timeMs: number, attributes: PlainObject): PlainLogRecord => ccEventRecord(S, name, timeMs, attributes);

/** The answered request's span, with the runtime's mark for each of its three attempts. */
const llmSpan = (): PlainSpan =>
  llmRequestSpan(S, T0 + 100, T0 + 3000, { request_id: 'req_3', success: true, attempt: 3, ttft_ms: 120, duration_ms: 2900 }, [
    [1, 10],
    [2, 800],
    [3, 2100],
  ]);

function land(root: string, seq: number, prefix: 'otlp_log' | 'otlp_span', records: Omit<SdRecord, 'ord' | 'off' | 'sha' | 'bytes'>[]): void {
  const target = {
    dir: otlpDir(root, S),
    prefix,
    stamp: `20261201T00000${seq}.000000000Z`,
    at: new Date(T0).toISOString(),
    header: { kind: prefix, adapter: OTLP_ADAPTER, dialect: DIALECT, src: OTLP_LOGS_SRC, session: S },
  };
  mkdirSync(target.dir, { recursive: true });
  landLines(
    target,
    seq,
    records.map((_, i) => ({ line: Buffer.from(String(i)), off: i, ord: i + 1 })),
    (line) => records[Number(line.toString())]!,
  );
}

describe('telemetry figures in the index', () => {
  test('a round assembled from the index as built equals one assembled from it loaded back', () => {
    const base = tempDir('aszcol-index-figures-');
    const src = join(base, 'projects');
    const root = join(base, 'data');
    const t = new TranscriptBuilder(S, { start: '2026-11-30T10:00:00.000Z' });
    t.prompt('run it', 'p1');
    const failure = (status: number, attempt: number, request: string) =>
      t.push({
        type: 'system',
        subtype: 'api_error',
        level: 'error',
        error: { status, requestId: request, formatted: `${status} mock error`, message: 'a long provider error body '.repeat(20) },
        retryInMs: 500 * attempt,
        retryAttempt: attempt,
        maxRetries: 10,
      });
    failure(529, 1, 'req_1');
    failure(500, 2, 'req_2');
    const call = t.fragment('msg_1', { type: 'tool_use', id: 'tu_1', name: 'Bash', input: { command: 'true' } }, { stop: 'tool_use' });
    t.result('tu_1', '', 'p1');
    t.fragment('msg_2', { type: 'text', text: 'done' });
    t.write(mainPath(src, '-p', S));
    new LocalCollector({ root, sourceRoot: src, filter: { include: [], exclude: [] }, maxDeltaBytes: 1 << 20 }).pass();
    const seq = Math.max(...updateIndex(root, S).index.files.map((f) => f.seq));
    land(
      root,
      seq + 1,
      'otlp_log',
      [
        event('api_request', T0 + 3000, { 'prompt.id': 'p1', request_id: 'req_3', duration_ms: 800, ttft_ms: 120, cost_usd: 0.0021, input_tokens: 10 }),
        event('assistant_response', T0 + 3001, { 'prompt.id': 'p1', request_id: 'req_3', 'message.uuid': call }),
        event('tool_decision', T0 + 3100, { 'prompt.id': 'p1', tool_use_id: 'tu_1', request_id: 'req_3', decision: 'accept', source: 'config' }),
        event('tool_result', T0 + 3300, { 'prompt.id': 'p1', tool_use_id: 'tu_1', request_id: 'req_3', success: 'true', duration_ms: '150' }),
        event('user_prompt', T0, { 'prompt.id': 'p1', prompt: 'a prompt far longer than a figure may be '.repeat(10) }),
      ].map((r) => otlpLogRecordToSd(r).record),
    );
    land(root, seq + 2, 'otlp_span', [otlpSpanToSd(llmSpan()).record]);

    const built = updateIndex(root, S).index.entries;
    const loaded = loadIndex(root, S)!.entries;
    expect(loaded.length).toBe(built.length);
    const fromBuilt = assemble({ session: S, entries: built });
    const fromLoaded = assemble({ session: S, entries: loaded });
    expect([...fromLoaded.nodes.entries()]).toEqual([...fromBuilt.nodes.entries()]);
    expect([...fromLoaded.unresolved.entries()]).toEqual([...fromBuilt.unresolved.entries()]);

    // And the join read what was landed, long text left out of the index.
    const attrs = fromLoaded.nodes.get('call/msg_1')!.attrs!;
    expect(attrs).toMatchObject({ request_id: 'req_3', duration_ms: 800, ttft_ms: 120, cost_usd: 0.0021, attempts_lost_ms: 2090, attempts_lost_from: 'span' });
    expect(attrs.attempts).toEqual([
      expect.objectContaining({
        attempt: 1,
        status_code: 529,
        request_id: 'req_1',
        retry_in_ms: 500,
        started_at: new Date(T0 + 110).toISOString(),
        from: 'transcript',
      }),
      expect.objectContaining({
        attempt: 2,
        status_code: 500,
        request_id: 'req_2',
        retry_in_ms: 1000,
        started_at: new Date(T0 + 900).toISOString(),
        from: 'transcript',
      }),
    ]);
    expect(fromLoaded.nodes.get('tool/tu_1')!.attrs).toMatchObject({ execution_ms: 150, success: true, decision: 'accept', decision_source: 'config' });
    const failed = loaded.find((e) => e.flags.includes('api_error'))!;
    const keys: string[] = [];
    for (let i = 0; i < failed.figures!.count; i++) keys.push(failed.figures!.key(i));
    expect(keys).toEqual(expect.arrayContaining(['error.status', 'error.requestId', 'retryAttempt', 'retryInMs']));
    expect(keys).not.toContain('error.message'); // text, not a figure
  });
});
