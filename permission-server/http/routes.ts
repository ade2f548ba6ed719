// The permission server's HTTP API (README.md documents it):
//   POST /v1/grants                        the init client's call (pod token)
//   GET  /v1/grants/:namespace/:pod        status, long-poll with ?rev=N&wait=SECONDS (pod token)
//   POST /v1/revoke                        the Pepr finalizer path (a token that may patch the pod);
//                                          revokes what the ledger holds for the pod's UID
//   POST /v1/reset                         breaker reset (a token that may patch the pod)
//   GET  /healthz, GET /metrics
import type { V1Pod } from "@kubernetes/client-node";
import express, { type Request, type Response } from "express";
import { z } from "zod";
import { formatErrors } from "../../core/result";
import { issueErrors } from "../../core/permission";
import { PERMISSION_CLAIM_ANNOTATION, PERMISSION_STATUS_ANNOTATION } from "../../core/names";
import { otherHolder } from "../../core/permission/claim";
import { authenticatePod, authorizePodPatcher, bearerToken, type TokenReviewer } from "./auth";
import type { BreakerStore } from "../../kube/breaker-store";
import type { GrantService } from "../grants/service";
import type { Kube } from "../kube";
import { errorText, type Logger } from "../../kube/log";
import type { Metrics } from "../metrics";
import type { PodCache } from "../pods/cache";
import { podProblem } from "../pods/checks";
import { afterReset } from "../../core/permission/pod-retry";
import { NotThisPodError, revokeRequestSchema, type Revoker } from "../grants/revoker";
import type { GrantLedger } from "../grants/ledger";
import { initVerdict, parseGrantStatus } from "../../core/permission/grant-status";

export interface HttpDeps {
  kube: Kube;
  reviewer: TokenReviewer;
  audience: string;
  /** This replica's name, as it appears in pod claims. */
  replica: string;
  longPollMaxMs: number;
  grants: GrantService;
  revoker: Revoker;
  ledger: GrantLedger;
  store: BreakerStore;
  pods: PodCache;
  metrics: Metrics;
  log: Logger;
}

const grantRequestSchema = z.object({
  namespace: z.string().min(1),
  pod: z.string().min(1),
  uid: z.string().min(1),
  ip: z.string().min(1).optional(),
});

const resetRequestSchema = z.object({ namespace: z.string().min(1), pod: z.string().min(1) });

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly definitive = true,
  ) {
    super(message);
  }
}

function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) throw new HttpError(400, formatErrors(issueErrors("", parsed.error.issues)));
  return parsed.data;
}

async function readPod(pods: PodCache, namespace: string, name: string): Promise<V1Pod> {
  const pod = pods.get(namespace, name) ?? (await pods.fresh(namespace, name));
  if (!pod) throw new HttpError(404, `pod ${namespace}/${name} does not exist`);
  return pod;
}

/** The pod, if the caller's token is bound to it and it may be granted now. */
async function callerPod(
  deps: HttpDeps,
  req: Request,
  asked: { namespace: string; pod: string; uid: string; ip?: string },
): Promise<V1Pod> {
  const auth = await authenticatePod(
    deps.reviewer,
    bearerToken(req.headers.authorization),
    deps.audience,
    {
      namespace: asked.namespace,
      name: asked.pod,
      uid: asked.uid,
    },
  );
  if (!auth.ok) throw new HttpError(auth.status, auth.reason);
  let pod = await readPod(deps.pods, asked.namespace, asked.pod);
  let problem = podProblem(pod, asked);
  // The cache may lag behind a fresh IP or UID: look again before saying no.
  if (problem) {
    const fresh = await deps.pods.fresh(asked.namespace, asked.pod);
    if (!fresh) throw new HttpError(404, `pod ${asked.namespace}/${asked.pod} does not exist`);
    pod = fresh;
    problem = podProblem(pod, asked);
  }
  if (problem) throw new HttpError(problem.status, problem.reason, problem.definitive);
  return pod;
}

function answer(pod: V1Pod, uid: string): { verdict: string; reason?: string; status: unknown } {
  const status = parseGrantStatus(pod.metadata?.annotations?.[PERMISSION_STATUS_ANNOTATION]);
  const verdict = initVerdict(status, uid, pod.status?.podIP ?? "");
  return { ...verdict, status: status ?? null };
}

async function startGrant(deps: HttpDeps, req: Request, res: Response): Promise<void> {
  const asked = parseBody(grantRequestSchema, req.body);
  const pod = await callerPod(deps, req, asked);
  await deps.grants.ensure(pod);
  const current = deps.pods.get(asked.namespace, asked.pod) ?? pod;
  res.status(202).json(answer(current, asked.uid));
}

/** The status query: which pod, the revision the caller has seen, how long it may wait. */
function statusQuery(req: Request, maxMs: number) {
  const uid = typeof req.query.uid === "string" ? req.query.uid : "";
  if (!uid) throw new HttpError(400, "uid: is required (query parameter)");
  const since = Number(req.query.rev ?? -1);
  const waitMs = Math.min(Number(req.query.wait ?? 0) * 1000 || 0, maxMs);
  return {
    namespace: String(req.params.namespace),
    name: String(req.params.pod),
    uid,
    since: Number.isFinite(since) ? since : -1,
    waitMs,
  };
}

