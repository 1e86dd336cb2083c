#!/usr/bin/env bash
# `make e2e-compose`: the Docker Compose quickstart (e2e/docker-compose.yaml)
# run for real, by the commands of README's "Quickstart with Docker Compose"
# section, line by line, against a real Docker engine:
#
#   1. an engine: the one `docker info` reaches, or else Debian's dockerd
#      (apt-get installs docker.io when missing), started here with its own
#      data-root in the git-ignored e2e/.cache/docker (kept: the image layers
#      make the next run warm), --iptables=false (the containers share
#      tlsplane's network namespace; nothing is published), overlay2, or vfs
#      where overlay2 will not start; stopped again at the end, also on
#      failure;
#   2. `docker compose`: the client's plugin, or else Compose v2 built from
#      its Go module (hack/build-compose.sh) as a plugin of a git-ignored
#      Docker config;
#   3. images: tlsplane's and the backend's are built from the Dockerfile by
#      `up --build`; the images named from elsewhere (golang:1.26, Envoy
#      1.40, curl) are pulled on an engine that can, and otherwise are local
#      stand-ins under the same names (hack/compose-standins.sh);
#   4. the README's lines: up, the happy path (check-happy: 200 through
#      Envoy from payments, the policy's SNI; catalog in plaintext), then
#      the failure path (check-failure: a backend the policy rejects, a 5xx
#      and no request reaching it), then down --volumes --remove-orphans;
#      after the happy path, Envoy's admin says the payments cluster
#      verified the backend's certificate against the quickstart CA;
#   5. nothing of the project left: no container, network or volume
#      labelled com.docker.compose.project=tlsplane-quickstart.
#
# COMPOSE_E2E_STORAGE_DRIVERS: the storage drivers a dockerd started here
# tries, in order (default "overlay2 vfs").
#
# Ends with a PASS/FAIL line per step and "N passed, N failed". Without an
# engine (no root, no apt-get, dockerd will not start) it skips, saying
# why; with CI=true it fails.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=$root/e2e/.cache
project=tlsplane-quickstart
compose_file=e2e/docker-compose.yaml
logs=$cache/compose
mkdir -p "$logs"
results=() passed=0 failed=0

summary() {
	echo
	echo "=== e2e-compose: per-step summary"
	printf '%s\n' "${results[@]}"
	echo "$passed passed, $failed failed"
}
pass() { results+=("PASS $1  ($2)") passed=$((passed + 1)); echo "--- PASS $1 ($2)"; }
fail() { results+=("FAIL $1  ($2)") failed=$((failed + 1)); echo "--- FAIL $1 ($2)"; }
missing() {
	if [[ "${CI:-}" == "true" ]]; then
		fail engine "not run: $1; CI=true: not skipped"
		summary
		exit 1
	fi
	results+=("SKIP engine  ($1)")
	summary
	echo "0 steps run: $1"
	exit 0
}
elapsed() { echo "$(( $(date +%s) - $1 ))s"; }

# One run at a time on a machine: two engines started here would share the
# docker0 bridge. The lock lives in /run/lock, the system's place for
# locks, so the temporary directory is left as it was found.
lock=/run/lock/tlsplane-compose-e2e.lock
[ -d /run/lock ] && [ -w /run/lock ] || lock="$root/e2e/.cache/compose-e2e.lock"
mkdir -p "$(dirname "$lock")"
exec 9>"$lock"
flock -w 1800 9 || { fail lock "another make e2e-compose held $lock for 30 minutes"; summary; exit 1; }

started_at=$(date +%s)
dockerd_pid="" exec_root="" made_bridge=0

stop_engine() {
	if [[ -n "$dockerd_pid" ]]; then
		# Interrupted mid-run: the quickstart goes down before its engine.
		if declare -F leftovers >/dev/null && [[ -n "$(leftovers 2>/dev/null)" ]]; then
			compose --profile failure --profile check down --volumes --remove-orphans >/dev/null 2>&1
		fi
		stop_dockerd
		echo "stopped the dockerd this run started"
	fi
	# The bridge dockerd made, when there was none before.
	[[ $made_bridge -eq 1 ]] && ip link delete docker0 2>/dev/null
	[[ -n "$exec_root" ]] && { umount -R "$exec_root" 2>/dev/null; rm -rf "$exec_root"; }
	exec_root=""
}
stop_dockerd() {
	kill -TERM "$dockerd_pid" 2>/dev/null
	for _ in $(seq 60); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.5; done
	if kill -0 "$dockerd_pid" 2>/dev/null; then
		echo "dockerd $dockerd_pid did not stop in 30s: SIGKILL"
		kill -KILL "$dockerd_pid" 2>/dev/null
	fi
	wait "$dockerd_pid" 2>/dev/null
	dockerd_pid=""
}
trap stop_engine EXIT
trap 'exit 130' INT TERM

