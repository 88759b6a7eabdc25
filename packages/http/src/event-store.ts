import type { EventStore, JSONRPCMessage } from "@modelcontextprotocol/server";

export interface BoundedEventStoreOptions {
  /** Events kept at most; the oldest go first. */
  maxEvents?: number;
  /** Bytes of JSON kept at most; the oldest go first. */
  maxBytes?: number;
}

interface StoredEvent {
  id: string;
  streamId: string;
  message: JSONRPCMessage;
  /** Bytes of its JSON; undefined until the event is settled (see `discard`). */
  bytes: number | undefined;
}

/**
 * Whether an answer sent as plain JSON leaves no resumable event behind (the default): its event is
 * discarded before its size is counted. `CODEMUX_JSON_EVENTS=keep` keeps every event, as before.
 */
export function discardJsonEventsByDefault(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.CODEMUX_JSON_EVENTS ?? "").trim().toLowerCase() !== "keep";
}

/**
 * One session's recent server-to-client messages, so a client that lost its stream resumes with
 * `Last-Event-ID` instead of losing them. Bounded in count and bytes (oldest dropped first); an id
 * older than what is kept resumes nothing rather than failing.
 */
export class BoundedEventStore implements EventStore {
  readonly #events = new Map<string, StoredEvent>();
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  #bytes = 0;
  #seq = 0;

  constructor(options: BoundedEventStoreOptions = {}) {
    this.#maxEvents = options.maxEvents ?? 1000;
    this.#maxBytes = options.maxBytes ?? 8 * 1024 * 1024;
  }

  /** Events stored since the last settling, whose size is not counted yet. */
  readonly #unsettled: StoredEvent[] = [];
  #settling = false;

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}_${++this.#seq}`;
    const event: StoredEvent = { id, streamId, message, bytes: undefined };
    this.#events.set(id, event);
    this.#unsettled.push(event);
    // Sized and bounded on the next turn of the event loop: an answer the bridge sends as plain JSON
    // meanwhile is discarded first, unsized (its JSON.stringify was most of this store's cost).
    if (!this.#settling) {
      this.#settling = true;
      setImmediate(() => this.settle());
    }
    return id;
  }

  /**
   * Drops an event that will never be asked for: the answer went out as a plain JSON body, whose
   * stream no client can resume. Returns whether it was still kept.
   */
  discard(eventId: string): boolean {
    const event = this.#events.get(eventId);
    if (!event) return false;
    this.#events.delete(eventId);
    if (event.bytes !== undefined) this.#bytes -= event.bytes;
    return true;
  }

  /** Counts the size of events stored since the last settling and drops the oldest past the bounds. */
  settle(): void {
    this.#settling = false;
    for (const event of this.#unsettled.splice(0)) {
      if (event.bytes !== undefined || this.#events.get(event.id) !== event) continue;
      event.bytes = JSON.stringify(event.message).length;
      this.#bytes += event.bytes;
    }
    for (const [oldId, old] of this.#events) {
      if (this.#events.size <= this.#maxEvents && this.#bytes <= this.#maxBytes) break;
      // The newest event stays, whatever its size (as before settling was deferred).
      if (this.#events.size === 1) break;
      this.#events.delete(oldId);
      this.#bytes -= old.bytes ?? 0;
    }
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.#events.get(eventId)?.streamId;
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    if (this.#unsettled.length > 0) this.settle();
    const last = this.#events.get(lastEventId);
    if (!last) return "";
    let after = false;
    for (const event of [...this.#events.values()]) {
      if (after && event.streamId === last.streamId) await send(event.id, event.message);
      if (event.id === lastEventId) after = true;
    }
    return last.streamId;
  }

  /** Events kept (settled first: the bounds hold in what this says). */
  get size(): number {
    if (this.#unsettled.length > 0) this.settle();
    return this.#events.size;
  }
}
