import type { Child } from "hono/jsx";
import type { ExportStatus } from "../../db/schema";
import { formatBytes, formatDateTime, formatUtcExact } from "./format";

/**
 * A moment in the viewer's locale (UTC until the console script turns it into local time), with
 * the exact UTC instant on hover; `never` when there is none.
 */
export function DateTime(props: { iso: string | null; locale: string; never?: string }) {
  if (props.iso === null) return <span class="muted">{props.never ?? "never"}</span>;
  return (
    <time datetime={props.iso} title={formatUtcExact(props.iso)} data-local="">
      {formatDateTime(props.iso, props.locale)}
    </time>
  );
}

/** A byte count for people, with the exact number on hover. */
export function Bytes(props: { bytes: number | null }) {
  if (props.bytes === null) return <span>—</span>;
  return <abbr title={`${props.bytes.toLocaleString("en-US")} bytes`}>{formatBytes(props.bytes)}</abbr>;
}

interface FieldProps {
  name: string;
  label: string;
  type?: "text" | "email" | "password";
  value?: string;
  error?: string;
  hint?: string;
  autocomplete?: string;
  autofocus?: boolean;
  required?: boolean;
  maxlength?: number;
}

/** A labelled input whose error sits right under it and is announced with it. */
export function Field(props: FieldProps) {
  const id = `f-${props.name}`;
  const described = [props.hint ? `${id}-hint` : "", props.error ? `${id}-error` : ""].filter(Boolean).join(" ");
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.type ?? "text"}
        value={props.value ?? ""}
        autocomplete={props.autocomplete}
        autofocus={props.autofocus || Boolean(props.error)}
        required={props.required}
        maxlength={props.maxlength}
        aria-invalid={props.error ? "true" : undefined}
        aria-describedby={described || undefined}
      />
      {props.hint && (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      <FieldError id={`${id}-error`} message={props.error} />
    </div>
  );
}

/** The error line under a field, when there is one. */
export function FieldError(props: { id: string; message?: string }) {
  if (!props.message) return null;
  return (
    <p class="field-error" id={props.id}>
      {props.message}
    </p>
  );
}

/** The hidden CSRF field every console form carries. */
export function Csrf(props: { token: string }) {
  return <input type="hidden" name="_csrf" value={props.token} />;
}

/** What a list shows when it has nothing in it: what it is for and what to do next. */
export function EmptyState(props: { title: string; children: Child }) {
  return (
    <div class="empty">
      <strong>{props.title}</strong>
      {props.children}
    </div>
  );
}

const STATUS_LABEL: Record<ExportStatus, string> = {
  pending: "Pending",
  running: "Running",
  ready: "Ready",
  failed: "Failed",
  expired: "Expired",
};

/** An export's status as a coloured badge. */
export function StatusBadge(props: { status: ExportStatus }) {
  return (
    <span class={`badge ${props.status}`} data-status={props.status}>
      {STATUS_LABEL[props.status]}
    </span>
  );
}
