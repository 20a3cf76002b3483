/**
 * Turns a scenario into the files a real Claude Code 2.1.328 session leaves behind: the main
 * transcript, child transcripts and sidecars, workflow journals, manifests and scripts. Pure:
 * the same scenario, base time and options always give the same bytes.
 */
import { createHash } from 'node:crypto';
import type { CallSpec, ChildSpec, PluginCall, Scenario, Step, Usage } from './model.js';
import { EDITING_TOOLS, editOutcome } from './edit-outcome.js';
import { injectAttachment } from './prompt-snapshot.js';

export interface GenerateOptions {
  /** Base time in ms since the epoch. */
  at: number;
  scale?: number;
  interval?: number;
  /** Stop after the step carrying this checkpoint. */
  through?: string;
  session?: string;
}

export interface Generated {
  session: string;
  project: string;
  /** Source files relative to the source root (`projects/`), with their content. */
  files: Map<string, string>;
  /** Scenario child names → agent ids (the streams a check names by scenario name). */
  agents: Map<string, string>;
  /** Scenario workflow names → run ids. */
  runs: Map<string, string>;
  start: number;
  end: number;
  checkpoints: string[];
  /** The calls the aszcol plugin's hooks saw: an MCP call with an `execution` block, a non-editing tool with `changes`. */
  plugin: PluginCall[];
  cwd: string;
  /** Tool uses that landed (tool-use id → its name and when its record was written), and when each `result` step given on its own was written. */
  toolTimes: { used: Map<string, { name: string; at: number }>; separateResults: Map<string, number> };
}

const VERSION = '2.1.328';
const MODEL = 'claude-opus-5-5';

export function agentIdFor(session: string, name: string): string {
  return 'a' + createHash('sha256').update(`${session}/${name}`).digest('hex').slice(0, 16);
}

export function runIdFor(name: string): string {
  let n = name.replace(/[^A-Za-z0-9_-]/g, '-');
  if (!/^[A-Za-z0-9]/.test(n)) n = `run-${n}`;
  return `wf_${n}`;
}

