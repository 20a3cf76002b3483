/**
 * The OAP's path for OTLP metric points, from the facts in facts.ts: the OTLP metric receiver turns
 * each point into a sample (resource and point attributes into labels, dots to underscores; a sum
 * of unspecified temporality dropped; a delta sum a gauge), then every MAL rule file's filter and
 * every rule's expression decide which meters the sample feeds. The expressions are parsed, not
 * restated: the families each one reads, the tag conditions on them, the labels it keeps, and the
 * entity labels its expSuffix needs. A point that feeds nothing is reported with why.
 */
import { MAL_RULE_FILES, type MalRuleFile } from './facts.js';
import { tagValue, type AnyValue, type KeyValue } from './lal.js';

/** One read of a sample family in an expression: `family.tagEqual(…).sum([…])`. */
export interface FamilyRead {
  family: string;
  equal: Record<string, string>;
  notEqual: Record<string, string>;
  keeps: string[];
}

export interface MeterRule {
  /** The meter the OAP stores: `<metricPrefix>_<name>`. */
  meter: string;
  source: string;
  filter: Record<string, string>;
  /** Labels the entity is built from (expSuffix's lists). */
  entity: string[];
  reads: FamilyRead[];
}

function quoted(text: string): string[] {
  return [...text.matchAll(/'([^']*)'/g)].map((m) => m[1]!);
}

/** `{ tags -> tags.a == 'x' && tags.b == 'y' }`; any other form is refused, so a new filter cannot pass unread. */
export function parseFilter(filter: string): Record<string, string> {
  const body = /^\{\s*tags\s*->\s*(.*)\}$/.exec(filter.trim())?.[1];
  if (!body) throw new Error(`unreadable MAL filter: ${filter}`);
  const out: Record<string, string> = {};
  for (const term of body.split('&&')) {
    const m = /^\s*tags\.(\w+)\s*==\s*'([^']*)'\s*$/.exec(term);
    if (!m) throw new Error(`unreadable MAL filter term ${JSON.stringify(term)} in ${filter}`);
    out[m[1]!] = m[2]!;
  }
  return out;
}

/** The family reads of one expression. */
export function parseReads(exp: string): FamilyRead[] {
  const reads: FamilyRead[] = [];
  for (const m of exp.matchAll(/([a-z][a-z0-9_]*)((?:\.(?:tagEqual|tagNotEqual|sum)\([^()]*\))+)/g)) {
    const read: FamilyRead = { family: m[1]!, equal: {}, notEqual: {}, keeps: [] };
    for (const op of m[2]!.matchAll(/\.(tagEqual|tagNotEqual|sum)\(([^()]*)\)/g)) {
      const args = quoted(op[2]!);
      if (op[1] === 'sum') read.keeps.push(...args);
      else if (op[1] === 'tagEqual') read.equal[args[0]!] = args[1]!;
      else read.notEqual[args[0]!] = args[1]!;
    }
    reads.push(read);
  }
  if (!reads.length) throw new Error(`no sample family read in MAL expression: ${exp}`);
  return reads;
}

export function meterRules(files: readonly MalRuleFile[] = MAL_RULE_FILES): MeterRule[] {
  return files.flatMap((f) => {
    const filter = parseFilter(f.filter);
    const entity = [...f.expSuffix.matchAll(/\[([^\]]*)\]/g)].flatMap((m) => quoted(m[1]!));
    return f.metricsRules.map((r) => ({ meter: `${f.metricPrefix}_${r.name}`, source: f.source, filter, entity, reads: parseReads(r.exp) }));
  });
}

/**
 * The labels every sample of a resource carries (OpenTelemetryMetricRequestProcessor.nodeLabels):
 * each resource attribute with its dots replaced by underscores, the first of a name kept, so
 * `service.layer` is `service_layer`; then `service.name` copied to `job_name` when that is absent.
 */
export function nodeLabels(resource: KeyValue[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of resource ?? []) {
    const k = kv.key.replace(/\./g, '_');
    if (!(k in out)) out[k] = tagValue(kv.value);
  }
  for (const kv of resource ?? []) if (kv.key === 'service.name' && !('job_name' in out)) out.job_name = tagValue(kv.value);
  return out;
}

/** A point's own attributes take precedence over the resource's (mergeLabels). */
export function pointLabels(node: Record<string, string>, attributes: KeyValue[] | undefined): Record<string, string> {
  const out = { ...node };
  for (const kv of attributes ?? []) out[kv.key.replace(/\./g, '_')] = tagValue(kv.value);
  return out;
}

export interface PointVerdict {
  metric: string;
  /** The sample families the point becomes (a histogram becomes three). */
  families: string[];
  labels: Record<string, string>;
  value: number;
  timeMs: number;
  /** Every meter the point feeds. */
  feeds: string[];
  /** When it feeds nothing: why, one line per rule that reads its family, or that no rule reads it. */
  why: string[];
}

