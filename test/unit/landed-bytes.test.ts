/**
 * A landed file hashes the bytes it wrote, once encoded, instead of encoding every line a second
 * time for its digest. The ground truth is the in-memory builder, which still encodes each line as
 * a string for both: a file written through `WriteOnceFile` must hold the same bytes, carry the
 * same closing digest, and the digest must be SHA-256 of its own bytes — for plain text, text
 * outside ASCII and the BMP, and a line larger than the writer's output buffer.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SessionDataBuilder, SessionDataWriter, shortSha } from '../../src/formats/session-data/encode.js';
import type { SdRecord } from '../../src/formats/session-data/types.js';
import { WriteOnceFile } from '../../src/storage/write-once.js';
import { convertTranscriptLine } from '../../src/adapters/claude-code/dialect.js';
import { encodeRecord } from '../../src/formats/session-data/encode.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const header = {
  seq: 1,
  at: '2026-12-01T23:00:00.5Z',
  kind: 'transcript' as const,
  adapter: 'test/1',
  dialect: 'claude-code/1',
  src: 'p/s.jsonl',
  session: 's',
};

function record(ord: number, text: string): SdRecord {
  const source = Buffer.from(JSON.stringify({ text }));
  return {
    ord,
    off: ord * 100,
    sha: shortSha(source),
    bytes: source.length,
    id: `u${ord}`,
    parts: [{ k: 'text', state: 'available', bytes: Buffer.byteLength(text), text }],
  };
}

const texts = [
  'plain words',
  'é, 日本語, and an emoji 🧪 outside the BMP, with "quotes" and \\ backslashes\n',
  // Longer than the 1 MiB output buffer once encoded: written past the buffer, still hashed as written.
  'ü'.repeat(700_000),
  'after the long line',
];

describe('a landed file digests the bytes it wrote', () => {
  test('the file on disk equals the in-memory build, byte for byte and digest for digest', () => {
    const memory = new SessionDataBuilder(header);
    const path = join(tempDir('landed-bytes'), 'transcript-1.sd');
    const file = new WriteOnceFile(path);
    const disk = new SessionDataWriter(file, header);
    texts.forEach((t, i) => {
      memory.add(record(i + 1, t));
      disk.add(record(i + 1, t));
    });
    const built = memory.finish();
    const closed = disk.close();
    file.commit();
    const written = readFileSync(path);

    expect(written.equals(built.bytes)).toBe(true);
    expect(closed.digest).toBe(built.digest);
    expect(closed.records).toBe(texts.length);
    // Independent of both writers: the closing digest is SHA-256 of every byte before the closing line.
    const closingAt = written.lastIndexOf('\n', written.length - 2) + 1;
    expect(createHash('sha256').update(written.subarray(0, closingAt)).digest('hex')).toBe(closed.digest);
    expect(createHash('sha256').update(written).digest('hex')).toBe(closed.fileDigest);
    expect(written.toString('utf8')).toContain('🧪');
  });
});

describe('a part whose data the dialect measured is serialized once', () => {
  const call = {
    type: 'assistant',
    uuid: 'u-call',
    timestamp: '2026-12-01T23:00:01.000Z',
    message: {
      id: 'msg_1',
      role: 'assistant',
      model: 'm',
      content: [
        {
          type: 'tool_use',
          id: 'toolu_1',
          name: 'Write',
          input: { file_path: '/w/é.txt', content: 'line 1\n"quoted" 🧪\t\u0001', nested: { z: 1, a: [true, null] } },
        },
      ],
    },
  };
  const attachment = { type: 'attachment', uuid: 'u-att', attachment: { type: 'todo', items: [{ content: 'ü', status: 'pending' }], empty: '' } };
  const cases = [call, attachment].map((o) => Buffer.from(JSON.stringify(o)));

  test.each(cases.map((line, i) => [i, line] as const))(
    'record %i: the bytes are the plain serialization of the same record, and bytes counts its data',
    (_i, line) => {
      const r = { ord: 1, off: 0, sha: shortSha(line), bytes: line.length, ...convertTranscriptLine(line) } as SdRecord;
      // A spread copy of each part drops what the dialect kept (not enumerable), so it takes the plain path: the ground truth.
      const plain = { ...r, parts: r.parts.map((p) => ({ ...p })) };
      expect(encodeRecord(r)).toBe(encodeRecord(plain));
      const withData = r.parts.filter((p) => p.data !== undefined);
      expect(withData.length).toBeGreaterThan(0);
      for (const p of withData) expect(p.bytes).toBe(Buffer.byteLength(JSON.stringify(p.data)));
      // Nothing the dialect kept shows in the record's own keys or its JSON.
      expect(Object.keys(r.parts[0]!)).toEqual(Object.keys(plain.parts[0]!));
    },
  );
});
