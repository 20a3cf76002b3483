/**
 * The JSON API's answers less what `extensions.view.hide` withholds: the document (and the
 * `/calls` and `/tools` rows read from it), a landed record, the workspace changes and the list's
 * rows. With nothing withheld every answer passes through unchanged (the document already says
 * `summary.withheld: {}`).
 */
import { claudeCodeWithheldContent } from '../../adapters/claude-code/withheld-content.js';
import type { ViewDocument } from '../../formats/view/types.js';
import { withholdChanges, withholdDocument, withholdRecord, withholdRow, type WithholdCategory } from '../../formats/view/withhold.js';
import type { SdRecord } from '../../formats/session-data/types.js';

export class WithheldAnswers {
  private readonly hide: ReadonlySet<WithholdCategory>;
  /** The last document withheld, by the JSON it came from: the catalog hands out one string per fold. */
  private last: { json: string; out: string } | undefined;

  constructor(hide: readonly WithholdCategory[]) {
    this.hide = new Set(hide);
  }

  /** The served document as JSON text. */
  documentJson(json: string): string {
    if (!this.hide.size) return json; // served-view.ts already says nothing is withheld
    if (this.last?.json === json) return this.last.out;
    const out = JSON.stringify(withholdDocument(JSON.parse(json) as ViewDocument, this.hide));
    this.last = { json, out };
    return out;
  }

  document(json: string): ViewDocument {
    return JSON.parse(this.documentJson(json)) as ViewDocument;
  }

  record<T extends { record: SdRecord; header: { kind: string } }>(answer: T): T & { withheld?: WithholdCategory[] } {
    if (!this.hide.size) return answer;
    const { record, withheld } = withholdRecord(answer.record, answer.header.kind, this.hide, claudeCodeWithheldContent);
    return withheld.length ? { ...answer, record, withheld } : answer;
  }

  changes<T extends { changes: object[] }>(answer: T): T {
    return this.hide.size ? withholdChanges(answer, this.hide) : answer;
  }

  /**
   * One call's whole prompt (prompts.ts): nothing of it when API bodies are withheld, and without
   * the system prompt's text when that is.
   */
  prompt<T extends { conversation: string; message_id: string; request?: { system: { text: string } } }>(
    answer: T,
  ): T | { conversation: string; message_id: string; withheld: WithholdCategory[] } {
    if (this.hide.has('api_bodies')) return { conversation: answer.conversation, message_id: answer.message_id, withheld: ['api_bodies'] };
    if (!this.hide.has('system_prompt') || !answer.request) return answer;
    return { ...answer, request: { ...answer.request, system: { ...answer.request.system, text: '' } }, withheld: ['system_prompt'] };
  }

  rows<T extends { first_prompt?: string; prompts?: string[]; title?: string; title_from?: string }>(rows: T[]): T[] {
    return this.hide.size ? rows.map((r) => withholdRow(r, this.hide)) : rows;
  }
}
