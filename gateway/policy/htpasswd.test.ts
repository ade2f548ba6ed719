// htpasswd verification against the real tools: every hash here is made by Apache's htpasswd
// (apache2-utils: bcrypt, apr1, {SHA}) or `openssl passwd` (-apr1, -1, -5, -6), and checked to
// match its own password and no other.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import {
  authMapFile,
  cryptWith,
  parseBasicCredentials,
  parseUserFile,
  passwordMatches,
} from "./htpasswd";

const PASSWORDS = [
  "bar",
  "",
  "p",
  "correct horse battery staple",
  "with:colon",
  "ünïcödé-パスワード",
  "x".repeat(71),
  "y".repeat(100),
  "tab\tand space ",
  "$1$looks-like-a-hash",
];

function htpasswd(flags: string[], password: string): string {
  const line = execFileSync("htpasswd", ["-nb", ...flags, "user", password], { encoding: "utf8" });
  return line.trim().slice("user:".length);
}

function openssl(flag: string, password: string, salt?: string): string {
  const args = ["passwd", flag, ...(salt === undefined ? [] : ["-salt", salt]), "-stdin"];
  return execFileSync("openssl", args, { input: `${password}\n`, encoding: "utf8" }).trim();
}

const bytes = (text: string) => Buffer.from(text, "utf8");

/** A hash as the gateway reads it from a Secret: one character per byte. */
const latin1 = (text: string) => Buffer.from(text, "utf8").toString("latin1");

function assertOnlyItsPassword(hashText: string, password: string): void {
  const hash = latin1(hashText);
  assert.equal(
    passwordMatches(bytes(password), hash),
    true,
    `${hash} should match ${JSON.stringify(password)}`,
  );
  for (const other of [
    `${password}x`,
    password.slice(0, -1),
    password.toUpperCase() === password ? "q" : password.toUpperCase(),
  ]) {
    if (other === password) continue;
    assert.equal(
      passwordMatches(bytes(other), hash),
      false,
      `${hash} must not match ${JSON.stringify(other)}`,
    );
  }
}

describe("htpasswd hashes, checked against the tools that make them", () => {
  it("bcrypt from htpasswd -B ($2y$), and the $2a$/$2b$ spellings of the same hash", () => {
    // Past 72 bytes bcrypt reads no more (the next test).
    for (const password of PASSWORDS.filter(p => Buffer.byteLength(p) <= 72)) {
      const hash = htpasswd(["-B", "-C", "4"], password);
      assert.match(hash, /^\$2y\$04\$/);
      assertOnlyItsPassword(hash, password);
      for (const minor of ["a", "b"]) assertOnlyItsPassword(`$2${minor}${hash.slice(3)}`, password);
    }
  });

  it("bcrypt truncates at 72 bytes, as crypt does", () => {
    const hash = htpasswd(["-B", "-C", "4"], "z".repeat(72));
    assert.equal(passwordMatches(bytes("z".repeat(80)), hash), true);
  });

  it("apr1 MD5 from htpasswd -m and openssl passwd -apr1", () => {
    for (const password of PASSWORDS) {
      assertOnlyItsPassword(htpasswd(["-m"], password), password);
      assertOnlyItsPassword(openssl("-apr1", password), password);
    }
  });

  it("ingress-nginx's documented example: foo / bar", () => {
    const file = Buffer.from("Zm9vOiRhcHIxJE9GRzNYeWJwJGNrTDBGSERBa29YWUlsSDkuY3lzVDAK", "base64");
    const users = parseUserFile(file.toString("latin1"));
    assert.equal(passwordMatches(bytes("bar"), users.get("foo")!), true);
    assert.equal(passwordMatches(bytes("baz"), users.get("foo")!), false);
  });

  it("{SHA} from htpasswd -s", () => {
    for (const password of PASSWORDS) assertOnlyItsPassword(htpasswd(["-s"], password), password);
  });

  it("{SSHA}: base64 of SHA-1(password salt) and the salt", () => {
    for (const password of PASSWORDS) {
      const salt = Buffer.from("s4lt-bytes");
      const sha = createHash("sha1").update(password).update(salt).digest();
      assertOnlyItsPassword(`{SSHA}${Buffer.concat([sha, salt]).toString("base64")}`, password);
    }
  });

  it("{PLAIN}", () => {
    for (const password of PASSWORDS) assertOnlyItsPassword(`{PLAIN}${password}`, password);
  });

  it("crypt's MD5 ($1$), SHA-256 ($5$) and SHA-512 ($6$) from openssl passwd", () => {
    for (const password of PASSWORDS) {
      assertOnlyItsPassword(openssl("-1", password), password);
      assertOnlyItsPassword(openssl("-1", password, "ab"), password);
      // openssl's SHA-crypt answers "<NULL>" for an empty password.
      if (password === "") continue;
      assertOnlyItsPassword(openssl("-5", password), password);
      assertOnlyItsPassword(openssl("-6", password), password);
      assertOnlyItsPassword(openssl("-6", password, "0123456789abcdefXYZ"), password);
    }
  });

  it("never matches a format it does not know, a plain-text line, or a broken hash", () => {
    for (const stored of [
      "bar",
      "",
      "*",
      "!",
      "$y$j9T$abc$def",
      "$3$$x",
      "{MD5}x",
      "$2y$04$short",
      "$2y$99$" + "a".repeat(53),
      "$apr",
    ]) {
      assert.equal(passwordMatches(bytes("bar"), stored), false, stored);
    }
    assert.equal(
      cryptWith(bytes("bar"), "$6$rounds=99999999999$salt$x"),
      undefined,
      "rounds over the cap",
    );
  });

  it("ends the password at a NUL byte, as crypt's C strings do", () => {
    const hash = openssl("-apr1", "abc");
    assert.equal(passwordMatches(Buffer.from("abc\0def"), hash), true);
  });
});

