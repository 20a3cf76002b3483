/**
 * What SkyWalking's OAP does with what a Sessionizer sends, as the facts the test OAP reads. The
 * expressions are the OAP's own text (filter, expSuffix, metricPrefix and each rule's name and exp),
 * so the test OAP parses them rather than trusting a table someone wrote by hand; the comments and
 * the downsampling arithmetic are left out because nothing here evaluates values.
 *
 * Sources, apache/skywalking (newest stored versions):
 * - oap-server/server-starter/src/main/resources/otel-rules/ai-agent/runtime-service.yaml @ 5c04c58ed481d092ad65aa60d8809be43c0ff5d6
 * - oap-server/server-starter/src/main/resources/otel-rules/ai-agent/runtime-instance.yaml @ 6154567cbc6db7f9f78edd936cbc6239204d217e
 * - oap-server/server-starter/src/main/resources/otel-rules/ai-agent/mcp_endpoint.yaml @ d9e895f560a12abaf335c51325c7d100b8359bbb
 * - oap-server/server-starter/src/main/resources/lal/ai-agent.yaml @ 6154567cbc6db7f9f78edd936cbc6239204d217e
 * - oap-server/server-starter/.../ai/agent/conversation/ingest/ConversationFileBuilder.java (the `ConversationFile`
 *   output type: what it verifies and the `reason` label of ai_agent_conversation_files_rejected)
 * - oap-server/server-receiver-plugin/otel-receiver-plugin/.../otlp/OpenTelemetryMetricRequestProcessor.java
 *   @ 091965c9f0f32384637456350e3900754a5a093f (resource attributes → MAL labels) and OpenTelemetryLogHandler.java
 *   (resource → service, instance, layer of a log)
 */

export interface MalRuleFile {
  source: string;
  filter: string;
  expSuffix: string;
  metricPrefix: string;
  metricsRules: { name: string; exp: string }[];
}

const AI_AGENT_FILTER = "{ tags -> tags.service_layer == 'AI_AGENT' }";

export const MAL_RULE_FILES: readonly MalRuleFile[] = [
  {
    source: 'otel-rules/ai-agent/runtime-service.yaml',
    filter: AI_AGENT_FILTER,
    expSuffix: "service(['service_name'], Layer.AI_AGENT)",
    metricPrefix: 'meter_ai_agent',
    metricsRules: [
      { name: 'tokens', exp: "claude_code_token_usage.sum(['service_name']).downsampling(SUM)" },
      { name: 'tokens_by_type', exp: "claude_code_token_usage.sum(['type', 'service_name']).downsampling(SUM)" },
      { name: 'tokens_by_model', exp: "claude_code_token_usage.sum(['model', 'type', 'service_name']).downsampling(SUM)" },
      { name: 'tokens_by_source', exp: "claude_code_token_usage.sum(['query_source', 'type', 'service_name']).downsampling(SUM)" },
      {
        name: 'cache_read_share',
        exp: "claude_code_token_usage.tagEqual('type', 'cacheRead').sum(['service_name']).safeDiv(claude_code_token_usage.tagNotEqual('type', 'output').sum(['service_name'])) * 100",
      },
      { name: 'cost_by_model', exp: "claude_code_cost_usage.sum(['model', 'service_name']).downsampling(SUM) * 1000000" },
      { name: 'active_time', exp: "claude_code_active_time_total.sum(['type', 'service_name']).downsampling(SUM) * 1000" },
      { name: 'sessions', exp: "claude_code_session_count.sum(['service_name']).downsampling(SUM)" },
      { name: 'lines_of_code', exp: "claude_code_lines_of_code_count.sum(['type', 'service_name']).downsampling(SUM)" },
      { name: 'commits', exp: "claude_code_commit_count.sum(['service_name']).downsampling(SUM)" },
      { name: 'pull_requests', exp: "claude_code_pull_request_count.sum(['service_name']).downsampling(SUM)" },
      { name: 'edit_decisions', exp: "claude_code_code_edit_tool_decision.sum(['decision', 'service_name']).downsampling(SUM)" },
    ],
  },
  {
    source: 'otel-rules/ai-agent/runtime-instance.yaml',
    filter: AI_AGENT_FILTER,
    expSuffix: "instance(['service_name'], ['service_instance_id'], Layer.AI_AGENT)",
    metricPrefix: 'meter_ai_agent_instance',
    metricsRules: [
      { name: 'tokens', exp: "claude_code_token_usage.sum(['service_name', 'service_instance_id']).downsampling(SUM)" },
      { name: 'tokens_by_type', exp: "claude_code_token_usage.sum(['type', 'service_name', 'service_instance_id']).downsampling(SUM)" },
      { name: 'tokens_by_model', exp: "claude_code_token_usage.sum(['model', 'type', 'service_name', 'service_instance_id']).downsampling(SUM)" },
      { name: 'tokens_by_source', exp: "claude_code_token_usage.sum(['query_source', 'type', 'service_name', 'service_instance_id']).downsampling(SUM)" },
      {
        name: 'cache_read_share',
        exp: "claude_code_token_usage.tagEqual('type', 'cacheRead').sum(['service_name', 'service_instance_id']).safeDiv(claude_code_token_usage.tagNotEqual('type', 'output').sum(['service_name', 'service_instance_id'])) * 100",
      },
      { name: 'cost_by_model', exp: "claude_code_cost_usage.sum(['model', 'service_name', 'service_instance_id']).downsampling(SUM) * 1000000" },
      { name: 'active_time', exp: "claude_code_active_time_total.sum(['type', 'service_name', 'service_instance_id']).downsampling(SUM) * 1000" },
      { name: 'sessions', exp: "claude_code_session_count.sum(['service_name', 'service_instance_id']).downsampling(SUM)" },
      { name: 'lines_of_code', exp: "claude_code_lines_of_code_count.sum(['type', 'service_name', 'service_instance_id']).downsampling(SUM)" },
      { name: 'commits', exp: "claude_code_commit_count.sum(['service_name', 'service_instance_id']).downsampling(SUM)" },
      { name: 'pull_requests', exp: "claude_code_pull_request_count.sum(['service_name', 'service_instance_id']).downsampling(SUM)" },
      { name: 'edit_decisions', exp: "claude_code_code_edit_tool_decision.sum(['decision', 'service_name', 'service_instance_id']).downsampling(SUM)" },
    ],
  },
  {
    source: 'otel-rules/ai-agent/mcp_endpoint.yaml',
    filter: AI_AGENT_FILTER,
    expSuffix: "endpoint(['service_name'], ['mcp_server_name', 'mcp_tool_name'], '/', Layer.AI_AGENT)",
    metricPrefix: 'meter_ai_agent_mcp',
    metricsRules: [
      { name: 'calls', exp: "agent_mcp_calls.sum(['service_name', 'mcp_server_name', 'mcp_tool_name']).downsampling(SUM)" },
      { name: 'calls_by_outcome', exp: "agent_mcp_calls.sum(['outcome', 'service_name', 'mcp_server_name', 'mcp_tool_name']).downsampling(SUM)" },
      { name: 'duration', exp: "agent_mcp_duration.sum(['service_name', 'mcp_server_name', 'mcp_tool_name']).downsampling(SUM)" },
    ],
  },
];

