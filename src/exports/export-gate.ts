import { DurableObject } from "cloudflare:workers";

/** One per database: the single point where export starts are serialised. */
export class ExportGate extends DurableObject<Env> {}
