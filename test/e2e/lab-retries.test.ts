/**
 * A provider call that failed before it answered, with the real Claude Code CLI: the lab's mock
 * API answers the first request 529 and the second 500 (test/e2e/lab-scripts/retry.json), so the
 * runtime retries twice. Claude Code 2.1.328 sends no `api_error` event for an attempt it retries;
 * what says so is the transcript's `system/api_error` records (status, the failed request's id,
 * attempt number, back-off) in the call's parent chain, and the answered `llm_request` span's
 * `gen_ai.request.attempt` marks. Ground truth is the mock's request log: every request it
 * received, the failed ones with the status it answered.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import type { CallsAnswer } from '../../src/extensions/view/figures-api.js';
import { labRun, readRequestLog, type LoggedRequest } from '../helpers/lab.js';
import { REPO, collectAndParse, runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

/** The script stays beside this test's source (tests run from the repository). */
const RETRY_SCRIPT = join(REPO, 'test', 'e2e', 'lab-scripts', 'retry.json');
/** How far the runtime's own attempt marks may sit from the mock's arrival times: connection set-up and the runtime's bookkeeping, on a loaded 2-core machine. */
const SLACK_MS = 1500;

type Logged = LoggedRequest & { status?: number };

describe('a call the runtime retried: its failed attempts, against the mock API that failed them', () => {
  const base = tempDir('aszcol-e2e-retries-');
  const home = join(base, 'home');
  const root = join(base, 'data');
  const log = join(base, 'requests.jsonl');
  let session = '';
  let requests: Logged[] = [];
  let answer: CallsAnswer;

  beforeAll(async () => {
    const config = writeConfig(base, root, join(home, 'projects'));
    const r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { http: { endpoint: '127.0.0.1:0' } } }), { storageRoot: root });
    await r.start();
    try {
      const run = await labRun({
        configDir: home,
        cwd: join(base, 'work'),
        prompt: 'RETRYME please',
        log,
        otlp: `http://${r.addresses().http}`,
        protocol: 'http/protobuf',
        traces: '1',
        script: RETRY_SCRIPT,
      });
      session = run.session_id;
      expect(await r.landed(15_000)).toBe(true);
    } finally {
      await r.shutdown();
    }
    await collectAndParse(config);
    requests = readRequestLog(log) as Logged[];
    const c = await runCli(['conversation', session, '--calls', '--json', '--config', config]);
    expect(c.stderr).toBe('');
    expect(c.code).toBe(0);
    answer = JSON.parse(c.stdout) as CallsAnswer;
  }, 300_000);

  test('the mock failed two requests and answered the third', () => {
    expect(requests.map((q) => q.status ?? 200)).toEqual([529, 500, 200]);
  });

  test('the answered call carries both failed attempts: numbers, status codes and the failed requests’ own ids, as the mock logged them', () => {
    const answered = requests[2]!;
    const call = answer.calls.find((c) => c.message_id === answered.message_id)!;
    expect(call).toBeDefined();
    expect(call.request_id).toBe(answered.request_id);
    expect(call.attempts.map((a) => [a.attempt, a.status_code, a.request_id, a.from])).toEqual([
      [1, 529, requests[0]!.request_id, 'transcript'],
      [2, 500, requests[1]!.request_id, 'transcript'],
    ]);
    for (const a of call.attempts) expect(a.retry_in_ms).toBeGreaterThan(0);
  });

  test('the time lost is measured by the runtime’s span, waited at least its back-offs, and matches the mock’s first-to-last arrival', () => {
    const call = answer.calls.find((c) => c.message_id === requests[2]!.message_id)!;
    const mockSpan = Date.parse(requests[2]!.received_at!) - Date.parse(requests[0]!.received_at!);
    expect(call.sources.attempts_lost_ms).toBe('span');
    expect(call.attempts_lost_ms).toBeGreaterThanOrEqual(call.attempts.reduce((n, a) => n + (a.retry_in_ms ?? 0), 0));
    expect(Math.abs(call.attempts_lost_ms! - mockSpan)).toBeLessThanOrEqual(SLACK_MS);
    // Each failed attempt's start, from the span's marks, comes before the mock received it.
    for (const [i, a] of call.attempts.entries()) {
      expect(a.started_at).toBeDefined();
      const lead = Date.parse(requests[i]!.received_at!) - Date.parse(a.started_at!);
      expect(lead).toBeGreaterThanOrEqual(0);
      expect(lead).toBeLessThanOrEqual(SLACK_MS);
    }
  });

  test('every other call of the session carries no failed attempt', () => {
    for (const c of answer.calls.filter((x) => x.message_id !== requests[2]!.message_id)) expect(c.attempts).toEqual([]);
  });
});
