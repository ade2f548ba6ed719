// `bulwark permission tls`: makes the permission server's serving Secret without cert-manager.
// A CA (kept in its own Secret, `<secret>-ca`, mounted nowhere) signs a certificate for the
// server's Service names; the serving Secret (kubernetes.io/tls: tls.crt, tls.key, ca.crt) is what
// the server mounts and whose ca.crt the Pepr module injects. Run again to renew: the CA is reused,
// so pods that carry it keep trusting the renewed certificate. Keys are made by the user's openssl.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubeConfig, type V1Secret } from "@kubernetes/client-node";
import { apiMessage, isNotFound } from "../kube/api-errors";
import { INSTANCE_LABEL, PART_OF, PART_OF_LABEL } from "../packaging/manifests/common";
import { permissionCaSecretName } from "../core/names";
import { CommandFailed, UsageError } from "./errors";

const CA_DAYS = 3650;

export interface TlsOptions {
  /** Bulwark's namespace: where the server and its Service run. */
  namespace: string;
  /** The release the Secrets belong to (their app.kubernetes.io/instance label). */
  release: string;
  /** The permission server's Service, `<prefix>-permission-server`: the certificate names it. */
  service: string;
  secret: string;
  days: number;
  /** More subjectAltNames (`DNS:name`, `IP:addr`), e.g. for a server reached another way. */
  extraNames: string[];
  kubeconfig?: KubeConfig;
}

/** The names a caller may use for the Service, as openssl subjectAltName entries. */
export function servingNames(
  service: string,
  namespace: string,
  extra: readonly string[],
): string[] {
  const names = [
    `DNS:${service}`,
    `DNS:${service}.${namespace}`,
    `DNS:${service}.${namespace}.svc`,
    `DNS:${service}.${namespace}.svc.cluster.local`,
  ];
  for (const name of extra) {
    if (!/^(DNS|IP):[A-Za-z0-9.:*-]+$/.test(name)) {
      throw new UsageError(`--san ${name}: must be DNS:NAME or IP:ADDRESS`);
    }
  }
  return [...names, ...extra];
}

interface Pem {
  cert: string;
  key: string;
}

/** A Secret the install needs, labelled as the install's objects are (uninstall finds it). */
export function installSecret(
  where: { namespace: string; name: string; release: string },
  type: string,
  data: Record<string, string>,
  keep: V1Secret["data"] = {},
): V1Secret {
  const labels = { [PART_OF_LABEL]: PART_OF, [INSTANCE_LABEL]: where.release };
  const encoded = Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")]);
  return {
    apiVersion: "v1",
    kind: "Secret",
    type,
    metadata: { name: where.name, namespace: where.namespace, labels },
    // The Secret's other keys stay: only what the install needs is written.
    data: { ...keep, ...Object.fromEntries(encoded) },
  };
}

export function decode(secret: V1Secret, key: string): string | undefined {
  const value = secret.data?.[key];
  return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8");
}

/** The CA kept from an earlier run, when its Secret holds both halves. */
function storedCa(secret: V1Secret | undefined): Pem | undefined {
  const cert = secret && decode(secret, "tls.crt");
  const key = secret && decode(secret, "tls.key");
  return cert && key ? { cert, key } : undefined;
}

function openssl(dir: string, args: string[]): void {
  try {
    execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? "").trim();
    throw new CommandFailed(`openssl ${args[0]} failed: ${stderr || String(error)}`);
  }
}

/** openssl's arguments from one line (none of ours has spaces). */
const args = (line: string): string[] => line.split(" ");
const EC_KEY = "genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out";

/** `<stem>.crt` and `<stem>.key` from `dir`. */
function readPem(dir: string, stem: string): Pem {
  const read = (ext: string): string => readFileSync(join(dir, `${stem}.${ext}`), "utf8");
  return { cert: read("crt"), key: read("key") };
}

