/**
 * A small builder of Claude Code transcript records for fixtures, shaped as 2.1.328 writes them:
 * uuid/parentUuid chains, promptId on a cycle's user records, calls in fragments sharing one
 * message.id, results with toolUseResult. Times advance 1 s per record unless set.
 */
import { join } from 'node:path';
import { writeLines } from './transcript.js';

export class TranscriptBuilder {
  readonly lines: Record<string, unknown>[] = [];
  private n = 0;
  private clock: number;
  last: string | null = null;

  constructor(
    readonly session: string,
    readonly opts: { agentId?: string; start?: string } = {},
  ) {
    this.clock = Date.parse(opts.start ?? '2026-11-30T10:00:00.000Z');
  }

  uuid(): string {
    this.n++;
    // Unique across streams, as the runtime's UUIDs are: a child's ids carry part of its agent id.
    const tag = this.opts.agentId ? this.opts.agentId.slice(-7) : '0000000';
    return `${this.opts.agentId ? 'c' : 'm'}${tag}-0000-4000-8000-${this.n.toString(16).padStart(12, '0')}`;
  }

  at(iso: string): this {
    this.clock = Date.parse(iso);
    return this;
  }

  advance(ms: number): this {
    this.clock += ms;
    return this;
  }

  push(rec: Record<string, unknown>, opts: { parent?: string | null; time?: number } = {}): string {
    const uuid = (rec.uuid as string | undefined) ?? this.uuid();
    const base: Record<string, unknown> = {
      parentUuid: opts.parent === undefined ? this.last : opts.parent,
      isSidechain: !!this.opts.agentId,
      ...(this.opts.agentId ? { agentId: this.opts.agentId } : {}),
      uuid,
      timestamp: new Date(opts.time ?? this.clock).toISOString(),
      sessionId: this.session,
    };
    this.lines.push({ ...base, ...rec });
    this.last = uuid;
    this.clock += 1000;
    return uuid;
  }

  user(text: string, extra: Record<string, unknown> = {}, opts: { parent?: string | null } = {}): string {
    return this.push({ type: 'user', message: { role: 'user', content: text }, ...extra }, opts);
  }

  prompt(text: string, promptId: string, origin: string | undefined = 'human'): string {
    return this.user(text, { promptId, ...(origin ? { origin: { kind: origin } } : {}) });
  }

  fragment(
    msgId: string,
    block: Record<string, unknown>,
    opts: { stop?: string | null; usage?: Record<string, number>; model?: string; parent?: string | null } = {},
  ): string {
    return this.push(
      {
        type: 'assistant',
        message: {
          id: msgId,
          type: 'message',
          role: 'assistant',
          model: opts.model ?? 'claude-opus-5-5',
          content: [block],
          stop_reason: opts.stop === undefined ? 'end_turn' : opts.stop,
          stop_sequence: null,
          usage: opts.usage ?? { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 1 },
        },
      },
      { parent: opts.parent },
    );
  }

  result(toolUseId: string, content: unknown, promptId: string, extra: Record<string, unknown> = {}, opts: { parent?: string | null } = {}): string {
    return this.push(
      { type: 'user', promptId, message: { role: 'user', content: [{ tool_use_id: toolUseId, type: 'tool_result', content, is_error: false }] }, ...extra },
      opts,
    );
  }

  raw(line: Record<string, unknown>): void {
    this.lines.push(line);
  }

  write(path: string): void {
    writeLines(path, this.lines);
  }
}

export const mainPath = (src: string, project: string, session: string) => join(src, project, `${session}.jsonl`);
export const childPath = (src: string, project: string, session: string, agentId: string, run?: string) =>
  run
    ? join(src, project, session, 'subagents', 'workflows', run, `agent-${agentId}.jsonl`)
    : join(src, project, session, 'subagents', `agent-${agentId}.jsonl`);
