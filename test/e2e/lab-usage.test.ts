/**
 * `aszcol usage` held against the lab's request logs, case by case, on the transcripts where a
 * transcript-only report goes wrong (ccusage #389, #938, #976, #994, a resume, a fork,
 * subagents). The mock API wrote each log as it answered, so every figure compared here comes
 * from outside aszcol.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UsageAnswer } from '../../src/assemble/usage/answer.js';
import type { Figures } from '../../src/assemble/usage/figures.js';
import { runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { buildUsageLab, subagentMessageIds, truthOf, type UsageCase, type UsageTruth } from '../helpers/usage-cases.js';

afterAll(cleanupTemp);

const tokensOf = (f: Figures): UsageTruth => ({
  calls: f.calls,
  input: f.input_tokens,
  output: f.output_tokens,
  cache_read: f.cache_read_tokens,
  cache_write: f.cache_creation_tokens,
});

describe('aszcol usage on transcripts the real Claude Code wrote', () => {
  const base = tempDir('aszcol-e2e-usage-');
  const root = join(base, 'data');
  let config = '';
  let cases: UsageCase[] = [];
  let transcripts: Record<string, string> = {};
  let sessionReport: UsageAnswer;

  const usage = async (...args: string[]): Promise<UsageAnswer> => {
    const r = await runCli(['usage', ...args, '--json', '--timezone', 'UTC', '--config', config]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as UsageAnswer;
  };
  const caseOf = (issue: string) => cases.find((c) => c.issue === issue)!;

  beforeAll(async () => {
    const lab = await buildUsageLab(base);
    cases = lab.cases;
    transcripts = lab.transcripts;
    config = writeConfig(base, root, join(lab.home, 'projects'));
    // No collect or parse beforehand: the report's own pass lands and assembles everything.
    sessionReport = await usage('session');
  }, 300_000);

  test('every call the mock answered is counted once, with the usage it answered with: the whole root', () => {
    const all = cases.flatMap((c) => c.requests);
    expect(tokensOf(sessionReport.totals)).toEqual(truthOf(all));
    expect(sessionReport.uncounted).toEqual({});
  });

  test('one response written as several lines (#389): counted once', () => {
    const c = caseOf('#389');
    // The case is what it claims: one answered request carries two tool uses, so its lines are several.
    expect(c.requests.some((r) => r.tools.length >= 2)).toBe(true);
    const row = sessionReport.rows.find((r) => r.key === c.session)!;
    expect(tokensOf(row)).toEqual(truthOf(c.requests));
  });

  test('early lines carrying streaming snapshots of the usage (#938): the final usage, from the last line', () => {
    const c = caseOf('#938');
    expect(tokensOf(sessionReport.rows.find((r) => r.key === c.session)!)).toEqual(truthOf(c.requests));
  });

  test('a transcript without requestId (#976): the same totals as the log', () => {
    const c = caseOf('#976');
    expect(tokensOf(sessionReport.rows.find((r) => r.key === c.session)!)).toEqual(truthOf(c.requests));
  });

  test('session --id (#994): one session, its calls counted once', async () => {
    const c = caseOf('#389');
    const a = await usage('session', '--id', c.session);
    expect(a.rows.map((r) => r.key)).toEqual([c.session]);
    expect(tokensOf(a.totals)).toEqual(truthOf(c.requests));
  });

  test('a resumed session: both runs in one session row', () => {
    const c = caseOf('resume');
    expect(tokensOf(sessionReport.rows.find((r) => r.key === c.session)!)).toEqual(truthOf(c.requests));
  });

  test('a forked session: the copied history counted once, in the session it first ran in; the fork has only its own calls', () => {
    const c = caseOf('fork');
    const [origin, fork] = c.sessions as [string, string];
    const rows = sessionReport.rows.filter((r) => c.sessions.includes(r.key));
    const sum = { calls: 0, input: 0, output: 0, cache_read: 0, cache_write: 0 };
    for (const r of rows) for (const [k, v] of Object.entries(tokensOf(r))) sum[k as keyof UsageTruth] += v;
    expect(sum).toEqual(truthOf(c.requests));
    expect(sessionReport.copied_calls).toBeGreaterThan(0);
    // The origin's requests were all answered before the fork was resumed: the log's order says which are whose.
    const originCalls = sessionReport.rows.find((r) => r.key === origin)!.calls;
    expect(tokensOf(sessionReport.rows.find((r) => r.key === fork)!)).toEqual(truthOf(c.requests.slice(originCalls)));
  });

  test('subagents: inside their session, and shown as such, equal to the calls their own transcripts hold', () => {
    const c = caseOf('subagents');
    const row = sessionReport.rows.find((r) => r.key === c.session)!;
    expect(tokensOf(row)).toEqual(truthOf(c.requests));
    const inAgents = subagentMessageIds(transcripts[c.session]!);
    expect(inAgents.size).toBeGreaterThan(0);
    expect(tokensOf(row.subagents!)).toEqual(truthOf(c.requests.filter((r) => inAgents.has(r.message_id))));
    expect(row.agents!.length).toBeGreaterThan(0);
  });

  test('the lab model is in no price table: its cost is unknown by name, never a silent 0; a price file makes it computed', async () => {
    const t = sessionReport.totals;
    expect(t).toMatchObject({ cost_usd: 0, cost_unknown_calls: t.calls, cost_computed_usd: 0 });
    expect(t.unknown_models).toEqual(t.models);
    const prices = join(base, 'prices.json');
    const price = { input: 2, output: 10, cache_read: 0.2, cache_write_5m: 2.5, cache_write_1h: 4 };
    writeFileSync(prices, JSON.stringify({ as_of: '2026-12-01', models: Object.fromEntries(t.models.map((m) => [m, price])) }));
    const priced = await usage('daily', '--pricing', prices, '--no-collect');
    const truth = truthOf(cases.flatMap((c) => c.requests));
    const expected = (truth.input * 2 + truth.output * 10 + truth.cache_read * 0.2 + truth.cache_write * 2.5) / 1e6;
    expect(priced.totals.cost_unknown_calls).toBe(0);
    expect(priced.totals.cost_computed_usd).toBeCloseTo(expected, 6);
    expect(priced.pricing).toEqual({ as_of: '2026-12-01', source: prices });
  });

  test('daily, monthly, project and blocks sum to the same totals', async () => {
    const truth = truthOf(cases.flatMap((c) => c.requests));
    for (const kind of ['daily', 'weekly', 'monthly', 'project', 'blocks']) {
      const a = await usage(kind, '--no-collect');
      expect(tokensOf(a.totals)).toEqual(truth);
      const rowsSum = a.rows.reduce((n, r) => n + r.calls, 0);
      expect(rowsSum).toBe(truth.calls);
    }
    const projects = await usage('project', '--no-collect');
    expect(projects.rows).toHaveLength(cases.length);
  });
});
