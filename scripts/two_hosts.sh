#!/usr/bin/env bash
# Two hosts on one machine: two network namespaces joined by a veth pair
# whose link is rate-limited (tc tbf), so that it is the slow link, as
# between real nodes. Open MPI runs over TCP between them and over shared
# memory inside each.
#
#   two_hosts.sh check              can namespaces be made here? (exit 1 and why, if not)
#   two_hosts.sh up [RATE]          make the hosts (RATE for tc, default 1gbit)
#   two_hosts.sh mpirun ARGS...     mpirun started inside the first host, with
#                                   --host H1:2,H2:2 unless ARGS name --host
#   two_hosts.sh down               remove them
#   two_hosts.sh session ARGS...    up, mpirun ARGS..., down (also on failure)
#
# BRAID_HOSTS (default "braid") prefixes the names, so that several setups
# can live at once: hosts $BRAID_HOSTS-h1 and -h2 (10.77.0.1 and .2).
# BRAID_HOSTS_BURST (default 256kb) is the token bucket's burst.
set -euo pipefail
prefix=${BRAID_HOSTS:-braid}
h1=$prefix-h1 h2=$prefix-h2 v1=$prefix-v1 v2=$prefix-v2
subnet=10.77.0.0/24
agent="$(cd "$(dirname "$0")" && pwd)/netns-agent.sh"

if [ ${#v1} -gt 15 ]; then
  echo "two_hosts.sh: BRAID_HOSTS='$prefix' is too long for an interface name" >&2
  exit 1
fi

case "${1:-}" in
check)
  if ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
    echo "two_hosts.sh: needs ip and tc (Debian's iproute2)" >&2
    exit 1
  fi
  probe=$prefix-probe$$
  if ! err=$(ip netns add "$probe" 2>&1); then
    echo "two_hosts.sh: cannot make a network namespace here: $err" >&2
    exit 1
  fi
  ip netns del "$probe"
  ;;
up)
  rate=${2:-1gbit}
  ip netns add "$h1"
  ip netns add "$h2"
  ip link add "$v1" type veth peer name "$v2"
  ip link set "$v1" netns "$h1"
  ip link set "$v2" netns "$h2"
  ip -n "$h1" addr add 10.77.0.1/24 dev "$v1"
  ip -n "$h2" addr add 10.77.0.2/24 dev "$v2"
  for h in "$h1" "$h2"; do ip -n "$h" link set lo up; done
  ip -n "$h1" link set "$v1" up
  ip -n "$h2" link set "$v2" up
  # Both directions are limited; the burst holds a few 64 KiB segments.
  tc -n "$h1" qdisc add dev "$v1" root tbf rate "$rate" burst ${BRAID_HOSTS_BURST:-256kb} latency 100ms
  tc -n "$h2" qdisc add dev "$v2" root tbf rate "$rate" burst ${BRAID_HOSTS_BURST:-256kb} latency 100ms
  echo "two_hosts.sh: $h1 (10.77.0.1) and $h2 (10.77.0.2), linked at $rate"
  ;;
mpirun)
  shift
  hosts=(--host "$h1:2,$h2:2")
  # Each host's daemon sees the whole machine and would bind its first rank
  # to core 0: with one rank per host, both hosts' ranks then share one core
  # (measured: sgemm at half its rate). The hosts' ranks run unbound instead.
  binding=(--bind-to none)
  for arg in "$@"; do
    if [ "$arg" = "--host" ] || [ "$arg" = "-H" ]; then hosts=(); fi
    if [ "$arg" = "--bind-to" ]; then binding=(); fi
  done
  # Quoted once for the shell the agent starts inside the first host.
  cmd=$(printf '%q ' mpirun "${hosts[@]}" "${binding[@]}" --mca plm_rsh_agent "$agent" \
    --mca btl tcp,self,vader --mca btl_tcp_if_include "$subnet" \
    --mca oob_tcp_if_include "$subnet" --mca mpi_yield_when_idle 1 "$@")
  exec "$agent" "$h1" "$cmd"
  ;;
down)
  ip netns del "$h1" 2>/dev/null || true
  ip netns del "$h2" 2>/dev/null || true
  ;;
session)
  shift
  "$0" down
  trap '"$0" down' EXIT
  "$0" up >/dev/null
  "$0" mpirun "$@"
  ;;
*)
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 1
  ;;
esac
