/**
 * The request thread reads each item's session straight from the bytes (item-attribute.ts); the
 * landing thread decodes the items fully and asks the dialect (otlpSessionOf). The two must agree
 * on every request, or a record would be answered as accepted and then land nowhere (or the
 * reverse). Checked on generated requests covering every placement the rules distinguish.
 */
import { describe, expect, test } from '@jest/globals';
import { itemStringAttribute } from '../../src/otlp/item-attribute.js';
import { logsRequestGroups, tracesRequestGroups } from '../../src/otlp/requests.js';
import { otlpSessionOf } from '../../src/adapters/claude-code/otlp-dialect.js';
import { requestType } from '../../src/otlp/proto.js';
import { checkedRequest } from '../../src/otlp/codec.js';
import { rng } from '../helpers/rng.js';

type KV = { key: string; value?: object };

/** Attributes with the session key placed (or not) in one of the ways that matter. */
function attrs(r: () => number, tag: string): KV[] {
  const out: KV[] = [{ key: 'event.name', value: { stringValue: 'x' } }];
  const pick = Math.floor(r() * 9);
  const s = { key: 'session.id', value: { stringValue: `S-${tag}` } };
  if (pick === 0) out.push(s);
  if (pick === 1) out.push({ key: 'session.id', value: { intValue: 7 } });
  if (pick === 2) out.push({ key: 'session.id', value: { stringValue: '' } });
  if (pick === 3) out.push(s, { key: 'session.id', value: { stringValue: 'S-second' } }); // the first wins
  if (pick === 4) out.push({ key: 'session.id', value: { boolValue: true } }, s); // the first (not a string) wins
  if (pick === 5) out.push({ key: 'session.id' }); // no value at all
  if (pick === 6) out.push({ key: 'session.idx', value: { stringValue: 'near miss' } });
  if (pick === 7) out.push({ key: 'session.id', value: { arrayValue: { values: [{ stringValue: 'S-arr' }] } } });
  if (r() < 0.5) out.push({ key: 'n', value: { doubleValue: 1.5 } });
  return out;
}

function request(signal: 'logs' | 'traces', r: () => number): Buffer {
  const resources = Array.from({ length: 1 + Math.floor(r() * 3) }, (_, i) => {
    const items = Array.from({ length: Math.floor(r() * 4) }, (_, j) =>
      signal === 'logs'
        ? { timeUnixNano: 1, attributes: attrs(r, `${i}-${j}`) }
        : { traceId: Buffer.alloc(16, 1), spanId: Buffer.alloc(8, 2), name: 'x', attributes: attrs(r, `${i}-${j}`) },
    );
    const scopes = [signal === 'logs' ? { logRecords: items } : { spans: items }];
    const resource = r() < 0.8 ? { resource: { attributes: attrs(r, `r${i}`) } } : {};
    return signal === 'logs' ? { ...resource, scopeLogs: scopes } : { ...resource, scopeSpans: scopes };
  });
  const T = requestType(signal);
  return Buffer.from(T.encode(T.fromObject(signal === 'logs' ? { resourceLogs: resources } : { resourceSpans: resources })).finish());
}

describe('the session of each item, read from the bytes', () => {
  for (const signal of ['logs', 'traces'] as const) {
    test(`${signal}: agrees with the full decoding on 400 generated requests`, () => {
      const r = rng(signal === 'logs' ? 3 : 5);
      let seen = 0,
        found = 0;
      for (let n = 0; n < 400; n++) {
        const body = request(signal, r);
        checkedRequest(signal, body, 'protobuf'); // the scan runs only on checked bytes
        const groups = signal === 'logs' ? logsRequestGroups(body) : tracesRequestGroups(body);
        const expected = groups.flatMap((g) => g.scopes.flatMap((sg) => sg.items.map((it) => otlpSessionOf(it.message.attributes, g.resource?.attributes))));
        const got = itemStringAttribute(signal, body, 'session.id');
        expect(got).toEqual(expected);
        seen += got.length;
        found += got.filter((x) => x !== undefined).length;
      }
      // The generator exercised both outcomes, many times.
      expect(found).toBeGreaterThan(100);
      expect(seen - found).toBeGreaterThan(100);
    });
  }

  test('the resource of a record is its own: two resources do not lend each other a session', () => {
    const T = requestType('logs');
    const body = Buffer.from(
      T.encode(
        T.fromObject({
          resourceLogs: [
            { resource: { attributes: [{ key: 'session.id', value: { stringValue: 'S-R1' } }] }, scopeLogs: [{ logRecords: [{ timeUnixNano: 1 }] }] },
            { scopeLogs: [{ logRecords: [{ timeUnixNano: 2 }, { timeUnixNano: 3, attributes: [{ key: 'session.id', value: { stringValue: 'S-own' } }] }] }] },
          ],
        }),
      ).finish(),
    );
    expect(itemStringAttribute('logs', body, 'session.id')).toEqual(['S-R1', undefined, 'S-own']);
  });
});