async function waitForStatus(deps: HttpDeps, req: Request, res: Response): Promise<void> {
  const { namespace, name, uid, since, waitMs } = statusQuery(req, deps.longPollMaxMs);
  await callerPod(deps, req, { namespace, pod: name, uid });
  const closed = new AbortController();
  res.on("close", () => closed.abort());
  const deadline = Date.now() + waitMs;
  for (;;) {
    const pod = await readPod(deps.pods, namespace, name);
    await deps.grants.ensure(pod);
    const current = deps.pods.get(namespace, name) ?? pod;
    const result = answer(current, uid);
    const rev = (result.status as { rev?: number } | null)?.rev ?? -1;
    const remaining = deadline - Date.now();
    if (result.verdict !== "wait" || rev > since || remaining <= 0 || closed.signal.aborted) {
      res.json(result);
      return;
    }
    await deps.pods.changed(namespace, name, remaining, closed.signal);
  }
}

async function revoke(deps: HttpDeps, req: Request, res: Response): Promise<void> {
  const request = parseBody(revokeRequestSchema, req.body);
  const auth = await authorizePodPatcher(
    deps.kube,
    deps.reviewer,
    bearerToken(req.headers.authorization),
    {
      namespace: request.namespace,
      name: request.pod,
    },
  );
  if (!auth.ok) throw new HttpError(auth.status, auth.reason);
  // The UID must be the named pod's (its live copy, or its ledger says so): a caller who may patch
  // its own pod must not abort, clear or revoke another pod's grants by sending that pod's UID.
  if (!(await isPodsUid(deps, request))) {
    throw new HttpError(404, `pod ${request.namespace}/${request.pod} has no UID ${request.uid}`);
  }
  // Our own attempt for this pod stops first, so nothing is granted after the revocation; another
  // replica's stops when it sees the deletion, and releases its claim: until then, come back.
  await deps.grants.abort(request.uid);
  const holder = await otherReplicaGranting(deps, request);
  if (holder) {
    res.status(503).json({ error: `replica ${holder} is still granting to this pod; retry` });
    return;
  }
  const result = await deps.revoker.revoke(request).catch((error: unknown) => {
    if (error instanceof NotThisPodError) throw new HttpError(404, error.message);
    throw error;
  });
  await deps.store
    .update(request.uid, () => afterReset())
    .catch(error =>
      deps.log.warn("could not remove the pod's breaker entry; the prune sweep will", {
        uid: request.uid,
        err: errorText(error),
      }),
    );
  if (result.failed.length > 0) {
    res.status(503).json({ error: "some revocations failed; retry", ...result });
    return;
  }
  if (result.ips.length === 0) {
    res.status(404).json({ error: "the ledger holds nothing for this pod", ...result });
    return;
  }
  res.json(result);
}

/** Whether `uid` is the named pod's: its current UID, or its ledger names it. */
async function isPodsUid(
  deps: HttpDeps,
  request: { namespace: string; pod: string; uid: string },
): Promise<boolean> {
  const pod = await deps.pods.fresh(request.namespace, request.pod);
  if (pod?.metadata?.uid === request.uid) return true;
  const owner = (await deps.ledger.read(request.uid))?.spec.pod;
  return owner?.namespace === request.namespace && owner.name === request.pod;
}

/** The replica other than this one that holds a live claim on the (still existing) pod. */
async function otherReplicaGranting(
  deps: HttpDeps,
  request: { namespace: string; pod: string; uid: string },
): Promise<string | undefined> {
  const pod = await deps.pods.fresh(request.namespace, request.pod);
  if (!pod || pod.metadata?.uid !== request.uid) return undefined;
  const claim = pod.metadata?.annotations?.[PERMISSION_CLAIM_ANNOTATION];
  return otherHolder(claim, deps.replica, new Date());
}

async function reset(deps: HttpDeps, req: Request, res: Response): Promise<void> {
  const { namespace, pod: name } = parseBody(resetRequestSchema, req.body);
  const auth = await authorizePodPatcher(
    deps.kube,
    deps.reviewer,
    bearerToken(req.headers.authorization),
    {
      namespace,
      name,
    },
  );
  if (!auth.ok) throw new HttpError(auth.status, auth.reason);
  const pod = await readPod(deps.pods, namespace, name);
  const uid = pod.metadata?.uid ?? "";
  await deps.store.update(uid, () => afterReset());
  deps.log.info("breaker reset", { ns: namespace, name, uid, by: auth.value });
  const fresh = (await deps.pods.fresh(namespace, name)) ?? pod;
  await deps.grants.ensure(fresh);
  res.json({ reset: true, uid });
}

type Handler = (deps: HttpDeps, req: Request, res: Response) => Promise<void>;

export function createApp(deps: HttpDeps): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.use(express.json({ limit: "256kb" }));
  const route = (name: string, handler: Handler) => async (req: Request, res: Response) => {
    try {
      await handler(deps, req, res);
    } catch (error) {
      const known = error instanceof HttpError;
      const status = known ? error.status : 500;
      if (!known) deps.log.error("request failed", { route: name, err: errorText(error) });
      res
        .status(status)
        .json({ error: errorText(error), definitive: known ? error.definitive : false });
    } finally {
      deps.metrics.requests.inc({ route: name, code: String(res.statusCode) });
    }
  };
  app.post("/v1/grants", route("grants", startGrant));
  app.get("/v1/grants/:namespace/:pod", route("status", waitForStatus));
  app.post("/v1/revoke", route("revoke", revoke));
  app.post("/v1/reset", route("reset", reset));
  app.get("/healthz", (_req, res) => void res.json({ ok: true }));
  app.get("/metrics", async (_req, res) => {
    res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });
  return app;
}
