/**
 * `parts_keep_source_bytes` (runtime formats): every landed record names the source bytes it came
 * from (`off`, `bytes`) and their digest (`sha`), and each `call`, `result`, `data` or `unknown`
 * part holding `data` must hold bytes found unchanged in that source record. Changes and media
 * derived beside a result are the adapter's own encoding and are skipped; a source rewritten whole
 * (a sidecar, a manifest, a script) is checked only in its newest landed file, since that is what
 * the source still holds.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readSessionData } from '../formats/session-data/decode.js';
import { CHANGES_SCHEMA } from '../formats/session-data/changes.js';
import { listLanded } from '../storage/landed-files.js';
import { manifestOf } from '../formats/session-data/provider-body.js';
import { SessionProviderBodies } from '../storage/provider-body-files.js';

interface Violation {
  where: string;
  expected: unknown;
  got: unknown;
}

/** Kinds read by position as they grow; every landed file of them still matches the source. */
const APPEND_KINDS = new Set(['transcript', 'journal']);
const DATA_PARTS = new Set(['call', 'result', 'data', 'unknown']);

const isDerived = (data: unknown) => typeof data === 'object' && data !== null && (data as { schema?: unknown }).schema === CHANGES_SCHEMA;

/** A provider body file holds many source files, one per record: each record's body rebuilds (with the session's earlier files) to its own file's bytes. */
function bodiesKeepSourceBytes(
  rel: string,
  seq: number,
  records: ReturnType<typeof readSessionData>['records'],
  bodies: SessionProviderBodies,
  bodyDir: string,
  out: Violation[],
): void {
  for (const [i, r] of records.entries()) {
    const src = manifestOf(r)?.src;
    const path = src === undefined ? undefined : join(bodyDir, src);
    if (!path || !existsSync(path)) continue;
    let rebuilt: string | { problem: string };
    try {
      rebuilt = bodies.bodyAt(seq, i + 1).toString('utf8');
    } catch (err) {
      rebuilt = { problem: (err as Error).message };
    }
    if (typeof rebuilt !== 'string' || rebuilt !== readFileSync(path, 'utf8'))
      out.push({
        where: `parts_keep_source_bytes: ${rel} record ${r.ord}`,
        expected: `the bytes of ${src}`,
        got: typeof rebuilt !== 'string' ? rebuilt.problem : 'other bytes',
      });
  }
}

export function partsKeepSourceBytes(root: string, session: string, sourceRoot: string, bodyDir: string): Violation[] {
  const out: Violation[] = [];
  const files = listLanded(root, session).map((l) => ({ l, sd: readSessionData(l.path) }));
  const newest = new Map<string, string>();
  for (const f of files) newest.set(f.sd.header.src, f.l.rel);
  const bodies = new SessionProviderBodies(files.filter((f) => f.sd.header.kind === 'provider_body').map((f) => ({ seq: f.l.seq, path: f.l.path })));
  for (const { l, sd } of files) {
    const { header } = sd;
    if (header.kind === 'provider_body') {
      bodiesKeepSourceBytes(l.rel, l.seq, sd.records, bodies, bodyDir, out);
      continue;
    }
    if (!APPEND_KINDS.has(header.kind) && newest.get(header.src) !== l.rel) continue;
    const path = join(sourceRoot, header.src);
    if (!existsSync(path)) continue; // a source the scenario never wrote (a lost child) has nothing to compare
    const source = readFileSync(path);
    for (const r of sd.records) {
      const where = `parts_keep_source_bytes: ${l.rel} record ${r.ord}`;
      const slice = source.subarray(r.off, r.off + r.bytes);
      const digest = createHash('sha256').update(slice).digest('hex').slice(0, r.sha.length);
      if (slice.length !== r.bytes || digest !== r.sha) {
        out.push({ where, expected: r.sha, got: `${digest} over bytes ${r.off}+${r.bytes} of ${header.src}` });
        continue;
      }
      const text = slice.toString('utf8');
      for (const p of r.parts) {
        if (!DATA_PARTS.has(p.k) || p.data === undefined || isDerived(p.data)) continue;
        const needle = typeof p.data === 'string' ? p.data : JSON.stringify(p.data);
        if (!text.includes(needle)) out.push({ where: `${where} ${p.k} part`, expected: 'its data as the source wrote it', got: needle.slice(0, 120) });
      }
    }
  }
  return out;
}
