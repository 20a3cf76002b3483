/**
 * The structure of a logs or traces export request, as a receiver lands it: resource → scope →
 * items, each item with its own protobuf bytes (a slice of the request, exactly as the client
 * encoded it) and its content decoded to plain values (plain.ts). Call only on bytes
 * `checkedRequest` accepted.
 */
import { lengthDelimitedFields } from './wire.js';
import { PlainReader, type PlainLogRecord, type PlainResource, type PlainScope, type PlainSpan } from './plain.js';

export interface OtlpItem<T> {
  bytes: Buffer;
  message: T;
}

export interface ScopeGroup<T> {
  scope: PlainScope | undefined;
  items: OtlpItem<T>[];
}

export interface ResourceGroup<T> {
  resource: PlainResource | undefined;
  scopes: ScopeGroup<T>[];
}

/** Field numbers shared by ResourceLogs/ResourceSpans and ScopeLogs/ScopeSpans, and the requests' one field. */
const TOP = 1;
const RESOURCE = 1;
const SCOPES = 2;
const SCOPE = 1;
const ITEMS = 2;

/** One reader for the whole request; `decode` reads one item with it. */
function groups<T>(buf: Buffer, decode: (r: PlainReader, start: number, end: number) => T): ResourceGroup<T>[] {
  const reader = new PlainReader(buf);
  const out: ResourceGroup<T>[] = [];
  for (const top of lengthDelimitedFields(buf)) {
    if (top.id !== TOP) continue;
    const fields = lengthDelimitedFields(buf, top.start, top.end);
    const resourceSlices = fields.filter((f) => f.id === RESOURCE);
    const resource = resourceSlices.length ? reader.resource(resourceSlices) : undefined;
    const scopes: ScopeGroup<T>[] = [];
    for (const sf of fields) {
      if (sf.id !== SCOPES) continue;
      const inner = lengthDelimitedFields(buf, sf.start, sf.end);
      const scopeSlices = inner.filter((f) => f.id === SCOPE);
      const scope = scopeSlices.length ? reader.scope(scopeSlices) : undefined;
      const items: OtlpItem<T>[] = [];
      for (const f of inner) {
        if (f.id === ITEMS) items.push({ bytes: buf.subarray(f.start, f.end), message: decode(reader, f.start, f.end) });
      }
      scopes.push({ scope, items });
    }
    out.push({ resource, scopes });
  }
  return out;
}

export function logsRequestGroups(buf: Buffer): ResourceGroup<PlainLogRecord>[] {
  return groups(buf, (r, start, end) => r.logRecord(start, end));
}

export function tracesRequestGroups(buf: Buffer): ResourceGroup<PlainSpan>[] {
  return groups(buf, (r, start, end) => r.span(start, end));
}
