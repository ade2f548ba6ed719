// A CA bundle as the init client and the Pepr watcher take it: PEM text holding one or more
// certificates and nothing else. Checked here (shape only; pure) so a wrong file or variable is
// named at start-up, not discovered as an opaque TLS failure on the first call.
import { fail, ok, type Result } from "../result";

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([A-Za-z0-9+/=\r\n]+?)-----END \1-----/g;

/** The bundle's certificates, normalised to `\n` line ends; an error naming `field` otherwise. */
export function parseCaBundle(text: string, field: string): Result<string> {
  const blocks = [...text.matchAll(BLOCK)];
  const kinds = blocks.map(b => b[1]);
  if (blocks.length === 0) {
    return fail([{ field, message: "must hold PEM certificates (-----BEGIN CERTIFICATE-----)" }]);
  }
  const other = kinds.find(k => k !== "CERTIFICATE");
  if (other !== undefined) {
    // A key pasted in by mistake must not travel on in pod specs.
    return fail([{ field, message: `must hold only certificates; found a PEM ${other} block` }]);
  }
  return ok(`${blocks.map(b => b[0].replace(/\r\n/g, "\n")).join("\n")}\n`);
}
