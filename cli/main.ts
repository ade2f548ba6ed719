// `bulwark`: the command line. `bulwark --help` lists the commands.
import { parseArgs } from "node:util";
import packageJson from "../package.json";
import {
  compute,
  keygen,
  objectsFromFiles,
  publish,
  render,
  type ChecksumOptions,
} from "./checksum";
import { uninstallCommand } from "./uninstall";
import { InputError } from "./read-objects";
import { parseExcludedNamespaces, type ServingScope } from "../core/ingress/selection";
import { referrerAllowList } from "../core/annotations/referrer";
import { parseKeysLocation, parsePublisherNamespaces, parseSigningKey } from "../core/checksum";
import { readFileSync } from "node:fs";
import type { KeyObject } from "node:crypto";
import { permissionCommand } from "./permission";
import { installCommand } from "./install";
import { errorLine, exitCodeFor, UsageError } from "./errors";
import { chooseKubeconfig, useContext } from "./kubeconfig";
import { besideProgress, progressOn, type Progress, type ProgressStream } from "./progress";

const VERSION = packageJson.version;

/** Each command's usage, printed alone by `bulwark COMMAND --help` and together by `bulwark --help`. */
const USAGE = {
  "checksum compute": `  bulwark checksum compute --kind ingress|secret [--mode tengine|content] [-o json|yaml] [-n NAMESPACE]
                           [--default-class] [--excluded-namespaces LIST] [--ingress-referrers LIST]
                           [--sign-key FILE] -f FILE_OR_DIR...
      Prints {checksum, ids} for the objects in the files (-o yaml: a ready-to-apply checksum object).
      -f - reads standard input. Objects of another kind are left out (a line each on stderr); an
      object without a namespace, or the same object twice, is an error.
      --default-class: IngressClass bulwark is the cluster's default, so Ingresses naming no class count.
`,
  "checksum publish": `  bulwark checksum publish --kind ingress|secret -n NAMESPACE [--mode tengine|content] [--sign-key FILE]
                           [--excluded-namespaces LIST] [--ingress-referrers LIST]
      NAMESPACE must be a publisher namespace (BULWARK_CHECKSUM_PUBLISHER_NAMESPACES, default
      bulwark-system): checksum objects anywhere else are ignored.
      Reads the cluster, creates a new checksum object and deletes the older ones; whether
      class-less Ingresses count is read from the IngressClass. --sign-key: an Ed25519 private key
      (from keygen); the object is signed, as the guard requires with BULWARK_CHECKSUM_REQUIRE_SIGNATURE.
`,
  "checksum keygen": `  bulwark checksum keygen --out FILE
      Writes a new Ed25519 signing key to FILE (0600) and its public key to FILE.pub, and says how to
      trust it (ConfigMap BULWARK_CHECKSUM_KEYS, default bulwark-system/bulwark-checksum-keys).
`,
  uninstall: `  bulwark uninstall [--dry-run] [--keep-crds]
      Removes Bulwark from the cluster: strips the pod-permission finalizer from every pod, then
      deletes the webhooks, the module and workloads, and the CRDs last (docs/upgrade-uninstall.md).
`,
  workloads: `  bulwark gateway|permission-server|init|edge-health [--help]
      Runs a workload (the container image's entrypoints); each lists its settings with --help.
`,
  "permission reset": `  bulwark permission reset POD -n NAMESPACE [--server-namespace bulwark-system] [--configmap NAME]
      Closes the pod's permission breaker and clears its backoff; its next attempt runs at once.
  bulwark permission reset --all|--group GROUP|--provider PROVIDER -n NAMESPACE [...]
      The same for every pod of the namespace (of the group, or whose group uses the provider) that
      has a breaker entry or is blocked or backing off: one ConfigMap write, then a line per pod.
`,
  "permission tls": `  bulwark permission tls [--server-namespace bulwark-system] [--release bulwark] [--prefix PREFIX]
                         [--secret <prefix>-permission-server-tls] [--days 365] [--san DNS:NAME|IP:ADDRESS]...
      Creates or renews (always) the permission server's serving Secret (tls.crt, tls.key, ca.crt)
      with openssl, for Service <prefix>-permission-server; the CA is kept in Secret <secret>-ca and
      reused, so injected pods keep trusting it.
`,
  "install secrets": `  bulwark install secrets [-n bulwark-system] [--release bulwark] [--prefix PREFIX] [--renew]
                          [--days 365] [--san DNS:NAME|IP:ADDRESS]...
      Makes every Secret the install needs and never writes, in the release's namespace:
      <prefix>-permission-server-tls (the permission server's certificate, with openssl; its CA in
      <prefix>-permission-server-tls-ca) and <prefix>-edge-health-hmac (the edge-health daemons'
      key, hmackey). <prefix> is the chart's: the release name when it contains bulwark, else
      <release>-bulwark; --prefix is the chart's fullnameOverride. Run it again at will: a Secret
      that is there is kept (other keys too); the certificate is renewed within 30 days of its end,
      when it does not name the Service, or with --renew. The namespace must exist.
`,
} as const;

