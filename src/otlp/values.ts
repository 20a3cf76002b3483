/** Small helpers for the values protobufjs produces and takes for OTLP's 64-bit fields. */
import protobuf from 'protobufjs';

const Long = protobuf.util.Long as unknown as { fromString(s: string, unsigned: boolean): object };

/** A nanosecond time as protobufjs wants a fixed64. */
export const nanos = (ns: bigint): object => Long.fromString(ns.toString(), true);

/** A protobufjs Long (from the `long` package) as far as these helpers read it. */
export interface LongLike {
  low: number;
  high: number;
  unsigned?: boolean;
}

/** A protobufjs 64-bit value as a BigInt, signed or not as the value says (or as asked). */
export function toBigInt(v: number | LongLike | undefined | null, unsigned = false): bigint {
  if (v === undefined || v === null) return 0n;
  if (typeof v === 'number') return BigInt(Math.trunc(v));
  const u = (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
  return unsigned || v.unsigned ? u : BigInt.asIntN(64, u);
}

/** An int64 as a JSON number when exact, else as its decimal string. */
export function intPlain(v: number | LongLike | undefined): number | string {
  const b = toBigInt(v);
  return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b.toString();
}
