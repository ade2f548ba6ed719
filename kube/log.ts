// The workloads' logs: winston JSON lines on stdout, one per event. The message is a fixed sentence;
// everything variable (the object's namespace/name, the error) goes in fields, so lines can be
// searched and counted. Never log tokens or keys.
import winston from "winston";

export type Logger = winston.Logger;

/** A logger for one program (`component`), with fields every line of it carries. */
export function createLogger(
  component: string,
  level: string,
  fields: Record<string, unknown> = {},
): Logger {
  return winston.createLogger({
    level,
    defaultMeta: { component, ...fields },
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console()],
  });
}

/** An error as one log field: its message, or the value itself when something else was thrown. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
