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
  bytes: number;
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

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}_${++this.#seq}`;
    const bytes = JSON.stringify(message).length;
    this.#events.set(id, { id, streamId, message, bytes });
    this.#bytes += bytes;
    for (const [oldId, old] of this.#events) {
      if (this.#events.size <= this.#maxEvents && this.#bytes <= this.#maxBytes) break;
      if (oldId === id) break;
      this.#events.delete(oldId);
      this.#bytes -= old.bytes;
    }
    return id;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.#events.get(eventId)?.streamId;
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const last = this.#events.get(lastEventId);
    if (!last) return "";
    let after = false;
    for (const event of [...this.#events.values()]) {
      if (after && event.streamId === last.streamId) await send(event.id, event.message);
      if (event.id === lastEventId) after = true;
    }
    return last.streamId;
  }

  get size(): number {
    return this.#events.size;
  }
}
