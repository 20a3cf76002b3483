/**
 * A list in fixed chunks of a few thousand slots. A single JS array of tens of thousands of slots
 * lives in V8's large-object space, and allocating and growing such arrays cost milliseconds each
 * (measured in bench:assemble); chunks stay ordinary small objects. Slots never written read as
 * undefined.
 */
const CHUNK_BITS = 12;
const CHUNK = 1 << CHUNK_BITS;

export class ChunkedList<T> {
  private readonly chunks: T[][] = [];
  length = 0;

  get(i: number): T | undefined {
    return this.chunks[i >> CHUNK_BITS]?.[i & (CHUNK - 1)];
  }
  set(i: number, value: T): void {
    const c = i >> CHUNK_BITS;
    while (this.chunks.length <= c) this.chunks.push(new Array<T>(CHUNK)); // holey, so a sparse column stays fast elements
    this.chunks[c]![i & (CHUNK - 1)] = value;
    if (i >= this.length) this.length = i + 1;
  }
  push(value: T): number {
    this.set(this.length, value);
    return this.length - 1;
  }
}
