// winston JSON lines to stdout, with the namespace/name of the object concerned as fields.
// The message is a fixed sentence; everything variable goes in the fields. Never log tokens.
import winston from "winston";

export type Logger = winston.Logger;

export function createLogger(level: string, component: string): Logger {
  return winston.createLogger({
    level,
    defaultMeta: { component },
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console()],
  });
}

/** A logger that drops everything, for tests that do not read logs. */
export function silentLogger(): Logger {
  return winston.createLogger({ silent: true, transports: [new winston.transports.Console()] });
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
