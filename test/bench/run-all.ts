/** `npm run bench`: every benchmark in turn, each printing its own JSON. */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

for (const b of ['collect.bench.js', 'assemble.bench.js', 'scenario.bench.js', 'view.bench.js', 'push.bench.js', 'receiver.bench.js']) {
  execFileSync(process.execPath, [fileURLToPath(new URL(`./${b}`, import.meta.url))], { stdio: 'inherit' });
}