/** One `name tag("key") as Type` line of the LAL extractor. */
export interface LalField {
  field: string;
  tag: string;
  as: 'String' | 'Long';
  /** Read only when this tag is present (`if (tag("…") != "")`): the line's own tag, or for the five counts, `talks`. */
  guard?: string;
}

/** lal/ai-agent.yaml: rule `ai-agent-conversation`, layer AI_AGENT, outputType ConversationFile. */
export const LAL_RULE = {
  source: 'lal/ai-agent.yaml',
  name: 'ai-agent-conversation',
  layer: 'AI_AGENT',
  outputType: 'ConversationFile',
  every: [
    { field: 'format', tag: 'asz.format', as: 'String' },
    { field: 'digest', tag: 'asz.file.digest', as: 'String' },
    { field: 'lines', tag: 'asz.lines', as: 'Long' },
    { field: 'throughTime', tag: 'asz.through_time', as: 'String' },
  ] as LalField[],
  byFormat: {
    sd: [
      { field: 'session', tag: 'asz.session', as: 'String' },
      { field: 'seq', tag: 'asz.seq', as: 'Long' },
    ] as LalField[],
    sf: [
      { field: 'conversation', tag: 'asz.conversation', as: 'String' },
      { field: 'round', tag: 'asz.round', as: 'Long' },
      { field: 'sessionFromTime', tag: 'asz.session.from_time', as: 'String' },
      { field: 'sessionThroughTime', tag: 'asz.session.through_time', as: 'String' },
      { field: 'title', tag: 'asz.conversation.title', as: 'String' },
      // One `if`, on `talks`, guards the five together: `steps` absent beside `talks` is read, and fails.
      { field: 'talks', tag: 'asz.conversation.talks', as: 'Long', guard: 'asz.conversation.talks' },
      { field: 'steps', tag: 'asz.conversation.steps', as: 'Long', guard: 'asz.conversation.talks' },
      { field: 'streams', tag: 'asz.conversation.streams', as: 'Long', guard: 'asz.conversation.talks' },
      { field: 'segments', tag: 'asz.conversation.segments', as: 'Long', guard: 'asz.conversation.talks' },
      { field: 'unresolved', tag: 'asz.conversation.unresolved', as: 'Long', guard: 'asz.conversation.talks' },
      { field: 'changes', tag: 'asz.conversation.changes', as: 'Long', guard: 'asz.conversation.changes' },
      { field: 'linesAdded', tag: 'asz.conversation.lines_added', as: 'Long', guard: 'asz.conversation.lines_added' },
      { field: 'linesRemoved', tag: 'asz.conversation.lines_removed', as: 'Long', guard: 'asz.conversation.lines_removed' },
      { field: 'llmCalls', tag: 'asz.conversation.llm_calls', as: 'Long', guard: 'asz.conversation.llm_calls' },
      { field: 'subagents', tag: 'asz.conversation.subagents', as: 'Long', guard: 'asz.conversation.subagents' },
      { field: 'bashRuns', tag: 'asz.conversation.bash_runs', as: 'Long', guard: 'asz.conversation.bash_runs' },
    ] as LalField[],
  },
  /** The `reason` label values of ai_agent_conversation_files_rejected the builder registers. */
  rejectReasons: ['digest', 'lines', 'attributes'] as const,
} as const;

export type RejectReason = (typeof LAL_RULE.rejectReasons)[number];
