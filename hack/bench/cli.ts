// What every benchmark's command line shares: positive integer flags, and main's exit code.

/** `--name N` from argv, a positive integer; `fallback` when absent. */
export function integerFlag(argv: readonly string[], name: string, fallback: number): number {
  const index = argv.indexOf(name);
  const parsed = index < 0 ? fallback : Number(argv[index + 1]);
  if (!Number.isInteger(parsed) || parsed <= 0)
    throw new Error(`${name}: expected a positive integer`);
  return parsed;
}

/** Runs a benchmark's main; exits 0 when it finished, 1 (with the error printed) otherwise. */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
