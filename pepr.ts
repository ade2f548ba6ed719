import https from "node:https";
import { PeprModule } from "pepr";
import cfg from "./package.json";
import { EdgeHealth, IngressGuard, PodPermission } from "./capabilities";
import { outlastClientIdle } from "./capabilities/pepr/keep-alive";
import { linearClones } from "./capabilities/pepr/linear-clone";

// Before Pepr makes its server: the API server, not Node, must close idle webhook connections.
outlastClientIdle(https);
// Before the first review: Pepr's copies of each review in linear time, not quadratic.
linearClones();

const module = new PeprModule(cfg, [IngressGuard, PodPermission, EdgeHealth], { deferStart: true });

// Pepr always listens on 3000; the local stack and the tests run several modules side by side.
if (process.env.PEPR_MODE !== "build") module.start(Number(process.env.BULWARK_PEPR_PORT ?? 3000));
