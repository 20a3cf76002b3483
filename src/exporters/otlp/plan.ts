/**
 * What a pass sends, in order. Logs: session by session, the session landed first going first,
 * its landed files by sequence, then the rounds assembled from it, so a receiver can rebuild the
 * sessions one after another during a long first push. Metrics: the `_metrics/` spool by name.
 * Only names are listed here; files are read when their batch is built.
 */
import { statSync } from 'node:fs';
import { listConversations, listRounds, CONVERSATIONS } from '../../storage/chain.js';
import { landedSessions, listLanded } from '../../storage/landed-files.js';
import { readFirstLine } from '../../storage/first-line.js';
import { parseLandedName } from '../../storage/layout.js';
import { MetricsSpool, type MetricsSource } from '../../storage/metrics-spool.js';

export interface PlannedFile {
  rel: string;
  path: string;
  format: 'sd' | 'sf' | 'metrics';
  session?: string;
}

/** Which session a conversation's rounds were assembled from; rounds are immutable, so it is remembered. */
export class ConversationSessions {
  private readonly known = new Map<string, string>();

  sessionOf(root: string, conversation: string): string | undefined {
    const k = this.known.get(conversation);
    if (k !== undefined) return k;
    for (const r of listRounds(root, conversation)) {
      let line: string | undefined;
      try {
        if (statSync(r.path).size === 0) continue;
        line = readFirstLine(r.path);
      } catch {
        continue;
      }
      try {
        const h = JSON.parse(line ?? '') as { session?: unknown };
        if (typeof h.session === 'string') {
          this.known.set(conversation, h.session);
          return h.session;
        }
      } catch {
        /* a bad round is reported when it is read for sending */
      }
    }
    return undefined;
  }
}

/**
 * The landed files and rounds not yet sent, in sending order. `sent` is what push.state holds
 * for this receiver.
 */
export function planLogs(root: string, sent: ReadonlyMap<string, string>, conv: ConversationSessions): PlannedFile[] {
  const sessions = landedSessions(root)
    .map((session) => {
      const files = listLanded(root, session);
      let first = '~';
      for (const f of files) {
        const stamp = parseLandedName(f.path.slice(f.path.lastIndexOf('/') + 1))?.stamp;
        if (stamp && stamp < first) first = stamp;
      }
      return { session, files, first };
    })
    .filter((s) => s.files.length > 0)
    .sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : a.session < b.session ? -1 : a.session > b.session ? 1 : 0));
  const roundsBySession = new Map<string, string[]>();
  const orphans: string[] = [];
  for (const c of listConversations(root)) {
    const s = conv.sessionOf(root, c);
    if (s === undefined) orphans.push(c);
    else (roundsBySession.get(s) ?? roundsBySession.set(s, []).get(s)!).push(c);
  }
  const out: PlannedFile[] = [];
  const rounds = (conversation: string, session?: string) => {
    for (const r of listRounds(root, conversation)) {
      const rel = `${CONVERSATIONS}/${conversation}/rounds/${r.name}`;
      if (sent.has(rel)) continue;
      try {
        if (statSync(r.path).size === 0) continue; // a writer's reservation, not a round yet
      } catch {
        continue;
      }
      out.push({ rel, path: r.path, format: 'sf', session });
    }
  };
  const listed = new Set<string>();
  for (const s of sessions) {
    listed.add(s.session);
    for (const f of s.files) if (!sent.has(f.rel)) out.push({ rel: f.rel, path: f.path, format: 'sd', session: s.session });
    for (const c of roundsBySession.get(s.session) ?? []) rounds(c, s.session);
  }
  // Rounds whose session has no landed files here (removed, or landed elsewhere) still go.
  for (const [s, convs] of roundsBySession) if (!listed.has(s)) for (const c of convs) rounds(c, s);
  for (const c of orphans) rounds(c);
  return out;
}

/** The spooled metrics requests of one source not yet sent, by name (which orders them in time). */
export function planMetrics(root: string, sent: ReadonlyMap<string, string>, source: MetricsSource): PlannedFile[] {
  return new MetricsSpool(root)
    .list(source)
    .map((f) => ({ rel: f.rel, path: f.path, format: 'metrics' as const }))
    .filter((f) => !sent.has(f.rel));
}
