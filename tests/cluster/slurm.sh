#!/usr/bin/env bash
# Throwaway single-node Slurm cluster on localhost, for tests/cluster/.
#
# Uses the real daemons from Debian's `slurm-wlm` and `munge` packages; nothing
# here is a scheduler of our own.  All state (munge key and socket, slurm.conf,
# state/spool/log dirs, PID files) lives under one directory DIR, so several
# clusters never share files and `stop DIR` can find exactly what `start DIR`
# launched.  Nothing is written to /etc or /var.
#
# Usage:
#   tests/cluster/slurm.sh install       # apt-get install slurm-wlm munge (root)
#   tests/cluster/slurm.sh start DIR     # start munged, slurmctld, slurmd; wait for node idle
#   tests/cluster/slurm.sh stop DIR      # stop them again (idempotent, never fails)
#   tests/cluster/slurm.sh status DIR    # sinfo/squeue of the cluster in DIR
#
# `start` prints, as its last line, the line a caller must eval/export:
#   export SLURM_CONF=DIR/slurm.conf
# (the same line is also written to DIR/env.sh).
#
# Tunables (environment):
#   SLURM_TEST_START_TIMEOUT  seconds to wait for the node to become idle (60)
#   SLURM_TEST_STOP_TIMEOUT   seconds to wait for each daemon after SIGTERM (15)
#   SLURM_TEST_APT_TIMEOUT    seconds allowed for each apt-get call (900)
#   SLURM_TEST_CTLD_PORT / SLURM_TEST_SLURMD_PORT  first ports to try (6817/6818)
#   SLURM_TEST_MIN_JOB_AGE    MinJobAge in slurm.conf (3600); see comment there.
#   SLURM_TEST_OWNER_PID      the process that owns the cluster (default: the caller); a later `start`
#                             stops a cluster whose owner is gone (see stop_if_stale).

set -uo pipefail

PROG="slurm.sh"
START_TIMEOUT="${SLURM_TEST_START_TIMEOUT:-60}"
STOP_TIMEOUT="${SLURM_TEST_STOP_TIMEOUT:-15}"
APT_TIMEOUT="${SLURM_TEST_APT_TIMEOUT:-900}"
MIN_JOB_AGE="${SLURM_TEST_MIN_JOB_AGE:-3600}"

# Binaries the cluster needs.  sbin is not always on a non-login root PATH.
export PATH="$PATH:/usr/sbin:/sbin"
NEEDED_BINS=(munged munge unmunge slurmctld slurmd sbatch squeue sinfo srun scontrol scancel)

log() { echo "[$PROG] $*" >&2; }
die() { echo "[$PROG] ERROR: $*" >&2; exit 1; }

missing_bins() {
    local b missing=()
    for b in "${NEEDED_BINS[@]}"; do
        command -v "$b" >/dev/null 2>&1 || missing+=("$b")
    done
    echo "${missing[*]:-}"
}

