/**
 * The chain properties a scenario check runs at the end, each as a function that lists the ways
 * it does not hold. The checker judges them both ways: `true` fails on any violation, `false`
 * fails when there is none, and a property this build cannot evaluate is never judged at all.
 */
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonical } from '../formats/session-flow/encode.js';
import { readSessionData } from '../formats/session-data/decode.js';
import { RECORD_KEY_ORDER } from '../formats/session-data/types.js';
import type { EntityFrame } from '../formats/session-flow/types.js';
import { loadChain, roundsDir } from '../storage/chain.js';
import { listLanded } from '../storage/landed-files.js';
import { verifyChains } from '../storage/verify-chain.js';
import { parseSession } from '../processors/assembler/parse.js';
import { loadIndex } from '../storage/index.js';
import { assembleThroughHead, compareShapes, foldShape } from './fold-shape.js';
import { generate } from './generate.js';
import { viewCoverage, type ViewDocumentOf } from './view-coverage.js';
import { repackKeepsStructure } from './repack-check.js';
import { removedAfterSent } from './removal-check.js';
import { hasChanges, withoutChanges } from './changes-check.js';
import { discoveryIgnoresNoise, prunedSourcesGone } from './source-checks.js';
import { partsKeepSourceBytes } from './source-bytes-check.js';
import { providerBodiesRebuild } from './provider-body-check.js';
import { bundleSelfSufficient } from './bundle-check.js';
import { hasExecutions, withoutExecutions } from './execution-check.js';
import { checkPushKinds, pushOnWorker } from './push-check.js';
import { metricsDiffer, metricsPlan } from './metrics-plan.js';
import { ScenarioRoot } from './run.js';
import type { Scenario } from './model.js';
import type { Format } from './run.js';

export interface Violation {
  where: string;
  expected: unknown;
  got: unknown;
}

/** Rewrites every round of a session from its landed files; a seam so a test can make a parse differ. */
export type Reparse = (root: string, session: string, maxRoundBytes: number) => void;

export interface PropertyContext {
  scn: Scenario;
  dir: string;
  session: string;
  format: Format;
  root: Pick<ScenarioRoot, 'collectAgain'>;
  /** The base time the scenario was built at. */
  at: number;
  reparse?: Reparse;
  /** The scenario without its workspace changes; a seam so a test can make the two builds differ otherwise. */
  withoutChanges?: (scn: Scenario) => Scenario;
  /** The scenario without its execution blocks; the same seam for `executions_leave_the_fold`. */
  withoutExecutions?: (scn: Scenario) => Scenario;
  /** The scenario without its provider bodies; the same seam for `provider_bodies_leave_the_fold`. */
  withoutBodies?: (scn: Scenario) => Scenario;
  /** Builds the asz.view document; a seam so a test can make it hide damage or report damage there is none of. */
  viewDocument?: ViewDocumentOf;
}

type Evaluator = (ctx: PropertyContext, scratch: Scratch) => Violation[];

/** The formats a property means something in: the runtime-only ones have no source files in `sd`. */
interface Evaluated {
  formats: readonly Format[];
  evaluate: Evaluator;
}

/** Scratch copies of a session's landed files, removed when the properties are done. */
class Scratch {
  private readonly dirs: string[] = [];

  /** A copy of the landed files and rounds, without the derived index. */
  copy(dir: string, session: string): string {
    const d = join(mkdtempSync(join(tmpdir(), 'aszcol-prop-')), 'data');
    this.dirs.push(d);
    cpSync(join(dir, session), join(d, session), { recursive: true });
    rmSync(join(d, session, 'index'), { recursive: true, force: true });
    return d;
  }

  /** An empty directory for a root of its own. */
  empty(): string {
    const d = join(mkdtempSync(join(tmpdir(), 'aszcol-prop-')), 'data');
    this.dirs.push(d);
    return d;
  }

  /** A copy of the whole root: sources, markers, landed files, chains and state. */
  copyRoot(dir: string): string {
    const d = join(mkdtempSync(join(tmpdir(), 'aszcol-prop-')), 'data');
    this.dirs.push(d);
    cpSync(dir, d, { recursive: true });
    return d;
  }

