/**
 * The D1 schema, one module per area under ./tables; times are Unix milliseconds (integers)
 * throughout. Everything is exported from here, which is what drizzle (client.ts) and
 * drizzle-kit (drizzle.config.ts) read.
 */
import { accounts, accountTotp, apiTokens, auditLog, passkeyChallenges, passkeys, recoveryCodes, sessions } from "./tables/accounts";
import { appEnvVars, apps, deploys } from "./tables/apps";
import { creditRequests, ledgerEntries } from "./tables/billing";
import { databases, exports, r2Cleanup } from "./tables/databases";
import { customDomains, domainLastOwners, expiredDomainClaims, subdomainHolds } from "./tables/domains";
import { instancePorts, reconcileRuns, retireLedger } from "./tables/instances";
import { notificationChannels, notificationDeliveries, notificationIncidents } from "./tables/notifications";

export type { SealedSecret } from "./sealed-column";
export * from "./tables/accounts";
export * from "./tables/apps";
export * from "./tables/billing";
export * from "./tables/databases";
export * from "./tables/domains";
export * from "./tables/instances";
export * from "./tables/notifications";

export const schema = { accounts, sessions, accountTotp, recoveryCodes, apiTokens, databases, exports, r2Cleanup, apps, deploys, ledgerEntries, appEnvVars, customDomains, subdomainHolds, domainLastOwners, creditRequests, retireLedger, reconcileRuns, passkeys, passkeyChallenges, auditLog, notificationChannels, notificationDeliveries, notificationIncidents };
