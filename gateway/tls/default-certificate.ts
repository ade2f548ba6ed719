// The certificate served to clients whose server name matches no TLS host (or who send none):
// self-signed, made with openssl when the gateway starts, one ECDSA and one RSA pair so that any
// client can finish the handshake and get the 404 it asked for.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface PemPair {
  cert: string;
  key: string;
}

export const DEFAULT_CERTIFICATE_NAME = "bulwark-gateway-default";

async function makePair(dir: string, kind: "ec" | "rsa"): Promise<PemPair> {
  const keyArgs =
    kind === "rsa"
      ? ["-newkey", "rsa:2048"]
      : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"];
  const keyFile = join(dir, `${kind}.key`);
  const certFile = join(dir, `${kind}.crt`);
  await run("openssl", [
    "req",
    "-x509",
    ...keyArgs,
    "-nodes",
    "-days",
    "3650",
    "-subj",
    `/CN=${DEFAULT_CERTIFICATE_NAME}`,
    "-config",
    join(dir, "openssl.cnf"),
    "-extensions",
    "ext",
    "-keyout",
    keyFile,
    "-out",
    certFile,
  ]);
  return { cert: await readFile(certFile, "utf8"), key: await readFile(keyFile, "utf8") };
}

/** A fresh self-signed ECDSA and RSA pair for the default server name. */
export async function makeDefaultCertificates(): Promise<PemPair[]> {
  const dir = await mkdtemp(join(tmpdir(), "bulwark-gateway-cert-"));
  try {
    await writeFile(
      join(dir, "openssl.cnf"),
      `[req]\ndistinguished_name=dn\n[dn]\n[ext]\nsubjectAltName=DNS:${DEFAULT_CERTIFICATE_NAME}\n`,
    );
    return [await makePair(dir, "ec"), await makePair(dir, "rsa")];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
