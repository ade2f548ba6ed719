// winston JSON logs to stdout; each line names the node it concerns where there is one.
import winston from "winston";
import type { DaemonLog } from "./daemon";

export function makeLogger(level: string, node: string): DaemonLog & { close(): void } {
  const logger = winston.createLogger({
    level,
    defaultMeta: { component: "bulwark-edge-health", self: node },
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console()],
  });
  return {
    info: (message, meta) => void logger.info(message, meta),
    warn: (message, meta) => void logger.warn(message, meta),
    debug: (message, meta) => void logger.debug(message, meta),
    close: () => logger.close(),
  };
}
