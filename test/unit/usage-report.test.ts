/**
 * The usage report's pure parts against figures worked out by hand from the provider's price list
 * and ccusage's documented block rule: prices (with the long-context tier and an override file),
 * days in a time zone, weeks, 5-hour blocks, filters, and a cost nobody knows.
 */
import { describe, expect, test } from '@jest/globals';
import type { UsageCall } from '../../src/assemble/usage/calls.js';
import { reportOptions } from '../../src/assemble/usage/answer.js';
import { BUILT_IN_PRICES, costOf, normaliseModel, overridePrices, priceOf } from '../../src/assemble/usage/pricing.js';
import { buildReport } from '../../src/assemble/usage/report.js';

const T0 = Date.parse('2026-03-02T09:40:00Z'); // a Monday
const H = 3_600_000;

function call(id: string, at: number, over: Partial<UsageCall> = {}): UsageCall {
  return {
    conversation: over.session ?? 's1',
    session: 's1',
    call: id,
    stream: 'main',
    project: 'proj-a',
    time: at,
    model: 'claude-sonnet-4-5-20250929',
    tokens: { input: 1000, output: 100, cache_read: 0, cache_write: 0 },
    ...over,
  };
}

const opts = (report: string, extra: Record<string, string | boolean> = {}) => reportOptions({ report, timezone: 'UTC', ...extra }, T0 + 100 * H);

describe('prices', () => {
  test('a model id finds its family through dates, provider prefixes and context markers; an unknown one finds none', () => {
    expect(normaliseModel('claude-sonnet-4-5-20250929')).toBe('claude-sonnet-4-5');
    expect(normaliseModel('us.anthropic.claude-opus-4-1-20250805-v1:0')).toBe('claude-opus-4-1');
    expect(normaliseModel('claude-sonnet-4-5[1m]')).toBe('claude-sonnet-4-5');
    expect(priceOf(BUILT_IN_PRICES, 'claude-opus-4-1-20250805')).toBe(BUILT_IN_PRICES.models['claude-opus-4-1']);
    // claude-opus-4 must not swallow claude-opus-4-5: the longest family wins.
    expect(priceOf(BUILT_IN_PRICES, 'claude-opus-4-5-20251101')).toBe(BUILT_IN_PRICES.models['claude-opus-4-5']);
    expect(priceOf(BUILT_IN_PRICES, 'claude-opus-5-5')).toBeUndefined();
  });

  test('Sonnet 4.5 at $3/$15 per million, cache read $0.30, write $3.75; over 200k prompt tokens the whole request at $6/$22.50', () => {
    const p = priceOf(BUILT_IN_PRICES, 'claude-sonnet-4-5')!;
    expect(costOf(p, { input: 1_000_000, output: 0, cache_read: 0, cache_write: 0 })).toBeCloseTo(6, 9); // 1M prompt tokens: long tier
    expect(costOf(p, { input: 100_000, output: 10_000, cache_read: 50_000, cache_write: 20_000 })).toBeCloseTo(0.3 + 0.15 + 0.015 + 0.075, 9);
    expect(costOf(p, { input: 150_000, output: 10_000, cache_read: 50_000, cache_write: 20_000 })).toBeCloseTo(0.9 + 0.225 + 0.03 + 0.15, 9);
  });

  test('an override file replaces a family and adds one; a bad price is refused at its path', () => {
    const t = overridePrices(
      BUILT_IN_PRICES,
      JSON.stringify({ as_of: '2026-12-01', models: { 'claude-opus-5-5': { input: 2, output: 10, cache_read: 0.2, cache_write_5m: 2.5 } } }),
      'p.json',
    );
    expect(t).toMatchObject({ as_of: '2026-12-01', source: 'p.json' });
    expect(priceOf(t, 'claude-opus-5-5')).toEqual({ input: 2, output: 10, cache_read: 0.2, cache_write_5m: 2.5, cache_write_1h: 2.5 });
    expect(priceOf(t, 'claude-haiku-4-5')).toBe(BUILT_IN_PRICES.models['claude-haiku-4-5']);
    expect(() => overridePrices(BUILT_IN_PRICES, '{"models":{"m":{"input":-1}}}', 'p.json')).toThrow('p.json: models.m.input: must be a number ≥ 0');
    expect(() => overridePrices(BUILT_IN_PRICES, '{"models":{"m":{"input":1,"output":1,"cache_read":1,"cache_write_5m":1,"cahce":1}}}', 'p.json')).toThrow(
      'models.m.cahce: unknown key',
    );
    expect(() => overridePrices(BUILT_IN_PRICES, 'nope', 'p.json')).toThrow('p.json: not valid JSON');
  });
});

