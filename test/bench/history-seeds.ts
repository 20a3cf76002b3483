/**
 * The seed sessions of `bench:history`: real Claude Code sessions recorded once with the lab
 * (`../shared/lab`, the real CLI against a scripted API on loopback) and kept in a cache
 * directory, so every later run replicates the same bytes without starting the CLI again.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { labRun, WORK_SCRIPT, type LabOptions } from '../helpers/lab.js';

/** The lab's CLI version: a new version records new seeds beside the old ones. */
const SEED_VERSION = '2.1.328-v1';

/** One kind of session a heavy user's history holds, as the lab makes it: a prompt, then resumed prompts. */
interface SeedKind {
  name: string;
  tools: string;
  prompts: string[];
}

const KINDS: SeedKind[] = [
  { name: 'tools', tools: 'Bash,Write,Edit', prompts: ['PARALLEL please', 'EDITFILE now', 'SLOWTOOL then', 'DENYME finally'] },
  { name: 'helpers', tools: 'Bash,Agent', prompts: ['DELEGATE a helper', 'PARALLEL after it'] },
  { name: 'resume', tools: 'Bash', prompts: ['PARALLEL first', 'PARALLEL second', 'SLOWAPI third', 'PARALLEL fourth'] },
  { name: 'compaction', tools: 'Bash', prompts: ['PARALLEL first', 'PARALLEL second', '/compact', 'PARALLEL after compaction'] },
];

export interface SeedSession {
  kind: string;
  /** The session's project directory under `projects/` (all of its files live below it). */
  projectDir: string;
  sessionId: string;
  /** Every file of the session, relative to `projectDir`: the transcript, subagent transcripts and sidecars. */
  files: string[];
  bytes: number;
}

export function benchCacheDir(): string {
  return process.env.ASZCOL_BENCH_CACHE ?? join(homedir(), '.cache', 'aszcol-bench');
}

function filesUnder(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p, base));
    else if (e.isFile()) out.push(relative(base, p));
  }
  return out.sort();
}

/** The files of the one session a seed's config directory holds. */
function readSeed(kind: string, home: string): SeedSession {
  const projects = join(home, 'projects');
  const [project] = readdirSync(projects);
  if (!project) throw new Error(`seed ${kind}: no project directory under ${projects}`);
  const projectDir = join(projects, project);
  const transcript = readdirSync(projectDir).find((n) => n.endsWith('.jsonl'));
  if (!transcript) throw new Error(`seed ${kind}: no transcript in ${projectDir}`);
  const files = filesUnder(projectDir);
  const bytes = files.reduce((n, f) => n + statSync(join(projectDir, f)).size, 0);
  return { kind, projectDir, sessionId: transcript.slice(0, -'.jsonl'.length), files, bytes };
}

/** Records one seed: the first prompt starts the session, each later one resumes it. */
async function record(kind: SeedKind, dir: string): Promise<void> {
  const work = `${dir}.recording`;
  rmSync(work, { recursive: true, force: true });
  const o: Omit<LabOptions, 'prompt'> = { configDir: join(work, 'home'), cwd: join(work, 'work'), script: WORK_SCRIPT, tools: kind.tools };
  let session: string | undefined;
  for (const prompt of kind.prompts) {
    const r = await labRun({ ...o, prompt, ...(session ? { resume: session } : {}) });
    session ??= r.session_id;
  }
  renameSync(work, dir); // only a complete recording gets the cache's name
}

/** The seeds, recorded with the lab the first time and read from the cache afterwards. */
export async function seedSessions(log: (m: string) => void = () => {}): Promise<SeedSession[]> {
  const root = join(benchCacheDir(), `history-seeds-${SEED_VERSION}`);
  mkdirSync(root, { recursive: true });
  const seeds: SeedSession[] = [];
  for (const kind of KINDS) {
    const dir = join(root, kind.name);
    if (!existsSync(dir)) {
      log(`recording the ${kind.name} seed with the lab (${kind.prompts.length} runs)`);
      await record(kind, dir);
    }
    seeds.push(readSeed(kind.name, join(dir, 'home')));
  }
  return seeds;
}
