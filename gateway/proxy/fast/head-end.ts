// Where a message head ends in bytes still arriving: the blank line (CRLF CRLF), checked line by
// line so that a bare LF is found as soon as it arrives, not after the head (RFC 9112 2.2: a
// recipient must not take a bare LF for a line end, as Node's parser and nginx's do not).

/**
 * The index of the CRLF CRLF ending the head in `data`, scanning from `from` (bytes before it were
 * scanned already); -1 while it has not arrived, -2 when a line ends in a bare LF.
 */
export function findHeadEnd(data: Buffer, from: number): number {
  let lf = data.indexOf(10, from);
  while (lf >= 0) {
    if (lf === 0 || data[lf - 1] !== 13) return -2;
    if (lf >= 3 && data[lf - 2] === 10 && data[lf - 3] === 13) return lf - 3;
    lf = data.indexOf(10, lf + 1);
  }
  return -1;
}
