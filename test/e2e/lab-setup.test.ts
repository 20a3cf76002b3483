/**
 * `aszcol setup claude-code` as a new user runs it: it writes Claude Code's settings.json from the
 * configuration, and then the real runtime (through ../shared/lab, with no OTLP options of the lab's
 * own) exports to the receiver that configuration names. Ground truth: the mock API's request log.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import { runCli } from '../helpers/cli.js';
import { labRun, readRequestLog } from '../helpers/lab.js';
import { landedFiles } from '../helpers/root.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

function configWith(dir: string, otlp: string): string {
  const file = join(dir, 'aszcol.yaml');
  writeFileSync(
    file,
    `storage:\n  root: ${JSON.stringify(join(dir, 'data'))}\nreceivers:\n  claude_code_otlp:\n    protocols:\n${otlp}\nservice:\n  pipelines:\n    sessions:\n      receivers: [claude_code_otlp]\n`,
  );
  return file;
}

const settingsOf = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as { env: Record<string, string>; [k: string]: unknown };

describe('aszcol setup claude-code', () => {
  const base = tempDir('aszcol-setup-');

  test("merges the telemetry variables into the user's settings, keeps the rest and a backup, and changes nothing the second time", async () => {
    const dir = join(base, 'merge');
    mkdirSync(join(dir, 'home'), { recursive: true });
    const cfg = configWith(dir, '      grpc:\n        endpoint: 0.0.0.0:4999\n      http:\n        endpoint: 127.0.0.1:4998');
    const settings = join(dir, 'home', 'settings.json');
    const before = JSON.stringify({ model: 'opus', env: { KEEP_ME: 'yes', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://elsewhere:1' } }, null, 2);
    writeFileSync(settings, before);
    const env = { CLAUDE_CONFIG_DIR: join(dir, 'home') };

    const first = await runCli(['setup', 'claude-code', '--config', cfg], { env });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const after = settingsOf(settings);
    expect(after.model).toBe('opus');
    expect(after.env).toEqual({
      KEEP_ME: 'yes',
      // A receiver on every interface is reached through loopback from the same machine.
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4999',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      CLAUDE_CODE_ENABLE_TELEMETRY: '1',
      OTEL_LOGS_EXPORTER: 'otlp',
      OTEL_METRICS_EXPORTER: 'otlp',
    });
    expect(first.stdout).toContain('~ OTEL_EXPORTER_OTLP_ENDPOINT: http://elsewhere:1 -> http://127.0.0.1:4999');
    expect(first.stdout).toContain('+ CLAUDE_CODE_ENABLE_TELEMETRY=1');
    const backups = readdirSync(join(dir, 'home')).filter((n) => n.startsWith('settings.json.aszcol-backup-'));
    expect(backups).toHaveLength(1);
    expect(readFileSync(join(dir, 'home', backups[0]!), 'utf8')).toBe(before);

    const second = await runCli(['setup', 'claude-code', '--config', cfg], { env });
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/nothing changed/);
    expect(readdirSync(join(dir, 'home')).filter((n) => n.startsWith('settings.json.aszcol-backup-'))).toHaveLength(1);

    // The HTTP port and protocol when asked, with the optional switches.
    const http = await runCli(['setup', 'claude-code', '--config', cfg, '--protocol', 'http', '--prompts', '--traces'], { env });
    expect(http.code).toBe(0);
    expect(settingsOf(settings).env).toMatchObject({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4998',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_LOG_USER_PROMPTS: '1',
      OTEL_TRACES_EXPORTER: 'otlp',
      CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
    });
  });

  test('--print writes nothing; a settings file it cannot read is left as it is; a configuration with no OTLP receiver is refused', async () => {
    const dir = join(base, 'refuse');
    mkdirSync(join(dir, 'home'), { recursive: true });
    const cfg = configWith(dir, '      grpc:\n        endpoint: 127.0.0.1:4997');
    const settings = join(dir, 'home', 'settings.json');

    const printed = await runCli(['setup', 'claude-code', '--config', cfg, '--print', '--settings', settings]);
    expect(printed.code).toBe(0);
    expect(existsSync(settings)).toBe(false);
    expect(printed.stdout).toContain(`export OTEL_EXPORTER_OTLP_ENDPOINT='http://127.0.0.1:4997'`);
    expect(JSON.parse(printed.stdout.slice(0, printed.stdout.indexOf('\n}') + 2)).env.OTEL_LOGS_EXPORTER).toBe('otlp');

    writeFileSync(settings, '{"env": {"A": "1"},');
    const broken = await runCli(['setup', 'claude-code', '--config', cfg, '--settings', settings]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`${settings}: not valid JSON`);
    expect(readFileSync(settings, 'utf8')).toBe('{"env": {"A": "1"},');

    writeFileSync(settings, '{"env": ["not", "an", "object"]}');
    const wrongEnv = await runCli(['setup', 'claude-code', '--config', cfg, '--settings', settings]);
    expect(wrongEnv.code).toBe(1);
    expect(wrongEnv.stderr).toContain('"env" must be an object');

    const noOtlp = join(dir, 'local-only.yaml');
    writeFileSync(
      noOtlp,
      `storage:\n  root: ${JSON.stringify(join(dir, 'data'))}\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(dir)}\n`,
    );
    const refused = await runCli(['setup', 'claude-code', '--config', noOtlp, '--settings', settings]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('has no claude_code_otlp receiver');

    const badProtocol = await runCli(['setup', 'claude-code', '--config', cfg, '--protocol', 'udp']);
    expect(badProtocol.code).toBe(2);
    expect(badProtocol.stderr).toContain('--protocol udp: expected grpc or http');
  });

  test('the real Claude Code, configured only by what setup wrote, exports every provider call to the receiver', async () => {
    const dir = join(base, 'lab');
    const home = join(dir, 'home');
    mkdirSync(home, { recursive: true });
    const port = await freePort();
    const cfg = configWith(dir, `      grpc:\n        endpoint: 127.0.0.1:${port}`);
    const setup = await runCli(['setup', 'claude-code', '--config', cfg], { env: { CLAUDE_CONFIG_DIR: home } });
    expect(setup.code).toBe(0);

    const root = join(dir, 'data');
    const receiver = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { grpc: { endpoint: `127.0.0.1:${port}` } } }), { storageRoot: root });
    await receiver.start();
    try {
      const log = join(dir, 'requests.jsonl');
      // No `otlp` option: the lab sets no telemetry variable; the runtime reads them from settings.json.
      const run = await labRun({ configDir: home, cwd: join(dir, 'work'), prompt: 'PARALLEL please', tools: 'Bash', log });
      expect(await receiver.landed(10_000)).toBe(true);
      const truth = readRequestLog(log);
      expect(truth.length).toBeGreaterThanOrEqual(2);
      const events = landedFiles(root, run.session_id)
        .filter((f) => f.header.kind === 'otlp_log')
        .flatMap((f) => f.records.map((r) => r.parts[0]!.data as { event: string; attributes: Record<string, unknown> }));
      const calls = events.filter((e) => e.event === 'claude_code.api_request').map((e) => e.attributes.request_id);
      expect(calls.sort()).toEqual(truth.map((t) => t.request_id).sort());
      expect(receiver.stats().requests.grpc).toBeGreaterThan(0);
    } finally {
      await receiver.shutdown();
    }
  });
});
