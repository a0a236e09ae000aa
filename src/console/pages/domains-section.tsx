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

function DomainItem(props: { appId: string; domain: DomainView; csrfToken: string; locale: string; provider: string }) {
  const { domain, appId } = props;
  const id = slug(domain.hostname);
  const base = `/console/apps/${appId}/domains/${encodeURIComponent(domain.hostname)}`;
  const record = domain.dns_record;
  const proof = domain.verification;
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
          <dd class="copy-row">
            <input id={`dns-target-${id}`} type="text" readonly value={record.target} aria-label={`DNS record target for ${domain.hostname}`} spellcheck={false} />
            <button type="button" class="secondary" data-copy={`dns-target-${id}`} hidden>
              Copy
            </button>
          </dd>
        </div>
      </dl>
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
          <dd class="copy-row">
            <input id={`dns-txt-name-${id}`} type="text" readonly value={proof.name} aria-label={`TXT record name for ${domain.hostname}`} spellcheck={false} />
            <button type="button" class="secondary" data-copy={`dns-txt-name-${id}`} hidden>
              Copy
            </button>
          </dd>
        </div>
        <div>
          <dt>Value</dt>
          <dd class="copy-row">
            <input id={`dns-txt-value-${id}`} type="text" readonly value={proof.value} aria-label={`TXT record value for ${domain.hostname}`} spellcheck={false} />
            <button type="button" class="secondary" data-copy={`dns-txt-value-${id}`} hidden>
              Copy
            </button>
          </dd>
        </div>
      </dl>
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