const AGGREGATION_UNSPECIFIED = 0;
const AGGREGATION_DELTA = 1;
/** DataPointFlags.FLAG_NO_RECORDED_VALUE. */
const NO_RECORDED_VALUE = 1;

function valueOf(p: { asDouble?: number; asInt?: string | number; value?: string }): number {
  if (p.value === 'asInt' || (p.value === undefined && p.asInt !== undefined)) return Number(p.asInt ?? 0);
  return Number(p.asDouble ?? 0);
}

/** Which meters one sample feeds, or why none. */
export function routeSample(rules: readonly MeterRule[], families: string[], labels: Record<string, string>): { feeds: string[]; why: string[] } {
  const feeds: string[] = [];
  const why: string[] = [];
  for (const rule of rules) {
    const reads = rule.reads.filter((r) => families.includes(r.family));
    if (!reads.length) continue;
    const failedFilter = Object.entries(rule.filter).find(([k, v]) => labels[k] !== v);
    if (failedFilter) {
      why.push(`${rule.meter}: the filter wants ${failedFilter[0]} == '${failedFilter[1]}', the sample has ${JSON.stringify(labels[failedFilter[0]] ?? null)}`);
      continue;
    }
    const missingEntity = rule.entity.filter((k) => !labels[k]);
    if (missingEntity.length) {
      why.push(`${rule.meter}: no ${missingEntity.join(', ')} to build its entity from`);
      continue;
    }
    let fed = false;
    const readWhy: string[] = [];
    for (const r of reads) {
      const eq = Object.entries(r.equal).find(([k, v]) => labels[k] !== v);
      const ne = Object.entries(r.notEqual).find(([k, v]) => labels[k] === v);
      const missing = r.keeps.filter((k) => labels[k] === undefined);
      if (eq) readWhy.push(`${r.family} read where ${eq[0]} == '${eq[1]}'`);
      else if (ne) readWhy.push(`${r.family} read where ${ne[0]} != '${ne[1]}'`);
      else if (missing.length) readWhy.push(`${r.family} summed by ${missing.join(', ')}, which the sample lacks`);
      else fed = true;
    }
    if (fed) feeds.push(rule.meter);
    else why.push(`${rule.meter}: ${readWhy.join('; ')}`);
  }
  if (!feeds.length && !why.length) why.push(`no ai-agent rule reads ${families.join(' or ')}`);
  return { feeds, why: feeds.length ? [] : why };
}

/** Every point of one ResourceMetrics (proto-loader's shape), routed. */
export function routeResourceMetrics(rules: readonly MeterRule[], rm: any): PointVerdict[] {
  const node = nodeLabels(rm.resource?.attributes);
  const out: PointVerdict[] = [];
  for (const sm of rm.scopeMetrics ?? [])
    for (const m of sm.metrics ?? []) {
      const name = String(m.name).replace(/\./g, '_');
      const sum = m.sum as { aggregationTemporality?: number; isMonotonic?: boolean; dataPoints?: any[] } | undefined;
      const kind = m.gauge ? 'gauge' : sum ? 'sum' : m.histogram || m.exponentialHistogram ? 'histogram' : m.summary ? 'summary' : 'unknown';
      const points: any[] = (m.gauge ?? sum ?? m.histogram ?? m.exponentialHistogram ?? m.summary)?.dataPoints ?? [];
      for (const p of points) {
        if ((Number(p.flags ?? 0) & NO_RECORDED_VALUE) === NO_RECORDED_VALUE) continue;
        const labels = pointLabels(node, p.attributes);
        const families = kind === 'histogram' || kind === 'summary' ? [name, `${name}_count`, `${name}_sum`] : [name];
        const base = {
          metric: String(m.name),
          families,
          labels,
          value: kind === 'histogram' || kind === 'summary' ? Number(p.sum ?? 0) : valueOf(p),
          timeMs: Number(BigInt(p.timeUnixNano ?? 0) / 1_000_000n),
        };
        if (kind === 'unknown') {
          out.push({ ...base, feeds: [], why: ['a metric of no kind the receiver adapts: it throws "Unsupported type" and the request is lost'] });
          continue;
        }
        const temporality = Number(sum?.aggregationTemporality ?? AGGREGATION_UNSPECIFIED);
        if (sum && temporality === AGGREGATION_UNSPECIFIED) {
          out.push({ ...base, feeds: [], why: ['a sum of unspecified temporality: the receiver drops it'] });
          continue;
        }
        if (sum && temporality !== AGGREGATION_DELTA && sum.isMonotonic) {
          // The receiver keeps it as a counter, but the ai-agent rules call no increase(): each value is taken as a delta.
          out.push({ ...base, feeds: [], why: ['a cumulative counter: the ai-agent rules read every point as a delta, so running totals would be summed'] });
          continue;
        }
        out.push({ ...base, ...routeSample(rules, families, labels) });
      }
    }
  return out;
}

export type { AnyValue };
