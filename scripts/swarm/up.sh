#!/usr/bin/env bash
# Starts a Docker Swarm of one or two nodes on this machine, for tests: each node is its own
# dockerd in its own network namespace (own data root, exec root, pid file and socket), on a
# bridge with a Docker Distribution registry (Debian's docker-registry) at <subnet>.1:5000.
# Needs root, no internet, and never touches the machine's main dockerd or its data.
#
#   scripts/swarm/up.sh [--name cpsw] [--nodes 1|2] [--subnet 10.77.0] [--registry-auth user:password]
#                       [--allow-new-privileges N]
#
# With --registry-auth the registry wants those credentials (htpasswd). Every node's dockerd runs
# with --no-new-privileges, as README "Deploying" asks, except node N with --allow-new-privileges N
# (to test the report that finds such a node).
#
# Prints the environment as KEY=value lines (also written to /run/<name>/env):
#   SWARM_MANAGER_SOCK, SWARM_WORKER_SOCK (two nodes only), SWARM_MANAGER_ADDR,
#   SWARM_WORKER_ADDR, SWARM_REGISTRY. Tear down with scripts/swarm/down.sh --name <name>.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
name=cpsw nodes=2 subnet=10.77.0 registry_auth= open_node=
while [ $# -gt 0 ]; do
  case "$1" in
    --name) name="$2"; shift 2 ;;
    --nodes) nodes="$2"; shift 2 ;;
    --subnet) subnet="$2"; shift 2 ;;
    --registry-auth) registry_auth="$2"; shift 2 ;;
    --allow-new-privileges) open_node="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ "$name" =~ ^[a-z][a-z0-9]{1,7}$ ]] || { echo "--name: 2-8 of a-z 0-9, starting with a letter" >&2; exit 2; }
[[ "$nodes" =~ ^[12]$ ]] || { echo "--nodes: 1 or 2" >&2; exit 2; }
[ -z "$open_node" ] || [[ "$open_node" =~ ^[12]$ ]] || { echo "--allow-new-privileges: 1 or 2" >&2; exit 2; }
[ -z "$registry_auth" ] || [[ "$registry_auth" =~ ^[a-z0-9]+:[^:[:space:]]{8,}$ ]] || { echo "--registry-auth: user:password (password 8+ characters)" >&2; exit 2; }
[[ "$subnet" =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || { echo "--subnet: three octets, e.g. 10.77.0" >&2; exit 2; }
for tool in dockerd docker docker-registry ip iptables nsenter; do
  command -v "$tool" >/dev/null || { echo "$tool is missing (Debian: docker.io, docker-registry, iproute2, iptables, util-linux)" >&2; exit 1; }
done

# A bcrypt hash at the lowest cost: the registry checks it on every request of a push, and a test
# password needs no strength (caddy hash-password, the last resort, costs 14).
bcrypt_cheap() {
  if command -v htpasswd >/dev/null; then htpasswd -nbB -C 4 x "$1" | cut -d: -f2-
  elif python3 -c 'import crypt' 2>/dev/null; then
    python3 -W ignore -c 'import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))' "$1"
  else caddy hash-password --plaintext "$1"; fi
}

# Whatever a crashed run left behind goes first.
"$here/down.sh" --name "$name" >/dev/null 2>&1 || true

state="/run/$name"
mkdir -p "$state"
bridge="${name}br"
registry="$subnet.1:5000"

ip link add "$bridge" type bridge
ip addr add "$subnet.1/24" dev "$bridge"
ip link set "$bridge" up
# Bridged traffic passes the host's iptables, whose FORWARD policy the main dockerd sets to DROP.
iptables -I FORWARD -i "$bridge" -o "$bridge" -j ACCEPT

cat >"$state/registry.yml" <<YML
version: 0.1
log: { level: warn }
storage:
  filesystem: { rootdirectory: /var/lib/$name-registry }
  delete: { enabled: true }
http: { addr: "$registry" }
YML
if [ -n "$registry_auth" ]; then
  printf '%s:%s\n' "${registry_auth%%:*}" "$(bcrypt_cheap "${registry_auth#*:}")" >"$state/htpasswd"
  printf 'auth:\n  htpasswd: { realm: %s, path: %s }\n' "$name" "$state/htpasswd" >>"$state/registry.yml"
fi
mkdir -p "/var/lib/$name-registry"
setsid docker-registry serve "$state/registry.yml" >"$state/registry.log" 2>&1 </dev/null &
echo $! >"$state/registry.pid"

for n in $(seq 1 "$nodes"); do
  ns="$name$n"
  ip netns add "$ns"
  ip link add "${name}v$n" type veth peer name "${name}p$n"
  ip link set "${name}p$n" netns "$ns"
  ip link set "${name}v$n" master "$bridge"
  ip link set "${name}v$n" up
  ip netns exec "$ns" ip addr add "$subnet.1$n/24" dev "${name}p$n"
  ip netns exec "$ns" ip link set "${name}p$n" up
  ip netns exec "$ns" ip link set lo up
  ip netns exec "$ns" ip route add default via "$subnet.1"
  mkdir -p "/var/lib/$ns" "$state/$n"
  # Only the network namespace: `ip netns exec` would remount /sys, which dockerd needs as is.
  nnp=--no-new-privileges
  [ "$open_node" != "$n" ] || nnp=
  setsid nsenter --net="/var/run/netns/$ns" dockerd \
    --data-root "/var/lib/$ns" --exec-root "$state/$n" --pidfile "$state/dockerd$n.pid" \
    -H "unix://$state/docker$n.sock" --insecure-registry "$registry" $nnp \
    --cgroup-parent "/$ns" --log-level warn >"$state/dockerd$n.log" 2>&1 </dev/null &
done

wait_for() {
  local what="$1"; shift
  for _ in $(seq 150); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "$what did not come up in 30 s" >&2; return 1
}
for n in $(seq 1 "$nodes"); do
  wait_for "dockerd $n" docker -H "unix://$state/docker$n.sock" version || { tail -n 30 "$state/dockerd$n.log" >&2; exit 1; }
done
wait_for "the registry" sh -c "curl -sS -o /dev/null -w '%{http_code}' http://$registry/v2/ | grep -qE '200|401'"

d1="docker -H unix://$state/docker1.sock"
$d1 swarm init --advertise-addr "$subnet.11" >/dev/null
if [ "$nodes" = 2 ]; then
  docker -H "unix://$state/docker2.sock" swarm join --token "$($d1 swarm join-token -q worker)" "$subnet.11:2377" >/dev/null
  wait_for "the worker's join" sh -c "[ \"\$($d1 node ls --filter role=worker --format '{{.Status}}')\" = Ready ]"
fi

# Each node's tenant egress rules (README, "Apps on machines of your own"), in its own namespace,
# checked there by a probe container; said on stderr, since stdout is the environment.
for n in $(seq 1 "$nodes"); do
  DOCKER_HOST="unix://$state/docker$n.sock" nsenter --net="/var/run/netns/$name$n" "$here/../egress-firewall.sh" --swarm >&2
done

{
  echo "SWARM_MANAGER_SOCK=$state/docker1.sock"
  echo "SWARM_MANAGER_ADDR=$subnet.11"
  if [ "$nodes" = 2 ]; then
    echo "SWARM_WORKER_SOCK=$state/docker2.sock"
    echo "SWARM_WORKER_ADDR=$subnet.12"
  fi
  echo "SWARM_REGISTRY=$registry"
} | tee "$state/env"
