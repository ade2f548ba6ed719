import { createServer } from "node:net";

// Every port handed out by this process: the probe below closes its socket, so the port is free
// again at once and the kernel may pick it for the next call, giving two callers one port.
const handedOut = new Set<number>();

/** A TCP port on 127.0.0.1 that was free a moment ago, and not handed out by this process before. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await probePort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

async function probePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  await new Promise(resolve => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return address.port;
}
