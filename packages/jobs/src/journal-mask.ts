import { oneLine, redactSecrets, type BackgroundWork } from "@codemux/core";
import { boundedRequest } from "./portable";
import { argsDigest } from "./transcript";
import type { JobRecord } from "./types";

/**
 * Masks secrets in what the journal keeps: a job's request, its description, progress and error lines.
 * `@codemux/hooks`' `Redactor` is one (the rule the audit plugin applies to arguments).
 */
export interface JournalRedactor {
  value(input: unknown, options: { keys: boolean }): { value: unknown };
  text(input: string): { text: string };
}

/** What the journal keeps of requests and lines: redacted, or, without a redactor, a request's digest and lines with credentials masked. */
export class JournalMask {
  readonly #redactor: JournalRedactor | undefined;

  constructor(redactor: JournalRedactor | undefined) {
    this.#redactor = redactor;
  }

  /** What the journal keeps of a request: redacted, or only its digest when no redactor was given. */
  request(request: Record<string, unknown>): Record<string, unknown> {
    if (!this.#redactor) return { argsSha256: argsDigest(request) };
    return this.#redactor.value(boundedRequest(request), { keys: true }).value as Record<string, unknown>;
  }

  /** The record of a new job, queued, as the journal keeps it. */
  newRecord(id: string, work: BackgroundWork, fields: Pick<JobRecord, "instance" | "createdAt">): JobRecord {
    return {
      id,
      kind: work.kind,
      description: this.text(oneLine(work.description, 120)),
      principal: work.session.principal,
      session: work.session.id,
      request: this.request(work.request),
      pid: process.pid,
      ...fields,
      status: "queued",
      toolCalls: 0,
      inFlight: 0,
    };
  }

  /** A line for the journal (a description, progress, an error) with secrets masked. */
  text(text: string): string {
    return this.#redactor ? this.#redactor.text(text).text : redactSecrets(text);
  }
}
