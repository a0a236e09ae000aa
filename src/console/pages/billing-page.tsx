import { Hono } from "hono";
import type { LedgerEntryView } from "../../billing/ledger";
import { formatDa } from "../../billing/rules";
import type { AppEnv } from "../../http/context";
import { DateTime, EmptyState } from "./components";
import { takeFlash } from "./flash";
import { walletOf } from "../actions/wallet";
import { Layout, type Viewer, loadViewer, render } from "./layout";

/** A signed amount as the ledger shows it: credits with +, charges with the minus sign. */
const signed = (n: number) => (n > 0 ? `+${formatDa(n)}` : `−${formatDa(-n)}`);

function Ledger(props: { entries: LedgerEntryView[]; locale: string }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Date</th>
            <th scope="col">Description</th>
            <th scope="col">App</th>
            <th scope="col">Period</th>
            <th scope="col" class="num">
              Amount
            </th>
          </tr>
        </thead>
        <tbody>
          {props.entries.map((e) => (
            <tr data-entry-kind={e.kind}>
              <td>
                <DateTime iso={e.at} locale={props.locale} />
              </td>
              <td>{e.description}</td>
              <td>{e.app_name ?? <span class="muted">—</span>}</td>
              <td>
                {e.period_start && e.period_end ? (
                  <>
                    <DateTime iso={e.period_start} locale={props.locale} /> to <DateTime iso={e.period_end} locale={props.locale} />
                  </>
                ) : (
                  <span class="muted">—</span>
                )}
              </td>
              <td class={e.amount < 0 ? "num charge" : "num credit"}>{signed(e.amount)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The Billing page: the wallet's balance, the plans' prices and every ledger entry, newest first. */
export function BillingPage(props: { viewer: Viewer; balance: number; entries: LedgerEntryView[] }) {
  return (
    <Layout title="Billing" viewer={props.viewer} section="billing">
      <h1>Billing</h1>
      <section class="card" aria-labelledby="wallet-heading">
        <h2 id="wallet-heading">Wallet</h2>
        <p class="balance" data-balance={String(props.balance)}>
          <strong>{formatDa(props.balance)}</strong>
        </p>
        <p class="hint">
          An app is charged its plan's monthly price at its first deploy, and again at the end of each paid month while it runs.
          Stopped apps are not charged; their paid month ends later by the time stopped. Credit is added by the service's operator.
        </p>
      </section>
      <section class="card" aria-labelledby="ledger-heading">
        <h2 id="ledger-heading">Ledger</h2>
        {props.entries.length === 0 ? (
          <EmptyState title="No entries yet">Credits and charges appear here, newest first.</EmptyState>
        ) : (
          <Ledger entries={props.entries} locale={props.viewer.locale} />
        )}
      </section>
    </Layout>
  );
}

export const billingPages = new Hono<AppEnv>().get("/", async (c) => {
  await takeFlash(c);
  const { balance, entries } = await walletOf(c);
  return render(c, <BillingPage viewer={await loadViewer(c)} balance={balance} entries={entries} />);
});
