/**
 * What a person sees the first time the service runs: a banner when it is attached to a terminal
 * (and only then), and a status and empty page that say what the running service already does,
 * rather than telling them to run the commands it runs at every pass.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BIN } from '../helpers/cli.js';
import { pollHttp, startService } from '../helpers/service.js';
import { ANY_LOOPBACK_PORT, writeServiceConfig } from '../helpers/service-config.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { ccMetricsRequest, httpPost } from '../helpers/otlp.js';

afterAll(cleanupTemp);

function firstRunConfig(): { config: string; root: string; src: string } {
  const base = tempDir('aszcol-first-run-');
  const root = join(base, 'data');
  const src = join(base, 'projects');
  mkdirSync(src, { recursive: true });
  const config = writeServiceConfig(base, {
    root,
    receivers: {
      claude_code_local: { source_root: src, interval: '1s' },
      claude_code_otlp: { protocols: { grpc: { endpoint: ANY_LOOPBACK_PORT }, http: { endpoint: ANY_LOOPBACK_PORT } } },
    },
    processors: { assembler: null },
    extensions: { view: { endpoint: ANY_LOOPBACK_PORT } },
    pipelines: { sessions: { receivers: ['claude_code_local', 'claude_code_otlp'], processors: ['assembler'] } },
  });
  return { config, root, src };
}

/** Runs the service under a pseudo-terminal (util-linux `script`), as `npm start` in a terminal would, until `until` appears. */
function underTerminal(args: string[], until: RegExp): Promise<string> {
  return new Promise((res, rej) => {
    const cmd = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    // The shell names its pid before it becomes the service, so the test can stop the service itself.
    const child = spawn('script', ['-qfec', `echo "service-pid $$"; exec ${cmd} 2>/dev/null`, '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`no ${until} within 30 s; saw: ${out}`));
    }, 30_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (until.test(out)) {
        clearTimeout(timer);
        // SIGINT, as Ctrl-C would send: the service drains and exits.
        process.kill(Number(/service-pid (\d+)/.exec(out)![1]), 'SIGINT');
        child.once('close', () => res(out.replace(/\r/g, '')));
      }
    });
    child.on('error', rej);
  });
}

describe('the service, run for the first time', () => {
  test('in a terminal it says where the page is, where data lands, what it receives, and how to connect Claude Code', async () => {
    const { config, root, src } = firstRunConfig();
    const out = await underTerminal(['--config', config], /Logs follow/);
    expect(out).toContain('aszcol is running');
    expect(out).toMatch(/page {8}http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toContain(`data        ${root}`);
    expect(out).toContain(`receiving   Claude Code transcripts, every 1s: ${src}`);
    expect(out).toMatch(
      /receiving {3}Claude Code's telemetry over OTLP\/gRPC \(its metrics are answered, not kept: no metrics pipeline\): http:\/\/127\.0\.0\.1:\d+/,
    );
    expect(out).toContain('exporting   nothing');
    expect(out).toContain(`npx aszcol setup claude-code --config ${config}`);
  });

  test('through a pipe it prints no banner (log collectors get JSON lines only); /api/status carries the same facts and a hint that fits', async () => {
    const { config, root } = firstRunConfig();
    const svc = startService(['--config', config]);
    try {
      const addrs = await svc.addresses();
      const page = addrs['extensions/view.view']!;
      const status = JSON.parse((await pollHttp(`http://${page}/api/status`, (s) => s === 200)).body) as Record<string, any>;
      expect(status.mode).toBe('service');
      expect(status.service).toMatchObject({
        storageRoot: root,
        page: `http://${page}`,
        connect: `npx aszcol setup claude-code --config ${config}`,
        exporting: [],
      });
      // The OTLP receiver once per port it listens on.
      expect(status.service.receiving.map((r: { id: string }) => r.id)).toEqual(['claude_code_local', 'claude_code_otlp', 'claude_code_otlp']);
      expect(status.hint).toContain('The service lands');
      expect(status.hint).not.toContain('collect --once');
      const list = (await (await fetch(`http://${page}/api/conversations`)).json()) as Record<string, unknown>;
      expect(list.next).toBe(`npx aszcol setup claude-code --config ${config}`);

      // No metrics pipeline: Claude Code's metrics are answered (it must not see errors), counted, and not spooled.
      const rx = addrs['receivers/claude_code_otlp.http']!;
      expect((await httpPost(rx, '/v1/metrics', ccMetricsRequest('first-run-1', { input: 3, output: 5, cacheRead: 7, cacheCreation: 11 }))).status).toBe(200);
      // The receiver's counters reach the service's metrics at the next pass (interval 1 s).
      const unkept = async () =>
        Number(
          /^aszcol_receiver_unkept_metric_points_total\{receiver="claude_code_otlp"\} (\d+)$/m.exec(
            (await pollHttp(`http://${addrs.telemetry}/metrics`, (s) => s === 200)).body,
          )?.[1] ?? 0,
        );
      for (const until = Date.now() + 20_000; (await unkept()) === 0 && Date.now() < until;) await new Promise((r) => setTimeout(r, 200));
      expect(await unkept()).toBeGreaterThan(0);
      const spooled = existsSync(join(root, '_metrics')) ? readdirSync(join(root, '_metrics')).filter((n) => n.endsWith('.pb')) : [];
      expect(spooled).toEqual([]);
    } finally {
      svc.child.kill('SIGTERM');
      expect((await svc.exited).code).toBe(0);
    }
    expect(svc.stdout()).toBe('');
  });
});
