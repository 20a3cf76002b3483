import { readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from '@jest/globals';
import { runCli, writeConfig } from './cli.js';
import { rec, writeLines } from './transcript.js';

export const settledSid = (i: number) => `51c0ffee-1111-4222-8333-${String(i).padStart(12, '0')}`;

/** Every directory under `dir` set back an hour, so a parse may trust their times and stamp the sessions (a real root gets there by waiting). */
export function ageDirs(dir: string): void {
  const t = Date.now() / 1000 - 3600;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
    utimesSync(d, t, t);
  };
  walk(dir);
}

/**
 * A root with `n` sessions (two lines each) collected, parsed and, after its directories aged, parsed
 * again so every session is stamped; the config names it (written by `configText` when given).
 */
export async function settledRoot(base: string, n: number, env: NodeJS.ProcessEnv, configText?: (root: string, src: string) => string) {
  const root = join(base, 'data');
  const src = join(base, 'projects');
  const config = configText ? join(base, 'aszcol.yaml') : writeConfig(base, root, src);
  if (configText) (await import('node:fs')).writeFileSync(config, configText(root, src));
  for (let i = 0; i < n; i++)
    writeLines(join(src, '-p', `${settledSid(i)}.jsonl`), [
      rec.user(settledSid(i), `hello ${i}`),
      rec.assistant(settledSid(i), `msg_${i}`, [{ type: 'text', text: `hi ${i}` }]),
    ]);
  expect((await runCli(['collect', '--once', '--config', config], { env })).code).toBe(0);
  expect((await runCli(['parse', '--config', config], { env })).code).toBe(0);
  ageDirs(root);
  // This parse stamps every session (their directories' times are old enough to trust).
  expect((await runCli(['parse', '--config', config], { env })).code).toBe(0);
  return { root, src, config };
}
