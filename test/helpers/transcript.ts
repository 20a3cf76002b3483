import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { randomUUID } from 'node:crypto';

/** Hand-made Claude Code records, shaped as 2.1.328 writes them (see ../shared/lab for the real thing). */
export const rec = {
  user(sessionId: string, text: string, extra: Record<string, unknown> = {}) {
    return {
      parentUuid: null,
      isSidechain: false,
      promptId: randomUUID(),
      type: 'user',
      message: { role: 'user', content: text },
      uuid: randomUUID(),
      timestamp: '2026-11-30T04:48:42.536Z',
      sessionId,
      ...extra,
    };
  },
  assistant(sessionId: string, msgId: string, content: unknown[], extra: Record<string, unknown> = {}) {
    return {
      parentUuid: null,
      isSidechain: false,
      type: 'assistant',
      uuid: randomUUID(),
      timestamp: '2026-11-30T04:48:43.000Z',
      sessionId,
      message: {
        id: msgId,
        type: 'message',
        role: 'assistant',
        model: 'claude-opus-5-5',
        content,
        stop_reason: 'end_turn',
        usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 300, cache_creation_input_tokens: 20 },
      },
      ...extra,
    };
  },
};

export function writeLines(path: string, records: unknown[], opts: { append?: boolean } = {}): void {
  mkdirSync(dirname(path), { recursive: true });
  const text = records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
  if (opts.append) appendFileSync(path, text);
  else writeFileSync(path, text);
}
