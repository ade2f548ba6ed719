// auth-cache-key's cache (nginx's proxy_cache for the auth location): auth answers by key, each
// for the time auth-cache-duration gives its status. Bounded in entries and in each entry's size,
// the least recently used dropped first, so a flood of distinct keys costs only more auth
// requests. Per gateway worker; answers the auth server marked uncacheable never get here.

/** An auth server's answer as the verdict reads it: the status and the headers it needs. */
export interface CachedAnswer {
  readonly status: number;
  /** Lower-case names, as Node's parser gives them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export const AUTH_CACHE_ENTRIES = 4096;
/** Header bytes beyond which an answer is not kept (at most 32 MiB for a full cache). */
export const AUTH_CACHE_ENTRY_BYTES = 8192;

interface Entry {
  readonly answer: CachedAnswer;
  readonly expires: number;
}

function sizeOf(key: string, answer: CachedAnswer): number {
  let bytes = key.length;
  for (const [name, value] of Object.entries(answer.headers)) {
    const values = value === undefined ? [] : Array.isArray(value) ? value : [value];
    for (const text of values) bytes += name.length + text.length;
  }
  return bytes;
}

export class AuthCache {
  // A Map keeps insertion order: a hit is moved to the end, the first entry is the least recent.
  private readonly entries = new Map<string, Entry>();

  constructor(
    readonly maxEntries = AUTH_CACHE_ENTRIES,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): CachedAnswer | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (entry.expires <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.answer;
  }

  set(key: string, answer: CachedAnswer, ttlMs: number): void {
    if (ttlMs <= 0 || sizeOf(key, answer) > AUTH_CACHE_ENTRY_BYTES) return;
    this.entries.delete(key);
    this.entries.set(key, { answer, expires: this.now() + ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}

const NO_STORE =
  /(?:^|[\s,])(?:no-store|no-cache|private)(?:$|[\s,=])|max-age\s*=\s*0*(?:$|[\s,])/i;

/**
 * Whether nginx's proxy cache would keep an answer with these headers: not with Set-Cookie,
 * Cache-Control no-store, no-cache, private or max-age=0, X-Accel-Expires 0, or Vary: *.
 */
export function authCacheable(headers: CachedAnswer["headers"]): boolean {
  if (headers["set-cookie"] !== undefined) return false;
  const control = headers["cache-control"];
  if (control !== undefined && NO_STORE.test(String(control))) return false;
  if (headers["x-accel-expires"] === "0") return false;
  return String(headers.vary ?? "").trim() !== "*";
}
