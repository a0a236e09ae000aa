import type { Child } from "hono/jsx";
import type { AppView } from "../../apps/views";
import { AppStatusBadge } from "./app-components";
import { liveState } from "./deploy-panel";
import type { Flash } from "./flash";
import { Layout, type Viewer } from "./layout";

/**
 * The app's pages as tabs, each with its own URL under /console/apps/{id}: plain links (they work
 * without script), the one shown marked aria-current="page".
 */
export const APP_TABS = [
  { id: "overview", label: "Overview", path: "" },
  { id: "metrics", label: "Metrics", path: "/metrics" },
  { id: "logs", label: "Logs", path: "/logs" },
  { id: "deploys", label: "Deploys", path: "/deploys" },
  { id: "environment", label: "Environment", path: "/environment" },
  { id: "domains", label: "Domains", path: "/domains" },
  { id: "settings", label: "Settings", path: "/settings" },
] as const;

export type AppTab = (typeof APP_TABS)[number]["id"];

/** The URL of one of an app's tabs. */
export function tabPath(appId: string, tab: AppTab): string {
  return `/console/apps/${appId}${APP_TABS.find((t) => t.id === tab)!.path}`;
}

/** The tab bar. Each link has an id, so the console script can give focus back after a redraw. */
export function AppTabs(props: { appId: string; current: AppTab }) {
  return (
    <nav aria-label="App" class="tabs">
      {APP_TABS.map((tab) => (
        <a id={`tab-${tab.id}`} href={tabPath(props.appId, tab.id)} aria-current={tab.id === props.current ? "page" : undefined}>
          {tab.label}
        </a>
      ))}
    </nav>
  );
}

interface AppFrameProps {
  viewer: Viewer;
  app: AppView;
  tab: AppTab;
  flash?: Flash | null;
  /** Drawn again by the console script while a deploy runs (status, controls, deploys): no forms that take typing. */
  live?: Child;
  /** The rest of the tab, left alone by the redraw. */
  children?: Child;
}

/**
 * Every tab of an app: the crumbs, the name with its status badge and the tab bar, inside the part
 * the console script redraws when a deploy's state changes (#app-live), then the tab itself.
 */
export function AppFrame(props: AppFrameProps) {
  const { app, tab } = props;
  const label = APP_TABS.find((t) => t.id === tab)!.label;
  return (
    <Layout title={tab === "overview" ? app.name : `${label} · ${app.name}`} viewer={props.viewer} section="apps" flash={props.flash}>
      <div id="app-live" data-app-src={`/console/api/apps/${app.id}`} data-app-state={liveState(app)} data-deploying={app.deploy_in_progress ? "true" : "false"}>
        <p class="crumbs">
          <a href="/console/apps">Apps</a> / {app.name}
        </p>
        <div class="title-row">
          <h1>{app.name}</h1>
          <AppStatusBadge status={app.status} />
        </div>
        <AppTabs appId={app.id} current={tab} />
        {props.live}
      </div>
      <p class="visually-hidden" role="status" data-app-announce=""></p>
      {props.children}
    </Layout>
  );
}
