/**
 * The sums one row of a usage report carries: tokens by kind, the cost split by where it came
 * from (the runtime's own figure, or the price table), and the calls whose cost nobody knows,
 * with their models' names. Pure.
 */
import type { UsageCall } from './calls.js';
import { costOf, priceOf, type PriceTable } from './pricing.js';

export interface Figures {
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_creation_tokens: number;
  total_tokens: number;
  /** The cost of every call whose cost is known: `cost_runtime_usd + cost_computed_usd`. */
  cost_usd: number;
  /** What the runtime itself reported per call (`api_request` events). */
  cost_runtime_usd: number;
  /** Computed from the price table, for calls the runtime gave no figure for. */
  cost_computed_usd: number;
  /** Calls whose model the price table does not know and the runtime gave no cost for: `cost_usd` leaves them out. */
  cost_unknown_calls: number;
  unknown_models: string[];
  models: string[];
}

export type CostSource = 'runtime' | 'computed' | 'unknown';

/** One call's cost and where it came from; the runtime's own figure wins over the table. */
export function callCost(c: UsageCall, prices: PriceTable): { usd?: number; source: CostSource } {
  if (c.runtime_cost_usd !== undefined) return { usd: c.runtime_cost_usd, source: 'runtime' };
  const price = c.model ? priceOf(prices, c.model) : undefined;
  return price ? { usd: costOf(price, c.tokens), source: 'computed' } : { source: 'unknown' };
}

/** Adds calls up; built once per row with `add`, then `done` sorts the name lists and rounds the costs. */
export class FigureSum {
  private readonly f: Figures = {
    calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    cache_read_tokens: 0,
    cache_creation_tokens: 0,
    total_tokens: 0,
    cost_usd: 0,
    cost_runtime_usd: 0,
    cost_computed_usd: 0,
    cost_unknown_calls: 0,
    unknown_models: [],
    models: [],
  };
  private readonly models = new Set<string>();
  private readonly unknown = new Set<string>();

  add(c: UsageCall, prices: PriceTable): void {
    const f = this.f;
    f.calls++;
    f.input_tokens += c.tokens.input;
    f.output_tokens += c.tokens.output;
    f.cache_read_tokens += c.tokens.cache_read;
    f.cache_creation_tokens += c.tokens.cache_write;
    f.total_tokens += c.tokens.input + c.tokens.output + c.tokens.cache_read + c.tokens.cache_write;
    if (c.model) this.models.add(c.model);
    const cost = callCost(c, prices);
    if (cost.source === 'runtime') f.cost_runtime_usd += cost.usd!;
    else if (cost.source === 'computed') f.cost_computed_usd += cost.usd!;
    else {
      f.cost_unknown_calls++;
      this.unknown.add(c.model ?? '(no model recorded)');
    }
  }

  done(): Figures {
    const round = (n: number) => Math.round(n * 1e6) / 1e6;
    return {
      ...this.f,
      cost_runtime_usd: round(this.f.cost_runtime_usd),
      cost_computed_usd: round(this.f.cost_computed_usd),
      cost_usd: round(this.f.cost_runtime_usd + this.f.cost_computed_usd),
      unknown_models: [...this.unknown].sort(),
      models: [...this.models].sort(),
    };
  }
}

export function sumCalls(calls: Iterable<UsageCall>, prices: PriceTable): Figures {
  const s = new FigureSum();
  for (const c of calls) s.add(c, prices);
  return s.done();
}
