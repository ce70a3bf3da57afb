/* Blocking calls that the kernel never restarts after a signal handler (signal(7)):
 * under realtime sampling our signal interrupts each of them many times. Each must still
 * behave as if nothing happened: timeouts last as long as asked, waits end when their
 * event comes, and no call fails with EINTR. Prints "eintr ok" or what went wrong.
 * usage: eintr [MILLISECONDS per wait] */
#include "common.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <time.h>
#include <unistd.h>

static int failures;
static long wait_ms;
static pthread_t main_thread;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check(const char *what, int rc, int want_rc, double t0)
{
	double ms = (now() - t0) * 1e3;
	if (rc == -1 && errno == EINTR) {
		printf("FAIL %s: EINTR after %.0f ms\n", what, ms);
		failures++;
	} else if (rc != want_rc) {
		printf("FAIL %s: returned %d (%s), wanted %d\n", what, rc, strerror(errno), want_rc);
		failures++;
	} else if (ms < (double)wait_ms * 0.95) {
		printf("FAIL %s: returned after %.0f ms, before its %ld ms\n", what, ms, wait_ms);
		failures++;
	}
}

static struct timespec span(void)
{
	struct timespec ts = {wait_ms / 1000, (wait_ms % 1000) * 1000000};
	return ts;
}

/* After wait_ms, does what arg says to the main thread. */
static int semid = -1, msqid = -1;
static void *later(void *arg)
{
	const char *what = arg;
	struct timespec ts = span();
	nanosleep(&ts, NULL);
	if (!strcmp(what, "usr1") || !strcmp(what, "usr2")) {
		pthread_kill(main_thread, !strcmp(what, "usr1") ? SIGUSR1 : SIGUSR2);
	} else if (!strcmp(what, "sem")) {
		struct sembuf up = {0, 1, 0};
		semop(semid, &up, 1);
	} else if (!strcmp(what, "msg")) {
		struct {
			long type;
			char text[8];
		} m = {1, "hi"};
		msgsnd(msqid, &m, sizeof m.text, 0);
	}
	return NULL;
}

static pthread_t start_later(const char *what)
{
	pthread_t th;
	pthread_create(&th, NULL, later, (void *)what);
	return th;
}

static volatile sig_atomic_t got_usr2;
static void on_usr2(int sig)
{
	(void)sig;
	got_usr2 = 1;
}

static void timeouts(void)
{
	int p[2];
	if (pipe(p))
		return;
	struct pollfd pfd = {p[0], POLLIN, 0};
	struct timespec ts = span();
	double t0 = now();
	check("ppoll", ppoll(&pfd, 1, &ts, NULL), 0, t0);
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	t0 = now();
	check("pselect", pselect(p[0] + 1, &r, NULL, NULL, &ts, NULL), 0, t0);
	int ep = epoll_create1(0);
	struct epoll_event ev = {EPOLLIN, {0}}, out;
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	t0 = now();
	check("epoll_pwait", epoll_pwait(ep, &out, 1, (int)wait_ms, NULL), 0, t0);
	t0 = now();
	check("epoll_pwait2", epoll_pwait2(ep, &out, 1, &ts, NULL), 0, t0);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	t0 = now();
	int rc = sigtimedwait(&set, NULL, &ts);
	check("sigtimedwait", rc == -1 && errno == EAGAIN ? 0 : rc, 0, t0);
	close(ep);
	close(p[0]);
	close(p[1]);
}

static void waits(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_t th = start_later("usr1");
	double t0 = now();
	check("sigwaitinfo", sigwaitinfo(&set, NULL), SIGUSR1, t0);
	pthread_join(th, NULL);

	sigset_t old, wait_mask;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	struct sigaction sa = {0};
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	th = start_later("usr2");
	wait_mask = old;
	sigdelset(&wait_mask, SIGUSR2);
	t0 = now();
	int rc = sigsuspend(&wait_mask);
	check("sigsuspend", rc == -1 && errno == EINTR && got_usr2 ? 0 : -2, 0, t0);
	pthread_join(th, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void sysv(void)
{
	semid = semget(IPC_PRIVATE, 1, 0600);
	msqid = msgget(IPC_PRIVATE, 0600);
	if (semid < 0 || msqid < 0) {
		printf("note: System V IPC unavailable (%s), semop/msgrcv not checked\n",
		       strerror(errno));
	} else {
		struct sembuf down = {0, -1, 0};
		pthread_t th = start_later("sem");
		double t0 = now();
		check("semop", semop(semid, &down, 1), 0, t0);
		pthread_join(th, NULL);
		struct timespec ts = span();
		t0 = now();
		int rc = semtimedop(semid, &down, 1, &ts);
		check("semtimedop", rc == -1 && errno == EAGAIN ? 0 : rc, 0, t0);
		struct {
			long type;
			char text[8];
		} m;
		th = start_later("msg");
		t0 = now();
		check("msgrcv", (int)msgrcv(msqid, &m, sizeof m.text, 0, 0), (int)sizeof m.text, t0);
		pthread_join(th, NULL);
	}
	if (semid >= 0)
		semctl(semid, 0, IPC_RMID);
	if (msqid >= 0)
		msgctl(msqid, IPC_RMID, NULL);
}

int main(int argc, char **argv)
{
	wait_ms = arg_or(argc, argv, 1, 150);
	main_thread = pthread_self();
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* inherited by the helper threads */
	timeouts();
	waits();
	sysv();
	printf(failures ? "eintr: %d failure(s)\n" : "eintr ok\n", failures);
	return failures != 0;
}
