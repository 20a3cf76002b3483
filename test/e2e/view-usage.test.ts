/**
 * Usage on the page, at `GET /api/usage` and in the `aszcol_usage_*` gauges, over two projects the
 * real Claude Code wrote: one exporting its own telemetry to the OTLP receiver (so its calls carry
 * the runtime's `cost_usd`), one not (its model is in no price table: cost unknown, by name).
 * Ground truth: the mock API's request logs and the runtime's own `claude_code.cost.usage` points.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { Registry } from 'prom-client';
import type { UsageAnswer } from '../../src/assemble/usage/answer.js';
import { ViewExtension } from '../../src/extensions/view/extension.js';
import { otlpTypes } from '../../src/otlp/proto.js';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import { labRun, readRequestLog } from '../helpers/lab.js';
import { collectAndParse, writeConfig } from '../helpers/cli.js';
import { launchChromium } from '../helpers/browser.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { truthOf } from '../helpers/usage-cases.js';

afterAll(cleanupTemp);

/** The runtime's own `claude_code.cost.usage` points for one session, summed over what the receiver spooled. */
function runtimeCost(root: string, session: string): number {
  const T = otlpTypes().ExportMetricsServiceRequest;
  type Point = { asDouble?: number; attributes?: { key: string; value: { stringValue?: string } }[] };
  type Doc = { resourceMetrics?: { scopeMetrics?: { metrics?: { name: string; sum?: { dataPoints?: Point[] } }[] }[] }[] };
  let sum = 0;
  for (const name of readdirSync(join(root, '_metrics')).filter((n) => n.endsWith('-otlp.pb'))) {
    const o = T.toObject(T.decode(readFileSync(join(root, '_metrics', name))), { longs: Number }) as Doc;
    for (const rm of o.resourceMetrics ?? [])
      for (const sm of rm.scopeMetrics ?? [])
        for (const m of sm.metrics ?? [])
          if (m.name === 'claude_code.cost.usage')
            for (const p of m.sum?.dataPoints ?? [])
              if (p.attributes?.find((a) => a.key === 'session.id')?.value.stringValue === session) sum += p.asDouble ?? 0;
  }
  return sum;
}

