// Removes compiled output so a deleted or renamed test never runs from a stale dist/.
import { rmSync } from 'node:fs';
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