# ---------------------------------------------------------------- install ---
cmd_install() {
    local missing
    missing="$(missing_bins)"
    if [[ -z "$missing" ]]; then
        log "slurm-wlm and munge already installed ($(slurmctld -V 2>/dev/null))."
        return 0
    fi
    log "missing binaries: $missing"
    [[ "$(uname -s)" == "Linux" ]] || die "only Linux is supported (got $(uname -s))."
    [[ "$(id -u)" -eq 0 ]] || die "installing slurm-wlm/munge needs root (apt-get); run as root or install them yourself."
    command -v apt-get >/dev/null 2>&1 || die "apt-get not found: install Slurm (slurmctld, slurmd, client tools) and munge with your package manager."

    export DEBIAN_FRONTEND=noninteractive
    local apt_opts=(-y -qq --no-install-recommends -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
    log "apt-get install slurm-wlm munge ..."
    if ! timeout "$APT_TIMEOUT" apt-get install "${apt_opts[@]}" slurm-wlm munge >/tmp/slurm-sh-apt.log 2>&1; then
        log "install failed (package index may be stale); running apt-get update first ..."
        timeout "$APT_TIMEOUT" apt-get update -qq >>/tmp/slurm-sh-apt.log 2>&1 \
            || { tail -n 20 /tmp/slurm-sh-apt.log >&2; die "apt-get update failed (no network to the Debian mirror?). See /tmp/slurm-sh-apt.log."; }
        timeout "$APT_TIMEOUT" apt-get install "${apt_opts[@]}" slurm-wlm munge >>/tmp/slurm-sh-apt.log 2>&1 \
            || { tail -n 20 /tmp/slurm-sh-apt.log >&2; die "apt-get install slurm-wlm munge failed. See /tmp/slurm-sh-apt.log."; }
    fi
    missing="$(missing_bins)"
    [[ -z "$missing" ]] || die "packages installed but binaries still missing: $missing"
    log "installed $(slurmctld -V 2>/dev/null) and munge $(munged -V 2>/dev/null | head -n1)."
}

# ------------------------------------------------------------- helpers ---
abs_dir() {  # create and canonicalise a directory
    mkdir -p "$1" || die "cannot create $1"
    (cd "$1" && pwd -P)
}

pid_alive() {  # a zombie (exited, not yet reaped by its parent/init) counts as dead
    [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null || return 1
    local st
    st="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)"
    [[ "$st" != "Z" && "$st" != "X" ]]
}

read_pid() {  # read_pid FILE -> prints pid or nothing
    [[ -s "$1" ]] && tr -dc '0-9' <"$1"
}

port_in_use() {  # something accepts TCP connections on 127.0.0.1:$1
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

free_port() {  # free_port START -> first free port >= START
    local p="$1" end=$(($1 + 200))
    while ((p < end)); do
        port_in_use "$p" || { echo "$p"; return 0; }
        p=$((p + 1))
    done
    die "no free TCP port in [$1, $end)"
}

wait_for_file() {  # wait_for_file FILE SECONDS
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        [[ -s "$1" ]] && return 0
        sleep 0.1
    done
    return 1
}

dump_logs() {
    local f
    for f in "$1"/log/*.log; do
        [[ -f "$f" ]] || continue
        echo "----- tail of $f -----" >&2
        tail -n 25 "$f" >&2
    done
}

# Inside a job, the Snakemake jobstep plugin (snakemake-executor-plugin-
# slurm-jobstep 0.6.1) starts the rule with `srun` after deleting every SLURM_*
# variable from the environment except a few job ids -- SLURM_CONF included.
# That srun then looks for the configuration where a real cluster keeps it:
# /etc/slurm/slurm.conf, then /run/slurm/conf/slurm.conf (the configless-mode
# cache), then DNS SRV records.  So we put a symlink to our slurm.conf at the
# second place (tmpfs, not owned by any package) and remove it on stop.
DEFAULT_CONF_LINK="${SLURM_TEST_DEFAULT_CONF_LINK:-/run/slurm/conf/slurm.conf}"

link_default_conf() {  # link_default_conf DIR
    local dir="$1" conf="$1/slurm.conf" link="$DEFAULT_CONF_LINK" target
    [[ "$link" == "none" ]] && return 0
    if [[ -e /etc/slurm/slurm.conf ]]; then
        log "ERROR: /etc/slurm/slurm.conf exists (a real Slurm configuration?); srun inside"
        log "       jobs would read it instead of $conf, because the Snakemake jobstep"
        log "       plugin strips SLURM_CONF.  Move it aside or run this test elsewhere."
        return 1
    fi
    if [[ -L "$link" ]]; then
        target="$(readlink "$link")"
        if [[ "$target" != "$conf" ]] && pid_alive "$(read_pid "$(dirname "$target")/slurmctld.pid")"; then
            if stop_if_stale "$(dirname "$target")"; then
                log "stopped a stale test cluster in $(dirname "$target") (its owner is gone)."
            else
                log "ERROR: $link points to $target, a test cluster that is still running;"
                log "       its owner (pid $(read_pid "$(dirname "$target")/owner.pid")) is alive: stop it first"
                log "       ($PROG stop $(dirname "$target"))."
                return 1
            fi
        fi
        rm -f "$link"
    elif [[ -e "$link" ]]; then
        log "ERROR: $link exists and is not our symlink (configless slurmd on this host?)."
        return 1
    fi
    # remember which directories we create, so stop removes exactly those
    local d created=()
    d="$(dirname "$link")"
    while [[ ! -e "$d" && "$d" != "/" ]]; do
        created+=("$d")
        d="$(dirname "$d")"
    done
    mkdir -p "$(dirname "$link")" && ln -s "$conf" "$link" \
        || { log "ERROR: cannot create symlink $link -> $conf"; return 1; }
    echo "$link" >"$dir/default_conf_link"
    printf '%s\n' "${created[@]}" >"$dir/default_conf_dirs"  # deepest first
}

unlink_default_conf() {  # unlink_default_conf DIR: remove our symlink only
    local dir="$1" link
    [[ -s "$dir/default_conf_link" ]] || return 0
    link="$(cat "$dir/default_conf_link")"
    if [[ -L "$link" && "$(readlink "$link")" == "$dir/slurm.conf" ]]; then
        rm -f "$link"
        local d
        while read -r d; do  # only dirs we created, deepest first, only if empty
            [[ -n "$d" ]] && rmdir "$d" 2>/dev/null
        done <"$dir/default_conf_dirs" 2>/dev/null
    fi
    rm -f "$dir/default_conf_link" "$dir/default_conf_dirs"
}

# A cluster records the PID of the process that owns it (SLURM_TEST_OWNER_PID, e.g. the pytest process; by
# default the caller of `start`) in DIR/owner.pid. A cluster whose owner is gone was left behind by a run that
# was killed before its teardown (SIGKILL, a CI time limit): the next `start` stops it and goes on. A cluster
# whose owner is alive, or that records no owner, is left alone.
stop_if_stale() {  # stop_if_stale DIR -> 0 if DIR's cluster was stale and is now stopped
    local owner
    owner="$(read_pid "$1/owner.pid")"
    [[ -n "$owner" ]] || return 1
    pid_alive "$owner" && return 1
    log "the owner (pid $owner) of the test cluster in $1 is gone; stopping that cluster."
    (cmd_stop "$1") >/dev/null 2>&1  # a subshell: cmd_stop exports that cluster's SLURM_CONF
    return 0
}

# ------------------------------------------------------------------ start ---
pause_for_test() {  # pause_for_test VARIABLE NAME SECONDS: with VARIABLE=NAME in the environment, wait here (the
    # teardown tests signal the start, or the stop, at that moment)
    [[ "${!1:-}" == "$2" ]] || return 0
    log "pausing $3 s after $2 ($1) ..."
    sleep "$3"
}

cmd_start() {
    [[ $# -eq 1 ]] || die "usage: $PROG start DIR"
    [[ "$(uname -s)" == "Linux" ]] || die "only Linux is supported."
    [[ "$(id -u)" -eq 0 ]] || die "start needs root (slurmd launches jobs as any user; SlurmUser=root)."
    local missing
    missing="$(missing_bins)"
    [[ -z "$missing" ]] || die "missing binaries: $missing (run '$PROG install' first)."

    local dir
    dir="$(abs_dir "$1")" || exit 1
    local pid
    for name in munged slurmctld slurmd; do
        pid="$(read_pid "$dir/$name.pid")"
        if pid_alive "$pid"; then
            stop_if_stale "$dir" && break
            die "$name from a previous start is still running (pid $pid); run '$PROG stop $dir' first."
        fi
    done
    echo "${SLURM_TEST_OWNER_PID:-$PPID}" >"$dir/owner.pid"
    # A signal during the start (the owner's teardown ends its children first) stops what was started so far.
    trap 'log "start interrupted; stopping what was started."; cmd_stop "$dir" >/dev/null 2>&1; exit 143' TERM INT
    # munged wants the socket directory and all its parents world-executable;
    # a pytest tmp dir lives under a 0700 /tmp/pytest-of-USER, so munged is
    # started with --force below, which turns that check into a warning (every
    # client here runs as root anyway).  The key dir must not be group/world
    # writable, and the key itself owner-only.
    chmod 0755 "$dir"
    mkdir -p "$dir"/{munge,state,spool,log}
    chmod 0755 "$dir/munge"

    # ---- munge --------------------------------------------------------------
    local key="$dir/munge/munge.key" sock="$dir/munge/munge.socket"
    if [[ ! -s "$key" ]]; then
        if command -v mungekey >/dev/null 2>&1; then
            mungekey --create --keyfile="$key" >/dev/null 2>&1 || true
        fi
        if [[ ! -s "$key" ]]; then  # older munge without mungekey
            dd if=/dev/urandom of="$key" bs=1 count=1024 status=none || die "cannot create munge key"
        fi
    fi
    chmod 0400 "$key"
    rm -f "$sock" "$sock.lock"
    log "starting munged (socket $sock) ..."
    munged --force --socket="$sock" --key-file="$key" --pid-file="$dir/munged.pid" \
        --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" \
        </dev/null >"$dir/log/munged.out" 2>&1 \
        || { cat "$dir/log/munged.out" >&2; dump_logs "$dir"; die "munged failed to start."; }
    wait_for_file "$dir/munged.pid" 10 \
        || { dump_logs "$dir"; die "munged did not write its pid file (is it running? see $dir/log)."; }
    pause_for_test SLURM_TEST_START_PAUSE munged 60
    if ! munge -n -S "$sock" 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1; then
        dump_logs "$dir"
        cmd_stop "$dir" >/dev/null 2>&1
        die "munge credential round trip failed."
    fi

    # ---- slurm.conf ---------------------------------------------------------
    local node cpus mem_avail_mb real_mem ctld_port slurmd_port
    node="$(hostname -s 2>/dev/null || uname -n)"; node="${node%%.*}"  # slurmd registers under its short hostname
    cpus="$(nproc)"
    mem_avail_mb=$(($(awk '/^MemAvailable:/ {print $2}' /proc/meminfo) / 1024))
    real_mem=$((mem_avail_mb * 8 / 10))   # below free memory, or slurmd drains the node
    ((real_mem >= 500)) || real_mem=500
    # Default Slurm ports unless taken (e.g. by another test cluster).
    ctld_port="$(free_port "${SLURM_TEST_CTLD_PORT:-6817}")" || { cmd_stop "$dir" >/dev/null 2>&1; exit 1; }
    slurmd_port="$(free_port "${SLURM_TEST_SLURMD_PORT:-$((ctld_port + 1))}")" || { cmd_stop "$dir" >/dev/null 2>&1; exit 1; }
    if [[ "$slurmd_port" == "$ctld_port" ]]; then
        slurmd_port="$(free_port $((ctld_port + 1)))" || { cmd_stop "$dir" >/dev/null 2>&1; exit 1; }
    fi

    local conf="$dir/slurm.conf"
    cat >"$conf" <<EOF
# Generated by tests/cluster/slurm.sh on $(date -Is). Single node, no accounting.
ClusterName=ddppmtest
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# munged runs with a private socket under DIR, not /run/munge.
AuthInfo=socket=$sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups (containers, no systemd): plain /proc process tracking, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
# Keep finished jobs visible to squeue for MinJobAge seconds.  Without an
# accounting database the Snakemake Slurm executor can only learn that a job
# COMPLETED from squeue, and it only trusts squeue when MinJobAge >= 3x its
# first status-check delay (otherwise it falls back to sacct, which fails here).
# 3600 s (Slurm's default is 300) also lets the test inspect every job of a
# long run afterwards.
MinJobAge=$MIN_JOB_AGE
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
Waittime=0
NodeName=$node NodeHostname=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$real_mem State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
    echo "export SLURM_CONF=$conf" >"$dir/env.sh"
    export SLURM_CONF="$conf"
    link_default_conf "$dir" || { cmd_stop "$dir" >/dev/null 2>&1; exit 1; }

    # ---- daemons ------------------------------------------------------------
    log "starting slurmctld (port $ctld_port) ..."
    slurmctld -i </dev/null >"$dir/log/slurmctld.out" 2>&1 \
        || { cat "$dir/log/slurmctld.out" >&2; dump_logs "$dir"; cmd_stop "$dir" >/dev/null 2>&1; die "slurmctld failed to start."; }
    wait_for_file "$dir/slurmctld.pid" 15 \
        || { dump_logs "$dir"; cmd_stop "$dir" >/dev/null 2>&1; die "slurmctld did not write its pid file."; }
    pause_for_test SLURM_TEST_START_PAUSE slurmctld 60
    log "starting slurmd (node $node, port $slurmd_port) ..."
    slurmd -N "$node" </dev/null >"$dir/log/slurmd.out" 2>&1 \
        || { cat "$dir/log/slurmd.out" >&2; dump_logs "$dir"; cmd_stop "$dir" >/dev/null 2>&1; die "slurmd failed to start."; }
    wait_for_file "$dir/slurmd.pid" 15 \
        || { dump_logs "$dir"; cmd_stop "$dir" >/dev/null 2>&1; die "slurmd did not write its pid file."; }

    # ---- wait for the node to be idle -----------------------------------------
    local state="" waited=0 resumed=0
    while ((waited < START_TIMEOUT)); do
        state="$(timeout 10 sinfo -h -N -n "$node" -o '%t' 2>/dev/null | head -n1)"
        case "$state" in
            idle) break ;;
            drain* | drng | down*)
                if ((resumed == 0)); then
                    log "node is '$state' ($(timeout 10 sinfo -h -N -n "$node" -o '%E' 2>/dev/null)); resuming it once ..."
                    timeout 10 scontrol update NodeName="$node" State=RESUME >/dev/null 2>&1 || true
                    resumed=1
                fi ;;
        esac
        for name in slurmctld slurmd; do
            pid_alive "$(read_pid "$dir/$name.pid")" \
                || { dump_logs "$dir"; cmd_stop "$dir" >/dev/null 2>&1; die "$name died during start-up."; }
        done
        sleep 1
        waited=$((waited + 1))
    done
    if [[ "$state" != "idle" ]]; then
        timeout 10 sinfo -N -l >&2 2>/dev/null || true
        dump_logs "$dir"
        cmd_stop "$dir" >/dev/null 2>&1
        die "node '$node' not idle after ${START_TIMEOUT}s (last state: '${state:-none}')."
    fi
    log "cluster up after ${waited}s: node $node idle, CPUs=$cpus RealMemory=${real_mem}MB, partition debug."
    log "state dir: $dir; stop with: $PROG stop $dir"
    echo "export SLURM_CONF=$conf"
}

# ------------------------------------------------------------------- stop ---
stop_daemon() {  # stop_daemon DIR NAME
    local pidfile="$1/$2.pid" pid comm i
    pid="$(read_pid "$pidfile")"
    if ! pid_alive "$pid"; then
        rm -f "$pidfile"
        return 0
    fi
    # Guard against PID reuse: only signal a process with the expected name.
    comm="$(cat "/proc/$pid/comm" 2>/dev/null || true)"
    if [[ "$comm" != "$2" ]]; then
        log "pid $pid in $pidfile is '$comm', not $2; not touching it."
        rm -f "$pidfile"
        return 0
    fi
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
        pid_alive "$pid" || break
        sleep 0.1
    done
    if pid_alive "$pid"; then
        log "$2 (pid $pid) ignored SIGTERM for ${STOP_TIMEOUT}s; sending SIGKILL."
        kill -KILL "$pid" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do pid_alive "$pid" || break; sleep 0.1; done
    fi
    rm -f "$pidfile"
    log "stopped $2 (pid $pid)."
}

descendants() {  # descendants PID...: the PIDs and all their descendants
    local frontier=("$@") all=("$@") next p
    while ((${#frontier[@]})); do
        next=()
        for p in "${frontier[@]}"; do
            # shellcheck disable=SC2207
            next+=($(ps -o pid= --ppid "$p" 2>/dev/null))
        done
        frontier=("${next[@]}")
        all+=("${next[@]}")
    done
    echo "${all[@]}"
}

kill_leftover_steps() {  # kill_leftover_steps DIR
    # Job steps (slurmstepd + the job's processes) survive slurmd by design.
    # Normally scancel above ended them; if slurmctld was already gone, find
    # the slurmstepd processes of THIS cluster (their environment carries our
    # SLURM_CONF path) and end them with their process trees.
    local dir="$1" p steps=() pids i
    for p in /proc/[0-9]*; do
        [[ "$(cat "$p/comm" 2>/dev/null)" == "slurmstepd" ]] || continue
        tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$dir/slurm.conf" \
            && steps+=("${p#/proc/}")
    done
    ((${#steps[@]})) || return 0
    pids="$(descendants "${steps[@]}")"
    log "ending leftover job steps of this cluster: pids $pids"
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    for ((i = 0; i < 30; i++)); do  # slurmstepd ignores SIGTERM: wait 3 s at most
        local alive=0
        for p in $pids; do pid_alive "$p" && alive=1; done
        ((alive)) || return 0
        sleep 0.1
    done
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
}

kill_strays() {  # kill_strays DIR
    # A daemon of THIS cluster that no pid file names (a start interrupted before the daemon wrote it): munged's
    # command line names DIR, slurmctld's and slurmd's environment our SLURM_CONF.
    local dir="$1" p name strays=()
    for p in /proc/[0-9]*; do
        name="$(cat "$p/comm" 2>/dev/null)" || continue
        case "$name" in munged | slurmctld | slurmd) ;; *) continue ;; esac
        if tr '\0' '\n' 2>/dev/null <"$p/cmdline" | grep -qF "$dir/" \
            || tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qxF "SLURM_CONF=$dir/slurm.conf"; then
            strays+=("${p#/proc/}")
        fi
    done
    ((${#strays[@]})) || return 0
    log "stopping daemons of this cluster that no pid file names: pids ${strays[*]}"
    kill -TERM "${strays[@]}" 2>/dev/null || true
    local i alive
    for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
        alive=0
        for p in "${strays[@]}"; do pid_alive "$p" && alive=1; done
        ((alive)) || return 0
        sleep 0.1
    done
    kill -KILL "${strays[@]}" 2>/dev/null || true
}

cmd_stop() {
    [[ $# -eq 1 ]] || { log "usage: $PROG stop DIR"; return 0; }
    local dir="$1"
    if [[ ! -d "$dir" ]]; then
        log "$dir does not exist; nothing to stop."
        return 0
    fi
    dir="$(cd "$dir" && pwd -P)"
    # Cancel leftover jobs first, so their slurmstepd processes exit cleanly
    # while slurmd is still there to clean up after them.
    if [[ -f "$dir/slurm.conf" ]] && pid_alive "$(read_pid "$dir/slurmctld.pid")"; then
        export SLURM_CONF="$dir/slurm.conf"
        local jobs i
        jobs="$(timeout 10 squeue -h -o '%i' 2>/dev/null | tr '\n' ' ')"
        if [[ -n "${jobs// /}" ]]; then
            log "cancelling leftover jobs: $jobs"
            # shellcheck disable=SC2086
            timeout 10 scancel $jobs >/dev/null 2>&1 || true
            for ((i = 0; i < STOP_TIMEOUT; i++)); do
                [[ -z "$(timeout 10 squeue -h -t PD,R,CG,S -o '%i' 2>/dev/null)" ]] && break
                sleep 1
            done
        fi
    fi
    stop_daemon "$dir" slurmd
    pause_for_test SLURM_TEST_STOP_PAUSE slurmd 5
    kill_leftover_steps "$dir"
    stop_daemon "$dir" slurmctld
    stop_daemon "$dir" munged
    kill_strays "$dir"
    rm -f "$dir/munge/munge.socket" "$dir/munge/munge.socket.lock"
    unlink_default_conf "$dir"
    return 0
}

# ----------------------------------------------------------------- status ---
cmd_status() {
    [[ $# -eq 1 ]] || die "usage: $PROG status DIR"
    local dir
    dir="$(cd "$1" 2>/dev/null && pwd -P)" || die "$1 does not exist."
    export SLURM_CONF="$dir/slurm.conf"
    local name
    for name in munged slurmctld slurmd; do
        local pid
        pid="$(read_pid "$dir/$name.pid")"
        if pid_alive "$pid"; then echo "$name: running (pid $pid)"; else echo "$name: stopped"; fi
    done
    timeout 10 sinfo -N -l 2>&1 || true
    timeout 10 squeue 2>&1 || true
}

main() {
    local sub="${1:-}"
    shift || true
    case "$sub" in
        install) cmd_install "$@" ;;
        start) cmd_start "$@" ;;
        stop) cmd_stop "$@" ;;
        status) cmd_status "$@" ;;
        *) echo "usage: $PROG {install|start DIR|stop DIR|status DIR}" >&2; exit 2 ;;
    esac
}

main "$@"
