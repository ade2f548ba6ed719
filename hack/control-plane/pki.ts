// Certificates for the local control plane, made with Debian's openssl: one CA signs the API
// server's serving certificate, the admin client certificate and every webhook server's
// certificate, so one caBundle is all a webhook configuration needs.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Pki {
  readonly dir: string;
  readonly caCertPath: string;
  readonly caKeyPath: string;
  readonly caPem: string;
}

export interface IssuedCertificate {
  readonly certPath: string;
  readonly keyPath: string;
}

export interface CertificateRequest {
  /** File stem inside the PKI folder. */
  name: string;
  commonName: string;
  /** Client certificates: Kubernetes reads O as the user's groups. */
  organizations?: string[];
  /** Serving certificates: `IP:127.0.0.1`, `DNS:localhost`, ... */
  subjectAltNames?: string[];
  usage: "serverAuth" | "clientAuth";
}

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

function ecKey(path: string, cwd: string): void {
  openssl(
    ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path],
    cwd,
  );
}

export function createPki(dir: string): Pki {
  ecKey("ca.key", dir);
  openssl(
    [
      "req",
      "-x509",
      "-new",
      "-key",
      "ca.key",
      "-days",
      "30",
      "-subj",
      "/CN=bulwark-local-ca",
      "-out",
      "ca.crt",
    ],
    dir,
  );
  const caCertPath = join(dir, "ca.crt");
  return {
    dir,
    caCertPath,
    caKeyPath: join(dir, "ca.key"),
    caPem: readFileSync(caCertPath, "utf8"),
  };
}

export function issueCertificate(pki: Pki, request: CertificateRequest): IssuedCertificate {
  const { name, commonName, organizations = [], subjectAltNames = [], usage } = request;
  const subject = organizations.map(o => `/O=${o}`).join("") + `/CN=${commonName}`;
  const extensions = [`extendedKeyUsage=${usage}`, "keyUsage=critical,digitalSignature"];
  if (subjectAltNames.length > 0) extensions.push(`subjectAltName=${subjectAltNames.join(",")}`);
  writeFileSync(join(pki.dir, `${name}.ext`), extensions.join("\n") + "\n");
  ecKey(`${name}.key`, pki.dir);
  openssl(["req", "-new", "-key", `${name}.key`, "-subj", subject, "-out", `${name}.csr`], pki.dir);
  openssl(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-days",
      "30",
      "-extfile",
      `${name}.ext`,
      "-out",
      `${name}.crt`,
    ],
    pki.dir,
  );
  return { certPath: join(pki.dir, `${name}.crt`), keyPath: join(pki.dir, `${name}.key`) };
}

/** The service-account key pair: TokenRequest signs with the private key, TokenReview verifies with the public one. */
export function createServiceAccountKeys(pki: Pki): {
  privateKeyPath: string;
  publicKeyPath: string;
} {
  ecKey("service-account.key", pki.dir);
  openssl(
    ["pkey", "-in", "service-account.key", "-pubout", "-out", "service-account.pub"],
    pki.dir,
  );
  return {
    privateKeyPath: join(pki.dir, "service-account.key"),
    publicKeyPath: join(pki.dir, "service-account.pub"),
  };
}

/** A serving certificate for a local process on loopback (API server, webhooks, gateway). */
export function issueLoopbackServingCertificate(pki: Pki, name: string): IssuedCertificate {
  return issueCertificate(pki, {
    name,
    commonName: "127.0.0.1",
    subjectAltNames: ["IP:127.0.0.1", "IP:::1", "DNS:localhost"],
    usage: "serverAuth",
  });
}
