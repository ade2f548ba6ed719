// Go's strconv as ingress-nginx and Tengine-Ingress read annotation values with it: ParseBool for
// every boolean, Atoi for every integer. Reproduced exactly (test/oracles/strconv asks Go itself),
// so an annotation means here what it meant to the controller it was written for.

const ATOI_SYNTAX = /^[+-]?[0-9]+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Go's `strconv.Atoi` on a 64-bit platform, printed back as `%d` would: an optional sign and
 * decimal digits only, within int64. Returns undefined where Atoi returns an error.
 */
export function parseGoInt(text: string): string | undefined {
  if (!ATOI_SYNTAX.test(text)) return undefined;
  // Up to 15 digits is always a safe integer; Number also turns "-0" into 0, printed "0".
  if (text.length <= 15) return String(Number(text));
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : value.toString();
}

const GO_TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const GO_FALSE = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** Go's `strconv.ParseBool`: exactly these twelve spellings, no spaces; undefined otherwise. */
export function parseGoBool(text: string): boolean | undefined {
  if (GO_TRUE.has(text)) return true;
  if (GO_FALSE.has(text)) return false;
  return undefined;
}
