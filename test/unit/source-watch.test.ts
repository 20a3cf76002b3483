/**
 * The local receiver's watch over the source root: an append to a known source names its
 * session, a new session asks for a whole pass, and a file that is no session's is ignored.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { discover } from '../../src/adapters/claude-code/discovery.js';
import { SourceWatch } from '../../src/receivers/claude-code-local/source-watch.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const HELPER = 'a0123456789abcdef';

function watched() {
  const src = join(tempDir('aszcol-watch-'), 'projects');
  const project = join(src, '-home-me-work');
  mkdirSync(join(project, A, 'subagents'), { recursive: true });
  writeFileSync(join(project, `${A}.jsonl`), '{}\n');
  writeFileSync(join(project, A, 'subagents', `agent-${HELPER}.jsonl`), '{}\n');
  const heard: (string[] | undefined)[] = [];
  const waiters: (() => void)[] = [];
  const problems: string[] = [];
  const w = new SourceWatch(
    src,
    (s) => {
      heard.push(s);
      for (const res of waiters.splice(0)) res();
    },
    (m) => problems.push(m),
  );
  w.update(discover(src));
  const next = () => new Promise<string[] | undefined>((res) => waiters.push(() => res(heard.at(-1))));
  return { src, project, w, next, heard, problems };
}

describe('the source watch', () => {
  test('an append to a main or a helper transcript names its session', async () => {
    const { project, w, next, problems } = watched();
    try {
      expect(w.watched).toBe(4); // the root, the project, the session's own directory and its subagents/
      let heard = next();
      appendFileSync(join(project, `${A}.jsonl`), '{"more":1}\n');
      expect(await heard).toEqual([A]);
      heard = next();
      appendFileSync(join(project, A, 'subagents', `agent-${HELPER}.jsonl`), '{"more":1}\n');
      expect(await heard).toEqual([A]);
      expect(problems).toEqual([]);
    } finally {
      w.close();
    }
  });

  test("a new session asks for a whole pass; the runtime's other files beside the sessions do not", async () => {
    const { project, w, next, heard } = watched();
    try {
      const whole = next();
      writeFileSync(join(project, 'sessions-index.json'), '{}');
      mkdirSync(join(project, 'memory'));
      writeFileSync(join(project, `${B}.jsonl`), '{}\n');
      expect(await whole).toBeUndefined();
      // Every report so far was that one: the index file and memory/ reported nothing of their own.
      expect(heard).toEqual([undefined]);
    } finally {
      w.close();
    }
  });
});