  dispose(): void {
    for (const d of this.dirs) rmSync(join(d, '..'), { recursive: true, force: true });
  }
}

const fullParse: Reparse = (root, session, maxRoundBytes) => void parseSession({ root, session, maxRoundBytes });

type Node = Extract<EntityFrame, { t: 'node' }>;

const roundBytes = (d: string, session: string) =>
  readdirSync(roundsDir(d, session))
    .sort()
    .map((n) => readFileSync(join(roundsDir(d, session), n), 'utf8'));

const reproducible: Evaluator = (ctx, scratch) => {
  const parse = ctx.reparse ?? fullParse;
  const [a, b] = [scratch.copy(ctx.dir, ctx.session), scratch.copy(ctx.dir, ctx.session)];
  parse(a, ctx.session, 2 ** 40);
  parse(b, ctx.session, 2 ** 40);
  return canonical(roundBytes(a, ctx.session)) === canonical(roundBytes(b, ctx.session))
    ? []
    : [{ where: 'reproducible', expected: 'identical rounds from two parses', got: 'different bytes' }];
};

/**
 * Folding the chain equals one full parse of the same evidence. As asz reads it, that evidence is
 * the session's index as it stands, assembled through the head's sequence: a landed file deleted by
 * hand leaves the index (and so the parse) as it was. Under any round budget, too: a chain cut into
 * 1-byte rounds from the landed files folds to what one round of them does.
 */
const foldEqualsParse: Evaluator = (ctx, scratch) => {
  const index = loadIndex(ctx.dir, ctx.session);
  if (!index) return [{ where: 'fold_equals_parse', expected: "the session's index to parse from", got: '(no index)' }];
  const parse = ctx.reparse ?? fullParse;
  const [one, tiny] = [scratch.copy(ctx.dir, ctx.session), scratch.copy(ctx.dir, ctx.session)];
  parse(one, ctx.session, 2 ** 40);
  parse(tiny, ctx.session, 1);
  return [
    ...compareShapes('fold_equals_parse', assembleThroughHead(ctx.dir, ctx.session, index.entries), foldShape(ctx.dir, ctx.session)),
    ...compareShapes('fold_equals_parse (1-byte budget)', foldShape(one, ctx.session), foldShape(tiny, ctx.session)),
  ];
};

const LANDED_FILE_PROBLEM = /which is not on disk$|the input digest recomputed from landed files|the input digest cannot be recomputed/;

/** Rounds are read-only, link into a chain, and a parse with nothing new writes nothing. */
const immutableRounds: Evaluator = (ctx) => {
  const out: Violation[] = [];
  const dir = roundsDir(ctx.dir, ctx.session);
  for (const n of readdirSync(dir))
    if ((statSync(join(dir, n)).mode & 0o222) !== 0) out.push({ where: `immutable_rounds: ${n}`, expected: 'read-only', got: 'writable' });
  // What a round says about landed files (one missing, its input digest) is evidence, which `verify` checks: not a changed round.
  for (const p of verifyChains(ctx.dir, ctx.session).problems)
    if (!LANDED_FILE_PROBLEM.test(p)) out.push({ where: 'immutable_rounds', expected: 'a chain that verifies', got: p });
  if (parseSession({ root: ctx.dir, session: ctx.session, maxRoundBytes: 2 ** 40 }).status !== 'unchanged')
    out.push({ where: 'immutable_rounds', expected: 'a parse with nothing new writes nothing', got: 'a round was written' });
  return out;
};

const headerMatchesFold: Evaluator = (ctx) => {
  const chain = loadChain(ctx.dir, ctx.session);
  const all = [...chain.fold.entities.values()];
  const h = chain.fold.head;
  const count = (k: string) => all.filter((n) => n.t === 'node' && n.kind === k).length;
  const got = {
    talks: count('talk'),
    streams: count('stream'),
    segments: count('segment'),
    llm_calls: count('llm.call'),
    unresolved: all.filter((u) => u.t === 'unresolved' && u.state === 'open').length,
  };
  const head = h && { talks: h.talks, streams: h.streams, segments: h.segments, llm_calls: h.llm_calls, unresolved: h.unresolved };
  return canonical(got) === canonical(head ?? null) ? [] : [{ where: 'header_matches_fold', expected: head ?? '(no head round)', got }];
};

