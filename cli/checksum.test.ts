import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "js-yaml";
import { makeCertificate, tlsSecret } from "../test/fixtures/certificates";
import { main } from "./main";
import { parseTrustedKeys, verifyAttestation, type Attestation } from "../core/checksum";

const dir = mkdtempSync(join(tmpdir(), "bulwark-cli-"));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function ingressYaml(name: string, version: string, className = "bulwark"): string {
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
  namespace: shop
  annotations:
    nginx.ingress.kubernetes.io/version: "${version}"
spec:
  ingressClassName: ${className}
  rules:
    - host: ${name}.example.com
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`;
}

async function run(
  ...argv: string[]
): Promise<{ code: number; out: string; err: string; error?: Error }> {
  let out = "";
  let err = "";
  try {
    const code = await main(
      argv,
      s => (out += s),
      s => (err += s),
    );
    return { code, out, err };
  } catch (error) {
    return { code: -1, out, err, error: error as Error };
  }
}

describe("bulwark checksum compute", () => {
  const multi = file(
    "ingresses.yaml",
    [
      ingressYaml("site-27524", "1"),
      ingressYaml("site-238210", "1"),
      ingressYaml("other-5", "1", "nginx"),
    ].join("---\n"),
  );

  it("given Ingress files in tengine mode, prints the checksum and the byte-sorted IDs", async () => {
    const { code, out, err } = await run(
      "checksum",
      "compute",
      "--kind",
      "ingress",
      "--mode",
      "tengine",
      "-f",
      multi,
    );
    assert.equal(code, 0);
    const result = JSON.parse(out);
    assert.deepEqual(result.ids, ["238210-1", "27524-1"]);
    assert.match(result.checksum, /^[0-9a-f]{32}$/);
    assert.match(err, /ignored Ingress shop\/other-5 .*: not of IngressClass bulwark/);
  });

  it("given -o yaml, prints a ready-to-apply checksum object in content mode by default", async () => {
    const { out } = await run(
      "checksum",
      "compute",
      "--kind",
      "ingress",
      "-o",
      "yaml",
      "-n",
      "guard",
      "-f",
      dir + "/ingresses.yaml",
    );
    const object = load(out) as {
      apiVersion: string;
      kind: string;
      metadata: { namespace: string };
      spec: { mode: string; ids: string[] };
    };
    assert.equal(object.apiVersion, "tengine.taobao.org/v1");
    assert.equal(object.kind, "IngressCheckSum");
    assert.equal(object.metadata.namespace, "guard");
    assert.equal(object.spec.mode, "content");
    assert.match(object.spec.ids[0] ?? "", /^shop\/site-238210@[0-9a-f]{64}$/);
  });

  it("given a folder, reads every YAML file in it", async () => {
    const { out } = await run(
      "checksum",
      "compute",
      "--kind",
      "ingress",
      "--mode",
      "tengine",
      "-f",
      dir,
    );
    assert.equal(JSON.parse(out).ids.length, 2);
  });

  it("given several files after one -f, reads them all (the same IDs as each with its own -f)", async () => {
    // A folder of their own: the folder test above reads every file in `dir`.
    const own = mkdtempSync(join(tmpdir(), "bulwark-cli-split-"));
    const [a, b, c] = ["1", "2", "3"].map(n => {
      const path = join(own, `split-${n}.yaml`);
      writeFileSync(path, ingressYaml(`split-${n}`, "1"));
      return path;
    }) as [string, string, string];
    const base = ["checksum", "compute", "--kind", "ingress", "--mode", "tengine"];
    const together = await run(...base, "-f", a, b, c);
    const apart = await run(...base, "-f", a, "-f", b, "-f", c);
    assert.equal(together.code, 0);
    assert.deepEqual(JSON.parse(together.out).ids, ["1-1", "2-1", "3-1"]);
    assert.deepEqual(JSON.parse(together.out), JSON.parse(apart.out));
  });

  it("given an extra argument to publish, refuses it naming the argument", async () => {
    const { error } = await run("checksum", "publish", "--kind", "ingress", "-n", "x", "stray");
    assert.match(error?.message ?? "", /unexpected argument "stray" to checksum publish/);
  });

  it("given a document that is not an Ingress, leaves it out naming the file, the document and the object", async () => {
    const path = file(
      "mixed.yaml",
      ingressYaml("site-1", "1") +
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\n",
    );
    const { code, out, err } = await run("checksum", "compute", "--kind", "ingress", "-f", path);
    assert.equal(code, 0);
    assert.equal(JSON.parse(out).ids.length, 1);
    assert.match(
      err,
      new RegExp(
        `ignored ConfigMap shop/settings \\(${path}#2\\): not an Ingress \\(--kind ingress\\)`,
      ),
    );
  });

  it("given -f -, reads standard input (as the command runs)", () => {
    const bin = join(__dirname, "..", "bin", "bulwark.js");
    const args = ["checksum", "compute", "--kind", "ingress", "--mode", "tengine", "-f", "-"];
    const result = spawnSync(process.execPath, [bin, ...args], {
      input: ingressYaml("site-7", "1"),
      encoding: "utf8",
    });
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout).ids, ["7-1"]);
  });

  it("given an Ingress without a namespace, refuses it naming the field", async () => {
    const own = mkdtempSync(join(tmpdir(), "bulwark-cli-nons-"));
    const path = join(own, "no-namespace.yaml");
    writeFileSync(path, ingressYaml("site-1", "1").replace("  namespace: shop\n", ""));
    const { error } = await run("checksum", "compute", "--kind", "ingress", "-f", path);
    assert.match(error?.message ?? "", /Ingress site-1 .*: has no metadata.namespace/);
  });

  it("given the same Ingress twice, refuses it naming both places", async () => {
    const own = mkdtempSync(join(tmpdir(), "bulwark-cli-dup-"));
    const a = join(own, "a.yaml");
    const b = join(own, "b.yaml");
    writeFileSync(a, ingressYaml("site-1", "1"));
    writeFileSync(b, ingressYaml("site-1", "2"));
    const { error } = await run("checksum", "compute", "--kind", "ingress", "-f", a, b);
    assert.equal(error?.message, `Ingress shop/site-1 (${b}): the same object as in ${a}`);
    // The same file named twice is one file, not a duplicate.
    assert.equal((await run("checksum", "compute", "--kind", "ingress", "-f", a, a)).code, 0);
  });

  it("given YAML that does not parse, names the file", async () => {
    const path = file("broken.yaml", "kind: [unclosed\n");
    const { error } = await run("checksum", "compute", "--kind", "ingress", "-f", path);
    assert.match(error?.message ?? "", new RegExp(`^${path}: not valid YAML or JSON`));
  });

  it("given a TLS Secret whose certificate cannot be read, names the Secret and the field", async () => {
    const good = makeCertificate({ key: "ecdsa", dnsNames: ["a.example.com"] });
    const secret = tlsSecret("shop", "broken-tls", {
      certPem: "not a certificate",
      keyPem: good.keyPem,
    });
    const path = file("secret.json", JSON.stringify(secret));
    const { error } = await run("checksum", "compute", "--kind", "secret", "-f", path);
    assert.equal(
      error?.message,
      `Secret shop/broken-tls (${path}): data["tls.crt"]: holds no PEM certificate`,
    );
  });

  it("given a Secret written with stringData, hashes it as the API server will store it", async () => {
    const cert = makeCertificate({ key: "ecdsa", dnsNames: ["a.example.com"] });
    const stored = tlsSecret("shop", "site-7", cert, {
      "nginx.ingress.kubernetes.io/version": "3",
    });
    const written = {
      ...stored,
      data: undefined,
      stringData: { "tls.crt": cert.certPem, "tls.key": cert.keyPem },
    };
    const a = await run(
      "checksum",
      "compute",
      "--kind",
      "secret",
      "-f",
      file("stored.json", JSON.stringify(stored)),
    );
    const b = await run(
      "checksum",
      "compute",
      "--kind",
      "secret",
      "-f",
      file("written.json", JSON.stringify(written)),
    );
    assert.equal(JSON.parse(a.out).checksum, JSON.parse(b.out).checksum);
  });

  const usage: [string[], RegExp][] = [
    [["checksum", "compute", "-f", "x"], /--kind is required/],
    [
      ["checksum", "compute", "--kind", "pod", "-f", "x"],
      /--kind must be ingress or secret, got "pod"/,
    ],
    [
      ["checksum", "compute", "--kind", "ingress", "--mode", "md5", "-f", "x"],
      /--mode must be tengine or content/,
    ],
    [["checksum", "compute", "--kind", "ingress"], /-f FILE_OR_DIR is required/],
    [["checksum", "publish", "--kind", "ingress"], /-n NAMESPACE is required/],
    [["checksum", "verify"], /unknown command "checksum verify"/],
    [
      ["checksum", "compute", "--kind", "ingress", "-f", "/no/such/file"],
      /\/no\/such\/file: no such file or folder/,
    ],
  ];
  for (const [argv, expected] of usage) {
    it(`given \`bulwark ${argv.join(" ")}\`, fails with ${expected}`, async () => {
      const { error } = await run(...argv);
      assert.match(error?.message ?? "", expected);
    });
  }
});

