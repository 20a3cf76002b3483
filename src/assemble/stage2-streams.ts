import type { IndexEntry } from '../storage/index.js';
import type { StreamInfo } from './context.js';

/**
 * Stage 2. A record's stream is the file it was landed from — never a field in the record.
 * Run files (journals, manifests, scripts) are kept by their batch. The runtime's telemetry and
 * provider bodies are listed apart in landed order, so the stages that read them (9 and the
 * bodies' join) walk only them, not every record again.
 */
export function partitionStreams(live: IndexEntry[]): { streams: Map<string, StreamInfo>; runs: Map<string, IndexEntry[]>; telemetry: IndexEntry[] } {
  const streams = new Map<string, StreamInfo>();
  const runs = new Map<string, IndexEntry[]>();
  const telemetry: IndexEntry[] = [];
  const streamFor = (name: string) => {
    let s = streams.get(name);
    if (!s) streams.set(name, (s = { name, role: name === 'main' ? 'main' : 'child', records: [], meta: [] }));
    return s;
  };
  for (const e of live) {
    const kind = e.fileKind;
    if (kind === 'otlp_log' || kind === 'otlp_span' || kind === 'provider_body') telemetry.push(e);
    else if (kind === 'transcript' && e.stream) {
      const s = streamFor(e.stream);
      s.records.push(e);
      if (e.fileBatch) s.batch = e.fileBatch;
    } else if (kind === 'agent_meta' && e.stream) {
      streamFor(e.stream).meta.push(e);
    } else if ((kind === 'journal' || kind === 'workflow_manifest' || kind === 'workflow_script') && e.fileBatch) {
      (runs.get(e.fileBatch) ?? runs.set(e.fileBatch, []).get(e.fileBatch)!).push(e);
    }
  }
  return { streams, runs, telemetry };
}

/** A stream has landed when its transcript has; a sidecar alone does not make a stream. */
export const streamLanded = (s: StreamInfo | undefined) => !!s && s.records.length > 0;
