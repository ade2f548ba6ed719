#!/usr/bin/env node
// The `bulwark` command, and the container image's one entrypoint. The first argument picks the
// program: `gateway`, `permission-server`, `init`, `edge-health`, or `cli`; anything else is a CLI
// command (`bulwark checksum ...` is `bulwark cli checksum ...`). The image's CMD is `init`: the Pepr
// module injects the init container with no command or args.
//
// What runs: the package (`npm pack`, what the image holds) ships bin/ and build/ only, the
// JavaScript bundles packaging/compile.ts makes, and runs those with plain Node. A checkout has
// the TypeScript sources beside bin/ and runs them through tsx (a dev dependency), so `npm start`,
// the tests and `./bin/bulwark.js ...` always run the sources as they are, with no build step and
// no stale build/ to trip over; a checkout without tsx (`npm ci --omit=dev`) runs build/.
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const ROOT = path.join(__dirname, "..");

const ENTRIES = {
  gateway: { file: "gateway/main", name: "bulwark-gateway" },
  "permission-server": { file: "permission-server/main", name: "bulwark-permission-server" },
  init: { file: "init/main", name: "bulwark-init" },
  "edge-health": { file: "edge-health-daemon/main", name: "bulwark-edge-health" },
};
const CLI = { file: "cli/main", name: "bulwark" };

function hasTsx() {
  try {
    require.resolve("tsx/cjs/api");
    return true;
  } catch {
    return false;
  }
}

const FROM_SOURCES = fs.existsSync(path.join(ROOT, `${CLI.file}.ts`)) && hasTsx();

/** The file to load for an entry: its TypeScript source in a checkout, else its bundle. */
function entryFile(entry) {
  return FROM_SOURCES
    ? path.join(ROOT, `${entry.file}.ts`)
    : path.join(ROOT, "build", `${entry.file}.js`);
}

// tsx caches compiled files in <tmpdir>/tsx-<uid> and throws when it cannot create that folder
// (a read-only root file system with no /tmp volume).
function disableTsxCacheIfReadOnly() {
  if (process.env.TSX_DISABLE_CACHE) return;
  const user = process.geteuid ? process.geteuid() : os.userInfo().username;
  const dir = path.join(os.tmpdir(), `tsx-${user}`);
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.accessSync(dir, fs.constants.W_OK);
  } catch {
    process.env.TSX_DISABLE_CACHE = "1";
  }
}

function load(entry) {
  const file = entryFile(entry);
  try {
    return require(file);
  } catch (error) {
    const hint =
      error && error.code === "MODULE_NOT_FOUND" && !FROM_SOURCES && !fs.existsSync(file)
        ? " (a checkout needs `npm install` for tsx, or `npm run compile` for build/)"
        : "";
    process.stderr.write(`${entry.name}: cannot load ${file}: ${error.message}${hint}\n`);
    process.exit(1);
  }
}

function runEntry(entry, args) {
  const { main } = load(entry);
  main(args).then(
    code => process.exit(code),
    error => {
      process.stderr.write(`${entry.name}: ${error && error.stack ? error.stack : error}\n`);
      process.exit(1);
    },
  );
}

if (FROM_SOURCES) {
  disableTsxCacheIfReadOnly();
  require("tsx/cjs/api").register();
}
const [first, ...rest] = process.argv.slice(2);
if (first !== undefined && Object.hasOwn(ENTRIES, first)) {
  runEntry(ENTRIES[first], rest);
} else {
  if (first === "cli") process.argv.splice(2, 1);
  load(CLI).run();
}
