import { AsyncLocalStorage } from "node:async_hooks";
import type { ServerEvent, ServerEventBus } from "@modelcontextprotocol/server";

/** Whose a listen stream is: its principal and the session its requests run in. */
export interface ListenOwner {
  principal: string;
  session: string;
}

/** Whom an event is for: everyone, or the owner of an isolated server's instance (per principal, or per session when `session` is set). */
export type EventAudience = { principal: string; session?: string } | undefined;

interface Entry {
  listener: (event: ServerEvent) => void;
  owner: ListenOwner | undefined;
}

/**
 * The change-event bus of the 2026-07-28 listen streams, knowing whose each stream is: an isolated server's instance's
 * list changes and resource updates go to its owner's streams alone. The SDK's listen router subscribes while serving
 * the listen request, so the stream's owner is the one that `opening` runs the request as.
 */
export class ListenBus implements ServerEventBus {
  readonly #entries = new Set<Entry>();
  readonly #opening = new AsyncLocalStorage<ListenOwner>();

  /** Serves a listen request as `owner`'s: the stream it opens hears `owner`'s instances' events. */
  opening<T>(owner: ListenOwner, serve: () => T): T {
    return this.#opening.run(owner, serve);
  }

  publish(event: ServerEvent, audience?: EventAudience): void {
    for (const entry of [...this.#entries]) {
      if (audience && !(entry.owner?.principal === audience.principal && (audience.session === undefined || audience.session === entry.owner.session)))
        continue;
      try {
        entry.listener(event);
      } catch {
        // One stream's failure to write leaves the others be (the router tears its own stream down).
      }
    }
  }

  subscribe(listener: (event: ServerEvent) => void): () => void {
    const entry: Entry = { listener, owner: this.#opening.getStore() };
    this.#entries.add(entry);
    return () => void this.#entries.delete(entry);
  }

  /** Streams open now (tests and status). */
  get size(): number {
    return this.#entries.size;
  }
}