export function sessionIdFor(scn: Scenario): string {
  if (scn.session) return scn.session;
  const h = createHash('sha256').update(`scenario:${scn.name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** One execution stream being written: its lines, its parent chain and its clock. */
class Stream {
  lines: string[] = [];
  last: string | null = null;
  records: { uuid: string; line: number }[] = [];
  constructor(
    readonly g: Gen,
    readonly agentId?: string,
    readonly prefix = '',
  ) {}

  write(rec: Record<string, unknown>, time: number, opts: { lost?: boolean; parent?: string | null; chain?: boolean } = {}): string | undefined {
    const uuid = rec.uuid as string | undefined;
    const full: Record<string, unknown> = {};
    if (opts.chain !== false) {
      full.parentUuid = opts.parent === undefined ? this.last : opts.parent;
      full.isSidechain = !!this.agentId;
      if (this.agentId) full.agentId = this.agentId;
    }
    Object.assign(full, rec);
    if (opts.chain !== false) {
      full.timestamp = new Date(time).toISOString();
      full.userType = 'external';
      full.entrypoint = this.g.scn.entrypoint ?? 'cli';
      full.cwd = this.g.cwd;
      full.sessionId = this.g.session;
      full.version = VERSION;
      full.gitBranch = 'main';
      if (uuid) this.last = uuid;
    }
    // A lost record still moves the chain: the next record names it as its parent.
    if (!opts.lost) {
      if (uuid) this.records.push({ uuid, line: this.lines.length });
      this.lines.push(JSON.stringify(full));
    }
    return uuid;
  }
}

function usageOf(u: Usage | undefined, last: boolean, child: boolean): Record<string, number> {
  const out = u?.out ?? 10;
  // A child's partials climb toward the final count; main repeats the final usage on every fragment.
  return {
    input_tokens: u?.in ?? 2,
    cache_creation_input_tokens: u?.cache_write ?? 100,
    cache_read_input_tokens: u?.cache_read ?? 900,
    output_tokens: child && !last ? Math.max(1, Math.floor(out / 2)) : out,
  };
}

class Gen {
  clock: number;
  main: Stream;
  files = new Map<string, string>();
  agents = new Map<string, string>();
  runs = new Map<string, string>();
  checkpoints: string[] = [];
  plugin: PluginCall[] = [];
  toolTimes: Generated['toolTimes'] = { used: new Map(), separateResults: new Map() };
  cwd: string;
  done = false;
  /** The session runs headless: its entrypoint is one of the SDK's (`sdk-cli`, `sdk-ts`, `sdk-py`). */
  readonly sdk: boolean;

  constructor(
    readonly scn: Scenario,
    readonly session: string,
    readonly project: string,
    readonly o: GenerateOptions,
  ) {
    this.clock = o.at;
    this.main = new Stream(this);
    this.cwd = '/' + project.replace(/^-/, '').split('-').join('/');
    this.sdk = (scn.entrypoint ?? 'cli').startsWith('sdk');
  }

  d(ms: number | undefined): number {
    return (ms ?? this.o.interval ?? this.scn.interval) * (this.o.scale ?? 1);
  }

  get dir(): string {
    return `${this.project}/${this.session}`;
  }

  run(): void {
    if (this.scn.title) this.main.write({ type: 'ai-title', aiTitle: this.scn.title, sessionId: this.session }, this.clock, { chain: false });
    this.steps(this.main, this.scn.steps, '', true);
    this.files.set(`${this.project}/${this.session}.jsonl`, this.main.lines.map((l) => l + '\n').join(''));
  }

  steps(s: Stream, steps: Step[], prefix: string, top: boolean, cycle0 = ''): void {
    let cycle = cycle0;
    steps.forEach((step, i) => {
      if (this.done) return;
      const n = `${prefix}s${i + 1}`;
      if (i > 0 || !top) this.clock += this.d(step.after);
      else if (step.after !== undefined) this.clock += this.d(step.after);
      const lost = step.lost === true;
      if ('input' in step) {
        cycle = `${n}-cycle`;
        // A headless run (`claude -p`, an Agent SDK application) writes promptSource "sdk" on its prompts, and no origin.
        const source = this.sdk ? { promptSource: 'sdk' } : { origin: { kind: 'human' } };
        s.write({ promptId: cycle, type: 'user', message: { role: 'user', content: step.input }, uuid: `${n}-input`, ...source }, this.clock, { lost });
      } else if ('queued' in step) {
        const human = step.queued.mode === 'prompt';
        s.write(
          { type: 'queue-operation', operation: 'enqueue', timestamp: new Date(this.clock).toISOString(), sessionId: this.session, content: step.queued.text },
          this.clock,
          { chain: false, lost },
        );
        s.write(
          {
            type: 'attachment',
            uuid: `${n}-queued`,
            attachment: {
              type: 'queued_command',
              prompt: step.queued.text,
              commandMode: step.queued.mode,
              origin: { kind: human ? 'human' : 'task-notification' },
              timestamp: new Date(this.clock).toISOString(),
            },
          },
          this.clock,
          { lost },
        );
      } else if ('inject' in step) {
        s.write({ type: 'attachment', uuid: `${n}-inject`, attachment: injectAttachment(step.inject) }, this.clock, { lost });
      } else if ('call' in step) {
        cycle = this.call(s, step.call, n, cycle, lost, prefix);
      } else if ('result' in step) {
        this.result(s, step.result.of, step.result, n, cycle, undefined, lost);
        if (!lost) this.toolTimes.separateResults.set(step.result.of, this.clock);
      } else if ('error' in step) {
        s.write(
          {
            type: 'assistant',
            uuid: `${n}-synthetic`,
            message: {
              id: `${n}-synthetic-call`,
              type: 'message',
              role: 'assistant',
              model: '<synthetic>',
              content: [{ type: 'text', text: step.error }],
              stop_reason: null,
              stop_sequence: null,
              usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
            },
            isApiErrorMessage: true,
          },
          this.clock,
          { lost },
        );
      } else if ('reset' in step) {
        const logical = s.last;
        const boundary = `${n}-boundary`;
        s.write(
          {
            type: 'system',
            subtype: 'compact_boundary',
            uuid: boundary,
            content: 'Conversation compacted',
            level: 'info',
            logicalParentUuid: logical,
            compactMetadata: { trigger: 'auto', preTokens: 1000, preservedMessages: { allUuids: logical ? [logical] : [] } },
          },
          this.clock,
          { parent: null, lost },
        );
        cycle = `${n}-cycle-compact`;
        // The summary is stamped before its own boundary, as the runtime writes it.
        s.write(
          {
            type: 'user',
            promptId: cycle,
            uuid: `${n}-summary`,
            isCompactSummary: true,
            isVisibleInTranscriptOnly: true,
            message: { role: 'user', content: step.reset.summary },
          },
          this.clock - 400,
          { lost },
        );
      } else if ('replay' in step) {
        // The runtime re-emits a block just before a reset: the same ids, the cycle rewritten, output blanked.
        const recent = s.lines.slice(-step.replay).map((l) => JSON.parse(l) as Record<string, unknown>);
        for (const r of recent) {
          if (r.promptId) r.promptId = `${n}-replayed`;
          if (r.toolUseResult && typeof r.toolUseResult === 'object') r.toolUseResult = { ...(r.toolUseResult as object), stdout: '' };
          s.lines.push(JSON.stringify(r));
        }
      } else if ('system' in step) {
        s.write({ type: 'system', subtype: step.system.subtype, uuid: `${n}-system`, level: 'info', ...(step.system.fields ?? {}) }, this.clock, { lost });
      }
      if (step.checkpoint) {
        this.checkpoints.push(step.checkpoint);
        if (this.o.through === step.checkpoint) this.done = true;
      }
    });
  }

  fragment(s: Stream, msgId: string, uuid: string, block: Record<string, unknown>, last: boolean, usage: Usage | undefined, lost: boolean): string | undefined {
    const child = !!s.agentId;
    const stop = last ? (block.type === 'tool_use' ? 'tool_use' : 'end_turn') : child ? null : 'tool_use';
    return s.write(
      {
        type: 'assistant',
        uuid,
        requestId: `req_${msgId}`,
        message: {
          id: msgId,
          type: 'message',
          role: 'assistant',
          model: MODEL,
          content: [block],
          stop_reason: child && !last ? null : (stop ?? 'end_turn'),
          stop_sequence: null,
          usage: usageOf(usage, last, child),
        },
      },
      this.clock,
      { lost },
    );
  }

  call(s: Stream, c: CallSpec, n: string, cycle: string, lost: boolean, prefix: string): string {
    const msgId = `${n}-call`;
    const blocks: { uuid: string; block: Record<string, unknown> }[] = [];
    if (c.thinking !== undefined)
      blocks.push({ uuid: `${n}-thinking`, block: { type: 'thinking', thinking: c.thinking === 'unavailable' ? '' : c.thinking, signature: 'sig' } });
    if (c.text !== undefined) blocks.push({ uuid: `${n}-text`, block: { type: 'text', text: c.text } });
    let toolId: string | undefined;
    let toolName: string | undefined;
    let input: unknown;
    if (c.tool) {
      toolId = c.tool.id ?? `${n}-tool`;
      toolName = c.tool.name;
      input = c.tool.input ?? {};
    } else if (c.agent) {
      toolId = `${n}-tool`;
      toolName = 'Agent';
      input = { description: c.agent.name, prompt: c.agent.prompt, subagent_type: 'general-purpose' };
    } else if (c.skill) {
      toolId = `${n}-tool`;
      toolName = 'Skill';
      input = { skill: c.skill.name };
    } else if (c.workflow) {
      toolId = `${n}-tool`;
      toolName = 'Workflow';
      input = { name: c.workflow.name };
    }
    if (toolId) blocks.push({ uuid: `${n}-tool-use`, block: { type: 'tool_use', id: toolId, name: toolName, input, caller: { type: 'direct' } } });
    if (!blocks.length) blocks.push({ uuid: `${n}-text`, block: { type: 'text', text: '' } });
    blocks.forEach((b, i) => {
      if (i > 0) this.clock += 100 * (this.o.scale ?? 1);
      this.fragment(s, msgId, b.uuid, b.block, i === blocks.length - 1, c.usage, lost);
    });
    // An editing tool's result carries the patch the runtime computed.
    const edit = c.tool?.changes && EDITING_TOOLS.has(c.tool.name) ? editOutcome(c.tool.name, c.tool.changes[0]!, this.cwd) : undefined;
    const usedAt = this.clock;
    if (toolId && toolName && !lost) this.toolTimes.used.set(toolId, { name: toolName, at: usedAt });
    if (c.tool?.result) this.result(s, toolId!, c.tool.result, n, cycle, edit, lost || c.tool.result.lost === true);
    if (c.tool && (c.tool.execution || (c.tool.changes && !edit)))
      this.plugin.push({ stream: s.agentId ?? 'main', toolUseId: toolId!, tool: c.tool, usedAt, resultAt: c.tool.result ? this.clock : undefined });
    if (c.agent) {
      const id = agentIdFor(this.session, c.agent.name);
      this.agents.set(c.agent.name, id);
      this.clock += 100 * (this.o.scale ?? 1);
      const outputFile = `/tmp/claude-0/${this.project}/${this.session}/tasks/${id}.output`;
      const lastText = [...c.agent.steps].reverse().find((x) => 'call' in x && x.call.text !== undefined) as { call: CallSpec } | undefined;
      if (c.agent.notify === false) {
        this.result(
          s,
          toolId!,
          { text: lastText?.call.text ?? '', after: 0, blocks: true },
          n,
          cycle,
          { status: 'completed', agentId: id, content: [{ type: 'text', text: lastText?.call.text ?? '' }], totalDurationMs: 1000 },
          lost,
        );
      } else {
        const launchText = `Async agent launched successfully.\nagentId: ${id}`;
        this.result(
          s,
          toolId!,
          { text: launchText, after: 0, blocks: true },
          n,
          cycle,
          {
            isAsync: true,
            status: 'async_launched',
            agentId: id,
            description: c.agent.name,
            resolvedModel: MODEL,
            prompt: c.agent.prompt,
            outputFile,
            canReadOutputFile: true,
            canContinueAgent: true,
          },
          lost,
        );
      }
      const end = this.child(c.agent, id, toolId!, `subagents`, undefined, c.agent.lost === true);
      if (c.agent.notify) {
        this.clock = Math.max(this.clock, end) + this.d(undefined);
        cycle = `${n}-cycle-notification`;
        const text = `<task-notification>\n<task-id>${id}</task-id>\n<tool-use-id>${toolId}</tool-use-id>\n<output-file>${outputFile}</output-file>\n<status>completed</status>\n<summary>Agent "${c.agent.name}" finished</summary>\n</task-notification>`;
        s.write(
          {
            promptId: cycle,
            type: 'user',
            message: { role: 'user', content: text },
            uuid: `${n}-notification`,
            origin: { kind: 'task-notification', producer: 'session-task' },
            // The notification keeps its origin under the SDK too: it reports the agent, and is not a question.
            ...(this.sdk ? { promptSource: 'sdk' } : {}),
          },
          this.clock,
          { lost }, // a lost call takes its notification with it: both were in the one transcript
        );
      } else this.clock = Math.max(this.clock, end);
    }
    if (c.skill) {
      const id = agentIdFor(this.session, c.skill.agent);
      this.agents.set(c.skill.agent, id);
      this.clock += 100 * (this.o.scale ?? 1);
      this.result(
        s,
        toolId!,
        { text: `Skill "${c.skill.name}" forked`, after: 0 },
        n,
        cycle,
        { success: true, commandName: c.skill.name, status: 'forked', agentId: id },
        lost,
      );
      const end = this.child(
        { name: c.skill.agent, prompt: `Run the ${c.skill.name} skill`, steps: c.skill.steps },
        id,
        toolId!,
        'subagents',
        undefined,
        c.skill.lost === true,
      );
      this.clock = Math.max(this.clock, end);
    }
    if (c.workflow) {
      const run = runIdFor(c.workflow.name);
      this.runs.set(c.workflow.name, run);
      this.clock += 100 * (this.o.scale ?? 1);
      this.result(
        s,
        toolId!,
        { text: `Workflow ${c.workflow.name} started (run ${run})`, after: 0 },
        n,
        cycle,
        { status: 'async_launched', runId: run, workflowName: c.workflow.name },
        lost,
      );
      const journal: string[] = [];
      let end = this.clock;
      const startAt = this.clock;
      c.workflow.children.forEach((ch, k) => {
        const id = agentIdFor(this.session, ch.name);
        this.agents.set(ch.name, id);
        journal.push(JSON.stringify({ type: 'started', key: `v2:${k}`, agentId: id }));
        this.clock = startAt + (k + 1) * 100 * (this.o.scale ?? 1);
        const e = this.child(ch, id, undefined, `subagents/workflows/${run}`, run, ch.lost === true);
        end = Math.max(end, e);
        const last = [...ch.steps].reverse().find((x) => 'call' in x) as { call: CallSpec } | undefined;
        journal.push(JSON.stringify({ type: 'result', key: `v2:${k}`, agentId: id, result: last?.call.text ?? '' }));
      });
      this.clock = end;
      this.files.set(`${this.dir}/subagents/workflows/${run}/journal.jsonl`, journal.map((l) => l + '\n').join(''));
      this.files.set(
        `${this.dir}/workflows/${run}.json`,
        JSON.stringify({ runId: run, workflowName: c.workflow.name, status: 'completed', agentCount: c.workflow.children.length }),
      );
      this.files.set(
        `${c.workflow.script_project ?? this.project}/${this.session}/workflows/scripts/${c.workflow.name.replace(/[^A-Za-z0-9_-]/g, '-')}-${run}.js`,
        `// workflow ${c.workflow.name}\nexport default async function run(ctx) {\n${c.workflow.children.map((ch) => `  await ctx.agent(${JSON.stringify(ch.prompt)});`).join('\n')}\n}\n`,
      );
    }
    void prefix;
    return cycle;
  }

  result(
    s: Stream,
    of: string,
    r: { text: string; after?: number; failed?: boolean; string?: boolean; blocks?: boolean },
    n: string,
    cycle: string,
    tur: Record<string, unknown> | undefined,
    lost: boolean,
  ): void {
    this.clock += this.d(r.after);
    // The runtime gives a launch's result as a list of text blocks; a tool's output as a string.
    const block: Record<string, unknown> = { tool_use_id: of, type: 'tool_result', content: r.blocks ? [{ type: 'text', text: r.text }] : r.text };
    if (r.failed !== undefined) block.is_error = r.failed;
    s.write(
      {
        promptId: cycle || undefined,
        type: 'user',
        uuid: `${n}-result`,
        message: { role: 'user', content: [block] },
        toolUseResult: r.string ? r.text : (tur ?? { stdout: r.text, stderr: '', interrupted: false, isImage: false }),
      },
      this.clock,
      { lost },
    );
  }

  /** A child agent's own stream and sidecar; returns the time of its last record. */
  child(ch: ChildSpec, id: string, toolUseId: string | undefined, dir: string, run: string | undefined, lost: boolean): number {
    const saved = this.clock;
    this.clock += this.d(ch.after);
    const cs = new Stream(this, id);
    const cycle = `${id}-cycle`;
    cs.write({ promptId: cycle, type: 'user', message: { role: 'user', content: ch.prompt }, uuid: `${ch.name}-prompt` }, this.clock, { parent: null });
    this.steps(cs, ch.steps, `${ch.name}-`, false, cycle);
    // Results inside a child carry its own cycle.
    const end = this.clock;
    if (!lost) {
      this.files.set(`${this.dir}/${dir}/agent-${id}.jsonl`, cs.lines.map((l) => l + '\n').join(''));
      const meta: Record<string, unknown> = { agentType: 'general-purpose', description: ch.name };
      if (toolUseId) meta.toolUseId = toolUseId;
      if (run) meta.spawnDepth = 1;
      this.files.set(`${this.dir}/${dir}/agent-${id}.meta.json`, JSON.stringify(meta));
    }
    this.clock = saved;
    return end;
  }
}

export function generate(scn: Scenario, o: GenerateOptions): Generated {
  const session = o.session ?? sessionIdFor(scn);
  const project = scn.project ?? '-Users-dev-scenario';
  const g = new Gen(scn, session, project, o);
  g.run();
  const { files, agents, runs, checkpoints, plugin, cwd, toolTimes } = g;
  return { session, project, files, agents, runs, start: o.at, end: g.clock, checkpoints, plugin, cwd, toolTimes };
}
