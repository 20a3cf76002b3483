/**
 * Names from outside against the storage root (issue 13, B1, B2, M3): a session id the root
 * cannot hold — too many UTF-8 bytes, one of the root's own names — is refused through OTLP's
 * partial success with the rule's reason and never reaches the disk, so the landing thread moves
 * past it; and a JSON body with bytes that are not UTF-8 is refused with 400 as the same bytes
 * in a protobuf string are.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import { otlpTypes, requestType } from '../../src/otlp/proto.js';
import { protobufToOtlpJson } from '../../src/otlp/json.js';
import { entryNameProblem } from '../../src/storage/entry-names.js';
import { PushState } from '../../src/storage/push-state.js';
import { validateOtlpExporterConfig } from '../../src/exporters/otlp/config.js';
import { Pusher } from '../../src/exporters/otlp/pusher.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { landedFiles } from '../helpers/root.js';
import { ccLogRecord, httpPost, logsRequest } from '../helpers/otlp.js';
import { sinkForTests } from './export-sink.js';

afterAll(cleanupTemp);

const PB = { 'content-type': 'application/x-protobuf' };
const JSON_CT = { 'content-type': 'application/json' };
const sink = sinkForTests();

async function start(root: string) {
  const r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { http: { endpoint: '127.0.0.1:0' } } }), { storageRoot: root });
  await r.start();
  return { r, http: r.addresses().http! };
}

/** A JSON logs request, one record per session id, as a client other than Claude Code might send it. */
const jsonLogs = (...sessions: string[]) =>
  protobufToOtlpJson(requestType('logs'), logsRequest(sessions.map((s, i) => ccLogRecord(s, { name: 'user_prompt', seq: i, timeMs: 1_780_000_000_000 + i }))));

type Partial = { partialSuccess?: { rejectedLogRecords: string; errorMessage: string } };

describe('session ids the storage root cannot hold', () => {
  test('B1: a session.id of 128 "é" (256 UTF-8 bytes) is refused by partial success, writes nothing, and the records beside and after it land', async () => {
    const root = tempDir('aszcol-names-b1-');
    const rx = await start(root);
    try {
      const long = 'é'.repeat(128);
      const res = await httpPost(rx.http, '/v1/logs', jsonLogs('S-b1', long), JSON_CT);
      expect(res.status).toBe(200);
      const body = JSON.parse(res.body.toString()) as Partial;
      expect(body.partialSuccess?.rejectedLogRecords).toBe('1');
      expect(body.partialSuccess?.errorMessage).toMatch(/1 log records carry a session.id that cannot name a directory.*256 bytes in UTF-8, more than the 160/);
      expect(await rx.r.landed(5000)).toBe(true);
      expect((await httpPost(rx.http, '/v1/logs', jsonLogs('S-b1-next'), JSON_CT)).status).toBe(200);
      // Landing moved past it: everything accepted has landed and the journal holds nothing back.
      expect(await rx.r.landed(5000)).toBe(true);
      expect(rx.r.stats().journal_bytes).toBe(0);
      expect(rx.r.problems()).toEqual([]);
      expect(landedFiles(root, 'S-b1')[0]!.records).toHaveLength(1);
      expect(landedFiles(root, 'S-b1-next')[0]!.records).toHaveLength(1);
      expect(readdirSync(root).filter((n) => n.includes('é'))).toEqual([]);
      expect(rx.r.stats().refused_items).toEqual({ bad_session_id: 1 });
    } finally {
      await rx.r.shutdown();
    }
  });

  test("B2: a session.id that is one of the root's own names (push.state, session.state, _metrics) is refused; push.state stays a file and a push still sends", async () => {
    const root = tempDir('aszcol-names-b2-');
    const rx = await start(root);
    try {
      const res = await httpPost(rx.http, '/v1/logs', jsonLogs('push.state', 'S-b2', 'session.state', '_metrics', 'PUSH.STATE'), JSON_CT);
      expect(res.status).toBe(200);
      const body = JSON.parse(res.body.toString()) as Partial;
      expect(body.partialSuccess?.rejectedLogRecords).toBe('4');
      const msg = body.partialSuccess!.errorMessage;
      expect(msg).toMatch(/4 log records carry a session.id that cannot name a directory and were not landed/);
      expect(msg).toContain('"push.state" ("push.state" is a name the storage root uses itself)');
      expect(msg).toContain('"session.state" ("session.state" is a name the storage root uses itself)');
      expect(msg).toContain('"_metrics" (starts with "_"');
      expect(await rx.r.landed(5000)).toBe(true);
      expect(rx.r.stats().journal_bytes).toBe(0);
      expect(existsSync(join(root, 'push.state'))).toBe(false);
      expect(existsSync(join(root, 'session.state'))).toBe(false);
      expect(landedFiles(root, 'S-b2')[0]!.records).toHaveLength(1);
    } finally {
      await rx.r.shutdown();
    }
    const pusher = new Pusher({
      root,
      cfg: validateOtlpExporterConfig({ protocol: 'http', endpoint: `http://${sink.httpAddress}`, instance_id: 'i' }, 'exporters.otlp/sink'),
      logs: true,
      metrics: undefined,
    });
    try {
      const r = await pusher.pass();
      expect(r.problems).toEqual([]);
      expect(r.logs.files).toBe(1);
      expect(statSync(join(root, 'push.state')).isFile()).toBe(true);
      expect([...new PushState(root).sent(pusher.endpoint).keys()]).toEqual([expect.stringMatching(/^S-b2\/otlp\/otlp_log-.*\.sd$/)]);
    } finally {
      pusher.close();
    }
    // Whatever the receiver and the pusher made at the top of the root besides sessions is a name the rule refuses.
    const own = readdirSync(root).filter((n) => !statSync(join(root, n)).isDirectory() || !existsSync(join(root, n, 'otlp')));
    expect(own.length).toBeGreaterThanOrEqual(3); // _journal, push.state and its locks
    for (const n of own) expect([n, entryNameProblem(n)]).toEqual([n, expect.any(String)]);
  });
});

