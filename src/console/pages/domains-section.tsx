import type { DomainView } from "../../domains/store";
import { Csrf, DateTime, EmptyState, FieldError } from "./components";

/**
 * The app page's `Custom domains` section (issue 15): the add form, and per domain its badge
 * (docs/domains.md, rule 2: `Pending DNS`, `Verifying…`, `Active`, `Error`), the reason of an `Error`, the DNS
 * record to create with a copy button, the last and next check (a countdown that refreshes the
 * section with the console script, a Refresh link without it), whether HTTPS is served,
 * `Verify now`, and `Remove` behind a confirmation page.
 */

const BADGE_CLASS: Record<DomainView["status"], string> = {
  "Pending DNS": "domain-pending",
  "Verifying…": "domain-verifying",
  Active: "domain-active",
  Error: "domain-error",
};

const slug = (hostname: string) => hostname.replace(/[^a-z0-9]/g, "-");

function HttpsState(props: { domain: DomainView; provider: string }) {
  const { domain } = props;
  if (domain.https) return <span>HTTPS served</span>;
  if (domain.status !== "Active") return <span class="muted">not yet</span>;
  return props.provider === "local" ? <span class="muted">HTTP only (local hostname provider)</span> : <span class="muted">HTTP; certificate on its way</span>;
}

/** A read-only value with its Copy button (shown by the console script). */
function CopyField(props: { id: string; value: string; label: string }) {
  return (
    <dd class="copy-row">
      <input id={props.id} type="text" readonly value={props.value} aria-label={props.label} spellcheck={false} />
      <button type="button" class="secondary" data-copy={props.id} hidden>
        Copy
      </button>
    </dd>
  );
}

/** The record to create at the DNS provider. */
function DnsRecordFacts(props: { domain: DomainView; id: string }) {
  const record = props.domain.dns_record;
  return (
    <dl class="facts dns-record">
      <div>
        <dt>Type</dt>
        <dd>
          <code>{record.type}</code>
        </dd>
      </div>
      <div>
        <dt>Name</dt>
        <dd>
          <code>{record.name}</code>
        </dd>
      </div>
      <div>
        <dt>Target</dt>
        <CopyField id={`dns-target-${props.id}`} value={record.target} label={`DNS record target for ${props.domain.hostname}`} />
      </div>
    </dl>
  );
}

