/**
 * The console's only script, served from /console/assets/console.js (CSP `script-src 'self'`;
 * bundled by scripts/build-console-script.ts). Every page works without it; it adds local-time
 * dates, copy buttons, live export status, follows a running deploy (status, controls and log) on
 * an app's pages, counts down to each custom domain's next check (redrawing the Custom domains
 * section once a check is due), follows an app's runtime output live (SSE) with its search, and
 * refreshes the metric charts with a readout of the value under the pointer.
 */
import { copyButtons } from "./copy";
import { localDates } from "./dom";
import { liveDomains } from "./domains";
import { envRows } from "./env-rows";
import { liveExports } from "./exports";
import { liveApp } from "./live-app";
import { liveLogs } from "./logs";
import { liveMetrics } from "./metrics";

localDates(document);
copyButtons(document);
liveExports();
liveApp();
liveDomains();
envRows();
liveLogs();
liveMetrics();
