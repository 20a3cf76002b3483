/**
 * A generated session whose every call wrote its raw API bodies (the scenario generator's dump, in
 * Claude Code's `file:DIR` shape): `calls` tool calls after one prompt, a 2 KB system prompt and
 * tool description, 1.2 KB tool outputs. Each request repeats the one before it and adds a call and
 * its result, so the bodies grow with the square of the calls — what the cut writer takes out.
 */
import { parseScenario } from '../../src/scenario/model.js';
import { generate } from '../../src/scenario/generate.js';
import { providerBodyFiles } from '../../src/scenario/provider-bodies.js';
import { writeSources } from '../../src/scenario/files.js';

export interface BodySession {
  session: string;
  /** The dump's files by name (`index.jsonl` included), as the runtime would have written them. */
  bodies: Map<string, string>;
  /** Bytes of the session's transcripts. */
  transcriptBytes: number;
}

export function bodySession(calls: number, at = Date.parse('2026-06-01T09:00:00Z')): BodySession {
  const output = 'line of build output that a tool printed while it ran; '.repeat(22).slice(0, 1200);
  const scn = parseScenario(
    {
      provider_bodies: true,
      system_prompt: 'You keep the build green and explain every change you make. '.repeat(34).slice(0, 2000),
      tools: [
        {
          name: 'Bash',
          description: 'Runs a shell command in the repository and returns what it printed. '.repeat(30).slice(0, 2000),
          input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
        },
      ],
      steps: [
        { input: 'make the build pass' },
        ...Array.from({ length: calls - 1 }, (_, i) => ({
          call: { text: `Step ${i + 1}.`, tool: { name: 'Bash', input: { command: `make step-${i + 1}` }, result: output } },
        })),
        { call: { text: 'The build passes.' } },
      ],
    },
    'body-session',
  );
  const g = generate(scn, { at });
  let transcriptBytes = 0;
  for (const text of g.files.values()) transcriptBytes += Buffer.byteLength(text);
  return { session: g.session, bodies: providerBodyFiles(scn, g), transcriptBytes };
}

/** Writes the dump into `dir`. */
export function writeBodies(dir: string, s: BodySession): void {
  writeSources(dir, s.bodies);
}