# apt_install PACKAGE: Debian's package, after one apt-get update a run.
apt_updated=0
apt_install() {
	if [[ $apt_updated -eq 0 ]]; then apt-get update -qq || return 1; apt_updated=1; fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
}

# busybox: /bin/sh of the stand-in images, and the engine's probe.
if ! command -v busybox >/dev/null; then
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
		echo "busybox not found (the stand-ins' /bin/sh): installing Debian's busybox-static"
		apt_install busybox-static || echo "apt-get could not install busybox-static"
	fi
fi
probe() {
	local bb files
	bb=$(command -v busybox) || return 1
	files=("$bb" $(ldd "$bb" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'))
	tar -C / -chf - "${files[@]#/}" 2>/dev/null | docker import - tlsplane-probe:local >/dev/null 2>&1 &&
		docker run --rm --network none tlsplane-probe:local "$bb" true >/dev/null 2>>"$logs/dockerd-probe.log"
	local rc=$?
	docker rmi -f tlsplane-probe:local >/dev/null 2>&1
	return $rc
}

# 1. The engine.
engine_note=""
if docker info >/dev/null 2>&1; then
	engine_note="the running engine $(docker info -f '{{.ServerVersion}}, {{.Driver}}')"
else
	[[ $(id -u) -eq 0 ]] || missing "no Docker engine answers, and starting dockerd needs root"
	if ! command -v dockerd >/dev/null; then
		command -v apt-get >/dev/null || missing "no Docker engine answers, no dockerd, and no apt-get to install it"
		echo "dockerd not found: installing Debian's docker.io (apt-get update, then apt-get install -y docker.io; a minute)"
		apt_install docker.io || missing "apt-get could not install docker.io"
	fi
	command -v docker >/dev/null || missing "dockerd installed, but no docker client"
	ip link show docker0 >/dev/null 2>&1 || made_bridge=1
	data_root=$cache/docker
	mkdir -p "$data_root"
	# exec-root holds containerd's sockets: a short path, whatever the clone's.
	exec_root=$(mktemp -d /tmp/tlsplane-dockerd.XXXXXX)
	export DOCKER_HOST=unix://$exec_root/docker.sock
	for driver in ${COMPOSE_E2E_STORAGE_DRIVERS:-overlay2 vfs}; do
		echo "starting dockerd ($driver, --iptables=false, data-root $data_root, socket $exec_root/docker.sock)"
		dockerd --storage-driver "$driver" --iptables=false --ip-masq=false \
			--data-root "$data_root/$driver" --exec-root "$exec_root" \
			--pidfile "$exec_root/dockerd.pid" --host "$DOCKER_HOST" \
			>"$logs/dockerd-$driver.log" 2>&1 &
		dockerd_pid=$!
		for _ in $(seq 120); do
			docker info >/dev/null 2>&1 && break
			kill -0 "$dockerd_pid" 2>/dev/null || break
			sleep 0.5
		done
		# A container must start, not just the daemon: overlay2 can start
		# and still fail to mount. The probe image is busybox and its libraries.
		if docker info >/dev/null 2>&1 && probe; then
			break
		fi
		echo "dockerd with $driver did not run a container (see $logs/dockerd-$driver.log)"
		stop_engine
		exec_root=$(mktemp -d /tmp/tlsplane-dockerd.XXXXXX)
		export DOCKER_HOST=unix://$exec_root/docker.sock
	done
	[[ -n "$dockerd_pid" ]] || missing "dockerd would not run a container with overlay2 nor vfs (logs in $logs)"
	engine_note="started dockerd $(docker info -f '{{.ServerVersion}}, {{.Driver}}') in $(elapsed "$started_at"), pid $dockerd_pid"
fi
pass engine "$engine_note"

# 2. docker compose.
if docker compose version >/dev/null 2>&1; then
	pass compose "$(docker compose version --short 2>/dev/null), the docker client's plugin"
else
	if hack/build-compose.sh; then
		export DOCKER_CONFIG=$cache/docker-config
		if docker compose version >/dev/null 2>&1; then
			pass compose "$(docker compose version --short), built from its module (hack/build-compose.sh)"
		else
			fail compose "hack/build-compose.sh built it, but docker compose version fails"
			summary
			exit 1
		fi
	else
		fail compose "hack/build-compose.sh failed"
		summary
		exit 1
	fi
fi

# 3. Images from elsewhere: pulled, or stand-ins.
if [[ -z "$dockerd_pid" ]]; then
	for image in golang:1.26 envoyproxy/envoy:v1.40-latest curlimages/curl:8.11.1; do
		docker image inspect "$image" >/dev/null 2>&1 || timeout 300 docker pull -q "$image" >/dev/null 2>&1 || true
	done
fi
t=$(date +%s)
if out=$(hack/compose-standins.sh 2>&1); then
	echo "$out"
	pass images "golang:1.26, envoyproxy/envoy:v1.40-latest, curlimages/curl:8.11.1 in $(elapsed "$t"): $(echo "$out" | grep -c 'imported') built, $(echo "$out" | grep -c -v 'imported') already there"
else
	echo "$out"
	fail images "hack/compose-standins.sh failed"
	summary
	exit 1
fi

compose() { docker compose -f "$compose_file" "$@"; }
leftovers() {
	local what
	for what in container network volume; do
		local f=()
		[[ $what == container ]] && f=(-a)
		docker "$what" ls "${f[@]}" -q --filter "label=com.docker.compose.project=$project" | sed "s/^/$what /"
	done
}
# What an earlier, interrupted run left would make `up` reuse it.
if [[ -n "$(leftovers)" ]]; then
	echo "removing what an earlier run left: $(leftovers | tr '\n' ' ')"
	compose --profile failure --profile check down --volumes --remove-orphans >/dev/null 2>&1
fi

# 4. README's lines, in order. The section's first sh block after the
# marker line holds them.
mapfile -t lines < <(awk '
	/<!-- e2e-compose:/ { marked = 1; next }
	marked && /^```sh$/ { inblock = 1; next }
	inblock && /^```$/ { exit }
	inblock && NF && $1 !~ /^#/ { print }
' README.md)
if [[ ${#lines[@]} -lt 3 ]]; then
	fail readme "no command lines found after <!-- e2e-compose: in README.md"
	summary
	exit 1
fi
n=0 broken=0
for line in "${lines[@]}"; do
	n=$((n + 1))
	name="readme-$n"
	if [[ $broken -eq 1 && $n -lt ${#lines[@]} ]]; then
		results+=("SKIP $name  (not run after a failed step: $line)")
		continue
	fi
	echo
	echo "=== RUN $name: $line"
	t=$(date +%s)
	bash -c "$line" 2>&1 | tee "$logs/step-$n.log"
	rc=${PIPESTATUS[0]}
	detail="$line; $(elapsed "$t")"
	case "$line" in *check-*) detail="$(grep -h '^PASS\|^FAIL' "$logs/step-$n.log" | cut -c1-160 | tr '\n' ';') $detail" ;; esac
	if [[ $rc -eq 0 ]]; then
		pass "$name" "$detail"
	else
		fail "$name" "exit $rc: $detail"
		broken=1
		echo "--- logs of the quickstart's containers"
		compose --profile failure logs --no-color --tail 60 2>&1 | tee "$logs/failure.log"
	fi
	# The right certificate: right after the happy path, Envoy's admin
	# lists the quickstart CA (by serial) in the payments cluster's
	# validation, and counts handshakes with no verification failure.
	if [[ "$line" == *"run --rm check-happy"* && $rc -eq 0 ]]; then
		serial=$(openssl x509 -in examples/quickstart/certs/ca.crt -noout -serial | cut -d= -f2 | tr 'A-F' 'a-f' | sed 's/^0*//')
		certs=$(compose run --rm --no-deps check-happy 'curl -s http://127.0.0.1:9901/certs' 2>/dev/null)
		stats=$(compose run --rm --no-deps check-happy 'curl -s "http://127.0.0.1:9901/stats?filter=^cluster\.shop/payments/.*ssl\.(handshake|fail_verify)"' 2>/dev/null)
		handshakes=$(echo "$stats" | awk -F': ' '/ssl\.handshake:/ {s += $2} END {print s + 0}')
		verify_failures=$(echo "$stats" | awk -F': ' '/fail_verify/ {s += $2} END {print s + 0}')
		if echo "$certs" | tr -d ' \n' | grep -qi "\"serial_number\":\"0*$serial\"" && [[ $handshakes -gt 0 && $verify_failures -eq 0 ]]; then
			pass right-certificate "Envoy validates payments against the quickstart CA (serial $serial); $handshakes handshakes, 0 verification failures"
		else
			fail right-certificate "CA serial $serial in Envoy's /certs: $(echo "$certs" | tr -d ' \n' | grep -qi "$serial" && echo yes || echo no); stats: $(echo "$stats" | tr '\n' ' ')"
		fi
	fi
done

# 5. Nothing of the project left (after the README's down; removed here if
# a step failed first, and still a failure).
left=$(leftovers)
if [[ -n "$left" && $broken -eq 1 ]]; then
	compose --profile failure --profile check down --volumes --remove-orphans >/dev/null 2>&1
	left=$(leftovers)
fi
if [[ -z "$left" ]]; then
	pass teardown "no container, network or volume of project $project remains"
else
	fail teardown "left: $(echo "$left" | tr '\n' ' ')"
	compose --profile failure --profile check down --volumes --remove-orphans >/dev/null 2>&1
fi
# Builds of earlier runs, no longer tagged, go; the build cache keeps its
# most recent 4 GB for the next run.
docker image prune -f >/dev/null 2>&1
docker builder prune -f --keep-storage 4GB >/dev/null 2>&1

echo "e2e-compose took $(elapsed "$started_at")"
summary
[[ $failed -eq 0 ]]
