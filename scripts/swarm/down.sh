#!/usr/bin/env bash
# Tears down what scripts/swarm/up.sh started, also after a crash: every step is safe to repeat
# and skipped when there is nothing to undo. Touches only this swarm's own pieces.
#
#   scripts/swarm/down.sh [--name cpsw]
set -uo pipefail
name=cpsw
while [ $# -gt 0 ]; do
  case "$1" in
    --name) name="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ "$name" =~ ^[a-z][a-z0-9]{1,7}$ ]] || { echo "--name: 2-8 of a-z 0-9, starting with a letter" >&2; exit 2; }
state="/run/$name"

# Stops a process by its pid file, if that pid is still the program we started.
stop_pid() {
  local file="$1" program="$2" pid
  [ -f "$file" ] || return 0
  pid="$(cat "$file")"
  if [ -n "$pid" ] && grep -qa "$program" "/proc/$pid/cmdline" 2>/dev/null; then
    kill "$pid" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  fi
  rm -f "$file"
}

for n in 1 2; do
  # dockerd stops its containers and its own containerd on SIGTERM.
  stop_pid "$state/dockerd$n.pid" dockerd
done
stop_pid "$state/registry.pid" docker-registry

for n in 1 2; do
  ns="$name$n"
  # Leftover mounts of a killed daemon (overlay layers, netns files) would keep the data root busy.
  for dir in "/var/lib/$ns" "$state/$n"; do
    grep -o " $dir/[^ ]*" /proc/self/mounts 2>/dev/null | sort -r | while read -r mnt; do umount -l "$mnt" 2>/dev/null; done
  done
  ip netns del "$ns" 2>/dev/null
  ip link del "${name}v$n" 2>/dev/null
  rm -rf "/var/lib/$ns"
done
ip link del "${name}br" 2>/dev/null
while iptables -D FORWARD -i "${name}br" -o "${name}br" -j ACCEPT 2>/dev/null; do :; done
rm -rf "/var/lib/$name-registry" "$state"
exit 0
