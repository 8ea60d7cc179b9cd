#!/bin/sh
# Runs in the guest: ibscript's RDMA CM from Lua (cpeer.lua, on rxe0's
# 10.0.0.1 / fd00::1) and librdmacm (cpeer, on rxe1's 10.0.0.2 / fd00::2)
# connect each way, by IPv4 and by IPv6 address,
# accept and reject; each side's events must be the ones below, as each
# printed them (librdmacm's without pdlen, its buffer's length).
fail=0
port=7600
lua() { ibscript run --fabric umad: /t/cpeer.lua --arg port=$port "$@" 2>/tmp/lua.err >/tmp/lua.all; rc=$?; grep -E '^(event |listening$|migrated$|disconnect$|rejected$)' /tmp/lua.all >/tmp/lua.out; return $rc; }
check() { # name want-file got-file
	if ! cmp -s "$2" "$3"; then
		echo "--- FAIL: $1"; diff -u "$2" "$3" | sed 's/^/    /'; cat /tmp/lua.all /tmp/lua.err | sed 's/^/    stderr: /'; fail=1
	else
		echo "    ok: $1"
	fi
}
cout() { sed 's/^cpeer: //; s/ pdlen [0-9]*//' /tmp/c.out; }
waitfor() { n=0; until grep -q "$1" "$2" 2>/dev/null; do n=$((n + 1)); [ $n -gt 300 ] && break; sleep 0.1; done; }

for fam in "10.0.0.1 10.0.0.2" "fd00::1 fd00::2"; do
set -- $fam; L=$1 C=$2
for how in accept reject; do
	rm -f /tmp/lua.all /tmp/lua.out /tmp/c.out
	port=$((port + 1))
	cpeer server $C $port $how >/tmp/c.out 2>&1 &
	waitfor listening /tmp/c.out
	lua --arg mode=connect --arg server=$C --arg client=$L; lrc=$?
	wait
	if [ $how = accept ]; then
		printf 'event RDMA_CM_EVENT_ADDR_RESOLVED status 0 pd -\nevent RDMA_CM_EVENT_ROUTE_RESOLVED status 0 pd -\nevent RDMA_CM_EVENT_ESTABLISHED status 0 pd c-accept\nmigrated\ndisconnect\nevent RDMA_CM_EVENT_DISCONNECTED status 0 pd -\n' >/tmp/lua.want
		printf 'listening\nevent RDMA_CM_EVENT_CONNECT_REQUEST status 0 pd lua-connect\nevent RDMA_CM_EVENT_ESTABLISHED status 0 pd -\nmigrated\nevent RDMA_CM_EVENT_DISCONNECTED status 0 pd -\ndisconnect\ndone\n' >/tmp/c.want
	else
		printf 'event RDMA_CM_EVENT_ADDR_RESOLVED status 0 pd -\nevent RDMA_CM_EVENT_ROUTE_RESOLVED status 0 pd -\nevent RDMA_CM_EVENT_REJECTED status 28 pd c-reject\n' >/tmp/lua.want
		printf 'listening\nevent RDMA_CM_EVENT_CONNECT_REQUEST status 0 pd lua-connect\nrejected\ndone\n' >/tmp/c.want
	fi
	check "$L: Lua connects, librdmacm ${how}s: Lua's events" /tmp/lua.want /tmp/lua.out
	cout >/tmp/c.got; check "$L: Lua connects, librdmacm ${how}s: librdmacm's events" /tmp/c.want /tmp/c.got
	[ $lrc = 0 ] || { echo "--- FAIL: ibscript run exit $lrc"; fail=1; }

	port=$((port + 1))
	rm -f /tmp/lua.all /tmp/lua.out /tmp/c.out
	r=0; [ $how = reject ] && r=1
	( lua --arg mode=accept --arg server=$L --arg reject=$r; echo $? >/tmp/lua.rc ) &
	waitfor listening /tmp/lua.all
	cpeer client $C $L $port >/tmp/c.out 2>&1
	wait
	if [ $how = accept ]; then
		printf 'listening\nevent RDMA_CM_EVENT_CONNECT_REQUEST status 0 pd c-connect\nevent RDMA_CM_EVENT_ESTABLISHED status 0 pd -\nmigrated\nevent RDMA_CM_EVENT_DISCONNECTED status 0 pd -\ndisconnect\n' >/tmp/lua.want
		printf 'event RDMA_CM_EVENT_ADDR_RESOLVED status 0 pd -\nevent RDMA_CM_EVENT_ROUTE_RESOLVED status 0 pd -\nevent RDMA_CM_EVENT_CONNECT_RESPONSE status 0 pd lua-accept\nestablished\nmigrated\ndisconnect\nevent RDMA_CM_EVENT_DISCONNECTED status 0 pd -\ndone\n' >/tmp/c.want
	else
		printf 'listening\nevent RDMA_CM_EVENT_CONNECT_REQUEST status 0 pd c-connect\nrejected\n' >/tmp/lua.want
		printf 'event RDMA_CM_EVENT_ADDR_RESOLVED status 0 pd -\nevent RDMA_CM_EVENT_ROUTE_RESOLVED status 0 pd -\nevent RDMA_CM_EVENT_REJECTED status 28 pd lua-reject\ndone\n' >/tmp/c.want
	fi
	check "$L: librdmacm connects, Lua ${how}s: Lua's events" /tmp/lua.want /tmp/lua.out
	cout >/tmp/c.got; check "$L: librdmacm connects, Lua ${how}s: librdmacm's events" /tmp/c.want /tmp/c.got
	[ "$(cat /tmp/lua.rc)" = 0 ] || { echo "--- FAIL: ibscript run exit $(cat /tmp/lua.rc)"; fail=1; }
done
done
[ $fail = 0 ] && echo "--- PASS: Lua and librdmacm connect each way (IPv4, IPv6)"
exit $fail
