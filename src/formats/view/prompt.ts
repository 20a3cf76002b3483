/**
 * What a provider call was sent and what came back, as the view document carries it beside an
 * `llm.call`: the input manifest (system prompt, tools offered, messages, parameters, cache
 * breakpoints), the response's stop reason and usage, and what changed in the context since the
 * previous call of the same stream. Types only; the adapter reads the bodies into them.
 */
export interface MessageShape {
  role: string;
  bytes: number;
  blocks: string[];
  /** 16 hex characters of the message's content as it means, not as it is spelled. */
  digest: string;
}

export interface InputManifest {
  model?: string;
  system: { blocks: number; chars: number; bytes: number; sha256: string; text: string };
  tools: { count: number; names: string[]; schema_bytes: number; digests: Record<string, string> };
  messages: { count: number; roles: Record<string, number>; bytes: number; items: MessageShape[] };
  parameters: Record<string, unknown>;
  cache_breakpoints: { at: string; ttl?: string }[];
}

export interface OutputManifest {
  message_id?: string;
  model?: string;
  stop_reason?: string;
  content: string[];
  usage?: { input?: number; output?: number; cache_read?: number; cache_creation?: number };
}

export interface ContextChange {
  /** The call this one is compared with: the previous call of the stream whose request is captured. */
  previous: string;
  /** Messages both calls start with, compared as content. */
  messages_kept: number;
  messages_added: number;
  /** Messages of the previous call that are not at the front of this one: a compaction or a rewrite. */
  messages_dropped: number;
  added: { role: string; bytes: number; blocks: string[] }[];
  tools_added: string[];
  tools_removed: string[];
  tools_changed: string[];
  system_changed: boolean;
  system_chars_delta: number;
  parameters_changed: string[];
}

/** The manifest a document carries: the input without the system prompt's text and the per-message list (those are per call, on request). */
export interface ViewPrompt {
  request?: Omit<InputManifest, 'system' | 'messages'> & {
    system: Omit<InputManifest['system'], 'text'>;
    messages: Omit<InputManifest['messages'], 'items'>;
  };
  response?: OutputManifest;
  /** Why a body the call lists could not be read, one line each. */
  problems?: string[];
}

export interface ViewProviderBody {
  role: 'request' | 'response';
  ref: { seq: number; row: number };
  /**
   * Where the body came from: absent or `file` for the runtime's `file:` dump (whole), `inline` for an
   * OTLP log event holding its text (OTEL_LOG_RAW_API_BODIES=1). Given whenever a copy was set aside.
   */
  form?: 'file' | 'inline';
  /** Sent inline and cut short by the runtime (`body_truncated`): its manifest reads only what arrived. */
  truncated?: true;
  /**
   * The same body landed again and not listed as a body of its own: `inline`, another copy of its
   * text; `reference`, an OTLP event naming the dump file that holds it (`body_ref`).
   */
  duplicates?: { form: 'inline' | 'reference'; ref: { seq: number; row: number } }[];
}