const recordsWellFormed: Evaluator = (ctx) => {
  const allowed = new Set<string>(RECORD_KEY_ORDER);
  const out: Violation[] = [];
  for (const l of listLanded(ctx.dir, ctx.session))
    for (const r of readSessionData(l.path).records)
      for (const k of Object.keys(r)) if (!allowed.has(k)) out.push({ where: `records_well_formed: ${l.rel}`, expected: [...allowed], got: k });
  return out;
};

const recollectIdempotent: Evaluator = (ctx) => {
  const again = ctx.root.collectAgain();
  return again.landedRecords === 0 ? [] : [{ where: 'recollect_idempotent', expected: 0, got: again.landedRecords }];
};

/** Every line of every generated transcript is one landed record, counted per source file. */
const everyLineARecord: Evaluator = (ctx) => {
  const bySrc = new Map<string, number>();
  for (const l of listLanded(ctx.dir, ctx.session)) {
    const { header, records } = readSessionData(l.path);
    bySrc.set(header.src, (bySrc.get(header.src) ?? 0) + records.length);
  }
  const out: Violation[] = [];
  for (const [rel, content] of generate(ctx.scn, { at: ctx.at }).files) {
    if (!rel.endsWith('.jsonl')) continue;
    const lines = content.split('\n').filter((x) => x !== '').length;
    if ((bySrc.get(rel) ?? 0) !== lines) out.push({ where: `every_line_a_record: ${rel}`, expected: lines, got: bySrc.get(rel) ?? 0 });
  }
  return out;
};

/** Builds the scenario with and without its changes on scratch roots; the folds must be the same. */
const changesLeaveTheFold: Evaluator = (ctx, scratch) => {
  if (!hasChanges(ctx.scn.steps)) return [];
  const fold = (scn: Scenario) => {
    const root = new ScenarioRoot(scratch.empty(), ctx.format, scn, ctx.at);
    root.build();
    root.parse();
    return foldShape(root.dir, ctx.session);
  };
  return compareShapes('changes_leave_the_fold', fold(ctx.scn), fold((ctx.withoutChanges ?? withoutChanges)(ctx.scn)));
};

/** Builds the scenario with and without the plugin's execution observations; the folds must be the same. */
const executionsLeaveTheFold: Evaluator = (ctx, scratch) => {
  if (!hasExecutions(ctx.scn)) return [];
  const fold = (scn: Scenario) => {
    const root = new ScenarioRoot(scratch.empty(), ctx.format, scn, ctx.at);
    root.build();
    root.parse();
    return foldShape(root.dir, ctx.session);
  };
  return compareShapes('executions_leave_the_fold', fold(ctx.scn), fold((ctx.withoutExecutions ?? withoutExecutions)(ctx.scn)));
};

/** What bodies add by design: a call's list of its bodies and the session's count. Anything else they change breaks the property. */
const BODY_ATTRS = ['provider_bodies', 'provider_bodies_landed'] as const;

/** Builds the scenario with and without its provider bodies on scratch roots; apart from the bodies' own attributes the folds must be the same. */
const providerBodiesLeaveTheFold: Evaluator = (ctx, scratch) => {
  if (!ctx.scn.providerBodies) return [];
  const fold = (scn: Scenario) => {
    const root = new ScenarioRoot(scratch.empty(), ctx.format, scn, ctx.at);
    root.build();
    root.parse();
    return foldShape(root.dir, ctx.session, BODY_ATTRS);
  };
  const without = ctx.withoutBodies ?? ((scn: Scenario) => ({ ...scn, providerBodies: false }));
  return compareShapes('provider_bodies_leave_the_fold', fold(ctx.scn), fold(without(ctx.scn)));
};

