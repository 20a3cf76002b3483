/** The push benchmark's root: landed transcript files written directly, cut at 2 MiB as the collector cuts them. */
import { SessionDataWriter } from '../../src/formats/session-data/encode.js';
import { landedName, streamDir } from '../../src/storage/layout.js';
import { WriteOnceFile } from '../../src/storage/write-once.js';
import { join } from 'node:path';
import { rng, sessionId } from './corpus.js';

export const FILE_BYTES = 2 * 1024 * 1024;
const WORDS = 'the build failed because a test expected the older output so we update the fixture and run make check again'.split(' ');

/** Writes landed transcript files under `root` until `target` bytes: sessions of three streams, files cut at 2 MiB. */
export function generate(root: string, target: number, seed: number): number {
  const r = rng(seed);
  const text = (n: number) => {
    const out: string[] = [];
    let len = 0;
    while (len < n) {
      const w = WORDS[Math.floor(r() * WORDS.length)]!;
      out.push(w);
      len += w.length + 1;
    }
    return out.join(' ');
  };
  let total = 0;
  let s = 0;
  while (total < target) {
    const session = sessionId(seed * 10_000 + s++);
    let seq = 0;
    for (const stream of ['main', `a${s.toString(16).padStart(16, '0')}`, `b${s.toString(16).padStart(16, '0')}`]) {
      let ord = 0;
      for (let f = 0; f < 4 && total < target; f++) {
        seq++;
        const path = join(streamDir(root, session, stream), landedName('transcript', '20260601T090000.000000000Z', seq));
        const out = new WriteOnceFile(path);
        let size = 0;
        const sink = {
          write: (t: string) => {
            size += Buffer.byteLength(t);
            out.write(t);
          },
        };
        const w = new SessionDataWriter(sink, {
          seq,
          at: '2026-06-01T09:00:00.000000000Z',
          kind: 'transcript',
          adapter: 'claude-code-local/0.1.0',
          dialect: 'claude-code/1',
          src: `p/${session}.jsonl`,
          session,
          stream,
        } as never);
        while (size < FILE_BYTES) {
          ord++;
          const n = r() < 0.02 ? 200_000 : Math.floor(200 + r() * 6000);
          const t = text(n);
          w.add({
            ord,
            off: ord * 1000,
            sha: '0123456789ab',
            bytes: n,
            id: `${session}-${ord}`,
            call: ord % 3 ? `msg_${ord - (ord % 3)}` : undefined,
            from: ord % 3 ? 'agent' : 'runtime',
            time: new Date(Date.UTC(2026, 5, 1, 9) + ord * 1000).toISOString(),
            parts: [{ k: 'text', state: 'available', bytes: Buffer.byteLength(t), text: t }],
          });
        }
        w.close();
        out.commit();
        total += size;
      }
    }
  }
  return total;
}

if (process.argv[1]?.endsWith('push-corpus.js') && process.argv[2]) {
  process.stdout.write(`${generate(process.argv[2], Number(process.argv[3] ?? 320) * 1e6, 2)} bytes\n`);
}
