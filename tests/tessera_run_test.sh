#!/usr/bin/env bash
# tessera-run: sets the torchrun variables, returns the first failing status, stops the other
# ranks promptly, and forwards signals.
set -u
run=$1
fail() { echo "FAIL: $*"; exit 1; }

out=$("$run" -n 3 sh -c 'echo "$RANK/$WORLD_SIZE/$LOCAL_RANK/$LOCAL_WORLD_SIZE $MASTER_ADDR ${MASTER_PORT:+port} ${TCCL_BOOTSTRAP_SECRET:+secret}"' | sort)
expected=$'0/3/0/3 127.0.0.1 port secret\n1/3/1/3 127.0.0.1 port secret\n2/3/2/3 127.0.0.1 port secret'
[ "$out" = "$expected" ] || fail "variables: got [$out]"

start=$(date +%s)
"$run" -n 4 sh -c 'if [ "$RANK" = 2 ]; then exit 7; fi; exec sleep 60' 2>/dev/null
rc=$?
[ $rc = 7 ] || fail "exit status: got $rc, want 7"
[ $(( $(date +%s) - start )) -lt 10 ] || fail "the other ranks were not stopped promptly"

"$run" -n 2 sh -c 'kill -KILL $$' 2>/dev/null
rc=$?
[ $rc = 137 ] || fail "killed rank: got $rc, want 137 (128 + SIGKILL)"

marker=$(mktemp)
"$run" -n 2 sh -c "trap 'kill \$!; echo \$RANK >> $marker; exit 0' TERM; sleep 60 >/dev/null 2>&1 & wait" &
launcher=$!
sleep 1
kill -TERM $launcher
wait $launcher
[ "$(sort "$marker" | tr -d '\n')" = "01" ] || fail "SIGTERM was not forwarded to both ranks: [$(cat "$marker")]"
rm -f "$marker"

"$run" -n 0 true 2>/dev/null && fail "-n 0 must be rejected"
echo "tessera_run: 1 passed, 0 failed"
