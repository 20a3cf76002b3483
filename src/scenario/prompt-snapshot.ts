/**
 * An `inject` step's attachment. Every type is written as the step gives it, except a
 * `prompt_snapshot`, written as Claude Code 2.1.328 writes one: the system prompt as a list of text
 * blocks and, on the snapshot that carries them, the tool definitions with their schemas.
 */
export function injectAttachment(inject: { type: string } & Record<string, unknown>): Record<string, unknown> {
  const { type, ...rest } = inject;
  if (type !== 'prompt_snapshot') return { type, ...rest };
  const { system_prompt: system, tools, ...more } = rest;
  const out: Record<string, unknown> = { type, ...more };
  if (system !== undefined) out.systemPrompt = [String(system)];
  if (Array.isArray(tools))
    out.tools = tools.map((t) => {
      const d = t as { name?: unknown; description?: unknown; input_schema?: unknown };
      return { name: d.name, description: d.description, input_schema: d.input_schema ?? { type: 'object', properties: {} } };
    });
  return out;
}
