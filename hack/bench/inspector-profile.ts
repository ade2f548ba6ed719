// A CPU profile of another Node process over a chosen span, through its inspector (started with
// `--inspect=127.0.0.1:0`). `--cpu-prof` writes a profile only when the process exits on its
// own, which Pepr's admission process often does not within the harness's grace (its profile was
// lost), and it covers the whole run; this covers exactly the span measured. Uses the global
// WebSocket (Node 22 and later: run the benchmark on the image's Node).
import { readFileSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** The inspector's WebSocket URL, from the line Node prints to the process's log at start. */
export async function inspectorUrl(logFile: string, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const url = /Debugger listening on (ws:\/\/\S+)/.exec(readFileSync(logFile, "utf8"))?.[1];
    if (url !== undefined) return url;
    if (Date.now() > deadline)
      throw new Error(`${logFile}: no inspector URL within ${timeoutMs} ms`);
    await sleep(100);
  }
}

type Answer = { id: number; result?: Record<string, unknown>; error?: { message: string } };

export class InspectorProfiler {
  #next = 0;
  readonly #waiting = new Map<number, (answer: Answer) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.onmessage = (event: MessageEvent) => {
      const answer = JSON.parse(String(event.data)) as Answer;
      this.#waiting.get(answer.id)?.(answer);
      this.#waiting.delete(answer.id);
    };
  }

  static async connect(url: string): Promise<InspectorProfiler> {
    if (typeof WebSocket === "undefined") {
      throw new Error(
        `profiling over the inspector needs Node 22 or later (this is ${process.version})`,
      );
    }
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = () => reject(new Error(`cannot connect to the inspector at ${url}`));
    });
    const profiler = new InspectorProfiler(socket);
    await profiler.call("Profiler.enable");
    // 200 µs: a review takes about a millisecond of CPU, so 1 ms samples would see few of it.
    await profiler.call("Profiler.setSamplingInterval", { interval: 200 });
    return profiler;
  }

  start(): Promise<unknown> {
    return this.call("Profiler.start");
  }

  /** Stops the profile begun by start() and writes it to `file` (a .cpuprofile). */
  async stop(file: string): Promise<void> {
    const { profile } = await this.call("Profiler.stop");
    writeFileSync(file, JSON.stringify(profile));
  }

  close(): void {
    this.socket.close();
  }

  private call(method: string, params: object = {}): Promise<Record<string, unknown>> {
    const id = ++this.#next;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, ({ result, error }) =>
        error === undefined
          ? resolve(result ?? {})
          : reject(new Error(`${method}: ${error.message}`)),
      );
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }
}