const CLUSTER_NOTE = `Commands that talk to the cluster (publish, uninstall, permission, install) use --kubeconfig FILE, else
KUBECONFIG, else ~/.kube/config, else the pod's service account; --context NAME picks a context of it.
Exit codes: 0 done, 1 the command could not be done (the cluster refused or was unreachable),
2 the command line or an input file is wrong.
A long run shows its progress (files read, objects or pods done) on one line of stderr when that
is a terminal, rewritten in place; piped or redirected, nothing more is written.
`;

const CHECKSUM_NOTE = `--mode defaults to content (Bulwark's); tengine reproduces Tengine-Ingress's IDs.
--excluded-namespaces (comma-separated, "" for none) defaults to kube-system,pepr-system: the namespaces
the webhooks skip, which the gateway does not serve either (its BULWARK_EXCLUDED_NAMESPACES).
--ingress-referrers LIST: Tengine-Ingress's ingress-referrer allow-list (the gateway's
BULWARK_INGRESS_REFERRERS); an Ingress naming a referrer outside it does not count.
`;

const HELP = `bulwark ${VERSION}

Usage:
${Object.values(USAGE).join("\n")}
${CLUSTER_NOTE}${CHECKSUM_NOTE}`;

/** `bulwark checksum --help`, `bulwark permission reset --help`: the sections of that command. */
function commandHelp(positionals: readonly string[]): string | undefined {
  const asked = positionals.slice(0, 2).join(" ");
  const sections = Object.entries(USAGE).filter(
    ([name]) => name === asked || name.startsWith(`${asked} `),
  );
  if (sections.length === 0) return undefined;
  const notes = asked.startsWith("checksum") ? `${CLUSTER_NOTE}${CHECKSUM_NOTE}` : CLUSTER_NOTE;
  return `Usage:\n${sections.map(([, text]) => text).join("\n")}\n${notes}`;
}

const OPTIONS = {
  kind: { type: "string" },
  mode: { type: "string" },
  output: { type: "string", short: "o" },
  namespace: { type: "string", short: "n" },
  file: { type: "string", short: "f", multiple: true },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
  "server-namespace": { type: "string" },
  configmap: { type: "string" },
  secret: { type: "string" },
  days: { type: "string" },
  san: { type: "string", multiple: true },
  "dry-run": { type: "boolean" },
  "keep-crds": { type: "boolean" },
  "default-class": { type: "boolean" },
  "excluded-namespaces": { type: "string" },
  "ingress-referrers": { type: "string" },
  "sign-key": { type: "string" },
  all: { type: "boolean" },
  group: { type: "string" },
  provider: { type: "string" },
  out: { type: "string" },
  release: { type: "string" },
  prefix: { type: "string" },
  renew: { type: "boolean" },
  kubeconfig: { type: "string" },
  context: { type: "string" },
} as const;

function oneOf<T extends string>(
  flag: string,
  value: string | undefined,
  allowed: readonly T[],
  fallback?: T,
): T {
  const chosen = value ?? fallback;
  if (chosen === undefined) throw new UsageError(`--${flag} is required (${allowed.join(" or ")})`);
  if (!(allowed as readonly string[]).includes(chosen))
    throw new UsageError(`--${flag} must be ${allowed.join(" or ")}, got "${chosen}"`);
  return chosen as T;
}

