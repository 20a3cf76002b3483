import { join } from 'node:path';
import { loadScenario } from './files.js';
import { ScenarioRoot, type Format } from './run.js';
import { generate, sessionIdFor } from './generate.js';
import type { Scenario } from './model.js';
import type { RemovalPolicy } from '../storage/scenario-marker.js';

export interface BuildOptions {
  format: Format;
  out: string;
  at?: string;
  scale?: number;
  interval?: number;
  repeat?: number;
  everyMs?: number;
  pick?: 'cycle' | 'random';
  seed?: number;
  through?: string;
  /** When a pipeline may remove each session once it is sent (`claude-code` only). */
  remove?: RemovalPolicy;
}

/** The id of the k-th repeated session: the scenario's own, counted up in its last group. */
function nthSession(base: string, k: number): string {
  if (k === 0) return base;
  const tail = base.slice(-12);
  const n = (parseInt(tail, 16) + k) % 2 ** 48;
  return base.slice(0, -12) + n.toString(16).padStart(12, '0');
}

/** A feed's session id carries the moment it was written, so a restarted feed never reuses one. */
function feedSession(ms: number, k: number): string {
  const h = ms.toString(16).padStart(12, '0');
  return `fee0${k.toString(16).padStart(4, '0').slice(-4)}-0000-4000-8000-${h.slice(-12)}`;
}

function rng(seed: number): () => number {
  let s = seed >>> 0 || Date.now() >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

export interface BuiltSession {
  session: string;
  scenario: string;
  records: number;
  bytes: number;
  /** Keys the scenario wrote that this build does not generate yet, with why. */
  notGenerated: string[];
}

export async function buildScenarios(files: string[], o: BuildOptions, onSession: (s: BuiltSession) => void, stop: () => boolean = () => false): Promise<void> {
  // An sd build writes no source, so nothing of it can be marked for removal.
  if (o.remove !== undefined && o.format !== 'claude-code')
    throw new Error('--remove is for --format claude-code only: an sd build writes no source files to remove');
  const scenarios: Scenario[] = files.map(loadScenario);
  const random = rng(o.seed ?? 0);
  const pick = (k: number) => (o.pick === 'random' ? scenarios[Math.floor(random() * scenarios.length)]! : scenarios[k % scenarios.length]!);
  let clock = o.at === undefined || o.at === 'now' ? Date.now() : Date.parse(o.at);
  if (Number.isNaN(clock)) throw new Error(`--at ${o.at} is not an RFC 3339 time`);
  const count = o.repeat ?? (o.everyMs ? Infinity : 1);
  for (let k = 0; k < count && !stop(); k++) {
    const scn = pick(k);
    let session = nthSession(sessionIdFor(scn), k);
    let at = clock;
    if (o.everyMs) {
      // A feed's session ends now: measure its length, then start it that long ago.
      const now = Date.now();
      const probe = generate(scn, { at: 0, scale: o.scale, interval: o.interval });
      at = now - (probe.end - probe.start);
      session = feedSession(now, k);
    }
    const root = new ScenarioRoot(o.out, o.format, scn, at, { scale: o.scale, interval: o.interval, session, remove: o.remove });
    const built = root.build(o.through, { collect: false });
    let bytes = 0;
    for (const c of built.generated.files.values()) bytes += Buffer.byteLength(c);
    onSession({
      session,
      scenario: scn.name,
      records: built.collect?.landedRecords ?? 0,
      bytes,
      notGenerated: scn.ignored.map((i) => `${i.path} (${i.reason})`),
    });
    clock = built.generated.end + (o.interval ?? scn.interval);
    if (o.everyMs && k + 1 < count) await new Promise((r) => setTimeout(r, o.everyMs));
  }
}

export const sourceRootOf = (out: string, format: Format) =>
  format === 'claude-code' ? join(out, '_source', 'projects') : join(out, '_scenario', 'sd-source');
