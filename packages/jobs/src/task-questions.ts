import type { ClientCapabilities, ClientPeer, CreateMessageResult, ElicitResult, ListRootsResult, TaskInputRequest } from "@codemux/core";
import { JobsError } from "./errors";

/** Questions one task may have open at once (a snippet's calls may ask together); more are refused. */
export const MAX_OPEN_QUESTIONS = 8;
/** The longest a question waits for its answer (the SDK's own round timeout): past it the asking call gets an error. */
export const QUESTION_TIMEOUT_MS = 10 * 60_000;

interface OpenQuestion {
  request: TaskInputRequest;
  /** Whether an answer has the shape the question's method returns. */
  fits: (answer: Record<string, unknown>) => boolean;
  resolve: (answer: Record<string, unknown>) => void;
}

/**
 * The questions of one task of the Tasks extension (2026-07-28): a downstream server's elicitation,
 * sampling or roots request, made during the task's calls, waits here as one of the task's
 * `inputRequests` under a key never used twice, until `tasks/update` answers it. The task's
 * `ClientPeer` asks through it, so the relay reaches the task as it reaches a connected client.
 */
export class TaskQuestions {
  readonly #open = new Map<string, OpenQuestion>();
  #asked = 0;
  /** When a question was last asked or answered (ms since the epoch). */
  changedAt: number | undefined;

  constructor(
    readonly capabilities: ClientCapabilities | undefined,
    readonly now: () => number,
  ) {}

  /** The open questions by key, as `tasks/get` shows them. */
  get open(): Record<string, TaskInputRequest> {
    return Object.fromEntries([...this.#open].map(([key, question]) => [key, question.request]));
  }

  get size(): number {
    return this.#open.size;
  }

  /** The client of the task's calls: its questions wait for `tasks/update`; capabilities are those the creating request declared. */
  peer(): ClientPeer {
    return {
      capabilities: () => this.capabilities,
      elicit: (params, options) => this.#ask({ method: "elicitation/create", params }, isElicitResult, options?.signal) as Promise<ElicitResult>,
      createMessage: (params, options) =>
        this.#ask({ method: "sampling/createMessage", params }, isCreateMessageResult, options?.signal) as Promise<CreateMessageResult>,
      listRoots: (options) => this.#ask({ method: "roots/list" }, isListRootsResult, options?.signal) as Promise<ListRootsResult>,
    };
  }

  /** Answers open questions by key; keys not open now (never asked, answered, given up) and answers of the wrong shape are ignored. */
  answer(responses: Record<string, unknown>): number {
    let answered = 0;
    for (const [key, value] of Object.entries(responses)) {
      const question = this.#open.get(key);
      if (!question || !isRecord(value) || !question.fits(value)) continue;
      this.#open.delete(key);
      this.changedAt = this.now();
      question.resolve(value);
      answered++;
    }
    return answered;
  }

  #ask(request: TaskInputRequest, fits: OpenQuestion["fits"], signal: AbortSignal | undefined): Promise<Record<string, unknown>> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#open.size >= MAX_OPEN_QUESTIONS)
      return Promise.reject(new JobsError("BAD_REQUEST", `This task already waits on ${MAX_OPEN_QUESTIONS} questions; answer them with tasks/update first.`));
    const key = `q${++this.#asked}`;
    return new Promise((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        if (this.#open.delete(key)) this.changedAt = this.now();
      };
      const onAbort = () => {
        settle();
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        settle();
        reject(new JobsError("BAD_REQUEST", `No answer to ${request.method} came through tasks/update within ${QUESTION_TIMEOUT_MS / 60_000} minutes.`));
      }, QUESTION_TIMEOUT_MS);
      timer.unref();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#open.set(key, {
        request,
        fits,
        resolve: (answer) => {
          settle();
          resolve(answer);
        },
      });
      this.changedAt = this.now();
    });
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isElicitResult = (value: Record<string, unknown>) => value.action === "accept" || value.action === "decline" || value.action === "cancel";
const isCreateMessageResult = (value: Record<string, unknown>) =>
  typeof value.model === "string" && typeof value.role === "string" && value.content !== undefined;
const isListRootsResult = (value: Record<string, unknown>) => Array.isArray(value.roots);
