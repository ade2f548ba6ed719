#!/usr/bin/env node
// The `bulwark` command, and the container image's one entrypoint. The first argument picks the
// program: `gateway`, `permission-server`, `init`, `edge-health`, or `cli`; anything else is a CLI
// command (`bulwark checksum ...` is `bulwark cli checksum ...`). The image's CMD is `init`: the Pepr
// module injects the init container with no command or args.
// TypeScript runs through tsx's require hook (tsx is a production dependency).
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const ENTRIES = {
  gateway: { file: "../gateway/main.ts", name: "bulwark-gateway" },
  "permission-server": { file: "../permission-server/main.ts", name: "bulwark-permission-server" },
  init: { file: "../init/main.ts", name: "bulwark-init" },
  "edge-health": { file: "../edge-health-daemon/main.ts", name: "bulwark-edge-health" },
};

// tsx caches compiled files in <tmpdir>/tsx-<uid> and throws when it cannot create that folder:
// the injected init container has a read-only root file system and no /tmp volume.
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

function runEntry(entry, args) {
  let main;
  try {
    ({ main } = require(entry.file));
  } catch (error) {
    process.stderr.write(`${entry.name}: cannot load ${entry.file}: ${error.message}\n`);
    process.exit(1);
  }
  main(args).then(
    code => process.exit(code),
    error => {
      process.stderr.write(`${entry.name}: ${error && error.stack ? error.stack : error}\n`);
      process.exit(1);
    },
  );
}

disableTsxCacheIfReadOnly();
require("tsx/cjs/api").register();
const [first, ...rest] = process.argv.slice(2);
if (first !== undefined && Object.hasOwn(ENTRIES, first)) {
  runEntry(ENTRIES[first], rest);
} else {
  if (first === "cli") process.argv.splice(2, 1);
  require("../cli/main.ts").run();
}