/** The TXT record that proves the claim when the record above is shared by every app. */
function VerificationFacts(props: { domain: DomainView; id: string }) {
  const proof = props.domain.verification;
  return (
    <>
      <p class="hint">
        If the record above is shared by every app (not this app's own hostname), also create this TXT record, which proves the
        hostname is this app's:
      </p>
      <dl class="facts dns-record verification-record">
        <div>
          <dt>Type</dt>
          <dd>
            <code>{proof.type}</code>
          </dd>
        </div>
        <div>
          <dt>Name</dt>
          <CopyField id={`dns-txt-name-${props.id}`} value={proof.name} label={`TXT record name for ${props.domain.hostname}`} />
        </div>
        <div>
          <dt>Value</dt>
          <CopyField id={`dns-txt-value-${props.id}`} value={proof.value} label={`TXT record value for ${props.domain.hostname}`} />
        </div>
      </dl>
    </>
  );
}

/** The last and next check, and whether HTTPS is served. */
function CheckFacts(props: { domain: DomainView; locale: string; provider: string }) {
  const { domain } = props;
  return (
    <dl class="facts">
      <div>
        <dt>Last check</dt>
        <dd>
          <DateTime iso={domain.last_checked_at} locale={props.locale} never="not yet" />
        </dd>
      </div>
      <div>
        <dt>Next check</dt>
        <dd>
          {domain.next_check_at === null ? (
            <span class="muted">none needed</span>
          ) : (
            <span data-countdown={domain.next_check_at}>
              <DateTime iso={domain.next_check_at} locale={props.locale} />
            </span>
          )}
        </dd>
      </div>
      <div>
        <dt>HTTPS</dt>
        <dd>
          <HttpsState domain={domain} provider={props.provider} />
        </dd>
      </div>
    </dl>
  );
}

function DomainItem(props: { appId: string; domain: DomainView; csrfToken: string; locale: string; provider: string }) {
  const { domain, appId } = props;
  const id = slug(domain.hostname);
  const base = `/console/apps/${appId}/domains/${encodeURIComponent(domain.hostname)}`;
  return (
    <li class="domain" data-domain={domain.hostname}>
      <div class="title-row">
        <h3>{domain.hostname}</h3>
        <span class={`badge ${BADGE_CLASS[domain.status]}`} data-domain-status={domain.status}>
          {domain.status}
        </span>
      </div>
      {domain.status === "Error" && domain.reason && (
        <p class="domain-reason" role="status">
          {domain.reason}
        </p>
      )}
      <DnsRecordFacts domain={domain} id={id} />
      <VerificationFacts domain={domain} id={id} />
      <CheckFacts domain={domain} locale={props.locale} provider={props.provider} />
      <div class="controls">
        {domain.status !== "Active" && (
          <form method="post" action={`${base}/verify`}>
            <Csrf token={props.csrfToken} />
            <button type="submit" class="secondary">
              Verify now
            </button>
          </form>
        )}
        <a class="button secondary" href={`${base}/remove`}>
          Remove
        </a>
      </div>
    </li>
  );
}

export interface DomainsSectionProps {
  appId: string;
  domains: DomainView[];
  csrfToken: string;
  locale: string;
  provider: string;
  /** DOMAIN_RECHECK_SECONDS, as the lead sentence says it. */
  recheckSeconds: number;
  /** One line per claim removed for expiry in the last 30 days. */
  expired: string[];
  /** Why the app cannot have custom domains now (plan, not running), shown above the form. */
  blocked: string | null;
  hostname?: string;
  error?: string;
}

export function DomainsSection(props: DomainsSectionProps) {
  const waiting = props.domains.some((d) => d.next_check_at !== null);
  return (
    <>
      <section class="card" id="domains" aria-labelledby="domains-heading">
        <h2 id="domains-heading">Custom domains</h2>
        <p class="lead">Point a hostname you own at this app: add it here, then create the DNS record shown for it. It is checked every {props.recheckSeconds} seconds until the record is found.</p>
        {props.domains.length === 0 ? (
          <EmptyState title="No custom domains">
            <p>Add up to 3 hostnames, such as shop.example.com.</p>
          </EmptyState>
        ) : (
          <ul class="domains">
            {props.domains.map((domain) => (
              <DomainItem appId={props.appId} domain={domain} csrfToken={props.csrfToken} locale={props.locale} provider={props.provider} />
            ))}
          </ul>
        )}
        {props.expired.length > 0 && (
          <ul class="domain-expired">
            {props.expired.map((note) => (
              <li class="hint">{note}</li>
            ))}
          </ul>
        )}
        {waiting && (
          <p class="hint" data-domains-refresh="">
            Checks run on their own. <a href={`/console/apps/${props.appId}/domains`}>Refresh</a> to see the latest.
          </p>
        )}
        {props.blocked && <p class="hint">{props.blocked}</p>}
        <form method="post" action={`/console/apps/${props.appId}/domains`} class="inline-form" novalidate>
          <Csrf token={props.csrfToken} />
          <div class="field">
            <label for="f-hostname">Hostname</label>
            <input
              id="f-hostname"
              name="hostname"
              type="text"
              value={props.hostname ?? ""}
              placeholder="shop.example.com"
              autocomplete="off"
              spellcheck={false}
              autofocus={Boolean(props.error)}
              aria-invalid={props.error ? "true" : undefined}
              aria-describedby={props.error ? "f-hostname-error" : undefined}
            />
            <FieldError id="f-hostname-error" message={props.error} />
          </div>
          <div class="actions">
            <button type="submit">Add domain</button>
          </div>
        </form>
      </section>
      {/* Outside the section, which the console script redraws: a live region must stay in place to be read. */}
      <p class="visually-hidden" role="status" data-domains-announce=""></p>
    </>
  );
}
