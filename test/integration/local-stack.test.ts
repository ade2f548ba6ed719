// `npm start` shows every feature: the README's "Try it" blocks, taken from README.md as they are,
// run one by one in bash against a real `npm start` (its default ports and `.bulwark/` folder,
// since that is what the blocks name), each checked by what it prints. Around them, what the
// blocks do not show: every node stays Ready (kube-controller-manager never enters its
// master-disruption mode), the pod runner writes Init:0/1 before Running, refuses with an Event
// a pod it cannot run, and Ctrl-C leaves no process behind.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { delimiter, join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { ROOT } from "../../packaging/build";
import { loadKubeConfig } from "../../hack/control-plane/kube";
import { waitUntil } from "../harness/wait";

const STATE_DIR = join(ROOT, ".bulwark");
/** build.sh's cache: kube-apiserver and the kubectl built from the same Kubernetes modules. */
const KUBECTL_DIR = execFileSync(
  "bash",
  [join(ROOT, "hack/control-plane/build.sh"), "--print-bin-dir"],
  {
    encoding: "utf8",
  },
).trim();
const READY = "\nBulwark is ready\n";

/** The fenced `sh` blocks of README.md's "## Try it" section, in order. */
export function tryItBlocks(readme: string): string[] {
  const start = readme.indexOf("\n## Try it\n");
  if (start < 0) return [];
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map(m => m[1] ?? "");
}

