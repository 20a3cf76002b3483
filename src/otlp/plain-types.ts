/** What plain decoding (plain.ts) turns OTLP items into: JSON-shaped values, keys as OTLP names them. */
export type Plain = null | boolean | number | string | Plain[] | { [k: string]: Plain };
export type PlainObject = { [k: string]: Plain };

export interface PlainLogRecord {
  timeNs: bigint;
  observedNs: bigint;
  severityNumber: number;
  severityText: string;
  body: Plain | undefined;
  attributes: PlainObject;
  droppedAttributes: number;
  flags: number;
  traceId: string;
  spanId: string;
  eventName: string;
}

export interface PlainSpanEvent {
  timeNs: bigint;
  name: string;
  attributes: PlainObject;
}

export interface PlainSpanLink {
  traceId: string;
  spanId: string;
  attributes: PlainObject;
}

export interface PlainSpan {
  traceId: string;
  spanId: string;
  traceState: string;
  parentSpanId: string;
  flags: number;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: PlainObject;
  droppedAttributes: number;
  events: PlainSpanEvent[];
  links: PlainSpanLink[];
  status: { code: number; message: string } | undefined;
}

export interface PlainResource {
  attributes: PlainObject;
  droppedAttributes: number;
}

export interface PlainScope {
  name: string;
  version: string;
  attributes: PlainObject;
  droppedAttributes: number;
}
