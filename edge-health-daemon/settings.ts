// The daemon's settings: ONE zod schema over environment variables and flags (a flag wins over
// its variable). Every setting here is read by the code that uses it; nothing is overwritten
// after parsing (SuperEdge's `Default()` ran after flag parsing and silently reset the periods).
//
// Check plugins are written like SuperEdge's plugin flags, `key=value,key=value`, or `off`:
//   --check-daemon=weight=1,timeout=2,retries=1          the peer daemon's own GET /healthz
//   --check-kubelet=weight=1,port=10250,scheme=https     GET <scheme>://<ip>:<port>/healthz, bearer token
//   --check-tcp=off                                      a TCP dial to <ip>:<port>
import { z } from "zod";

export const NAME = "bulwark-edge-health";

/** One setting: its flag, its variable, and what it is (for `--help` and error lines). */
interface SettingSpec {
  flag: string;
  env: string;
  help: string;
}

const SPECS = {
  nodeName: {
    flag: "node-name",
    env: "BULWARK_NODE_NAME",
    help: "this node's name, from the Downward API (spec.nodeName)",
  },
  listenAddress: {
    flag: "listen-address",
    env: "BULWARK_EDGE_LISTEN_ADDRESS",
    help: "address the results and health server binds (default 0.0.0.0)",
  },
  port: {
    flag: "port",
    env: "BULWARK_EDGE_PORT",
    help: "port of this daemon and of every peer daemon (default 51005)",
  },
  checkPeriodSeconds: {
    flag: "check-period",
    env: "BULWARK_EDGE_CHECK_PERIOD_SECONDS",
    help: "seconds between check rounds; results are sent after each (default 10)",
  },
  voteTimeoutSeconds: {
    flag: "vote-timeout",
    env: "BULWARK_EDGE_VOTE_TIMEOUT_SECONDS",
    help: "a result counts while its sender's check time is this recent (default 3 check periods)",
  },
  messageMaxAgeSeconds: {
    flag: "message-max-age",
    env: "BULWARK_EDGE_MESSAGE_MAX_AGE_SECONDS",
    help: "messages with a timestamp further than this from our clock are stale (default 30)",
  },
  scoreLine: {
    flag: "score-line",
    env: "BULWARK_EDGE_SCORE_LINE",
    help: "a peer is normal when the weighted check score reaches this (default 100)",
  },
  maxProbePeers: {
    flag: "max-probe-peers",
    env: "BULWARK_EDGE_MAX_PROBE_PEERS",
    help: "each node probes at most this many peers per round; larger groups are sampled (default 16)",
  },
  writerFallbackPeriods: {
    flag: "writer-fallback-periods",
    env: "BULWARK_EDGE_WRITER_FALLBACK_PERIODS",
    help: "after this many periods with a decision unwritten, every node holding it writes (default 3)",
  },
  zoneNamespace: {
    flag: "zone-namespace",
    env: "BULWARK_EDGE_ZONE_NAMESPACE",
    help: "namespace of the edge-health-zone-config ConfigMap (default edge-system)",
  },
  hmacKeyFile: {
    flag: "hmac-key-file",
    env: "BULWARK_EDGE_HMAC_KEY_FILE",
    help: "file holding the shared HMAC key (a mounted Secret); wins over --hmac-secret",
  },
  hmacSecret: {
    flag: "hmac-secret",
    env: "BULWARK_EDGE_HMAC_SECRET",
    help: "namespace/name of the Secret whose data.hmackey is the key (default edge-system/bulwark-edge-health-hmac)",
  },
  verifySource: {
    flag: "verify-source",
    env: "BULWARK_EDGE_VERIFY_SOURCE",
    help: "accept a result only from its sender node's InternalIP (default true)",
  },
  kubeconfig: {
    flag: "kubeconfig",
    env: "KUBECONFIG",
    help: "kubeconfig path (default: in-cluster service account)",
  },
  logLevel: {
    flag: "log-level",
    env: "BULWARK_LOG_LEVEL",
    help: "error|warn|info|debug (default info)",
  },
  checkDaemon: {
    flag: "check-daemon",
    env: "BULWARK_EDGE_CHECK_DAEMON",
    help: "peer daemon health check (default weight=0.5,retries=1,timeout=2 or what fits the period)",
  },
  checkKubelet: {
    flag: "check-kubelet",
    env: "BULWARK_EDGE_CHECK_KUBELET",
    help: "kubelet /healthz check (default weight=0.5,port=10250,scheme=https,retries=1,timeout as above)",
  },
  checkTcp: {
    flag: "check-tcp",
    env: "BULWARK_EDGE_CHECK_TCP",
    help: "TCP dial check (default off; needs port=)",
  },
} satisfies Record<string, SettingSpec>;

