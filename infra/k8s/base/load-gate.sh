#!/bin/bash
# The start gate of one load shard, run by the init container of every pod of an overlay's load Job.
# The shards' summaries are merged as if they measured the same window (bidbench-load merge), so they must
# start together; pods of one Job start seconds to minutes apart (scheduling, image pulls). The gate
# returns once
#   1. every shard of the Job has a pod: its name <job>-<index> resolves through the Job's headless
#      Service (published before the pods are ready), so no shard starts while another is still pending;
#   2. the target (the first of BB_TARGETS) answers GET /ready with 200;
#   3. the wall clock reaches the next multiple of 10 s that is at least 5 s away (the nodes keep time
#      with NTP), which absorbs the few seconds between the shards seeing steps 1 and 2 done.
# Environment: BB_TARGETS, BB_SHARDS, JOB_NAME (the pod's batch.kubernetes.io/job-name label).
# bash only (/dev/tcp, getent): it runs in the postgres image the other init containers already pull.
set -u
first=${BB_TARGETS%%,*}
hostport=${first#*://}
hostport=${hostport%%/*}
host=${hostport%%:*}
port=${hostport##*:}
[ "$port" = "$hostport" ] && port=80

i=0
while [ "$i" -lt "$BB_SHARDS" ]; do
  until getent hosts "$JOB_NAME-$i.$JOB_NAME" >/dev/null; do
    echo "waiting for shard $i of $BB_SHARDS ($JOB_NAME-$i)"
    sleep 2
  done
  i=$((i + 1))
done

until (exec 3<>"/dev/tcp/$host/$port" && printf 'GET /ready HTTP/1.0\r\nHost: %s\r\n\r\n' "$host" >&3 \
  && head -n 1 <&3 | grep -q ' 200 ') 2>/dev/null; do
  echo "waiting for $host:$port to answer GET /ready"
  sleep 3
done

now=$(date +%s)
start=$(((now / 10 + 1) * 10))
[ $((start - now)) -lt 5 ] && start=$((start + 10))
echo "all $BB_SHARDS shards present and $host ready; starting at $(date -u -d "@$start" +%H:%M:%SZ)"
sleep $((start - now))
