// Reads Kubernetes objects from YAML/JSON files and folders, remembering where each came from so
// an error can name the file and the object.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadAll } from "js-yaml";

export interface SourcedObject {
  /** `path` or `path#3` (the 1-based document in a multi-document file). */
  source: string;
  object: {
    apiVersion?: string;
    kind?: string;
    metadata?: { name?: string; namespace?: string };
  } & Record<string, unknown>;
}

export class InputError extends Error {
  override name = "InputError";
}

const YAML_FILE = /\.(ya?ml|json)$/;

/** `-f -`: standard input, read once. */
const STDIN = "-";

function filesUnder(path: string): string[] {
  if (path === STDIN) return [STDIN];
  let stat;
  try {
    stat = statSync(path);
  } catch {
    throw new InputError(`${path}: no such file or folder`);
  }
  if (stat.isFile()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap(entry => {
      const child = join(path, entry);
      return statSync(child).isDirectory() || YAML_FILE.test(entry) ? filesUnder(child) : [];
    });
}

function documentsOf(file: string): unknown[] {
  try {
    return loadAll(readFileSync(file === STDIN ? 0 : file, "utf8"));
  } catch (error) {
    throw new InputError(
      `${file}: not valid YAML or JSON: ${(error as Error).message.split("\n")[0]}`,
    );
  }
}

/**
 * Every object in the given files and folders ("-": standard input); Lists are flattened.
 * `onFile` hears how many of the files are read, after each one.
 */
export function readObjects(
  paths: string[],
  onFile: (done: number, total: number) => void = () => {},
): SourcedObject[] {
  const out: SourcedObject[] = [];
  const files = [...new Set(paths.flatMap(filesUnder))];
  for (const [index, file] of files.entries()) {
    const docs = documentsOf(file);
    docs.forEach((doc, index) => {
      if (doc === null || doc === undefined) return;
      const source = docs.length > 1 ? `${file}#${index + 1}` : file;
      if (typeof doc !== "object" || Array.isArray(doc))
        throw new InputError(`${source}: not a Kubernetes object`);
      const object = doc as SourcedObject["object"];
      if (object.kind?.endsWith("List") && Array.isArray(object.items)) {
        object.items.forEach((item, i) =>
          out.push({ source: `${source} items[${i}]`, object: item as SourcedObject["object"] }),
        );
      } else {
        out.push({ source, object });
      }
    });
    onFile(index + 1, files.length);
  }
  return out;
}

export function describeObject(o: SourcedObject): string {
  const ns = o.object.metadata?.namespace;
  return `${o.object.kind ?? "<no kind>"} ${ns ? `${ns}/` : ""}${o.object.metadata?.name ?? "<no name>"} (${o.source})`;
}