type Key = keyof typeof SPECS;

export type CheckKind = "daemon" | "kubelet" | "tcp";

export interface CheckPlugin {
  kind: CheckKind;
  /** Score contribution on success: 100 × weight. */
  weight: number;
  /** Per attempt, milliseconds. */
  timeoutMs: number;
  /** Extra attempts after a failure. */
  retries: number;
  /** Port on the peer; the daemon check always uses the daemon port. */
  port: number;
  scheme: "http" | "https";
  /** Bearer token file for the kubelet check. */
  tokenFile: string;
  /** Verify the kubelet's certificate against this CA file; unset skips verification (as SuperEdge). */
  caFile?: string;
}

const number = (what: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, `must be a number (${what})`)
    .transform(Number);

const portSchema = number("a port").refine(
  n => Number.isInteger(n) && n >= 1 && n <= 65535,
  "must be a port, 1-65535",
);

const boolSchema = z.enum(["true", "false"], { error: 'must be "true" or "false"' });

const pluginFieldsSchema = z.strictObject(
  {
    weight: number("a weight, e.g. 0.5").optional(),
    timeout: number("seconds")
      .refine(n => n > 0, "must be more than 0")
      .optional(),
    retries: number("attempts after the first")
      .refine(n => Number.isInteger(n) && n <= 10, "must be a whole number, at most 10")
      .optional(),
    port: portSchema.optional(),
    scheme: z.enum(["http", "https"], { error: 'must be "http" or "https"' }).optional(),
    "token-file": z.string().min(1).optional(),
    "ca-file": z.string().min(1).optional(),
  },
  { error: "unknown key (known: weight, timeout, retries, port, scheme, token-file, ca-file)" },
);

const PLUGIN_DEFAULTS: Record<CheckKind, CheckPlugin | undefined> = {
  daemon: {
    kind: "daemon",
    weight: 0.5,
    timeoutMs: 0,
    retries: 1,
    port: 51005,
    scheme: "http",
    tokenFile: "",
  },
  kubelet: {
    kind: "kubelet",
    weight: 0.5,
    timeoutMs: 0,
    retries: 1,
    port: 10250,
    scheme: "https",
    tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
  },
  tcp: undefined,
};

/** Parses `off` or `key=value,...` into a plugin (undefined = disabled); throws a message. */
function keyValues(raw: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const part of raw.split(",")) {
    const [k, ...rest] = part.split("=");
    if (k === undefined || rest.length === 0) throw new Error(`"${part}" is not key=value`);
    pairs[k.trim()] = rest.join("=").trim();
  }
  return pairs;
}

/** What a plugin string leaves unsaid, when its kind has no default (tcp). */
const PLUGIN_FALLBACK = { weight: 1, timeoutMs: 0, retries: 0, scheme: "http", tokenFile: "" };

