#!/bin/sh
# Open MPI's plm_rsh_agent for scripts/two_hosts.sh: called as
# `netns-agent.sh HOST COMMAND...`, it runs COMMAND inside the network
# namespace HOST with a hostname of its own (Open MPI's shared-memory
# transport tells hosts apart by their names), as ssh would on a real host.
host=$1
shift
exec ip netns exec "$host" unshare --uts sh -c "hostname $host; $*"
