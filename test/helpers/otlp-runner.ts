/**
 * Runs the claude_code_otlp receiver alone in its own process, for tests that must see the
 * process survive what it is sent (or be killed mid-way). Usage:
 *   node otlp-runner.js <storage-root> '<receiver config as JSON>' [shutdown timeout in ms]
 * Prints one JSON line with the bound addresses once listening; on SIGTERM shuts down
 * gracefully, prints the final stats as one JSON line and exits 0.
 */
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';

const [root, cfgJson, shutdownMs] = process.argv.slice(2);
const receiver = new OtlpReceiver(validateOtlpReceiverConfig(JSON.parse(cfgJson ?? '{}')), {
  storageRoot: root!,
  log: (level, msg, fields) => process.stderr.write(JSON.stringify({ level, msg, ...fields }) + '\n'),
});
await receiver.start();
process.on('SIGTERM', () => {
  void receiver.shutdown(shutdownMs ? Number(shutdownMs) : undefined).then(() => {
    process.stdout.write(JSON.stringify({ stats: receiver.stats() }) + '\n');
    process.exit(0);
  });
});
// Only now say where it listens: a pipe write is synchronous, so the parent may signal at once.
process.stdout.write(JSON.stringify({ addresses: receiver.addresses(), pid: process.pid }) + '\n');
