import { join } from 'node:path';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import type { Header, SdRecord } from '../../src/formats/session-data/types.js';
import { landedDirs, listDir, parseLandedName } from '../../src/storage/layout.js';

export interface LandedFile {
  path: string;
  seq: number;
  header: Header;
  records: SdRecord[];
}

/** Every landed file of a session, read and checked, in sequence order. */
export function landedFiles(root: string, session: string): LandedFile[] {
  const out: LandedFile[] = [];
  for (const { dir } of landedDirs(root, session)) {
    for (const name of listDir(dir)) {
      const p = parseLandedName(name);
      if (!p) continue;
      const path = join(dir, name);
      const { header, records } = readSessionData(path);
      out.push({ path, seq: p.seq, header, records });
    }
  }
  return out.sort((a, b) => a.seq - b.seq);
}

export function recordsOf(files: LandedFile[], pred: (h: Header) => boolean = () => true): SdRecord[] {
  return files.filter((f) => pred(f.header)).flatMap((f) => f.records);
}
