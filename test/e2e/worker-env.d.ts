/**
 * The Worker's `Env` as the Node-side type check sees it: a few e2e tests call Worker modules
 * directly (the fetch-and-build step), whose config reader names the Worker's `Env` type, which
 * `wrangler types` generates for the Worker's own compilation only.
 */
interface Env {}
