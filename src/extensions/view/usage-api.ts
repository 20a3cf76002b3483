/**
 * `GET /api/usage`: the document `aszcol usage --json` prints, with the same parameters as query
 * keys (`report`, `since`, `until`, `project`, `model`, `id`, `breakdown`, `timezone`,
 * `start_of_week`), and the `aszcol_usage_*` gauges the service's Prometheus endpoint shows. The
 * counted calls are read once per change of the root's heads, not per request or scrape.
 */
import { Gauge, type Registry } from 'prom-client';
import { answerFrom, reportOptions, type UsageAnswer, type UsageParams } from '../../assemble/usage/answer.js';
import { callCost } from '../../assemble/usage/figures.js';
import { BUILT_IN_PRICES, type PriceTable } from '../../assemble/usage/pricing.js';
import { loadUsageCalls, type LoadedCalls } from '../../assemble/usage/load.js';

/** A parameter that does not read: the answer is 400 with the reason. */
export class UsageParamError extends Error {
  readonly status = 400;
}

const QUERY_KEYS: Record<string, keyof UsageParams> = {
  report: 'report',
  since: 'since',
  until: 'until',
  project: 'project',
  model: 'model',
  id: 'id',
  timezone: 'timezone',
  start_of_week: 'startOfWeek',
};

export function paramsFromQuery(query: Record<string, unknown>): UsageParams {
  const p: UsageParams = {};
  for (const [k, v] of Object.entries(query)) {
    if (k === 'breakdown') {
      if (v !== '' && v !== '1' && v !== 'true' && v !== '0' && v !== 'false')
        throw new UsageParamError(`breakdown "${String(v)}": expected 1, true, 0 or false`);
      p.breakdown = v === '' || v === '1' || v === 'true';
      continue;
    }
    const key = QUERY_KEYS[k];
    if (!key) throw new UsageParamError(`unknown parameter "${k}" (expected ${[...Object.keys(QUERY_KEYS), 'breakdown'].join(', ')})`);
    if (typeof v !== 'string') throw new UsageParamError(`${k}: give it once, as text`);
    (p as Record<string, unknown>)[key] = v;
  }
  return p;
}

export class UsageSource {
  private loaded: { generation: number; calls: LoadedCalls } | undefined;

  constructor(
    private readonly root: string,
    /** The catalog's generation: it moves whenever a head round does. */
    private readonly generation: () => number,
    private readonly prices: PriceTable = BUILT_IN_PRICES,
  ) {}

  private calls(): LoadedCalls {
    const g = this.generation();
    if (this.loaded?.generation !== g) this.loaded = { generation: g, calls: loadUsageCalls(this.root) };
    return this.loaded.calls;
  }

  answer(query: Record<string, unknown>, now = Date.now()): UsageAnswer {
    let options;
    try {
      options = reportOptions(paramsFromQuery(query), now);
    } catch (err) {
      if (err instanceof UsageParamError) throw err;
      throw new UsageParamError((err as Error).message);
    }
    return answerFrom(this.calls(), this.prices, options);
  }

  /** Every counted call's tokens and cost as gauges, by model (and type or cost source), worked out when scraped. */
  registerMetrics(registry: Registry): void {
    const registers = [registry];
    if (registry.getSingleMetric('aszcol_usage_tokens')) return; // a second view in one service reads the same root
    // Registered first: its collect fills all five before the registry reads the others.
    const tokens: Gauge<'model' | 'type'> = new Gauge({
      name: 'aszcol_usage_tokens',
      help: 'Tokens of every counted provider call in the storage root, by model and type.',
      labelNames: ['model', 'type'],
      registers,
      collect: () => {
        for (const g of [tokens, calls, cost, unknown]) g.reset();
        const loaded = this.calls();
        for (const c of loaded.calls) {
          const model = c.model ?? '(none)';
          tokens.inc({ model, type: 'input' }, c.tokens.input);
          tokens.inc({ model, type: 'output' }, c.tokens.output);
          tokens.inc({ model, type: 'cache_read' }, c.tokens.cache_read);
          tokens.inc({ model, type: 'cache_creation' }, c.tokens.cache_write);
          calls.inc({ model });
          const k = callCost(c, this.prices);
          if (k.source === 'unknown') unknown.inc({ model });
          else cost.inc({ model, source: k.source }, k.usd!);
        }
        uncounted.set(Object.values(loaded.uncounted).reduce((a, b) => a + b, 0));
      },
    });
    const calls = new Gauge({
      name: 'aszcol_usage_calls',
      help: 'Provider calls counted in the storage root (each once, finished calls only), by model.',
      labelNames: ['model'],
      registers,
    });
    const cost = new Gauge({
      name: 'aszcol_usage_cost_usd',
      help: "Cost of the counted calls in USD, by model and source: runtime (Claude Code's own cost_usd) or computed (the price table).",
      labelNames: ['model', 'source'],
      registers,
    });
    const unknown = new Gauge({
      name: 'aszcol_usage_cost_unknown_calls',
      help: 'Counted calls whose cost is unknown: no runtime figure and no price for the model.',
      labelNames: ['model'],
      registers,
    });
    const uncounted = new Gauge({
      name: 'aszcol_usage_uncounted_calls',
      help: 'Calls not counted (never finished, record unreadable, written by the runtime itself).',
      registers,
    });
  }
}
