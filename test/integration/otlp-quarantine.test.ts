/**
 * A record whose landing can never succeed is parked, not retried for ever. Here a session's
 * directory path is taken by a file (`<root>/<session>` is a file: ENOTDIR on every try). Before,
 * the receiver retried it about once a second for ever: `landed.state` stood still, every pass
 * waited 10 s, health said ok and SIGTERM overran shutdown_timeout. Now its records go to
 * `_quarantine/` within a few rounds, the next session lands, `landed.state` moves, health says
 * degraded, `aszcol verify` lists them and exits 1, the metric counts them, and the service stops
 * within its shutdown_timeout.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { segmentName } from '../../src/receivers/claude-code-otlp/journal-format.js';
import { parseKv } from '../../src/storage/kv-text.js';
import { runCli } from '../helpers/cli.js';
import { ccLogsRequest, httpPost } from '../helpers/otlp.js';
import { landedFiles, recordsOf } from '../helpers/root.js';
import { pollHttp, startService, type RunningService } from '../helpers/service.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { otlpHttpOnly, writeServiceConfig } from '../helpers/service-config.js';
import { eventually } from '../helpers/wait.js';

/** Services started here: one a failed test left running is ended at the end. */
const started: RunningService[] = [];
afterAll(() => {
  for (const svc of started) if (svc.child.exitCode === null && svc.child.signalCode === null) svc.child.kill('SIGKILL');
  cleanupTemp();
});

const BLOCKED = '11111111-2222-4333-8444-000000000001';
const HEALTHY = '11111111-2222-4333-8444-000000000002';
const SHUTDOWN_TIMEOUT_MS = 6000;

function setup() {
  const base = tempDir();
  const root = join(base, 'data');
  mkdirSync(root, { recursive: true });
  const config = writeServiceConfig(base, otlpHttpOnly(root, { shutdownTimeout: `${SHUTDOWN_TIMEOUT_MS / 1000}s`, logLevel: 'info' }));
  return { root, config };
}

const JOURNAL = (root: string) => join(root, '_journal', 'claude_code_otlp');
const landedThrough = (root: string) => Number(parseKv(readFileSync(join(JOURNAL(root), 'landed.state'), 'utf8')).get('landed_through') ?? 0);
/** Where the journal's entries end: its one segment's size. */
const journalEnd = (root: string) => statSync(join(JOURNAL(root), segmentName(0))).size;

