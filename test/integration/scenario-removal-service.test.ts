import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { chainDir } from '../../src/storage/chain.js';
import { markedSessions, markerPath } from '../../src/storage/scenario-marker.js';
import { runCli } from '../helpers/cli.js';
import { startService } from '../helpers/service.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { attrs, sinkForTests } from './export-sink.js';
import { pipelineYaml } from './export-root.js';

afterAll(cleanupTemp);

const sink = sinkForTests();

/** A one-talk scenario ending in a tool result, so its metrics need no grace period. */
const SCENARIO = 'steps:\n  - input: is it up\n  - call: {text: Checking., tool: {name: Bash, input: {command: uptime}, result: up}}\n';

describe('the service removes a scenario session once all of it is sent', () => {
  test('collect, parse, derive, send, then the session, its sources, its chain and its marker are gone; the receiver holds the only copy', async () => {
    const dir = join(tempDir('aszcol-removal-svc-'), 'root');
    const file = join(dirname(dir), 'up.yaml');
    writeFileSync(file, SCENARIO);
    const built = await runCli(['scenario', 'build', file, '--out', dir, '--at', '2026-06-01T09:00:00Z']);
    expect(built.code).toBe(0);
    const [session] = markedSessions(dir);
    expect(session).toBeDefined();
    const cfg = join(dirname(dir), 'svc.yaml');
    writeFileSync(
      cfg,
      pipelineYaml(dir, { endpoint: sink.grpcAddress, instance_id: 'removal@box' }, { metrics: 'derived' }).replace(
        '    source_root:',
        '    interval: 300ms\n    source_root:',
      ),
    );
    const since = sink.received.length;
    const svc = startService(['--config', cfg]);
    try {
      await svc.waitFor((l) => l.msg === 'scenario sessions removed once sent', 60_000);
      expect(existsSync(join(dir, session!))).toBe(false);
      expect(existsSync(chainDir(dir, session!))).toBe(false);
      expect(existsSync(markerPath(dir, session!))).toBe(false);
      expect(readdirSync(join(dir, '_source', 'projects'))).toEqual([]);
      // Everything went to the receiver first: the transcript, its round, and the derived metrics.
      const logs = sink.received.slice(since).filter((x) => x.accepted && x.signal === 'logs');
      const kinds = logs.flatMap((x) =>
        x.request.resourceLogs.flatMap((rl: any) => rl.scopeLogs.flatMap((sl: any) => sl.logRecords.map((r: any) => attrs(r.attributes)['asz.file.kind']))),
      );
      expect(new Set(kinds)).toEqual(new Set(['transcript', 'round']));
      expect(sink.received.slice(since).some((x) => x.accepted && x.signal === 'metrics')).toBe(true);
    } finally {
      svc.child.kill('SIGTERM');
      expect((await svc.exited).code).toBe(0);
    }
  }, 120_000);
});
