/*
 * cpeer: librdmacm as the peer of ibscript's RDMA CM in the real-kernel
 * stage (tests/kernelvm). It plays one side of a connection on an IP
 * address and prints every event librdmacm reports, one line each:
 *
 *   cpeer: listening | event NAME status N pdlen N pd TEXT | migrated |
 *          established | disconnect | done | error: ...
 *
 * so the test on the other side can compare the event sequences.
 *
 *   cpeer server ADDR PORT accept|reject
 *       bind, listen, take one CONNECT_REQUEST; accept it with private
 *       data "c-accept" (then ESTABLISHED, rdma_migrate_id to a new
 *       channel, wait there for DISCONNECTED, rdma_disconnect) or reject
 *       it with "c-reject".
 *   cpeer client SRC DST PORT
 *       resolve_addr, resolve_route, connect with "c-connect"; on
 *       CONNECT_RESPONSE (the id has no QP, so librdmacm hands it over)
 *       rdma_establish, rdma_migrate_id to a new channel, rdma_disconnect
 *       and wait there for DISCONNECTED; on REJECTED print it and end.
 *
 * No QP: the kernel's CM runs without one (qp_num 0x123 in the REQ/REP).
 * Every wait is bounded (20 s); any failure exits 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>

static void die(const char *what)
{
	printf("cpeer: error: %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(1);
}

static void say(const char *s)
{
	printf("cpeer: %s\n", s);
	fflush(stdout);
}

/* addr parses an IPv4 or IPv6 literal with a port. */
static void addr(const char *host, const char *port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV }, *ai;

	if (getaddrinfo(host, port, &hints, &ai) != 0) {
		errno = EINVAL;
		die(host);
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
}

/* next waits for one event on ch, prints it and returns it (unacked). */
static struct rdma_cm_event *next(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	char pd[257] = "";
	int n, i;

	n = poll(&p, 1, 20000);
	if (n < 0)
		die("poll");
	if (n == 0) {
		errno = ETIMEDOUT;
		die("no event within 20 s");
	}
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	n = ev->param.conn.private_data_len;
	for (i = 0; i < n && ev->param.conn.private_data; i++) {
		char c = ((const char *)ev->param.conn.private_data)[i];
		if (c == 0)
			break;
		pd[i] = (c > ' ' && c < 127) ? c : '.';
	}
	pd[i] = 0;
	printf("cpeer: event %s status %d pdlen %d pd %s\n", rdma_event_str(ev->event), ev->status,
	       n, pd[0] ? pd : "-");
	fflush(stdout);
	return ev;
}

static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = next(ch);

	if (ev->event != want) {
		printf("cpeer: error: got %s, want %s\n", rdma_event_str(ev->event), rdma_event_str(want));
		exit(1);
	}
	return ev;
}

static void params(struct rdma_conn_param *cp, const char *pd)
{
	memset(cp, 0, sizeof(*cp));
	cp->private_data = pd;
	cp->private_data_len = strlen(pd) + 1;
	cp->responder_resources = 1;
	cp->initiator_depth = 1;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
	cp->qp_num = 0x123;
}

/* migrate moves id to a new channel, as both sides do once connected. */
static struct rdma_event_channel *migrate(struct rdma_cm_id *id)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();

	if (!ch)
		die("rdma_create_event_channel");
	if (rdma_migrate_id(id, ch))
		die("rdma_migrate_id");
	say("migrated");
	return ch;
}

static int server(const char *host, const char *port, int accept)
{
	struct rdma_event_channel *ch = rdma_create_event_channel(), *ch2;
	struct rdma_cm_id *listen_id, *id;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	struct sockaddr_storage ss;

	if (!ch)
		die("rdma_create_event_channel");
	if (rdma_create_id(ch, &listen_id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	addr(host, port, &ss);
	if (rdma_bind_addr(listen_id, (struct sockaddr *)&ss))
		die("rdma_bind_addr");
	if (rdma_listen(listen_id, 1))
		die("rdma_listen");
	say("listening");
	ev = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	id = ev->id;
	rdma_ack_cm_event(ev);
	if (!accept) {
		if (rdma_reject(id, "c-reject", 9))
			die("rdma_reject");
		say("rejected");
		rdma_destroy_id(id);
		rdma_destroy_id(listen_id);
		say("done");
		return 0;
	}
	params(&cp, "c-accept");
	if (rdma_accept(id, &cp))
		die("rdma_accept");
	ev = expect(ch, RDMA_CM_EVENT_ESTABLISHED);
	rdma_ack_cm_event(ev);
	ch2 = migrate(id);
	ev = expect(ch2, RDMA_CM_EVENT_DISCONNECTED);
	rdma_ack_cm_event(ev);
	if (rdma_disconnect(id))
		die("rdma_disconnect");
	say("disconnect");
	rdma_destroy_id(id);
	rdma_destroy_id(listen_id);
	rdma_destroy_event_channel(ch2);
	rdma_destroy_event_channel(ch);
	say("done");
	return 0;
}

static int client(const char *src, const char *dst, const char *port)
{
	struct rdma_event_channel *ch = rdma_create_event_channel(), *ch2;
	struct sockaddr_storage s, d;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	struct rdma_cm_id *id;

	if (!ch)
		die("rdma_create_event_channel");
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	addr(src, "0", &s);
	addr(dst, port, &d);
	if (rdma_resolve_addr(id, (struct sockaddr *)&s, (struct sockaddr *)&d, 5000))
		die("rdma_resolve_addr");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(id, 5000))
		die("rdma_resolve_route");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	params(&cp, "c-connect");
	if (rdma_connect(id, &cp))
		die("rdma_connect");
	ev = next(ch);
	if (ev->event == RDMA_CM_EVENT_REJECTED) {
		rdma_ack_cm_event(ev);
		rdma_destroy_id(id);
		say("done");
		return 0;
	}
	if (ev->event != RDMA_CM_EVENT_CONNECT_RESPONSE) {
		printf("cpeer: error: got %s after connect\n", rdma_event_str(ev->event));
		return 1;
	}
	rdma_ack_cm_event(ev);
	if (rdma_establish(id))
		die("rdma_establish");
	say("established");
	ch2 = migrate(id);
	if (rdma_disconnect(id))
		die("rdma_disconnect");
	say("disconnect");
	rdma_ack_cm_event(expect(ch2, RDMA_CM_EVENT_DISCONNECTED));
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch2);
	rdma_destroy_event_channel(ch);
	say("done");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "server"))
		return server(argv[2], argv[3], !strcmp(argv[4], "accept"));
	if (argc == 5 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: cpeer server ADDR PORT accept|reject | cpeer client SRC DST PORT\n");
	return 2;
}
