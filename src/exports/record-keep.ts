/**
 * How long (ms of real time) an isolate keeps the export record a download link's poll read
 * (src/exports/store.ts): another isolate's write to the record shows within this long. On its
 * own, free of the Worker's types, for the scripts that write a record behind the Worker's back.
 */
export const RECORD_KEEP_MS = 1000;
