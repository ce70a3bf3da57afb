/* The bundled demo: a small n-body style simulation with a few distinct costs, so that its
 * profile has a shape worth reading. compute_forces() dominates (pairwise loop), calling
 * pair_force() inline-friendly math; integrate() is cheap; checksum() calls a helper
 * shared with compute_forces' setup. Built -O2 without frame pointers, as real code is. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 700

struct body {
	double x, y, z, vx, vy, vz, m;
};

static struct body bodies[N];
static double fx[N], fy[N], fz[N];

__attribute__((noinline)) static double rand_unit(unsigned *state)
{
	*state = *state * 1103515245u + 12345u;
	return (double)(*state >> 8) / (double)(1u << 24);
}

__attribute__((noinline)) static void init_bodies(unsigned seed)
{
	for (int i = 0; i < N; i++) {
		bodies[i].x = rand_unit(&seed);
		bodies[i].y = rand_unit(&seed);
		bodies[i].z = rand_unit(&seed);
		bodies[i].vx = bodies[i].vy = bodies[i].vz = 0;
		bodies[i].m = 0.5 + rand_unit(&seed);
	}
}

__attribute__((noinline)) static void pair_force(int i, int j)
{
	double dx = bodies[j].x - bodies[i].x, dy = bodies[j].y - bodies[i].y;
	double dz = bodies[j].z - bodies[i].z;
	double d2 = dx * dx + dy * dy + dz * dz + 1e-3;
	double inv = bodies[j].m / (d2 * sqrt(d2));
	fx[i] += dx * inv;
	fy[i] += dy * inv;
	fz[i] += dz * inv;
}

__attribute__((noinline)) static void compute_forces(void)
{
	for (int i = 0; i < N; i++) {
		fx[i] = fy[i] = fz[i] = 0;
		for (int j = 0; j < N; j++)
			if (j != i)
				pair_force(i, j);
	}
}

__attribute__((noinline)) static void integrate(double dt)
{
	for (int i = 0; i < N; i++) {
		bodies[i].vx += fx[i] * dt;
		bodies[i].vy += fy[i] * dt;
		bodies[i].vz += fz[i] * dt;
		bodies[i].x += bodies[i].vx * dt;
		bodies[i].y += bodies[i].vy * dt;
		bodies[i].z += bodies[i].vz * dt;
	}
}

__attribute__((noinline)) static double energy(void)
{
	double e = 0;
	for (int i = 0; i < N; i++) {
		e += 0.5 * bodies[i].m *
		     (bodies[i].vx * bodies[i].vx + bodies[i].vy * bodies[i].vy +
		      bodies[i].vz * bodies[i].vz);
		for (int j = i + 1; j < N; j++) {
			double dx = bodies[j].x - bodies[i].x, dy = bodies[j].y - bodies[i].y;
			double dz = bodies[j].z - bodies[i].z;
			e -= bodies[i].m * bodies[j].m / sqrt(dx * dx + dy * dy + dz * dz + 1e-3);
		}
	}
	return e;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 300;
	init_bodies(42);
	double e0 = energy();
	for (int s = 0; s < steps; s++) {
		compute_forces();
		integrate(1e-5);
		if (s % 10 == 0)
			(void)energy();
	}
	printf("demo: %d steps of %d bodies, energy %.6f -> %.6f\n", steps, N, e0, energy());
	return 0;
}