function parsePlugin(kind: CheckKind, raw: string | undefined): CheckPlugin | undefined {
  // Always a copy: the schema's transform adjusts port and timeout per parse.
  const base = PLUGIN_DEFAULTS[kind];
  if (raw === undefined) return base && { ...base };
  if (raw.trim() === "off") return undefined;
  const parsed = pluginFieldsSchema.safeParse(keyValues(raw));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${issue?.path.join(".") || "value"}: ${issue?.message ?? "invalid"}`);
  }
  const f = parsed.data;
  const given = Object.fromEntries(
    Object.entries({
      weight: f.weight,
      // Absent = 0: the schema's transform fits it to the check period.
      timeoutMs: f.timeout === undefined ? undefined : f.timeout * 1000,
      retries: f.retries,
      port: f.port,
      scheme: f.scheme,
      tokenFile: f["token-file"],
      caFile: f["ca-file"],
    }).filter(([, v]) => v !== undefined),
  );
  const plugin = { ...PLUGIN_FALLBACK, timeoutMs: 0, ...base, ...given, kind } as CheckPlugin;
  if (plugin.port === undefined) throw new Error("port: is required");
  return plugin;
}

const pluginSchema = (kind: CheckKind) =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      try {
        return parsePlugin(kind, raw);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
        return z.NEVER;
      }
    });

const secretRef = z
  .string()
  .regex(/^[a-z0-9-]+\/[a-z0-9.-]+$/, "must be namespace/name")
  .transform(s => {
    const [namespace = "", name = ""] = s.split("/");
    return { namespace, name };
  });

const schema = z
  .object({
    nodeName: z
      .string({ error: "is required (the node name, from the Downward API)" })
      .min(1, "is required (the node name, from the Downward API)"),
    listenAddress: z.string().min(1).default("0.0.0.0"),
    port: portSchema.default(51005),
    checkPeriodSeconds: number("seconds")
      .refine(n => n >= 0.1 && n <= 3600, "must be between 0.1 and 3600")
      .default(10),
    voteTimeoutSeconds: number("seconds")
      .refine(n => n > 0, "must be more than 0")
      .optional(),
    messageMaxAgeSeconds: number("seconds")
      .refine(n => n > 0, "must be more than 0")
      .default(30),
    scoreLine: number("a score").default(100),
    maxProbePeers: number("a count")
      .refine(n => Number.isInteger(n) && n >= 2, "must be a whole number, at least 2")
      .default(16),
    writerFallbackPeriods: number("a count")
      .refine(n => Number.isInteger(n) && n >= 1, "must be a whole number, at least 1")
      .default(3),
    zoneNamespace: z.string().min(1).default("edge-system"),
    hmacKeyFile: z.string().min(1).optional(),
    hmacSecret: secretRef.default({ namespace: "edge-system", name: "bulwark-edge-health-hmac" }),
    verifySource: boolSchema.default("true").transform(v => v === "true"),
    kubeconfig: z.string().min(1).optional(),
    logLevel: z.enum(["error", "warn", "info", "debug"]).default("info"),
    checkDaemon: pluginSchema("daemon"),
    checkKubelet: pluginSchema("kubelet"),
    checkTcp: pluginSchema("tcp"),
  })
  .transform(s => {
    const checks = [s.checkDaemon, s.checkKubelet, s.checkTcp].filter(
      (p): p is CheckPlugin => p !== undefined,
    );
    const periodMs = s.checkPeriodSeconds * 1000;
    for (const c of checks) {
      // The daemon check talks to the daemon port, whatever the plugin string said.
      if (c.kind === "daemon") c.port = s.port;
      // No timeout given: 2 s, or less so that every attempt fits in 80 % of the period.
      if (c.timeoutMs === 0)
        c.timeoutMs = Math.min(2000, Math.floor((0.8 * periodMs) / (c.retries + 1)));
    }
    return {
      nodeName: s.nodeName,
      listenAddress: s.listenAddress,
      port: s.port,
      checkPeriodMs: periodMs,
      voteTimeoutMs: (s.voteTimeoutSeconds ?? 3 * s.checkPeriodSeconds) * 1000,
      messageMaxAgeMs: s.messageMaxAgeSeconds * 1000,
      scoreLine: s.scoreLine,
      maxProbePeers: s.maxProbePeers,
      writerFallbackPeriods: s.writerFallbackPeriods,
      zoneNamespace: s.zoneNamespace,
      hmacKeyFile: s.hmacKeyFile,
      hmacSecret: s.hmacSecret,
      verifySource: s.verifySource,
      kubeconfig: s.kubeconfig,
      logLevel: s.logLevel,
      checks,
    };
  });

export type Settings = z.output<typeof schema>;

export type SettingsResult =
  | { kind: "ok"; settings: Settings }
  | { kind: "error"; message: string }
  | { kind: "help" }
  | { kind: "version" };

/** Why a plugin set can never call a peer normal, or undefined when it can. */
function unreachableScoreLine(s: Settings): string | undefined {
  const best = s.checks.reduce((sum, c) => sum + 100 * c.weight, 0);
  if (s.checks.length === 0) {
    return `${SPECS.checkDaemon.flag}/${SPECS.checkKubelet.flag}/${SPECS.checkTcp.flag}: every check is off, so no peer could ever be normal`;
  }
  if (best < s.scoreLine) {
    return `${SPECS.scoreLine.env}: ${s.scoreLine} is above the best possible score ${best} of the enabled checks, so every peer would be voted unhealthy`;
  }
  const slow = s.checks.find(c => c.timeoutMs * (c.retries + 1) > s.checkPeriodMs);
  if (slow) {
    return `check-${slow.kind}: timeout × attempts (${(slow.timeoutMs * (slow.retries + 1)) / 1000}s) exceeds the check period (${s.checkPeriodMs / 1000}s)`;
  }
  return undefined;
}

/** Reads `--flag=value` / `--flag value` pairs; returns a message for anything unknown. */
function readFlags(argv: readonly string[]): Record<string, string> | string {
  const byFlag = new Map(Object.entries(SPECS).map(([key, spec]) => [spec.flag, key]));
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    const key = match ? byFlag.get(match[1] ?? "") : undefined;
    if (!match || key === undefined) return `unknown argument ${JSON.stringify(arg)} (see --help)`;
    const value = match[2] ?? argv[++i];
    if (value === undefined) return `--${match[1]} needs a value`;
    out[key] = value;
  }
  return out;
}

/** One line naming the setting: `BULWARK_NODE_NAME (--node-name) is required (...)`. */
function issueLine(issue: z.core.$ZodIssue | undefined): string {
  const spec = SPECS[(issue?.path[0] ?? "nodeName") as Key];
  const message = issue?.message ?? "invalid";
  const joined = message.startsWith("is ") ? ` ${message}` : `: ${message}`;
  return `${spec.env} (--${spec.flag})${joined}`;
}

/** Settings from flags over environment; a message naming the setting when one is bad. */
export function parseSettings(argv: readonly string[], env: NodeJS.ProcessEnv): SettingsResult {
  if (argv.includes("--help") || argv.includes("-h")) return { kind: "help" };
  if (argv.includes("--version")) return { kind: "version" };
  const flags = readFlags(argv);
  if (typeof flags === "string") return { kind: "error", message: flags };
  const input: Partial<Record<Key, string>> = {};
  for (const [key, spec] of Object.entries(SPECS) as [Key, SettingSpec][]) {
    const value = flags[key] ?? env[spec.env];
    if (value !== undefined && value !== "") input[key] = value;
  }
  const parsed = schema.safeParse(input);
  if (!parsed.success) return { kind: "error", message: issueLine(parsed.error.issues[0]) };
  const problem = unreachableScoreLine(parsed.data);
  if (problem) return { kind: "error", message: problem };
  return { kind: "ok", settings: parsed.data };
}

export function helpText(version: string): string {
  const rows = Object.values(SPECS).map(s => `  --${s.flag.padEnd(24)} ${s.env}\n      ${s.help}`);
  return `${NAME} ${version}: probes edge peers, exchanges signed results, votes on node health.\n\nEvery setting is a flag or an environment variable (the flag wins):\n${rows.join("\n")}\n`;
}