/** The session's metrics, derived and pushed from a copy of the root, against what the scenario says (metrics-plan.ts). */
const metricsMatchThePlan: Evaluator = (ctx, scratch) => {
  const pushed = pushOnWorker(scratch.copyRoot(ctx.dir), 'metrics');
  if ('failure' in pushed) return [{ where: `metrics_match_the_plan: ${pushed.failure.where}`, expected: pushed.failure.expected, got: pushed.failure.got }];
  const plan = metricsPlan(ctx.scn);
  return pushed.results.flatMap((r) =>
    metricsDiffer(plan, { tokens: r.tokens ?? {}, mcp: r.mcp ?? {} }).map((d) => ({
      where: `metrics_match_the_plan over ${r.protocol}: ${d.key}`,
      expected: d.planned,
      got: d.pushed,
    })),
  );
};

const BOTH: readonly Format[] = ['claude-code', 'sd'];
const RUNTIME: readonly Format[] = ['claude-code'];

/** The properties this build evaluates. `cross_format` compares two roots and is judged by the checker. */
export const EVALUATED: Readonly<Record<string, Evaluated>> = {
  reproducible: { formats: BOTH, evaluate: reproducible },
  fold_equals_parse: { formats: BOTH, evaluate: foldEqualsParse },
  immutable_rounds: { formats: BOTH, evaluate: immutableRounds },
  header_matches_fold: { formats: BOTH, evaluate: headerMatchesFold },
  records_well_formed: { formats: BOTH, evaluate: recordsWellFormed },
  recollect_idempotent: { formats: RUNTIME, evaluate: recollectIdempotent },
  every_line_a_record: { formats: RUNTIME, evaluate: everyLineARecord },
  bundle: { formats: BOTH, evaluate: (ctx) => bundleSelfSufficient(ctx.dir, ctx.session) },
  view_covers_the_session: { formats: BOTH, evaluate: (ctx) => viewCoverage(ctx.dir, ctx.session, ctx.viewDocument) },
  // The bodies must rebuild on the re-cut root as well, where every file and row they were listed at moved.
  repack_keeps_structure: {
    formats: BOTH,
    evaluate: (ctx) => repackKeepsStructure(ctx.dir, ctx.session, (dest) => providerBodiesRebuild(dest, ctx.session, ctx.scn, ctx.at)),
  },
  changes_leave_the_fold: { formats: BOTH, evaluate: changesLeaveTheFold },
  executions_leave_the_fold: { formats: BOTH, evaluate: executionsLeaveTheFold },
  provider_bodies_leave_the_fold: { formats: BOTH, evaluate: providerBodiesLeaveTheFold },
  provider_bodies_rebuild: { formats: BOTH, evaluate: (ctx) => providerBodiesRebuild(ctx.dir, ctx.session, ctx.scn, ctx.at) },
  parts_keep_source_bytes: {
    formats: RUNTIME,
    evaluate: (ctx) => partsKeepSourceBytes(ctx.dir, ctx.session, join(ctx.dir, '_source', 'projects'), join(ctx.dir, '_source', 'asz', 'provider-bodies')),
  },
  // Pushed over gRPC and HTTP to a receiver of the check's own: every request as the contract says, and a second pass sends nothing.
  push_follows_the_wire: {
    formats: BOTH,
    evaluate: (ctx) => checkPushKinds(ctx.dir, []).map((f) => ({ where: `push_follows_the_wire: ${f.where}`, expected: f.expected, got: f.got })),
  },
  discovery_ignores_noise: { formats: RUNTIME, evaluate: (ctx, scratch) => discoveryIgnoresNoise(scratch.copyRoot(ctx.dir), ctx.session) },
  pruned_sources_gone: { formats: RUNTIME, evaluate: (ctx, scratch) => prunedSourcesGone(scratch.copyRoot(ctx.dir), ctx.session) },
  // An sd build writes no source and no marker, so there is nothing of it a pipeline may remove.
  removed_after_sent: { formats: RUNTIME, evaluate: (ctx, scratch) => removedAfterSent(scratch.copyRoot(ctx.dir), ctx.session) },
  metrics_match_the_plan: { formats: BOTH, evaluate: metricsMatchThePlan },
};

