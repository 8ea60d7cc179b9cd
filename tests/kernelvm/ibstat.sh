#!/bin/sh
# Runs in the guest: infiniband-diags' ibstat (on the real libibumad) and
# `ibscript ibstat` with the same arguments print the same stdout, stderr
# and exit status on the Soft-RoCE ports. Stderr is compared without
# what cannot match: the pid and strerror(errno) C's IBPANIC/IBWARN add
# ("ibpanic: [219] main: ...: Success"; errno is whatever the last failed
# call left), and ibscript's notice naming the port --fabric auto opened.
fail=0
n=0
for args in "" "rxe0" "rxe1 0x1" "rxe0 2" "-l" "-s rxe0" "-p" "nosuch"; do
	n=$((n + 1))
	/usr/sbin/ibstat $args >/tmp/c.out 2>/tmp/c.err; crc=$?
	/bin/ibscript ibstat $args >/tmp/g.out 2>/tmp/g.err; grc=$?
	# the C tool names itself by argv[0]; so does ibscript
	sed -i 's,/usr/sbin/ibstat,ibstat,g; s/^\(ib[a-z]*: \)\[[0-9]*\] /\1/; /^ibpanic:/s/: [A-Z][a-z ]*$//' /tmp/c.err /tmp/c.out
	sed -i 's,/bin/ibscript ibstat,ibstat,g; s,ibscript ibstat,ibstat,g; /^ibscript: using .* port [0-9]* (LID /d' /tmp/g.err /tmp/g.out
	if [ $crc != $grc ] || ! cmp -s /tmp/c.out /tmp/g.out || ! cmp -s /tmp/c.err /tmp/g.err; then
		echo "--- FAIL: ibstat $args: C exit $crc, ibscript exit $grc"
		diff -u /tmp/c.out /tmp/g.out | sed 's/^/    stdout /'
		diff -u /tmp/c.err /tmp/g.err | sed 's/^/    stderr /'
		fail=1
	else
		echo "    ok: ibstat $args (exit $crc, $(wc -l </tmp/c.out) lines)"
	fi
done
[ $n -gt 0 ] && [ $fail = 0 ] && echo "--- PASS: ibstat matches C ibstat ($n command lines)"
exit $fail
