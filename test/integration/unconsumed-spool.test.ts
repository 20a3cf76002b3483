/**
 * A metrics pipeline that keeps received metrics while no exporter sends or reads them (its one
 * exporter has `metrics: false`): the spool would grow until the receiver refuses metrics. The
 * receiver bounds it by `unconsumed_spool`, says so once in the log, and counts what it removed
 * in its self-metrics and in `/api/status`; the newest requests are the ones kept.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pollHttp, startService } from '../helpers/service.js';
import { ANY_LOOPBACK_PORT, writeServiceConfig } from '../helpers/service-config.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { ccMetricsRequest, httpPost } from '../helpers/otlp.js';
import { MetricsSpool } from '../../src/storage/metrics-spool.js';

afterAll(cleanupTemp);

const MAX_BYTES = 2048;
const REQUESTS = 12;

function config(): { config: string; root: string } {
  const base = tempDir('aszcol-unconsumed-');
  const root = join(base, 'data');
  const src = join(base, 'projects');
  mkdirSync(src, { recursive: true });
  const path = writeServiceConfig(base, {
    root,
    receivers: {
      claude_code_local: { source_root: src, interval: '1s' },
      claude_code_otlp: { protocols: { http: { endpoint: ANY_LOOPBACK_PORT } }, unconsumed_spool: { max_age: 0, max_bytes: MAX_BYTES } },
    },
    exporters: { otlp: { endpoint: '127.0.0.1:1', metrics: false } },
    extensions: { view: { endpoint: ANY_LOOPBACK_PORT } },
    pipelines: { sessions: { receivers: ['claude_code_local'] }, metrics: { receivers: ['claude_code_otlp'], exporters: ['otlp'] } },
  });
  return { config: path, root };
}

const spoolFiles = (root: string) => {
  try {
    return readdirSync(join(root, '_metrics'))
      .filter((n) => MetricsSpool.receivedSeq(n) !== undefined)
      .sort();
  } catch {
    return [];
  }
};

describe('a metrics spool nothing consumes', () => {
  test('is bounded by unconsumed_spool: the oldest go, the newest stay, and what went is counted in the metrics and the status', async () => {
    const { config: cfg, root } = config();
    const svc = startService(['--config', cfg]);
    try {
      const addrs = await svc.addresses();
      const said = await svc.waitFor((r) => r.msg.includes('no exporter sends or reads them'), 20_000);
      expect(said.msg).toContain('bounded by unconsumed_spool');
      expect(said.max_bytes).toBe(MAX_BYTES);

      const rx = addrs['receivers/claude_code_otlp.http']!;
      for (let i = 0; i < REQUESTS; i++) {
        const r = await httpPost(rx, '/v1/metrics', ccMetricsRequest(`unconsumed-${i}`, { input: 3, output: 5, cacheRead: 7, cacheCreation: 11 }));
        expect(r.status).toBe(200);
      }
      const removedMetric = async () =>
        Number(
          /^aszcol_receiver_unconsumed_spool_removed_files_total\{receiver="claude_code_otlp"\} (\d+)$/m.exec(
            (await pollHttp(`http://${addrs.telemetry}/metrics`, (s) => s === 200)).body,
          )?.[1] ?? 0,
        );
      const keptBytesNow = () => spoolFiles(root).reduce((a, n) => a + statSync(join(root, '_metrics', n)).size, 0);
      // Every request is either still in the spool or counted as removed, once a pass has bounded it.
      // Twelve files fit no 2 KiB bound, so a pass that has run removed some: wait for that, not for the posts alone;
      // and a pass may have run between posts, so wait for one that ran after the last (the spool within its bound).
      const settled = async () => {
        const removed = await removedMetric();
        return removed > 0 && spoolFiles(root).length + removed === REQUESTS && keptBytesNow() <= MAX_BYTES;
      };
      for (const until = Date.now() + 90_000; !(await settled()) && Date.now() < until;) await new Promise((r) => setTimeout(r, 200));
      expect(await settled()).toBe(true);

      const kept = spoolFiles(root);
      const removed = await removedMetric();
      expect(removed).toBeGreaterThan(0);
      const keptBytes = kept.reduce((a, n) => a + statSync(join(root, '_metrics', n)).size, 0);
      expect(keptBytes).toBeLessThanOrEqual(MAX_BYTES);
      // The newest requests are kept: their numbers are the last ones the receiver gave.
      expect(kept.map((n) => MetricsSpool.receivedSeq(n))).toEqual(Array.from({ length: kept.length }, (_, i) => REQUESTS - kept.length + i + 1));

      const status = JSON.parse((await pollHttp(`http://${addrs['extensions/view.view']}/api/status`, (s) => s === 200)).body) as {
        service: { metricsSpool: Record<string, unknown>[] };
      };
      expect(status.service.metricsSpool).toEqual([
        expect.objectContaining({
          receiver: 'claude_code_otlp',
          kept: true,
          consumers: [],
          retention: { max_age_ms: 0, max_bytes: MAX_BYTES },
          dropped_files: removed,
        }),
      ]);
      expect(svc.logs.filter((r) => r.msg.includes('no exporter sends or reads them'))).toHaveLength(1);
    } finally {
      svc.child.kill('SIGTERM');
      await svc.exited;
    }
  });
});