describe('reports', () => {
  test('daily in a time zone: 23:30 UTC is the next day in Berlin', () => {
    const late = Date.parse('2026-03-02T23:30:00Z');
    const calls = [call('a', T0), call('b', late)];
    expect(buildReport(calls, BUILT_IN_PRICES, opts('daily')).rows.map((r) => [r.key, r.calls])).toEqual([['2026-03-02', 2]]);
    expect(buildReport(calls, BUILT_IN_PRICES, opts('daily', { timezone: 'Europe/Berlin' })).rows.map((r) => [r.key, r.calls])).toEqual([
      ['2026-03-02', 1],
      ['2026-03-03', 1],
    ]);
  });

  test('weekly starts on Sunday unless told Monday; monthly by calendar month', () => {
    const calls = [call('a', T0)]; // Monday 2026-03-02
    expect(buildReport(calls, BUILT_IN_PRICES, opts('weekly')).rows[0]!.key).toBe('2026-03-01');
    expect(buildReport(calls, BUILT_IN_PRICES, opts('weekly', { startOfWeek: 'monday' })).rows[0]!.key).toBe('2026-03-02');
    expect(buildReport(calls, BUILT_IN_PRICES, opts('monthly')).rows[0]!.key).toBe('2026-03');
  });

  test('blocks: on the hour of the first call, 5 hours long; a call past the end or after a 5-hour gap starts the next', () => {
    const calls = [call('a', T0), call('b', T0 + 4 * H), call('c', T0 + 5.5 * H), call('d', T0 + 11 * H)];
    const r = buildReport(calls, BUILT_IN_PRICES, opts('blocks'));
    expect(r.rows.map((x) => [x.key, x.calls])).toEqual([
      ['2026-03-02T09:00:00.000Z', 2],
      ['2026-03-02T15:00:00.000Z', 1],
      ['2026-03-02T20:00:00.000Z', 1],
    ]);
    expect(r.rows[0]!.block).toEqual({ start: '2026-03-02T09:00:00.000Z', end: '2026-03-02T14:00:00.000Z', active: false });
    const now = reportOptions({ report: 'blocks', timezone: 'UTC' }, T0 + 12 * H);
    expect(buildReport(calls, BUILT_IN_PRICES, now).rows[2]!.block!.active).toBe(true);
  });

  test('filters: days inclusive, project and model by part of the name, one session by id', () => {
    const calls = [
      call('a', T0),
      call('b', T0 + 24 * H, { project: 'proj-b', model: 'claude-haiku-4-5' }),
      call('c', T0 + 48 * H, { session: 's2', conversation: 's2' }),
    ];
    const ids = (o: ReturnType<typeof opts>) => buildReport(calls, BUILT_IN_PRICES, o).totals.calls;
    expect(ids(opts('daily', { since: '20260303', until: '2026-03-03' }))).toBe(1);
    expect(ids(opts('daily', { project: 'proj-b' }))).toBe(1);
    expect(ids(opts('daily', { model: 'HAIKU' }))).toBe(1);
    expect(ids(opts('session', { id: 's2' }))).toBe(1);
    expect(() => opts('daily', { id: 's2' })).toThrow('--id names one session');
    expect(() => opts('daily', { since: '2026-02-30' })).toThrow('--since: "2026-02-30" is not a day of the calendar');
    expect(() => opts('daily', { timezone: 'Mars/Olympus' })).toThrow('--timezone: "Mars/Olympus"');
  });

  test("cost: the runtime's figure wins, the table fills in, an unknown model is unknown by name and left out of the sum", () => {
    const calls = [
      call('a', T0, { runtime_cost_usd: 0.5 }),
      call('b', T0), // 1000 in + 100 out at $3/$15: $0.0045
      call('c', T0, { model: 'claude-opus-5-5' }),
    ];
    const t = buildReport(calls, BUILT_IN_PRICES, opts('daily')).totals;
    expect(t).toMatchObject({ cost_runtime_usd: 0.5, cost_computed_usd: 0.0045, cost_usd: 0.5045, cost_unknown_calls: 1, unknown_models: ['claude-opus-5-5'] });
  });

  test('subagents: inside their session row and listed on their own, with breakdown by model', () => {
    const calls = [
      call('a', T0),
      call('b', T0 + H, { stream: 'agent-1', agent: 'Look around' }),
      call('c', T0 + H, { stream: 'agent-1', model: 'claude-haiku-4-5' }),
    ];
    const row = buildReport(calls, BUILT_IN_PRICES, opts('session', { breakdown: true })).rows[0]!;
    expect(row.calls).toBe(3);
    expect(row.subagents!.calls).toBe(2);
    expect(row.agents).toEqual([expect.objectContaining({ stream: 'agent-1', agent: 'Look around', calls: 2 })]);
    expect(row.breakdown!.map((b) => [b.model, b.calls])).toEqual([
      ['claude-sonnet-4-5-20250929', 2],
      ['claude-haiku-4-5', 1],
    ]);
  });
});