function makeCa(dir: string): Pem {
  openssl(dir, args(`${EC_KEY} ca.key`));
  openssl(
    dir,
    args(
      `req -x509 -new -key ca.key -days ${CA_DAYS} -subj /CN=bulwark-permission-server-ca -out ca.crt`,
    ),
  );
  return readPem(dir, "ca");
}

function signServing(dir: string, ca: Pem, names: string[], days: number): Pem {
  writeFileSync(join(dir, "ca.crt"), ca.cert);
  writeFileSync(join(dir, "ca.key"), ca.key, { mode: 0o600 });
  const extensions = [
    "extendedKeyUsage=serverAuth",
    "keyUsage=critical,digitalSignature",
    `subjectAltName=${names.join(",")}`,
  ];
  writeFileSync(join(dir, "tls.ext"), extensions.join("\n"));
  openssl(dir, args(`${EC_KEY} tls.key`));
  const commonName = names[2]?.slice(4) ?? "bulwark-permission-server";
  openssl(dir, args(`req -new -key tls.key -subj /CN=${commonName} -out tls.csr`));
  openssl(
    dir,
    args(
      `x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days ${days} -extfile tls.ext -out tls.crt`,
    ),
  );
  return readPem(dir, "tls");
}

export async function readSecret(
  core: CoreV1Api,
  namespace: string,
  name: string,
): Promise<V1Secret | undefined> {
  try {
    return await core.readNamespacedSecret({ namespace, name });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw new CommandFailed(`reading Secret ${namespace}/${name}: ${apiMessage(error)}`);
  }
}

/** Creates the Secret, or replaces it (keeping its resourceVersion, so a concurrent writer conflicts). */
export async function putSecret(
  core: CoreV1Api,
  body: V1Secret,
  current: V1Secret | undefined,
): Promise<void> {
  const namespace = body.metadata?.namespace ?? "";
  const name = body.metadata?.name ?? "";
  try {
    if (current) {
      const metadata = { ...body.metadata, resourceVersion: current.metadata?.resourceVersion };
      await core.replaceNamespacedSecret({ namespace, name, body: { ...body, metadata } });
    } else {
      await core.createNamespacedSecret({ namespace, body });
    }
  } catch (error) {
    throw new CommandFailed(`writing Secret ${namespace}/${name}: ${apiMessage(error)}`);
  }
}

/** Makes (or renews) the serving Secret; returns the line to print. */
export async function writePermissionTls(options: TlsOptions): Promise<string> {
  const kc = options.kubeconfig ?? new KubeConfig();
  if (!options.kubeconfig) kc.loadFromDefault();
  const core = kc.makeApiClient(CoreV1Api);
  const { namespace, secret, release } = options;
  const names = servingNames(options.service, namespace, options.extraNames);
  const caName = permissionCaSecretName(secret);
  const dir = mkdtempSync(join(tmpdir(), "bulwark-tls-"));
  try {
    const caSecret = await readSecret(core, namespace, caName);
    const stored = storedCa(caSecret);
    const ca = stored ?? makeCa(dir);
    if (!stored) {
      const data = { "tls.crt": ca.cert, "tls.key": ca.key };
      const body = installSecret({ namespace, name: caName, release }, "kubernetes.io/tls", data);
      await putSecret(core, body, caSecret);
    }
    const serving = signServing(dir, ca, names, options.days);
    const current = await readSecret(core, namespace, secret);
    const data = { "tls.crt": serving.cert, "tls.key": serving.key, "ca.crt": ca.cert };
    const body = installSecret(
      { namespace, name: secret, release },
      "kubernetes.io/tls",
      data,
      current?.data,
    );
    await putSecret(core, body, current);
    return (
      `${current ? "renewed" : "created"} Secret ${namespace}/${secret} for ${names.join(",")} (${options.days} days), ` +
      `signed by the CA in Secret ${namespace}/${caName} (${stored ? "reused" : "new"})`
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