describe("bulwark checksum keygen and --sign-key", () => {
  it("writes a key pair, refuses to overwrite it, and signs what compute -o yaml renders", async () => {
    const key = join(dir, "publisher.key");
    const made = await run("checksum", "keygen", "--out", key);
    assert.equal(made.code, 0, made.error?.message);
    assert.match(made.out, /key id (ed25519-[0-9a-f]{16})/);
    assert.match(made.out, /kubectl create configmap bulwark-checksum-keys -n bulwark-system/);
    assert.equal(statSync(key).mode & 0o777, 0o600, "the private key is the owner's only");
    const again = await run("checksum", "keygen", "--out", key);
    assert.match(again.error?.message ?? "", /--out .*publisher\.key: EEXIST/);

    const ingresses = file("signed.yaml", ingressYaml("site-1", "3"));
    const rendered = await run(
      "checksum",
      "compute",
      "--kind",
      "ingress",
      "-o",
      "yaml",
      "-f",
      ingresses,
      "--sign-key",
      key,
    );
    assert.equal(rendered.code, 0, rendered.error?.message);
    const object = load(rendered.out) as {
      kind: "IngressCheckSum";
      spec: Omit<Attestation, "kind"> & { signature: { keyId: string } };
    };
    const keyId = /key id (\S+)/.exec(made.out)?.[1];
    assert.equal(object.spec.signature.keyId, keyId);
    const trusted = parseTrustedKeys({ k: readFileSync(`${key}.pub`, "utf8") }, "keys");
    assert.ok(trusted.ok);
    const { mode, checksum, timestamp, ids, signature } = object.spec;
    const attestation = { kind: object.kind, mode, checksum, timestamp, ids };
    assert.ok(verifyAttestation(attestation, signature, trusted.value).ok);
  });

  it("names --sign-key when the file is missing or not an Ed25519 private key", async () => {
    const ingresses = file("unsigned.yaml", ingressYaml("site-1", "3"));
    const compute = (key: string) =>
      run("checksum", "compute", "--kind", "ingress", "-f", ingresses, "--sign-key", key);
    assert.match(
      (await compute("/no/such/key")).error?.message ?? "",
      /--sign-key \/no\/such\/key: ENOENT/,
    );
    const notAKey = file("not-a-key.pem", "hello");
    assert.match(
      (await compute(notAKey)).error?.message ?? "",
      /--sign-key .* is not a PEM private key/,
    );
    assert.match((await run("checksum", "keygen")).error?.message ?? "", /--out FILE is required/);
  });
});
