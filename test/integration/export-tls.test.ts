/**
 * TLS on both transports: `tls: true` (gRPC) and an https:// endpoint (HTTP), trusting a private
 * CA through `ca_file`; without it the receiver's certificate is refused and nothing is recorded.
 * The certificate and key below are for 127.0.0.1 only, made for this test, valid until 2126.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { createServer } from 'node:https';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeResponse } from '../../src/otlp/codec.js';
import { GRPC_SERVICE } from '../../src/otlp/proto.js';
import { validateOtlpExporterConfig } from '../../src/exporters/otlp/config.js';
import { Pusher } from '../../src/exporters/otlp/pusher.js';
import { PushState } from '../../src/storage/push-state.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { buildRoot, rootFiles } from './export-root.js';

afterAll(cleanupTemp);

const CA = `-----BEGIN CERTIFICATE-----
MIIBmTCCAT+gAwIBAgIUfltte+PhXpJl/aBXIDN+wDBl080wCgYIKoZIzj0EAwIw
GTEXMBUGA1UEAwwOYXN6Y29sIHRlc3QgQ0EwIBcNMjYxMTMwMDYzMzU2WhgPMjEy
NjExMDYwNjMzNTZaMBkxFzAVBgNVBAMMDmFzemNvbCB0ZXN0IENBMFkwEwYHKoZI
zj0CAQYIKoZIzj0DAQcDQgAE31ZlsbsUV+4KXXVnfQPxtTYBjayxjdRKexpHVGT5
h5eQB2+3SK+F6BEpysX//Z0ug0mMEP8iINaBc2kSvtWMEqNjMGEwHQYDVR0OBBYE
FC8lC0/hhtEfPc6yZjb5cDaex0aoMB8GA1UdIwQYMBaAFC8lC0/hhtEfPc6yZjb5
cDaex0aoMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49
BAMCA0gAMEUCIQCeErfxTtGMpCRUYpVBT8WFb4b+jq6ii1zts3LE8pmzvwIgY1i9
ovnDMMvDfjZorZbhScaFM+tKPcZxZSTAAu+SWoc=
-----END CERTIFICATE-----
`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIBrzCCAVWgAwIBAgIUIE/Gd0N+pDEwtPtunD3OHdOGjZ0wCgYIKoZIzj0EAwIw
GTEXMBUGA1UEAwwOYXN6Y29sIHRlc3QgQ0EwIBcNMjYxMTMwMDYzMzU2WhgPMjEy
NjExMDYwNjMzNTZaMBQxEjAQBgNVBAMMCWxvY2FsaG9zdDBZMBMGByqGSM49AgEG
CCqGSM49AwEHA0IABNXaDBVqeNa2/W3JFztYBRpokCBkHeGmGz3oIKVHA2HkuDHc
ovEWawDiGHPjV5QIuSZ0c3WKbDKSbE5ULNXWW8CjfjB8MBoGA1UdEQQTMBGHBH8A
AAGCCWxvY2FsaG9zdDAJBgNVHRMEAjAAMBMGA1UdJQQMMAoGCCsGAQUFBwMBMB0G
A1UdDgQWBBT63853WCJR1awah5tIyW9KKG75CzAfBgNVHSMEGDAWgBQvJQtP4YbR
Hz3OsmY2+XA2nsdGqDAKBggqhkjOPQQDAgNIADBFAiAdV9ziF1nBKOE30WDXTRT1
1uD7AehNk6jyFeJ42YCYzwIhANvaV+bRP2BmmghadOS3vlQGk5+5FMwTFPfD/Jhm
PYxK
-----END CERTIFICATE-----
`;
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgyFmK2cda85jp+nwz
HUtM1gUvKUUmc6OZnJ5uul060UmhRANCAATV2gwVanjWtv1tyRc7WAUaaJAgZB3h
phs96CClRwNh5Lgx3KLxFmsA4hhz41eUCLkmdHN1imwykmxOVCzV1lvA
-----END PRIVATE KEY-----
`;

describe('TLS', () => {
  test("over gRPC (grpcs) and HTTPS, trusting the receiver's CA from ca_file; an unknown CA is refused with nothing recorded", async () => {
    const dir = tempDir('aszcol-export-tls-');
    const built = await buildRoot(join(dir, 'root'), ['test/scenarios/child-tools.yaml']);
    const caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, CA);
    const bodies: Buffer[] = [];
    const id = (b: Buffer) => b;
    const server = new grpc.Server();
    server.addService(
      {
        Export: {
          path: `/${GRPC_SERVICE.logs}/Export`,
          requestStream: false,
          responseStream: false,
          requestSerialize: id,
          requestDeserialize: id,
          responseSerialize: id,
          responseDeserialize: id,
        },
      } as grpc.ServiceDefinition,
      {
        Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
          bodies.push(call.request);
          cb(null, encodeResponse('logs', 'protobuf'));
        },
      },
    );
    const gport = await new Promise<number>((res, rej) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createSsl(null, [{ private_key: Buffer.from(KEY), cert_chain: Buffer.from(CERT) }]), (e, p) =>
        e ? rej(e) : res(p),
      ),
    );
    const https = createServer({ key: KEY, cert: CERT }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks));
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(encodeResponse('logs', 'protobuf'));
      });
    });
    await new Promise<void>((res) => https.listen(0, '127.0.0.1', res));
    const hport = (https.address() as { port: number }).port;
    try {
      for (const [protocol, extra] of [
        ['grpc', { endpoint: `127.0.0.1:${gport}`, tls: true }],
        ['http', { endpoint: `https://127.0.0.1:${hport}` }],
      ] as const) {
        const root = join(tempDir('aszcol-export-tls-copy-'), 'root');
        cpSync(built, root, { recursive: true });
        const untrusted = new Pusher({ root, cfg: validateOtlpExporterConfig({ protocol, ...extra, timeout: '2s' }, 'e'), logs: true, metrics: undefined });
        const refused = await untrusted.pass();
        untrusted.close();
        expect(refused.stoppedBy).toBe('unavailable');
        expect(refused.problems[0]).toMatch(protocol === 'grpc' ? /UNAVAILABLE/ : /certificate/i);
        expect(new PushState(root).endpoints()).toEqual([]);
        const before = bodies.length;
        const p = new Pusher({ root, cfg: validateOtlpExporterConfig({ protocol, ...extra, ca_file: caFile }, 'e'), logs: true, metrics: undefined });
        const r = await p.pass();
        p.close();
        expect(r.problems).toEqual([]);
        expect(p.endpoint).toBe(protocol === 'grpc' ? `grpcs://127.0.0.1:${gport}` : `https://127.0.0.1:${hport}`);
        expect(bodies.length).toBeGreaterThan(before);
        expect(new PushState(root).sent(p.endpoint).size).toBe(rootFiles(root).size);
      }
    } finally {
      server.forceShutdown();
      https.closeAllConnections();
      await new Promise<void>((res) => https.close(() => res()));
    }
  });
});
