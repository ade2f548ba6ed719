// Trimming by a character test, in one pass from each end. A regular expression such as /[ \t]+$/
// is quadratic in V8's backtracking engine: on a long run of the characters that does not reach
// the end, it starts again at every character of the run (40 000 tabs: 2.9 s). Tenants write
// the text trimmed here (annotations, TLS Secrets), so trimming must stay linear.

/** `text` from `start` to `end` without the leading and trailing characters `trims` accepts. */
export function trimWhere(
  text: string,
  trims: (code: number) => boolean,
  start = 0,
  end = text.length,
): string {
  while (start < end && trims(text.charCodeAt(start))) start++;
  return trimEndWhere(text, trims, start, end);
}

/** `text` from `start` to `end` without the trailing characters `trims` accepts. */
export function trimEndWhere(
  text: string,
  trims: (code: number) => boolean,
  start = 0,
  end = text.length,
): string {
  while (end > start && trims(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

// Go's unicode.IsSpace beyond Latin-1, but for U+2000..U+200A.
const GO_SPACES_BEYOND_LATIN1 = new Set([0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000]);

/** Go's unicode.IsSpace, the characters strings.TrimSpace trims. */
export function isGoSpace(code: number): boolean {
  if (code <= 0xff) {
    return code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0x85 || code === 0xa0;
  }
  return (code >= 0x2000 && code <= 0x200a) || GO_SPACES_BEYOND_LATIN1.has(code);
}

/** Go's strings.TrimSpace. */
export function trimGoSpace(text: string): string {
  return trimWhere(text, isGoSpace);
}

/** Space and horizontal tab: HTTP's optional whitespace, and what Go's pem trims from lines. */
export function isSpaceOrTab(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/** "/": for trailing slashes. */
export function isSlash(code: number): boolean {
  return code === 0x2f;
}
