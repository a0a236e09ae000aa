/**
 * `npm start`'s tenant egress rules: runs scripts/egress-firewall.sh (iptables rules that keep app
 * instances and build steps away from this machine and private ranges, then a probe container
 * checks them by effect) and gives the banner one line saying what is in force.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const SCRIPT = new URL("../egress-firewall.sh", import.meta.url).pathname;

/** One banner line: the rules in force and the probe's verdict, or why there are none. */
export async function installEgressRules(): Promise<string> {
  if (process.getuid?.() !== 0) {
    return `Tenant egress: no rules installed (they need root): apps and builds can reach this machine's services. Run sudo ${SCRIPT} once.`;
  }
  try {
    const { stdout } = await promisify(execFile)(SCRIPT, [], { timeout: 120_000 });
    return `Tenant egress: ${stdout.trim().split("\n").join(" ")}`;
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    return `Tenant egress: NOT in force (${(stderr || message).trim()}): apps and builds may reach this machine's services.`;
  }
}
