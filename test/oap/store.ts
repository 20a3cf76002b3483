/**
 * The OAP's two record tables for the test OAP: one row per accepted file, its id the service, the
 * instance and the digest (the same file pushed again by the same sender lands on the same row; by
 * another sender it makes another). A conversation is rebuilt from the rows as the OAP's view route
 * does, read across every sender of the service unless one is named, one copy of a file two senders
 * pushed, and rendered by our own reader and builder (the view extension's load and build), so the
 * document can be compared with the one our page serves.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, normalize } from 'node:path';
import { servedView } from '../../src/extensions/view/served-view.js';
import type { ConversationRow } from './lal.js';

export interface StoredRow extends ConversationRow {
  /** `asz.file`, the name the record carried. */
  file: string;
}

export class ConversationTables {
  private readonly rows = new Map<string, StoredRow>();
  /** How many times a row was written again by the same sender (an idempotent resend). */
  rewrites = 0;

  put(row: StoredRow): void {
    const id = `${row.service}\u0000${row.instance}\u0000${row.digest}`;
    if (this.rows.has(id)) this.rewrites++;
    this.rows.set(id, row);
  }

  all(): StoredRow[] {
    return [...this.rows.values()];
  }

  /** The conversations with at least one stored round, per service. */
  conversations(service: string): string[] {
    return [...new Set(this.all().flatMap((r) => (r.service === service && r.format === 'sf' ? [String(r.fields.conversation)] : [])))].sort();
  }

  /**
   * The `asz.view` document of one conversation of a service, optionally of one sender; undefined
   * when the service stores no round of it (the route's 404). Files are laid out under a scratch
   * root by the name each record carried, so our reader sees what a Sessionizer's root holds.
   */
  view(service: string, conversation: string, instance?: string): unknown {
    const mine = this.all().filter((r) => r.service === service && (instance === undefined || r.instance === instance));
    const byDigest = new Map<string, StoredRow>();
    for (const r of mine) if (!byDigest.has(r.digest)) byDigest.set(r.digest, r);
    const rounds = [...byDigest.values()].filter((r) => r.format === 'sf' && r.fields.conversation === conversation);
    if (!rounds.length) return undefined;
    // The sessions the rounds name, from each round's own first line (the OAP stores no session for a round).
    const sessions = new Set(rounds.map((r) => (JSON.parse(r.body.slice(0, r.body.indexOf('\n'))) as { session: string }).session));
    const files = [...rounds, ...[...byDigest.values()].filter((r) => r.format === 'sd' && sessions.has(String(r.fields.session)))];
    const root = mkdtempSync(join(tmpdir(), 'test-oap-view-'));
    try {
      for (const f of files) {
        const rel = normalize(f.file);
        if (!f.file || isAbsolute(rel) || rel.startsWith('..')) throw new Error(`a stored file names no place under a root: ${JSON.stringify(f.file)}`);
        mkdirSync(dirname(join(root, rel)), { recursive: true });
        writeFileSync(join(root, rel), f.body);
      }
      return JSON.parse(JSON.stringify(servedView(root, conversation).doc));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
}
