// The daemon's settings: ONE zod schema over environment variables and flags (a flag wins over
// its variable). Every setting here is read by the code that uses it; nothing is overwritten
// after parsing (SuperEdge's `Default()` ran after flag parsing and silently reset the periods).
//
// Where a value comes from, first match wins: the flag, its environment variable, the JSON config
// file (`--config`, keys are flag names), the default. Every key a plugin string may carry applies
// to that plugin; a key that would be ignored (e.g. `port` on the daemon check) is refused.
//
// Check plugins are written like SuperEdge's plugin flags, `key=value,key=value`, or `off`:
//   --check-daemon=weight=1,timeout=2,retries=1          the peer daemon's own GET /healthz
//   --check-kubelet=weight=1,port=10250,scheme=https     GET <scheme>://<ip>:<port>/healthz, bearer token
//   --check-tcp=off                                      a TCP dial to <ip>:<port>
import { readFileSync } from "node:fs";
import { z } from "zod";
import { logLevel, readFlags } from "../core/env-settings";

export const NAME = "bulwark-edge-health";

/** One setting: its flag, its variable, and what it is (for `--help` and error lines). */
interface SettingSpec {
  flag: string;
  env: string;
  help: string;
}

const SPECS = {
  config: {
    flag: "config",
    env: "BULWARK_EDGE_CONFIG",
    help: 'JSON file of settings keyed by flag name, e.g. {"check-period": 5}; flags and variables win',
  },
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
  metricsPort: {
    flag: "metrics-port",
    env: "BULWARK_EDGE_METRICS_PORT",
    help: "port of GET /metrics (Prometheus) on the listen address (default unset: not served)",
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
  voteTermPeriods: {
    flag: "vote-term-periods",
    env: "BULWARK_EDGE_VOTE_TERM_PERIODS",
    help: "a written vote is valid for this many check periods; renewed while its majority holds (default 3)",
  },
  messageMaxAgeSeconds: {
    flag: "message-max-age",
    env: "BULWARK_EDGE_MESSAGE_MAX_AGE_SECONDS",
    help: "messages with a timestamp further than this from our clock are stale (default 30)",
  },
  maxClockSkewSeconds: {
    flag: "max-clock-skew",
    env: "BULWARK_EDGE_MAX_CLOCK_SKEW_SECONDS",
    help: "messages timestamped further ahead of our clock than this are refused (default 10)",
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
    help: "namespace of the edge-health-zone-config ConfigMap (default kube-system, where SuperEdge reads it)",
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
  hmacReloadSeconds: {
    flag: "hmac-reload",
    env: "BULWARK_EDGE_HMAC_RELOAD_SECONDS",
    help: "seconds between re-reads of the HMAC key file or Secret (default 60)",
  },
  hmacOverlapSeconds: {
    flag: "hmac-overlap",
    env: "BULWARK_EDGE_HMAC_OVERLAP_SECONDS",
    help: "after a key rotation the old key still signs and verifies this long (default 300; 0 = cut off at once)",
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
    env: "LOG_LEVEL",
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
    help: "kubelet /healthz check (default weight=0.5,port=10250,scheme=https,retries=1,timeout as above,\n      token-file=<service-account token>; also ca-file, cert-file, key-file)",
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
  /** Bearer token file for the kubelet check (re-read every minute); undefined = no token. */
  tokenFile?: string;
  /** Verify the kubelet's certificate against this CA file; unset skips verification (as SuperEdge). */
  caFile?: string;
  /** Client certificate and key (PEM) the kubelet check presents; both or neither. */
  certFile?: string;
  keyFile?: string;
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

const file = z.string().min(1, "must be a file path");

const pluginFieldsSchema = z.object({
  weight: number("a weight, e.g. 0.5").optional(),
  timeout: number("seconds")
    .refine(n => n > 0, "must be more than 0")
    .optional(),
  retries: number("attempts after the first")
    .refine(n => Number.isInteger(n) && n <= 10, "must be a whole number, at most 10")
    .optional(),
  port: portSchema.optional(),
  scheme: z.enum(["http", "https"], { error: 'must be "http" or "https"' }).optional(),
  // `none`: no bearer token (a kubelet that takes the client certificate, or the read-only port).
  "token-file": file.optional(),
  "ca-file": file.optional(),
  "cert-file": file.optional(),
  "key-file": file.optional(),
});

type PluginKey = keyof z.input<typeof pluginFieldsSchema>;

/** The keys each plugin reads; any other key would be silently ignored, so it is refused. */
const PLUGIN_KEYS: Record<CheckKind, readonly PluginKey[]> = {
  daemon: ["weight", "timeout", "retries"],
  kubelet: [
    "weight",
    "timeout",
    "retries",
    "port",
    "scheme",
    "token-file",
    "ca-file",
    "cert-file",
    "key-file",
  ],
  tcp: ["weight", "timeout", "retries", "port"],
};

export const DEFAULT_TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token";

const PLUGIN_DEFAULTS: Record<CheckKind, CheckPlugin | undefined> = {
  daemon: { kind: "daemon", weight: 0.5, timeoutMs: 0, retries: 1, port: 51005, scheme: "http" },
  kubelet: {
    kind: "kubelet",
    weight: 0.5,
    timeoutMs: 0,
    retries: 1,
    port: 10250,
    scheme: "https",
    tokenFile: DEFAULT_TOKEN_FILE,
  },
  tcp: undefined,
};

/** Splits `key=value,...`; throws a message naming the bad part or key. */
function keyValues(kind: CheckKind, raw: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  const known = PLUGIN_KEYS[kind] as readonly string[];
  for (const part of raw.split(",")) {
    const [k, ...rest] = part.split("=");
    if (k === undefined || rest.length === 0) throw new Error(`"${part}" is not key=value`);
    const name = k.trim();
    if (!known.includes(name)) {
      throw new Error(`${name}: unknown key for the ${kind} check (known: ${known.join(", ")})`);
    }
    pairs[name] = rest.join("=").trim();
  }
  return pairs;
}

/** What a plugin string leaves unsaid, when its kind has no default (tcp). */
const PLUGIN_FALLBACK = { weight: 1, timeoutMs: 0, retries: 0, scheme: "http" } as const;

/** Combinations that would make a key do nothing, or fail only at the first probe. */
function pluginProblem(p: CheckPlugin): string | undefined {
  if (p.port === undefined) return "port: is required";
  if ((p.certFile === undefined) !== (p.keyFile === undefined)) {
    return "cert-file, key-file: give both or neither";
  }
  const tlsOnly = (["caFile", "certFile", "keyFile"] as const).find(k => p[k] !== undefined);
  if (p.scheme === "http" && tlsOnly) {
    const key = { caFile: "ca-file", certFile: "cert-file", keyFile: "key-file" }[tlsOnly];
    return `${key}: needs scheme=https (plain HTTP would ignore it)`;
  }
  return undefined;
}

/** The plugin fields a parsed plugin string sets (absent keys left to the defaults). */
function givenFields(f: z.output<typeof pluginFieldsSchema>): Partial<CheckPlugin> {
  return Object.fromEntries(
    Object.entries({
      weight: f.weight,
      // Absent = 0: the schema's transform fits it to the check period.
      timeoutMs: f.timeout === undefined ? undefined : f.timeout * 1000,
      retries: f.retries,
      port: f.port,
      scheme: f.scheme,
      tokenFile: f["token-file"],
      caFile: f["ca-file"],
      certFile: f["cert-file"],
      keyFile: f["key-file"],
    }).filter(([, v]) => v !== undefined),
  );
}

function parsePlugin(kind: CheckKind, raw: string | undefined): CheckPlugin | undefined {
  // Always a copy: the schema's transform adjusts port and timeout per parse.
  const base = PLUGIN_DEFAULTS[kind];
  if (raw === undefined) return base && { ...base };
  if (raw.trim() === "off") return undefined;
  const parsed = pluginFieldsSchema.safeParse(keyValues(kind, raw));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${issue?.path.join(".") || "value"}: ${issue?.message ?? "invalid"}`);
  }
  const given = givenFields(parsed.data);
  const plugin = { ...PLUGIN_FALLBACK, timeoutMs: 0, ...base, ...given, kind } as CheckPlugin;
  if (plugin.tokenFile === "none") delete plugin.tokenFile;
  const problem = pluginProblem(plugin);
  if (problem) throw new Error(problem);
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
    metricsPort: portSchema.optional(),
    checkPeriodSeconds: number("seconds")
      .refine(n => n >= 0.1 && n <= 3600, "must be between 0.1 and 3600")
      .default(10),
    voteTimeoutSeconds: number("seconds")
      .refine(n => n > 0, "must be more than 0")
      .optional(),
    // At least 2: the writer renews with voteTermPeriods − 1 periods left, before it runs out.
    voteTermPeriods: number("a count")
      .refine(n => Number.isInteger(n) && n >= 2, "must be a whole number, at least 2")
      .default(3),
    messageMaxAgeSeconds: number("seconds")
      .refine(n => n > 0, "must be more than 0")
      .default(30),
    maxClockSkewSeconds: number("seconds").default(10),
    scoreLine: number("a score").default(100),
    maxProbePeers: number("a count")
      .refine(n => Number.isInteger(n) && n >= 2, "must be a whole number, at least 2")
      .default(16),
    writerFallbackPeriods: number("a count")
      .refine(n => Number.isInteger(n) && n >= 1, "must be a whole number, at least 1")
      .default(3),
    zoneNamespace: z.string().min(1).default("kube-system"),
    hmacKeyFile: z.string().min(1).optional(),
    hmacSecret: secretRef.default({ namespace: "edge-system", name: "bulwark-edge-health-hmac" }),
    hmacReloadSeconds: number("seconds")
      .refine(n => n >= 0.1, "must be at least 0.1")
      .default(60),
    hmacOverlapSeconds: number("seconds").default(300),
    verifySource: boolSchema.default("true").transform(v => v === "true"),
    kubeconfig: z.string().min(1).optional(),
    logLevel: logLevel(),
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
      metricsPort: s.metricsPort,
      checkPeriodMs: periodMs,
      voteTimeoutMs: (s.voteTimeoutSeconds ?? 3 * s.checkPeriodSeconds) * 1000,
      voteTermPeriods: s.voteTermPeriods,
      messageMaxAgeMs: s.messageMaxAgeSeconds * 1000,
      maxClockSkewMs: s.maxClockSkewSeconds * 1000,
      scoreLine: s.scoreLine,
      maxProbePeers: s.maxProbePeers,
      writerFallbackPeriods: s.writerFallbackPeriods,
      zoneNamespace: s.zoneNamespace,
      hmacKeyFile: s.hmacKeyFile,
      hmacSecret: s.hmacSecret,
      hmacReloadMs: s.hmacReloadSeconds * 1000,
      hmacOverlapMs: s.hmacOverlapSeconds * 1000,
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

/** Settings that parse but could never work (no peer could be normal, rows expire too soon). */
function settingsProblem(s: Settings): string | undefined {
  const best = s.checks.reduce((sum, c) => sum + 100 * c.weight, 0);
  if (s.checks.length === 0) {
    return `${SPECS.checkDaemon.flag}/${SPECS.checkKubelet.flag}/${SPECS.checkTcp.flag}: every check is off, so no peer could ever be normal`;
  }
  if (best < s.scoreLine) {
    return `${SPECS.scoreLine.env}: ${s.scoreLine} is above the best possible score ${best} of the enabled checks, so every peer would be voted unhealthy`;
  }
  if (s.metricsPort === s.port) {
    return `${SPECS.metricsPort.env} (--${SPECS.metricsPort.flag}): ${s.metricsPort} is the peer port (--${SPECS.port.flag}); give /metrics a port of its own`;
  }
  if (s.voteTimeoutMs <= s.checkPeriodMs) {
    return `${SPECS.voteTimeoutSeconds.env} (--${SPECS.voteTimeoutSeconds.flag}): ${s.voteTimeoutMs / 1000}s must be longer than the check period (${s.checkPeriodMs / 1000}s), or every result expires before the next one arrives`;
  }
  const slow = s.checks.find(c => c.timeoutMs * (c.retries + 1) > s.checkPeriodMs);
  if (slow) {
    return `check-${slow.kind}: timeout × attempts (${(slow.timeoutMs * (slow.retries + 1)) / 1000}s) exceeds the check period (${s.checkPeriodMs / 1000}s)`;
  }
  return undefined;
}

/** Flags by SPECS key (`--check-period` is checkPeriodSeconds), or a message naming a bad one. */
function flagsByKey(argv: readonly string[]): Partial<Record<Key, string>> | string {
  const specs = Object.entries(SPECS) as [Key, SettingSpec][];
  const read = readFlags(argv, Object.fromEntries(specs.map(([, spec]) => [spec.flag, spec.env])));
  if ("message" in read) return read.message;
  const keyOf = new Map(specs.map(([key, spec]) => [spec.flag, key]));
  return Object.fromEntries(
    Object.entries(read.values).map(([flag, value]) => [keyOf.get(flag), value]),
  ) as Partial<Record<Key, string>>;
}

type Source = { kind: "flag" | "env" } | { kind: "file"; path: string };

/** One line naming the setting: `BULWARK_NODE_NAME (--node-name) is required (...)`. */
function issueLine(issue: z.core.$ZodIssue | undefined, sources: Map<Key, Source>): string {
  const key = (issue?.path[0] ?? "nodeName") as Key;
  const spec = SPECS[key];
  // Shared readers name the variable themselves ("LOG_LEVEL must be …"): say it once.
  const message = (issue?.message ?? "invalid").replace(`${spec.env} `, "");
  const joined = message.startsWith("is ") ? ` ${message}` : `: ${message}`;
  const source = sources.get(key);
  if (source?.kind === "file") {
    return `${SPECS.config.env} (--${SPECS.config.flag}) ${source.path}: ${spec.flag}${joined}`;
  }
  return `${spec.env} (--${spec.flag})${joined}`;
}

/** The config file's settings by key, or a message naming the file and the bad entry. */
function readConfigFile(
  path: string,
  readFile: (path: string) => string,
): Partial<Record<Key, string>> | string {
  const where = `${SPECS.config.env} (--${SPECS.config.flag}) ${path}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFile(path));
  } catch (error) {
    return `${where}: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return `${where}: must be a JSON object keyed by flag name`;
  }
  const byFlag = new Map(Object.entries(SPECS).map(([key, spec]) => [spec.flag, key as Key]));
  const out: Partial<Record<Key, string>> = {};
  for (const [flag, value] of Object.entries(parsed)) {
    const key = byFlag.get(flag);
    if (key === undefined || key === "config") return `${where}: unknown setting "${flag}"`;
    if (!["string", "number", "boolean"].includes(typeof value)) {
      return `${where}: ${flag}: must be a string, number or boolean`;
    }
    out[key] = String(value);
  }
  return out;
}

/** Each setting's value from the first source that has it: flag, variable, config file. */
function layered(
  flags: Partial<Record<Key, string>>,
  env: NodeJS.ProcessEnv,
  fromFile: Partial<Record<Key, string>>,
  configPath: string,
): { input: Partial<Record<Key, string>>; sources: Map<Key, Source> } {
  const input: Partial<Record<Key, string>> = {};
  const sources = new Map<Key, Source>();
  for (const [key, spec] of Object.entries(SPECS) as [Key, SettingSpec][]) {
    const candidates: [string | undefined, Source][] = [
      [flags[key], { kind: "flag" }],
      [env[spec.env], { kind: "env" }],
      [fromFile[key], { kind: "file", path: configPath }],
    ];
    const found = candidates.find(([value]) => value !== undefined && value !== "");
    if (!found || key === "config") continue;
    input[key] = found[0];
    sources.set(key, found[1]);
  }
  return { input, sources };
}

/**
 * Settings from flags over environment over the config file; a message naming the setting when
 * one is bad. `readFile` reads the config file (tests pass their own).
 */
export function parseSettings(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  readFile: (path: string) => string = path => readFileSync(path, "utf8"),
): SettingsResult {
  if (argv.includes("--help") || argv.includes("-h")) return { kind: "help" };
  if (argv.includes("--version")) return { kind: "version" };
  const flags = flagsByKey(argv);
  if (typeof flags === "string") return { kind: "error", message: flags };
  const configPath = flags.config ?? env[SPECS.config.env];
  const fromFile = configPath ? readConfigFile(configPath, readFile) : {};
  if (typeof fromFile === "string") return { kind: "error", message: fromFile };
  const { input, sources } = layered(flags, env, fromFile, configPath ?? "");
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    return { kind: "error", message: issueLine(parsed.error.issues[0], sources) };
  }
  const problem = settingsProblem(parsed.data);
  if (problem) return { kind: "error", message: problem };
  return { kind: "ok", settings: parsed.data };
}

/** How errors name a check plugin's setting: `BULWARK_EDGE_CHECK_KUBELET (--check-kubelet)`. */
export function pluginSettingName(kind: CheckKind): string {
  const spec = { daemon: SPECS.checkDaemon, kubelet: SPECS.checkKubelet, tcp: SPECS.checkTcp }[
    kind
  ];
  return `${spec.env} (--${spec.flag})`;
}

/** Every setting's flag and variable (for tests that must cover them all). */
export const SETTING_FLAGS: readonly { key: string; flag: string; env: string }[] = Object.entries(
  SPECS,
).map(([key, spec]) => ({ key, flag: spec.flag, env: spec.env }));

export function helpText(version: string): string {
  const rows = Object.values(SPECS).map(s => `  --${s.flag.padEnd(24)} ${s.env}\n      ${s.help}`);
  return `${NAME} ${version}: probes edge peers, exchanges signed results, votes on node health.\n\nEvery setting is a flag or an environment variable (the flag wins):\n${rows.join("\n")}\n`;
}
