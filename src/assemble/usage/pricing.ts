/**
 * What a provider call cost when the runtime did not say: per-model prices in USD per million
 * tokens, dated, with the long-context tier. A model the table does not know has no price — the
 * caller shows its cost as unknown with the model's name, never as zero.
 */

export interface ModelPrice {
  input: number;
  output: number;
  cache_read: number;
  /** Cache writes kept five minutes (the default TTL) and one hour. */
  cache_write_5m: number;
  cache_write_1h: number;
  /** Above this many prompt tokens (input + cache read + cache write) the whole request is billed at `long`. */
  long_context_above?: number;
  long?: Omit<ModelPrice, 'long' | 'long_context_above'>;
}

export interface PriceTable {
  /** The day the prices were read from the provider's price list. */
  as_of: string;
  /** Where the table came from: `built-in`, or the override file's path. */
  source: string;
  /** Keyed by a model family name; a model matches the longest key it starts with once normalised. */
  models: Record<string, ModelPrice>;
}

export interface CallTokens {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

const tier = (input: number, output: number, cacheRead: number, write5m: number, write1h: number) => ({
  input,
  output,
  cache_read: cacheRead,
  cache_write_5m: write5m,
  cache_write_1h: write1h,
});

/** Sonnet 4 and 4.5 bill a prompt over 200k tokens at the long-context rates, for the whole request. */
const sonnetLong = { long_context_above: 200_000, long: tier(6, 22.5, 0.6, 7.5, 12) };

/** Anthropic's published prices (USD per million tokens) as read on the date below. */
export const BUILT_IN_PRICES: PriceTable = {
  as_of: '2026-11-15',
  source: 'built-in',
  models: {
    'claude-opus-4-5': tier(5, 25, 0.5, 6.25, 10),
    'claude-opus-4-1': tier(15, 75, 1.5, 18.75, 30),
    'claude-opus-4': tier(15, 75, 1.5, 18.75, 30),
    'claude-sonnet-4-5': { ...tier(3, 15, 0.3, 3.75, 6), ...sonnetLong },
    'claude-sonnet-4': { ...tier(3, 15, 0.3, 3.75, 6), ...sonnetLong },
    'claude-3-7-sonnet': tier(3, 15, 0.3, 3.75, 6),
    'claude-3-5-sonnet': tier(3, 15, 0.3, 3.75, 6),
    'claude-haiku-4-5': tier(1, 5, 0.1, 1.25, 2),
    'claude-3-5-haiku': tier(0.8, 4, 0.08, 1, 1.6),
    'claude-3-haiku': tier(0.25, 1.25, 0.03, 0.3, 0.5),
    'claude-3-opus': tier(15, 75, 1.5, 18.75, 30),
  },
};

/**
 * The family name a model id is priced under: lower case, without a provider's prefix
 * (`anthropic.`, `us.anthropic.`, `anthropic/`), a version suffix (`-v1:0`), a date
 * (`-20250929`) or a context marker (`[1m]`).
 */
export function normaliseModel(model: string): string {
  return model
    .toLowerCase()
    .replace(/\[[^\]]*\]$/, '')
    .replace(/^(?:[a-z]{2,4}\.)?anthropic[./]/, '')
    .replace(/-v\d+(?::\d+)?$/, '')
    .replace(/@\d{8}$/, '')
    .replace(/-\d{8}$/, '');
}

export function priceOf(table: PriceTable, model: string): ModelPrice | undefined {
  const name = normaliseModel(model);
  let best: string | undefined;
  for (const key of Object.keys(table.models)) {
    if ((name === key || name.startsWith(key + '-')) && (!best || key.length > best.length)) best = key;
  }
  return best ? table.models[best] : undefined;
}

/** The cost in USD of one call's tokens; cache writes are priced at the 5-minute TTL, the one the transcript's count stands for. */
export function costOf(price: ModelPrice, t: CallTokens): number {
  const prompt = t.input + t.cache_read + t.cache_write;
  const p = price.long && price.long_context_above !== undefined && prompt > price.long_context_above ? price.long : price;
  return (t.input * p.input + t.output * p.output + t.cache_read * p.cache_read + t.cache_write * p.cache_write_5m) / 1_000_000;
}

const PRICE_KEYS = ['input', 'output', 'cache_read', 'cache_write_5m', 'cache_write_1h'] as const;

function readTier(v: unknown, where: string): Omit<ModelPrice, 'long' | 'long_context_above'> {
  if (!v || typeof v !== 'object') throw new Error(`${where}: must be an object of prices in USD per million tokens`);
  const o = v as Record<string, unknown>;
  const out: Record<string, number> = {};
  for (const k of PRICE_KEYS) {
    const n = o[k] ?? (k === 'cache_write_1h' ? o.cache_write_5m : undefined);
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) throw new Error(`${where}.${k}: must be a number ≥ 0 (USD per million tokens)`);
    out[k] = n;
  }
  for (const k of Object.keys(o))
    if (![...PRICE_KEYS, 'long', 'long_context_above'].includes(k)) throw new Error(`${where}.${k}: unknown key (expected ${PRICE_KEYS.join(', ')})`);
  return out as unknown as Omit<ModelPrice, 'long' | 'long_context_above'>;
}

/**
 * An override file's table (JSON: `{ "as_of": "YYYY-MM-DD", "models": { "<family>": { input, output,
 * cache_read, cache_write_5m, cache_write_1h, long_context_above?, long? } } }`), laid over the
 * built-in one: a family it names replaces the built-in price, the rest stay.
 */
export function overridePrices(base: PriceTable, text: string, source: string): PriceTable {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new Error(`${source}: not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`${source}: must be a JSON object with "models"`);
  const d = doc as { as_of?: unknown; models?: unknown };
  if (!d.models || typeof d.models !== 'object') throw new Error(`${source}: "models" must be an object keyed by model family`);
  if (d.as_of !== undefined && (typeof d.as_of !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(d.as_of)))
    throw new Error(`${source}: "as_of" must be a date, YYYY-MM-DD`);
  const models: Record<string, ModelPrice> = { ...base.models };
  for (const [name, v] of Object.entries(d.models as Record<string, unknown>)) {
    const where = `${source}: models.${name}`;
    const price: ModelPrice = readTier(v, where);
    const o = v as Record<string, unknown>;
    if (o.long !== undefined || o.long_context_above !== undefined) {
      if (typeof o.long_context_above !== 'number' || o.long_context_above <= 0) throw new Error(`${where}.long_context_above: must be a number of tokens > 0`);
      price.long_context_above = o.long_context_above;
      price.long = readTier(o.long, `${where}.long`);
    }
    models[normaliseModel(name)] = price;
  }
  return { as_of: (d.as_of as string | undefined) ?? base.as_of, source, models };
}