describe('usage on the page, the API and the metrics', () => {
  const base = tempDir('aszcol-e2e-usage-view-');
  const home = join(base, 'home');
  const root = join(base, 'data');
  const exportedLog = join(base, 'exported.jsonl');
  const plainLog = join(base, 'plain.jsonl');
  let exported = '';
  let ext: ViewExtension;
  let url = '';
  const registry = new Registry();

  beforeAll(async () => {
    const config = writeConfig(base, root, join(home, 'projects'));
    const r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { http: { endpoint: '127.0.0.1:0' } } }), { storageRoot: root });
    await r.start();
    try {
      exported = (
        await labRun({
          configDir: home,
          cwd: join(base, 'exported'),
          prompt: 'PARALLEL please',
          tools: 'Bash',
          log: exportedLog,
          otlp: `http://${r.addresses().http}`,
        })
      ).session_id;
      expect(await r.landed(15_000)).toBe(true);
    } finally {
      await r.shutdown();
    }
    await labRun({ configDir: home, cwd: join(base, 'plain'), prompt: 'DELEGATE now', tools: 'Bash,Agent', log: plainLog });
    await collectAndParse(config);
    ext = new ViewExtension({ endpoint: '127.0.0.1:0', allowedHosts: [] }, { storageRoot: root, registry });
    await ext.start();
    url = `http://${ext.address()}`;
  }, 240_000);

  afterAll(async () => {
    await ext?.shutdown();
  });

  const api = async (query: string) => {
    const res = await fetch(`${url}/api/usage?${query}`);
    return { status: res.status, body: (await res.json()) as UsageAnswer & { error?: string } };
  };

  test("GET /api/usage: the logs' tokens; the exported session's cost is the runtime's own, the other's unknown by model name", async () => {
    const { status, body } = await api('report=project&timezone=UTC');
    expect(status).toBe(200);
    const all = truthOf([...readRequestLog(exportedLog), ...readRequestLog(plainLog)]);
    expect(body.totals).toMatchObject({ calls: all.calls, input_tokens: all.input, output_tokens: all.output, cache_read_tokens: all.cache_read });
    expect(body.rows).toHaveLength(2);
    const ex = body.rows.find((r) => r.key.endsWith('-exported'))!;
    const plain = body.rows.find((r) => r.key.endsWith('-plain'))!;
    expect(ex.cost_runtime_usd).toBeCloseTo(runtimeCost(root, exported), 6);
    expect(ex.cost_runtime_usd).toBeGreaterThan(0);
    expect(ex).toMatchObject({ cost_unknown_calls: 0, cost_computed_usd: 0 });
    expect(plain).toMatchObject({ cost_usd: 0, cost_unknown_calls: plain.calls, unknown_models: plain.models });
    expect(plain.subagents!.calls).toBeGreaterThan(0);
  });

  test('a parameter that does not read is a 400 that names it', async () => {
    expect(await api('report=hourly')).toMatchObject({ status: 400, body: { error: expect.stringContaining('report "hourly"') } });
    expect(await api('since=2026-13-01')).toMatchObject({ status: 400, body: { error: expect.stringContaining('--since') } });
    expect(await api('colour=blue')).toMatchObject({ status: 400, body: { error: expect.stringContaining('unknown parameter "colour"') } });
  });

  test('aszcol_usage_* gauges carry the same tokens and the runtime cost', async () => {
    const text = await registry.metrics();
    const sum = (re: RegExp) => [...text.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
    const all = truthOf([...readRequestLog(exportedLog), ...readRequestLog(plainLog)]);
    expect(sum(/^aszcol_usage_tokens\{[^}]*type="output"[^}]*\} (\S+)$/gm)).toBe(all.output);
    expect(sum(/^aszcol_usage_calls\{[^}]*\} (\S+)$/gm)).toBe(all.calls);
    expect(sum(/^aszcol_usage_cost_usd\{[^}]*source="runtime"[^}]*\} (\S+)$/gm)).toBeCloseTo(runtimeCost(root, exported), 6);
    expect(sum(/^aszcol_usage_cost_unknown_calls\{[^}]*\} (\S+)$/gm)).toBe(readRequestLog(plainLog).length);
  });

  test('the Usage page, reached from the list: a bar per day and per project, the totals, and the unknown cost said by name', async () => {
    const ctx: BrowserContext = await launchChromium({ viewport: { width: 1280, height: 720 } });
    const errors: string[] = [];
    try {
      const page = await ctx.newPage();
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      await page.goto(`${url}/`);
      await page.getByTestId('usage-link').click();
      await page.getByTestId('usage').waitFor();
      expect(new URL(page.url()).pathname).toBe('/usage');
      const days = (await api(`report=daily&timezone=${encodeURIComponent(await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone))}`)).body;
      expect(await page.locator('[data-testid=usage-daily] svg .usage-bar').count()).toBe(days.rows.length);
      expect(await page.locator('[data-testid=usage-project] svg .usage-bar').count()).toBe(2);
      const all = truthOf([...readRequestLog(exportedLog), ...readRequestLog(plainLog)]);
      const total = all.input + all.output + all.cache_read + all.cache_write;
      const totalRow = page.locator('[data-testid=usage-project] tr.usage-total');
      expect(await totalRow.locator('td').nth(6).textContent()).toBe(total.toLocaleString('en-US'));
      expect(await totalRow.locator('[data-col=cost]').textContent()).toMatch(/^\$\d+\.\d+ \+ unknown \(claude-/);
      expect(await page.getByTestId('usage-cost-note').textContent()).toContain('as Claude Code reported it');
      expect(errors).toEqual([]);
    } finally {
      await ctx.close();
    }
  });
});
