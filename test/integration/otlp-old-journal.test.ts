/**
 * A journal written by an older aszcol, before the names rule refused a session id it holds:
 * that version answered the records as accepted, so they are the operator's data. Before, landing
 * skipped them without a word (`continue`); now they are quarantined with the rule's reason,
 * counted in `aszcol_receiver_quarantined_records_total{reason="bad_session_id"}` and listed by
 * `aszcol verify`, while the other sessions in the same journal land. Records the current version
 * answered as rejected (partial success) are not quarantined: nothing was promised for them.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { entryFrame, segmentName } from '../../src/receivers/claude-code-otlp/journal-format.js';
import { runCli } from '../helpers/cli.js';
import { ccLogRecord, ccLogsRequest, logsRequest } from '../helpers/otlp.js';
import { landedFiles, recordsOf } from '../helpers/root.js';
import { pollHttp, startService, type RunningService } from '../helpers/service.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { otlpHttpOnly, writeServiceConfig } from '../helpers/service-config.js';
import { eventually } from '../helpers/wait.js';

const started: RunningService[] = [];
afterAll(() => {
  for (const svc of started) if (svc.child.exitCode === null && svc.child.signalCode === null) svc.child.kill('SIGKILL');
  cleanupTemp();
});

/** 128 × 'é': 128 characters, 256 bytes in UTF-8 — accepted by the character count of old versions (B1). */
const TOO_LONG = 'é'.repeat(128);
const HEALTHY = '11111111-2222-4333-8444-00000000000a';
const ANSWERED_REJECTED = 'push.state';
/** The names rule's version before entries were stamped with it: what an older aszcol wrote. */
const OLD_RULE = 0;

function setup() {
  const base = tempDir();
  const root = join(base, 'data');
  const journal = join(root, '_journal', 'claude_code_otlp');
  mkdirSync(journal, { recursive: true });
  const config = writeServiceConfig(base, otlpHttpOnly(root, { shutdownTimeout: '6s' }));
  return { root, journal, config };
}

const entry = (body: Buffer, namesRule?: number) => Buffer.concat([entryFrame('logs', 1_764_480_000_000_000_000n, body, namesRule), body]);

describe('a journal from an older version holding a session id the names rule now refuses', () => {
  test('its records are quarantined with the reason, counted and listed by verify; the rest of the journal lands', async () => {
    const { root, journal, config } = setup();
    const mixedNow = logsRequest([
      ccLogRecord(HEALTHY, { name: 'user_prompt', seq: 9, timeMs: Date.UTC(2026, 10, 30, 6) }),
      ccLogRecord(ANSWERED_REJECTED, { name: 'user_prompt', seq: 10, timeMs: Date.UTC(2026, 10, 30, 6) }),
    ]);
    writeFileSync(
      join(journal, segmentName(0)),
      Buffer.concat([
        entry(ccLogsRequest(TOO_LONG), OLD_RULE),
        entry(ccLogsRequest(HEALTHY, 0, Date.UTC(2026, 10, 30, 5), 'h'), OLD_RULE),
        // Written by this version: its `push.state` item was answered as rejected when it came.
        entry(mixedNow),
      ]),
    );
    const svc = startService(['--config', config]);
    started.push(svc);
    const a = await svc.addresses();

    expect(await eventually(() => recordsOf(landedFiles(root, HEALTHY)).length === 6, 15_000, 50)).toBe(true);
    expect(await eventually(() => existsSync(join(root, '_quarantine')) && readdirSync(join(root, '_quarantine')).length > 0, 15_000, 50)).toBe(true);
    const q = readdirSync(join(root, '_quarantine'));
    expect(q).toHaveLength(1);
    const lines = readFileSync(join(root, '_quarantine', q[0]!), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ t: 'quarantine', reason: 'bad_session_id', session: TOO_LONG, records: 5, receiver: 'claude_code_otlp' });
    expect(String(lines[0]!.error)).toMatch(/256 bytes in UTF-8/);
    expect(lines.filter((l) => l.t === undefined && typeof l.sha === 'string')).toHaveLength(5);
    // Nothing was made under either refused name.
    expect(readdirSync(root).filter((n) => n === TOO_LONG || n === ANSWERED_REJECTED)).toEqual([]);

    const counted = /^aszcol_receiver_quarantined_records_total\{receiver="claude_code_otlp",reason="bad_session_id"\} 5$/m;
    let metrics = '';
    for (let i = 0; i < 75 && !counted.test(metrics); i++) {
      if (i) await new Promise((r) => setTimeout(r, 200));
      metrics = await (await fetch(`http://${a.telemetry}/metrics`)).text();
    }
    expect(metrics).toMatch(counted);
    const health = await pollHttp(`http://${a['extensions/health_check.endpoint']}/`, (s) => s === 200);
    expect(JSON.parse(health.body)).toMatchObject({ status: 'degraded' });

    svc.child.kill('SIGTERM');
    expect((await svc.exited).code).toBe(0);
    const json = await runCli(['verify', '--config', config, '--json']);
    expect(json.code).not.toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ quarantine: { files: 1, records: 5, reasons: { bad_session_id: 5 } } });
    const text = await runCli(['verify', '--config', config]);
    expect(text.stdout).toMatch(/5 record\(s\) in 1 batch\(es\) are quarantined in .*_quarantine, by reason: bad_session_id 5/);
  }, 60_000);
});
