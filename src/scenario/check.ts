/**
 * `scenario check`: build each checkpoint, collect, parse, and compare the fold with the
 * expectation file; then the chain properties. Only what is written is checked, an unknown key
 * is an error, and a key this build cannot check yet makes the scenario `incomplete`, by name.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonical } from '../formats/session-flow/encode.js';
import { readSessionData } from '../formats/session-data/decode.js';
import type { EntityFrame } from '../formats/session-flow/types.js';
import { loadChain } from '../storage/chain.js';
import { listLanded } from '../storage/landed-files.js';
import { verifyRoot } from '../storage/verify.js';
import { verifyChains } from '../storage/verify-chain.js';
import { loadExpectation, loadScenario } from './files.js';
import { generate } from './generate.js';
import type { Scenario } from './model.js';
import { ScenarioRoot, type Format } from './run.js';
import { checkPushKinds, pushKinds, pushOnWorker } from './push-check.js';
import { viewFacts } from './view-check.js';
import { checkProperties, crossFormatViolations, judge, recordsMatchViolations, NOT_EVALUATED, PROPERTY_NAMES } from './properties.js';

export interface Failure {
  where: string;
  expected: unknown;
  got: unknown;
}

export interface CheckResult {
  scenario: string;
  format: Format | 'all';
  status: 'passed' | 'failed' | 'incomplete';
  failures: Failure[];
  /** Keys this build could not check, with where they were. */
  unchecked: string[];
  dir?: string;
}

/** The fixed base time every check builds at, so runs are comparable. */
export const CHECK_AT = Date.parse('2026-01-01T00:00:00Z');

const CHECKPOINT_KEYS = new Set([
  'rounds',
  'delta',
  'written',
  'kinds',
  'nodes',
  'talks_on',
  'runs_in',
  'relations',
  'unresolved',
  'unresolved_kinds',
  'session',
  'verify',
  'lose',
  'view',
]);
const NOT_YET = new Set<string>();
const TOP_KEYS = new Set(['checkpoints', 'properties', 'push', 'collect', 'parse']);

type Node = Extract<EntityFrame, { t: 'node' }>;

function foldView(root: string, session: string) {
  const chain = loadChain(root, session);
  const all = [...chain.fold.entities.values()];
  return {
    chain,
    nodes: all.filter((e): e is Node => e.t === 'node'),
    relations: all.filter((e): e is Extract<EntityFrame, { t: 'relation' }> => e.t === 'relation'),
    unresolved: all.filter((e): e is Extract<EntityFrame, { t: 'unresolved' }> => e.t === 'unresolved'),
  };
}

/** Deep partial match: every key the expectation names must equal; others are not checked. */
function partialEqual(expected: unknown, got: unknown): boolean {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    if (got === null || typeof got !== 'object') return false;
    return Object.entries(expected as Record<string, unknown>).every(([k, v]) => partialEqual(v, (got as Record<string, unknown>)[k]));
  }
  return canonical(expected) === canonical(got);
}

