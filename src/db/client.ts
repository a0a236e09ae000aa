import { drizzle } from "drizzle-orm/d1";
import { schema } from "./schema";

/**
 * One drizzle instance per D1 binding for the isolate's life: building one walks the whole schema
 * (relations included), which cost more than many a query it then sends.
 */
const instances = new WeakMap<D1Database, ReturnType<typeof build>>();

const build = (db: D1Database) => drizzle(db, { schema });

/** The D1 records through drizzle. */
export function database(env: Env) {
  let instance = instances.get(env.DB);
  if (!instance) {
    instance = build(env.DB);
    instances.set(env.DB, instance);
  }
  return instance;
}
export type Database = ReturnType<typeof database>;
