// The CLI's two kinds of failure, which its exit code tells apart (as kubectl and getopt tools do):
// 2 when the command line is wrong (nothing was tried), 1 when a right command could not be done
// (the cluster refused or was unreachable, an openssl call failed).
import { describeError } from "../kube/api-errors";

/** The command line is wrong: exit 2. */
export class UsageError extends Error {}

/** A right command that could not be done: exit 1. */
export class CommandFailed extends Error {}

/** Exit 2 for usage and input problems (`isInput` recognises the caller's own kinds), else 1. */
export function exitCodeFor(error: unknown, isInput: (error: unknown) => boolean): 1 | 2 {
  if (error instanceof UsageError || isInput(error)) return 2;
  // node:util parseArgs' errors (unknown option, missing value) are usage problems too.
  return String((error as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS") ? 2 : 1;
}

/** The one line printed for a failure. */
export function errorLine(error: unknown): string {
  return `bulwark: ${describeError(error)}\n`;
}
