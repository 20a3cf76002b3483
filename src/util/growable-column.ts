/**
 * A typed array that grows by doubling: numbers held four or eight bytes each, where a JavaScript
 * array holds eight and, once the collector keeps it through a scavenge, copies it again.
 */
interface TypedArrayOf<T> {
  new (n: number): T;
}

abstract class GrowableColumn<T extends Int32Array | Float64Array> {
  protected data: T;
  /** How many values are held. */
  length = 0;
  constructor(
    private readonly Make: TypedArrayOf<T>,
    initial: number,
  ) {
    this.data = new Make(Math.max(16, initial));
  }
  push(v: number): void {
    if (this.length === this.data.length) this.grow(this.length + 1);
    this.data[this.length++] = v;
  }
  at(i: number): number {
    return this.data[i]!;
  }
  /** Drops every value from `length` on. */
  truncate(length: number): void {
    if (length < this.length) this.length = length;
  }
  /** The values held, as a view: valid until the next push. */
  view(): T {
    return this.data.subarray(0, this.length) as T;
  }
  private grow(min: number): void {
    const next = new this.Make(Math.max(min, this.data.length * 2));
    next.set(this.data.subarray(0, this.length));
    this.data = next;
  }
}

export class Int32Column extends GrowableColumn<Int32Array> {
  constructor(initial = 1024) {
    super(Int32Array, initial);
  }
}

export class Float64Column extends GrowableColumn<Float64Array> {
  constructor(initial = 256) {
    super(Float64Array, initial);
  }
}
