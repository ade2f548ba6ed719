// Password hashes are checked off the event loop: a pool of worker threads behind a bounded queue,
// so no cost a Secret asks for (bcrypt, SHA-crypt rounds) can stall requests to other hosts; what
// passed is remembered for a bounded time and number of entries (under a keyed hash of user,
// password and stored hash, never the password itself), so a client that keeps sending the same
// credentials costs one check per TTL.
import { createHmac, randomBytes } from "node:crypto";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import type { VerifyReply, VerifyRequest } from "./password-worker";

export type Verdict = "match" | "mismatch" | "busy";

export interface VerifierOptions {
  /** Worker threads (default 2). */
  threads?: number;
  /** Checks waiting for a thread beyond which new ones are answered "busy" (default 256). */
  maxQueue?: number;
  /** How long a verified password is remembered (default 60 s). */
  cacheTtlMs?: number;
  /** How many verified passwords are remembered, the oldest dropped first (default 10,000). */
  cacheEntries?: number;
  /** Checks one owner (a route's Secret) may have waiting or running (default 32). */
  maxPerOwner?: number;
}

const DEFAULTS: Required<VerifierOptions> = {
  threads: 2,
  maxQueue: 256,
  cacheTtlMs: 60_000,
  cacheEntries: 10_000,
  maxPerOwner: 32,
};

interface Job {
  /** Whose check it is (a route's Secret): one owner runs on one thread at a time. */
  owner: string;
  request: VerifyRequest;
  resolve: (verdict: Verdict) => void;
}

// From sources the worker is a .ts file run through tsx; in build/ the bundle sits in
// build/gateway/policy/ while this code is bundled into build/gateway/*.js.
const FROM_SOURCES = __filename.endsWith(".ts");
const WORKER_FILE = FROM_SOURCES
  ? join(__dirname, "password-worker.ts")
  : join(__dirname, "policy", "password-worker.js");

function startWorker(): Worker {
  if (!FROM_SOURCES) return new Worker(WORKER_FILE);
  const tsx = require.resolve("tsx/cjs/api");
  const code = `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(WORKER_FILE)});`;
  return new Worker(code, { eval: true });
}

class Thread {
  readonly worker: Worker;
  job: Job | undefined = undefined;

  constructor(onFree: (thread: Thread) => void, onGone: (thread: Thread) => void) {
    this.worker = startWorker();
    this.worker.on("message", (reply: VerifyReply) => {
      const job = this.job;
      this.job = undefined;
      this.worker.unref();
      if (job?.request.id === reply.id) job.resolve(reply.match ? "match" : "mismatch");
      onFree(this);
    });
    const gone = () => {
      // A thread that died cannot say the password matched: fail closed.
      this.job?.resolve("busy");
      this.job = undefined;
      onGone(this);
    };
    this.worker.on("error", gone);
    this.worker.on("exit", gone);
    // An idle thread never keeps the process alive (tests, shutdown); a busy one does, so a
    // check in progress is answered. After the listeners, which ref it.
    this.worker.unref();
  }

  run(job: Job): void {
    this.job = job;
    this.worker.ref();
    this.worker.postMessage(job.request);
  }
}

export class PasswordVerifier {
  readonly #options: Required<VerifierOptions>;
  readonly #threads = new Set<Thread>();
  readonly #queue: Job[] = [];
  /** key → when it stops counting; Map order is insertion order, so the first is the oldest. */
  readonly #verified = new Map<string, number>();
  readonly #secret = randomBytes(32);
  /** Owners with a check on a thread now. */
  readonly #running = new Set<string>();
  /** Checks waiting or running, per owner. */
  readonly #owned = new Map<string, number>();
  #ids = 0;
  /** Checks made on a thread (not answered from the cache), for tests and metrics. */
  checks = 0;

  constructor(options: VerifierOptions = {}) {
    this.#options = { ...DEFAULTS, ...options };
  }

  /** The cache key of a user's password against one stored hash. */
  keyOf(user: string, password: Buffer, stored: string): string {
    const hmac = createHmac("sha256", this.#secret);
    hmac.update(`${user.length}:${user}\0${stored.length}:${stored}\0`, "latin1");
    return hmac.update(password).digest("base64");
  }

  /** Whether the password was verified within the TTL (no thread involved). */
  remembered(key: string, now = Date.now()): boolean {
    const until = this.#verified.get(key);
    if (until === undefined) return false;
    if (until > now) return true;
    this.#verified.delete(key);
    return false;
  }

  /**
   * Checks the password on a thread; a match is remembered under `key`. An owner's checks run one
   * at a time, so one Secret's costly hashes hold at most one thread and the others serve the
   * rest; "busy" past the queue's bound or the owner's.
   */
  verify(key: string, password: Buffer, stored: string, owner = ""): Promise<Verdict> {
    const owned = this.#owned.get(owner) ?? 0;
    if (this.#queue.length >= this.#options.maxQueue || owned >= this.#options.maxPerOwner) {
      return Promise.resolve("busy");
    }
    this.#owned.set(owner, owned + 1);
    return new Promise<Verdict>(resolve => {
      const request: VerifyRequest = {
        id: ++this.#ids,
        password: new Uint8Array(password),
        stored,
      };
      const job: Job = {
        owner,
        request,
        resolve: verdict => {
          this.#release(owner);
          if (verdict === "match") this.#remember(key);
          resolve(verdict);
        },
      };
      this.#queue.push(job);
      this.#dispatch();
    });
  }

  /** Checks waiting for a thread. */
  get queued(): number {
    return this.#queue.length;
  }

  async close(): Promise<void> {
    const threads = [...this.#threads];
    this.#threads.clear();
    await Promise.all(threads.map(thread => thread.worker.terminate()));
  }

  #remember(key: string): void {
    this.#verified.delete(key);
    this.#verified.set(key, Date.now() + this.#options.cacheTtlMs);
    while (this.#verified.size > this.#options.cacheEntries) {
      const oldest = this.#verified.keys().next().value;
      if (oldest === undefined) break;
      this.#verified.delete(oldest);
    }
  }

  #dispatch(): void {
    for (;;) {
      const at = this.#queue.findIndex(job => !this.#running.has(job.owner));
      if (at < 0) return;
      const thread = this.#idleThread();
      if (thread === undefined) return;
      const job = this.#queue.splice(at, 1)[0]!;
      this.#running.add(job.owner);
      this.checks++;
      thread.run(job);
    }
  }

  #release(owner: string): void {
    this.#running.delete(owner);
    const left = (this.#owned.get(owner) ?? 1) - 1;
    if (left > 0) this.#owned.set(owner, left);
    else this.#owned.delete(owner);
  }

  #idleThread(): Thread | undefined {
    for (const thread of this.#threads) if (thread.job === undefined) return thread;
    if (this.#threads.size >= this.#options.threads) return undefined;
    const thread = new Thread(
      () => this.#dispatch(),
      gone => {
        this.#threads.delete(gone);
        this.#dispatch();
      },
    );
    this.#threads.add(thread);
    return thread;
  }
}

let shared: PasswordVerifier | undefined;

/** The process's verifier (threads start on first use). */
export function sharedVerifier(): PasswordVerifier {
  shared ??= new PasswordVerifier();
  return shared;
}
