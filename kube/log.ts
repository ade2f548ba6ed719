// The workloads' logs: JSON lines on stdout, one per event, in the shape the Pepr module's pino
// logger writes, so one query reads every Bulwark process: `level` (pino's number: 20 debug,
// 30 info, 40 warn, 50 error), `time` (Unix milliseconds), `pid`, `hostname`, `msg`, then
// `component` and the event's fields. The message is a fixed sentence; everything variable (the
// object's namespace/name, the error) goes in fields, so lines can be searched and counted. Never
// log tokens or keys. winston does the levels and transports; only the line's shape is pino's.
import { hostname } from "node:os";
import winston from "winston";

/** pino's numeric levels, which Pepr's own lines carry. */
export const PINO_LEVELS: Readonly<Record<string, number>> = {
  error: 50,
  warn: 40,
  info: 30,
  debug: 20,
};

// winston keeps the finished line under this symbol (triple-beam's MESSAGE).
const LINE = Symbol.for("message");
const HOST = hostname();

/** Writes the event as pino does; fields cannot overwrite level, time, pid, hostname or msg. */
const pinoLine = winston.format(info => {
  const { level, message, ...fields } = info;
  const line = {
    ...fields,
    level: PINO_LEVELS[level] ?? 30,
    time: Date.now(),
    pid: process.pid,
    hostname: HOST,
    msg: message,
  };
  // Key order as pino writes it: the fixed fields first.
  const { level: l, time, pid, hostname: h, msg, ...rest } = line;
  (info as Record<symbol, unknown>)[LINE] = JSON.stringify({
    level: l,
    time,
    pid,
    hostname: h,
    msg,
    ...rest,
  });
  return info;
});

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
    format: pinoLine(),
    transports: [new winston.transports.Console()],
  });
}

/** An error as one log field: its message, or the value itself when something else was thrown. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
