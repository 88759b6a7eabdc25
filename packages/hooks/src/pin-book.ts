import type { RecordTable } from "@codemux/core";
import { PinFileError } from "./errors";
import { readPinFile, writePinFile, type PinFile, type PinRecord } from "./pin-store";

/** What a change makes of one record: the new record, or undefined to leave it as it is. */
export type PinChange = (name: string, current: PinRecord | undefined) => PinRecord | undefined;

/** Where pins and approvals are kept: the pin file (one instance), or a table every instance shares (Redis). */
export interface PinBook {
  load(): Promise<PinFile>;
  /** Applies `change` to each named record; in a shared table each record changes atomically. Resolves with every record after. */
  update(names: readonly string[], change: PinChange): Promise<PinFile>;
}

/** Tries of one record's compare-and-set before giving up: each lost try means another instance wrote that record meanwhile. */
const MAX_SWAP_TRIES = 50;

/** The pin file: read, changed and written whole (atomically renamed), as codemux always kept pins. */
export function filePinBook(file: string): PinBook {
  return {
    load: () => readPinFile(file),
    async update(names, change) {
      const data = await readPinFile(file);
      let changed = false;
      for (const name of names) {
        const next = change(name, data.tools[name]);
        if (next === undefined) continue;
        data.tools[name] = next;
        changed = true;
      }
      if (changed) await writePinFile(file, data);
      return data;
    },
  };
}

/** Pins in a table every instance shares: one record per tool, each changed by compare-and-set (no lost approval between instances). */
export function sharedPinBook(table: RecordTable): PinBook {
  const load = async (): Promise<PinFile> => {
    const tools: Record<string, PinRecord> = {};
    for (const [name, text] of await table.all()) tools[name] = parseRecord(name, text);
    return { version: 1, tools };
  };
  return {
    load,
    async update(names, change) {
      for (const name of names) {
        for (let tries = 0; ; tries++) {
          if (tries === MAX_SWAP_TRIES) throw new PinFileError(`The shared pin of ${name} kept changing under codemux (${MAX_SWAP_TRIES} tries); try again.`);
          const text = await table.get(name);
          const next = change(name, text === undefined ? undefined : parseRecord(name, text));
          if (next === undefined || (await table.swap(name, text, JSON.stringify(next)))) break;
        }
      }
      return await load();
    },
  };
}

function parseRecord(name: string, text: string): PinRecord {
  try {
    const record = JSON.parse(text) as PinRecord;
    if (typeof record?.server !== "string") throw new Error("no server");
    return record;
  } catch (error) {
    throw new PinFileError(`The shared pin of ${name} is damaged (${(error as Error).message}); delete it and codemux pins the tool afresh on first sight.`, {
      cause: error,
    });
  }
}
