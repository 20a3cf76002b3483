import type { IndexEntry } from '../storage/index.js';
import type { StreamInfo } from './context.js';

/**
 * Stage 2. A record's stream is the file it was landed from — never a field in the record.
 * Run files (journals, manifests, scripts) are kept by their batch.
 */
export function partitionStreams(live: IndexEntry[]): { streams: Map<string, StreamInfo>; runs: Map<string, IndexEntry[]> } {
  const streams = new Map<string, StreamInfo>();
  const runs = new Map<string, IndexEntry[]>();
  const streamFor = (name: string) => {
    let s = streams.get(name);
    if (!s) streams.set(name, (s = { name, role: name === 'main' ? 'main' : 'child', records: [], meta: [] }));
    return s;
  };
  for (const e of live) {
    if (e.fileKind === 'transcript' && e.stream) {
      const s = streamFor(e.stream);
      s.records.push(e);
      if (e.fileBatch) s.batch = e.fileBatch;
    } else if (e.fileKind === 'agent_meta' && e.stream) {
      streamFor(e.stream).meta.push(e);
    } else if ((e.fileKind === 'journal' || e.fileKind === 'workflow_manifest' || e.fileKind === 'workflow_script') && e.fileBatch) {
      (runs.get(e.fileBatch) ?? runs.set(e.fileBatch, []).get(e.fileBatch)!).push(e);
    }
  }
  return { streams, runs };
}

/** A stream has landed when its transcript has; a sidecar alone does not make a stream. */
export const streamLanded = (s: StreamInfo | undefined) => !!s && s.records.length > 0;
