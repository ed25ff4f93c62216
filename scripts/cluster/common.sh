# Shared by scripts/cluster/*: the names, addresses and state directory of one emulated cluster.
# Sourced; every name derives from STRATA_CLUSTER_PREFIX so that two clusters (a user's and the
# tests') never share a namespace, link, address or /etc/hosts line.
#
#   STRATA_CLUSTER_PREFIX  host name prefix, 2-4 lower-case letters (default stn): hosts stn1..stnN
#   STRATA_CLUSTER_SUBNET  first three octets of the /24 (default 10.97.31): the bridge is .1,
#                          host i is .(10+i)
#   STRATA_CLUSTER_DIR     state directory: hostfile, env, config (default /tmp/strata-cluster-PREFIX)
prefix=${STRATA_CLUSTER_PREFIX:-stn}
subnet=${STRATA_CLUSTER_SUBNET:-10.97.31}
state_dir=${STRATA_CLUSTER_DIR:-/tmp/strata-cluster-$prefix}
cluster_scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bridge=br-$prefix
hosts_marker="# strata-cluster $prefix"

cluster_die() {
  echo "$(basename "$0"): error: $*" >&2
  exit 1
}
cluster_log() { echo "$(basename "$0"): $*" >&2; }

[[ $prefix =~ ^[a-z]{2,4}$ ]] || cluster_die "STRATA_CLUSTER_PREFIX '$prefix' must be 2-4 lower-case letters"
[[ $subnet =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] ||
  cluster_die "STRATA_CLUSTER_SUBNET '$subnet' must be three octets, e.g. 10.97.31"

host_name() { echo "$prefix$1"; }        # host_name I -> stn1
host_addr() { echo "$subnet.$((10 + $1))"; }  # host_addr I -> 10.97.31.11
host_link() { echo "v$prefix$1"; }       # host_link I -> vstn1 (root side; eth0 inside)

# host_index HOST -> I, for a name (stn3) or an address (10.97.31.13) of this cluster.
host_index() {
  case $1 in
    "$prefix"[0-9]*) [[ ${1#"$prefix"} =~ ^[0-9]+$ ]] && echo "${1#"$prefix"}" ;;
    "$subnet".*) local last=${1##*.}
      [[ $last =~ ^[0-9]+$ ]] && [ "$last" -gt 10 ] && echo $((last - 10)) ;;
    *) return 1 ;;
  esac
}

# The namespaces of this prefix that exist now (stn1 stn2 ...), whatever N was.
existing_hosts() {
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${prefix}[0-9]+$" | sort -V || true
}

# tc rate of a RATE argument: a number is Gbit/s (0.1 = 100 Mbit/s), or a tc rate with its unit
# (kbit, mbit, gbit). Prints e.g. "100000kbit".
tc_rate() {
  if [[ $1 =~ ^[0-9]*\.?[0-9]+$ ]]; then
    awk -v g="$1" 'BEGIN { k = int(g * 1e6 + 0.5); if (k < 8) exit 1; printf "%dkbit\n", k }' ||
      cluster_die "rate '$1' Gbit/s is below 8 kbit/s"
  elif [[ $1 =~ ^[0-9]+(kbit|mbit|gbit)$ ]]; then
    echo "$1"
  else
    cluster_die "rate '$1': give Gbit/s as a number (10, 0.1) or a tc rate such as 100mbit"
  fi
}

# Bytes per second of a tc rate such as 100000kbit.
rate_bytes() {
  awk -v r="$1" 'BEGIN { n = r + 0; u = substr(r, length(n "") + 1)
    m = (u == "kbit") ? 1e3 : (u == "mbit") ? 1e6 : 1e9; printf "%d\n", n * m / 8 }'
}

# shape_link LINK RATE|off [LATENCY_US]: one qdisc on the root side of a host's link, shaping the
# traffic into that host (tbf; netem when a latency is asked for).
shape_link() {
  local link=$1 rate=$2 latency=${3:-0} burst
  tc qdisc del dev "$link" root 2>/dev/null || true
  if [ "$latency" != 0 ]; then
    if [ "$rate" = off ]; then
      tc qdisc add dev "$link" root netem delay "${latency}us" limit 100000
    else
      tc qdisc add dev "$link" root netem delay "${latency}us" rate "$(tc_rate "$rate")" limit 100000
    fi
    return
  fi
  [ "$rate" = off ] && return 0
  rate=$(tc_rate "$rate")
  # Burst: 1 ms at the rate (1.25 MB at 10 Gbit/s, as in PLATFORM.md section 10), at least
  # 64 KiB (one TSO segment) so that slow links still pass whole segments.
  burst=$(($(rate_bytes "$rate") / 1000))
  [ "$burst" -ge 65536 ] || burst=65536
  tc qdisc add dev "$link" root tbf rate "$rate" burst "$burst" latency "${STRATA_CLUSTER_QUEUE_MS:-100}ms"
}
