/**
 * Withholding on the wire: a landed file as the exporter sends it when `hide` names categories.
 * asz 0.6 sends every file unchanged and withholds only in its view; this is aszcol's extension
 * of that contract. Each record whose content falls in a withheld category is sent as the view's
 * record endpoint serves it (formats/view/withhold.ts: parts keep kind, ids and `bytes`, lose
 * `text` and `data`, state `omitted`); every other line travels byte for byte. The closing line's
 * digest is taken again over the lines sent, so the body is a well-formed Session Data file and
 * `asz.file.digest` is still the digest of the body as received; the landed file's own digest
 * and size, which the rounds and push.state name, travel as `asz.withheld.file.digest` and
 * `asz.withheld.file.bytes`. Nothing on disk changes.
 */
import { createHash } from 'node:crypto';
import type { SdRecord } from '../../formats/session-data/types.js';
import { WITHHOLD_CATEGORIES, withholdRecord, type RecordClassifier, type WithholdCategory } from '../../formats/view/withhold.js';
import { i, s, type Attr } from '../../otlp/identity.js';

export interface WithheldFile {
  bytes: Buffer;
  /** The categories whose content was taken out, in the canonical order. */
  categories: WithholdCategory[];
  /** Records (lines) altered. */
  records: number;
}

/** A record line that names neither text nor data holds no content to withhold; it is not parsed. */
const TEXT_KEY = Buffer.from('"text":');
const DATA_KEY = Buffer.from('"data":');

/**
 * The file less what `hide` withholds, or undefined when no record changes (the file then travels
 * unchanged). The file was checked (records.ts) before: a header, records, a closing line.
 */
export function withholdLandedFile(bytes: Buffer, hide: ReadonlySet<WithholdCategory>, classify: RecordClassifier): WithheldFile | undefined {
  if (!hide.size) return undefined;
  const firstEnd = bytes.indexOf(10);
  const lastStart = bytes.lastIndexOf(10, bytes.length - 2) + 1;
  const kind = (JSON.parse(bytes.toString('utf8', 0, firstEnd)) as { kind?: unknown }).kind;
  const fileKind = typeof kind === 'string' ? kind : '';
  const pieces: Buffer[] = [];
  const categories = new Set<WithholdCategory>();
  let records = 0;
  let kept = 0; // where the bytes not yet copied start
  for (let start = firstEnd + 1; start < lastStart;) {
    const end = bytes.indexOf(10, start);
    const line = bytes.subarray(start, end);
    if (line.includes(TEXT_KEY) || line.includes(DATA_KEY)) {
      const record = JSON.parse(line.toString('utf8')) as SdRecord;
      const out = withholdRecord(record, fileKind, hide, classify);
      if (out.withheld.length) {
        pieces.push(bytes.subarray(kept, start), Buffer.from(JSON.stringify(out.record), 'utf8'));
        kept = end;
        records++;
        for (const c of out.withheld) categories.add(c);
      }
    }
    start = end + 1;
  }
  if (!records) return undefined;
  pieces.push(bytes.subarray(kept, lastStart));
  const content = Buffer.concat(pieces);
  const closing = JSON.parse(bytes.toString('utf8', lastStart, bytes.length - 1)) as Record<string, unknown>;
  closing.digest = createHash('sha256').update(content).digest('hex');
  return {
    bytes: Buffer.concat([content, Buffer.from(JSON.stringify(closing) + '\n', 'utf8')]),
    categories: WITHHOLD_CATEGORIES.filter((c) => categories.has(c)),
    records,
  };
}

/** Every record an exporter that withholds sends says so, with its list: a round too, so a receiver folding it knows its files were filtered. */
export function withholdingPolicyAttributes(hide: readonly WithholdCategory[]): Attr[] {
  return hide.length ? [s('asz.withheld.hide', WITHHOLD_CATEGORIES.filter((c) => hide.includes(c)).join(','))] : [];
}

/** What a record whose body was altered adds: what was taken out, and the landed file's own digest and size. */
export function withheldFileAttributes(w: WithheldFile, landed: { digest: string; bytes: number }): Attr[] {
  return [
    s('asz.withheld', w.categories.join(',')),
    i('asz.withheld.records', w.records),
    s('asz.withheld.file.digest', landed.digest),
    i('asz.withheld.file.bytes', landed.bytes),
  ];
}