/**
 * `out` and `err` take the command's output; `terminal` (process.stderr) gets progress when it is
 * a TTY, and nothing otherwise.
 */
export async function main(
  argv: string[],
  stdout: (s: string) => void,
  stderr: (s: string) => void,
  terminal?: ProgressStream,
): Promise<number> {
  const progress = progressOn(terminal);
  const writers = {
    out: besideProgress(progress, stdout),
    err: besideProgress(progress, stderr),
    progress,
  };
  try {
    return await runCommand(argv, writers);
  } finally {
    // A failure's line goes to stderr after this, never onto the progress line.
    progress.clear();
  }
}

async function runCommand(argv: string[], writers: Writers): Promise<number> {
  const { out, progress } = writers;
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: OPTIONS,
  });
  const [group, command] = positionals;
  const asked = (word: string): boolean => group === word && command === undefined;
  const informational = infoCommand(values, positionals);
  if (informational !== undefined) return (out(informational), 0);
  if (group === "permission") {
    requireCluster(values);
    return permissionCommand(positionals, values, out, progress);
  }
  if (asked("uninstall")) {
    return (requireCluster(values), uninstallCommand(values, out, progress));
  }
  if (group === "install")
    return installCommand(positionals, values, out, () => requireCluster(values));
  if (group === "checksum" && command === "keygen") return keygenCommand(values.out, out);
  if (group !== "checksum" || (command !== "compute" && command !== "publish")) {
    throw new UsageError(`unknown command "${positionals.join(" ")}"; see bulwark --help`);
  }
  withFileArguments(command, values, positionals.slice(2));
  return checksumCommand(command, values, writers);
}

/** Where a command writes: its output, its notes, and its progress on a terminal. */
interface Writers {
  out: (s: string) => void;
  err: (s: string) => void;
  progress: Progress;
}

type ParsedValues = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>["values"];

/** The text `--version`/`version` or `--help`/`help`/nothing prints, else undefined. */
function infoCommand(values: ParsedValues, positionals: string[]): string | undefined {
  const only = positionals.length <= 1 ? (positionals[0] ?? "") : undefined;
  if (values.version || only === "version") return `${VERSION}\n`;
  if (only === "" || only === "help") return HELP;
  if (values.help) return commandHelp(positionals) ?? HELP;
  return undefined;
}

/**
 * `-f a.yaml b.yaml`: parseArgs takes b.yaml as a positional; for compute it is a file too (the
 * usage says FILE_OR_DIR...), never silently left out. Anything else refuses a stray argument.
 */
function withFileArguments(command: string, values: ParsedValues, rest: string[]): void {
  if (command === "compute") values.file = [...(values.file ?? []), ...rest];
  else if (rest.length > 0) {
    throw new UsageError(`unexpected argument "${rest.join(" ")}" to checksum ${command}`);
  }
}

async function checksumCommand(
  command: "compute" | "publish",
  values: ParsedValues,
  writers: Writers,
): Promise<number> {
  const kind = oneOf("kind", values.kind, ["ingress", "secret"] as const);
  const mode = oneOf("mode", values.mode, ["tengine", "content"] as const, "content");
  const signKey = values["sign-key"] === undefined ? undefined : readSigningKey(values["sign-key"]);
  const settled = {
    excludedNamespaces: excludedNamespacesOf(values["excluded-namespaces"]),
    ingressReferrers: referrerAllowList(
      values["ingress-referrers"] ?? process.env.BULWARK_INGRESS_REFERRERS,
    ),
  };
  if (command === "publish")
    return publishCommand(values, { kind, mode, signKey, scope: settled }, writers);
  const scope = { ...settled, classIsDefault: values["default-class"] === true };
  return computeCommand(values, { kind, mode, signKey, scope }, writers);
}

/** Before a command's first API call: which cluster it talks to (cli/kubeconfig.ts). */
function requireCluster(values: { kubeconfig?: string; context?: string }): void {
  const problem =
    chooseKubeconfig(values.kubeconfig) ??
    (values.context === undefined ? undefined : useContext(values.context));
  if (problem !== undefined) throw new UsageError(problem);
}