function deltaSeconds(v: unknown): number {
  const m = /^\+?(-?\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(String(v));
  if (!m) throw new Error(`"${v}" is not a time like +11.1s`);
  return Number(m[1]) * ({ ms: 0.001, s: 1, m: 60, h: 3600 } as Record<string, number>)[m[2]!]!;
}

export class ScenarioChecker {
  constructor(
    readonly file: string,
    readonly opts: { out?: string; formats: Format[] },
  ) {}

  run(): CheckResult[] {
    const scn = loadScenario(this.file);
    const expect = loadExpectation(this.file) ?? {};
    const results: CheckResult[] = [];
    for (const k of Object.keys(expect)) if (!TOP_KEYS.has(k)) throw new Error(`${this.file.replace(/\.yaml$/, '.expect.yaml')}: unknown key "${k}"`);
    const props = (expect.properties ?? {}) as Record<string, boolean>;
    for (const k of Object.keys(props))
      if (!PROPERTY_NAMES.has(k)) throw new Error(`${this.file.replace(/\.yaml$/, '.expect.yaml')}: properties: unknown property "${k}"`);
    for (const k of Object.keys(props))
      if (typeof props[k] !== 'boolean')
        throw new Error(`${this.file.replace(/\.yaml$/, '.expect.yaml')}: properties.${k}: must be true or false, got ${JSON.stringify(props[k])}`);
    const roots = new Map<Format, { dir: string; session: string }>();
    for (const format of this.opts.formats) {
      const r = this.checkFormat(scn, expect, props, format);
      results.push(r.result);
      roots.set(format, { dir: r.result.dir!, session: r.session });
    }
    if (this.opts.formats.length > 1) {
      const [a, b] = [...roots.values()];
      const failures = [
        ...judge('cross_format', props.cross_format !== false, crossFormatViolations(a!, b!)),
        ...judge('records_match', props.records_match !== false, recordsMatchViolations(a!, b!)),
      ];
      results.push({ scenario: scn.name, format: 'all', status: failures.length ? 'failed' : 'passed', failures: failures.slice(0, 20), unchecked: [] });
    }
    if (expect.push !== undefined) {
      const kinds = pushKinds(this.file.replace(/\.yaml$/, '.expect.yaml'), expect.push);
      for (const r of results)
        if (r.format !== 'all' && r.dir) {
          for (const f of checkPushKinds(r.dir, kinds)) r.failures.push({ ...f, where: `${r.format}: ${f.where}` });
          if (r.failures.length) r.status = 'failed';
        }
    }
    if (!this.opts.out) for (const r of results) if (r.dir) rmSync(join(r.dir, '..'), { recursive: true, force: true });
    return results;
  }

  /** `collect: {max_delta_bytes}`: the largest landed file the check collects by (0, the default, is the receiver's own). */
  private collectSetting(v: unknown): number | undefined {
    if (v === undefined) return undefined;
    const where = `${this.file.replace(/\.yaml$/, '.expect.yaml')}: collect`;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${where}: a mapping`);
    for (const k of Object.keys(v)) if (k !== 'max_delta_bytes') throw new Error(`${where}: unknown key "${k}"`);
    const n = (v as { max_delta_bytes?: unknown }).max_delta_bytes;
    if (n === undefined || n === 0) return undefined;
    if (!Number.isInteger(n) || (n as number) < 0) throw new Error(`${where}.max_delta_bytes: a whole number of bytes, got ${JSON.stringify(n)}`);
    return n as number;
  }

  private checkFormat(
    scn: Scenario,
    expect: Record<string, unknown>,
    props: Record<string, boolean>,
    format: Format,
  ): { result: CheckResult; session: string } {
    const base = this.opts.out ? join(this.opts.out, scn.name) : mkdtempSync(join(tmpdir(), 'aszcol-scenario-'));
    const dir = join(base, format);
    rmSync(dir, { recursive: true, force: true });
    const parseCfg = (expect.parse ?? {}) as { max_round_bytes?: number };
    const root = new ScenarioRoot(dir, format, scn, CHECK_AT, {
      maxRoundBytes: parseCfg.max_round_bytes || undefined,
      maxDeltaBytes: this.collectSetting(expect.collect),
    });
    const failures: Failure[] = [];
    const unchecked: string[] = [];
    const fail = (where: string, expected: unknown, got: unknown) => failures.push({ where: `${format}: ${where}`, expected, got });
    const checkpoints = (expect.checkpoints ?? {}) as Record<string, Record<string, unknown>>;
    const full = generate(scn, { at: CHECK_AT });
    const session = full.session;
    const order = [...full.checkpoints.filter((c) => checkpoints[c] !== undefined || true), 'final'];
    for (const name of Object.keys(checkpoints)) if (!order.includes(name)) throw new Error(`${this.file}: checkpoint "${name}" is not in the scenario`);
    for (const cp of order) {
      const built = root.build(cp === 'final' ? undefined : cp);
      for (const e of built.collect?.errors ?? []) fail(`${cp}: collect`, 'no error', `${e.where}: ${e.message}`);
      // The metrics the collector derives after each landing, before a person damages anything (as asz's check derives them).
      const derived = pushOnWorker(dir, 'derive');
      if ('failure' in derived) fail(`${cp}: derive metrics`, derived.failure.expected, derived.failure.got);
      const parsed = root.parse();
      const exp = checkpoints[cp];
      if (!exp) continue;
      const names = new Map<string, string>([['main', 'main'], ...full.agents]);
      const sub = (id: string) =>
        id
          .split('/')
          .map((p) => names.get(p) ?? p)
          .join('/');
      const f = foldView(dir, session);
      // What a person deletes goes first, whatever the key order: every check of the checkpoint runs over the damaged root.
      const entries = Object.entries(exp).sort(([a], [b]) => Number(b === 'lose') - Number(a === 'lose'));
      for (const [key, want] of entries) {
        if (!CHECKPOINT_KEYS.has(key)) throw new Error(`${this.file.replace(/\.yaml$/, '.expect.yaml')}: checkpoints.${cp}: unknown key "${key}"`);
        if (NOT_YET.has(key)) {
          unchecked.push(`${cp}.${key}`);
          continue;
        }
        const where = `${cp}.${key}`;
        switch (key) {
          case 'rounds':
            if (f.chain.fold.rounds !== want) fail(where, want, f.chain.fold.rounds);
            break;
          case 'written':
            if ((parsed.status === 'written') !== want) fail(where, want, parsed.status === 'written');
            break;
          case 'delta': {
            const last = parsed.rounds[parsed.rounds.length - 1];
            const isDelta = !!last && last.round > 1 && last.nodes < f.nodes.length;
            if (isDelta !== want) fail(where, want, isDelta);
            break;
          }
          case 'kinds':
            for (const [k, n] of Object.entries(want as Record<string, number>)) {
              const got = f.nodes.filter((x) => x.kind === k).length;
              if (got !== n) fail(`${where}.${k}`, n, got);
            }
            break;
          case 'nodes':
            for (const [id, spec] of Object.entries(want as Record<string, Record<string, unknown>>)) {
              const n = f.nodes.find((x) => x.id === sub(id));
              if (spec.absent !== undefined) {
                // `{absent: true}` says the node must not be there; `{absent: false}` only that it is.
                if (Object.keys(spec).length > 1 || typeof spec.absent !== 'boolean')
                  throw new Error(`${this.file.replace(/\.yaml$/, '.expect.yaml')}: checkpoints.${cp}.nodes.${id}: absent is true or false, alone`);
                if (!!n === spec.absent) fail(`${where}.${id}`, spec.absent ? '(absent)' : '(present)', n ? '(present)' : '(absent)');
                continue;
              }
              if (!n) {
                fail(`${where}.${id}`, spec, '(absent)');
                continue;
              }
              const got: Record<string, unknown> = {
                kind: n.kind,
                stream: n.stream,
                revision: n.revision,
                refs: (n.refs ?? (n.ref ? [n.ref] : [])).length,
                attrs: n.attrs ?? {},
              };
              const s = { ...spec };
              if (typeof s.stream === 'string') s.stream = names.get(s.stream) ?? s.stream;
              if (!partialEqual(s, got)) fail(`${where}.${id}`, spec, got);
            }
            break;
          case 'talks_on':
            for (const [stream, n] of Object.entries(want as Record<string, number>)) {
              const got = f.nodes.filter((x) => x.kind === 'talk' && x.stream === (names.get(stream) ?? stream)).length;
              if (got !== n) fail(`${where}.${stream}`, n, got);
            }
            break;
          case 'runs_in':
            for (const [talk, n] of Object.entries(want as Record<string, number>)) {
              const got = f.nodes.filter((x) => x.kind === 'run' && x.parent === sub(talk)).length;
              if (got !== n) fail(`${where}.${talk}`, n, got);
            }
            break;
          case 'relations':
            for (const [t, n] of Object.entries(want as Record<string, number>)) {
              const got = f.relations.filter((r) => r.type === t).length;
              if (got !== n) fail(`${where}.${t}`, n, got);
            }
            break;
          case 'unresolved':
            for (const [state, n] of Object.entries(want as Record<string, number>)) {
              const got = f.unresolved.filter((u) => u.state === state).length;
              if (got !== n) fail(`${where}.${state}`, n, got);
            }
            break;
          case 'unresolved_kinds':
            for (const [kind, state] of Object.entries(want as Record<string, string>)) {
              const of = f.unresolved.filter((u) => u.kind === kind);
              const got = of.some((u) => u.state === 'open')
                ? 'open'
                : of.some((u) => u.state === 'resolved')
                  ? 'resolved'
                  : of.some((u) => u.state === 'terminal')
                    ? 'terminal'
                    : 'none';
              if (got !== state) fail(`${where}.${kind}`, state, got);
            }
            break;
          case 'session': {
            const s = f.nodes.find((x) => x.kind === 'session');
            const w = want as { from?: string; to?: string };
            for (const [k, attr] of [
              ['from', 'from_time'],
              ['to', 'through_time'],
            ] as const) {
              if (w[k] === undefined) continue;
              const t = s?.attrs?.[attr] as string | undefined;
              const got = t === undefined ? '(absent)' : `+${(Date.parse(t) - CHECK_AT) / 1000}s`;
              if (t === undefined || Math.abs((Date.parse(t) - CHECK_AT) / 1000 - deltaSeconds(w[k])) > 0.0005) fail(`${where}.${k}`, w[k], got);
            }
            break;
          }
          case 'verify': {
            const problems = verifyRoot(dir).problems.length + verifyChains(dir).problems.length;
            const w = want as { problems?: number };
            if (w.problems !== undefined && problems !== w.problems) fail(`${where}.problems`, w.problems, problems);
            break;
          }
          case 'view': {
            // The asz.view document the page serves, built over this root as it stands (withheld as `hide` says).
            const w = want as Record<string, unknown>;
            const hide = w.hide === undefined ? [] : w.hide;
            if (!Array.isArray(hide) || hide.some((h) => typeof h !== 'string'))
              throw new Error(`${this.file.replace(/\.yaml$/, '.expect.yaml')}: checkpoints.${cp}.view.hide: a list of categories`);
            const { got, problems } = viewFacts(dir, session, f.nodes, hide as string[]);
            for (const p of problems) fail(`${where}.${p.key}`, p.expected, p.got);
            for (const [k, v] of Object.entries(w)) {
              if (k === 'hide') continue;
              if (!(k in got)) throw new Error(`${this.file.replace(/\.yaml$/, '.expect.yaml')}: checkpoints.${cp}.view: unknown key "${k}"`);
              // What was withheld is named whole: a category the summary counts and the expectation leaves out fails too.
              const same = k === 'withheld' ? canonical(v) === canonical(got[k]) : partialEqual(v, got[k]);
              if (!same) fail(`${where}.${k}`, v, got[k]);
            }
            break;
          }
          case 'lose':
            for (const l of want as { stream?: string; run?: string; kind: string; nth?: number }[]) {
              const stream = l.stream ? (names.get(l.stream) ?? l.stream) : undefined;
              const files = listLanded(dir, session).filter((x) => {
                const h = readSessionData(x.path).header;
                return (
                  h.kind === l.kind && (stream === undefined || h.stream === stream) && (l.run === undefined || h.batch === (full.runs.get(l.run) ?? l.run))
                );
              });
              const target = files[(l.nth ?? 1) - 1];
              if (!target) {
                fail(`${where}`, l, '(no such landed file)');
                continue;
              }
              chmodSync(target.path, 0o644);
              rmSync(target.path);
            }
            break;
        }
      }
    }
    // A root a person damaged is checked too: an expectation says by `false` what cannot hold on it.
    for (const v of checkProperties({ scn, dir, session, format, root, at: CHECK_AT }, props)) fail(v.where, v.expected, v.got);
    for (const name of Object.keys(props)) if (name in NOT_EVALUATED) unchecked.push(`properties.${name} (${NOT_EVALUATED[name]})`);
    for (const k of scn.ignored) unchecked.push(`${k.path} (${k.reason})`);
    const status = failures.length ? 'failed' : unchecked.length ? 'incomplete' : 'passed';
    return { result: { scenario: scn.name, format, status, failures, unchecked, dir }, session };
  }
}

export function formatFailures(r: CheckResult): string[] {
  return r.failures.map((f) => `  ${f.where}\n    expected: ${JSON.stringify(f.expected)}\n    got:      ${JSON.stringify(f.got)}`);
}