/** Accepted by name, not evaluated yet: an expectation naming one makes its scenario `incomplete`. */
export const NOT_EVALUATED: Readonly<Record<string, string>> = {};

/** Judged once over the two formats' roots, in the `all` result. */
export const CROSS_FORMAT = ['cross_format', 'records_match'] as const;

export const PROPERTY_NAMES: ReadonlySet<string> = new Set([...Object.keys(EVALUATED), ...CROSS_FORMAT, ...Object.keys(NOT_EVALUATED)]);

/**
 * Judges a property both ways: wanted, each violation is a failure; wanted not to hold, a
 * property with no violation is one failure saying so.
 */
export function judge(name: string, want: boolean, violations: Violation[]): Violation[] {
  if (want) return violations;
  return violations.length ? [] : [{ where: name, expected: 'does not hold (set false)', got: 'holds' }];
}

/** One evaluated property's violations over a root, on its own scratch copies. */
export function evaluateProperty(name: string, ctx: PropertyContext): Violation[] {
  const p = EVALUATED[name];
  if (!p) throw new Error(`"${name}" is not a property this build evaluates`);
  const scratch = new Scratch();
  try {
    return p.evaluate(ctx, scratch);
  } finally {
    scratch.dispose();
  }
}

/**
 * Runs every evaluated property that applies to this format, default on, and judges each by
 * `props` (a name set false must not hold). Returns the failures.
 */
export function checkProperties(ctx: PropertyContext, props: Record<string, boolean>): Violation[] {
  const scratch = new Scratch();
  const out: Violation[] = [];
  try {
    for (const [name, p] of Object.entries(EVALUATED)) {
      if (!p.formats.includes(ctx.format)) continue;
      out.push(...judge(name, props[name] !== false, p.evaluate(ctx, scratch)));
    }
  } finally {
    scratch.dispose();
  }
  return out;
}

/** Two formats' folds node by node: kind, parent, attributes and refs must agree. */
export function crossFormatViolations(a: { dir: string; session: string }, b: { dir: string; session: string }): Violation[] {
  const shape = (x: { dir: string; session: string }) =>
    Object.fromEntries(
      [...loadChain(x.dir, x.session).fold.entities.values()]
        .filter((e): e is Node => e.t === 'node')
        .map((n) => [n.id, canonical({ kind: n.kind, parent: n.parent, attrs: n.attrs, ref: n.ref, refs: n.refs })]),
    );
  const sa = shape(a),
    sb = shape(b);
  const out: Violation[] = [];
  for (const id of new Set([...Object.keys(sa), ...Object.keys(sb)]))
    if (sa[id] !== sb[id]) out.push({ where: `cross_format: ${id}`, expected: sa[id] ?? '(absent)', got: sb[id] ?? '(absent)' });
  return out;
}

/** Each landed file group's records in order, keyed by what the header says the group holds. */
function landedRecords(x: { dir: string; session: string }): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const l of listLanded(x.dir, x.session)) {
    const { header, records } = readSessionData(l.path);
    const key = `${header.kind} ${header.src}${header.stream ? ` stream ${header.stream}` : ''}${header.batch ? ` run ${header.batch}` : ''}`;
    (out.get(key) ?? out.set(key, []).get(key)!).push(...records.map((r) => canonical(r)));
  }
  return out;
}

/** The runtime's adapter and the sd writer land the same evidence: every record, field by field, in order. */
export function recordsMatchViolations(a: { dir: string; session: string }, b: { dir: string; session: string }): Violation[] {
  const [ra, rb] = [landedRecords(a), landedRecords(b)];
  const out: Violation[] = [];
  for (const k of new Set([...ra.keys(), ...rb.keys()])) {
    const [x, y] = [ra.get(k) ?? [], rb.get(k) ?? []];
    const i = x.findIndex((r, n) => r !== y[n]);
    if (x.length !== y.length || i >= 0)
      out.push({
        where: `records_match: ${k}${i >= 0 ? ` record ${i + 1}` : ''}`,
        expected: i >= 0 ? x[i] : `${x.length} records`,
        got: i >= 0 ? (y[i] ?? '(absent)') : `${y.length} records`,
      });
  }
  return out;
}