async function publishCommand(
  values: {
    namespace?: string;
    "default-class"?: boolean;
    kubeconfig?: string;
    context?: string;
  },
  options: ChecksumOptions & { scope: Omit<ServingScope, "classIsDefault"> },
  { out, progress }: Writers,
): Promise<number> {
  if (!values.namespace)
    throw new UsageError("-n NAMESPACE is required: where the checksum object is created");
  const publishers = parsePublisherNamespaces(process.env.BULWARK_CHECKSUM_PUBLISHER_NAMESPACES);
  if (!publishers.ok)
    throw new UsageError(
      `BULWARK_CHECKSUM_PUBLISHER_NAMESPACES: ${publishers.errors[0]?.message ?? ""}`,
    );
  if (!publishers.value.has(values.namespace)) {
    const list = [...publishers.value].join(", ");
    throw new UsageError(
      `-n ${values.namespace} is not a publisher namespace (${list}; BULWARK_CHECKSUM_PUBLISHER_NAMESPACES): the guard would ignore a checksum object there`,
    );
  }
  if (values["default-class"])
    throw new UsageError("--default-class is for compute: publish reads the IngressClass");
  requireCluster(values);
  await publish({ ...options, namespace: values.namespace }, line => out(`${line}\n`), progress);
  return 0;
}

function readSigningKey(file: string): KeyObject {
  let pem: string;
  try {
    pem = readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`--sign-key ${file}: ${(error as Error).message}`);
  }
  const key = parseSigningKey(pem, `--sign-key ${file}`);
  if (!key.ok) throw new UsageError(`${key.errors[0]?.field} ${key.errors[0]?.message}`);
  return key.value;
}

function keygenCommand(file: string | undefined, out: (s: string) => void): number {
  if (!file) throw new UsageError("--out FILE is required: where the private key is written");
  const location = parseKeysLocation(process.env.BULWARK_CHECKSUM_KEYS, "BULWARK_CHECKSUM_KEYS");
  if (!location.ok) throw new UsageError(`BULWARK_CHECKSUM_KEYS ${location.errors[0]?.message}`);
  try {
    keygen(file, location.value.namespace, location.value.name, line => out(`${line}\n`));
  } catch (error) {
    throw new UsageError(`--out ${file}: ${(error as Error).message}`);
  }
  return 0;
}

/** The flag, else the gateway's own setting when it is in the environment, else the default. */
function excludedNamespacesOf(raw: string | undefined): Set<string> {
  const parsed = parseExcludedNamespaces(raw ?? process.env.BULWARK_EXCLUDED_NAMESPACES);
  if (!parsed.ok) throw new UsageError(`--excluded-namespaces: ${parsed.errors[0]?.message ?? ""}`);
  return parsed.value;
}

type Values = { output?: string; namespace?: string; file?: string[] };

function computeCommand(
  values: Values,
  options: ChecksumOptions & { scope: ServingScope },
  { out, err, progress }: Writers,
): number {
  if (!values.file?.length) throw new UsageError("-f FILE_OR_DIR is required");
  const output = oneOf("output", values.output, ["json", "yaml"] as const, "json");
  const { objects, ignored } = objectsFromFiles(values.file, options.kind, options.scope, progress);
  for (const line of ignored) err(`ignored ${line}\n`);
  const result = compute(objects, options);
  for (const skipped of result.skipped) err(`left out ${skipped.key}: ${skipped.reason}\n`);
  out(render(result, { ...options, output, namespace: values.namespace ?? "default" }));
  return 0;
}

/** Runs the CLI on the process's arguments and exits with its status (2 for a usage or input error). */
export function run(): void {
  main(
    process.argv.slice(2),
    s => process.stdout.write(s),
    s => process.stderr.write(s),
    process.stderr,
  ).then(
    code => process.exit(code),
    (error: unknown) => {
      process.stderr.write(errorLine(error));
      process.exit(exitCodeFor(error, e => e instanceof InputError));
    },
  );
}

if (require.main === module) run();
