/**
 * A buffer reused from call to call, so a hot loop allocates once instead of per file, line or
 * flush. It grows by doubling when asked for more than it holds. What `take` returns is only
 * valid until the next `take` (a growth moves the bytes), and only for one user at a time.
 */
export class ScratchBuffer {
  private buf: Buffer | undefined;

  /** `initialBytes`: the size of the first buffer, made on the first `take`. */
  constructor(private readonly initialBytes = 0) {}

  /**
   * A buffer of at least `minBytes`. When the current one is too small, a larger one (at least
   * double) replaces it, with its first `keepBytes` bytes copied over.
   */
  take(minBytes: number, keepBytes = 0): Buffer {
    const cur = this.buf;
    if (cur && cur.length >= minBytes) return cur;
    const bigger = Buffer.allocUnsafe(Math.max(minBytes, this.initialBytes, cur ? cur.length * 2 : 0));
    if (cur && keepBytes > 0) cur.copy(bigger, 0, 0, Math.min(keepBytes, cur.length));
    this.buf = bigger;
    return bigger;
  }

  /** Lets go of the buffer when it is larger than `maxBytes` (one huge use need not be kept for good). */
  trim(maxBytes: number): void {
    if (this.buf && this.buf.length > maxBytes) this.buf = undefined;
  }

  /** The size of the buffer held now (0 when none). */
  get capacity(): number {
    return this.buf?.length ?? 0;
  }
}
