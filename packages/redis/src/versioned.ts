import { STORE_FORMAT_VERSION } from "@codemux/core";
import { StoreFormatError } from "./errors";

/** A value as codemux keeps it in a Redis field or list: its format version, a newline, the text. */
export function versioned(text: string): string {
  return `${STORE_FORMAT_VERSION}\n${text}`;
}

/** The text of a versioned value; a value of another format is refused with a sentence naming `key`. */
export function unversioned(key: string, value: string): string {
  const newline = value.indexOf("\n");
  const version = newline < 0 ? value.slice(0, 20) : value.slice(0, newline);
  if (version !== String(STORE_FORMAT_VERSION)) throw new StoreFormatError(key, version, STORE_FORMAT_VERSION);
  return value.slice(newline + 1);
}
