/**
 * What `aszcol parse` and `aszcol collect` remember of a configuration they loaded, so that a parse
 * or a one-shot collect with nothing new need not load the YAML reader and every component's
 * factory again (about 0.2 s of CPU) to learn the few things they use: the storage root and the
 * round budget, and for collect the local receiver's settings. An answer is kept only for a
 * configuration that loaded without a problem, and is used only while everything that decided it
 * is the same: the `--config` argument as written and the working directory, the file's text, the
 * value of every environment variable the loading read (set or not), and this build of aszcol. Any
 * difference sends the parse the long way, which reports a bad configuration as before.
 *
 * Kept in one small file under the user's cache directory (`$XDG_CACHE_HOME/aszcol/`, else
 * `~/.cache/aszcol/`), the most recent few configurations only. A cache: when it cannot be read or
 * written, parse takes the long way and says nothing.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { LocalReceiverConfig } from '../receivers/claude-code-local/config.js';

export interface ConfigAnswer {
  /** `--config` as written; null for the embedded default. */
  given: string | null;
  cwd: string;
  build: string;
  /** The file's text when it was loaded; null for the embedded default. */
  text: string | null;
  /** Every environment variable the loading read, with its value then (null: unset). */
  env: Record<string, string | null>;
  /** The configuration's name as the CLI prints it. */
  source: string;
  storageRoot: string;
  /** `processors.assembler.max_round_bytes`, read. */
  maxRoundBytes: number;
  /** The local receiver's settings as `collect` reads them; absent when the answer was left by a parse. */
  collect?: LocalReceiverConfig;
}

interface AnswersFile {
  answers: ConfigAnswer[];
}

/** The configurations remembered: a user has a few; a test suite's many temporary ones only push out the oldest. */
const KEEP = 8;

const answersPath = (env: NodeJS.ProcessEnv) => join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'aszcol', 'parse-config-answers.json');

/**
 * This build: aszcol's version and the compiled configuration loader's and registry's file times and
 * sizes (`tsc` writes every output on each build, so a changed validation anywhere moves them).
 */
export function buildIdentity(): string {
  const here = new URL('../', import.meta.url);
  const facts = ['service/config.js', 'service/registry.js'].map((f) => {
    const st = statSync(new URL(f, here));
    return `${st.mtimeMs}/${st.size}`;
  });
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', here), 'utf8')) as { version?: string };
  return [pkg.version ?? '?', ...facts].join(' ');
}

function readText(given: string | null): string | null | undefined {
  if (given === null) return null;
  try {
    return readFileSync(given, 'utf8');
  } catch {
    return undefined;
  }
}

function loadAnswers(env: NodeJS.ProcessEnv): AnswersFile {
  try {
    const o = JSON.parse(readFileSync(answersPath(env), 'utf8')) as Partial<AnswersFile>;
    return { answers: Array.isArray(o.answers) ? o.answers : [] };
  } catch {
    return { answers: [] };
  }
}

const sameEnv = (recorded: Record<string, string | null>, env: NodeJS.ProcessEnv) =>
  Object.entries(recorded).every(([k, v]) => (Object.hasOwn(env, k) ? env[k] : undefined) === (v ?? undefined));

/** The remembered answer for `--config given` here and now, or undefined when anything that decided it changed. */
export function rememberedAnswer(given: string | undefined, env: NodeJS.ProcessEnv): ConfigAnswer | undefined {
  const key = given ?? null;
  const cwd = process.cwd();
  const a = loadAnswers(env).answers.find((x) => x.given === key && x.cwd === cwd);
  if (!a || typeof a.storageRoot !== 'string' || typeof a.maxRoundBytes !== 'number' || typeof a.env !== 'object' || a.env === null) return undefined;
  if (readText(key) !== a.text || !sameEnv(a.env, env)) return undefined;
  try {
    if (buildIdentity() !== a.build) return undefined;
  } catch {
    return undefined;
  }
  return a;
}

/**
 * An environment that records every variable asked of it, for loading a configuration whose answer
 * is to be remembered; one that was listed whole (not done by the loader today) is not remembered.
 */
export function recordingEnv(base: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; read: () => Record<string, string | null> | undefined } {
  const copy: NodeJS.ProcessEnv = { ...base };
  const read: Record<string, string | null> = {};
  let listed = false;
  const note = (k: string | symbol) => {
    if (typeof k === 'string') read[k] = Object.hasOwn(copy, k) ? (copy[k] ?? null) : null;
  };
  const env = new Proxy(copy, {
    get: (t, k) => (note(k), Reflect.get(t, k)),
    has: (t, k) => (note(k), Reflect.has(t, k)),
    getOwnPropertyDescriptor: (t, k) => (note(k), Reflect.getOwnPropertyDescriptor(t, k)),
    ownKeys: (t) => ((listed = true), Reflect.ownKeys(t)),
  });
  return { env, read: () => (listed ? undefined : { ...read }) };
}

/** Remembers `answer` (replacing an older one for the same argument and directory); a cache that cannot be written is left as it is. */
export function rememberAnswer(answer: ConfigAnswer, env: NodeJS.ProcessEnv): void {
  const path = answersPath(env);
  const others = loadAnswers(env).answers.filter((x) => !(x.given === answer.given && x.cwd === answer.cwd));
  const file: AnswersFile = { answers: [answer, ...others].slice(0, KEEP) };
  try {
    mkdirSync(join(path, '..'), { recursive: true });
    const tmp = `${path}.tmp-${process.pid}`;
    writeFileSync(tmp, JSON.stringify(file) + '\n');
    renameSync(tmp, path);
  } catch {
    // A cache: without it every parse takes the long way.
  }
}

/**
 * A watch for a long-way parse or collect with `--config given` (parse.ts's `ParseWatch`,
 * collect-config.ts): the configuration is read through a recording environment, and its answer
 * remembered when it loaded and its file did not change meanwhile.
 */
export function watchConfig(given: string | undefined, base: NodeJS.ProcessEnv) {
  const key = given ?? null;
  const before = readText(key);
  const rec = recordingEnv(base);
  return {
    env: rec.env,
    configured: (cfg: { source: string; storageRoot: string }, maxRoundBytes: number, collect?: LocalReceiverConfig) => {
      const env = rec.read();
      if (env === undefined || before === undefined || readText(key) !== before) return;
      let build: string;
      try {
        build = buildIdentity();
      } catch {
        return;
      }
      rememberAnswer(
        {
          given: key,
          cwd: process.cwd(),
          build,
          text: before,
          env,
          source: cfg.source,
          storageRoot: cfg.storageRoot,
          maxRoundBytes,
          ...(collect ? { collect } : {}),
        },
        base,
      );
    },
  };
}
