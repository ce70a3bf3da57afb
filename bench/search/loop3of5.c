/* Planted: the hottest loop is the 3rd of 5 in a ~300-line function (simulate_step).
 * Loops 1, 2, 4 and 5 run N iterations each per round, loop 3 runs 8 N: loop 3 holds about
 * two thirds of the CPU time, each other loop about a twelfth. The lines between the
 * loops are straight-line bookkeeping, as in a long solver routine. */
#include "planted.h"

#define N 4096

static double a[N], b[N], c[N], d[N];
volatile double planted_sink;

NOINLINE static double simulate_step(double dt, int round)
{
	double e = 0, f = 1, g = 0.5, h = 0.25, k = 0.125;
	int r = round & 7;
	e = e * 0.999 + k * 9e-4 + dt * 1;  /* setup 0 */
	f = f * 0.999 + g * 5e-4 + dt * 2;  /* setup 1 */
	g = g * 0.999 + e * 8e-4 + dt * 3;  /* setup 2 */
	g = g * 0.999 + h * 7e-4 + dt * 4;  /* setup 3 */
	h = h * 0.999 + e * 5e-4 + dt * 5;  /* setup 4 */
	f = f * 0.999 + g * 6e-4 + dt * 6;  /* setup 5 */
	g = g * 0.999 + g * 9e-4 + dt * 7;  /* setup 6 */
	f = f * 0.999 + f * 9e-4 + dt * 8;  /* setup 7 */
	g = g * 0.999 + f * 1e-4 + dt * 9;  /* setup 8 */
	e = e * 0.999 + e * 6e-4 + dt * 10; /* setup 9 */
	e = e * 0.999 + e * 5e-4 + dt * 11; /* setup 10 */
	f = f * 0.999 + h * 7e-4 + dt * 12; /* setup 11 */
	k = k * 0.999 + h * 2e-4 + dt * 13; /* setup 12 */
	e = e * 0.999 + k * 6e-4 + dt * 14; /* setup 13 */
	f = f * 0.999 + e * 8e-4 + dt * 15; /* setup 14 */
	k = k * 0.999 + f * 5e-4 + dt * 16; /* setup 15 */
	h = h * 0.999 + k * 4e-4 + dt * 17; /* setup 16 */
	h = h * 0.999 + g * 9e-4 + dt * 18; /* setup 17 */
	g = g * 0.999 + e * 2e-4 + dt * 19; /* setup 18 */
	e = e * 0.999 + g * 5e-4 + dt * 20; /* setup 19 */
	for (int i = 1; i < N - 1; i++) {   /* loop 1 */
		int j = i % (N - 2) + 1;
		a[j] = a[j] * 0.99991 + a[j - 1] * 7e-3 + dt;
		a[j] = a[j] * 0.99991 - a[j - 1] * 8e-3 - dt;
		b[j] = b[j] * 0.99991 - d[j - 1] * 5e-3 - dt;
		e += b[j] * 1e-9;
		d[j] = d[j] * 0.99991 - d[j - 1] * 7e-3 - dt;
		a[j] = a[j] * 0.99991 - c[j - 1] * 7e-3 - dt;
		b[j] = b[j] * 0.99991 - d[j - 1] * 2e-3 - dt;
		e += b[j] * 1e-9;
		b[j] = b[j] * 0.99991 - d[j - 1] * 8e-3 - dt;
		a[j] = a[j] * 0.99991 - d[j - 1] * 1e-3 - dt;
		c[j] = c[j] * 0.99991 - c[j - 1] * 5e-3 - dt;
		e += c[j] * 1e-9;
		c[j] = c[j] * 0.99991 + c[j - 1] * 1e-3 + dt;
		d[j] = d[j] * 0.99991 + c[j - 1] * 7e-3 + dt;
		a[j] = a[j] * 0.99991 + a[j - 1] * 5e-3 + dt;
		e += a[j] * 1e-9;
		a[j] = a[j] * 0.99991 - a[j - 1] * 9e-3 - dt;
		c[j] = c[j] * 0.99991 + c[j - 1] * 1e-3 + dt;
	}
	f = f * 0.999 + f * 1e-4 + dt * 1;  /* after loop 1 0 */
	f = f * 0.999 + g * 9e-4 + dt * 2;  /* after loop 1 1 */
	g = g * 0.999 + f * 4e-4 + dt * 3;  /* after loop 1 2 */
	f = f * 0.999 + k * 6e-4 + dt * 4;  /* after loop 1 3 */
	g = g * 0.999 + g * 1e-4 + dt * 5;  /* after loop 1 4 */
	k = k * 0.999 + k * 3e-4 + dt * 6;  /* after loop 1 5 */
	k = k * 0.999 + f * 6e-4 + dt * 7;  /* after loop 1 6 */
	h = h * 0.999 + h * 4e-4 + dt * 8;  /* after loop 1 7 */
	h = h * 0.999 + k * 9e-4 + dt * 9;  /* after loop 1 8 */
	g = g * 0.999 + h * 1e-4 + dt * 10; /* after loop 1 9 */
	f = f * 0.999 + h * 8e-4 + dt * 11; /* after loop 1 10 */
	g = g * 0.999 + e * 5e-4 + dt * 12; /* after loop 1 11 */
	e = e * 0.999 + f * 4e-4 + dt * 13; /* after loop 1 12 */
	e = e * 0.999 + f * 4e-4 + dt * 14; /* after loop 1 13 */
	g = g * 0.999 + h * 8e-4 + dt * 15; /* after loop 1 14 */
	f = f * 0.999 + k * 7e-4 + dt * 16; /* after loop 1 15 */
	e = e * 0.999 + e * 5e-4 + dt * 17; /* after loop 1 16 */
	g = g * 0.999 + k * 7e-4 + dt * 18; /* after loop 1 17 */
	h = h * 0.999 + f * 8e-4 + dt * 19; /* after loop 1 18 */
	f = f * 0.999 + e * 3e-4 + dt * 20; /* after loop 1 19 */
	f = f * 0.999 + f * 1e-4 + dt * 21; /* after loop 1 20 */
	f = f * 0.999 + g * 9e-4 + dt * 22; /* after loop 1 21 */
	e = e * 0.999 + k * 7e-4 + dt * 23; /* after loop 1 22 */
	h = h * 0.999 + g * 8e-4 + dt * 24; /* after loop 1 23 */
	g = g * 0.999 + e * 6e-4 + dt * 25; /* after loop 1 24 */
	e = e * 0.999 + k * 2e-4 + dt * 26; /* after loop 1 25 */
	e = e * 0.999 + h * 2e-4 + dt * 27; /* after loop 1 26 */
	e = e * 0.999 + f * 2e-4 + dt * 28; /* after loop 1 27 */
	e = e * 0.999 + g * 1e-4 + dt * 29; /* after loop 1 28 */
	f = f * 0.999 + h * 3e-4 + dt * 30; /* after loop 1 29 */
	for (int i = 1; i < N - 1; i++) {   /* loop 2 */
		int j = i % (N - 2) + 1;
		a[j] = a[j] * 0.99991 - d[j - 1] * 8e-3 - dt;
		a[j] = a[j] * 0.99991 + c[j - 1] * 5e-3 + dt;
		b[j] = b[j] * 0.99991 + c[j - 1] * 9e-3 + dt;
		e += b[j] * 1e-9;
		b[j] = b[j] * 0.99991 - a[j - 1] * 2e-3 - dt;
		a[j] = a[j] * 0.99991 - d[j - 1] * 8e-3 - dt;
		c[j] = c[j] * 0.99991 - c[j - 1] * 1e-3 - dt;
		e += c[j] * 1e-9;
		c[j] = c[j] * 0.99991 - b[j - 1] * 5e-3 - dt;
		b[j] = b[j] * 0.99991 + d[j - 1] * 2e-3 + dt;
		d[j] = d[j] * 0.99991 - c[j - 1] * 7e-3 - dt;
		e += d[j] * 1e-9;
		c[j] = c[j] * 0.99991 + d[j - 1] * 1e-3 + dt;
		d[j] = d[j] * 0.99991 + d[j - 1] * 7e-3 + dt;
		a[j] = a[j] * 0.99991 + b[j - 1] * 4e-3 + dt;
		e += a[j] * 1e-9;
		c[j] = c[j] * 0.99991 + a[j - 1] * 2e-3 + dt;
		d[j] = d[j] * 0.99991 + a[j - 1] * 4e-3 + dt;
	}
	k = k * 0.999 + g * 7e-4 + dt * 1;  /* after loop 2 0 */
	h = h * 0.999 + f * 2e-4 + dt * 2;  /* after loop 2 1 */
	e = e * 0.999 + f * 6e-4 + dt * 3;  /* after loop 2 2 */
	h = h * 0.999 + f * 7e-4 + dt * 4;  /* after loop 2 3 */
	e = e * 0.999 + k * 6e-4 + dt * 5;  /* after loop 2 4 */
	h = h * 0.999 + f * 6e-4 + dt * 6;  /* after loop 2 5 */
	g = g * 0.999 + h * 9e-4 + dt * 7;  /* after loop 2 6 */
	g = g * 0.999 + e * 3e-4 + dt * 8;  /* after loop 2 7 */
	k = k * 0.999 + h * 3e-4 + dt * 9;  /* after loop 2 8 */
	g = g * 0.999 + h * 5e-4 + dt * 10; /* after loop 2 9 */
	k = k * 0.999 + e * 3e-4 + dt * 11; /* after loop 2 10 */
	e = e * 0.999 + k * 1e-4 + dt * 12; /* after loop 2 11 */
	g = g * 0.999 + h * 6e-4 + dt * 13; /* after loop 2 12 */
	g = g * 0.999 + g * 3e-4 + dt * 14; /* after loop 2 13 */
	f = f * 0.999 + e * 4e-4 + dt * 15; /* after loop 2 14 */
	k = k * 0.999 + e * 3e-4 + dt * 16; /* after loop 2 15 */
	k = k * 0.999 + f * 5e-4 + dt * 17; /* after loop 2 16 */
	h = h * 0.999 + k * 8e-4 + dt * 18; /* after loop 2 17 */
	k = k * 0.999 + g * 3e-4 + dt * 19; /* after loop 2 18 */
	g = g * 0.999 + f * 9e-4 + dt * 20; /* after loop 2 19 */
	g = g * 0.999 + g * 9e-4 + dt * 21; /* after loop 2 20 */
	h = h * 0.999 + e * 1e-4 + dt * 22; /* after loop 2 21 */
	e = e * 0.999 + g * 5e-4 + dt * 23; /* after loop 2 22 */
	f = f * 0.999 + g * 4e-4 + dt * 24; /* after loop 2 23 */
	f = f * 0.999 + e * 9e-4 + dt * 25; /* after loop 2 24 */
	f = f * 0.999 + h * 5e-4 + dt * 26; /* after loop 2 25 */
	k = k * 0.999 + h * 2e-4 + dt * 27; /* after loop 2 26 */
	h = h * 0.999 + e * 8e-4 + dt * 28; /* after loop 2 27 */
	k = k * 0.999 + e * 9e-4 + dt * 29; /* after loop 2 28 */
	f = f * 0.999 + e * 9e-4 + dt * 30; /* after loop 2 29 */
	/* planted: begin */
	for (int i = 1; i < 8 * N - 1; i++) { /* loop 3 */
		int j = i % (N - 2) + 1;
		b[j] = b[j] * 0.99991 + d[j - 1] * 9e-3 + dt;
		a[j] = a[j] * 0.99991 - b[j - 1] * 8e-3 - dt;
		a[j] = a[j] * 0.99991 + a[j - 1] * 9e-3 + dt;
		e += a[j] * 1e-9;
		b[j] = b[j] * 0.99991 + b[j - 1] * 3e-3 + dt;
		d[j] = d[j] * 0.99991 - d[j - 1] * 7e-3 - dt;
		a[j] = a[j] * 0.99991 + c[j - 1] * 9e-3 + dt;
		e += a[j] * 1e-9;
		c[j] = c[j] * 0.99991 + c[j - 1] * 8e-3 + dt;
		d[j] = d[j] * 0.99991 - a[j - 1] * 1e-3 - dt;
		d[j] = d[j] * 0.99991 + c[j - 1] * 1e-3 + dt;
		e += d[j] * 1e-9;
		d[j] = d[j] * 0.99991 + b[j - 1] * 9e-3 + dt;
		a[j] = a[j] * 0.99991 + c[j - 1] * 5e-3 + dt;
		d[j] = d[j] * 0.99991 + a[j - 1] * 2e-3 + dt;
		e += d[j] * 1e-9;
		d[j] = d[j] * 0.99991 - c[j - 1] * 4e-3 - dt;
		d[j] = d[j] * 0.99991 - b[j - 1] * 5e-3 - dt;
	}
	/* planted: end */
	f = f * 0.999 + g * 4e-4 + dt * 1;  /* after loop 3 0 */
	f = f * 0.999 + e * 5e-4 + dt * 2;  /* after loop 3 1 */
	f = f * 0.999 + k * 1e-4 + dt * 3;  /* after loop 3 2 */
	f = f * 0.999 + f * 4e-4 + dt * 4;  /* after loop 3 3 */
	h = h * 0.999 + g * 2e-4 + dt * 5;  /* after loop 3 4 */
	f = f * 0.999 + f * 1e-4 + dt * 6;  /* after loop 3 5 */
	f = f * 0.999 + g * 1e-4 + dt * 7;  /* after loop 3 6 */
	g = g * 0.999 + k * 4e-4 + dt * 8;  /* after loop 3 7 */
	f = f * 0.999 + g * 3e-4 + dt * 9;  /* after loop 3 8 */
	f = f * 0.999 + e * 5e-4 + dt * 10; /* after loop 3 9 */
	f = f * 0.999 + e * 9e-4 + dt * 11; /* after loop 3 10 */
	h = h * 0.999 + k * 5e-4 + dt * 12; /* after loop 3 11 */
	h = h * 0.999 + h * 4e-4 + dt * 13; /* after loop 3 12 */
	e = e * 0.999 + h * 3e-4 + dt * 14; /* after loop 3 13 */
	h = h * 0.999 + f * 5e-4 + dt * 15; /* after loop 3 14 */
	f = f * 0.999 + k * 5e-4 + dt * 16; /* after loop 3 15 */
	e = e * 0.999 + h * 7e-4 + dt * 17; /* after loop 3 16 */
	e = e * 0.999 + h * 9e-4 + dt * 18; /* after loop 3 17 */
	g = g * 0.999 + h * 6e-4 + dt * 19; /* after loop 3 18 */
	g = g * 0.999 + k * 6e-4 + dt * 20; /* after loop 3 19 */
	k = k * 0.999 + e * 1e-4 + dt * 21; /* after loop 3 20 */
	g = g * 0.999 + e * 4e-4 + dt * 22; /* after loop 3 21 */
	f = f * 0.999 + f * 8e-4 + dt * 23; /* after loop 3 22 */
	g = g * 0.999 + h * 8e-4 + dt * 24; /* after loop 3 23 */
	h = h * 0.999 + h * 1e-4 + dt * 25; /* after loop 3 24 */
	h = h * 0.999 + k * 4e-4 + dt * 26; /* after loop 3 25 */
	e = e * 0.999 + g * 2e-4 + dt * 27; /* after loop 3 26 */
	k = k * 0.999 + k * 4e-4 + dt * 28; /* after loop 3 27 */
	k = k * 0.999 + h * 7e-4 + dt * 29; /* after loop 3 28 */
	h = h * 0.999 + g * 6e-4 + dt * 30; /* after loop 3 29 */
	for (int i = 1; i < N - 1; i++) {   /* loop 4 */
		int j = i % (N - 2) + 1;
		d[j] = d[j] * 0.99991 - d[j - 1] * 7e-3 - dt;
		c[j] = c[j] * 0.99991 + c[j - 1] * 1e-3 + dt;
		b[j] = b[j] * 0.99991 + c[j - 1] * 8e-3 + dt;
		e += b[j] * 1e-9;
		d[j] = d[j] * 0.99991 + a[j - 1] * 8e-3 + dt;
		a[j] = a[j] * 0.99991 + a[j - 1] * 7e-3 + dt;
		b[j] = b[j] * 0.99991 + b[j - 1] * 7e-3 + dt;
		e += b[j] * 1e-9;
		a[j] = a[j] * 0.99991 - b[j - 1] * 3e-3 - dt;
		a[j] = a[j] * 0.99991 - c[j - 1] * 2e-3 - dt;
		b[j] = b[j] * 0.99991 + a[j - 1] * 2e-3 + dt;
		e += b[j] * 1e-9;
		a[j] = a[j] * 0.99991 - b[j - 1] * 3e-3 - dt;
		a[j] = a[j] * 0.99991 - c[j - 1] * 7e-3 - dt;
		d[j] = d[j] * 0.99991 - a[j - 1] * 1e-3 - dt;
		e += d[j] * 1e-9;
		a[j] = a[j] * 0.99991 + a[j - 1] * 7e-3 + dt;
		b[j] = b[j] * 0.99991 + a[j - 1] * 2e-3 + dt;
	}
	g = g * 0.999 + g * 1e-4 + dt * 1;  /* after loop 4 0 */
	e = e * 0.999 + k * 4e-4 + dt * 2;  /* after loop 4 1 */
	h = h * 0.999 + g * 3e-4 + dt * 3;  /* after loop 4 2 */
	f = f * 0.999 + g * 5e-4 + dt * 4;  /* after loop 4 3 */
	h = h * 0.999 + h * 4e-4 + dt * 5;  /* after loop 4 4 */
	h = h * 0.999 + f * 9e-4 + dt * 6;  /* after loop 4 5 */
	f = f * 0.999 + k * 8e-4 + dt * 7;  /* after loop 4 6 */
	f = f * 0.999 + g * 8e-4 + dt * 8;  /* after loop 4 7 */
	f = f * 0.999 + e * 2e-4 + dt * 9;  /* after loop 4 8 */
	h = h * 0.999 + g * 8e-4 + dt * 10; /* after loop 4 9 */
	f = f * 0.999 + f * 9e-4 + dt * 11; /* after loop 4 10 */
	h = h * 0.999 + g * 5e-4 + dt * 12; /* after loop 4 11 */
	h = h * 0.999 + k * 6e-4 + dt * 13; /* after loop 4 12 */
	e = e * 0.999 + e * 6e-4 + dt * 14; /* after loop 4 13 */
	e = e * 0.999 + k * 9e-4 + dt * 15; /* after loop 4 14 */
	f = f * 0.999 + e * 9e-4 + dt * 16; /* after loop 4 15 */
	e = e * 0.999 + e * 6e-4 + dt * 17; /* after loop 4 16 */
	e = e * 0.999 + k * 3e-4 + dt * 18; /* after loop 4 17 */
	g = g * 0.999 + k * 8e-4 + dt * 19; /* after loop 4 18 */
	h = h * 0.999 + h * 3e-4 + dt * 20; /* after loop 4 19 */
	g = g * 0.999 + h * 4e-4 + dt * 21; /* after loop 4 20 */
	e = e * 0.999 + f * 9e-4 + dt * 22; /* after loop 4 21 */
	h = h * 0.999 + h * 4e-4 + dt * 23; /* after loop 4 22 */
	g = g * 0.999 + e * 6e-4 + dt * 24; /* after loop 4 23 */
	e = e * 0.999 + k * 5e-4 + dt * 25; /* after loop 4 24 */
	k = k * 0.999 + g * 9e-4 + dt * 26; /* after loop 4 25 */
	g = g * 0.999 + h * 4e-4 + dt * 27; /* after loop 4 26 */
	e = e * 0.999 + k * 8e-4 + dt * 28; /* after loop 4 27 */
	e = e * 0.999 + h * 2e-4 + dt * 29; /* after loop 4 28 */
	h = h * 0.999 + h * 6e-4 + dt * 30; /* after loop 4 29 */
	for (int i = 1; i < N - 1; i++) {   /* loop 5 */
		int j = i % (N - 2) + 1;
		a[j] = a[j] * 0.99991 + c[j - 1] * 5e-3 + dt;
		b[j] = b[j] * 0.99991 + c[j - 1] * 2e-3 + dt;
		c[j] = c[j] * 0.99991 - d[j - 1] * 1e-3 - dt;
		e += c[j] * 1e-9;
		c[j] = c[j] * 0.99991 - c[j - 1] * 9e-3 - dt;
		b[j] = b[j] * 0.99991 - c[j - 1] * 5e-3 - dt;
		d[j] = d[j] * 0.99991 + a[j - 1] * 8e-3 + dt;
		e += d[j] * 1e-9;
		d[j] = d[j] * 0.99991 + c[j - 1] * 5e-3 + dt;
		d[j] = d[j] * 0.99991 - c[j - 1] * 3e-3 - dt;
		b[j] = b[j] * 0.99991 - a[j - 1] * 9e-3 - dt;
		e += b[j] * 1e-9;
		b[j] = b[j] * 0.99991 - b[j - 1] * 4e-3 - dt;
		d[j] = d[j] * 0.99991 - c[j - 1] * 7e-3 - dt;
		c[j] = c[j] * 0.99991 + a[j - 1] * 9e-3 + dt;
		e += c[j] * 1e-9;
		d[j] = d[j] * 0.99991 + c[j - 1] * 4e-3 + dt;
		d[j] = d[j] * 0.99991 - b[j - 1] * 8e-3 - dt;
	}
	e = e * 0.999 + k * 5e-4 + dt * 1;  /* finish 0 */
	g = g * 0.999 + k * 5e-4 + dt * 2;  /* finish 1 */
	h = h * 0.999 + h * 7e-4 + dt * 3;  /* finish 2 */
	g = g * 0.999 + g * 8e-4 + dt * 4;  /* finish 3 */
	h = h * 0.999 + f * 5e-4 + dt * 5;  /* finish 4 */
	f = f * 0.999 + h * 7e-4 + dt * 6;  /* finish 5 */
	h = h * 0.999 + k * 8e-4 + dt * 7;  /* finish 6 */
	g = g * 0.999 + f * 1e-4 + dt * 8;  /* finish 7 */
	h = h * 0.999 + g * 3e-4 + dt * 9;  /* finish 8 */
	e = e * 0.999 + k * 4e-4 + dt * 10; /* finish 9 */
	e = e * 0.999 + e * 3e-4 + dt * 11; /* finish 10 */
	k = k * 0.999 + e * 3e-4 + dt * 12; /* finish 11 */
	e = e * 0.999 + k * 4e-4 + dt * 13; /* finish 12 */
	h = h * 0.999 + f * 3e-4 + dt * 14; /* finish 13 */
	f = f * 0.999 + e * 8e-4 + dt * 15; /* finish 14 */
	g = g * 0.999 + f * 1e-4 + dt * 16; /* finish 15 */
	k = k * 0.999 + h * 8e-4 + dt * 17; /* finish 16 */
	k = k * 0.999 + e * 3e-4 + dt * 18; /* finish 17 */
	e = e * 0.999 + h * 4e-4 + dt * 19; /* finish 18 */
	f = f * 0.999 + k * 4e-4 + dt * 20; /* finish 19 */
	return e + f + g + h + k + r;
}

int main(int argc, char **argv)
{
	double secs = planted_seconds(argc, argv), start = planted_now();
	for (int i = 0; i < N; i++) {
		a[i] = i * 1e-3;
		b[i] = 1.0 / (i + 1);
		c[i] = 0.5;
		d[i] = i & 7;
	}
	long rounds = 0;
	double s = 0;
	while (planted_now() - start < secs)
		s += simulate_step(1e-6, (int)rounds++);
	planted_sink = s;
	planted_done("loop3of5", rounds, start);
	return 0;
}
