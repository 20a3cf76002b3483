/**
 * One body per call when the runtime's bodies could arrive twice, with the real Claude Code CLI.
 * With `--raw-bodies DIR` and the OTLP export on, the runtime dumps each body to DIR and also sends
 * its `api_request_body` / `api_response_body` event naming the file (`body_ref`): the dump's body
 * is listed, whole, and the event set aside as a reference. Given both `--raw-bodies DIR` and
 * `--env OTEL_LOG_RAW_API_BODIES=1`, the one variable takes the last value: the bodies arrive inline
 * only, the dump stays empty for that session, and each call lists the events. Ground truth is the
 * mock's own copy of every request body it received (`--log-bodies`) and its request log.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import type { CallsAnswer } from '../../src/extensions/view/figures-api.js';
import type { ViewDocument } from '../../src/formats/view/types.js';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { bodyText } from '../../src/formats/session-data/inline-provider-body.js';
import { manifestOf } from '../../src/formats/session-data/provider-body.js';
import type { SdRecord } from '../../src/formats/session-data/types.js';
import { SessionProviderBodies } from '../../src/storage/provider-body-files.js';
import { ageUnfinishedBodies, labRun, readRequestLog, WORK_SCRIPT, type LoggedRequest } from '../helpers/lab.js';
import { collectAndParse, runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

describe('provider bodies from the real CLI in two forms at once: one body per call and role', () => {
  const base = tempDir('aszcol-e2e-body-forms-');
  const home = join(base, 'home');
  const root = join(base, 'data');
  const raw = join(base, 'raw');
  const mockBodies = join(base, 'mock-bodies');
  const log = join(base, 'requests.jsonl');
  let config = '';
  let dumped = '';
  let inline = '';
  let truth: LoggedRequest[] = [];
  const cli = async <T>(args: string[]) => {
    const r = await runCli([...args, '--config', config]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as T;
  };
  /** A landed record by the ref a document gives, read from the file the document lists under that seq. */
  const dumpBodies = (doc: ViewDocument) =>
    new SessionProviderBodies(
      doc.files.filter((f) => f.kind === 'provider_body' && typeof f.seq === 'number').map((f) => ({ seq: f.seq!, path: join(root, f.file) })),
    );
  const recordAt = (doc: ViewDocument, ref: { seq: number; row: number }): SdRecord => {
    const file = doc.files.find((f) => f.seq === ref.seq)!;
    return readSessionData(join(root, file.file)).records[ref.row - 1]!;
  };
  /** What the mock received for a request id, less nothing; the runtime's copy is compared without the betas it sends as a header. */
  const received = (requestId: string) => JSON.parse(readFileSync(join(mockBodies, `${requestId}.json`), 'utf8')) as unknown;
  const withoutBetas = (text: string) => {
    const { betas: _betas, ...sent } = JSON.parse(text) as Record<string, unknown>;
    return sent;
  };

  beforeAll(async () => {
    config = writeConfig(base, root, join(home, 'projects'), `    provider_bodies: ${JSON.stringify(raw)}\n`);
    const r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { http: { endpoint: '127.0.0.1:0' } } }), { storageRoot: root });
    await r.start();
    try {
      const otlp = `http://${r.addresses().http}`;
      const run = (env?: string) =>
        labRun({
          configDir: home,
          cwd: join(base, 'work'),
          prompt: 'SLOWTOOL please',
          tools: 'Bash',
          script: WORK_SCRIPT,
          log,
          logBodies: mockBodies,
          rawBodies: raw,
          otlp,
          protocol: 'http/protobuf',
          ...(env ? { env } : {}),
        }).then((x) => x.session_id);
      dumped = await run();
      inline = await run('OTEL_LOG_RAW_API_BODIES=1');
      expect(await r.landed(15_000)).toBe(true);
    } finally {
      await r.shutdown();
    }
    // The runtime can exit before it finishes its last body file: such a body lands whole as unreadable once it has
    // settled. Age them so this pass lands them (lab-provider-bodies.test.ts does the same).
    ageUnfinishedBodies(raw);
    await collectAndParse(config);
    truth = readRequestLog(log);
  }, 300_000);

  test('file: with the OTLP export: each call lists the dump’s request and response, each event naming its file set aside as a reference', async () => {
    const doc = await cli<ViewDocument>(['conversation', dumped, '--json']);
    const { calls } = await cli<CallsAnswer>(['conversation', dumped, '--calls', '--json']);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    const kindOf = (seq: number) => doc.files.find((f) => f.seq === seq)?.kind;
    for (const c of calls) {
      const t = truth.find((q) => q.message_id === c.message_id)!;
      expect(c.provider_bodies!.map((b) => [b.role, b.form, kindOf(b.ref.seq)])).toEqual([
        ['request', 'file', 'provider_body'],
        ['response', 'file', 'provider_body'],
      ]);
      for (const b of c.provider_bodies!) {
        // The one set aside is the runtime's event for this very file: its body_ref names the file the listed body came from.
        expect(b.duplicates!.map((d) => [d.form, kindOf(d.ref.seq)])).toEqual([['reference', 'otlp_log']]);
        const event = recordAt(doc, b.duplicates![0]!.ref).parts[0]!.data as { event: string; attributes: Record<string, unknown> };
        expect(event.event).toBe(`claude_code.api_${b.role}_body`);
        expect(event.attributes.body).toBeUndefined();
        expect(basename(String(event.attributes.body_ref))).toBe(manifestOf(recordAt(doc, b.ref))!.src);
      }
      // The request listed is the body the mock received.
      // A dump's body lands cut (copies and pieces of earlier records): read with the session's files, as the view reads it.
      const ref = c.provider_bodies![0]!.ref;
      const request = dumpBodies(doc).bodyAt(ref.seq, ref.row).toString('utf8');
      expect(withoutBetas(request)).toEqual(received(t.request_id));
      expect(c.manifest!.request!.messages.count).toBe((received(t.request_id) as { messages: unknown[] }).messages.length);
    }
    // Each body counted once, and no event left open as a body of its own.
    expect(doc.summary).toMatchObject({ provider_bodies: 2 * calls.length, captured_prompts: calls.length });
    expect(doc.unresolved.filter((u) => u.ref.startsWith('record/'))).toEqual([]);
  });

  test('--raw-bodies DIR with OTEL_LOG_RAW_API_BODIES=1: the runtime sends the bodies inline only, and each call lists those, once', async () => {
    const index = readFileSync(join(raw, 'index.jsonl'), 'utf8');
    expect(index).toContain(dumped);
    expect(index).not.toContain(inline);
    const doc = await cli<ViewDocument>(['conversation', inline, '--json']);
    const { calls } = await cli<CallsAnswer>(['conversation', inline, '--calls', '--json']);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const c of calls) {
      const t = truth.find((q) => q.message_id === c.message_id)!;
      expect(c.provider_bodies!.map((b) => [b.role, b.form, b.duplicates])).toEqual([
        ['request', 'inline', undefined],
        ['response', 'inline', undefined],
      ]);
      const request = bodyText(recordAt(doc, c.provider_bodies![0]!.ref));
      if (!('body' in request)) throw new Error(`${c.message_id}: ${request.problem}`);
      expect(request.partial).toBeUndefined();
      expect(withoutBetas(request.body)).toEqual(received(t.request_id));
    }
    expect(doc.summary).toMatchObject({ provider_bodies: 2 * calls.length, captured_prompts: calls.length });
    expect(doc.unresolved).toEqual([]);
  });
});