describe('M3: bytes that are not UTF-8', () => {
  test('the same invalid bytes in a JSON body and in a protobuf string are both refused with 400; nothing lands', async () => {
    const root = tempDir('aszcol-names-m3-');
    const rx = await start(root);
    try {
      const bad = Buffer.from([0xff, 0xfe, 0xc3]);
      const marker = 'S-m3-XXX';
      const json = Buffer.from(jsonLogs(marker));
      const at = json.indexOf('XXX');
      const jsonBody = Buffer.concat([json.subarray(0, at), bad, json.subarray(at + 3)]);
      const pb = logsRequest([ccLogRecord(marker, { name: 'user_prompt', seq: 0, timeMs: 1_780_000_000_000 })]);
      const pat = pb.indexOf('XXX');
      const pbBody = Buffer.concat([pb.subarray(0, pat), bad, pb.subarray(pat + 3)]);

      const j = await httpPost(rx.http, '/v1/logs', jsonBody, JSON_CT);
      expect(j.status).toBe(400);
      expect((JSON.parse(j.body.toString()) as { message: string }).message).toMatch(
        new RegExp(`^the body is not valid UTF-8: byte ${at} \\(line 1, column ${at + 1} in bytes\\) starts "\\\\xff\\\\xfe\\\\xc3`),
      );
      const p = await httpPost(rx.http, '/v1/logs', pbBody, PB);
      expect(p.status).toBe(400);
      expect(otlpTypes().Status.decode(p.body).toJSON().message).toMatch(/stringValue: string is not valid UTF-8/);

      expect(await rx.r.landed(5000)).toBe(true);
      expect(readdirSync(root).filter((n) => n.startsWith('S-m3') || n.includes('\ufffd'))).toEqual([]);
      expect(rx.r.stats().refused_requests).toEqual({ bad_json: 1, bad_protobuf: 1 });
      // The valid bytes of the same request still land: the refusal was about the bytes alone.
      expect((await httpPost(rx.http, '/v1/logs', json, JSON_CT)).status).toBe(200);
      expect(await rx.r.landed(5000)).toBe(true);
      expect(landedFiles(root, marker)).toHaveLength(1);
    } finally {
      await rx.r.shutdown();
    }
  });
});
