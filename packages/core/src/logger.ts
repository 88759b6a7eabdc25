import { redactSecrets } from "./mask";

/** Where codemux packages write what they do; every method takes one line. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export interface StderrLoggerOptions {
  /** The lowest level written; `warn` by default. */
  level?: LogLevel;
  /** Put before each line's level: `codemux` gives `codemux warn: ...`. */
  prefix?: string;
  /** Where a line goes; stderr (through `console.error`) by default, never stdout, which carries MCP over stdio. */
  write?: (line: string) => void;
}

const consoleError = (line: string) => (globalThis as { console?: { error(line: string): void } }).console?.error(line);

/** Lines at `level` and above, as `<prefix> <level>: <message>`, with secrets masked (see `redactSecrets`). */
export function stderrLogger(options: StderrLoggerOptions = {}): Logger {
  const rank = LOG_LEVELS.indexOf(options.level ?? "warn");
  const write = options.write ?? consoleError;
  const prefix = options.prefix ?? "codemux";
  const at = (level: LogLevel) =>
    LOG_LEVELS.indexOf(level) <= rank
      ? (message: string) => {
          try {
            write(`${prefix} ${level}: ${redactSecrets(message)}`);
          } catch {
            // A closed stderr (EPIPE) must not end the process that was logging.
          }
        }
      : () => {};
  return { error: at("error"), warn: at("warn"), info: at("info"), debug: at("debug") };
}

/**
 * Passes every line to `logger` with secrets masked by `mask`: by default `redactSecrets`, so that what a package
 * logs through it never holds a URL secret or a bearer token.
 */
export function redactingLogger(logger: Logger, mask: (text: string) => string = redactSecrets): Logger {
  return {
    debug: (message) => logger.debug(mask(message)),
    info: (message) => logger.info(mask(message)),
    warn: (message) => logger.warn(mask(message)),
    error: (message) => logger.error(mask(message)),
  };
}

/** Whether a switch variable's value turns something off: `0`, `false` or `off` (any case, spaces around ignored). */
export function isSwitchedOff(value: string | undefined): boolean {
  const text = value?.trim().toLowerCase();
  return text === "0" || text === "false" || text === "off";
}
