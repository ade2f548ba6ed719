// limit-rate: when each byte of a paced response may go. nginx sends limit_rate_after bytes
// freely, then sleeps after every write for as long as its bytes take at limit_rate; the same
// schedule written as a deadline (the n-th paced byte is due n / rate seconds after the response
// began) keeps the long-run rate exact however late the timers fire, and needs no state but the
// count of bytes sent.
import type { Bandwidth } from "../../core/annotations";

/** Paced bytes go in slices of a tenth of a second's worth (at least 1 byte, at most 16 KiB). */
export function paceSlice(bandwidth: Bandwidth): number {
  return Math.min(16_384, Math.max(1, Math.floor(bandwidth.bytesPerSecond / 10)));
}

/**
 * Milliseconds to wait before more bytes may go, `sent` bytes of the response having gone since
 * it began at `startedAt` (both times in ms); 0 when they may go now.
 */
export function paceDelayMs(
  bandwidth: Bandwidth,
  sent: number,
  startedAt: number,
  now: number,
): number {
  const paced = sent - bandwidth.after;
  if (paced <= 0) return 0;
  const due = startedAt + (paced * 1000) / bandwidth.bytesPerSecond;
  return due > now ? Math.ceil(due - now) : 0;
}
