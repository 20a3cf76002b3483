/**
 * Waits until `check` holds, polling, for at most `timeoutMs`; returns whether it held. For
 * what lands asynchronously in another process (the receiver's landing thread), where a test
 * has no handle to wait on. Bounded: a test never hangs on it.
 */
export async function eventually(check: () => boolean, timeoutMs = 10_000, everyMs = 25): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