/** What each block must print, in README order: a block added there needs its line here. */
const EXPECTED: { about: string; prints: RegExp[]; never?: RegExp }[] = [
  {
    about: "the gateway: demo host, canary, TLS host",
    prints: [
      /stable backend of demo\.bulwark\.test/,
      /canary backend of demo\.bulwark\.test/,
      /stable backend of secure\.bulwark\.test/,
    ],
  },
  {
    about: "a pod naming a permission group starts, granted",
    prints: [/pod\/orders-reader condition met/, /^198\.51\.100\.\d+ \{"phase":"granted"/m],
  },
  { about: "deleting it revokes", prints: [/pod "orders-reader" deleted/, /Revoked/] },
  {
    about: "a provider of the HTTP kind and a group using it, both Ready",
    prints: [
      /permissionprovider\.bulwark\.dev\/orders-authz condition met/,
      /permissiongroup\.bulwark\.dev\/writers condition met/,
      /^orders-authz +http +http:\/\/127\.0\.0\.1:\d+ +True +8 +5 /m,
    ],
  },
  {
    about: "the edge zone, voted healthy, and a pod on bulwark-edge-1",
    prints: [/bulwark-edge-1 +demo +true/, /bulwark-edge-3 +demo +true/, /edge-web condition met/],
  },
  {
    about: "a cut node stays protected: no NoExecute taint, its endpoint kept ready",
    prints: [/condition met[\s\S]*condition met/, /^NoSchedule$/m, /^true$/m],
    // A line of taint effects (the demo command's own explanation names NoExecute too).
    never: /^(\w+ )*NoExecute( \w+)*$/m,
  },
  {
    about: "a killed node is voted unhealthy and tainted NoExecute; healed",
    // edge-1 Ready again, then edge-2: voted false, tainted, Ready again.
    prints: [/bulwark-edge-1 condition met[\s\S]*(bulwark-edge-2 condition met[\s\S]*){3}/],
  },
  {
    about: "a node labelled into a zone, the zones read, the label taken off",
    prints: [
      /node\/bulwark-local labeled/,
      /^bulwark-local .* lab$/m,
      /^bulwark-edge-1 .* demo$/m,
      /node\/bulwark-local unlabeled/,
    ],
  },
  {
    about: "a checksum publish for each kind",
    prints: [
      /created IngressCheckSum bulwark-system\//,
      /created SecretCheckSum bulwark-system\//,
      /^ingresschecksum\.tengine\.taobao\.org\/\S+ +content /m,
      /^secretchecksum\.tengine\.taobao\.org\/\S+ +content /m,
    ],
  },
  {
    about: "the status of each of Bulwark's kinds, and the nodes' EdgeAutonomy",
    prints: [
      /^demo-authz +http /m,
      /^default +readers +orders-read +True /m,
      /^bulwark-system +ingresschecksum\.tengine\.taobao\.org\/\S+ +content /m,
      /^Ready=True Valid: spec is valid$/m,
      /^bulwark-edge-1 +[A-Z]\w+$/m,
    ],
  },
];

function portFree(port: number): Promise<boolean> {
  return new Promise(resolve => {
    const server = createServer()
      .once("error", () => resolve(false))
      .listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** PIDs of all processes whose parent is `pid`, and theirs. */
function descendants(pid: number): number[] {
  const path = `/proc/${pid}/task/${pid}/children`;
  if (!existsSync(path)) return [];
  const children = readFileSync(path, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  return children.flatMap(child => [child, ...descendants(child)]);
}

function alive(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return false;
  const state = readFileSync(stat, "utf8").split(") ")[1]?.[0];
  return state !== "Z" && state !== "X";
}

describe("npm start: the README's Try it, against the local stack", () => {
  let stack: ChildProcess;
  let output = "";
  let kubeconfig = "";

  before(async () => {
    for (const port of [8080, 8443, 9090, 8444, 9464]) {
      assert.ok(await portFree(port), `port ${port} is taken: stop your own \`npm start\` first`);
    }
    stack = spawn(process.execPath, ["--import", "tsx", join(ROOT, "hack/local-stack.ts")], {
      cwd: ROOT,
      // The module test/run.ts has just built serves here too.
      env: { ...process.env, BULWARK_REUSE_MODULE_BUILD: "1", KUBECONFIG: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    stack.stdout?.on("data", chunk => (output += chunk));
    stack.stderr?.on("data", chunk => (output += chunk));
    await waitUntil(
      "npm start to say Bulwark is ready",
      async () => {
        if (stack.exitCode !== null) throw new Error(`npm start exited:\n${output}`);
        return output.includes(READY);
      },
      240_000,
      500,
    );
    kubeconfig = join(STATE_DIR, "kubeconfig");
  });

  after(() => {
    stack.kill("SIGKILL");
  });

  it("keeps every node Ready from the start, as kubelets would", async () => {
    const core = loadKubeConfig(kubeconfig).makeApiClient(CoreV1Api);
    const nodes = (await core.listNode()).items;
    const names = nodes.map(n => n.metadata?.name).sort();
    assert.deepEqual(names, [
      "bulwark-edge-1",
      "bulwark-edge-2",
      "bulwark-edge-3",
      "bulwark-local",
    ]);
    for (const node of nodes) {
      const ready = node.status?.conditions?.find(c => c.type === "Ready");
      assert.equal(ready?.status, "True", `${node.metadata?.name} is Ready`);
    }
  });

  const blocks = tryItBlocks(readFileSync(join(ROOT, "README.md"), "utf8"));

  it("README's Try it has one expectation per block", () => {
    assert.equal(blocks.length, EXPECTED.length, "a block was added or removed: update EXPECTED");
  });

  for (const [i, expected] of EXPECTED.entries()) {
    it(`Try it ${i + 1}: ${expected.about}`, async () => {
      const block = blocks[i] ?? "";
      // The pod block also shows, seen from outside, the status a kubelet writes on the way.
      const phases = i === 1 ? watchInitPhases(kubeconfig, "orders-reader") : undefined;
      let seen: string[] | undefined;
      try {
        const run = await runBlock(block);
        const shown = `block:\n${block}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
        assert.equal(run.status, 0, shown);
        for (const line of expected.prints) assert.match(run.stdout, line, shown);
        if (expected.never) assert.doesNotMatch(run.stdout, expected.never, shown);
      } finally {
        // Stopped whatever happened: a live interval would keep the test process running.
        seen = await phases?.stop();
      }
      if (seen) assert.deepEqual(seen, ["Init:0/1", "Running"]);
    });
  }

  it("the blocks run the kubectl built with the control plane, of the API server's version", async () => {
    const run = await runBlock(
      `${blocks[1]?.split("\n")[0] ?? ""}\nreadlink -f "$(command -v kubectl)"\nkubectl version`,
    );
    assert.equal(run.status, 0, run.stderr);
    const [path] = run.stdout.split("\n");
    assert.equal(path, join(KUBECTL_DIR, "kubectl"));
    assert.match(run.stdout, /^Client Version: v1\.35\.4$/m);
    assert.match(run.stdout, /^Server Version: v1\.35\.4$/m);
  });

  it("never puts kube-controller-manager into master-disruption mode", () => {
    const log = readFileSync(join(STATE_DIR, "run", "logs", "kube-controller-manager.log"), "utf8");
    assert.doesNotMatch(log, /all Nodes are not-Ready|master disruption mode/i);
  });

  it("refuses, with an Event on the pod, a pod whose init container it cannot run", async () => {
    const core = loadKubeConfig(kubeconfig).makeApiClient(CoreV1Api);
    await core.createNamespacedPod({
      namespace: "default",
      body: {
        metadata: { name: "migrator" },
        spec: {
          initContainers: [{ name: "migrate", image: "postgres:16" }],
          containers: [{ name: "app", image: "nginx" }],
        },
      },
    });
    const event = await waitUntil("a LocalRunnerCannotRun Event on pod migrator", async () => {
      const events = await core.listNamespacedEvent({
        namespace: "default",
        fieldSelector: "involvedObject.name=migrator,reason=LocalRunnerCannotRun",
      });
      return events.items[0];
    });
    assert.equal(event.type, "Warning");
    assert.match(event.message ?? "", /init container migrate \(image postgres:16\)/);
    const pod = await core.readNamespacedPod({ name: "migrator", namespace: "default" });
    assert.equal(pod.status?.phase, "Pending");
  });

  it("Ctrl-C stops every process it started", async () => {
    const started = descendants(stack.pid ?? 0);
    const exited = new Promise<number | null>(resolve => stack.once("exit", resolve));
    stack.kill("SIGINT");
    assert.equal(await exited, 0, output);
    assert.deepEqual(started.filter(alive), [], "every process it started has stopped");
  });
});

/** Runs a README block as a user pastes it into bash, stopping at the first failing command. */
function runBlock(
  block: string,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn("bash", ["-euo", "pipefail", "-c", block], {
    cwd: ROOT,
    // The kubectl built with the control plane first, as the blocks' own PATH line puts it, also
    // for a block that has none: never whatever kubectl this machine happens to have.
    env: { ...process.env, KUBECONFIG: "", PATH: `${KUBECTL_DIR}${delimiter}${process.env.PATH}` },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", chunk => (stdout += chunk));
  child.stderr.on("data", chunk => (stderr += chunk));
  return new Promise(resolve => child.once("exit", status => resolve({ status, stdout, stderr })));
}

/** Polls the pod's status and records each new `kubectl get pods` STATUS it shows. */
function watchInitPhases(kubeconfig: string, name: string) {
  const core = loadKubeConfig(kubeconfig).makeApiClient(CoreV1Api);
  const seen: string[] = [];
  let started = 0;
  let newest = 0;
  const read = (): Promise<void> => {
    const n = ++started;
    return core.readNamespacedPod({ name, namespace: "default" }).then(
      pod => {
        // Reads overlap on a busy machine: an answer older than one already recorded is stale.
        if (n < newest) return;
        newest = n;
        const init = pod.status?.initContainerStatuses?.[0];
        let shown: string | undefined;
        if (pod.status?.phase === "Running") shown = "Running";
        else if (init?.state?.running) shown = "Init:0/1";
        if (shown && seen.at(-1) !== shown) seen.push(shown);
      },
      () => {},
    );
  };
  const timer = setInterval(() => void read(), 100);
  timer.unref();
  return {
    /** The states seen, the last one read after the block ended (the polls may lag behind it). */
    stop: async (): Promise<string[]> => {
      clearInterval(timer);
      await read();
      return seen;
    },
  };
}
