#!/usr/bin/env bash
# Keeps tenant code (app instances and build steps) away from the host and private networks, with
# iptables rules on the machine that runs the engine. Tenant networks' bridges are all named `cpa-…`
# (src/runtime/tenant-network.ts); with --swarm, a swarm node's gateway bridge (docker_gwbridge,
# the way out of every overlay task) is matched as well. Nothing else is touched: the engine's
# default bridge and other networks keep their traffic as it is.
#
#   scripts/egress-firewall.sh [--swarm] [--remove] [--no-check]
#
# Rules (idempotent: each run rebuilds its two chains and adds its jumps once):
#   INPUT, from a tenant bridge: only replies to connections the host made; nothing new reaches the
#     host itself on any of its addresses (the bridge gateway, the engine's port, a registry, ...).
#   DOCKER-USER (forwarded traffic), from a tenant bridge: no new connection to private, loopback,
#     link-local (cloud metadata), shared (100.64/10), reserved or multicast ranges, nor to the
#     networks the host is directly attached to; the internet stays reachable.
#   EGRESS_ALLOW (comma-separated IPv4 CIDRs, e.g. 10.20.0.0/16): ranges that stay reachable anyway.
# IPv6 is not enabled on tenant networks, so they have no IPv6 path to filter.
#
# Then the rules are checked by their effect (unless --no-check): a probe container on the build
# network (bridge cpa-build, created if missing) tries to connect to the host through its gateway;
# "blocked" (no answer at all) is printed, or the script fails saying the host answered. The probe
# image, control-plane/egress-probe:1 (busybox FROM scratch), is built from /bin/busybox when the
# engine lacks it; the operator's report (GET /admin/api/runtime) runs the same probe. The engine is
# the docker CLI's (DOCKER_HOST to choose another, as scripts/swarm/up.sh does for its nodes).
# Needs root, iptables and, for the check, the docker CLI.
set -euo pipefail
swarm=0 remove=0 check=1
while [ $# -gt 0 ]; do
  case "$1" in
    --swarm) swarm=1; shift ;;
    --remove) remove=1; shift ;;
    --no-check) check=0; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
command -v iptables >/dev/null || { echo "iptables is missing (Debian: iptables)" >&2; exit 1; }

cidr='^([0-9]{1,3}\.){3}[0-9]{1,3}/([0-9]|[12][0-9]|3[0-2])$'
allow=()
IFS=',' read -r -a items <<<"${EGRESS_ALLOW:-}"
for item in "${items[@]}"; do
  item="${item//[[:space:]]/}"
  [ -n "$item" ] || continue
  [[ "$item" =~ $cidr ]] || { echo "EGRESS_ALLOW must be comma-separated IPv4 ranges such as 10.20.0.0/16, got \"$item\"" >&2; exit 2; }
  allow+=("$item")
done

# Where a tenant's packets enter the host: tenant bridges, and on a swarm node the gateway bridge.
ins=(cpa-+)
[ "$swarm" = 0 ] || ins+=(docker_gwbridge)

blocked=(0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.0.0.0/24
  192.168.0.0/16 198.18.0.0/15 224.0.0.0/4 240.0.0.0/4)
# The networks this host sits on (its neighbours: other machines, a registry, the engine's peers).
while read -r net; do blocked+=("$net"); done < <(ip -4 -o route show scope link 2>/dev/null | awk '$1 ~ /\// && $3 !~ /^(cpa-|docker|br-|veth)/ {print $1}')

jump() { # chain, rule...: add the rule once, first in its chain
  local chain="$1"; shift
  iptables -C "$chain" "$@" 2>/dev/null || iptables -I "$chain" 1 "$@"
}
unjump() {
  local chain="$1"; shift
  while iptables -C "$chain" "$@" 2>/dev/null; do iptables -D "$chain" "$@"; done
}

if [ "$remove" = 1 ]; then
  for i in cpa-+ docker_gwbridge; do
    unjump INPUT -i "$i" -j CP-TENANT-IN
    iptables -L DOCKER-USER -n >/dev/null 2>&1 && unjump DOCKER-USER -i "$i" -j CP-TENANT-OUT
  done
  for chain in CP-TENANT-IN CP-TENANT-OUT; do iptables -F "$chain" 2>/dev/null && iptables -X "$chain" || true; done
  echo "Tenant egress rules removed."
  exit 0
fi

# DOCKER-USER exists once dockerd has started; made here if not, dockerd keeps what it holds.
iptables -N DOCKER-USER 2>/dev/null || true
iptables -C FORWARD -j DOCKER-USER 2>/dev/null || iptables -I FORWARD 1 -j DOCKER-USER

iptables -N CP-TENANT-IN 2>/dev/null || iptables -F CP-TENANT-IN
iptables -A CP-TENANT-IN -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN
iptables -A CP-TENANT-IN -j DROP

iptables -N CP-TENANT-OUT 2>/dev/null || iptables -F CP-TENANT-OUT
iptables -A CP-TENANT-OUT -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN
for net in "${allow[@]}"; do iptables -A CP-TENANT-OUT -d "$net" -j RETURN; done
for net in "${blocked[@]}"; do iptables -A CP-TENANT-OUT -d "$net" -j DROP; done
iptables -A CP-TENANT-OUT -j RETURN

for i in "${ins[@]}"; do
  jump INPUT -i "$i" -j CP-TENANT-IN
  jump DOCKER-USER -i "$i" -j CP-TENANT-OUT
done
echo "Tenant egress rules in force on ${ins[*]}: nothing new to this host; no private, link-local or local-network range${allow[*]:+ except ${allow[*]}}."

[ "$check" = 1 ] || exit 0
probe_image=control-plane/egress-probe:1
if ! docker image inspect "$probe_image" >/dev/null 2>&1; then
  [ -x /bin/busybox ] || { echo "No probe image $probe_image and no /bin/busybox to build it from: the rules were not checked." >&2; exit 1; }
  context=$(mktemp -d)
  cp /bin/busybox "$context/busybox"
  printf 'FROM scratch\nCOPY busybox /bin/busybox\nENTRYPOINT ["/bin/busybox"]\n' >"$context/Dockerfile"
  DOCKER_BUILDKIT=0 docker build -q -t "$probe_image" --label control-plane.probe=egress "$context" >/dev/null 2>&1
  rm -rf "$context"
fi
docker network inspect control-plane-build >/dev/null 2>&1 ||
  docker network create -o com.docker.network.bridge.name=cpa-build control-plane-build >/dev/null
gateway=$(docker network inspect -f '{{range .IPAM.Config}}{{.Gateway}}{{end}}' control-plane-build)
# Any port will do: a host that lets the packet in answers (connects or refuses), a dropped one never does.
answer=$(docker run --rm --network control-plane-build "$probe_image" nc -w 2 "$gateway" 2375 </dev/null 2>&1 || true)
case "$answer" in
  *"timed out"*) echo "Checked: a probe container on a tenant network got no answer from the host at $gateway (blocked)." ;;
  *) echo "The host at $gateway answered a probe container on a tenant network ($answer): the rules are not in force." >&2; exit 1 ;;
esac
