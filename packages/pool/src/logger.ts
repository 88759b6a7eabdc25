import { redactSecrets } from "./redact";

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** The pool logs through this: URL secrets, `token=` pairs and bearer credentials never reach the caller's logger. */
export function redactingLogger(logger: Logger): Logger {
  return {
    debug: (message) => logger.debug(redactSecrets(message)),
    info: (message) => logger.info(redactSecrets(message)),
    warn: (message) => logger.warn(redactSecrets(message)),
    error: (message) => logger.error(redactSecrets(message)),
  };
}
