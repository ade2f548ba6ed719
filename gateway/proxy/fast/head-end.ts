// Where a message head ends in bytes still arriving: the blank line (CRLF CRLF), checked line by
// line so that a bare CR or LF is found as soon as it arrives, not after the head (RFC 9112 2.2: a
// recipient must not take a bare LF for a line end, and a bare CR is invalid; Node's parser and
// nginx refuse both).

/**
 * The index of the CRLF CRLF ending the head in `data`, scanning from `from`, which must be the
 * start of a line (0, or what resumeAt returned); -1 while it has not arrived, -2 for a bare CR
 * or LF.
 */
export function findHeadEnd(data: Buffer, from: number): number {
  let at = from;
  for (;;) {
    const cr = data.indexOf(13, at);
    const lf = data.indexOf(10, at);
    if (cr < 0) return lf < 0 ? -1 : -2;
    if (lf >= 0 && lf < cr) return -2;
    if (cr + 1 === data.length) return -1;
    if (data[cr + 1] !== 10) return -2;
    if (cr === at && cr >= 2 && data[cr - 1] === 10 && data[cr - 2] === 13) return cr - 2;
    at = cr + 2;
  }
}

/** Where to resume scanning an unfinished head: the start of its last, unfinished line. */
export function resumeAt(data: Buffer): number {
  return data.lastIndexOf(10) + 1;
}