describe('a record that can never land', () => {
  test('is quarantined, the next session lands, health says degraded, verify lists it, the metric counts it, shutdown keeps its timeout', async () => {
    const { root, config } = setup();
    // The session's directory path is taken by a file: landing it fails with ENOTDIR, every time.
    writeFileSync(join(root, BLOCKED), 'not a directory\n');
    const svc = startService(['--config', config]);
    started.push(svc);
    const a = await svc.addresses();
    const http = a['receivers/claude_code_otlp.http']!;
    const healthUrl = `http://${a['extensions/health_check.endpoint']}/`;

    const first = await httpPost(http, '/v1/logs', ccLogsRequest(BLOCKED, 0, Date.UTC(2026, 10, 30, 5, 14, 12), 'blocked'));
    expect(first.status).toBe(200);
    // Within a few rounds (each backs off at most 1 s) the records are parked.
    expect(await eventually(() => existsSync(join(root, '_quarantine')) && readdirSync(join(root, '_quarantine')).length > 0, 10_000, 50)).toBe(true);

    const second = await httpPost(http, '/v1/logs', ccLogsRequest(HEALTHY, 0, Date.UTC(2026, 10, 30, 5, 15, 12), 'healthy'));
    expect(second.status).toBe(200);
    expect(await eventually(() => recordsOf(landedFiles(root, HEALTHY)).length === 5, 10_000, 50)).toBe(true);
    // landed.state moved past both requests: the journal is no longer held by the blocked one.
    expect(await eventually(() => landedThrough(root) === journalEnd(root), 5000, 50)).toBe(true);
    expect(svc.logs.filter((l) => l.level === 'error' && /can never land/.test(l.msg))).toHaveLength(1);

    const q = readdirSync(join(root, '_quarantine'));
    expect(q).toHaveLength(1);
    const lines = readFileSync(join(root, '_quarantine', q[0]!), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ t: 'quarantine', reason: 'ENOTDIR', session: BLOCKED, records: 5, receiver: 'claude_code_otlp' });
    expect(lines.filter((l) => l.t === undefined && typeof l.sha === 'string')).toHaveLength(5);

    // Health: 200 but degraded, naming the quarantine (a pass must have run for the rest to be ok).
    const health = await pollHttp(healthUrl, (s) => s === 200);
    expect(health.status).toBe(200);
    const hb = JSON.parse(health.body) as { status: string; reasons: string[] };
    expect(hb.status).toBe('degraded');
    expect(hb.reasons.join('\n')).toMatch(/quarantine/);

    // The metric counts the parked records by reason once a pass carried them over.
    const counted = /^aszcol_receiver_quarantined_records_total\{receiver="claude_code_otlp",reason="ENOTDIR"\} 5$/m;
    let metrics = '';
    for (let i = 0; i < 75 && !counted.test(metrics); i++) {
      if (i) await new Promise((r) => setTimeout(r, 200));
      metrics = await (await fetch(`http://${a.telemetry}/metrics`)).text();
    }
    expect(metrics).toMatch(counted);

    // No pass waits 10 s for it any more.
    const passes = svc.logs.filter((l) => l.msg === 'pass finished' && typeof l.duration_ms === 'number');
    for (const p of passes.slice(-2)) expect(p.duration_ms as number).toBeLessThan(5000);

    const t0 = Date.now();
    svc.child.kill('SIGTERM');
    const { code, at } = await svc.exited;
    expect(code).toBe(0);
    expect(at - t0).toBeLessThan(SHUTDOWN_TIMEOUT_MS);

    const verify = await runCli(['verify', '--config', config]);
    expect(verify.code).not.toBe(0);
    expect(verify.stdout).toMatch(/5 record\(s\) in 1 batch\(es\) are quarantined in .*_quarantine, by reason: ENOTDIR 5/);
    expect(verify.stderr).toContain(BLOCKED);
    const json = await runCli(['verify', '--config', config, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ quarantine: { files: 1, records: 5, reasons: { ENOTDIR: 5 } } });
  }, 60_000);
});

/** A tmpfs mounted read-only at `dir`, or false when mounting is refused (not root). */
function readOnlyMount(dir: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,ro', 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Decided before the tests are named: whether this process may mount a filesystem. */
const canMount = (() => {
  const probe = tempDir('aszcol-mount-probe-');
  if (!readOnlyMount(probe)) return false;
  execFileSync('umount', [probe], { stdio: 'ignore' });
  return true;
})();

describe('landing that fails for a reason that may pass', () => {
  (canMount ? test : test.skip)(
    `health says unavailable (503) while it fails, nothing is quarantined, and ok once the disk takes writes again (${canMount ? 'a read-only tmpfs under the session' : 'skipped: mounting a tmpfs was refused, not root'})`,
    async () => {
      const { root, config } = setup();
      const dir = join(root, HEALTHY);
      mkdirSync(dir);
      expect(readOnlyMount(dir)).toBe(true);
      const svc = startService(['--config', config]);
      try {
        const a = await svc.addresses();
        const healthUrl = `http://${a['extensions/health_check.endpoint']}/`;
        expect(
          (await httpPost(a['receivers/claude_code_otlp.http']!, '/v1/logs', ccLogsRequest(HEALTHY), { 'content-type': 'application/x-protobuf' })).status,
        ).toBe(200);
        const down = await pollHttp(healthUrl, (s) => s === 503);
        expect(down.status).toBe(503);
        const body = JSON.parse(down.body) as { status: string; reasons: string[] };
        expect(body.status).toBe('unavailable');
        expect(body.reasons.join('\n')).toMatch(new RegExp(`landing is failing.*${HEALTHY}`));
        expect(existsSync(join(root, '_quarantine'))).toBe(false);
        execFileSync('mount', ['-o', 'remount,rw', dir], { stdio: 'ignore' });
        expect(await eventually(() => recordsOf(landedFiles(root, HEALTHY)).length === 5, 10_000, 50)).toBe(true);
        const up = await pollHttp(healthUrl, (s) => s === 200);
        expect(JSON.parse(up.body)).toMatchObject({ status: 'ok', reasons: [] });
      } finally {
        svc.child.kill('SIGTERM');
        await svc.exited;
        execFileSync('umount', [dir], { stdio: 'ignore' });
      }
    },
    60_000,
  );
});
