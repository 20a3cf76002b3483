/**
 * What Claude Code calls each name the model uses, declared beside the dialect that reads it so
 * a rename in the runtime changes both together. `aszcol glossary` prints this; a test fails when
 * assembly can emit a name that has no entry here.
 */
export interface Term {
  /** The runtime's own name, or undefined when the runtime has none (the project derives it). */
  native?: string;
  where: string;
  note?: string;
}

export const GLOSSARY_DIALECT = 'claude-code/1';

export const TERMS: Record<string, Term> = {
  // Structure
  session: { native: 'sessionId', where: 'every record, and the transcript file name' },
  conversation: { where: 'derived', note: 'the session id unless one is supplied; nothing on disk links two sessions' },
  stream: { native: 'agentId', where: 'the agent-<id>.jsonl file name of a child', note: 'membership comes from the file, never from isSidechain' },
  epoch: { where: 'derived', note: 'the span between two compact_boundary records' },
  segment: { where: 'derived', note: 'an activity window the assembler proposes; nothing commits it' },
  talk: { where: 'derived', note: 'one readable interaction, from where each prompt cycle was triggered' },
  run: {
    native: 'promptId',
    where: 'user records of a prompt cycle',
    note: 'keyed by stream and promptId together; a model response reaches it through its parents',
  },
  // Steps
  'llm.call': { native: 'message.id', where: 'assistant records sharing one', note: 'one call is several records; never grouped by requestId' },
  'message.assistant': { native: 'text block', where: 'an assistant record' },
  'message.synthetic': { native: 'message.model == "<synthetic>"', where: 'an assistant record', note: 'the client wrote it; no model produced it' },
  thinking: { native: 'thinking block', where: 'an assistant record', note: 'its text is usually not written; its signature is not landed' },
  tool: { native: 'tool_use + tool_result', where: 'two records', note: 'one step here, two blocks there, joined on the exact tool_use_id' },
  'agent.call': { native: 'Agent, Skill or Workflow tool_use', where: 'an assistant record', note: 'a tool whose child stream was joined to it' },
  'agent.launch_ack': { native: 'toolUseResult.status == "async_launched"', where: 'a tool result', note: 'an acknowledgement, not a result' },
  'agent.output': { where: 'derived', note: "the last model response in a child stream, and the run journal's result when there is one" },
  'message.external': { native: 'origin.kind == "human"', where: 'a user record', note: 'also a queued_command attachment whose commandMode is "prompt"' },
  'context.injection': { native: 'attachment', where: 'an attachment record', note: 'also a user record with isMeta' },
  'runtime.notification': { native: '<task-notification>', where: 'a record whose origin.kind is task-notification' },
  'epoch.boundary': { native: 'system/compact_boundary', where: 'a system record', note: 'recognised by subtype, never by text' },
  'epoch.summary': { native: 'isCompactSummary', where: 'a user record' },
  'error.api': { native: 'system/api_error', where: 'a system record', note: 'retry state unavailable' },
  'turn.duration': { native: 'system/turn_duration', where: 'a system record' },
  'control.command': { native: 'system/local_command', where: 'a system record' },
  'control.notice': { where: 'derived', note: 'not emitted by this assembler yet' },
  // Relations
  starts: { native: 'toolUseResult.agentId, or a run journal', where: 'a launch result' },
  reports: { native: '<task-notification>', where: "a user record's content", note: 'the first agent-id-shaped <task-id>, else the <tool-use-id>' },
  ends_with: { where: 'derived', note: 'from a child stream to its output' },
  follows: { native: 'logicalParentUuid', where: 'a compact_boundary record', note: 'the only link back across a reset' },
  summarizes: { native: 'parentUuid', where: 'an isCompactSummary record' },
  in_segment: { where: 'derived', note: 'from a talk to its activity window' },
  result_of: { native: 'tool_use_id', where: 'a tool_result block', note: 'the tool node references both records; no relation is written' },
  // Roles on records
  id: { native: 'uuid', where: 'record' },
  parent: { native: 'parentUuid', where: 'record' },
  call: { native: 'message.id', where: 'record', note: 'not requestId, which a client-fabricated record can reuse' },
  continues: { native: 'logicalParentUuid', where: 'a compact_boundary record' },
  child: { native: 'toolUseResult.agentId', where: "a launch result, a journal record, a notification's <task-id>" },
  batch: { native: 'toolUseResult.runId', where: 'a workflow launch result', note: 'also the run directory the batch is filed under' },
  trigger: {
    native: 'origin.kind',
    where: 'record, and attachment.origin.kind',
    note: 'human → external, task-notification → notification, anything else → unknown',
  },
  time: { native: 'timestamp', where: 'record' },
  model: { native: 'message.model', where: 'an assistant record' },
  // Workspace changes and MCP calls
  'changes/1': {
    native: 'toolUseResult.structuredPatch, .type, .content, .userModified',
    where: 'the result of a Write, Edit, MultiEdit or NotebookEdit',
    note: 'landed as a second data part beside the result; paths relative to the record’s cwd',
  },
  mcp_server: {
    native: 'tool_use.name mcp__<server>__<tool>',
    where: 'an assistant record',
    note: 'absent when the name does not split into one server and one tool',
  },
  mcp_tool: { native: 'tool_use.name mcp__<server>__<tool>', where: 'an assistant record', note: 'the whole name when it does not split' },
  outcome: { native: 'tool_result.is_error, toolUseResult.interrupted', where: 'the result record', note: 'returned, failed or interrupted' },
  // Qualities and states
  exact_unique: { where: 'derived', note: 'an identifier matched exactly one candidate' },
  exact_ambiguous: { where: 'derived', note: 'an identifier matched several; nothing chose one' },
  strong_inference: { where: 'derived', note: 'no identifier, but a well-founded structural argument' },
  weak_inference: { where: 'derived', note: 'plausible only' },
  unresolved: { where: 'derived', note: 'no usable evidence; carried as an entry, never dropped' },
  conflict: { where: 'derived', note: 'sources disagree' },
  available: { where: 'derived', note: 'the bytes are in a landed record' },
  unavailable: { where: 'derived', note: 'the runtime never wrote it, or the source was pruned' },
  unknown: { where: 'derived', note: 'no record of the run states a trigger the model names' },
  external: { native: 'origin.kind == "human"', where: 'record', note: 'also a run whose records state no origin at all' },
  notification: { native: 'origin.kind == "task-notification"', where: 'record' },
  // Unresolved kinds
  tool_result: { where: 'derived', note: 'no result landed for a tool use, or several carry its id' },
  tool_use: { where: 'derived', note: 'a result landed, and the request it answers never did' },
  child_stream: { where: 'derived', note: 'a child was announced, and its stream has not landed' },
  notified_child: { where: 'derived', note: 'a notification names a child whose stream has not landed' },
  spawn_call: { where: 'derived', note: 'a batch of children names a launch call that never landed' },
  spawn_of_child: { where: 'derived', note: 'a child stream landed, and nothing names the call that started it' },
  epoch_continuation: { where: 'derived', note: 'a reset names a record that is not in the landed data' },
  telemetry: {
    native: 'OTLP event or span (request_id, tool_use_id, parent span)',
    where: 'otlp_log / otlp_span records from the runtime’s own export',
    note: 'an event or span that joins no landed call or tool by its identifiers',
  },
};

/** Session Data's own fields, one line each, for a reader of a landed record. */
export const FIELDS: Record<string, string> = {
  ord: 'the source line number, counting from 1',
  off: 'the byte offset the source line starts at',
  sha: 'the first twelve hex characters of the SHA-256 of the source line',
  bytes: "the size of the source line, or of a part's original",
  from: 'who produced the record: agent, external or runtime',
  flags: 'states the record is in, such as finished or injected',
  usage: 'tokens the provider reported: in, out, cache_read, cache_write',
  parts: 'the content, one part per block, in source order',
  dropped: 'what the conversion left out on purpose, with its size and why',
  label: 'a name the runtime gave something',
  started_by: 'the agent that started a nested child',
  tool: 'the call a record refers to',
  k: 'the kind of a part: text, reasoning, call, result, media, data or unknown',
  state: 'how much of the original a part holds: available, truncated, redacted, omitted or unavailable',
};
