/* callpath top's screen: the only code that calls ncurses. Draws the model (model.c), maps
 * keys to its actions, re-reads a running measurement every interval without pausing the
 * program (the files are read, never locked), and restores the terminal on every way out:
 * q, Ctrl-C (SIGINT), SIGTERM, SIGHUP. */
#include "top/top.h"

#include "base/error.h"
#include "base/strbuf.h"

#include <curses.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

/* Before initscr: ncurses then leaves these signals to us (it installs its own only over
 * the default action). No SA_RESTART, so that getch returns at once. */
static void stop_handlers(struct sigaction *old)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	for (size_t i = 0; i < 3; i++)
		sigaction(stop_signals[i], &sa, &old[i]);
}

static void restore_handlers(const struct sigaction *old)
{
	for (size_t i = 0; i < 3; i++)
		sigaction(stop_signals[i], &old[i], NULL);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *view_name(int v)
{
	return v == CP_VIEW_BOTTOM_UP ? "bottom-up" : v == CP_VIEW_FLAT ? "flat" : "top-down";
}

static void draw_header(const struct cp_top *t)
{
	const char *sorts[] = {"inclusive", "exclusive", "name"};
	char thread[64] = "all";
	if (t->thread >= 0)
		snprintf(thread, sizeof thread, "%d:%d", t->threads[t->thread].pid,
			 t->threads[t->thread].tidx);
	const char *metric = t->p && t->p->sum.nmetrics ? t->p->sum.metrics[t->metric].name : "-";
	attron(A_BOLD);
	mvprintw(0, 0, "callpath top %s  [%s]  refresh %u", t->path,
		 t->done ? "finished" : "running", t->refreshes);
	attroff(A_BOLD);
	clrtoeol();
	mvprintw(1, 0, "view %s | metric %s | sort %s | thread %s (%zu threads)",
		 view_name(t->ro.view), metric, sorts[t->ro.sort % 3], thread, t->nthreads);
	clrtoeol();
	if (t->message[0]) {
		mvprintw(2, 0, "(%s)", t->message);
		clrtoeol();
	}
	attron(A_UNDERLINE);
	mvprintw(3, 0, "%7s %10s %7s %10s  %s", "incl%", "incl", "excl%", "excl", "scope");
	clrtoeol();
	attroff(A_UNDERLINE);
}

/* One row: its values, then the tree: indentation, [+] closed, [-] open, then the name. */
static void draw_row(const struct cp_top *t, size_t i, int y)
{
	uint32_t row = cp_top_row(t, i);
	const struct cp_row *rw = &t->r.rows.rows[row];
	const struct cp_vnode *n = &t->view.nodes[rw->node];
	size_t m = t->metric;
	char iv[32], ev[32];
	cp_render_value_text(&t->r, m, cp_view_incl(&t->view, rw->node)[m], iv, sizeof iv);
	cp_render_value_text(&t->r, m, cp_view_excl(&t->view, rw->node)[m], ev, sizeof ev);
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_addf(&sb, "%6.2f%% %10s %6.2f%% %10s  ", cp_render_pct(&t->r, rw->node, m, 1), iv,
		    cp_render_pct(&t->r, rw->node, m, 0), ev);
	for (int d = 0; d < rw->depth; d++)
		strbuf_addstr(&sb, "  ");
	strbuf_addstr(&sb, !cp_top_has_children(t, row) ? "    "
			   : cp_top_is_open(t, row)	? "[-] "
							: "[+] ");
	strbuf_addstr(&sb, n->name);
	if (n->kind == CP_VK_INLINED)
		strbuf_addstr(&sb, " [inlined]");
	if (n->file && n->kind != CP_VK_LINE && n->kind != CP_VK_FILE && n->kind != CP_VK_LOOP)
		strbuf_addf(&sb, "  %s:%d", cp_render_short(n->file), n->line);
	if (n->module && (n->kind == CP_VK_PROCEDURE || n->kind == CP_VK_CALLER))
		strbuf_addf(&sb, "  (%s)", cp_render_short(n->module));
	if (i == t->cursor)
		attron(A_REVERSE);
	mvaddnstr(y, 0, sb.buf, COLS > 0 ? COLS : 80);
	clrtoeol();
	if (i == t->cursor)
		attroff(A_REVERSE);
	strbuf_release(&sb);
}

static size_t page_rows(void)
{
	return LINES > 6 ? (size_t)LINES - 6 : 1;
}

static void draw(struct cp_top *t)
{
	size_t page = page_rows();
	if (t->cursor < t->scroll)
		t->scroll = t->cursor;
	if (t->cursor >= t->scroll + page)
		t->scroll = t->cursor - page + 1;
	erase();
	draw_header(t);
	for (size_t i = t->scroll, y = 4; i < t->nshown && y < 4 + page; i++, y++)
		draw_row(t, i, (int)y);
	mvprintw(LINES - 1, 0,
		 "arrows move/expand/collapse  enter toggle  v view  m metric  s sort  t thread  "
		 "e/c all  r reread  q quit");
	clrtoeol();
	refresh();
}

/* The action of a key, or -1 (none), -2 (quit), -3 (re-read). */
static int key_action(int ch)
{
	switch (ch) {
	case KEY_UP:
	case 'k':
		return CP_TOP_UP;
	case KEY_DOWN:
	case 'j':
		return CP_TOP_DOWN;
	case KEY_PPAGE:
		return CP_TOP_PAGE_UP;
	case KEY_NPAGE:
	case ' ':
		return CP_TOP_PAGE_DOWN;
	case KEY_HOME:
	case 'g':
		return CP_TOP_HOME;
	case KEY_END:
	case 'G':
		return CP_TOP_END;
	case KEY_RIGHT:
	case 'l':
	case '+':
		return CP_TOP_EXPAND;
	case KEY_LEFT:
	case 'h':
	case '-':
		return CP_TOP_COLLAPSE;
	case '\n':
	case '\r':
	case KEY_ENTER:
		return CP_TOP_TOGGLE;
	case 'e':
		return CP_TOP_EXPAND_ALL;
	case 'c':
		return CP_TOP_COLLAPSE_ALL;
	case 'v':
		return CP_TOP_NEXT_VIEW;
	case 'm':
		return CP_TOP_NEXT_METRIC;
	case 's':
		return CP_TOP_NEXT_SORT;
	case 't':
		return CP_TOP_NEXT_THREAD;
	case 'r':
		return -3;
	case 'q':
	case 'Q': /* not Escape: an unknown key's sequence starts with it */
		return -2;
	default:
		return -1;
	}
}

static void loop(struct cp_top *t)
{
	double next = now_s() + t->opt.interval;
	draw(t);
	while (!stop_signal) {
		int ch = getch();
		int due = !t->done && now_s() >= next;
		if (ch == ERR && !due)
			continue;
		int a = ch == ERR ? -1 : key_action(ch);
		if (a == -2)
			break;
		if (a == -3 || due) {
			cp_top_reload(t);
			next = now_s() + t->opt.interval;
		}
		if (a >= 0)
			cp_top_act(t, (enum cp_top_action)a, page_rows());
		draw(t);
	}
}

int cp_top_run(const char *path, const struct cp_top_options *o)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return cp_error(CP_EINVAL,
				"needs a terminal on its standard input and output (a text view: "
				"callpath report --live %s)",
				path);
	struct cp_top t;
	cp_top_init(&t, path, o);
	cp_top_reload(&t);
	if (!t.p && t.done) {
		int rc = cp_error(CP_ENOENT, "%s", t.message);
		cp_top_release(&t);
		return rc;
	}
	struct sigaction old[3];
	stop_signal = 0;
	stop_handlers(old);
	if (!initscr()) {
		restore_handlers(old);
		cp_top_release(&t);
		return cp_error(CP_EIO, "cannot initialize the terminal (TERM=%s)",
				getenv("TERM") ? getenv("TERM") : "");
	}
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	timeout(200);
	loop(&t);
	endwin();
	restore_handlers(old);
	int sig = stop_signal;
	cp_top_release(&t);
	if (sig) { /* the terminal is restored: end as the signal would have */
		signal(sig, SIG_DFL);
		raise(sig);
	}
	return 0;
}
