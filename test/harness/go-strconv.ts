// Go's strconv as an oracle: ingress-nginx reads booleans with strconv.ParseBool and integers
// with strconv.Atoi (test/oracles/strconv/main.go).
import { askGoOracle } from "./go-oracle";

export interface GoAnswer {
  /** strconv.ParseBool's value; undefined when it returns an error. */
  bool: boolean | undefined;
  /** strconv.Atoi's value as decimal text (it may not fit a JavaScript number). */
  int: string | undefined;
}

/** What Go answers for each input, in order. */
export function askGo(inputs: readonly string[]): GoAnswer[] {
  return askGoOracle("strconv", inputs).map(raw => {
    const answer = raw as { bool: boolean | null; int: string | null };
    return { bool: answer.bool ?? undefined, int: answer.int ?? undefined };
  });
}