describe("htpasswd files, read as nginx scans them", () => {
  it("takes the first line of a user, skips comments and CR-led lines, ends the hash at CR, LF or ':'", () => {
    const users = parseUserFile(
      "# comment\nalice:{PLAIN}one:extra\r\nalice:{PLAIN}two\n\n\rbob:{PLAIN}x\ncarol:{PLAIN}three\r\n dave:{PLAIN}d\nnocolon\n:{PLAIN}empty\nerin:{PLAIN}last",
    );
    assert.deepEqual(
      [...users],
      [
        ["alice", "{PLAIN}one"],
        ["carol", "{PLAIN}three"],
        [" dave", "{PLAIN}d"],
        ["erin", "{PLAIN}last"],
      ],
    );
  });

  it("auth-map: each key a user, its value the hash", () => {
    const users = parseUserFile(authMapFile({ bob: "{PLAIN}b", alice: "{PLAIN}a" }));
    assert.equal(users.get("alice"), "{PLAIN}a");
    assert.equal(users.get("bob"), "{PLAIN}b");
  });
});

describe("Authorization: Basic, read as nginx reads it", () => {
  const basic = (text: string) => `Basic ${Buffer.from(text).toString("base64")}`;

  it("reads user and password; the password may hold colons", () => {
    const c = parseBasicCredentials(basic("foo:b:a:r"));
    assert.equal(c?.user, "foo");
    assert.equal(c?.password.toString(), "b:a:r");
  });

  it("takes any case of 'Basic', more spaces, no padding, and ignores what follows '='", () => {
    assert.equal(
      parseBasicCredentials(`bAsIc    ${Buffer.from("foo:bar").toString("base64")}`)?.user,
      "foo",
    );
    assert.equal(parseBasicCredentials("Basic Zm9vOmJhcg")?.password.toString(), "bar");
    assert.equal(parseBasicCredentials("Basic Zm9vOmJhcg==junk!")?.password.toString(), "bar");
  });

  it("declines what nginx declines: no scheme, another scheme, no colon, an empty user, bad base64", () => {
    for (const header of [
      undefined,
      "",
      "Basic",
      "Basic ",
      "Basic    ",
      "Bearer abc",
      "BasicZm9vOmJhcg==",
      basic("foobar"),
      basic(":bar"),
      "Basic Zm9v!mJhcg==",
      "Basic Z",
    ]) {
      assert.equal(parseBasicCredentials(header), undefined, String(header));
    }
  });
});
