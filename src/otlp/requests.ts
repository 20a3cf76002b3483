/**
 * The structure of a logs or traces export request, as a receiver lands it: resource → scope →
 * items, each item with its own protobuf bytes (a slice of the request, as the client encoded
 * it) and its decoded message. Only the pieces are decoded, never the request as a whole, so an
 * item's bytes are exactly what came over the wire. Call only on bytes `checkedRequest` passed.
 */
import { otlpTypes, type Type } from './proto.js';
import { lengthDelimitedFields } from './wire.js';
import type { ResourceMsg, ScopeMsg } from './values.js';

export interface OtlpItem<T> {
  bytes: Buffer;
  message: T;
}

export interface ScopeGroup<T> {
  scope: ScopeMsg | undefined;
  items: OtlpItem<T>[];
}

export interface ResourceGroup<T> {
  resource: ResourceMsg | undefined;
  scopes: ScopeGroup<T>[];
}

/** Field numbers shared by ResourceLogs/ResourceSpans and ScopeLogs/ScopeSpans. */
const RESOURCE = 1;
const SCOPES = 2;
const SCOPE = 1;
const ITEMS = 2;
const TOP = 1;

/**
 * Decodes a singular message field that may occur more than once: protobuf merges repeated
 * occurrences, and decoding their concatenation is exactly that merge.
 */
function decodeMerged<T>(type: Type, buf: Buffer, slices: { start: number; end: number }[]): T | undefined {
  if (slices.length === 0) return undefined;
  const bytes = slices.length === 1 ? buf.subarray(slices[0]!.start, slices[0]!.end) : Buffer.concat(slices.map((s) => buf.subarray(s.start, s.end)));
  return type.decode(bytes) as unknown as T;
}

function groups<T>(buf: Buffer, itemType: Type): ResourceGroup<T>[] {
  const t = otlpTypes();
  const out: ResourceGroup<T>[] = [];
  for (const top of lengthDelimitedFields(buf)) {
    if (top.id !== TOP) continue;
    const fields = lengthDelimitedFields(buf, top.start, top.end);
    const resource = decodeMerged<ResourceMsg>(t.Resource, buf, fields.filter((f) => f.id === RESOURCE));
    const scopes: ScopeGroup<T>[] = [];
    for (const sf of fields) {
      if (sf.id !== SCOPES) continue;
      const inner = lengthDelimitedFields(buf, sf.start, sf.end);
      const scope = decodeMerged<ScopeMsg>(t.InstrumentationScope, buf, inner.filter((f) => f.id === SCOPE));
      const items: OtlpItem<T>[] = [];
      for (const f of inner) {
        if (f.id !== ITEMS) continue;
        const bytes = buf.subarray(f.start, f.end);
        items.push({ bytes, message: itemType.decode(bytes) as unknown as T });
      }
      scopes.push({ scope, items });
    }
    out.push({ resource, scopes });
  }
  return out;
}

export function logsRequestGroups<T>(buf: Buffer): ResourceGroup<T>[] {
  return groups<T>(buf, otlpTypes().LogRecord);
}

export function tracesRequestGroups<T>(buf: Buffer): ResourceGroup<T>[] {
  return groups<T>(buf, otlpTypes().Span);
}
